/* poolserver.c -- model 2: an acceptor hands connections to a thread pool.
 *
 * The classic fix for "a thread per connection piles up threads": keep a
 * pool of threads and give each accepted connection to one of them as a
 * task. The thread serves that connection until it closes (blocking read,
 * handle, write: the same loop as BIO), then goes back to the pool.
 *
 *   acceptor thread          watchdog thread             task threads
 *   +-------------+  submit  +----------------------+    +---------------+
 *   | accept()    |--------->| [conn 9][conn 10]... |--->| task-1: conn 3 |
 *   +-------------+  (task)  | queue -> idle thread |    | task-2: conn 7 |
 *                            | grow / shrink / wait |    | ...  (max)     |
 *                            +----------------------+    +---------------+
 *
 * The lesson: the pool bounds threads, not waiting. With --max 4, the
 * fifth connection is accepted by the kernel and by us, then waits in the
 * queue, its lines unanswered, until one of the first four closes. Past
 * the queue, the rejection policy decides (--reject abort answers
 * "!err busy").
 *
 * Where it lives, and what to read first:
 *   on_accept (here)            each connection becomes one pool task
 *   watchdog_main (models/threadpool/pool.c)  dispatch, grow, shrink
 *   task_thread_main (models/threadpool/pool.c)  a task thread's states
 *   conn_serve (models/blocking/conn.c)  the task: the same loop as bio
 */
#include "poolserver.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "blocking/blocking.h"

struct pool_server {
    struct blocking_server base;   /* first: options, acceptor, registry (accepted:
                                      queued or being served), board */
    struct pool *pool;             /* the watchdog pool: one task a connection */
};

_Static_assert(offsetof(struct pool_server, base) == 0, "blocking_new makes a pool_server");

/* One connection, as one task: serve it until it ends. On a task thread,
 * or on the acceptor under caller-runs (self is NULL). */
static void serve_task(void *arg, struct pool_thread *self)
{
    struct conn *c = arg;
    struct pool_server *s = c->owner;
    uint64_t lines;
    const char *name = self ? pool_thread_name(self) : "acceptor";
    struct board_thread_ref *me = self ? pool_thread_board(self)
                                       : &s->base.acceptor.on_board;

    enum echo_end end = conn_serve(&s->base.serving, c, name, me, &lines);
    conn_finish(&s->base.serving, c, me, end, lines);
    free(c);
}

/* A queued connection that will never be served (discard-oldest). On the
 * acceptor thread: pool_submit drops the oldest as the acceptor submits
 * the newest. (The other drop, pool_shutdown without drain, never finds a
 * connection queued: the pool server drains.) */
static void drop_task(void *arg)
{
    struct conn *c = arg;
    struct pool_server *s = c->owner;
    conn_registry_remove(&s->base.conns);
    board_sub(s->base.board, CTR_ACTIVE, 1);
    acceptor_refuse(&s->base.acceptor, c->fd, c->id, "dropped from a full queue "
                    "(discard-oldest)");
    free(c);
}

static void on_accept(void *owner, int fd, uint64_t id)
{
    struct pool_server *s = owner;
    struct conn *c = blocking_admit(&s->base, fd, id, sizeof(*c));
    if (!c)
        return;                      /* refused: --max-conns, or no memory */
    c->fd = fd;
    c->id = id;
    c->owner = s;
    conn_registry_add(&s->base.conns);
    board_add(s->base.board, CTR_ACTIVE, 1);
    int rc = pool_submit(s->pool, serve_task, c, id);
    if (rc < 0) {
        char why[80];
        snprintf(why, sizeof(why), "queue full (%d), reject policy abort",
                 s->base.opts.pool.queue_capacity);
        conn_registry_remove(&s->base.conns);
        board_sub(s->base.board, CTR_ACTIVE, 1);
        acceptor_refuse(&s->base.acceptor, fd, id, rc == -EAGAIN ? why : "stopping");
        free(c);
    }
}

struct pool_server *pool_server_start(const struct server_opts *opts)
{
    char own[128];
    snprintf(own, sizeof(own), " min=%d max=%d queue=%d idle-ms=%d reject=%s%s",
             opts->pool.min_threads, opts->pool.max_threads, opts->pool.queue_capacity,
             opts->pool.idle_ms, pool_reject_name(opts->pool.reject),
             opts->pool.adaptive ? " adaptive" : "");
    struct pool_server *s = blocking_new(sizeof(*s), "pool", opts, own);
    int rc;
    if (!s)
        return NULL;

    struct pool_opts po = opts->pool;
    po.thread_prefix = "task";
    po.queue_name = "connections";
    po.board = s->base.board;
    po.role = ROLE_POOL_WORKER;
    po.on_drop = drop_task;
    po.log_tasks = true;          /* a task is a connection: worth an event */
    s->pool = pool_create(&po);
    if (!s->pool) {
        rc = -errno;
        goto out_close;
    }
    rc = acceptor_start(&s->base.acceptor, s->base.board, on_accept, NULL, s);
    if (rc < 0)
        goto out_pool;
    return s;

out_pool:
    pool_shutdown(s->pool, false);
out_close:
    blocking_free(&s->base);
    errno = -rc;
    return NULL;
}

uint16_t pool_server_port(const struct pool_server *s)
{
    return acceptor_port(&s->base.acceptor);
}

void pool_server_stats(struct pool_server *s, struct pool_stats *out)
{
    pool_stats(s->pool, out);
}

void pool_server_stop(struct pool_server *s)
{
    /* 1. Stop accepting, and tell every connection, served or still
     *    queued: each will answer the lines the kernel holds for it, then
     *    linger and close. */
    blocking_stop_accepting(&s->base);

    /* 2. Drain the pool: queued connections are served (briefly) too. */
    pool_shutdown(s->pool, true);
    conn_registry_wait_empty(&s->base.conns);
    blocking_free(&s->base);
}
