/* probe_vthread.h -- what the virtual-thread runtime (models/vthread/)
 * tells the board, one call per event: a vthread is born, waits on a run
 * queue, blocks in a call with its carrier's runner, is unblocked; the
 * monitor hands a stuck carrier to a spare; a carrier waits or runs. A
 * carrier is shown in a loop slot (its run queue as the task queue, its
 * vthreads as channels, its deadlines as timers). The threads' own states
 * (a runner waits, a vthread parks in I/O, runs) are probe.h's.
 *
 * Every function: the thread the event happens on (a carrier's runner,
 * the monitor thread, or spawning's any thread), for its own
 * board_thread_ref; b may be NULL (publishing off).
 */
#ifndef THREADLAB_PROBE_VTHREAD_H
#define THREADLAB_PROBE_VTHREAD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "board.h"
#include "probe_loop.h"                 /* enum loop_phase */

/* Virtual thread name (serving connection id) was made: on the board,
 * with no kernel thread of its own (tid 0), on its carrier's run queue. */
static inline void probe_vthread_born(struct board *b, struct board_thread_ref *t,
                                      const char *name, uint64_t id)
{
    board_thread_begin(b, t, ROLE_VTHREAD, name, id);
    board_thread_tid(b, t, 0);
    board_thread_state(b, t, STATE_RUNNABLE);
}

/* It is on its carrier's run queue, ready. */
static inline void probe_runnable(struct board *b, struct board_thread_ref *t)
{
    board_thread_state(b, t, STATE_RUNNABLE);
}

/* The vthread (t) entered a blocking call at now_ns, and with it its
 * carrier's runner (runner): both are blocked, and the carrier (slot)
 * serves no one since now_ns, until the monitor hands it to a spare. */
static inline void probe_vthread_blocked(struct board *b, struct board_thread_ref *t,
                                         struct board_thread_ref *runner,
                                         struct board_loop *slot, uint64_t now_ns)
{
    board_thread_state_at(b, t, STATE_BLOCKED_SLEEP, now_ns);
    board_thread_state_at(b, runner, STATE_BLOCKED_SLEEP, now_ns);
    if (slot)
        atomic_store_explicit(&slot->blocked_since_ns, now_ns, memory_order_relaxed);
}

/* Its blocking call returned at now_ns: it runs again, and so does its
 * runner; the carrier is served. */
static inline void probe_vthread_unblocked(struct board *b, struct board_thread_ref *t,
                                           struct board_thread_ref *runner,
                                           struct board_loop *slot, uint64_t now_ns)
{
    if (slot)
        atomic_store_explicit(&slot->blocked_since_ns, 0, memory_order_relaxed);
    board_thread_state_at(b, t, STATE_RUNNING, now_ns);
    board_thread_state_at(b, runner, STATE_RUNNING, now_ns);
}

/* A carrier named name was made: its loop slot (NULL when the board has
 * none left). Any thread, before the carrier runs. */
static inline struct board_loop *probe_carrier_opened(struct board *b, const char *name)
{
    return board_loop_claim(b, name);
}

/* The carrier is freed: its slot is free again. */
static inline void probe_carrier_closed(struct board *b, struct board_loop *slot)
{
    if (slot)
        board_loop_release(b, slot);
}

/* What a carrier holds, as its slot shows it. */
struct probe_carrier_load {
    uint64_t ready;          /* vthreads on its run queue */
    uint64_t vthreads;       /* vthreads it serves */
    uint64_t deadlines;      /* deadlines armed */
};

/* The carrier's runner (runner) is about to wait in epoll_wait (waiting)
 * or runs, the carrier holding load. */
static inline void probe_carrier_turned(struct board *b, struct board_thread_ref *runner,
                                        struct board_loop *slot, bool waiting,
                                        const struct probe_carrier_load *load)
{
    board_thread_state(b, runner, waiting ? STATE_WAITING : STATE_RUNNING);
    if (!slot)
        return;
    atomic_store_explicit(&slot->phase, waiting ? LOOP_PHASE_WAITING : LOOP_PHASE_IO,
                          memory_order_relaxed);
    atomic_store_explicit(&slot->task_queue_depth, load->ready, memory_order_relaxed);
    atomic_store_explicit(&slot->channels, load->vthreads, memory_order_relaxed);
    atomic_store_explicit(&slot->timers, load->deadlines, memory_order_relaxed);
}

/* A vthread's fd could not be watched (epoll_ctl failed) on carrier: it
 * is shut down. */
void probe_vthread_unwatched(struct board *b, const char *carrier, const char *vthread);

/* The monitor handed carrier (slot), stuck stuck_ms in a blocking call,
 * to the new spare thread spare: a thread spawned, an event, and the
 * carrier served again. */
void probe_handed_off(struct board *b, const char *carrier, struct board_loop *slot,
                      uint64_t stuck_ms, const char *spare);

/* The spare for carrier could not be started: the carrier waits for its
 * blocking call. */
void probe_spare_failed(struct board *b, const char *spare, const char *carrier);

/* Spare retired: the blocking call on carrier returned. */
void probe_spare_retired(struct board *b, const char *spare, const char *carrier);

#endif
