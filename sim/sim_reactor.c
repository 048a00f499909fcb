/* sim_reactor.c -- model 3 on the simulated machine: one loop thread does
 * everything, in turn.
 *
 *   reactor: epoll_wait -> accept -> read -> handle -> write -> ... (serial)
 *
 * It is its own boss: the connections it accepts are its own channels,
 * with no hand-off. One slow handler (a !sleep) stalls every connection.
 * The loop's step is in sim_loop.c.
 */
#include "sim/sim_internal.h"

static int reactor_setup(struct sim *s)
{
    s->workers = s->o->workers > 0 ? s->o->workers : 2 * s->o->cores;
    return sim__loops_setup(s, 1, false);
}

/* The connection stays on the one loop. */
static int reactor_assign(struct sim *s, uint32_t c)
{
    if (s->viz)
        simviz_event(s->viz, VIZ_EV_ACCEPT, "conn %u", c + 1);
    return 0;
}

/* The engine's events go to the loops' code (sim_loop.c), which asks
 * here which loop serves a connection. */
const struct sim_model_ops sim__reactor_ops = {
    .setup = reactor_setup,
    .accept_queue = sim__loops_accept_queue,
    .connect = sim__loops_connect,
    .input = sim__loop_mark_ready,
    .burst_done = sim__loops_burst_done,
    .wake = sim__loops_wake,
    .assign = reactor_assign,
};
