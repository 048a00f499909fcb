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
 *
 * The server is the multi-reactor's loop server
 * (models/multireactor/loopserver.c) with one loop in both roles, as
 * Netty's ServerBootstrap.group(group) with a group of one: the loop is
 * its own boss and its own only worker, so every hand-off from "boss" to
 * "worker" runs at once, on the same thread.
 * The connection itself is models/reactive/channel.c, with the files
 * below it (models/reactive/inside_channel.h); the loop is
 * models/loop/loop.c.
 *
 * Where it lives, and what to read first:
 *   loop_iteration (models/loop/loop.c)    poll, timers, tasks: the loop
 *   on_acceptable (models/multireactor/loopserver.c)  accept, open a channel
 *   channel_io_cb (models/reactive/channel.c)  read, decode, answer, write
 *   answer_lines (models/reactive/channel_lines.c)  the lines, under the budget
 *   write_out (models/reactive/channel_output.c)  the write, then backpressure
 */
#include "reactor.h"

#include <stdio.h>

#include "multireactor/loopserver.h"

/* A reactor is a loop server with one loop, boss and worker at once: the
 * handle is that server. struct reactor_server is never defined; the type
 * only keeps a reactor's handle from being passed where another model's
 * is expected. */
static struct loop_server *server(const struct reactor_server *r)
{
    return (struct loop_server *)r;
}

struct reactor_server *reactor_start(const struct server_opts *opts)
{
    char own[128];
    snprintf(own, sizeof(own), " offload=%d io-ratio=%d blocked-warn-ms=%d "
             "blocked-trace-ms=%d", opts->offload_threads, opts->io_ratio_pct,
             opts->blocked_warn_ms, opts->blocked_trace_ms);
    struct loop_server_opts o = {
        .model = "reactor", .worker_prefix = "reactor",
        .bosses = 0,                   /* the loop accepts for itself */
        .workers = 1,                  /* one loop, one thread: the reactor */
        .opts = opts, .own_options = own,
    };
    return (struct reactor_server *)loop_server_start(&o);
}

uint16_t reactor_port(const struct reactor_server *r)
{
    return loop_server_port(server(r));
}

void reactor_checker_stats(struct reactor_server *r, struct loop_checker_stats *out)
{
    loop_server_checker_stats(server(r), out);
}

void reactor_stop(struct reactor_server *r)
{
    loop_server_stop(server(r));
}
