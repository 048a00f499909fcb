/* bio.c -- model 1: thread per connection, blocking I/O.
 *
 * The oldest server design, and the simplest to read: one acceptor thread
 * waits for connections and gives each one a thread of its own, which
 * blocks in read(), handles the line, blocks in write(), and loops until the
 * client leaves.
 *
 *     acceptor thread                  connection threads (one per client)
 *     +--------------------+           +-----------------------------------+
 *     | poll(listen, wake) |  spawn    | read() -> decode -> handle -> write() |
 *     | accept()           |---------->|   blocks freely: !sleep stalls    |
 *     | reap exited threads|           |   only its own client             |
 *     +--------------------+           +-----------------------------------+
 *       owns the listen fd               each owns its connection fd
 *
 * A line travels: kernel -> read() into the session's buffer -> the session
 * decides the reply -> the same thread does the work (!cpu, !sleep) ->
 * write(). Nothing is shared between connections but the list of live
 * connections (for stop) and the counters.
 *
 * The cost is a thread per connection: a stack each (--stack-kb), a
 * scheduler entry each, and a context switch for every line. It breaks when
 * connections outnumber the threads the machine can hold; --max-threads
 * bounds the damage by refusing the rest with "!err busy".
 */
#include "bio.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "echo/session.h"
#include "probe/board.h"

#define BIO_REAP_INTERVAL_MS 1000   /* the acceptor joins exited threads */
#define BIO_REJECT_LINGER_MS 100    /* the acceptor waits this long at most */

struct bio_conn {
    struct bio_server *server;
    int fd;                    /* owned by the connection thread */
    uint64_t id;               /* connection number, 1, 2, ... */
    pthread_t thread;
    char name[16];             /* thread name: "conn-<id>" */
    struct board_thread_ref on_board; /* this thread's slot on the board */
    struct bio_conn *prev;     /* in server->live, or next in ->exited */
    struct bio_conn *next;
};

struct bio_server {
    struct server_opts opts;
    struct net_acceptor acceptor;
    int wake_fd;               /* eventfd: tells the acceptor to stop */
    pthread_t acceptor_thread;
    atomic_bool stopping;

    pthread_mutex_t lock;      /* guards live, exited, live_count */
    pthread_cond_t all_exited; /* signalled when live_count drops to 0 */
    struct bio_conn *live;     /* connections whose thread runs */
    struct bio_conn *exited;   /* threads that ended and wait to be joined */
    uint64_t live_count;
    uint64_t next_conn_id;     /* acceptor thread only */

    struct board *board;       /* live state; NULL with --no-board */
    struct board_thread_ref acceptor_on_board;
};

/* ---- the connection thread (the heart) ---------------------------------- */

static void conn_leave(struct bio_conn *c)
{
    struct bio_server *s = c->server;

    /* Unlink before the fd closes, so that bio_stop never shuts down a
     * descriptor number that has already been reused. */
    pthread_mutex_lock(&s->lock);
    if (c->prev)
        c->prev->next = c->next;
    else
        s->live = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->next = s->exited;
    s->exited = c;
    if (--s->live_count == 0)
        pthread_cond_broadcast(&s->all_exited);
    pthread_mutex_unlock(&s->lock);
}

/* Why a connection ended, for the event log. */
static const char *end_reason(ssize_t last_read, const struct echo_reply *r,
                              bool stopping)
{
    if (r && r->error == ECHO_ERROR_LINE_TOO_LONG)
        return "line too long";
    if (r && r->close_after)
        return "!quit";
    if (last_read == 0)
        return stopping ? "server stopping" : "client closed";
    if (last_read == -ECONNRESET)
        return "reset by client";
    return "I/O error";
}

