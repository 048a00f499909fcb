/* timers.c -- the loop's timers: a min-heap of deadlines (timer_heap.c)
 * that only the loop thread touches, fired once per iteration, between
 * the I/O and the tasks (run_due_timers, step 2 of loop_iteration). Any
 * thread may schedule or cancel: the heap changes by a task on the loop.
 * See loop.h for the API, and inside_loop.h for how the files of the loop
 * share its struct.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "inside_loop.h"
#include "net/clock.h"

enum timer_state { TIMER_PENDING, TIMER_FIRED, TIMER_CANCELLED };

struct loop_timer {
    struct heap_node node;        /* loop thread only */
    struct loop *loop;
    loop_task_cb fn;
    void *arg;
    uint64_t period_ns;           /* 0: once */
    _Atomic int state;            /* enum timer_state */
    _Atomic int refs;             /* the caller's handle + the loop's hold */
    struct loop_timer *again;     /* loop thread only: fired this phase, to
                                   * go back on the heap after it */
};

/* Timers allocated and not yet freed (loop_timers_alive). Process-wide, not
 * per loop: a handle may be given back after its loop is freed. */
static _Atomic uint64_t timers_alive;

uint64_t loop_timers_alive(void)
{
    return atomic_load_explicit(&timers_alive, memory_order_relaxed);
}

/* Drop one reference; the last one frees the timer. */
static void timer_unref(struct loop_timer *t)
{
    if (atomic_fetch_sub(&t->refs, 1) == 1) {
        free(t);
        atomic_fetch_sub_explicit(&timers_alive, 1, memory_order_relaxed);
    }
}

static struct loop_timer *from_node(struct heap_node *n)
{
    return (struct loop_timer *)((char *)n - offsetof(struct loop_timer, node));
}

/* On the loop: put a new timer in the heap (unless cancelled meanwhile). */
static void timer_add_task(void *arg)
{
    struct loop_timer *t = arg;
    if (atomic_load(&t->state) != TIMER_PENDING || heap_push(&t->loop->timers, &t->node) < 0)
        timer_unref(t);               /* the loop's hold */
}

/* On the loop: take a cancelled timer out of the heap. */
static void timer_remove_task(void *arg)
{
    struct loop_timer *t = arg;
    if (t->node.index != HEAP_NOT_IN) {
        heap_remove(&t->loop->timers, &t->node);
        timer_unref(t);               /* the loop's hold */
    }
    timer_unref(t);                   /* this task's own */
}

static struct loop_timer *schedule(struct loop *l, uint64_t delay_ns,
                                   uint64_t period_ns, loop_task_cb fn, void *arg)
{
    struct loop_timer *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->loop = l;
    t->fn = fn;
    t->arg = arg;
    t->period_ns = period_ns;
    t->node.index = HEAP_NOT_IN;
    t->node.deadline_ns = now_ns() + delay_ns;
    atomic_init(&t->state, TIMER_PENDING);
    atomic_init(&t->refs, 2);         /* the handle + the loop's hold */
    atomic_fetch_add_explicit(&timers_alive, 1, memory_order_relaxed);
    if (loop_run_in_loop(l, timer_add_task, t) < 0) {
        atomic_fetch_sub_explicit(&timers_alive, 1, memory_order_relaxed);
        free(t);
        errno = ESHUTDOWN;
        return NULL;
    }
    return t;
}

struct loop_timer *loop_schedule(struct loop *l, uint64_t delay_ms,
                                 loop_task_cb fn, void *arg)
{
    return schedule(l, delay_ms * 1000000u, 0, fn, arg);
}

struct loop_timer *loop_schedule_at_fixed_rate(struct loop *l, uint64_t initial_ms,
                                               uint64_t period_ms,
                                               loop_task_cb fn, void *arg)
{
    if (period_ms == 0) {
        errno = EINVAL;
        return NULL;
    }
    return schedule(l, initial_ms * 1000000u, period_ms * 1000000u, fn, arg);
}

