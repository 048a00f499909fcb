/* machine.h -- the simulated computer: cores, threads and a scheduler.
 *
 * A thread asks for CPU in bursts: "run me for 4 us, then tell me". Each
 * core has its own run queue, as Linux's do. A woken thread goes to the
 * core it ran on last if that core is idle; else to another idle core,
 * but only while the cores are not too busy (Linux's SIS_UTIL,
 * idle_search_pct: on 2 cores, none past 60% busy); else it waits on its
 * last core, busy as it is. There it may take the core from the running
 * thread (EEVDF's wakeup preemption: it is owed CPU on that core and the
 * running thread is not, or has used its slice, or its virtual deadline
 * comes first), else it waits at the tail of that core's run queue. A thread that has used its time slice while others wait on its
 * core goes to the tail too. A core left with nothing to run takes a
 * waiting thread from another core only if it has been idle long on
 * average (Linux's newidle balance); every balance_interval_ns the
 * balancer moves a waiting thread from the core with the highest load
 * average to the lowest. What a switch onto a core costs depends on how
 * the thread came (machine.c, switch_cost): context_switch_ns (plus
 * context_switch_log2_ns per doubling of the core's run queue) for one
 * thread after another; an idle core woken from another core costs
 * wakeup_cpu_ns of CPU instead, wakeup_ipi_ns of it paid by the waker
 * (the interrupt it sends) and the rest by the woken thread, which starts
 * wakeup_ns later; a wakeup preemption from another core pays the same
 * on top of the switch; cross_core_ns more when the thread last ran on
 * another core. When a burst is done the machine calls the owner back,
 * who runs another burst, blocks the thread (waiting for I/O, sleeping)
 * or ends it.
 */
#ifndef THREADLAB_MACHINE_H
#define THREADLAB_MACHINE_H

#include <stdbool.h>
#include <stdint.h>

#include "engine.h"
#include "probe/histogram.h"
#include "profile.h"
#include "rng.h"

#define VT_NONE UINT32_MAX

enum vthread_state { VT_FREE, VT_BLOCKED, VT_RUNNABLE, VT_RUNNING };

struct vthread {
    uint8_t state;
    bool burst_started;          /* burst_start is set for this burst */
    int32_t core;                /* while running */
    int32_t last_core;           /* where it ran last (-1: never ran) */
    uint32_t cont;               /* the owner's next step after the burst */
    uint32_t owner;              /* whom it works for (a connection, a loop) */
    vtime_t burst_left;          /* CPU still owed in this burst */
    vtime_t owed_ns;             /* CPU to add to its next burst: the
                                    interrupts of wakeups it sent while
                                    between bursts or blocked */
    vtime_t burst_start;         /* when this burst first got a core (its
                                    wait for CPU ended) */
    vtime_t runnable_at;         /* when it last became runnable (woken, or
                                    put back by a preemption: sim --waits) */
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

/* A core's run queue: a ring of thread ids, first come first served. */
struct runq {
    uint32_t *ids;
    uint32_t head, len, cap;
};

struct vcore {
    uint32_t thread;             /* running now, or VT_NONE */
    struct runq rq;              /* runnable, waiting for this core */
    bool resched;                /* a thread woken here preempts the one
                                    running when its burst ends (Linux's
                                    need_resched, honoured on the way back
                                    from the system call) */
    uint32_t queued;             /* its threads: the one on it, and those
                                    in its run queue */
    vtime_t vruntime_sum;        /* their vruntimes, summed: the average
                                    is EEVDF's V, the fair share */
    vtime_t empty_v;             /* V when its last thread left it */
    double load_avg;             /* its threads, averaged over time (PELT) */
    vtime_t load_at;             /* when load_avg was last brought up */
    vtime_t idle_since;          /* when it last went idle */
    double avg_idle_ns;          /* Linux's avg_idle: how long it stays
                                    idle, on average (1/8 per sample) */
    uint32_t gen;                /* its pending event is stale if this moved */
    vtime_t segment_start;       /* when the current stretch of running began */
    vtime_t slice_end;
    vtime_t on_core_since;       /* when its thread got this core */
    vtime_t busy_ns;
};

/* sim --waits: how long threads waited for a core once runnable (woken,
 * or put back by a preemption) and how long they ran once on one, and how
 * each stretch on a core ended; one thread's figures ([1]: the load
 * generator) apart from the rest ([0]: the server's threads), as
 * bench/switches.sh reads them from perf sched for a real run. */
struct machine_waits {
    struct hist wait_ns[2], run_ns[2];
    uint64_t blocked[2], preempted[2];
};

/* Called when thread t has run its burst; it must run another, block, or
 * end the thread. */
typedef void (*burst_done_fn)(void *ctx, uint32_t t);

struct machine {
    struct des_engine *eng;
    const struct profile *prof;
    uint32_t core_event_kind;    /* the engine event kind the machine uses */
    burst_done_fn done;
    void *ctx;

