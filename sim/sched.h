/* sched.h -- the seam between the queueing machine and a scheduler.
 *
 * The machine (machine.c) keeps the cores, a FIFO run queue per core,
 * time slices, and what a switch onto a core costs. A scheduler decides
 * the rest through this table: where a woken thread goes (and whether it
 * preempts the thread running there), what a core with an empty run
 * queue takes from the others, and when the cores are balanced. Two
 * exist, chosen by `threadlab sim --sched`:
 * - sched_simple (sched_simple.c): a woken thread takes an idle core,
 *   else waits at the tail of the shortest run queue; no preemption but
 *   the time slice; a core with nothing to run takes the head of the
 *   longest queue. A student can follow it by hand.
 * - sched_linux (sched_linux.c): Linux's EEVDF, SIS_UTIL wakeup
 *   placement, PELT load averages and load balancer, as the profile's
 *   figures calibrate them. The default.
 */
#ifndef THREADLAB_SCHED_H
#define THREADLAB_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "engine.h"

struct machine;

/* A scheduler's hooks. `wake` and `idle` are required; the others may be
 * NULL (nothing to keep). */
struct sched_ops {
    const char *name;
    /* The machine starts: set up the scheduler's own bookkeeping. */
    void (*start)(struct machine *m);
    /* Thread t, blocked, is woken (runnable, its burst set): put it on a
     * core (machine_dispatch_woken, machine_preempt) or in a run queue
     * (machine_queue_on). waker: the core of the thread that woke it, or
     * -1 (the network, a timer). */
    void (*wake)(struct machine *m, uint32_t t, int waker);
    /* Core c has nothing left in its run queue and goes idle: it may
     * take a thread waiting on another core (machine_steal). */
    void (*idle)(struct machine *m, int c);
    /* Core c's thread has run `ran` more. */
    void (*ran)(struct machine *m, int c, vtime_t ran);
    /* Thread t leaves core c's threads (it blocks or ends). */
    void (*leave)(struct machine *m, int c, uint32_t t);
    /* A thread was queued on core c (machine_queue_on). */
    void (*queued)(struct machine *m, int c);
    /* The balancer's turn, which machine_arm_balance scheduled. */
    void (*balance)(struct machine *m);
    /* The count of idle cores is about to change. */
    void (*idle_changing)(struct machine *m);
    /* Idle core c was woken by an interrupt to run a thread. */
    void (*core_woken)(struct machine *m, int c);
};

extern const struct sched_ops sched_linux;
extern const struct sched_ops sched_simple;

/* What the Linux scheduler keeps of each thread (EEVDF), each core and
 * the machine; the machine carries it for the scheduler, and the simple
 * scheduler leaves it alone. */
struct sched_thread {
    vtime_t vruntime_ns;         /* EEVDF's virtual runtime on its core:
                                    the CPU it has had there (all threads
                                    weigh the same), placed by its lag
                                    when it joins a core */
    vtime_t deadline_ns;         /* its virtual deadline: a slice
                                    (wakeup_granularity_ns) past its
                                    vruntime when it joined or used its
                                    last slice */
    int64_t lag_ns;              /* what its core owed it (> 0) or it owed
                                    (< 0) when it last left the core's
                                    threads: V less its vruntime */
};

struct sched_core {
    uint32_t queued;             /* its threads: the one on it, and those
                                    in its run queue */
    vtime_t vruntime_sum;        /* their vruntimes, summed: the average
                                    is EEVDF's V, the fair share */
    vtime_t empty_v;             /* V when its last thread left it */
    double load_avg;             /* its threads, averaged over time (PELT) */
    vtime_t load_at;             /* when load_avg was last brought up */
    double avg_idle_ns;          /* Linux's avg_idle: how long it stays
                                    idle, on average (1/8 per sample) */
};

struct sched_machine {
    double util_avg;             /* the cores' average utilization (0 to
                                    1), averaged over time as PELT does */
    vtime_t util_at;             /* when util_avg was last brought up */
    bool balance_armed;          /* the balancer's next turn is scheduled */
};

#endif
