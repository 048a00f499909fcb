/* loopserver.c -- boss loops accept, worker loops serve. See loopserver.h.
 *
 *   boss loop                             worker loop (one per connection)
 *   listen fd ready -> accept()           register task: channel_open(fd)
 *                   -> pick a worker  ==> read, decode, handle, write
 *                      (round robin)      ... until the connection ends
 *                   -> loop_execute(worker, register task)
 *
 * A connection's channel is touched only by its worker's thread: no locks
 * on the data path. The only shared things are counters (atomic) and the
 * count of open connections that the stop waits on.
 */
#include "loopserver.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "reactive/channel.h"
#include "loop/checker.h"
#include "loop/group.h"
#include "loop/loop.h"
#include "loop/promise.h"
#include "threadpool/pool.h"
#include "net/clock.h"
#include "probe/probe.h"

#define ACCEPTS_PER_WAKEUP 64           /* then the loop's other fds get a turn */
#define QUIET_PERIOD_MS 100             /* shutdownGracefully's quiet period */

struct worker {
    struct loop_server *server;
    struct loop *loop;
    struct channel_host host;           /* host_arg is this worker */
    struct channel_backlog backlog;     /* its channels' output and pauses */
    struct channel *channels;           /* this loop's thread only */
};

struct boss {
    struct loop_server *server;
    struct loop *loop;
    struct net_acceptor acceptor;       /* nonblocking; this loop's thread */
    struct loop_watch watch;
};

struct loop_server {
    struct loop_server_opts o;
    struct server_opts opts;
    struct board *board;
    struct loop_group *workers_group;
    struct loop_group *bosses_group;    /* NULL: the workers accept */
    struct worker *workers;
    struct boss *bosses;
    int nworkers, nbosses;
    struct pool *business;              /* --offload, or NULL */
    struct loop_checker *checker;
    _Atomic uint64_t next_conn_id;
    _Atomic uint64_t handoffs_failed;   /* accepted, but never served */
    _Atomic bool stopping;
    _Atomic uint64_t stop_deadline_ns;  /* the stop's hard timeout, or 0 */

    pthread_mutex_t stop_lock;          /* for the stop's wait */
    pthread_cond_t all_closed;
    _Atomic uint64_t open_channels;     /* changed under stop_lock; atomic only
                                           so that loop_server_open_channels
                                           reads it without the lock */
};

/* ---- on a worker loop -------------------------------------------------------- */

/* A connection counted in open_channels is gone (closed, or never got to
 * its worker): one fewer for --max-conns and for the stop to wait on. */
static void release_open_slot(struct loop_server *s)
{
    pthread_mutex_lock(&s->stop_lock);
    if (--s->open_channels == 0)
        pthread_cond_broadcast(&s->all_closed);
    pthread_mutex_unlock(&s->stop_lock);
}

/* An accepted connection that no worker will serve (no memory, the
 * worker's queue full or ended): counted, logged, and closed by the
 * caller. */
static void count_lost_handoff(struct loop_server *s, uint64_t id, const char *worker,
                               int err)
{
    atomic_fetch_add(&s->handoffs_failed, 1);
    probe_handoff_failed(s->board, id, worker, err);
}

static void on_channel_closed(struct channel *ch, void *arg)
{
    struct worker *w = arg;
    loop_assert_in_loop(w->loop);
    if (ch->prev)
        ch->prev->next = ch->next;
    else
        w->channels = ch->next;
    if (ch->next)
        ch->next->prev = ch->prev;
    release_open_slot(w->server);
}

static bool is_stopping(void *arg)
{
    return atomic_load(&((struct worker *)arg)->server->stopping);
}

static uint64_t stop_deadline(void *arg)
{
    return atomic_load_explicit(&((struct worker *)arg)->server->stop_deadline_ns,
                                memory_order_relaxed);
}

/* A connection handed over by a boss. */
struct handoff {
    struct worker *worker;
    int fd;
    uint64_t id;
    bool refuse;                        /* over --max-conns: "!err busy" */
};

