/* reactor.h -- model 3: a single reactor, one loop does everything.
 *
 * Usable as a library and as `threadlab serve reactor`. See
 * docs/models/reactor.md.
 */
#ifndef THREADLAB_REACTOR_H
#define THREADLAB_REACTOR_H

#include <stdint.h>

#include "server.h"

struct reactor_server;
struct loop_checker_stats;

/* Listen, start the loop (and the business pool with --offload, and the
 * blocked checker). NULL + errno on failure. Any thread. */
struct reactor_server *reactor_start(const struct server_opts *opts);

/* The port it listens on. Any thread. */
uint16_t reactor_port(const struct reactor_server *s);

/* Graceful stop: stop accepting, end every connection's input, let each
 * answer what it received and flush (closing what is left after
 * opts->stop_timeout_ms), then stop the pool, the checker and the loop,
 * free. Any thread but the loop's. */
void reactor_stop(struct reactor_server *s);

/* What the blocked checker counted: how many times it flagged the loop
 * (episodes), how many looks it took. Any thread. */
void reactor_checker_stats(struct reactor_server *s, struct loop_checker_stats *out);

#endif
