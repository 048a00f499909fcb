/* cpuwait.h -- time the code controls, on a machine that others load.
 *
 * On a machine shared with other builds, a runnable thread may wait for a
 * CPU for tens or hundreds of milliseconds, and no server answers before
 * it is scheduled. A test that bounds a latency should bound what the code
 * controls: wall time less the CPU waits seen meanwhile. Two gauges, and
 * the larger is left out:
 * - a meter: a thread of the test that asks to wake every millisecond and
 *   adds up how late it woke (beyond a millisecond of timer slack);
 * - a server's own threads: the longest time any one of them waited in a
 *   run queue meanwhile, from /proc/PID/task/TID/schedstat.
 * The longest of one thread, not the sum: a hung or spinning server still
 * fails a bound however loaded the machine is, because its wall time grows
 * without end while each of its threads waits only for part of it.
 */
#ifndef THREADLAB_CPUWAIT_H
#define THREADLAB_CPUWAIT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define CW_TASKS_MAX 512          /* threads of a server followed */

/* The meter thread and what it saw. */
struct cw_meter {
    pthread_t thread;
    _Atomic bool stop;
    _Atomic uint64_t late_us;     /* total lateness so far */
};

/* Every thread of a process and how long it has waited for a CPU. */
struct cw_task_waits {
    int n;
    int tid[CW_TASKS_MAX];
    uint64_t wait_ns[CW_TASKS_MAX];
};

/* A stretch of time being measured. Large (a few KiB): keep it static or
 * on the heap. */
struct cw_span {
    uint64_t start_us;            /* monotonic */
    uint64_t late_at_start_us;    /* the meter's total then */
    pid_t server;                 /* whose threads are gauged, or 0 */
    struct cw_task_waits server_at_start;
};

/* Start and stop the meter (asserts). One thread. */
void cw_meter_start(struct cw_meter *m);
void cw_meter_stop(struct cw_meter *m);

/* Begin a span; server 0 gauges the meter only (a server already reaped
 * has no /proc). */
void cw_span_begin(struct cw_span *sp, struct cw_meter *m, pid_t server);

/* Wall time since the span began, ms. */
long cw_span_wall_ms(const struct cw_span *sp);

/* Wall time since the span began less the larger CPU wait gauged, ms. */
long cw_span_own_ms(const struct cw_span *sp, struct cw_meter *m);

#endif
