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

int sim__reactor_setup(struct sim *s)
{
    s->workers = s->o->workers > 0 ? s->o->workers : 2 * s->o->cores;
    return sim__loops_setup(s, 1, false);
}

/* The connection stays on the one loop. */
int sim__reactor_assign(struct sim *s, uint32_t c)
{
    if (s->viz)
        simviz_event(s->viz, VIZ_EV_ACCEPT, "conn %u", c + 1);
    return 0;
}
