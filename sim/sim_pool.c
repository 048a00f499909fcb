/* sim_pool.c -- model 2 on the simulated machine: the acceptor hands each
 * connection to a task thread of a pool (the watchdog pool of
 * models/pool/, min..max threads, then a bounded queue).
 *
 *   acceptor --> an idle task thread        (serves it until EOF)
 *            --> a new one, if size < max   (pthread_create first)
 *            --> the queue, if not full     (waits for a thread to free)
 *            --> refused ("!err busy")
 *
 * A task thread whose connection closes takes the next queued one, or
 * goes idle. The pool bounds threads, not waiting.
 */
#include <stdio.h>
#include <stdlib.h>

#include "sim/sim_internal.h"

/* Task threads the pool can ever have: --max, but a thread is made only
 * for a connection, so never more than --min and one per connection. */
uint64_t sim__pool_reach(const struct sim_opts *o)
{
    uint64_t most = (uint64_t)o->pool_min + o->conns;
    return (uint64_t)o->pool_max < most ? (uint64_t)o->pool_max : most;
}

/* The acceptor, then the min threads, made at the start and idle. */
static int pool_setup(struct sim *s)
{
    if (sim__blocking_setup(s) < 0)
        return -1;
    s->idle = malloc(sim__pool_reach(s->o) * sizeof(*s->idle));
    if (!s->idle)
        return -1;
    for (int i = 0; i < s->o->pool_min; i++) {
        s->idle[s->nidle++] = sim__spawn_idle(s, VIZ_POOL_THREAD, "task", i + 1);
        s->pool_size++;
    }
    return 0;
}

/* On top of accept(): pthread_create, when the next accepted connection
 * will need a new thread. */
static vtime_t pool_accept_cost(struct sim *s)
{
    bool will_spawn = s->nidle == 0 && (int)s->pool_size < s->o->pool_max;
    return will_spawn ? (vtime_t)s->o->prof.thread_create_ns : 0;
}

/* The acceptor has accepted c: an idle thread, a new thread, the queue,
 * or "busy". */
static void pool_accepted(struct sim *s, uint32_t c)
{
    if (s->nidle > 0) {
        sim__conn_thread_start(s, s->idle[--s->nidle], c);
    } else if ((int)s->pool_size < s->o->pool_max && sim__can_spawn(s)) {
        char name[32];
        snprintf(name, sizeof(name), "task-%u", s->pool_size + 1);
        uint32_t t = sim__spawn(s, c, VIZ_POOL_THREAD, name, c + 1);
        if (t == VT_NONE) {
            sim__refuse(s, c, "out of memory");
            return;
        }
        s->pool_size++;
        if (s->viz)
            simviz_event(s->viz, VIZ_EV_SPAWN, "%s: no idle thread, size %u of max %d",
                         name, s->pool_size, s->o->pool_max);
        sim__conn_thread_start(s, t, c);
    } else if ((int)s->pool_queue.len < s->o->pool_queue) {
        s->conns[c].state = CS_QUEUED;
        sim__cq_push(s, &s->pool_queue, c);
        if (s->viz)
            simviz_event(s->viz, VIZ_EV_QUEUED, "conn %u waits: all %u threads busy, "
                         "%u queued", c + 1, s->pool_size, s->pool_queue.len);
    } else {
        sim__refuse(s, c, "the queue is full (--queue)");  /* "!err busy" */
    }
}

/* Task thread t's connection is closed: the next queued one, or idle. */
static void pool_conn_done(struct sim *s, uint32_t t)
{
    if (s->pool_queue.len > 0) {
        sim__conn_thread_start(s, t, sim__cq_pop(s, &s->pool_queue));
    } else {
        s->idle[s->nidle++] = t;
        sim__block(s, t, VIZ_IDLE);
    }
}

/* The engine's events go to the blocking code, which calls back here
 * through accept_cost, accepted and conn_done. */
const struct sim_model_ops sim__pool_ops = {
    .setup = pool_setup,
    .accept_queue = sim__blocking_accept_queue,
    .connect = sim__blocking_connect,
    .input = sim__blocking_input,
    .burst_done = sim__blocking_burst_done,
    .wake = sim__blocking_wake,
    .accept_cost = pool_accept_cost,
    .accepted = pool_accepted,
    .conn_done = pool_conn_done,
};
