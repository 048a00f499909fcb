/* probe_pool.h -- the watchdog pool's probe: its queue's slot on the
 * board, the watchdog's row, and what the pool counts, out of struct pool
 * (threadpool/pool.c), so that what a student reads there is the
 * mechanism: the queue, the threads, the watchdog's decisions. One call
 * per event, as Redis counts its stat_* where the event happens: a
 * thread grew the pool, a task was queued, refused, discarded.
 *
 * The counters are guarded by the pool's lock, as the pool's state is:
 * every function here is called with the pool lock held, unless it says
 * otherwise, by the thread the event happened on (the watchdog thread, a
 * task thread, or a submitting thread).
 */
#ifndef THREADLAB_PROBE_POOL_H
#define THREADLAB_PROBE_POOL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "board.h"

/* What a pool counts. pool_stats (threadpool/pool.h) copies them out. */
struct pool_counters {
    uint64_t high_water;        /* most tasks ever queued at once */
    uint64_t submitted, completed;
    uint64_t rejected;          /* abort */
    uint64_t caller_ran;        /* caller-runs */
    uint64_t discarded;         /* discard-oldest and shutdown without drain */
    uint64_t spawned, retired;  /* task threads created and ended */
    uint64_t spawn_failed;      /* creations the system refused */
};

struct pool_probe {
    struct board *board;        /* may be NULL */
    struct board_queue *queue;  /* the queue's board slot, or NULL */
    struct board_thread_ref watchdog; /* the watchdog thread only */
    bool log_tasks;             /* say each task handed out or left waiting */
    int capacity;               /* the queue's, for the events */
    struct pool_counters n;
};

/* A pool was made on board b, its queue named queue_name: it claims a
 * queue slot. Any thread, before the pool's threads start. */
void probe_pool_opened(struct pool_probe *pp, struct board *b, const char *queue_name,
                       int capacity, bool log_tasks);

/* The queue holds depth tasks now. Per push and pop, so inline: relaxed
 * stores into the queue's slot. */
static inline void probe_queue_changed(struct pool_probe *pp, int depth)
{
    if ((uint64_t)depth > pp->n.high_water)
        pp->n.high_water = (uint64_t)depth;
    if (!pp->queue)
        return;
    atomic_store_explicit(&pp->queue->depth, (uint64_t)depth, memory_order_relaxed);
    atomic_store_explicit(&pp->queue->high_water, pp->n.high_water, memory_order_relaxed);
    atomic_store_explicit(&pp->queue->rejected, pp->n.rejected + pp->n.discarded,
                          memory_order_relaxed);
}

/* ---- the queue's side (a submitting thread) ---- */

/* Task tag was queued (depth queued now); waits: every one of the size
 * threads is busy and the pool is at its max, so it waits for one. */
void probe_task_queued(struct pool_probe *pp, uint64_t tag, int depth, int size,
                       bool waits);

/* A task was refused (abort): the queue held depth. */
static inline void probe_task_rejected(struct pool_probe *pp, int depth)
{
    pp->n.rejected++;
    probe_queue_changed(pp, depth);
}

/* Task tag found the queue full and its caller runs it (caller-runs). */
void probe_caller_ran(struct pool_probe *pp, uint64_t tag);

/* Task dropped_tag, the oldest, was discarded to make room for task tag
 * (discard-oldest). */
void probe_oldest_discarded(struct pool_probe *pp, uint64_t dropped_tag, uint64_t tag);

/* A queued task was dropped by a shutdown without drain. */
static inline void probe_dropped_at_shutdown(struct pool_probe *pp)
{
    pp->n.discarded++;
}

/* ---- threads (the watchdog thread, or pool_create's) ---- */

/* Why the pool grew or shrank: the rule that did it. The pool passes the
 * rule; the probe words the event. */
enum pool_resize {
    POOL_UP_TO_MIN,        /* pool_create makes the minimum up front */
    POOL_NO_IDLE_THREAD,   /* tasks wait, no thread is idle, size below max */
    POOL_IDLE_TOO_LONG,    /* idle for idle_ms, the pool above its minimum */
    POOL_SHUTTING_DOWN,    /* every thread ends (no event) */
};

/* The pool's size and bounds just after a change, for the event's words. */
struct pool_shape {
    int size;              /* task threads now */
    int min, max;          /* the current minimum (--adaptive moves it), max */
    int queued;            /* tasks waiting */
    int idle_ms;           /* how long an idle thread above min may stay */
};

/* Thread name was created, for the reason why. */
void probe_grew(struct pool_probe *pp, const char *name, enum pool_resize why,
                struct pool_shape now);

/* Thread name, idle since idle_since_ns, was handed its NULL task, for the
 * reason why. */
void probe_shrank(struct pool_probe *pp, const char *name, enum pool_resize why,
                  uint64_t idle_since_ns, struct pool_shape now);

/* The system would not give a thread (err), queued tasks waiting; the
 * watchdog tries again in retry_ms. */
void probe_spawn_failed(struct pool_probe *pp, int err, int queued, int retry_ms);

/* --adaptive moved the minimum from `from` to `to`: the queue held
 * average tasks over the last window_ms. */
void probe_min_moved(struct pool_probe *pp, int from, int to, double average,
                     int window_ms);

/* Task tag was handed to thread name, queued since queued_ns. */
void probe_task_ran(struct pool_probe *pp, uint64_t tag, const char *name,
                    uint64_t queued_ns);

/* Thread t finished its task (it serves no connection now). Its own
 * thread. */
static inline void probe_task_done(struct pool_probe *pp, struct board_thread_ref *t)
{
    board_thread_conn(pp->board, t, 0);
    pp->n.completed++;
}

/* ---- the watchdog's own row (the watchdog thread; no lock needed) ---- */

static inline void probe_watchdog_began(struct pool_probe *pp)
{
    board_thread_begin(pp->board, &pp->watchdog, ROLE_WATCHDOG, "watchdog", 0);
}

static inline void probe_watchdog_waiting(struct pool_probe *pp)
{
    board_thread_state(pp->board, &pp->watchdog, STATE_WAITING);
}

static inline void probe_watchdog_woke(struct pool_probe *pp)
{
    board_thread_state(pp->board, &pp->watchdog, STATE_RUNNING);
}

static inline void probe_watchdog_ended(struct pool_probe *pp)
{
    board_thread_end(pp->board, &pp->watchdog);
}

#endif
