/* probe_loop.h -- an event loop's probe: its place on the board and its
 * counters, out of struct loop, so that what a student reads there is the
 * mechanism (the selector, the task queue, the timers, the budget's debt)
 * and not the instruments. loop.c says what happened (the loop waits, its
 * I/O began, an iteration ended); this file decides what the board makes
 * of it. libuv keeps its metrics the same way: a struct beside the loop's
 * own, filled by hooks at the points the loop passes.
 *
 * The counters are written by the loop's thread only (relaxed stores of a
 * loaded value: no locked add), except tasks_rejected and wakeups_written,
 * which a producer adds to; anyone may read them (loop_stats). Every
 * function here is called on the loop's thread only, unless it says
 * otherwise.
 */
#ifndef THREADLAB_PROBE_LOOP_H
#define THREADLAB_PROBE_LOOP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "board.h"

/* What the loop's phase is, for the board (struct board_loop's phase). */
enum loop_phase {
    LOOP_PHASE_STARTING, LOOP_PHASE_WAITING, LOOP_PHASE_IO, LOOP_PHASE_TASKS,
    LOOP_PHASE_STOPPED,
};

/* What a loop counts. loop_stats (loop.h) copies them out. */
struct loop_counters {
    _Atomic uint64_t iterations;
    _Atomic uint64_t io_ns, task_ns;  /* the ioRatio split */
    _Atomic uint64_t task_idle_ns;    /* part of task_ns run after I/O phases
                                       * that found nothing to do */
    _Atomic uint64_t tasks_run, longest_task_ns;
    _Atomic uint64_t timers_fired, timers_late;
    _Atomic uint64_t timers_now;      /* the heap's size, as of the last iteration */
    _Atomic uint64_t resumes_run;     /* watches called again (loop_watch_resume) */
    _Atomic uint64_t wait_errors;     /* epoll_wait failures other than EINTR */
    _Atomic uint64_t tasks_starving_io; /* ioRatio 100: task phases past
                                       * LOOP_STARVING_IO_MS (I/O waited that long) */
    _Atomic uint64_t channels;        /* connections registered */
    _Atomic uint64_t wakeups_written; /* any thread: eventfd writes */
    _Atomic uint64_t tasks_rejected;  /* any thread: refused for a full queue */
};

struct loop_probe {
    struct board *board;              /* may be NULL */
    const char *name;                 /* the loop's, for its events */
    enum board_role role;
    struct board_thread_ref on_board; /* loop thread only */
    struct board_loop *slot;          /* its board slot, or NULL */
    struct loop_counters n;
};

/* Add n to a counter only the loop's thread writes (no locked add). */
static inline void probe_loop_count(_Atomic uint64_t *c, uint64_t n)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
                          memory_order_relaxed);
}

static inline void probe_loop_phase(struct loop_probe *lp, enum loop_phase p)
{
    if (lp->slot)
        atomic_store_explicit(&lp->slot->phase, p, memory_order_relaxed);
}

/* ---- a loop's life ---- */

/* A loop named name was made, serving as role: it claims a board slot.
 * Any thread, before the loop's thread starts. */
void probe_loop_opened(struct loop_probe *lp, struct board *b, const char *name,
                       enum board_role role);

/* The loop is freed: its slot is free again. Any thread, after the loop's
 * thread ended. */
void probe_loop_closed(struct loop_probe *lp);

static inline void probe_loop_began(struct loop_probe *lp)
{
    board_thread_begin(lp->board, &lp->on_board, lp->role, lp->name, 0);
}

static inline void probe_loop_ended(struct loop_probe *lp)
{
    probe_loop_phase(lp, LOOP_PHASE_STOPPED);
    board_thread_end(lp->board, &lp->on_board);
}

/* ---- one iteration ---- */

/* The loop may block in epoll_wait next. */
static inline void probe_loop_waiting(struct loop_probe *lp)
{
    probe_loop_phase(lp, LOOP_PHASE_WAITING);
    board_thread_state(lp->board, &lp->on_board, STATE_WAITING);
}

/* epoll_wait failed with err (not EINTR): counted; said on the board and
 * on stderr the first time and each time the count doubles. */