static void register_task(void *arg)
{
    struct handoff *h = arg;
    struct worker *w = h->worker;
    struct loop_server *s = w->server;
    loop_assert_in_loop(w->loop);      /* registered on the worker's own thread */
    struct channel *ch = channel_open(w->loop, h->fd, h->id, &w->host);
    bool refuse = h->refuse;
    uint64_t id = h->id;
    free(h);
    if (!ch) {                          /* it closed the fd */
        count_lost_handoff(s, id, loop_name(w->loop), ENOMEM);
        release_open_slot(s);
        return;
    }
    ch->next = w->channels;
    if (w->channels)
        w->channels->prev = ch;
    w->channels = ch;
    if (refuse)
        channel_refuse(ch);         /* replies, lingers, closes: never blocks */
}

/* Stop: end every channel's input; each answers, flushes and closes, in
 * its own next wakeups. */
static void shutdown_inputs_task(void *arg)
{
    struct worker *w = arg;
    for (struct channel *ch = w->channels; ch; ch = ch->next)
        channel_stop_reading(ch);
}

/* The hard timeout passed: close what is left. */
static void force_close_task(void *arg)
{
    struct worker *w = arg;
    while (w->channels)
        channel_close_now(w->channels);
}

/* ---- on a boss loop ------------------------------------------------------------ */

static void on_acceptable(void *arg, uint32_t events)
{
    struct boss *b = arg;
    struct loop_server *s = b->server;
    (void)events;
    for (int i = 0; i < ACCEPTS_PER_WAKEUP; i++) {
        int fd = net_accept(&b->acceptor);
        if (fd == -EAGAIN)
            return;
        if (fd < 0) {
            /* EMFILE: the spare fd already took that connection and told
             * it "!err busy"; the rest wait in the backlog until fds free. */
            probe_accept_failed(s->board, -fd, false);
            return;
        }
        uint64_t id = atomic_fetch_add(&s->next_conn_id, 1) + 1;
        int index = loop_group_next_index(s->workers_group);
        struct worker *w = &s->workers[index];
        if (s->bosses_group)
            probe_assigned(s->board, id, loop_name(w->loop), index + 1, s->nworkers);
        else
            probe_accepted(s->board, id);
        /* lab 06 region: the hand-off, from here to the end of the loop body */
        struct handoff *h = malloc(sizeof(*h));
        if (!h) {
            count_lost_handoff(s, id, loop_name(w->loop), ENOMEM);
            close(fd);
            continue;
        }
        pthread_mutex_lock(&s->stop_lock);
        bool refuse = s->opts.max_conns > 0 && s->open_channels >= (uint64_t)s->opts.max_conns;
        s->open_channels++;
        pthread_mutex_unlock(&s->stop_lock);
        *h = (struct handoff){ w, fd, id, refuse };
        if (refuse)
            probe_over_limit(s->board, id, s->opts.max_conns);
        /* Through the worker's task queue: from here on, only the worker's
         * thread touches this connection. (Same loop: it runs at once.) */
        int rc = loop_run_in_loop(w->loop, register_task, h);
        if (rc < 0) {
            count_lost_handoff(s, id, loop_name(w->loop), -rc);
            close(fd);
            free(h);
            release_open_slot(s);
        }
    }
}

static void *start_accepting(void *arg, int *err)
{
    struct boss *b = arg;
    *err = -loop_watch_add(b->loop, &b->watch);
    return NULL;
}

static void *stop_accepting(void *arg, int *err)
{
    struct boss *b = arg;
    *err = 0;
    loop_watch_remove(b->loop, &b->watch);
    /* Connections the kernel completed before the stop wait in the accept
     * queue; the close would reset them, and lose the lines their clients
     * sent. Handed over now, they are queued on their workers ahead of the
     * stop's next task, which ends their input after what they sent. At
     * most the queue's length: a client connecting all through the stop
     * cannot hold it. */
    for (int left = b->acceptor.queue_max; left > 0 && net_accept_pending(&b->acceptor);
         left -= ACCEPTS_PER_WAKEUP)
        on_acceptable(b, EPOLLIN);
    net_acceptor_close(&b->acceptor);
    return NULL;
}

/* ---- lifetime ----------------------------------------------------------------- */