static void *conn_main(void *arg)
{
    struct bio_conn *c = arg;
    struct bio_server *s = c->server;
    struct board *board = s->board;
    struct board_thread_ref *me = &c->on_board;
    struct echo_session session;
    struct echo_reply reply, *closing_reply = NULL;
    ssize_t n = 0;
    uint64_t lines = 0;

    board_thread_begin(board, me, ROLE_CONN, c->name, c->id);
    if (echo_session_init(&session, "bio", c->id, s->opts.max_line) < 0)
        goto out_leave;
    for (;;) {
        size_t room;
        char *buf = echo_session_space(&session, &room);
        if (!buf)
            break;
        /* Blocks until the client sends, leaves, or bio_stop shuts down
         * our read side (then the kernel hands over what it already holds,
         * and 0). */
        board_thread_state(board, me, STATE_BLOCKED_IO);
        n = net_read(c->fd, buf, room);
        if (n <= 0)
            break;
        uint64_t now_ns = board ? board_now_ns() : 0;
        board_thread_state_at(board, me, STATE_RUNNING, now_ns);
        echo_session_commit(&session, (size_t)n);

        /* Answer every line this read completed. The board's counters are
         * added once per read, not per line: with pipelined lines that
         * keeps shared cache lines out of the hot path. */
        uint64_t batch_lines = 0, batch_bytes = 0;
        while (echo_session_next(&session, c->name, &reply)) {
            if (reply.work == ECHO_WORK_SLEEP)
                board_thread_state(board, me, STATE_BLOCKED_SLEEP);
            echo_do_work(&reply);          /* blocking is fine: our own thread */
            board_thread_state(board, me, STATE_RUNNING);
            /* A write to a socket with room returns at once; the thread is
             * shown blocked in I/O only while it waits in read(). */
            if (net_write_all(c->fd, reply.data, reply.len) < 0)
                goto out_session;
            if (board) {
                uint64_t done_ns = board_now_ns();
                board_record_latency(board, done_ns - now_ns);
                now_ns = done_ns;          /* the next line starts now */
                if (reply.error == ECHO_ERROR_BAD_ARGUMENT)
                    board_add(board, CTR_ERR_BAD_ARGUMENT, 1);
                if (reply.error == ECHO_ERROR_LINE_TOO_LONG)
                    board_add(board, CTR_ERR_LINE_TOO_LONG, 1);
            }
            batch_lines++;
            batch_bytes += reply.len;
            if (reply.close_after) {
                closing_reply = &reply;
                break;
            }
        }
        lines += batch_lines;
        if (board) {
            board_add(board, CTR_BYTES_IN, (uint64_t)n);
            board_add(board, CTR_BYTES_OUT, batch_bytes);
            board_add(board, CTR_LINES, batch_lines);
            board_thread_lines(board, me, batch_lines);
        }
        if (closing_reply)
            break;
    }
out_session:
    echo_session_free(&session);
out_leave:
    if (n == -ECONNRESET)
        board_add(board, CTR_ERR_RESET, 1);
    board_event(board, EV_CLOSE, "conn %llu: %s, after %llu lines",
                (unsigned long long)c->id,
                end_reason(n, closing_reply, atomic_load(&s->stopping)),
                (unsigned long long)lines);
    conn_leave(c);
    if (closing_reply)
        net_lingering_close(c->fd, s->opts.linger_ms);
    else
        close(c->fd);
    board_sub(board, CTR_ACTIVE, 1);
    board_add(board, CTR_CLOSED, 1);
    board_thread_end(board, me);
    return NULL;
}

/* ---- the acceptor thread ------------------------------------------------ */

/* Join threads that have ended. Acceptor thread, or bio_stop after it. */
static void reap_exited(struct bio_server *s)
{
    pthread_mutex_lock(&s->lock);
    struct bio_conn *c = s->exited;
    s->exited = NULL;
    pthread_mutex_unlock(&s->lock);

    while (c) {
        struct bio_conn *next = c->next;
        pthread_join(c->thread, NULL);
        board_add(s->board, CTR_THREADS_EXITED, 1);
        board_event(s->board, EV_EXIT, "%s: thread ended, joined by the acceptor",
                    c->name);
        free(c);
        c = next;
    }
}

static void reject_busy(struct bio_server *s, int fd, const char *why)
{
    board_add(s->board, CTR_REJECTED, 1);
    board_event(s->board, EV_REJECT, "conn %llu: %s",
                (unsigned long long)s->next_conn_id, why);
    /* Said on a fresh socket: the send buffer is empty, so this never
     * blocks. The short linger keeps the reply from being lost to a reset
     * without letting one silent client hold up the acceptor for long. */
    (void)net_write_all(fd, ECHO_ERR_BUSY, sizeof(ECHO_ERR_BUSY) - 1);
    net_lingering_close(fd, BIO_REJECT_LINGER_MS);
}

