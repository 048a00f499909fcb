/* reactor.c -- model 3: one event loop accepts, reads, decodes, handles,
 * encodes and writes (Netty's read -> decode -> process -> encode -> send,
 * all on one thread).
 *
 *                       the loop thread ("reactor")
 *   +------------------------------------------------------------------+
 *   | epoll_wait -> listen fd ready: accept, open a channel            |
 *   |            -> conn fd ready: read, decode, handle, write         |
 *   |            -> timers and tasks (ioRatio)                         |
 *   +------------------------------------------------------------------+
 *        owns the listen fd and every connection fd; no locks anywhere
 *
 *   --offload N:  !cpu / !sleep lines  --> business pool (N threads)
 *                 their replies        <-- loop_execute, in order per channel
 *
 * One thread serves thousands of connections because none of them ever
 * blocks it -- until a handler does: a `!sleep 300` here stops every
 * connection for 300 ms. That is the lesson, and the blocked checker says
 * so on the board and on stderr. --offload moves the slow work away.
 */
#include "reactor.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "loop/channel.h"
#include "loop/checker.h"
#include "loop/loop.h"
#include "pool/pool.h"

#define REACTOR_ACCEPTS_PER_WAKEUP 64   /* then let the connections have a turn */

struct reactor_server {
    struct server_opts opts;
    struct board *board;
    struct loop *loop;
    struct net_acceptor acceptor;   /* nonblocking listen socket */
    struct loop_watch accept_watch;
    struct channel_host host;
    struct pool *business;          /* --offload, or NULL */
    struct loop_checker *checker;
    struct channel *channels;       /* loop thread only */
    uint64_t next_conn_id;          /* loop thread only */
    _Atomic bool stopping;

    pthread_mutex_t stop_lock;      /* for reactor_stop's wait */
    pthread_cond_t all_closed;
    uint64_t open_channels;         /* guarded by stop_lock */
};

/* ---- on the loop thread -------------------------------------------------- */

static void on_channel_closed(struct channel *ch, void *arg)
{
    struct reactor_server *s = arg;
    if (ch->prev)
        ch->prev->next = ch->next;
    else
        s->channels = ch->next;
    if (ch->next)
        ch->next->prev = ch->prev;
    pthread_mutex_lock(&s->stop_lock);
    if (--s->open_channels == 0)
        pthread_cond_broadcast(&s->all_closed);
    pthread_mutex_unlock(&s->stop_lock);
}

static bool is_stopping(void *arg)
{
    return atomic_load(&((struct reactor_server *)arg)->stopping);
}

static void on_acceptable(void *arg, uint32_t events)
{
    struct reactor_server *s = arg;
    (void)events;
    for (int i = 0; i < REACTOR_ACCEPTS_PER_WAKEUP; i++) {
        int fd = net_accept(&s->acceptor);
        if (fd == -EAGAIN)
            return;
        if (fd < 0) {
            /* EMFILE: the spare fd already took that connection and told
             * it "!err busy"; the rest wait in the backlog until fds free. */
            board_add(s->board, CTR_ERR_ACCEPT, 1);
            board_event(s->board, EV_ERROR, "accept failed: %s", strerror(-fd));
            return;
        }
        uint64_t id = ++s->next_conn_id;
        board_add(s->board, CTR_ACCEPTED, 1);
        board_event(s->board, EV_ACCEPT, "conn %llu", (unsigned long long)id);
        struct channel *ch = channel_open(s->loop, fd, id, &s->host);
        if (!ch)
            continue;
        pthread_mutex_lock(&s->stop_lock);
        s->open_channels++;
        pthread_mutex_unlock(&s->stop_lock);
        ch->next = s->channels;
        if (s->channels)
            s->channels->prev = ch;
        s->channels = ch;
    }
}

/* Stop accepting; end every channel's input. */
static void stop_task(void *arg)
{
    struct reactor_server *s = arg;
    loop_watch_remove(s->loop, &s->accept_watch);
    net_acceptor_close(&s->acceptor);
    for (struct channel *ch = s->channels, *next; ch; ch = next) {
        next = ch->next;
        channel_shutdown_input(ch);     /* may close and free ch */
    }
}

/* The stop timeout passed: close what is left. */
static void force_close_task(void *arg)
{
    struct reactor_server *s = arg;
    while (s->channels)
        channel_close_now(s->channels);
}

