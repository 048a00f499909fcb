/* bio.c -- model 1: thread per connection, blocking I/O.
 *
 * The oldest server design, and the simplest to read: one acceptor thread
 * waits for connections and gives each one a thread of its own, which
 * blocks in read(), handles the line, blocks in write(), and loops until the
 * client leaves.
 *
 *     acceptor thread                  connection threads (one per client)
 *     +--------------------+           +----------------------------------+
 *     | poll(listen, wake) |  spawn    | read -> decode -> handle -> write |
 *     | accept()           |---------->|   blocks freely: a !sleep stalls |
 *     | join ended threads |           |   only its own client            |
 *     +--------------------+           +----------------------------------+
 *       owns the listen fd               each owns its connection's fd
 *
 * A line travels: kernel -> read() into the session's buffer -> the session
 * decides the reply -> the same thread does the work (!cpu, !sleep) ->
 * write(). That loop is conn_serve (models/blocking/conn.c), which the pool
 * server runs too; what is BIO's own is here: a thread is created for each
 * connection, and ends with it.
 *
 * The cost is a thread per connection: a stack each (--stack-kb), a
 * scheduler entry each, and a context switch for every line. It breaks when
 * connections outnumber the threads the machine can hold; --max-threads
 * bounds the damage by refusing the rest with "!err busy".
 *
 * Where it lives, and what to read first:
 *   on_accept (here)            a thread per accepted connection
 *   conn_thread_main (here)     that thread's whole life
 *   conn_serve (models/blocking/conn.c)  read -> answer -> write, blocking
 */
#include "bio.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blocking/blocking.h"

struct bio_conn {
    struct conn conn;               /* fd, id, place in the registry */
    struct bio_server *server;
    pthread_t thread;
    char name[16];                  /* the thread's name: "conn-<id>" */
    struct board_thread_ref on_board;
    struct bio_conn *next_ended;    /* in server->ended, waiting for a join */
};

struct bio_server {
    struct blocking_server base;    /* first: options, acceptor, registry (the
                                       connections whose thread runs), board */
    pthread_mutex_t ended_lock;     /* guards ended and unjoined */
    pthread_cond_t thread_ended;    /* a thread put itself on ended */
    struct bio_conn *ended;         /* threads that finished, to be joined */
    uint64_t unjoined;              /* threads created and not yet joined */
};

_Static_assert(offsetof(struct bio_server, base) == 0, "blocking_new makes a bio_server");

/* ---- the connection thread ------------------------------------------------ */

static void *conn_thread_main(void *arg)
{
    struct bio_conn *c = arg;
    struct bio_server *s = c->server;
    uint64_t lines;

    board_thread_begin(s->base.board, &c->on_board, ROLE_CONN, c->name, c->conn.id);
    enum echo_end end = conn_serve(&s->base.serving, &c->conn, c->name, &c->on_board,
                                   &lines);
    conn_finish(&s->base.serving, &c->conn, &c->on_board, end, lines);
    board_thread_end(s->base.board, &c->on_board);

    /* A thread cannot join itself: it queues itself for the acceptor.
     * Nothing of the server may be touched after this. */
    pthread_mutex_lock(&s->ended_lock);
    c->next_ended = s->ended;
    s->ended = c;
    pthread_cond_signal(&s->thread_ended);
    pthread_mutex_unlock(&s->ended_lock);
    return NULL;
}

/* ---- on the acceptor thread ------------------------------------------------ */

/* Join the threads that have ended. Acceptor thread, or bio_stop after it. */
static void join_ended(void *owner)
{
    struct bio_server *s = owner;
    pthread_mutex_lock(&s->ended_lock);
    struct bio_conn *c = s->ended;
    s->ended = NULL;
    pthread_mutex_unlock(&s->ended_lock);

    while (c) {
        struct bio_conn *next = c->next_ended;
        pthread_join(c->thread, NULL);
        pthread_mutex_lock(&s->ended_lock);
        s->unjoined--;
        pthread_mutex_unlock(&s->ended_lock);
        board_add(s->base.board, CTR_THREADS_EXITED, 1);
        board_event(s->base.board, EV_EXIT, "%s: thread ended, joined by the acceptor",
                    c->name);
        free(c);
        c = next;
    }
}

