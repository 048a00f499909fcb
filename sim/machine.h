/* machine.h -- the simulated computer: cores, threads and their run
 * queues, the queueing machine that a scheduler (sched.h) steers.
 *
 * A thread asks for CPU in bursts: "run me for 4 us, then tell me". Each
 * core runs one thread at a time and has its own run queue, first come
 * first served. Where a woken thread goes, whether it preempts, and what
 * a core with an empty run queue takes from the others, the scheduler
 * decides (sched_simple.c, sched_linux.c). The machine does the rest:
 * a core whose thread blocks or ends takes the head of its run queue; a
 * thread that has used its time slice (time_slice_ns) while others wait
 * on its core goes to the tail. What a switch onto a core costs depends
 * on how the thread came (switch_cost.c): context_switch_ns
 * (plus context_switch_log2_ns per doubling of the core's run queue) for
 * one thread after another; an idle core woken from another core costs
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
#include "runq.h"
#include "sched.h"

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
    struct sched_thread sched;   /* the scheduler's (sched.h) */
};

struct vcore {
    uint32_t thread;             /* running now, or VT_NONE */
    struct runq rq;              /* runnable, waiting for this core */
    bool resched;                /* a thread woken here preempts the one
                                    running when its burst ends (Linux's
                                    need_resched, honoured on the way back
                                    from the system call) */
    vtime_t idle_since;          /* when it last went idle */
    struct sched_core sched;     /* the scheduler's (sched.h) */
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
    const struct sched_ops *sched;  /* the scheduler that steers it */
    struct sched_machine sched_state;  /* ... and its bookkeeping */

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
    uint64_t migrations;         /* a thread came onto another core than
                                    the one it ran on last */
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
                 int ncores, const struct sched_ops *sched, uint32_t core_event_kind,
                 burst_done_fn done, void *ctx);
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

/* ---- for the schedulers (sched.h) ---- */

/* How a thread comes onto a core, which decides what the switch costs. */
enum arrival {
    ARRIVE_QUEUED,               /* from the run queue, onto a core whose
                                    thread just left: a switch */
    ARRIVE_IDLE,                 /* woken onto an idle core: an interrupt
                                    wakes the core (from the waker's core,
                                    or its own timer's) */
    ARRIVE_PREEMPT,              /* woken, it takes a busy core from the
                                    thread running there (wakeup preemption) */
};

/* Put runnable t on core c, idle (or just taken from its thread). remote:
 * from another core; waker_pays: the waker pays its part of the
 * interrupt (wakeup_ipi_ns), t the rest. */
void machine_dispatch(struct machine *m, int c, uint32_t t, enum arrival how, bool remote,
                      bool waker_pays);

/* t waits at the tail of core c's run queue (machine_queue_on tells the
 * scheduler, machine_rq_push does not); runq_pop takes the head. */
void machine_queue_on(struct machine *m, int c, uint32_t t);
void machine_rq_push(struct machine *m, int c, uint32_t t);

/* Woken t takes busy core c from its thread, which waits at the tail of
 * c's run queue; if that thread is the one whose burst just ended (the
 * waker), at its next burst. waker: as sched_ops.wake has it. */
void machine_preempt(struct machine *m, int c, uint32_t t, int waker);

/* The balancer's turn (sched_ops.balance) after delay_ns. */
void machine_arm_balance(struct machine *m, vtime_t delay_ns);

#endif