static void spawn_conn(struct bio_server *s, int fd, uint64_t id)
{
    struct bio_conn *c = calloc(1, sizeof(*c));
    if (!c) {
        close(fd);
        return;
    }
    c->server = s;
    c->fd = fd;
    c->id = id;
    snprintf(c->name, sizeof(c->name), "conn-%llu", (unsigned long long)c->id);

    pthread_attr_t attr;
    pthread_attr_init(&attr);
    if (s->opts.stack_kb > 0)
        pthread_attr_setstacksize(&attr, (size_t)s->opts.stack_kb * 1024);

    /* Link first: the thread may end (and unlink itself) before
     * pthread_create even returns. */
    pthread_mutex_lock(&s->lock);
    c->next = s->live;
    if (s->live)
        s->live->prev = c;
    s->live = c;
    s->live_count++;
    int rc = pthread_create(&c->thread, &attr, conn_main, c);
    if (rc != 0) {
        s->live = c->next;
        if (s->live)
            s->live->prev = NULL;
        s->live_count--;
    }
    uint64_t live_now = s->live_count;
    pthread_mutex_unlock(&s->lock);
    pthread_attr_destroy(&attr);

    if (rc != 0) {           /* EAGAIN: the machine is out of threads */
        free(c);
        reject_busy(s, fd, "pthread_create failed, no thread to spare");
        return;
    }
    pthread_setname_np(c->thread, c->name);
    board_add(s->board, CTR_ACTIVE, 1);
    board_add(s->board, CTR_THREADS_SPAWNED, 1);
    board_event(s->board, EV_SPAWN, "%s: a thread for conn %llu, %llu live",
                c->name, (unsigned long long)c->id, (unsigned long long)live_now);
}

static bool at_thread_limit(struct bio_server *s)
{
    if (s->opts.max_threads <= 0)
        return false;
    pthread_mutex_lock(&s->lock);
    bool full = s->live_count >= (uint64_t)s->opts.max_threads;
    pthread_mutex_unlock(&s->lock);
    return full;
}

static void accept_failed(struct bio_server *s, int neg_errno)
{
    board_add(s->board, CTR_ERR_ACCEPT, 1);
    if (neg_errno == -EMFILE || neg_errno == -ENFILE)
        board_event(s->board, EV_ERROR, "%s: the spare fd took the connection "
                    "and closed it with !err busy", strerror(-neg_errno));
    else
        board_event(s->board, EV_ERROR, "accept failed: %s", strerror(-neg_errno));
}

static void *acceptor_main(void *arg)
{
    struct bio_server *s = arg;
    struct pollfd fds[2] = {
        { .fd = s->acceptor.listen_fd, .events = POLLIN },
        { .fd = s->wake_fd, .events = POLLIN },
    };

    /* We poll before accept only so that bio_stop can wake us; a pure BIO
     * server would block in accept() itself. */
    board_thread_begin(s->board, &s->acceptor_on_board, ROLE_ACCEPTOR,
                       "acceptor", 0);
    while (!atomic_load(&s->stopping)) {
        board_thread_state(s->board, &s->acceptor_on_board, STATE_WAITING);
        int rc = poll(fds, 2, BIO_REAP_INTERVAL_MS);
        board_thread_state(s->board, &s->acceptor_on_board, STATE_RUNNING);
        reap_exited(s);
        if (rc <= 0 || !(fds[0].revents & POLLIN))
            continue;
        int fd = net_accept(&s->acceptor);
        if (fd < 0) {
            if (fd != -EAGAIN)
                accept_failed(s, fd);
            if (net_accept_error_is_fatal(fd)) {
                fprintf(stderr, "bio: accept: %s\n", strerror(-fd));
                break;
            }
            if (fd == -EMFILE || fd == -ENFILE)
                poll(NULL, 0, 10);    /* let connections close first */
            continue;
        }
        board_add(s->board, CTR_ACCEPTED, 1);
        uint64_t id = ++s->next_conn_id;  /* refused ones get a number too */
        board_event(s->board, EV_ACCEPT, "conn %llu", (unsigned long long)id);
        if (at_thread_limit(s)) {
            char why[64];
            snprintf(why, sizeof(why), "%d of %d threads busy (--max-threads)",
                     s->opts.max_threads, s->opts.max_threads);
            reject_busy(s, fd, why);
        } else {
            spawn_conn(s, fd, id);
        }
    }
    board_thread_end(s->board, &s->acceptor_on_board);
    return NULL;
}

