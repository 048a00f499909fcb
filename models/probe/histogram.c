/* histogram.c -- log-linear buckets. See histogram.h. */
#include "histogram.h"

#include <string.h>

void hist_init(struct hist *h)
{
    for (unsigned i = 0; i < HIST_BUCKETS; i++)
        atomic_init(&h->counts[i], 0);
    atomic_init(&h->max, 0);
}

unsigned hist_bucket_of(uint64_t value)
{
    if (value < HIST_SUB_COUNT)
        return (unsigned)value;                 /* exact below 16 */
    unsigned octave = 63u - (unsigned)__builtin_clzll(value); /* >= 4 */
    unsigned shift = octave - HIST_SUB_BITS;
    unsigned sub = (unsigned)(value >> shift) & (HIST_SUB_COUNT - 1);
    return (octave - HIST_SUB_BITS + 1) * HIST_SUB_COUNT + sub;
}

uint64_t hist_bucket_low(unsigned bucket)
{
    if (bucket < HIST_SUB_COUNT)
        return bucket;
    unsigned octave = bucket / HIST_SUB_COUNT + HIST_SUB_BITS - 1;
    unsigned sub = bucket % HIST_SUB_COUNT;
    return (uint64_t)(HIST_SUB_COUNT + sub) << (octave - HIST_SUB_BITS);
}

uint64_t hist_bucket_high(unsigned bucket)
{
    if (bucket < HIST_SUB_COUNT)
        return bucket;
    unsigned octave = bucket / HIST_SUB_COUNT + HIST_SUB_BITS - 1;
    return hist_bucket_low(bucket) + ((uint64_t)1 << (octave - HIST_SUB_BITS)) - 1;
}

void hist_record(struct hist *h, uint64_t value)
{
    hist_record_n(h, value, 1);
}

void hist_record_n(struct hist *h, uint64_t value, uint64_t n)
{
    if (n == 0)
        return;
    atomic_fetch_add_explicit(&h->counts[hist_bucket_of(value)], n,
                              memory_order_relaxed);
    /* Usually a plain load: the max changes rarely. */
    uint64_t seen = atomic_load_explicit(&h->max, memory_order_relaxed);
    while (value > seen &&
           !atomic_compare_exchange_weak_explicit(&h->max, &seen, value,
                                                  memory_order_relaxed,
                                                  memory_order_relaxed))
        ;
}

void hist_merge(struct hist *dst, const struct hist *src)
{
    for (unsigned i = 0; i < HIST_BUCKETS; i++)
        atomic_fetch_add(&dst->counts[i], atomic_load(&src->counts[i]));
    uint64_t m = atomic_load(&src->max);
    if (m > atomic_load(&dst->max))
        atomic_store(&dst->max, m);
}

uint64_t hist_counts_percentile(const uint64_t counts[HIST_BUCKETS],
                                uint64_t max, double pct)
{
    uint64_t total = 0;
    for (unsigned i = 0; i < HIST_BUCKETS; i++)
        total += counts[i];
    if (total == 0)
        return 0;
    /* The rank of the value wanted, 1-based: p99 of 1000 values is the
     * 990th smallest. */
    uint64_t rank = (uint64_t)(pct / 100.0 * (double)total + 0.999999);
    if (rank < 1)
        rank = 1;
    uint64_t seen = 0;
    for (unsigned i = 0; i < HIST_BUCKETS; i++) {
        seen += counts[i];
        if (seen >= rank) {
            uint64_t high = hist_bucket_high(i);
            return max && high > max ? max : high;
        }
    }
    return max;
}

uint64_t hist_percentile(const struct hist *h, double pct)
{
    uint64_t counts[HIST_BUCKETS];
    for (unsigned i = 0; i < HIST_BUCKETS; i++)
        counts[i] = atomic_load_explicit(&h->counts[i], memory_order_relaxed);
    return hist_counts_percentile(counts, atomic_load(&h->max), pct);
}
