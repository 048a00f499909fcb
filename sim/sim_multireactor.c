/* sim_multireactor.c -- model 4 on the simulated machine: Netty's boss and
 * worker groups.
 *
 *   boss: epoll_wait -> accept -> hand the channel to worker (n++ % W)
 *   worker-1 .. worker-W: epoll_wait -> read -> handle -> write ...
 *
 * A connection lives on one worker for its life; the hand-off costs the
 * boss an eventfd write (the worker's wakeup). Workers default to 2 x
 * cores, as the real multireactor. The loops' step is in sim_loop.c.
 */
#include "sim/sim_internal.h"

int sim__multireactor_setup(struct sim *s)
{
    s->workers = s->o->workers > 0 ? s->o->workers : 2 * s->o->cores;
    return sim__loops_setup(s, s->workers, true);
}

/* The next worker, round robin. */
int sim__multireactor_assign(struct sim *s, uint32_t c)
{
    int w = (int)(s->next_worker++ % (uint32_t)s->workers);
    if (s->viz)
        simviz_event(s->viz, VIZ_EV_ASSIGN, "conn %u -> worker-%d: round robin "
                     "(%d of %d)", c + 1, w + 1, w + 1, s->workers);
    return w;
}
