/* pool.c -- the watchdog and its task threads. See pool.h.
 *
 *   submitters --push--> [ bounded task queue ] --watchdog takes one-->
 *        idle task thread?  yes: mark it running, signal its task signal
 *                           no, size < max: create a thread (then hand over)
 *                           no, at max: the task waits; the watchdog sleeps
 *                                       until a thread goes idle
 *   nothing queued: end threads idle > idle_ms above min (a NULL task)
 *
 * Task thread states (guarded by the pool lock):
 *
 *      create          task signal           task done
 *   ---------> IDLE ------------------> RUNNING ---------> IDLE
 *               |  NULL task (retire or shutdown)
 *               +---------------------------------> TERMINATED (joined)
 *
 * One lock guards everything: the queue, the threads' states, the counts.
 * Tasks run outside it.
 */
#include "pool.h"
#include "net/clock.h"
#include "probe/probe.h"
#include "probe/probe_pool.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum task_thread_state { TASK_IDLE, TASK_RUNNING, TASK_TERMINATED };

struct pool_task {
    pool_task_cb fn;            /* NULL: the NULL task, "end yourself" */
    void *arg;
    uint64_t tag;
    uint64_t queued_ns;
};

struct pool_thread {
    struct pool *pool;
    pthread_t thread;
    char name[16];
    enum task_thread_state state;   /* pool lock */
    pthread_cond_t task_signal;     /* its own: the watchdog signals it */
    bool has_task;                  /* pool lock: task is waiting for it */
    struct pool_task task;
    uint64_t idle_since_ns;         /* pool lock */
    struct board_thread_ref on_board; /* its own thread only */
    struct pool_thread *next;       /* in pool->threads or pool->ended */
};

struct pool {
    struct pool_opts o;
    pthread_mutex_t lock;
    pthread_cond_t watchdog_signal; /* a task came, a thread went idle, stop */
    pthread_cond_t queue_not_full;  /* for the block policy */
    pthread_cond_t submitters_gone; /* shutdown: the last blocked submitter left */
    int submitters_blocked;         /* in pool_submit, waiting for room */
    struct pool_task *queue;        /* ring of o.queue_capacity */
    int head, count;
    struct pool_thread *threads;    /* alive: idle or running */
    struct pool_thread *ended;      /* handed a NULL task, to be joined */
    int size, idle, next_number;
    int min_now;
    uint64_t spawn_retry_ns;        /* a thread could not be created: try
                                       again then (0: no failure pending) */
    bool shutting_down, drain;
    pthread_t watchdog;
    bool watchdog_started;
    int samples[POOL_ADAPTIVE_SAMPLES]; /* queue lengths, for adaptive min */
    int nsamples, sample_pos;
    uint64_t next_sample_ns;
    struct pool_probe probe;        /* the board, and what the pool counts
                                       (pool lock; probe/probe_pool.h) */
    _Atomic(pool_seam_cb) seam;     /* tests only: pool__set_seam */
    _Atomic(void *) seam_arg;
};

/* ---- the queue (pool lock held) -------------------------------------------- */

static void queue_push(struct pool *p, struct pool_task t)
{
    p->queue[(p->head + p->count) % p->o.queue_capacity] = t;
    p->count++;
    probe_queue_changed(&p->probe, p->count);
}

static struct pool_task queue_pop(struct pool *p)
{
    struct pool_task t = p->queue[p->head];
    p->head = (p->head + 1) % p->o.queue_capacity;
    p->count--;
    pthread_cond_signal(&p->queue_not_full);
    probe_queue_changed(&p->probe, p->count);
    return t;
}

/* ---- a task thread ------------------------------------------------------- */