void probe_loop_wait_failed(struct loop_probe *lp, int err);

/* The I/O phase began at at_ns (its clock, read once for both). */
static inline void probe_loop_io_began(struct loop_probe *lp, uint64_t at_ns)
{
    board_thread_state_at(lp->board, &lp->on_board, STATE_RUNNING, at_ns);
    probe_loop_phase(lp, LOOP_PHASE_IO);
}

/* A watch was called again (loop_watch_resume). */
static inline void probe_loop_resumed(struct loop_probe *lp)
{
    probe_loop_count(&lp->n.resumes_run, 1);
}

/* The I/O phase took io_ns. */
static inline void probe_loop_io_ended(struct loop_probe *lp, uint64_t io_ns)
{
    probe_loop_count(&lp->n.io_ns, io_ns);
}

/* Timers and tasks take their turn. */
static inline void probe_loop_tasks_began(struct loop_probe *lp)
{
    probe_loop_phase(lp, LOOP_PHASE_TASKS);
}

/* A task or timer callback ran took_ns. */
static inline void probe_loop_task_timed(struct loop_probe *lp, uint64_t took_ns)
{
    if (took_ns > atomic_load_explicit(&lp->n.longest_task_ns, memory_order_relaxed))
        atomic_store_explicit(&lp->n.longest_task_ns, took_ns, memory_order_relaxed);
}

/* A timer fired. */
static inline void probe_timer_fired(struct loop_probe *lp)
{
    probe_loop_count(&lp->n.timers_fired, 1);
}

/* A fixed-rate timer that ran is still behind: one run an iteration. */
static inline void probe_timer_behind(struct loop_probe *lp)
{
    probe_loop_count(&lp->n.timers_late, 1);
}

/* A task phase ran n tasks in took_ns; io_idle: after I/O that had
 * nothing to do (that time is counted apart: ioRatio had none to share). */
static inline void probe_loop_tasks_ran(struct loop_probe *lp, size_t n,
                                        uint64_t took_ns, bool io_idle)
{
    probe_loop_count(&lp->n.tasks_run, n);
    probe_loop_count(&lp->n.task_ns, took_ns);
    if (io_idle)
        probe_loop_count(&lp->n.task_idle_ns, took_ns);
}

/* A task phase without limit (ioRatio 100) kept I/O waiting took_ns:
 * counted on the board; said on stderr and in the event log the first
 * time and each time the count doubles. */
void probe_loop_starved_io(struct loop_probe *lp, uint64_t took_ns);

/* An iteration ended with queued tasks waiting and timers scheduled: its
 * figures go to the loop's board slot once, not per event (plain relaxed
 * stores: the board is output only). */
void probe_loop_iterated(struct loop_probe *lp, uint64_t queued, uint64_t timers);

/* ---- from other threads ---- */

/* A producer wrote the loop's eventfd (the wakeup rule). Any thread. */
static inline void probe_loop_woken(struct loop_probe *lp)
{
    atomic_fetch_add_explicit(&lp->n.wakeups_written, 1, memory_order_relaxed);
}

/* A task was refused: the queue held max_tasks. Counted; said on the
 * board and on stderr the first time and each time the count doubles.
 * Any thread. */
void probe_loop_task_refused(struct loop_probe *lp, size_t max_tasks);

/* ---- channels (reactive/) on the loop's thread ---- */

/* A connection's channel opened on this loop. */
static inline void probe_channel_opened(struct loop_probe *lp)
{
    probe_loop_count(&lp->n.channels, 1);
    board_add(lp->board, CTR_ACTIVE, 1);
}

/* A channel read n bytes. */
static inline void probe_channel_read(struct loop_probe *lp, uint64_t n)
{
    board_add(lp->board, CTR_BYTES_IN, n);
    board_thread_bytes(lp->board, &lp->on_board, n, 0);
}

/* A channel refused its connection ("!err busy"; the boss said why). */
static inline void probe_channel_refused(struct loop_probe *lp)
{
    board_add(lp->board, CTR_REJECTED, 1);
}

#endif