static int open_bosses(struct loop_server *s)
{
    struct net_listen_opts lo = s->opts.listen;
    lo.reuseport = s->nbosses > 1;
    for (int i = 0; i < s->nbosses; i++) {
        struct boss *b = &s->bosses[i];
        b->server = s;
        b->loop = s->bosses_group ? s->bosses_group->loops[i] : s->workers[0].loop;
        int rc = net_acceptor_open(&b->acceptor, &lo, true);
        if (rc < 0)
            return rc;
        if (i == 0)
            lo.port = net_acceptor_port(&b->acceptor);   /* the others join it */
        b->watch = (struct loop_watch){ .fd = b->acceptor.listen_fd,
                                        .events = EPOLLIN | EPOLLEXCLUSIVE,
                                        .cb = on_acceptable, .arg = b };
    }
    return 0;
}

static void free_server(struct loop_server *s)
{
    if (s->checker)
        loop_checker_stop(s->checker);
    if (s->business)
        pool_shutdown(s->business, true);
    if (s->bosses_group)
        loop_group_stop_free(s->bosses_group);
    if (s->workers_group)
        loop_group_stop_free(s->workers_group);
    for (int i = 0; s->bosses && i < s->nbosses; i++)
        net_acceptor_close(&s->bosses[i].acceptor);
    probe_closed(s->board);
    free(s->bosses);
    free(s->workers);
    pthread_cond_destroy(&s->all_closed);
    pthread_mutex_destroy(&s->stop_lock);
    free(s);
}

/* Run fn on loop l and wait for it, at most timeout_ms (< 0: no limit).
 * Returns what fn failed with, -ETIMEDOUT, or -errno if it could not be
 * queued. Not on l's thread. */
static int run_on_loop(struct loop *l, loop_call_cb fn, void *arg, int timeout_ms)
{
    struct promise *p = loop_submit(l, fn, arg);
    if (!p)
        return -errno;
    int rc = promise_await(p, timeout_ms);
    if (rc == 0 && promise_state(p) == PROMISE_FAILURE)
        rc = -promise_error(p);
    promise_release(p);
    return rc;
}

/* Worker i's loop, and what its channels are told of the server. */
static void init_worker(struct loop_server *s, int i)
{
    struct worker *w = &s->workers[i];
    w->server = s;
    w->loop = s->workers_group->loops[i];
    w->host = (struct channel_host){
        .model = s->o.model, .max_line = s->opts.max_line,
        .linger_ms = s->opts.linger_ms, .board = s->board,
        .business = s->business, .backlog = &w->backlog,
        .high_water = CHANNEL_HIGH_WATER_BYTES,
        .low_water = CHANNEL_LOW_WATER_BYTES, .on_closed = on_channel_closed,
        .host_arg = w, .stopping = is_stopping, .stop_deadline_ns = stop_deadline,
        .idle_timeout_ms = s->opts.idle_timeout_ms,
        .line_timeout_ms = s->opts.line_timeout_ms,
        .stall_timeout_ms = s->opts.stall_timeout_ms,
    };
}

/* One checker watches every loop, bosses included. Without memory for
 * the list, the server runs unwatched. */
static void start_checker(struct loop_server *s)
{
    int nloops = s->nworkers + (s->bosses_group ? s->nbosses : 0);
    struct loop **all = malloc(sizeof(*all) * (size_t)nloops);
    if (!all)
        return;
    for (int i = 0; i < s->nworkers; i++)
        all[i] = s->workers[i].loop;
    for (int i = 0; s->bosses_group && i < s->nbosses; i++)
        all[s->nworkers + i] = s->bosses_group->loops[i];
    s->checker = loop_checker_start(all, nloops, s->opts.blocked_warn_ms,
                                    s->opts.blocked_trace_ms, s->board, false);
    free(all);
}

struct loop_server *loop_server_start(const struct loop_server_opts *o)
{
    struct loop_server *s = calloc(1, sizeof(*s));
    int rc = -ENOMEM;
    if (!s)
        return NULL;
    s->o = *o;
    s->opts = *o->opts;
    s->nworkers = o->workers;
    s->nbosses = o->bosses > 0 ? o->bosses : 1;
    pthread_mutex_init(&s->stop_lock, NULL);
    /* The stop's wait runs on the monotonic clock, as every other timeout:
     * a wall clock set back would stretch it. */
    clock_cond_init(&s->all_closed);
    net_ignore_sigpipe();
    s->board = server_open_board(o->model, &s->opts, o->own_options);