static void *task_thread_main(void *arg)
{
    struct pool_thread *t = arg;
    struct pool *p = t->pool;
    struct board *board = p->o.board;

    probe_thread_began(board, &t->on_board, p->o.role, t->name);
    pthread_mutex_lock(&p->lock);
    for (;;) {
        /* Idle: blocked on our own task signal, using no CPU. */
        while (!t->has_task) {
            probe_idle(board, &t->on_board);
            pthread_cond_wait(&t->task_signal, &p->lock);
        }
        struct pool_task task = t->task;
        t->has_task = false;
        if (!task.fn)
            break;                         /* the NULL task: we are done */
        pthread_mutex_unlock(&p->lock);

        probe_task_began(board, &t->on_board, task.tag);
        task.fn(task.arg, t);

        pthread_mutex_lock(&p->lock);
        t->state = TASK_IDLE;
        t->idle_since_ns = now_ns();
        p->idle++;
        probe_task_done(&p->probe, &t->on_board);
        pthread_cond_signal(&p->watchdog_signal);   /* a thread is free */
    }
    pthread_mutex_unlock(&p->lock);
    probe_thread_ended(board, &t->on_board);
    return NULL;
}

/* The system would not give us a thread (EAGAIN: out of threads, or
 * memory). Count it, and have the watchdog try again after a while: no
 * thread may ever free up (each serves a long connection), so waiting for
 * one could leave the task queued for good. Returns false. */
static bool spawn_failed(struct pool *p, int err)
{
    p->spawn_retry_ns = now_ns() + (uint64_t)POOL_SPAWN_RETRY_MS * 1000000u;
    probe_spawn_failed(&p->probe, err, p->count, POOL_SPAWN_RETRY_MS);
    return false;
}

/* The pool's size and bounds, for the probe's words. Pool lock held. */
static struct pool_shape shape_of(const struct pool *p)
{
    return (struct pool_shape){ .size = p->size, .min = p->min_now,
                                .max = p->o.max_threads, .queued = p->count,
                                .idle_ms = p->o.idle_ms };
}

/* Create a task thread, idle, for the reason why. Pool lock held. Returns
 * false if the system would not give us one. */
static bool spawn_task_thread(struct pool *p, enum pool_resize why)
{
    struct pool_thread *t = calloc(1, sizeof(*t));
    if (!t)
        return spawn_failed(p, ENOMEM);
    t->pool = p;
    t->state = TASK_IDLE;
    t->idle_since_ns = now_ns();
    snprintf(t->name, sizeof(t->name), "%s-%d", p->o.thread_prefix, ++p->next_number);
    pthread_cond_init(&t->task_signal, NULL);
    int rc = pthread_create(&t->thread, NULL, task_thread_main, t);
    if (rc != 0) {
        pthread_cond_destroy(&t->task_signal);
        free(t);
        return spawn_failed(p, rc);
    }
    p->spawn_retry_ns = 0;
    pthread_setname_np(t->thread, t->name);
    t->next = p->threads;
    p->threads = t;
    p->size++;
    p->idle++;
    probe_grew(&p->probe, t->name, why, shape_of(p));
    return true;
}

/* Hand a NULL task to an idle thread, for the reason why: it ends itself.
 * Pool lock held. */
static void retire_task_thread(struct pool *p, struct pool_thread *t,
                               enum pool_resize why)
{
    struct pool_thread **link = &p->threads;
    while (*link != t)
        link = &(*link)->next;
    *link = t->next;
    t->next = p->ended;
    p->ended = t;
    t->state = TASK_TERMINATED;
    t->task = (struct pool_task){ 0 };
    t->has_task = true;
    pthread_cond_signal(&t->task_signal);
    p->size--;
    p->idle--;
    probe_shrank(&p->probe, t->name, why, t->idle_since_ns, shape_of(p));
}

/* ---- the watchdog (值守线程) ------------------------------------------------ */

/* The test seam (pool__set_seam). */
static void seam(struct pool *p, enum pool_seam at, int queued)
{
    pool_seam_cb fn = atomic_load_explicit(&p->seam, memory_order_acquire);
    if (fn)
        fn(atomic_load_explicit(&p->seam_arg, memory_order_relaxed), at, queued);
}

void pool__set_seam(struct pool *p, pool_seam_cb fn, void *arg)
{
    atomic_store_explicit(&p->seam_arg, arg, memory_order_relaxed);
    atomic_store_explicit(&p->seam, fn, memory_order_release);
}

/* Join the threads that were handed a NULL task. Unlocks meanwhile: what
 * the watchdog saw before may have changed when it returns. */
