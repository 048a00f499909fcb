/* sim.c -- the simulator's engine: set up a run, then take the earliest
 * event and hand it to whom it concerns, until none is left.
 *
 *   client: connect -> send a line -> (network) -> server -> reply ->
 *           (network) -> think -> send ... -> close
 *   server: threads that take CPU in bursts on the machine (machine.c)
 *
 * What the server does with an event depends on the model (bio, pool,
 * reactor, multireactor, vthread), and this file does not know which:
 * it asks sim_models.c once for the model's table of operations
 * (sim_internal.h, struct sim_model_ops) and calls only through it, as
 * the real servers plug into models/server.c. What is the same for every
 * model stays here: the backlog's bound, a connection's counts, the
 * clients (sim_client.c), the sending window and the report. So calls
 * run one way: this file -> the models -> the shared helpers
 * (sim_blocking.c, sim_loop.c) -> the core (sim_core.c).
 */
#include "sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "sim/rng.h"
#include "sim/sim_internal.h"
#include "net/net.h"
#include "net/clock.h"

/* The machine's word on a thread: on a core, or waiting in the run queue. */
static void on_core(void *ctx, uint32_t t, bool running)
{
    struct sim *s = ctx;
    simviz_state(s->viz, t, running ? VIZ_RUNNING : VIZ_RUNNABLE);
}

/* ---- dispatch: the engine hands each event to the model's table ------------------ */

/* A thread's burst is over: the clients' own thread (--client-cpu), or
 * one of the model's. */
static void burst_done(void *ctx, uint32_t t)
{
    struct sim *s = ctx;
    if (s->o->client_on_machine && t == s->client)
        sim__client_burst_done(s);
    else
        s->ops->burst_done(s, t);
}

/* A connection reaches the server: refused if the accept queue is full,
 * else it waits to be accepted, and its client starts sending. */
static void on_connect(struct sim *s, uint32_t c)
{
    struct vconn *v = &s->conns[c];
    if (s->o->backlog > 0 && s->ops->accept_queue(s) >= s->o->backlog) {
        sim__refuse(s, c, "the accept queue is full (--backlog)");
        return;
    }
    s->r->conns_opened++;
    sim__conn_opened(s);
    v->state = CS_BACKLOG;
    s->ops->connect(s, c);
    /* The client sends as soon as it is connected: the kernel holds its
     * lines until the server reads them. */
    if (s->o->rate > 0) {
        vtime_t first = sim__line_sent_at(s, c, 0);
        sim__at(s, first > s->eng.now ? (double)(first - s->eng.now) : 0, EV_SEND, c, 0);
    } else {
        sim__client_send(s, c);
    }
}

/* A line (close: false) or the client's close reaches the server. A
 * refused connection's bytes have nowhere to go. */
static void on_input(struct sim *s, uint32_t c, bool close)
{
    struct vconn *v = &s->conns[c];
    if (v->state == CS_REFUSED)
        return;
    if (close)
        v->client_closed = true;
    else
        v->arrived++;
    s->ops->input(s, c);
}

/* ---- set up and run ------------------------------------------------------------------ */

/* The clients: when each connects, evenly over the ramp or at random in
 * it, and (open loop) when it sends its first line. */
static int setup_clients(struct sim *s, struct rng *rng)
{
    const struct sim_opts *o = s->o;
    s->send_until = o->duration_s > 0 ? (vtime_t)(o->duration_s * 1e9) : UINT64_MAX;
    s->window_end = s->send_until;
    if (o->rate > 0) {
        s->period_ns = (double)o->conns / o->rate * 1e9;
        s->phase_ns = malloc(o->conns * sizeof(*s->phase_ns));
        if (!s->phase_ns)
            return -1;
    }
    for (uint32_t c = 0; c < o->conns; c++) {
        double when = o->ramp_s * 1e9 *
                      (o->random_connects ? rng_uniform(rng) : (double)c / o->conns);
        if (o->rate > 0)
            s->phase_ns[c] = (vtime_t)(when + rng_uniform(rng) * s->period_ns);
        s->conns[c].thread = VT_NONE;
        sim__at(s, when + o->prof.net_one_way_ns, EV_CONNECT, c, 0);
    }
    return 0;
}

static int setup(struct sim *s)
{
    const struct sim_opts *o = s->o;
    s->ops = sim__model_ops(o->model);
    if (!s->ops)
        return -1;
    s->conns = calloc(o->conns, sizeof(*s->conns));
    if (!s->conns)
        return -1;
    s->window_core_busy = calloc((size_t)o->cores, sizeof(*s->window_core_busy));
    if (!s->window_core_busy || des_init(&s->eng, 4096) < 0 ||
        machine_init(&s->m, &s->eng, &o->prof, o->cores, o->sched, EV_CORE, burst_done, s) < 0)
        return -1;
    if (s->viz)
        s->m.on_core = on_core;
    struct rng rng;
    rng_seed(&rng, o->seed);
    s->seed = rng_next(&rng);
    /* The costs' own stream, from the seed but without taking a number
     * from rng: the clients' draws below stay what they were. */
    rng_seed(&s->costs, s->seed ^ 0x9e3779b97f4a7c15ull);
    s->m.costs = &s->costs;
    if (setup_clients(s, &rng) < 0)
        return -1;
    int rc = s->ops->setup(s);
    /* The client thread is spawned last: the loops' thread ids come first. */
    rc = rc < 0 ? rc : sim__spawn_client(s);
    if (rc == 0 && o->waits) {
        for (int k = 0; k < 2; k++) {
            hist_init(&s->r->core_waits.wait_ns[k]);
            hist_init(&s->r->core_waits.run_ns[k]);
        }
        s->m.waits = &s->r->core_waits;
        s->m.waits_apart = o->client_on_machine ? s->client : VT_NONE;
    }
    return rc;
}