    int ncores;
    struct vcore *cores;
    int idle_cores;

    struct vthread *threads;
    uint32_t nthreads, cap;      /* slots used, allocated */
    uint32_t *free_ids;          /* ended threads' slots, for reuse */
    uint32_t nfree;
    uint32_t live, peak_live;

    /* Told when a thread gets a core (true) or joins the run queue
     * (false): sim --viz shows running and runnable apart. NULL: nobody. */
    void (*on_core)(void *ctx, uint32_t t, bool running);

    uint64_t context_switches, preemptions;
    uint64_t wakeup_preemptions; /* of the preemptions: a woken thread took
                                    a busy core (wakeup_granularity_ns) */
    double util_avg;             /* the cores' average utilization (0 to
                                    1), averaged over time as PELT does */
    vtime_t util_at;             /* when util_avg was last brought up */
    uint64_t migrations;         /* a thread came onto another core than
                                    the one it ran on last */
    bool balance_armed;          /* the balancer's next turn is scheduled */
    int waker_core;              /* the core whose burst ended last, ... */
    uint32_t waker;              /* ... the thread whose it was, ... */
    vtime_t waker_at;            /* ... at this time: who wakes whom */
    uint32_t in_done;            /* the thread whose burst_done runs now */
    struct machine_waits *waits; /* where to note waits (NULL: not kept) */
    uint32_t waits_apart;        /* the thread noted apart ([1]), or VT_NONE */
    struct rng *costs;           /* draws each switch and the wakeup before
                                    it (wakeup_sigma); NULL: every one costs
                                    the profile's figure */
    bool out_of_memory;          /* an event or a run queue did not fit: the
                                    machine is wrong from here, and the run
                                    must stop */
};

int machine_init(struct machine *m, struct des_engine *eng, const struct profile *prof,
                 int ncores, uint32_t core_event_kind, burst_done_fn done, void *ctx);
void machine_free(struct machine *m);

/* A new thread, blocked. VT_NONE when out of memory. */
uint32_t machine_spawn(struct machine *m, uint32_t owner);

/* End thread t (it must be the one whose burst just finished, or blocked). */
void machine_exit(struct machine *m, uint32_t t);

/* Give t a burst of cpu_ns, then cont. From its own burst_done callback it
 * simply continues on its core; if it is blocked it becomes runnable: an
 * idle core starts it after wakeup_ns (latency, not CPU), else it waits in
 * the run queue. */
void machine_run(struct machine *m, uint32_t t, vtime_t cpu_ns, uint32_t cont);

/* Block t (from its own burst_done): its core takes the next thread. */
void machine_block(struct machine *m, uint32_t t);

/* The engine's core event: a stretch of running ended on core c (or, with
 * c == ncores, the balancer's turn). */
void machine_core_event(struct machine *m, uint32_t c, uint32_t gen);

/* Every core's busy time, summed. */
vtime_t machine_busy_ns(const struct machine *m);

#endif