/* ---- lifetime ----------------------------------------------------------- */

struct bio_server *bio_start(const struct server_opts *opts)
{
    struct bio_server *s = calloc(1, sizeof(*s));
    int rc;

    if (!s)
        return NULL;
    s->opts = *opts;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->all_exited, NULL);
    net_ignore_sigpipe();

    rc = net_acceptor_open(&s->acceptor, &opts->listen, false);
    if (rc < 0)
        goto out_free;
    if (!opts->no_board) {
        char described[BOARD_OPTIONS_BYTES];
        server_opts_describe(opts, described, sizeof(described));
        s->board = board_create("bio", described);
        if (!s->board)   /* the server works without it; say so once */
            fprintf(stderr, "bio: no live board (%s); threadlab top will not "
                    "see this server\n", strerror(errno));
    }
    s->wake_fd = eventfd(0, EFD_CLOEXEC);
    if (s->wake_fd < 0) {
        rc = -errno;
        goto out_close_acceptor;
    }
    rc = -pthread_create(&s->acceptor_thread, NULL, acceptor_main, s);
    if (rc < 0)
        goto out_close_wake;
    pthread_setname_np(s->acceptor_thread, "acceptor");
    return s;

out_close_wake:
    close(s->wake_fd);
out_close_acceptor:
    board_close(s->board);
    net_acceptor_close(&s->acceptor);
out_free:
    pthread_cond_destroy(&s->all_exited);
    pthread_mutex_destroy(&s->lock);
    free(s);
    errno = -rc;
    return NULL;
}

uint16_t bio_port(const struct bio_server *s)
{
    return net_acceptor_port(&s->acceptor);
}

void bio_stats(struct bio_server *s, struct bio_stats *out)
{
    out->accepted = board_counter(s->board, CTR_ACCEPTED);
    out->rejected = board_counter(s->board, CTR_REJECTED);
    out->shed = atomic_load(&s->acceptor.shed);
    out->threads_spawned = board_counter(s->board, CTR_THREADS_SPAWNED);
    out->threads_reaped = board_counter(s->board, CTR_THREADS_EXITED);
    out->lines = board_counter(s->board, CTR_LINES);
    out->bytes_in = board_counter(s->board, CTR_BYTES_IN);
    out->bytes_out = board_counter(s->board, CTR_BYTES_OUT);
    pthread_mutex_lock(&s->lock);
    out->live_threads = s->live_count;
    pthread_mutex_unlock(&s->lock);
}

void bio_stop(struct bio_server *s)
{
    uint64_t one = 1;

    /* 1. Stop accepting: wake the acceptor and wait for it. */
    atomic_store(&s->stopping, true);
    board_mark_closing(s->board);
    (void)!write(s->wake_fd, &one, sizeof(one));
    pthread_join(s->acceptor_thread, NULL);
    net_acceptor_close(&s->acceptor);

    /* 2. End every connection's input. A thread blocked in read() gets the
     *    bytes the kernel already holds, then EOF; it answers every complete
     *    line, flushes and leaves. */
    pthread_mutex_lock(&s->lock);
    for (struct bio_conn *c = s->live; c; c = c->next)
        shutdown(c->fd, SHUT_RD);
    while (s->live_count > 0)
        pthread_cond_wait(&s->all_exited, &s->lock);
    pthread_mutex_unlock(&s->lock);

    /* 3. Join and free. */
    reap_exited(s);
    board_close(s->board);
    close(s->wake_fd);
    pthread_cond_destroy(&s->all_exited);
    pthread_mutex_destroy(&s->lock);
    free(s);
}
