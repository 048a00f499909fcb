/* sim.c -- the five models and their clients on the simulated machine:
 * the run itself (set up, the event loop, dispatch) and what every model
 * shares (lines, threads, connections).
 *
 *   client: connect -> send a line -> (network) -> server -> reply ->
 *           (network) -> think -> send ... -> close
 *   server: threads that take CPU in bursts on the machine (machine.c):
 *     bio           an acceptor, and a thread per connection that blocks
 *                   in read, handles a line, writes, blocks again
 *                   (sim_blocking.c, sim_bio.c)
 *     pool          an acceptor that hands connections to task threads
 *                   (min..max); the rest wait in a bounded queue
 *                   (sim_blocking.c, sim_pool.c)
 *     reactor       one loop: accept, read, handle, write, in turn
 *                   (sim_loop.c, sim_reactor.c)
 *     multireactor  a boss loop accepts and hands each connection to a
 *                   worker loop, round robin (sim_loop.c, sim_multireactor.c)
 *     vthread       an acceptor, and a virtual thread per connection on
 *                   carrier threads that park and resume them; a monitor
 *                   hands a carrier stuck in a call to a spare
 *                   (sim_blocking.c, sim_vthread.c, sim_carrier.c)
 *   Loops may offload !cpu/!sleep lines to a business pool; the reply
 *   comes back to the loop as a task, in order per connection.
 *
 * What a line is (plain, !cpu, !sleep, its service time) is a function of
 * (seed, connection, line number), so nothing per line is stored and a
 * run is the same whatever order the events come in.
 */
#include "sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "sim/rng.h"
#include "sim/sim_internal.h"
#include "net/net.h"
#include "net/clock.h"

/* ---- lines -------------------------------------------------------------------- */

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* A uniform number in [0, 1) for (connection, line, salt). */
double sim__line_uniform(const struct sim *s, uint32_t c, uint32_t k, uint32_t salt)
{
    uint64_t h = mix64(s->seed ^ mix64(((uint64_t)c << 32 | k) ^ ((uint64_t)salt << 56)));
    return (double)(h >> 11) * 0x1.0p-53;
}

enum line_kind sim__line_kind(const struct sim *s, uint32_t c, uint32_t k)
{
    double u = sim__line_uniform(s, c, k, 1) * 100.0;
    if (u < s->o->cpu_pct)
        return LINE_CPU;
    if (u < s->o->cpu_pct + s->o->sleep_pct)
        return LINE_SLEEP;
    if (u < s->o->cpu_pct + s->o->sleep_pct + s->o->task_pct)
        return LINE_TASK;
    return LINE_PLAIN;
}

vtime_t sim__line_task(const struct sim *s, uint32_t c, uint32_t k)
{
    return sim__line_kind(s, c, k) == LINE_TASK ? (vtime_t)(s->o->task_us * 1e3) : 0;
}

/* CPU to handle line k of connection c: decode and reply, plus its work. */
vtime_t sim__line_cpu(const struct sim *s, uint32_t c, uint32_t k)
{
    double ns = s->o->prof.handle_ns;
    if (s->o->service_exp_us > 0)
        ns += -s->o->service_exp_us * 1e3 * log1p(-sim__line_uniform(s, c, k, 2));
    enum line_kind kind = sim__line_kind(s, c, k);
    if (kind == LINE_CPU)
        ns += s->o->cpu_us * 1e3;
    if (kind == LINE_TASK)
        ns += s->o->task_us * 1e3;
    return (vtime_t)ns;
}

vtime_t sim__line_sleep(const struct sim *s, uint32_t c, uint32_t k)
{
    return sim__line_kind(s, c, k) == LINE_SLEEP ? (vtime_t)(s->o->sleep_ms * 1e6) : 0;
}

/* Open loop: line k is due k periods after the first, rounded down once
 * from the exact product (rounding the period instead would add up k
 * roundings: the sends would drift early, 3 lines in 300 000 at 30 000/s). */
vtime_t sim__line_sent_at(const struct sim *s, uint32_t c, uint32_t k)
{
    if (s->o->rate > 0)
        return s->phase_ns[c] + (vtime_t)((double)k * s->period_ns);
    return s->conns[c].last_send;
}

/* ---- threads, on the machine and on the board --------------------------------- */

vtime_t sim__syscall_ns(struct sim *s, double mean_ns)
{
    const struct profile *p = &s->o->prof;
    struct cost_shape shape = { p->syscall_sigma, p->syscall_p99, p->syscall_p999 };
    return (vtime_t)(mean_ns * rng_cost_factor(&s->costs, shape));
}

void sim__at(struct sim *s, double delay_ns, uint32_t kind, uint32_t id, uint32_t gen)
{
    if (des_schedule(&s->eng, (vtime_t)delay_ns, kind, id, gen) < 0)
        s->out_of_memory = true;
}

void sim__run(struct sim *s, uint32_t t, vtime_t cpu_ns, uint32_t cont)
{
    if (s->viz)
        simviz_state(s->viz, t, VIZ_RUNNING);
    machine_run(&s->m, t, cpu_ns, cont);
}