/* One event in words, for the screen's status line (--viz only). */
static void describe(const struct sim *s, const struct des_event *ev, char *out,
                     size_t len)
{
    uint32_t c = ev->id;
    switch (ev->kind) {
    case EV_CORE:
        if (c == (uint32_t)s->o->cores)
            snprintf(out, len, "the balancer's turn: a waiting thread may move core");
        else
            snprintf(out, len, "core %u: its thread's burst or slice ends", c);
        break;
    case EV_CONNECT:
        snprintf(out, len, "conn %u reaches the server", c + 1);
        break;
    case EV_SEND:
        snprintf(out, len, "client %u sends line %u", c + 1, s->conns[c].sent + 1);
        break;
    case EV_LINE:
        snprintf(out, len, "a line of conn %u reaches the server", c + 1);
        break;
    case EV_REPLY:
        snprintf(out, len, "reply %u reaches client %u", s->conns[c].answered + 1, c + 1);
        break;
    case EV_CLOSE:
        snprintf(out, len, "conn %u's close reaches the server", c + 1);
        break;
    case EV_WAKE:
        snprintf(out, len, "thread %u wakes from !sleep", c);
        break;
    case EV_LOOK:
        snprintf(out, len, "the monitor looks at carrier-%u", c);
        break;
    default:
        snprintf(out, len, "event %u", ev->kind);
    }
}

/* An allocation failed, in the run or in the machine: stop. */
static bool out_of_memory(const struct sim *s)
{
    return s->out_of_memory || s->m.out_of_memory;
}

/* The heart: take the earliest event, hand it to whom it concerns. */
static void run_events(struct sim *s)
{
    struct des_event ev;
    while (!out_of_memory(s) && des_next(&s->eng, &ev)) {
        if (!s->window_taken && ev.at >= s->window_end)
            sim__report_window(s);                  /* before time moves past it */
        if (s->viz) {
            char what[160];
            describe(s, &ev, what, sizeof(what));
            if (!simviz_pace(s->viz, ev.at, s->eng.processed - 1, what))
                break;                              /* quit from the screen */
        }
        switch (ev.kind) {
        case EV_CORE:    machine_core_event(&s->m, ev.id, ev.gen); break;
        case EV_CONNECT: on_connect(s, ev.id); break;
        case EV_SEND:    sim__client_send(s, ev.id); break;
        case EV_LINE:    on_input(s, ev.id, false); break;
        case EV_REPLY:   sim__reply_reaches_client(s, ev.id); break;
        case EV_CLOSE:   on_input(s, ev.id, true); break;
        case EV_WAKE:    s->ops->wake(s, ev.id, ev.gen); break;
        case EV_LOOK:    s->ops->look(s, (int)ev.id); break;
        }
    }
    if (s->viz)
        simviz_finish(s->viz);
    if (!s->window_taken) {                         /* the run ended first */
        s->window_end = s->eng.now;
        sim__report_window(s);
    }
    for (uint32_t c = 0; c < s->o->conns; c++) {    /* lines never answered */
        struct vconn *v = &s->conns[c];
        bool unserved = v->state == CS_BACKLOG || v->state == CS_QUEUED;
        if (v->answered < v->sent)
            sim__lines_leave(s, c, unserved ? &s->r->lines_unserved : &s->r->lines_cut);
    }
}

static long self_peak_rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

int sim_run(const struct sim_opts *o, struct sim_report *r)
{
    struct sim *s = calloc(1, sizeof(*s));
    if (!s)
        return -1;
    memset(r, 0, sizeof(*r));
    hist_init(&r->latency_ns);
    s->o = o;
    s->r = r;
    s->viz = o->viz;
    double wall_start = now_ns() / 1e9;
    int rc = setup(s);
    if (rc == 0 && out_of_memory(s))
        rc = -1;                 /* setup's events or threads did not fit */
    if (rc == 0) {
        run_events(s);
        if (out_of_memory(s))
            rc = -1;
        else
            sim__report_fill(s);
    }
    r->events = s->eng.processed;            /* how far it got, even so */
    r->virtual_s = (double)s->eng.now / 1e9;
    r->wall_s = now_ns() / 1e9 - wall_start;
    r->events_per_s = r->wall_s > 0 ? (double)r->events / r->wall_s : 0;
    r->peak_rss_kb = self_peak_rss_kb();
    machine_free(&s->m);
    des_free(&s->eng);
    free(s->conns);
    free(s->phase_ns);
    free(s->idle);
    free(s->loops);
    free(s->biz_idle);
    free(s->client_q);
    free(s->carriers);
    free(s->runners);
    free(s->spares_due);
    free(s->window_core_busy);
    free(s);
    return rc;
}
