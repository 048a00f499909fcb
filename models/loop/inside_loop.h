/* inside_loop.h -- inside the event loop: its struct, and the steps its
 * files give each other. Only models/loop/ includes it; everyone
 * else sees loop.h.
 *
 * One loop, one file per lesson, each calling only the files below it:
 *
 *   loop.c           the iteration: wait for I/O, handle it, then timers
 *                    and tasks (lab 03)
 *     timers.c       the timers (lab 05)
 *     task_budget.c  the task phase and ioRatio's budget (lab 07)
 *   task_queue.c     the task queue and the producer's half of the
 *                    wakeup rule (lab 03)
 *
 * The steps all of them share (bump, run_timed) are inline here. Every
 * function here is called on the loop's thread only.
 */
#ifndef THREADLAB_INSIDE_LOOP_H
#define THREADLAB_INSIDE_LOOP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loop.h"
#include "timer_heap.h"
#include "net/clock.h"
#include "probe/probe_loop.h"

struct task {
    loop_task_cb fn;
    void *arg;
};

struct loop {
    char name[LOOP_NAME_BYTES];
    int io_ratio_pct;
    int epfd;
    struct loop_watch wake;       /* the eventfd, as a watch */
    pthread_t thread;
    _Atomic bool started;
    _Atomic bool stopping;        /* loop_stop was called */
    _Atomic bool ended;           /* the thread returned: no more tasks */
    _Atomic bool sleeping;        /* in (or about to enter) epoll_wait */

    pthread_mutex_t lock;         /* guards the task ring */
    struct task *ring;
    size_t head, count, cap;
    size_t max_tasks;             /* count never goes past this */
    _Atomic uint64_t queued;      /* == count, readable without the lock */

    /* Watches to call again next iteration (loop_watch_resume): a circular
     * list through this sentinel, loop thread only. */
    struct loop_watch resumes;

    struct timer_heap timers;     /* loop thread only */

    /* The board, and what the loop counts: the instruments, apart from
     * the mechanism (probe/probe_loop.h). */
    struct loop_probe probe;
    _Atomic uint64_t busy_since_ns;   /* start of the running handler, or 0 */
    pthread_mutex_t long_lock;    /* guards the last long handler's record */
    uint64_t long_began_ns, long_took_ns; /* the last handler of long_handler_ns+ */
    _Atomic uint64_t long_handler_ns; /* what counts as long (loop__remember_handlers_over) */
    struct loop_group *parent;    /* the group it belongs to, or NULL */
    _Atomic uint64_t task_overrun_ns; /* written by the loop thread only: how far
                                   * tasks ran past their budgets, repaid by the
                                   * next ones */
    _Atomic(loop_task_cb) before_sleep;   /* tests only: loop__set_before_sleep */
    _Atomic(void *) before_sleep_arg;
    _Atomic(loop_task_cb) after_queue;    /* tests only: loop__set_after_queue */
    _Atomic(void *) after_queue_arg;
};

/* Relaxed counter add by the loop thread (the only writer). */
static inline void bump(_Atomic uint64_t *c, uint64_t n)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
                          memory_order_relaxed);
}

/* A handler or task begins at now: the blocked checker sees it from here. */
static inline void busy_begin(struct loop *l, uint64_t now)
{
    atomic_store_explicit(&l->busy_since_ns, now, memory_order_relaxed);
}

/* The handler or task begun at began_ns has returned. One that ran
 * long_handler_ns or longer is remembered (when it began, how long it
 * took), so that the checker can say exactly how long the loop was stuck,
 * not "until I next looked". The lock is taken only after such a handler,
 * never on the fast path. Returns the time now, which the caller may use
 * as the next handler's start (one clock read per handler, as before). */
static inline uint64_t busy_end(struct loop *l, uint64_t began_ns)
{
    uint64_t now = now_ns();
    /* Remember it before saying the loop is free: the checker reads the
     * length as soon as it sees busy_since cleared (the other order let it
     * read the previous handler's, and report no length at all). */
    if (now - began_ns >= atomic_load_explicit(&l->long_handler_ns, memory_order_relaxed)) {
        pthread_mutex_lock(&l->long_lock);
        l->long_began_ns = began_ns;
        l->long_took_ns = now - began_ns;
        pthread_mutex_unlock(&l->long_lock);
    }
    atomic_store_explicit(&l->busy_since_ns, 0, memory_order_release);
    return now;
}

/* Run one task or timer callback, timed for the blocked checker (busy
 * from its start, measured around it). Returns the time it ended: the
 * task budget's clock, read once per task. */
static inline uint64_t run_timed(struct loop *l, loop_task_cb fn, void *arg)
{
    uint64_t start = now_ns();
    busy_begin(l, start);
    fn(arg);
    uint64_t end = busy_end(l, start);
    probe_loop_task_timed(&l->probe, end - start);
    return end;
}

/* ---- task_queue.c ---- */

/* The loop whose thread this is, or NULL: set by loop.c's thread. */
extern _Thread_local struct loop *current_loop;

/* Take up to max tasks off the queue, oldest first. Any thread may be
 * queueing meanwhile. Returns how many. Loop thread. */
size_t ring_take(struct loop *l, struct task *out, size_t max);

/* ---- timers.c and task_budget.c ---- */

/* timers.c, step 2 of an iteration: fire the timers due at `now`, each at
 * most once. Loop thread. */
void run_due_timers(struct loop *l, uint64_t now);

/* timers.c: the loop has ended: cancel and drop every timer left. */
void drop_timers(struct loop *l);

/* task_budget.c: how long this iteration's tasks may run, after I/O that
 * took io_ns (io_idle: there was none to do), less what earlier tasks
 * overran. Loop thread. */
uint64_t carried_task_budget_ns(struct loop *l, uint64_t io_ns, bool io_idle);

/* task_budget.c, step 3's heart (lab 07): run queued tasks while budget_ns
 * from began_ns lasts (one at least after an idle I/O step; UINT64_MAX:
 * no end); returns how many ran. Loop thread, or a test's thread on a
 * loop that is not started. */
size_t run_tasks_in_budget(struct loop *l, uint64_t began_ns, uint64_t budget_ns, bool io_idle);

/* task_budget.c, step 3 of an iteration: run_tasks_in_budget, then its
 * time on the loop's counters (owed when it overran). Loop thread. */
void run_tasks(struct loop *l, uint64_t began_ns, uint64_t budget_ns, bool io_idle);

#endif
