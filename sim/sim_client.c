/* sim_client.c -- the simulated clients, as `threadlab load` drives a real
 * server: closed loop (send, wait for the reply, think, send again) or
 * open loop (a line every period, whatever the replies do). Latency is
 * measured from when a line left, so a stalled server cannot hide it.
 *
 * With --client-cpu the clients are one thread on the same cores, as
 * `threadlab load` is on this machine: a reply counts once that thread has
 * read and checked it.
 */
#include <math.h>
#include <stdlib.h>

#include "sim/sim_internal.h"

/* Open loop: the next line is due before the window ends (its due time,
 * not the clock: a line due late in the window may leave after it, when
 * its connection was made late). Closed loop: the window is still open. */
static bool more_to_send(const struct sim *s, uint32_t c)
{
    const struct vconn *v = &s->conns[c];
    if (s->o->lines_per_conn > 0 && v->sent >= s->o->lines_per_conn)
        return false;
    if (v->sent == SIM_LINES_PER_CONN_MAX)
        return false;            /* its count is full (sim_opts_check refuses the runs
                                    that get here, but with no network by a mean) */
    if (s->o->rate > 0)
        return sim__line_sent_at(s, c, v->sent) < s->send_until;
    return s->eng.now < s->send_until;
}

/* Open loop, the client on the machine: a line leaves when the client's
 * timer wakes it, late by timer_late (profile.h: a halted vCPU's timer),
 * and the lines due before that wakeup leave with it, as `threadlab
 * load` sends every line due when it wakes; a late wakeup is a host's
 * stall, and ends (rng_stall_factor). How much later than due. */
static double client_timer_late(struct sim *s)
{
    const struct profile *p = &s->o->prof;
    if (s->o->rate <= 0 || !s->o->client_on_machine || p->timer_late_ns <= 0)
        return 0;
    if (s->eng.now >= s->client_timer_at) {          /* asleep: its timer wakes it */
        struct cost_shape shape = { p->timer_late_sigma, p->timer_late_p99,
                                    p->timer_late_p999 };
        s->client_timer_at = s->eng.now +
                             (vtime_t)(p->timer_late_ns * rng_stall_factor(&s->costs, shape));
    }
    return (double)(s->client_timer_at - s->eng.now);
}

void sim__client_send(struct sim *s, uint32_t c)
{
    struct vconn *v = &s->conns[c];
    if (v->state == CS_REFUSED || !more_to_send(s, c))
        return;
    v->last_send = s->eng.now;
    vtime_t due = sim__line_sent_at(s, c, v->sent);
    v->sent++;
    s->r->lines_sent++;
    sim__in_system(s, +1);
    /* A line due before its connection was made waited in the client
     * since it was due: it is in the system from then, as its latency is. */
    s->in_system_area += (double)(s->eng.now - due);
    sim__at(s, s->o->prof.net_one_way_ns + client_timer_late(s), EV_LINE, c, 0);
    if (s->o->rate > 0 && more_to_send(s, c)) {
        vtime_t next = sim__line_sent_at(s, c, v->sent);
        sim__at(s, next > s->eng.now ? (double)(next - s->eng.now) : 0, EV_SEND, c, 0);
    }
}

static void client_close(struct sim *s, uint32_t c)
{
    sim__at(s, s->o->prof.net_one_way_ns, EV_CLOSE, c, 0);
}

static void on_reply(struct sim *s, uint32_t c)
{
    struct vconn *v = &s->conns[c];
    vtime_t sent = sim__line_sent_at(s, c, v->answered);
    hist_record(&s->r->latency_ns, s->eng.now - sent);
    s->latency_sum_ns += (double)(s->eng.now - sent);
    sim__in_system(s, -1);
    if (s->viz)
        simviz_latency(s->viz, s->eng.now - sent);
    v->answered++;
    s->r->lines_ok++;
    if (s->o->rate > 0) {                           /* open loop */
        if (v->answered == v->sent && !more_to_send(s, c))
            client_close(s, c);
        return;
    }
    if (more_to_send(s, c)) {                       /* closed loop: think, send */
        double think = s->o->think_us > 0
            ? -s->o->think_us * 1e3 * log1p(-sim__line_uniform(s, c, v->answered, 3)) : 0;
        sim__at(s, think, EV_SEND, c, 0);
    } else {
        client_close(s, c);
    }
}

/* The client thread's CPU for the reply at the head of its queue: read
 * it, check it, write the next line; and first, at the start of a round,
 * the epoll_wait that listed the replies of that round (as `threadlab
 * load`'s one epoll loop: under load it finds a few replies at a time,
 * 0.4 calls a line at 16 connections on this VM, not one per block). */
static vtime_t client_line_ns(struct sim *s)
{
    const struct profile *p = &s->o->prof;
    bool new_round = s->client_round_left == 0;
    if (new_round)
        s->client_round_left = s->cq_len;
    s->client_round_left--;
    double ns = p->read_ns + p->write_ns + (new_round ? p->epoll_wait_ns : 0);
    return sim__syscall_ns(s, ns) + (vtime_t)p->handle_ns;
}

void sim__reply_reaches_client(struct sim *s, uint32_t c)
{
    if (!s->o->client_on_machine) {
        on_reply(s, c);
        return;
    }
    if (s->cq_len == s->cq_cap) {
        uint32_t cap = s->cq_cap ? s->cq_cap * 2 : 1024;
        uint32_t *q = malloc(cap * sizeof(*q));
        if (!q) {
            s->out_of_memory = true;         /* the run stops after this event */
            return;
        }
        for (uint32_t i = 0; i < s->cq_len; i++)
            q[i] = s->client_q[(s->cq_head + i) % s->cq_cap];
        free(s->client_q);
        s->client_q = q;
        s->cq_head = 0;
        s->cq_cap = cap;
    }
    s->client_q[(s->cq_head + s->cq_len++) % s->cq_cap] = c;
    if (s->client_blocked) {
        s->client_blocked = false;
        sim__run(s, s->client, client_line_ns(s), C_CLIENT);
    }
}

void sim__client_burst_done(struct sim *s)
{
    uint32_t c = s->client_q[s->cq_head];
    s->cq_head = (s->cq_head + 1) % s->cq_cap;
    s->cq_len--;
    on_reply(s, c);
    if (s->cq_len > 0) {
        sim__run(s, s->client, client_line_ns(s), C_CLIENT);
    } else {
        s->client_blocked = true;
        s->client_round_left = 0;
        sim__block(s, s->client, VIZ_WAITING);
    }
}

int sim__spawn_client(struct sim *s)
{
    if (!s->o->client_on_machine)
        return 0;
    s->client = sim__spawn(s, VT_NONE, VIZ_CLIENT, "clients", 0);
    s->client_blocked = true;
    return s->client == VT_NONE ? -1 : 0;
}
