/* clock.h -- the one clock every part of threadlab measures time with.
 *
 * CLOCK_MONOTONIC, read as nanoseconds: it never jumps when someone sets
 * the wall clock (date, NTP), so a timeout or a latency measured on it is
 * never negative or stretched. On Linux it is a vDSO call, not a syscall,
 * which is why the hot paths (the board, the loop's ioRatio clock) may
 * read it per batch.
 *
 * Waits that take an absolute time (pthread_cond_timedwait, sem_clockwait)
 * must be told the same clock: make the condition variable with
 * clock_cond_init() and the deadline with timespec_at_ns(). A condvar left
 * on its default clock (CLOCK_REALTIME) would read a monotonic deadline as
 * a date in 1970 and return at once.
 *
 * Header only (static inline), so that any floor may include it, the tests
 * too, without linking anything.
 */
#ifndef THREADLAB_NET_CLOCK_H
#define THREADLAB_NET_CLOCK_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#define NS_PER_MS 1000000ull              /* nanoseconds in a millisecond */
#define NS_PER_S  1000000000ull           /* nanoseconds in a second */

/* ---- reading the clock ---------------------------------------------------- */

/* Now, in nanoseconds on CLOCK_MONOTONIC (since boot). Any thread. */
static inline uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* Now, in milliseconds on the same clock. Any thread. */
static inline uint64_t now_ms(void)
{
    return now_ns() / NS_PER_MS;
}

/* ---- deadlines ------------------------------------------------------------ */

/* The instant ms milliseconds from now, in ns on now_ns's clock. Any thread. */
static inline uint64_t deadline_in_ms(uint64_t ms)
{
    return now_ns() + ms * NS_PER_MS;
}

/* A deadline in ns on now_ns's clock as the timespec that
 * pthread_cond_timedwait (on a clock_cond_init condvar) and
 * sem_clockwait(CLOCK_MONOTONIC) take. Pure. */
static inline struct timespec timespec_at_ns(uint64_t deadline_ns)
{
    return (struct timespec){ .tv_sec = (time_t)(deadline_ns / NS_PER_S),
                              .tv_nsec = (long)(deadline_ns % NS_PER_S) };
}

/* Initialize *cond so that its timed waits run on now_ns's clock. Returns
 * 0 or -errno. Any thread. */
static inline int clock_cond_init(pthread_cond_t *cond)
{
    pthread_condattr_t attr;
    int rc = pthread_condattr_init(&attr);
    if (rc != 0)
        return -rc;
    rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    if (rc == 0)
        rc = pthread_cond_init(cond, &attr);
    pthread_condattr_destroy(&attr);
    return -rc;
}

#endif