/* The machine's word on a thread: on a core, or waiting in the run queue. */
static void on_core(void *ctx, uint32_t t, bool running)
{
    struct sim *s = ctx;
    simviz_state(s->viz, t, running ? VIZ_RUNNING : VIZ_RUNNABLE);
}

void sim__block(struct sim *s, uint32_t t, enum viz_state why)
{
    if (s->viz)
        simviz_state(s->viz, t, why);
    machine_block(&s->m, t);
}

uint32_t sim__spawn(struct sim *s, uint32_t owner, enum viz_role role, const char *name,
                    uint64_t conn)
{
    uint32_t t = machine_spawn(&s->m, owner);
    if (t == VT_NONE)
        s->out_of_memory = true;
    else if (s->viz) {
        simviz_thread(s->viz, t, role, name, conn);
        simviz_state(s->viz, t, role == VIZ_CONN ? VIZ_READING : VIZ_WAITING);
    }
    return t;
}

uint32_t sim__spawn_idle(struct sim *s, enum viz_role role, const char *prefix, int n)
{
    char name[32];
    snprintf(name, sizeof(name), "%s-%d", prefix, n);
    uint32_t t = sim__spawn(s, VT_NONE, role, name, 0);
    if (s->viz && t != VT_NONE)
        simviz_state(s->viz, t, VIZ_IDLE);
    return t;
}

void sim__thread_exit(struct sim *s, uint32_t t)
{
    if (s->viz)
        simviz_thread_end(s->viz, t);
    machine_exit(&s->m, t);
}

void sim__thread_line(struct sim *s, uint32_t t)
{
    if (s->viz)
        simviz_lines(s->viz, t, 1);
}

/* ---- connections ---------------------------------------------------------------- */

void sim__cq_push(struct sim *s, struct cqueue *q, uint32_t c)
{
    s->conns[c].next[q->link] = VT_NONE;
    if (q->len++ == 0)
        q->head = c;
    else
        s->conns[q->tail].next[q->link] = c;
    q->tail = c;
}

uint32_t sim__cq_pop(struct sim *s, struct cqueue *q)
{
    uint32_t c = q->head;
    q->head = s->conns[c].next[q->link];
    q->len--;
    return c;
}

void sim__conn_opened(struct sim *s)
{
    if (++s->open_conns > s->peak_conns)
        s->peak_conns = s->open_conns;
}

/* The server closed connection c (its client had closed). */
void sim__conn_closed(struct sim *s, uint32_t c)
{
    s->conns[c].state = CS_DONE;
    s->open_conns--;
    if (s->viz) {
        simviz_count(s->viz, VIZ_CLOSED, 1);
        simviz_count(s->viz, VIZ_ACTIVE, -1);
    }
}

/* c's lines not answered are lost, counted under why (one of the
 * report's lines_refused, lines_unserved, lines_cut): their time in the
 * system so far counts for Little's law. */
static void lines_leave(struct sim *s, uint32_t c, uint64_t *why)
{
    struct vconn *v = &s->conns[c];
    for (uint32_t k = v->answered; k < v->sent; k++)
        s->lost_sojourn_ns += (double)(s->eng.now - sim__line_sent_at(s, c, k));
    sim__in_system(s, -(int64_t)(v->sent - v->answered));
    *why += v->sent - v->answered;
    v->answered = v->sent;
}

void sim__refuse(struct sim *s, uint32_t c, const char *why)
{
    if (s->conns[c].state != CS_NEW)
        s->open_conns--;                            /* it had reached us */
    s->conns[c].state = CS_REFUSED;
    s->r->conns_refused++;
    lines_leave(s, c, &s->r->lines_refused);
    if (s->viz) {
        simviz_count(s->viz, VIZ_REJECTED, 1);
        simviz_event(s->viz, VIZ_EV_REJECT, "conn %u refused: %s", c + 1, why);
    }
}

void sim__line_taken(struct sim *s, uint32_t c)
{
    s->conns[c].taken++;
}

/* The wait ends when the line's work first gets a core, not when its
 * thread is woken: a woken thread may sit in the run queue (M/M/c's
 * queue, for BIO's threads). */
void sim__line_waited(struct sim *s, uint32_t c, uint32_t k, vtime_t on_cpu)
{
    vtime_t arrived = sim__line_sent_at(s, c, k) + (vtime_t)s->o->prof.net_one_way_ns;
    if (on_cpu < arrived)
        return;                  /* cannot be: a line is begun once it is there */
    s->wait_sum_ns += (double)(on_cpu - arrived);
    s->waits++;
    s->waits_nonzero += on_cpu > arrived;
}

void sim__in_system(struct sim *s, int64_t delta)
{
    s->in_system_area += (double)s->in_system * (double)(s->eng.now - s->in_system_at);
    s->in_system_at = s->eng.now;
    s->in_system = (uint64_t)((int64_t)s->in_system + delta);
}


void sim__reply_sent(struct sim *s, uint32_t c)
{
    sim__at(s, s->o->prof.net_one_way_ns, EV_REPLY, c, 0);
    if (s->viz)
        simviz_count(s->viz, VIZ_LINES, 1);
}

