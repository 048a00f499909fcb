/* poolserver.h -- model 2: an acceptor and a watchdog thread pool.
 *
 * Usable as a library and as `threadlab serve pool`. See docs/models/pool.md.
 */
#ifndef THREADLAB_POOLSERVER_H
#define THREADLAB_POOLSERVER_H

#include <stdint.h>

#include "threadpool/pool.h"
#include "server.h"

struct pool_server;

/* Listen, start the pool (opts->pool: sizes, queue, policy) and the
 * acceptor. NULL + errno on failure. Any thread. */
struct pool_server *pool_server_start(const struct server_opts *opts);

/* The port it listens on. Any thread. */
uint16_t pool_server_port(const struct pool_server *s);

/* The pool's counters and sizes. Any thread. */
void pool_server_stats(struct pool_server *s, struct pool_stats *out);

/* Graceful stop: stop accepting, end every connection's input, let the pool
 * serve what is running and queued (each answers the lines it received),
 * join every thread, free. Any thread but the server's own. */
void pool_server_stop(struct pool_server *s);

#endif
