/* pool.h -- the classic watchdog thread pool (值守线程 + 任务线程), as
 * docs/reading/watchdog-pool.md describes it.
 *
 * One watchdog thread and N task threads, each with its own task signal
 * and a state: idle, running or terminated. Submitters only put tasks on a
 * bounded queue; the watchdog takes a task off the queue and hands it to an
 * idle thread (marks it running and signals it), creates a thread when none
 * is idle and the pool is below max, and otherwise lets the task wait. It
 * also ends idle threads above min after idle_ms, by handing them a NULL
 * task. min may follow the average queue length (adaptive).
 *
 * It is model 2's engine (a task per connection) and, later, the reactors'
 * business pool (a task per slow line). Not a work-stealing executor: one
 * queue, one dispatcher, easy to watch.
 */
#ifndef THREADLAB_POOL_H
#define THREADLAB_POOL_H

#include <stdbool.h>
#include <stdint.h>

#include "probe/board.h"
#include "probe/probe_pool.h"

#define POOL_MIN_DEFAULT 4
#define POOL_MAX_DEFAULT 16
#define POOL_QUEUE_DEFAULT 1024
#define POOL_IDLE_MS_DEFAULT 5000
#define POOL_ADAPTIVE_WINDOW_MS_DEFAULT 10000
#define POOL_ADAPTIVE_SAMPLES 10        /* queue samples per window */
#define POOL_SPAWN_RETRY_MS 100         /* a failed thread creation is retried */
#define POOL_NAME_BYTES 12

/* What a full queue does to a new task (Java's RejectedExecutionHandler). */
enum pool_reject {
    POOL_REJECT_ABORT,          /* pool_submit fails with -EAGAIN */
    POOL_REJECT_CALLER_RUNS,    /* the submitting thread runs the task itself */
    POOL_REJECT_DISCARD_OLDEST, /* the oldest queued task is dropped */
    POOL_REJECT_BLOCK,          /* pool_submit waits for room */
    POOL_REJECT_COUNT
};

struct pool;
struct pool_thread;             /* a task thread */

/* A task. self is the task thread running it, or NULL when the submitter
 * runs it (caller-runs). Runs on a task thread or the submitter. */
typedef void (*pool_task_cb)(void *arg, struct pool_thread *self);

/* A task that will never run (discard-oldest, or a shutdown without
 * drain), so its owner can clean up. Runs on the thread that dropped it. */
typedef void (*pool_drop_cb)(void *arg);

struct pool_opts {
    const char *thread_prefix;  /* task threads are "<prefix>-1", ... */
    const char *queue_name;     /* the queue's name on the board */
    int min_threads;            /* kept even when idle */
    int max_threads;            /* never more */
    int queue_capacity;         /* tasks that may wait */
    int idle_ms;                /* idle longer than this above min: ended */
    enum pool_reject reject;
    bool adaptive;              /* min follows the average queue length */
    int adaptive_window_ms;     /* ... over this window */
    struct board *board;        /* publish here; may be NULL */
    enum board_role role;       /* the task threads' role on the board */
    pool_drop_cb on_drop;       /* may be NULL */
    bool log_tasks;             /* an event per task that waits or is
                                   dispatched: for connections, not lines */
};

/* Counters and sizes, for tests and reports. */
struct pool_stats {
    int size;                   /* task threads alive */
    int idle, running;
    int min_now;                /* min, as adapted */
    int queued;
    int blocked_submitters;     /* in pool_submit, waiting for room (block) */
    struct pool_counters n;     /* what it counted (probe/probe_pool.h); a
                                   failed spawn is retried after
                                   POOL_SPAWN_RETRY_MS */
};

/* Defaults: 4..16 threads, 1024 queued, 5 s idle, abort, not adaptive.
 * Any thread. */
void pool_opts_init(struct pool_opts *o);

/* Start the watchdog and min task threads. NULL + errno (EINVAL for bad
 * sizes) on failure. Any thread; the pool's threads belong to the pool
 * from here to pool_shutdown. */
struct pool *pool_create(const struct pool_opts *o);

/* Queue a task; tag names it in events (a connection number). Returns 0,
 * -EAGAIN when rejected (abort policy), -ESHUTDOWN after pool_shutdown
 * began. Any thread but the pool's own (a task that submits to its full
 * pool under block would wait for itself). */
int pool_submit(struct pool *p, pool_task_cb fn, void *arg, uint64_t tag);

/* Stop taking tasks; run the queued ones (drain) or drop them (on_drop,
 * called for every one, on this thread); wait for running tasks and for
 * submitters blocked for room (block) to leave with -ESHUTDOWN; end and
 * join every thread; free. Any thread but the pool's own; nothing may
 * call pool_submit once it has returned. */
void pool_shutdown(struct pool *p, bool drain);

/* Copy the pool's counters into out (under the pool's lock: one instant).
 * Any thread, the pool's own included. */
void pool_stats(struct pool *p, struct pool_stats *out);

/* The task thread's name and its slot on the board, for tasks that publish
 * their own states (blocked in read, in !sleep). Its own thread only. */
const char *pool_thread_name(const struct pool_thread *t);
struct board_thread_ref *pool_thread_board(struct pool_thread *t);

/* ---- a seam for tests ---- */

/* Where the watchdog calls a test's seam: having let go of the pool lock
 * (to join ended threads), or about to sleep on its condition (the lock
 * held until the wait takes it). */
enum pool_seam { POOL_SEAM_UNLOCKED, POOL_SEAM_SLEEP };
typedef void (*pool_seam_cb)(void *arg, enum pool_seam at, int queued);

/* Tests only: call fn(arg, at, tasks queued) on the watchdog at those two
 * points, so that a test can hold the watchdog where the lock is let go
 * and finish a task meanwhile: the lost hand-over forced on every run.
 * NULL: none. Any thread. */
void pool__set_seam(struct pool *p, pool_seam_cb fn, void *arg);

/* "abort", "caller-runs", "discard-oldest", "block", and back: 0, or
 * -EINVAL for a name that is none of them. Pure, any thread. */
const char *pool_reject_name(enum pool_reject r);
int pool_reject_parse(const char *s, enum pool_reject *out);

#endif
