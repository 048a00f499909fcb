/* sim_core.c -- what every model of the simulator shares, below them all:
 * what a line is, a thread's bursts on the machine (and on the board with
 * --viz), connections and their queues, the counts the report reads.
 * It calls no model and no part of the run (sim.c): the models and the
 * shared helpers call down into it, so calls run one way.
 *
 * What a line is (plain, !cpu, !sleep, its service time) is a function of
 * (seed, connection, line number), so nothing per line is stored and a
 * run is the same whatever order the events come in.
 */
#include <math.h>
#include <stdio.h>

#include "sim/sim_internal.h"

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

void sim__lines_leave(struct sim *s, uint32_t c, uint64_t *why)
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
    sim__lines_leave(s, c, &s->r->lines_refused);
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