static void start_accepting_task(void *arg)
{
    struct reactor_server *s = arg;
    loop_watch_add(s->loop, &s->accept_watch);
}

/* ---- lifetime ----------------------------------------------------------- */

struct reactor_server *reactor_start(const struct server_opts *opts)
{
    struct reactor_server *s = calloc(1, sizeof(*s));
    int rc;

    if (!s)
        return NULL;
    s->opts = *opts;
    pthread_mutex_init(&s->stop_lock, NULL);
    pthread_cond_init(&s->all_closed, NULL);
    net_ignore_sigpipe();

    rc = net_acceptor_open(&s->acceptor, &opts->listen, true);
    if (rc < 0)
        goto out_free;
    s->board = server_board_create("reactor", opts);
    struct loop_opts lo = { "reactor", opts->io_ratio_pct, s->board, ROLE_WORKER_LOOP };
    s->loop = loop_create(&lo);
    if (!s->loop) {
        rc = -errno;
        goto out_close;
    }
    if (opts->offload_threads > 0) {
        struct pool_opts po;
        pool_opts_init(&po);
        po.thread_prefix = "biz";
        po.queue_name = "business";
        po.min_threads = po.max_threads = opts->offload_threads;
        po.board = s->board;
        po.role = ROLE_BUSINESS;
        s->business = pool_create(&po);
        if (!s->business) {
            rc = -errno;
            goto out_loop;
        }
    }
    s->host = (struct channel_host){
        .model = "reactor", .max_line = opts->max_line, .linger_ms = opts->linger_ms,
        .board = s->board, .business = s->business,
        .high_water = CHANNEL_HIGH_WATER_BYTES, .low_water = CHANNEL_LOW_WATER_BYTES,
        .on_closed = on_channel_closed, .host_arg = s, .stopping = is_stopping,
    };
    s->accept_watch = (struct loop_watch){ s->acceptor.listen_fd, EPOLLIN,
                                           on_acceptable, s };
    rc = loop_start(s->loop);
    if (rc < 0)
        goto out_pool;
    loop_execute(s->loop, start_accepting_task, s);
    s->checker = loop_checker_start(&s->loop, 1, opts->blocked_warn_ms, s->board, false);
    return s;

out_pool:
    if (s->business)
        pool_shutdown(s->business, false);
out_loop:
    loop_join_free(s->loop);
out_close:
    board_close(s->board);
    net_acceptor_close(&s->acceptor);
out_free:
    pthread_cond_destroy(&s->all_closed);
    pthread_mutex_destroy(&s->stop_lock);
    free(s);
    errno = -rc;
    return NULL;
}

uint16_t reactor_port(const struct reactor_server *s)
{
    return net_acceptor_port(&s->acceptor);
}

uint64_t reactor_blocked_warnings(struct reactor_server *s)
{
    return s->checker ? loop_checker_warnings(s->checker) : 0;
}

/* Wait until every channel closed, or the deadline; true if they did. */
static bool wait_all_closed(struct reactor_server *s, int timeout_ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&s->stop_lock);
    int rc = 0;
    while (s->open_channels > 0 && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&s->all_closed, &s->stop_lock, &until);
    bool closed = s->open_channels == 0;
    pthread_mutex_unlock(&s->stop_lock);
    return closed;
}

void reactor_stop(struct reactor_server *s)
{
    /* 1. Stop accepting, end every channel's input: each answers what it
     *    received, flushes and closes. */
    atomic_store(&s->stopping, true);
    board_mark_closing(s->board);
    loop_execute(s->loop, stop_task, s);
    if (!wait_all_closed(s, s->opts.stop_timeout_ms)) {
        /* 2. A client that never reads must not hold the stop forever. */
        loop_execute(s->loop, force_close_task, s);
        wait_all_closed(s, 60000);
    }
    /* 3. Offloaded lines still running come back to the (live) loop. */
    if (s->business)
        pool_shutdown(s->business, true);
    if (s->checker)
        loop_checker_stop(s->checker);
    loop_stop(s->loop);
    loop_join_free(s->loop);
    board_close(s->board);
    pthread_cond_destroy(&s->all_closed);
    pthread_mutex_destroy(&s->stop_lock);
    free(s);
}