bool loop_timer_cancel(struct loop_timer *t)
{
    int pending = TIMER_PENDING;
    bool stopped = atomic_compare_exchange_strong(&t->state, &pending, TIMER_CANCELLED);
    if (stopped) {
        /* The heap belongs to the loop thread: remove it there. */
        atomic_fetch_add(&t->refs, 1);          /* for the removal task */
        if (loop_run_in_loop(t->loop, timer_remove_task, t) < 0)
            timer_unref(t);   /* the loop ended (it dropped its hold already)
                               * or its queue is full: the heap keeps its
                               * hold and drops the cancelled timer when due */
    }
    timer_unref(t);                             /* the caller's handle */
    return stopped;
}

void loop_timer_release(struct loop_timer *t)
{
    timer_unref(t);
}

/* Step 2 of an iteration: fire the timers that are due, earliest first,
 * each at most once. Loop thread.
 *
 * A pending timer holds two references: the caller's handle and the
 * loop's hold. While its callback runs the loop takes a third, since the
 * callback, or another thread, may cancel it and drop the handle
 * meanwhile. After the callback a fixed-rate timer still pending is set
 * one period after the deadline it had and kept aside, with the loop's
 * hold, until the phase ends; every other timer is done, and the loop's
 * hold ends here. A cancel that came meanwhile queued a removal task,
 * which finds the node out of the heap (heap_pop took it out) and drops
 * only its own reference.
 *
 * Once per iteration, whatever the clock says: only the timers due at
 * `now`, the time the phase began, fire, and a fixed-rate timer goes back
 * on the heap only after the phase. Re-armed at once, a timer that fell
 * behind (a callback that outlasted its period, a loop stalled by a long
 * handler) would be due again at once and run again and again here, with
 * no I/O and no task between: 60 runs in a row after a 60-period stall. Set
 * aside, it catches up one run per iteration, I/O and tasks running between,
 * as Netty's fixed-rate task does (re-queued for the next fetch). Each such
 * catching-up run is counted (timers_late). */
void run_due_timers(struct loop *l, uint64_t now)
{
    struct loop_timer *again = NULL;            /* fixed-rate, for the heap */
    struct heap_node *n;
    while ((n = heap_peek(&l->timers)) && n->deadline_ns <= now) {
        struct loop_timer *t = from_node(n);
        heap_pop(&l->timers);
        if (atomic_load(&t->state) != TIMER_PENDING) {
            timer_unref(t);                     /* cancelled: the loop's hold */
            continue;
        }
        atomic_fetch_add(&t->refs, 1);          /* keep it while it runs */
        run_timed(l, t->fn, t->arg);
        probe_timer_fired(&l->probe);
        if (t->period_ns && atomic_load(&t->state) == TIMER_PENDING) {
            /* Fixed rate: from its deadline, not from now, so a late run
             * does not push the next ones back. */
            t->node.deadline_ns += t->period_ns;
            if (t->node.deadline_ns <= now)
                probe_timer_behind(&l->probe);  /* one run an iteration */
            t->again = again;
            again = t;
        } else {
            /* A one-shot that ran is FIRED: a cancel from now on stops
             * nothing. One cancelled meanwhile stays CANCELLED. */
            int pending = TIMER_PENDING;
            if (!t->period_ns)
                atomic_compare_exchange_strong(&t->state, &pending, TIMER_FIRED);
            timer_unref(t);                     /* done: the loop's hold */
        }
        timer_unref(t);                         /* the running ref */
    }
    while (again) {                             /* the loop's hold goes with it */
        struct loop_timer *t = again;
        again = t->again;
        if (atomic_load(&t->state) != TIMER_PENDING || heap_push(&l->timers, &t->node) < 0)
            timer_unref(t);
    }
}

void drop_timers(struct loop *l)
{
    struct heap_node *n;
    while ((n = heap_pop(&l->timers))) {
        struct loop_timer *t = from_node(n);
        int pending = TIMER_PENDING;
        atomic_compare_exchange_strong(&t->state, &pending, TIMER_CANCELLED);
        timer_unref(t);
    }
}
