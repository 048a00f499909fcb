/* multireactor.h -- model 4: Netty's boss and worker event loop groups.
 *
 * Usable as a library and as `threadlab serve multireactor`. See
 * docs/models/multireactor.md.
 */
#ifndef THREADLAB_MULTIREACTOR_H
#define THREADLAB_MULTIREACTOR_H

#include <stdint.h>

#include "server.h"

struct multireactor_server;

/* opts->bosses boss loops accept, opts->workers worker loops serve (0
 * means the defaults: 1 boss, 2 x cores workers). NULL + errno. Any
 * thread. */
struct multireactor_server *multireactor_start(const struct server_opts *opts);

/* The port it listens on. Any thread. */
uint16_t multireactor_port(const struct multireactor_server *s);

/* Netty's default worker count: 2 x the cores online. Any thread. */
int multireactor_default_workers(void);

/* Connections on worker loop i now (the board shows the same). Any
 * thread. */
uint64_t multireactor_worker_channels(struct multireactor_server *s, int i);

/* Netty's shutdownGracefully: stop accepting, let in-flight lines finish
 * (quiet period, hard timeout), close, join, free. Any thread but the
 * server's own. */
void multireactor_stop(struct multireactor_server *s);

#endif
