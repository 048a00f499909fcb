/* loopserver.h -- what the two reactor models share: loops that accept
 * (bosses) hand each connection to a loop that serves it (workers).
 *
 *   single reactor:  one loop, in both roles
 *   multi-reactor:   a boss group accepts, a worker group serves
 *
 * The hand-off is always the same mechanism: the boss picks a worker
 * (round robin) and queues "register this fd" on the worker's task queue,
 * so the connection is registered, read, written and closed only by the
 * worker's own thread. When boss and worker are the same loop, the task
 * simply runs at once.
 */
#ifndef THREADLAB_LOOPSERVER_H
#define THREADLAB_LOOPSERVER_H

#include <stdint.h>

#include "server.h"

struct loop_server;
struct loop;
struct loop_checker_stats;

struct loop_server_opts {
    const char *model;             /* "reactor", "multireactor" */
    const char *boss_prefix;       /* boss loops' names: "boss" -> boss-1 */
    const char *worker_prefix;     /* "worker" -> worker-1, ... */
    int bosses;                    /* 0: the workers accept (single reactor) */
    int workers;                   /* 1 for the single reactor */
    size_t worker_max_tasks;       /* each worker's task queue bound; 0: the default */
    const struct server_opts *opts;
    const char *own_options;       /* the model's options, for the board's header */
};

/* Listen, start the loops, the business pool (--offload) and the blocked
 * checker. NULL + errno on failure. Any thread. */
struct loop_server *loop_server_start(const struct loop_server_opts *o);

/* The port it listens on. Any thread. */
uint16_t loop_server_port(const struct loop_server *s);

/* Netty's shutdownGracefully: stop accepting; end every connection's input
 * so each answers what it received and flushes; close what is left after
 * the hard timeout (opts->stop_timeout_ms); wait a quiet period with no
 * task run on any loop; stop the pool, the checker, the loops; free. Any
 * thread but the server's. */
void loop_server_stop(struct loop_server *s);

/* For tests: what the blocked checker counted (all zero without one);
 * connections on worker i now. Any thread. */
void loop_server_checker_stats(struct loop_server *s, struct loop_checker_stats *out);
uint64_t loop_server_worker_channels(struct loop_server *s, int i);

/* Connections accepted that no worker took (out of memory, a worker's
 * task queue full or ended); each is closed, and counted on the board as
 * an accept error with an event. Any thread. */
uint64_t loop_server_handoffs_failed(struct loop_server *s);

/* Connections holding a place: taken by a boss before the hand-off, given
 * back when the connection closes (or its hand-off failed). --max-conns
 * counts them; a graceful stop waits for 0. Any thread, without the lock
 * that guards the count, so that a test may read it while a boss is held
 * holding that lock. */
uint64_t loop_server_open_channels(struct loop_server *s);

/* Tests only: worker i's loop (lab 06's race case sets a seam on it), or
 * NULL. Any thread. */
struct loop *loop_server__worker_loop(struct loop_server *s, int i);

#endif
