/* promise.c -- complete once, notify on the loop. See promise.h. */
#include "promise.h"
#include "net/clock.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

struct listener {
    promise_listener_cb cb;
    void *arg;
    struct listener *next;
};

struct promise {
    struct loop *loop;
    pthread_mutex_t lock;         /* guards state, result, error, listeners */
    pthread_cond_t completed;
    enum promise_state state;
    void *result;
    int error;
    struct listener *listeners, **tail;  /* in the order added */
    _Atomic int refs;
};

/* A listener on its way to the loop. */
struct notification {
    struct promise *p;
    struct listener *list;
};

struct promise *promise_create(struct loop *l)
{
    struct promise *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->loop = l;
    pthread_mutex_init(&p->lock, NULL);
    clock_cond_init(&p->completed);
    p->tail = &p->listeners;
    atomic_init(&p->refs, 1);
    return p;
}

void promise_release(struct promise *p)
{
    if (atomic_fetch_sub(&p->refs, 1) != 1)
        return;
    while (p->listeners) {           /* never notified: the loop ended */
        struct listener *next = p->listeners->next;
        free(p->listeners);
        p->listeners = next;
    }
    pthread_cond_destroy(&p->completed);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

static void notify_task(void *arg)
{
    struct notification *n = arg;
    while (n->list) {
        struct listener *l = n->list;
        n->list = l->next;
        l->cb(n->p, l->arg);
        free(l);
    }
    promise_release(n->p);
    free(n);
}

/* Hand a list of listeners to the loop. A full task queue (or no memory
 * for it to grow) is waited out, off the loop: a listener is never dropped
 * while its loop lives (the business thread completing an offloaded line
 * can wait; the channel waits for that reply). Returns -ESHUTDOWN if the
 * loop ended: then the listeners are freed unrun. */
static int notify(struct promise *p, struct listener *list)
{
    if (!list)
        return 0;
    struct notification *n = malloc(sizeof(*n));
    if (!n)
        return -ENOMEM;
    atomic_fetch_add(&p->refs, 1);
    n->p = p;
    n->list = list;
    int rc;
    while ((rc = loop_run_in_loop(p->loop, notify_task, n)) == -EAGAIN || rc == -ENOMEM) {
        struct timespec nap = { 0, 1000000 };
        nanosleep(&nap, NULL);
    }
    if (rc < 0) {
        while (n->list) {
            struct listener *next = n->list->next;
            free(n->list);
            n->list = next;
        }
        free(n);
        promise_release(p);
    }
    return rc;
}

static bool complete(struct promise *p, enum promise_state state, void *result,
                     int err)
{
    pthread_mutex_lock(&p->lock);
    if (p->state != PROMISE_PENDING) {
        pthread_mutex_unlock(&p->lock);
        return false;
    }
    p->state = state;
    p->result = result;
    p->error = err;
    struct listener *list = p->listeners;   /* taken out under the lock */
    p->listeners = NULL;
    p->tail = &p->listeners;
    pthread_cond_broadcast(&p->completed);
    pthread_mutex_unlock(&p->lock);
    notify(p, list);
    return true;
}

bool promise_succeed(struct promise *p, void *result)
{
    return complete(p, PROMISE_SUCCESS, result, 0);
}

bool promise_fail(struct promise *p, int err)
{
    return complete(p, PROMISE_FAILURE, NULL, err);
}

bool promise_cancel(struct promise *p)
{
    return complete(p, PROMISE_CANCELLED, NULL, ECANCELED);
}

int promise_add_listener(struct promise *p, promise_listener_cb cb, void *arg)
{
    struct listener *l = malloc(sizeof(*l));
    if (!l)
        return -ENOMEM;
    l->cb = cb;
    l->arg = arg;
    l->next = NULL;
    pthread_mutex_lock(&p->lock);
    if (p->state == PROMISE_PENDING) {
        *p->tail = l;
        p->tail = &l->next;
        pthread_mutex_unlock(&p->lock);
        return 0;
    }
    pthread_mutex_unlock(&p->lock);
    return notify(p, l);            /* already complete: straight to the loop */
}

int promise_await(struct promise *p, int timeout_ms)
{
    uint64_t wait_ms = timeout_ms >= 0 ? (uint64_t)timeout_ms : 0;   /* < 0: untimed */
    struct timespec until = timespec_at_ns(deadline_in_ms(wait_ms));
    int rc = 0;
    pthread_mutex_lock(&p->lock);
    if (p->state == PROMISE_PENDING && loop_in_loop(p->loop))
        rc = -EDEADLK;               /* it would wait for itself forever */
    while (rc == 0 && p->state == PROMISE_PENDING) {
        if (timeout_ms < 0)
            pthread_cond_wait(&p->completed, &p->lock);
        else if (pthread_cond_timedwait(&p->completed, &p->lock, &until) == ETIMEDOUT)
            rc = p->state == PROMISE_PENDING ? -ETIMEDOUT : 0;
    }
    pthread_mutex_unlock(&p->lock);
    return rc;
}

enum promise_state promise_state(struct promise *p)
{
    pthread_mutex_lock(&p->lock);
    enum promise_state s = p->state;
    pthread_mutex_unlock(&p->lock);
    return s;
}

void *promise_result(struct promise *p)
{
    pthread_mutex_lock(&p->lock);
    void *r = p->result;
    pthread_mutex_unlock(&p->lock);
    return r;
}

int promise_error(struct promise *p)
{
    pthread_mutex_lock(&p->lock);
    int e = p->error;
    pthread_mutex_unlock(&p->lock);
    return e;
}

/* ---- loop_submit ------------------------------------------------------------ */

struct submitted {
    struct promise *p;
    loop_call_cb fn;
    void *arg;
};

static void submitted_task(void *arg)
{
    struct submitted *s = arg;
    int err = 0;
    void *result = s->fn(s->arg, &err);
    if (err)
        promise_fail(s->p, err);
    else
        promise_succeed(s->p, result);
    promise_release(s->p);
    free(s);
}

struct promise *loop_submit(struct loop *l, loop_call_cb fn, void *arg)
{
    struct promise *p = promise_create(l);
    struct submitted *s = malloc(sizeof(*s));
    if (!p || !s) {
        free(s);
        if (p)
            promise_release(p);
        errno = ENOMEM;
        return NULL;
    }
    atomic_fetch_add(&p->refs, 1);   /* the task's */
    *s = (struct submitted){ p, fn, arg };
    int rc = loop_execute(l, submitted_task, s);
    if (rc < 0) {
        free(s);
        promise_release(p);
        promise_release(p);
        errno = -rc;                  /* ESHUTDOWN, or EAGAIN: its queue is full */
        return NULL;
    }
    return p;
}