static void join_ended(struct pool *p)
{
    struct pool_thread *t = p->ended;
    p->ended = NULL;
    int queued = p->count;
    pthread_mutex_unlock(&p->lock);
    seam(p, POOL_SEAM_UNLOCKED, queued);
    while (t) {
        struct pool_thread *next = t->next;
        pthread_join(t->thread, NULL);
        pthread_cond_destroy(&t->task_signal);
        free(t);
        t = next;
    }
    pthread_mutex_lock(&p->lock);
}

static struct pool_thread *find_idle(struct pool *p)
{
    for (struct pool_thread *t = p->threads; t; t = t->next)
        if (t->state == TASK_IDLE && !t->has_task)
            return t;
    return NULL;
}

/* Take the next task off the queue and hand it to t. */
static void dispatch(struct pool *p, struct pool_thread *t)
{
    t->task = queue_pop(p);
    t->has_task = true;
    t->state = TASK_RUNNING;
    p->idle--;
    pthread_cond_signal(&t->task_signal);
    probe_task_ran(&p->probe, t->task.tag, t->name, t->task.queued_ns);
}

/* Adaptive min: the floor plus the average queue length over the window. */
static void sample_queue(struct pool *p, uint64_t now)
{
    p->samples[p->sample_pos] = p->count;
    p->sample_pos = (p->sample_pos + 1) % POOL_ADAPTIVE_SAMPLES;
    if (p->nsamples < POOL_ADAPTIVE_SAMPLES)
        p->nsamples++;
    p->next_sample_ns = now + (uint64_t)p->o.adaptive_window_ms * 1000000u /
                              POOL_ADAPTIVE_SAMPLES;
    int sum = 0;
    for (int i = 0; i < p->nsamples; i++)
        sum += p->samples[i];
    double average = (double)sum / p->nsamples;
    int target = p->o.min_threads + (int)(average + 0.999);
    if (target > p->o.max_threads)
        target = p->o.max_threads;
    if (target != p->min_now) {
        probe_min_moved(&p->probe, p->min_now, target, average,
                        p->o.adaptive_window_ms);
        p->min_now = target;
    }
}

/* End idle threads above min that have been idle too long; returns when
 * the next one would be due (0: none). */
static uint64_t retire_idle(struct pool *p, uint64_t now)
{
    uint64_t idle_ns = (uint64_t)p->o.idle_ms * 1000000u, next_due = 0;
    struct pool_thread *t = p->threads;
    while (t && p->size > p->min_now) {
        struct pool_thread *next = t->next;
        if (t->state == TASK_IDLE && !t->has_task) {
            uint64_t due = t->idle_since_ns + idle_ns;
            if (due <= now) {
                retire_task_thread(p, t, POOL_IDLE_TOO_LONG);
            } else if (next_due == 0 || due < next_due) {
                next_due = due;
            }
        }
        t = next;
    }
    return next_due;
}

static void watchdog_wait(struct pool *p, uint64_t until_ns)
{
    probe_watchdog_waiting(&p->probe);
    seam(p, POOL_SEAM_SLEEP, p->count);
    if (until_ns == 0) {
        pthread_cond_wait(&p->watchdog_signal, &p->lock);
    } else {
        struct timespec ts = timespec_at_ns(until_ns);
        pthread_cond_timedwait(&p->watchdog_signal, &p->lock, &ts);
    }
    probe_watchdog_woke(&p->probe);
}

