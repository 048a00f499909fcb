/* task_queue.c -- the loop's task queue: any thread queues a task
 * (loop_execute), the loop takes them in its task phase (ring_take,
 * task_budget.c). See loop.h for the API; loop.c runs the iteration and
 * task_budget.c the task phase, both on top of this file.
 *
 * The wakeup rule (Netty's wakenUp, muduo's "not in loop, or draining"):
 * before it blocks in epoll_wait the loop sets `sleeping` and looks at the
 * task queue once more (loop.c, poll_io); a producer that queues a task
 * writes the eventfd only if it is the one that clears `sleeping`. Either
 * the producer sees the flag and wakes the loop, or the loop sees the task
 * and does not sleep; a burst of tasks costs one write, and tasks queued
 * by the loop itself cost none.
 */
#include "inside_loop.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

_Thread_local struct loop *current_loop;   /* set on a loop's thread (loop.c) */

bool loop_in_loop(const struct loop *l)
{
    return current_loop == l;
}

static int ring_push(struct loop *l, struct task t)
{
    if (l->count >= l->max_tasks)
        return -EAGAIN;
    if (l->count == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        struct task *grown = malloc(cap * sizeof(*grown));
        if (!grown)
            return -ENOMEM;
        for (size_t i = 0; i < l->count; i++)
            grown[i] = l->ring[(l->head + i) % l->cap];
        free(l->ring);
        l->ring = grown;
        l->head = 0;
        l->cap = cap;
    }
    l->ring[(l->head + l->count) % l->cap] = t;
    l->count++;
    atomic_store(&l->queued, l->count);
    return 0;
}

/* Take up to max tasks, in order. */
size_t ring_take(struct loop *l, struct task *out, size_t max)
{
    pthread_mutex_lock(&l->lock);
    size_t n = l->count < max ? l->count : max;
    for (size_t i = 0; i < n; i++) {
        out[i] = l->ring[l->head];
        l->head = (l->head + 1) % l->cap;
    }
    l->count -= n;
    atomic_store(&l->queued, l->count);
    pthread_mutex_unlock(&l->lock);
    return n;
}

/* A refused task is counted (the probe says so on the board and on
 * stderr, the first time and each time the count doubles: every one would
 * flood both exactly when the loop is already behind). */
static void report_rejected(struct loop *l, int rc)
{
    if (rc != -EAGAIN)
        return;
    probe_loop_task_refused(&l->probe, l->max_tasks);
}

int loop_execute(struct loop *l, loop_task_cb fn, void *arg)
{
    pthread_mutex_lock(&l->lock);
    if (atomic_load(&l->ended)) {
        pthread_mutex_unlock(&l->lock);
        return -ESHUTDOWN;
    }
    int rc = ring_push(l, (struct task){ fn, arg });
    pthread_mutex_unlock(&l->lock);
    if (rc < 0) {
        report_rejected(l, rc);
        return rc;
    }
    /* The wakeup rule: only the producer that finds the loop asleep (and
     * clears the flag) writes. The loop's own tasks never need a write. */
    if (!loop_in_loop(l) && atomic_exchange(&l->sleeping, false)) {
        uint64_t one = 1;
        (void)!write(l->wake.fd, &one, sizeof(one));
        probe_loop_woken(&l->probe);
    }
    return 0;
}

/* The test seam (loop__set_after_queue): another thread has queued a task
 * for l and woken it, and has not yet returned to its caller. */
static void after_queue(struct loop *l)
{
    loop_task_cb fn = atomic_load_explicit(&l->after_queue, memory_order_acquire);
    if (fn)
        fn(atomic_load_explicit(&l->after_queue_arg, memory_order_relaxed));
}

int loop_run_in_loop(struct loop *l, loop_task_cb fn, void *arg)
{
    if (loop_in_loop(l)) {
        fn(arg);
        return 0;
    }
    int rc = loop_execute(l, fn, arg);
    if (rc == 0)
        after_queue(l);
    return rc;
}