/* ---- dispatch --------------------------------------------------------------------- */

static bool is_blocking(const struct sim *s)
{
    return s->o->model == SIM_BIO || s->o->model == SIM_POOL;
}

static void burst_done(void *ctx, uint32_t t)
{
    struct sim *s = ctx;
    bool vthread = s->o->model == SIM_VTHREAD;
    if (s->o->client_on_machine && t == s->client)
        sim__client_burst_done(s);
    else if (is_blocking(s) || (vthread && t == s->acceptor))
        sim__blocking_burst_done(s, t);
    else if (vthread)
        sim__vthread_burst_done(s, t);
    else if (t < (uint32_t)s->nloops)               /* loops were spawned first */
        sim__loop_step(s, (int)t);
    else
        sim__biz_burst_done(s, t);
}

/* A !sleep is over: the thread goes on with its next step. */
static void on_wake(struct sim *s, uint32_t t, uint32_t cont)
{
    switch (cont) {
    case C_BIZ_SLEPT:
        sim__run(s, t, sim__syscall_ns(s, s->o->prof.eventfd_ns), C_BIZ_SUBMITTED);
        break;
    case C_REPLIED:
        sim__run(s, t, sim__syscall_ns(s, s->o->prof.write_ns), C_REPLIED);
        break;
    case C_VT_CALLED:
        sim__vthread_call_end(s, t);
        break;
    default:                                        /* a loop */
        if (s->viz)
            simviz_loop_blocked(s->viz, (int)t, false);
        sim__run(s, t, 0, cont);
    }
}

static void on_connect(struct sim *s, uint32_t c)
{
    struct vconn *v = &s->conns[c];
    if (s->o->backlog > 0 && s->backlog.len + (s->nloops ? s->loops[s->boss].accepts.len : 0)
                                 >= s->o->backlog) {
        sim__refuse(s, c, "the accept queue is full (--backlog)");
        return;
    }
    s->r->conns_opened++;
    sim__conn_opened(s);
    if (s->viz && s->nloops == 0) {
        simviz_count(s->viz, VIZ_ACCEPTED, 1);
        simviz_count(s->viz, VIZ_ACTIVE, 1);
        simviz_event(s->viz, VIZ_EV_ACCEPT, "conn %u", c + 1);
    }
    v->state = CS_BACKLOG;
    if (s->nloops > 0)
        sim__loops_connect(s, c);
    else
        sim__blocking_connect(s, c);
    /* The client sends as soon as it is connected: the kernel holds its
     * lines until the server reads them. */
    if (s->o->rate > 0) {
        vtime_t first = sim__line_sent_at(s, c, 0);
        sim__at(s, first > s->eng.now ? (double)(first - s->eng.now) : 0, EV_SEND, c, 0);
    } else {
        sim__client_send(s, c);
    }
}

static void on_line(struct sim *s, uint32_t c)
{
    struct vconn *v = &s->conns[c];
    if (v->state == CS_REFUSED)
        return;
    v->arrived++;
    if (s->o->model == SIM_VTHREAD)
        sim__vthread_fd_ready(s, c);
    else if (s->nloops > 0)
        sim__loop_mark_ready(s, c);
    else
        sim__blocking_line_arrived(s, c);
}

static void on_close(struct sim *s, uint32_t c)
{
    struct vconn *v = &s->conns[c];
    if (v->state == CS_REFUSED)
        return;
    v->client_closed = true;
    if (s->o->model == SIM_VTHREAD)
        sim__vthread_fd_ready(s, c);
    else if (s->nloops > 0)
        sim__loop_mark_ready(s, c);
    else
        sim__blocking_client_closed(s, c);
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
    s->conns = calloc(o->conns, sizeof(*s->conns));
    if (!s->conns)
        return -1;
    s->window_core_busy = calloc((size_t)o->cores, sizeof(*s->window_core_busy));
    if (!s->window_core_busy || des_init(&s->eng, 4096) < 0 ||
        machine_init(&s->m, &s->eng, &o->prof, o->cores, EV_CORE, burst_done, s) < 0)
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
    int rc;
    switch (o->model) {
    case SIM_BIO:
    case SIM_POOL:         rc = sim__blocking_setup(s); break;
    case SIM_REACTOR:      rc = sim__reactor_setup(s); break;
    case SIM_MULTIREACTOR: rc = sim__multireactor_setup(s); break;
    case SIM_VTHREAD:      rc = sim__vthread_setup(s); break;
    default:               rc = -1;
    }
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
        case EV_LINE:    on_line(s, ev.id); break;
        case EV_REPLY:   sim__reply_reaches_client(s, ev.id); break;
        case EV_CLOSE:   on_close(s, ev.id); break;
        case EV_WAKE:    on_wake(s, ev.id, ev.gen); break;
        case EV_LOOK:    sim__monitor_look(s, (int)ev.id); break;
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
            lines_leave(s, c, unserved ? &s->r->lines_unserved : &s->r->lines_cut);
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