    struct loop_opts lo = { .io_ratio_pct = s->opts.io_ratio_pct, .board = s->board,
                            .role = ROLE_WORKER_LOOP, .max_tasks = o->worker_max_tasks };
    s->workers_group = loop_group_create(s->nworkers, o->worker_prefix, &lo);
    if (o->bosses > 0) {
        lo.role = ROLE_BOSS;
        lo.max_tasks = 0;
        s->bosses_group = loop_group_create(o->bosses, o->boss_prefix, &lo);
    }
    s->workers = calloc((size_t)s->nworkers, sizeof(*s->workers));
    s->bosses = calloc((size_t)s->nbosses, sizeof(*s->bosses));
    /* No boss has a socket yet: -1, so that a failed start closes none of
     * them (calloc's 0 is stdin). */
    for (int i = 0; s->bosses && i < s->nbosses; i++)
        s->bosses[i].acceptor.listen_fd = s->bosses[i].acceptor.spare_fd = -1;
    if (!s->workers_group || (o->bosses > 0 && !s->bosses_group) || !s->workers ||
        !s->bosses)
        goto out_free;
    if (s->opts.offload_threads > 0) {
        struct pool_opts po;
        pool_opts_init(&po);
        po.thread_prefix = "biz";
        po.queue_name = "business";
        po.min_threads = po.max_threads = s->opts.offload_threads;
        po.board = s->board;
        po.role = ROLE_BUSINESS;
        s->business = pool_create(&po);
        if (!s->business) {
            rc = -errno;
            goto out_free;
        }
    }
    for (int i = 0; i < s->nworkers; i++)
        init_worker(s, i);
    rc = open_bosses(s);
    if (rc < 0)
        goto out_free;
    if ((rc = loop_group_start(s->workers_group)) < 0 ||
        (s->bosses_group && (rc = loop_group_start(s->bosses_group)) < 0))
        goto out_free;
    for (int i = 0; i < s->nbosses; i++)
        if ((rc = run_on_loop(s->bosses[i].loop, start_accepting, &s->bosses[i], -1)) < 0)
            goto out_free;

    start_checker(s);
    return s;

out_free:
    free_server(s);
    errno = rc < 0 ? -rc : ENOMEM;
    return NULL;
}

uint16_t loop_server_port(const struct loop_server *s)
{
    return net_acceptor_port(&s->bosses[0].acceptor);
}

void loop_server_checker_stats(struct loop_server *s, struct loop_checker_stats *out)
{
    if (s->checker)
        loop_checker_stats(s->checker, out);
    else
        *out = (struct loop_checker_stats){0};
}

uint64_t loop_server_worker_channels(struct loop_server *s, int i)
{
    return i >= 0 && i < s->nworkers ? loop_channels(s->workers[i].loop) : 0;
}

uint64_t loop_server_handoffs_failed(struct loop_server *s)
{
    return atomic_load(&s->handoffs_failed);
}

uint64_t loop_server_open_channels(struct loop_server *s)
{
    return atomic_load(&s->open_channels);
}

struct loop *loop_server__worker_loop(struct loop_server *s, int i)
{
    return i >= 0 && i < s->nworkers ? s->workers[i].loop : NULL;
}

/* Wait until every connection closed, or the deadline (CLOCK_MONOTONIC,
 * ns); true if they did. */
static bool wait_all_closed(struct loop_server *s, uint64_t deadline_ns)
{
    struct timespec until = timespec_at_ns(deadline_ns);
    pthread_mutex_lock(&s->stop_lock);
    int rc = 0;
    while (s->open_channels > 0 && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&s->all_closed, &s->stop_lock, &until);
    bool closed = s->open_channels == 0;
    pthread_mutex_unlock(&s->stop_lock);
    return closed;
}

/* Queue a stop task on a worker. A full queue is waited out (this is the
 * stopping thread, not a loop): a dropped stop task would leave the stop
 * waiting for its whole timeout. */
