/* conn_registry.c -- the blocking models' connections, counted for the
 * stop: who is serving, who may block in read() (and so must be woken by
 * a signal when a stop begins), and when the last one has left. See
 * conn.h. */
#include "conn.h"

#include <errno.h>
#include <signal.h>

#include "net/clock.h"

/* The wake signal's handler: nothing to do. What matters is that it is
 * installed without SA_RESTART, so the read() it interrupts fails with
 * EINTR instead of being restarted by the kernel. */
static void on_wake_signal(int sig)
{
    (void)sig;
}

static int wake_handler_rc = -1;

static void install_wake_handler(void)
{
    struct sigaction sa = { .sa_handler = on_wake_signal };
    sigemptyset(&sa.sa_mask);
    wake_handler_rc = sigaction(CONN_WAKE_SIGNAL, &sa, NULL) == 0 ? 0 : -errno;
}

int conn_registry_init(struct conn_registry *r)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, install_wake_handler);   /* once per process */
    if (wake_handler_rc < 0)
        return wake_handler_rc;
    int rc = clock_cond_init(&r->changed);    /* the stop's retries: monotonic */
    if (rc < 0)
        return rc;
    pthread_mutex_init(&r->lock, NULL);
    r->count = 0;
    r->serving = NULL;
    atomic_init(&r->stopping, false);
    return 0;
}

void conn_registry_destroy(struct conn_registry *r)
{
    pthread_cond_destroy(&r->changed);
    pthread_mutex_destroy(&r->lock);
}

void conn_registry_add(struct conn_registry *r)
{
    pthread_mutex_lock(&r->lock);
    r->count++;
    pthread_mutex_unlock(&r->lock);
}

uint64_t conn_registry_remove(struct conn_registry *r)
{
    pthread_mutex_lock(&r->lock);
    uint64_t left = --r->count;
    if (left == 0)
        pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);
    return left;
}

uint64_t conn_registry_count(struct conn_registry *r)
{
    pthread_mutex_lock(&r->lock);
    uint64_t n = r->count;
    pthread_mutex_unlock(&r->lock);
    return n;
}

/* c's thread begins serving it: on the list, where a stop finds it. The
 * wake signal is unblocked here, whatever mask the thread inherited. */
void conn_registry_enter(struct conn_registry *r, struct conn *c)
{
    sigset_t wake;
    sigemptyset(&wake);
    sigaddset(&wake, CONN_WAKE_SIGNAL);
    pthread_sigmask(SIG_UNBLOCK, &wake, NULL);
    c->thread = pthread_self();
    atomic_store(&c->phase, CONN_ANSWERING);
    pthread_mutex_lock(&r->lock);
    c->prev = NULL;
    c->next = r->serving;
    if (r->serving)
        r->serving->prev = c;
    r->serving = c;
    pthread_mutex_unlock(&r->lock);
}

/* c's thread is done with it: off the list before its fd is closed, and
 * before the thread ends, so a stop never signals a thread that is gone. */
void conn_registry_leave(struct conn_registry *r, struct conn *c)
{
    pthread_mutex_lock(&r->lock);
    if (c->prev)
        c->prev->next = c->next;
    else
        r->serving = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->prev = c->next = NULL;
    pthread_cond_broadcast(&r->changed);         /* a stop may wait for it */
    pthread_mutex_unlock(&r->lock);
}

/* c's thread saw the stop: a stop waiting for it may go on. */
void conn_registry_saw_stop(struct conn_registry *r, struct conn *c)
{
    pthread_mutex_lock(&r->lock);
    atomic_store(&c->phase, CONN_DRAINING);
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);
}

/* Count the threads that may be blocked in read() and have not seen the
 * stop, and signal them when signal_them says so. Under r->lock: each is
 * on the list, so alive (pthread_kill cannot fail with ESRCH). */
static int readers_not_stopped(struct conn_registry *r, bool signal_them)
{
    int readers = 0;
    for (struct conn *c = r->serving; c; c = c->next) {
        if (atomic_load(&c->phase) != CONN_READING)
            continue;
        if (signal_them)
            (void)pthread_kill(c->thread, CONN_WAKE_SIGNAL);
        readers++;
    }
    return readers;
}

void conn_registry_stop_input(struct conn_registry *r)
{
    pthread_mutex_lock(&r->lock);
    /* The flag first, then the phases (both sequentially consistent): a
     * thread stores READING before it loads the flag, so either it sees
     * the flag, or we see it READING and signal it. A connection that
     * begins serving later (a queued pool connection) sees the flag at
     * its first read. Each thread that saw the stop wakes us to count
     * again; the signals go again only once per CONN_WAKE_RETRY_MS, so a
     * thousand threads cost a thousand signals, not a million. */
    atomic_store(&r->stopping, true);
    uint64_t resend_ns = now_ns();
    for (;;) {
        bool resend = now_ns() >= resend_ns;
        if (readers_not_stopped(r, resend) == 0)
            break;
        if (resend)
            resend_ns = deadline_in_ms(CONN_WAKE_RETRY_MS);
        struct timespec at = timespec_at_ns(resend_ns);
        pthread_cond_timedwait(&r->changed, &r->lock, &at);
    }
    pthread_mutex_unlock(&r->lock);
}

void conn_registry_wait_empty(struct conn_registry *r)
{
    pthread_mutex_lock(&r->lock);
    while (r->count > 0)
        pthread_cond_wait(&r->changed, &r->lock);
    pthread_mutex_unlock(&r->lock);
}

