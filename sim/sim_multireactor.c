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

static int multireactor_setup(struct sim *s)
{
    s->workers = s->o->workers > 0 ? s->o->workers : 2 * s->o->cores;
    return sim__loops_setup(s, s->workers, true);
}

/* The next worker, round robin. */
static int multireactor_assign(struct sim *s, uint32_t c)
{
    int w = (int)(s->next_worker++ % (uint32_t)s->workers);
    if (s->viz)
        simviz_event(s->viz, VIZ_EV_ASSIGN, "conn %u -> worker-%d: round robin "
                     "(%d of %d)", c + 1, w + 1, w + 1, s->workers);
    return w;
}

/* The engine's events go to the loops' code (sim_loop.c), which asks
 * here which loop serves a connection. */
const struct sim_model_ops sim__multireactor_ops = {
    .setup = multireactor_setup,
    .accept_queue = sim__loops_accept_queue,
    .connect = sim__loops_connect,
    .input = sim__loop_mark_ready,
    .burst_done = sim__loops_burst_done,
    .wake = sim__loops_wake,
    .assign = multireactor_assign,
};