static void execute_for_stop(struct loop *l, loop_task_cb fn, void *arg)
{
    struct timespec tick = { 0, 1000000 };
    while (loop_execute(l, fn, arg) == -EAGAIN)
        nanosleep(&tick, NULL);
}

static uint64_t tasks_run_everywhere(struct loop_server *s)
{
    uint64_t sum = 0;
    struct loop_stats st;
    for (int i = 0; i < s->nworkers; i++) {
        loop_stats(s->workers[i].loop, &st);
        sum += st.tasks_run;
    }
    return sum;
}

/* Milliseconds from now until deadline_ns, at least 0. */
static int ms_until(uint64_t deadline_ns)
{
    uint64_t now = now_ns();
    return now >= deadline_ns ? 0 : (int)((deadline_ns - now) / 1000000u);
}

void loop_server_stop(struct loop_server *s)
{
    /* One deadline for the whole stop, from now: each step below may wait
     * for a loop to finish the line it is in, and a timeout restarted at
     * each would add those waits up. */
    uint64_t deadline_ns = now_ns() + (uint64_t)s->opts.stop_timeout_ms * 1000000u;
    atomic_store(&s->stop_deadline_ns, deadline_ns);  /* channels close past it */
    atomic_store(&s->stopping, true);
    probe_stopping(s->board);

    /* 1. Stop accepting, and wait until every boss has: connections it
     *    handed over are then already queued ahead of step 2's task. (A
     *    boss stuck past the deadline -- the single reactor in a long
     *    line -- still closes its listener first: its tasks run in order.) */
    for (int i = 0; i < s->nbosses; i++)
        run_on_loop(s->bosses[i].loop, stop_accepting, &s->bosses[i],
                    ms_until(deadline_ns));
    /* 2. End every connection's input: in-flight lines finish. */
    for (int i = 0; i < s->nworkers; i++)
        execute_for_stop(s->workers[i].loop, shutdown_inputs_task, &s->workers[i]);
    /* 3. The hard timeout: a client that never reads cannot hold us. A
     *    loop in a long line closes its channels when that line ends:
     *    each channel answers one budget per wakeup, so the force-close
     *    task's turn comes next. */
    if (!wait_all_closed(s, deadline_ns)) {
        /* Said on stderr: the board goes with the process, and whoever
         * stopped us should know why it took the whole timeout. */
        pthread_mutex_lock(&s->stop_lock);
        uint64_t open = s->open_channels;
        pthread_mutex_unlock(&s->stop_lock);
        fprintf(stderr, "threadlab: stop: %llu connection(s) still open after the %d ms "
                "stop timeout: closing them now\n", (unsigned long long)open,
                s->opts.stop_timeout_ms);
        for (int i = 0; i < s->nworkers; i++)
            execute_for_stop(s->workers[i].loop, force_close_task, &s->workers[i]);
        wait_all_closed(s, now_ns() + 60000 * 1000000ull);
    }
    /* 4. Offloaded lines still running come back to the (live) loops. */
    if (s->business) {
        pool_shutdown(s->business, true);
        s->business = NULL;
    }
    /* 5. The quiet period: no task ran on any loop for QUIET_PERIOD_MS. */
    uint64_t seen = tasks_run_everywhere(s), quiet_since = now_ns();
    uint64_t give_up = quiet_since + (uint64_t)s->opts.stop_timeout_ms * 1000000u;
    while (now_ns() - quiet_since < QUIET_PERIOD_MS * 1000000ull &&
           now_ns() < give_up) {
        struct timespec tick = { 0, 10000000 };
        nanosleep(&tick, NULL);
        uint64_t now_seen = tasks_run_everywhere(s);
        if (now_seen != seen) {
            seen = now_seen;
            quiet_since = now_ns();
        }
    }
    if (now_ns() - quiet_since < QUIET_PERIOD_MS * 1000000ull)
        fprintf(stderr, "threadlab: stop: tasks still ran on the loops %d ms after every "
                "connection closed: stopping them anyway\n", s->opts.stop_timeout_ms);
    /* 6. Close, join, free. */
    free_server(s);
}
