/* multireactor.c -- model 4: a boss group accepts, a worker group serves
 * (Netty's ServerBootstrap.group(bossGroup, workerGroup)).
 *
 *   boss loop(s)                      worker loops (2 x cores by default)
 *   +--------------------+   conn 1   +-----------------------------+
 *   | epoll: listen fd   |----------->| worker-1: conn 1, 5, 9 ...  |
 *   | accept()           |   conn 2   +-----------------------------+
 *   | next worker:       |----------->| worker-2: conn 2, 6, 10 ... |
 *   |   round robin      |    ...     +-----------------------------+
 *   +--------------------+            | worker-3 ...   worker-4 ... |
 *                                     +-----------------------------+
 *
 * The boss never reads a byte: it accepts, picks the next worker (counter
 * mod workers; a mask when the count is a power of two), and queues "take
 * this fd" on that worker's task queue. The worker registers the
 * connection on its own epoll and from then on is the only thread that
 * touches it, for the connection's whole life: its handlers need no locks,
 * and its lines are answered in order by one thread (`!who` shows which).
 *
 * Each worker is a single reactor of its own: a `!sleep` stalls the
 * connections of that loop only; the others go on. --offload moves the
 * slow lines to a business pool, as in the single reactor.
 *
 * What makes this model is the two groups and the hand-off between them,
 * here in loopserver.c; the connection itself (read, decode, answer,
 * write) is models/reactive/channel.c, shared with the single reactor,
 * which runs this same loop server with one loop in both roles.
 *
 * Where it lives, and what to read first:
 *   on_acceptable (models/multireactor/loopserver.c)  the boss: accept, choose
 *   loop_group_choose (models/loop/group.c)  the chooser: round robin
 *   register_task (models/multireactor/loopserver.c)  the hand-off, on the worker
 *   channel_io_cb (models/reactive/channel.c)  a worker serving a connection
 */
#include "multireactor.h"

#include <stdio.h>
#include <unistd.h>

#include "multireactor/loopserver.h"

/* A multi-reactor is a loop server with boss and worker groups: the
 * handle is that server (struct multireactor_server is never defined; the
 * type keeps the handles of the models apart). */
static struct loop_server *server(const struct multireactor_server *m)
{
    return (struct loop_server *)m;
}

int multireactor_default_workers(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores > 0 ? (int)(2 * cores) : 2;   /* Netty's default: 2 x cores */
}

struct multireactor_server *multireactor_start(const struct server_opts *opts)
{
    struct loop_server_opts o = {
        .model = "multireactor", .boss_prefix = "boss", .worker_prefix = "worker",
        .bosses = opts->bosses > 0 ? opts->bosses : 1,
        .workers = opts->workers > 0 ? opts->workers : multireactor_default_workers(),
        .opts = opts,
    };
    char own[160];
    snprintf(own, sizeof(own), " bosses=%d workers=%d offload=%d io-ratio=%d "
             "blocked-warn-ms=%d blocked-trace-ms=%d", opts->bosses, opts->workers,
             opts->offload_threads, opts->io_ratio_pct, opts->blocked_warn_ms,
             opts->blocked_trace_ms);
    o.own_options = own;
    return (struct multireactor_server *)loop_server_start(&o);
}

uint16_t multireactor_port(const struct multireactor_server *m)
{
    return loop_server_port(server(m));
}

uint64_t multireactor_worker_channels(struct multireactor_server *m, int i)
{
    return loop_server_worker_channels(server(m), i);
}

void multireactor_stop(struct multireactor_server *m)
{
    loop_server_stop(server(m));
}