static void *watchdog_main(void *arg)
{
    struct pool *p = arg;

    probe_watchdog_began(&p->probe);
    pthread_mutex_lock(&p->lock);
    for (;;) {
        if (p->ended)
            join_ended(p);
        uint64_t now = now_ns(), wake = 0;
        if (p->o.adaptive) {
            if (now >= p->next_sample_ns)
                sample_queue(p, now);
            wake = p->next_sample_ns;      /* sample even while all are busy */
        }
        if (p->count > 0 && (!p->shutting_down || p->drain)) {
            struct pool_thread *t = find_idle(p);
            if (t) {
                dispatch(p, t);
                continue;
            }
            if (p->size < p->o.max_threads && spawn_task_thread(p, POOL_NO_IDLE_THREAD))
                continue;
            /* At max: until a thread frees up. Below max, a thread could
             * not be created: until then, or the time to try again. */
            uint64_t retry = p->size < p->o.max_threads ? p->spawn_retry_ns : 0;
            watchdog_wait(p, retry && (wake == 0 || retry < wake) ? retry : wake);
            continue;
        }
        if (p->shutting_down)
            break;                     /* drained, or told to drop */
        uint64_t retire_due = retire_idle(p, now);
        if (retire_due && (wake == 0 || retire_due < wake))
            wake = retire_due;
        if (!p->ended && p->count == 0 && !p->shutting_down)
            watchdog_wait(p, wake);
    }

    /* Shutdown: every thread gets a NULL task once it is idle. */
    while (p->threads) {
        struct pool_thread *t = find_idle(p);
        if (t)
            retire_task_thread(p, t, POOL_SHUTTING_DOWN);
        else
            watchdog_wait(p, 0);
    }
    join_ended(p);
    pthread_mutex_unlock(&p->lock);
    probe_watchdog_ended(&p->probe);
    return NULL;
}

/* ---- the public side ------------------------------------------------------ */

void pool_opts_init(struct pool_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->thread_prefix = "task";
    o->queue_name = "task queue";
    o->min_threads = POOL_MIN_DEFAULT;
    o->max_threads = POOL_MAX_DEFAULT;
    o->queue_capacity = POOL_QUEUE_DEFAULT;
    o->idle_ms = POOL_IDLE_MS_DEFAULT;
    o->reject = POOL_REJECT_ABORT;
    o->adaptive_window_ms = POOL_ADAPTIVE_WINDOW_MS_DEFAULT;
    o->role = ROLE_POOL_WORKER;
}

struct pool *pool_create(const struct pool_opts *o)
{
    if (o->min_threads < 0 || o->max_threads < 1 || o->min_threads > o->max_threads ||
        o->queue_capacity < 1 || o->idle_ms < 0 || (unsigned)o->reject >= POOL_REJECT_COUNT ||
        (o->adaptive && o->adaptive_window_ms < POOL_ADAPTIVE_SAMPLES)) {
        errno = EINVAL;
        return NULL;
    }
    struct pool *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->o = *o;
    p->queue = calloc((size_t)o->queue_capacity, sizeof(*p->queue));
    if (!p->queue) {
        free(p);
        errno = ENOMEM;
        return NULL;
    }
    pthread_mutex_init(&p->lock, NULL);
    clock_cond_init(&p->watchdog_signal);   /* the watchdog's timed waits */
    pthread_cond_init(&p->queue_not_full, NULL);
    pthread_cond_init(&p->submitters_gone, NULL);
    p->min_now = o->min_threads;
    probe_pool_opened(&p->probe, o->board, o->queue_name, o->queue_capacity,
                      o->log_tasks);

    pthread_mutex_lock(&p->lock);
    for (int i = 0; i < o->min_threads; i++)
        spawn_task_thread(p, POOL_UP_TO_MIN);
    pthread_mutex_unlock(&p->lock);
    if (pthread_create(&p->watchdog, NULL, watchdog_main, p) != 0) {
        pool_shutdown(p, false);      /* without a watchdog: see below */
        errno = EAGAIN;
        return NULL;
    }
    p->watchdog_started = true;
    pthread_setname_np(p->watchdog, "watchdog");
    return p;
}

