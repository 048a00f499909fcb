/* histogram.h -- a log-linear latency histogram.
 *
 * Values (nanoseconds) are counted in buckets: each power of two is split
 * into 16 equal sub-buckets, so any percentile read back is within 1/16
 * (6.25%) of the true value, from 1 ns to centuries, in a fixed 7.8 KiB.
 * (The layout of HdrHistogram with 4 sub-bucket bits.) Counters are atomic,
 * added to with relaxed adds, so any thread may record and any thread read.
 * There is no separate total: it is the sum of the buckets, which saves
 * every record one more add on a shared cache line.
 */
#ifndef THREADLAB_HISTOGRAM_H
#define THREADLAB_HISTOGRAM_H

#include <stdatomic.h>
#include <stdint.h>

#define HIST_SUB_BITS 4                        /* 16 sub-buckets per octave */
#define HIST_SUB_COUNT (1u << HIST_SUB_BITS)
#define HIST_BUCKETS ((64 - HIST_SUB_BITS + 1) * HIST_SUB_COUNT) /* 976 */

struct hist {
    _Atomic uint64_t counts[HIST_BUCKETS]; /* values per bucket */
    _Atomic uint64_t max;                  /* largest value, exact */
};

/* Zero it, before any thread records into it. */
void hist_init(struct hist *h);

/* Count one value. Any thread; cheap (no locks, no syscalls). */
void hist_record(struct hist *h, uint64_t value);

/* Count `n` values that are all `value`, with one atomic add: the lines of
 * one read batch, answered by one write, share one latency, so a writer
 * publishing per batch pays once per batch, not once per line. n == 0 does
 * nothing. Any thread. */
void hist_record_n(struct hist *h, uint64_t value, uint64_t n);

/* Add every count of src into dst. Any thread (a count recorded into src
 * meanwhile may or may not be in it). */
void hist_merge(struct hist *dst, const struct hist *src);

/* The value at or below which `pct` percent of values fall (the upper edge
 * of that bucket, never above the exact max). 0 when empty. Any thread
 * (each count is read once, atomically; one recorded meanwhile may or may
 * not be in it). */
uint64_t hist_percentile(const struct hist *h, double pct);

/* The same for plain counts (a snapshot, or the difference of two). Pure,
 * any thread. */
uint64_t hist_counts_percentile(const uint64_t counts[HIST_BUCKETS],
                                uint64_t max, double pct);

/* Bucket arithmetic, exposed for tests and for readers of the board. Pure,
 * any thread. */
unsigned hist_bucket_of(uint64_t value);
uint64_t hist_bucket_low(unsigned bucket);
uint64_t hist_bucket_high(unsigned bucket);

#endif