static void on_accept(void *owner, int fd, uint64_t id)
{
    struct bio_server *s = owner;
    struct bio_conn *c = blocking_admit(&s->base, fd, id, sizeof(*c));
    if (!c)
        return;                      /* refused: --max-conns, or no memory */
    if (s->base.opts.max_threads > 0 &&
        conn_registry_count(&s->base.conns) >= (uint64_t)s->base.opts.max_threads) {
        char why[64];
        snprintf(why, sizeof(why), "all %d threads busy (--max-threads)",
                 s->base.opts.max_threads);
        acceptor_refuse(&s->base.acceptor, fd, id, why);
        free(c);
        return;
    }
    c->server = s;
    c->conn.fd = fd;
    c->conn.id = id;
    snprintf(c->name, sizeof(c->name), "conn-%llu", (unsigned long long)id);

    pthread_attr_t attr;
    pthread_attr_init(&attr);
    if (s->base.opts.stack_kb > 0)
        pthread_attr_setstacksize(&attr, (size_t)s->base.opts.stack_kb * 1024);
    /* Register first: the thread may end (and unregister) before
     * pthread_create even returns. */
    conn_registry_add(&s->base.conns);
    board_add(s->base.board, CTR_ACTIVE, 1);
    pthread_mutex_lock(&s->ended_lock);
    s->unjoined++;
    pthread_mutex_unlock(&s->ended_lock);
    int rc = pthread_create(&c->thread, &attr, conn_thread_main, c);
    pthread_attr_destroy(&attr);
    if (rc != 0) {                    /* EAGAIN: the machine is out of threads */
        pthread_mutex_lock(&s->ended_lock);
        s->unjoined--;
        pthread_mutex_unlock(&s->ended_lock);
        conn_registry_remove(&s->base.conns);
        board_sub(s->base.board, CTR_ACTIVE, 1);
        free(c);
        acceptor_refuse(&s->base.acceptor, fd, id, "pthread_create failed: no thread to spare");
        return;
    }
    pthread_setname_np(c->thread, c->name);
    board_add(s->base.board, CTR_THREADS_SPAWNED, 1);
    board_event(s->base.board, EV_SPAWN, "%s: a thread for conn %llu, %llu live",
                c->name, (unsigned long long)id,
                (unsigned long long)conn_registry_count(&s->base.conns));
}

/* ---- lifetime ------------------------------------------------------------- */

struct bio_server *bio_start(const struct server_opts *opts)
{
    char own[64];
    snprintf(own, sizeof(own), " max-threads=%d stack-kb=%d", opts->max_threads,
             opts->stack_kb);
    struct bio_server *s = blocking_new(sizeof(*s), "bio", opts, own);
    if (!s)
        return NULL;
    pthread_mutex_init(&s->ended_lock, NULL);
    pthread_cond_init(&s->thread_ended, NULL);
    int rc = acceptor_start(&s->base.acceptor, s->base.board, on_accept, join_ended, s);
    if (rc < 0) {                    /* no thread to accept with */
        pthread_cond_destroy(&s->thread_ended);
        pthread_mutex_destroy(&s->ended_lock);
        blocking_free(&s->base);
        errno = -rc;
        return NULL;
    }
    return s;
}

void bio_stop(struct bio_server *s)
{
    /* 1. Stop accepting, and tell every connection thread: each answers
     *    the complete lines it has, and those the kernel holds for it,
     *    then lingers and leaves. */
    blocking_stop_accepting(&s->base);

    /* 2. Wait for them. */
    conn_registry_wait_empty(&s->base.conns);

    /* 3. Join every thread. A thread leaves the registry a little before
     *    it ends, so wait for each to queue itself, not for the registry. */
    pthread_mutex_lock(&s->ended_lock);
    while (s->unjoined > 0) {
        if (!s->ended) {
            pthread_cond_wait(&s->thread_ended, &s->ended_lock);
            continue;
        }
        pthread_mutex_unlock(&s->ended_lock);
        join_ended(s);
        pthread_mutex_lock(&s->ended_lock);
    }
    pthread_mutex_unlock(&s->ended_lock);

    /* 4. Free. */
    pthread_cond_destroy(&s->thread_ended);
    pthread_mutex_destroy(&s->ended_lock);
    blocking_free(&s->base);
}

uint16_t bio_port(const struct bio_server *s)
{
    return acceptor_port(&s->base.acceptor);
}

void bio_stats(struct bio_server *s, struct bio_stats *out)
{
    out->accepted = board_counter(s->base.board, CTR_ACCEPTED);
    out->rejected = board_counter(s->base.board, CTR_REJECTED);
    out->shed = atomic_load(&s->base.acceptor.net.shed);
    out->threads_spawned = board_counter(s->base.board, CTR_THREADS_SPAWNED);
    out->threads_reaped = board_counter(s->base.board, CTR_THREADS_EXITED);
    out->lines = board_counter(s->base.board, CTR_LINES);
    out->bytes_in = board_counter(s->base.board, CTR_BYTES_IN);
    out->bytes_out = board_counter(s->base.board, CTR_BYTES_OUT);
    out->live_threads = conn_registry_count(&s->base.conns);
}