int pool_submit(struct pool *p, pool_task_cb fn, void *arg, uint64_t tag)
{
    struct pool_task dropped = { 0 };

    pthread_mutex_lock(&p->lock);
    while (!p->shutting_down && p->count == p->o.queue_capacity) {
        if (p->o.reject == POOL_REJECT_BLOCK) {
            p->submitters_blocked++;
            pthread_cond_wait(&p->queue_not_full, &p->lock);
            if (--p->submitters_blocked == 0 && p->shutting_down)
                pthread_cond_signal(&p->submitters_gone);
            continue;
        }
        if (p->o.reject == POOL_REJECT_ABORT) {
            probe_task_rejected(&p->probe, p->count);
            pthread_mutex_unlock(&p->lock);
            return -EAGAIN;
        }
        if (p->o.reject == POOL_REJECT_CALLER_RUNS) {
            probe_caller_ran(&p->probe, tag);
            pthread_mutex_unlock(&p->lock);
            fn(arg, NULL);
            return 0;
        }
        dropped = queue_pop(p);       /* discard-oldest */
        probe_oldest_discarded(&p->probe, dropped.tag, tag);
    }
    if (p->shutting_down) {
        pthread_mutex_unlock(&p->lock);
        return -ESHUTDOWN;
    }
    queue_push(p, (struct pool_task){ fn, arg, tag, now_ns() });
    probe_task_queued(&p->probe, tag, p->count, p->size,
                      p->idle == 0 && p->size >= p->o.max_threads);
    pthread_cond_signal(&p->watchdog_signal);
    pthread_mutex_unlock(&p->lock);
    if (dropped.fn && p->o.on_drop)
        p->o.on_drop(dropped.arg);
    return 0;
}

void pool_shutdown(struct pool *p, bool drain)
{
    pthread_mutex_lock(&p->lock);
    p->shutting_down = true;
    p->drain = drain;
    /* Blocked submitters leave with -ESHUTDOWN. Each must relock p->lock
     * on its way out, so wait until all have, or one would lock a pool
     * freed below. */
    pthread_cond_broadcast(&p->queue_not_full);
    while (p->submitters_blocked > 0)
        pthread_cond_wait(&p->submitters_gone, &p->lock);
    pthread_cond_signal(&p->watchdog_signal);
    /* Without drain, drop the queue one task at a time, on_drop outside
     * the lock (the pool server's answers "!err busy"). Nothing is
     * allocated, so nothing can fail and leave a task (and its fd)
     * without its on_drop. Nothing refills the queue meanwhile: submitters
     * get -ESHUTDOWN, and the watchdog takes no more tasks. */
    while (!drain && p->count > 0) {
        struct pool_task t = queue_pop(p);
        probe_dropped_at_shutdown(&p->probe);
        pthread_mutex_unlock(&p->lock);
        if (p->o.on_drop)
            p->o.on_drop(t.arg);
        pthread_mutex_lock(&p->lock);
    }
    bool have_watchdog = p->watchdog_started;
    pthread_mutex_unlock(&p->lock);

    if (have_watchdog) {
        pthread_join(p->watchdog, NULL);
    } else {
        /* pool_create failed to start the watchdog: end the threads here. */
        pthread_mutex_lock(&p->lock);
        while (p->threads)
            retire_task_thread(p, p->threads, POOL_SHUTTING_DOWN);
        join_ended(p);
        pthread_mutex_unlock(&p->lock);
    }
    pthread_cond_destroy(&p->submitters_gone);
    pthread_cond_destroy(&p->queue_not_full);
    pthread_cond_destroy(&p->watchdog_signal);
    pthread_mutex_destroy(&p->lock);
    free(p->queue);
    free(p);
}

void pool_stats(struct pool *p, struct pool_stats *out)
{
    pthread_mutex_lock(&p->lock);
    const struct pool_counters *n = &p->probe.n;
    *out = (struct pool_stats){ .n = *n };
    out->size = p->size;
    out->idle = p->idle;
    out->running = p->size - p->idle;
    out->min_now = p->min_now;
    out->queued = p->count;
    out->blocked_submitters = p->submitters_blocked;
    pthread_mutex_unlock(&p->lock);
}

const char *pool_thread_name(const struct pool_thread *t)
{
    return t->name;
}

struct board_thread_ref *pool_thread_board(struct pool_thread *t)
{
    return &t->on_board;
}

static const char *const reject_names[POOL_REJECT_COUNT] = {
    "abort", "caller-runs", "discard-oldest", "block",
};

const char *pool_reject_name(enum pool_reject r)
{
    return (unsigned)r < POOL_REJECT_COUNT ? reject_names[r] : "?";
}

int pool_reject_parse(const char *s, enum pool_reject *out)
{
    for (int i = 0; i < POOL_REJECT_COUNT; i++)
        if (!strcmp(s, reject_names[i])) {
            *out = (enum pool_reject)i;
            return 0;
        }
    return -EINVAL;
}
