/* sim_bio.c -- model 1 on the simulated machine: a thread per connection.
 *
 *   acceptor --accept()+pthread_create--> conn-1  (read, handle, write ...)
 *                                     --> conn-2
 *                                     --> ...     one thread, one stack each
 *
 * The acceptor makes a thread for every connection it accepts, until the
 * machine's thread limit (--max-threads, like pid_max): past it the
 * connection is refused. A thread ends when its connection closes.
 * The connection thread itself is in sim_blocking.c.
 */
#include <stdio.h>

#include "sim/sim_internal.h"

/* The acceptor has accepted c: a thread of its own, or a refusal. */
static void bio_accepted(struct sim *s, uint32_t c)
{
    if (!sim__can_spawn(s)) {
        sim__refuse(s, c, "no more threads (--max-threads)");
        return;
    }
    char name[32];
    snprintf(name, sizeof(name), "conn-%u", c + 1);
    uint32_t t = sim__spawn(s, c, VIZ_CONN, name, c + 1);
    if (t == VT_NONE) {
        sim__refuse(s, c, "out of memory");
        return;
    }
    if (s->viz)
        simviz_event(s->viz, VIZ_EV_SPAWN, "conn-%u: a thread for conn %u, %u live",
                     c + 1, c + 1, s->m.live);
    sim__conn_thread_start(s, t, c);
}

/* Its connection is closed: the thread ends, its stack is freed. */
static void bio_conn_done(struct sim *s, uint32_t t)
{
    sim__thread_exit(s, t);
}

/* Every accepted connection gets a thread: pthread_create, on top of
 * accept(). */
static vtime_t bio_accept_cost(struct sim *s)
{
    return (vtime_t)s->o->prof.thread_create_ns;
}

/* The engine's events go to the blocking code, which calls back here
 * through accept_cost, accepted and conn_done. */
const struct sim_model_ops sim__bio_ops = {
    .setup = sim__blocking_setup,
    .accept_queue = sim__blocking_accept_queue,
    .connect = sim__blocking_connect,
    .input = sim__blocking_input,
    .burst_done = sim__blocking_burst_done,
    .wake = sim__blocking_wake,
    .accept_cost = bio_accept_cost,
    .accepted = bio_accepted,
    .conn_done = bio_conn_done,
};
