/* sim_opts.c -- the simulator's options: their defaults, the checks that
 * refuse what makes no sense or would not end, and what a run needs of
 * the machine before it starts. See sim.h.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/sim_internal.h"

/* ---- options ---------------------------------------------------------------------- */

static const char *const model_names[SIM_MODEL_COUNT] = {
    "bio", "pool", "reactor", "multireactor", "vthread",
};

const char *sim_model_name(enum sim_model m)
{
    return (unsigned)m < SIM_MODEL_COUNT ? model_names[m] : "?";
}

int sim_model_by_name(const char *name)
{
    for (int i = 0; i < SIM_MODEL_COUNT; i++)
        if (strcmp(model_names[i], name) == 0)
            return i;
    return -1;
}

/* --sched NAME: the scheduler of that name, or NULL. */
const struct sched_ops *sim_sched_by_name(const char *name)
{
    static const struct sched_ops *const scheds[] = { &sched_linux, &sched_simple };
    for (size_t i = 0; i < sizeof(scheds) / sizeof(scheds[0]); i++)
        if (strcmp(scheds[i]->name, name) == 0)
            return scheds[i];
    return NULL;
}

void sim_opts_init(struct sim_opts *o, enum sim_model model)
{
    memset(o, 0, sizeof(*o));
    o->model = model;
    o->cores = 2;
    o->sched = &sched_linux;
    profile_default(&o->prof);
    o->seed = 1;
    o->conns = 1;
    o->duration_s = 10;
    o->max_threads = 32768;      /* Linux's default pid_max */
    o->backlog = 0;              /* 0: unbounded (the kernel's queue is
                                    not what these runs are about) */
    o->pool_min = 4;
    o->pool_max = 16;
    o->pool_queue = 1024;
    o->workers = 0;              /* 0: 2 x cores, as the real multireactor */
    o->io_ratio = 50;
    o->carriers = 0;             /* 0: the cores, as the real vthread */
    o->handoff_ms = 20;          /* models/vthread's VT_HANDOFF_MS_DEFAULT */
    o->vt_stack_kb = 64;         /* ... and VT_STACK_DEFAULT_BYTES */
}

/* The fastest a connection may send: one line a microsecond. Faster, the
 * period between its lines rounds to nothing, and an open-loop client
 * would schedule lines without the clock moving on. */
#define SIM_MIN_SEND_PERIOD_NS 1000.0

/* Every double a run is made of is finite (NaN compares false with any
 * bound, so the range checks below would let it through). */
static bool opts_finite(const struct sim_opts *o)
{
    return isfinite(o->ramp_s) && isfinite(o->duration_s) && isfinite(o->rate) &&
           isfinite(o->think_us) && isfinite(o->cpu_pct) && isfinite(o->sleep_pct) &&
           isfinite(o->task_pct) && isfinite(o->service_exp_us);
}

/* A closed-loop line's time from one send to the next, at the least: the
 * network both ways; with no network (--profile zero), its think time and
 * CPU on average. 0: lines take no time at all, and the clock never moves. */
static double closed_line_floor_ns(const struct sim_opts *o)
{
    const struct profile *p = &o->prof;
    if (p->net_one_way_ns >= 1)
        return 2 * p->net_one_way_ns;
    return (o->think_us + o->service_exp_us) * 1e3 + p->handle_ns + p->read_ns +
           p->write_ns + (o->cpu_pct * o->cpu_us + o->task_pct * o->task_us) * 10.0 +
           o->sleep_pct * o->sleep_ms * 1e4;
}

/* What the sending asks of a connection's line counters (32 bits, in
 * struct vconn): at most SIM_LINES_PER_CONN_MAX lines each, and a run that
 * ends. NULL when it fits. */
static const char *sending_check(const struct sim_opts *o)
{
    if (o->lines_per_conn > SIM_LINES_PER_CONN_MAX)
        return "--lines-per-conn must be at most 4294967295";
    if (o->lines_per_conn > 0)
        return NULL;                       /* it ends, and fits */
    double duration_ns = o->duration_s * 1e9;
    if (o->rate > 0)
        return o->rate / o->conns * o->duration_s >= (double)SIM_LINES_PER_CONN_MAX
            ? "--rate x --duration is more than 4294967295 lines a connection, the most "
              "it counts (raise --conns, or lower --rate or --duration)" : NULL;
    double floor_ns = closed_line_floor_ns(o);
    if (floor_ns < 1)
        return "a line takes no simulated time here (no network, CPU or think time), so "
               "a closed loop never ends: give --think-us, --service-exp or --lines-per-conn";
    /* Half the counter: with no network the floor is a mean, not a bound. */
    if (duration_ns / floor_ns >= (double)SIM_LINES_PER_CONN_MAX / 2)
        return "--duration lets a connection send more than 4294967295 lines, the most it "
               "counts (shorten --duration or give --lines-per-conn)";
    return NULL;
}

int sim_opts_check(const struct sim_opts *o, char *err, size_t err_len)
{
    const char *why = NULL;
    if (!opts_finite(o))
        why = "every number must be finite (not nan or inf)";
    else if (o->cores < 1 || o->cores > 4096)
        why = "--cores must be from 1 to 4096";
    else if (o->conns < 1 || o->conns > SIM_CONNS_MAX)
        why = "--conns must be from 1 to 50000000";
    else if (o->duration_s <= 0 && o->lines_per_conn == 0)
        why = "give --duration or --lines-per-conn";
    else if (o->cpu_pct < 0 || o->sleep_pct < 0 || o->task_pct < 0 ||
             o->cpu_pct + o->sleep_pct + o->task_pct > 100)
        why = "--mix shares must add up to at most 100%";
    else if (o->io_ratio < 1 || o->io_ratio > 100)
        why = "--io-ratio must be from 1 to 100";
    else if (o->pool_min < 0 || o->pool_max < 1 || o->pool_min > o->pool_max ||
             o->pool_min > SIM_POOL_MIN_MAX || o->pool_max > SIM_POOL_MAX)
        why = "--min and --max must be 0 <= min <= max, max >= 1, min <= 100000 "
              "and max <= 50000000";
    else if (o->model == SIM_POOL && o->max_threads > 0 &&
             (uint32_t)o->pool_min > o->max_threads)
        why = "--min is more threads than the machine allows (--max-threads)";
    else if (o->workers < 0 || o->workers > SIM_WORKERS_MAX)
        why = "--workers must be from 1 to 4096";
    else if (o->offload < 0 || o->offload > SIM_OFFLOAD_MAX)
        why = "--offload must be from 0 to 100000";
    else if (o->carriers < 0 || o->carriers > SIM_CARRIERS_MAX)
        why = "--carriers must be from 1 to 4096";
    else if (o->handoff_ms < 1 || o->handoff_ms > 3600000)
        why = "--handoff-ms must be from 1 to 3600000";
    else if (!(o->vt_stack_kb >= 16 && o->vt_stack_kb <= 1048576))
        why = "--stack must be from 16K to 1024M";
    else if (o->rate < 0 || o->think_us < 0 || o->ramp_s < 0)
        why = "--rate, --think-us and --ramp must not be negative";
    else if (o->rate > 0 && (double)o->conns / o->rate * 1e9 < SIM_MIN_SEND_PERIOD_NS)
        why = "--rate is more than 1000000 lines/s per connection "
              "(raise --conns or lower --rate)";
    else
        why = sending_check(o);
    if (why) {
        snprintf(err, err_len, "%s", why);
        return -1;
    }
    return 0;
}

/* ---- what a run needs ----------------------------------------------------------- */

/* An array that starts at `first` and doubles (the event heap, the
 * machine's threads): its size once it holds n. */
static double doubled_to(uint64_t n, uint64_t first)
{
    uint64_t cap = first;
    while (cap < n)
        cap *= 2;
    return (double)cap;
}

static uint64_t threads_at_start(const struct sim_opts *o)
{
    uint64_t loops = o->model == SIM_MULTIREACTOR
        ? (uint64_t)(o->workers > 0 ? o->workers : 2 * o->cores) + 1 : 1;
    uint64_t n;
    switch (o->model) {
    case SIM_BIO:  n = 1; break;                              /* the acceptor */
    case SIM_POOL: n = 1 + (uint64_t)o->pool_min; break;
    case SIM_VTHREAD:                                         /* + the monitor */
        n = 2 + (uint64_t)(o->carriers > 0 ? o->carriers : o->cores);
        break;
    default:       n = loops + (uint64_t)o->offload; break;
    }
    return n + (o->client_on_machine ? 1 : 0);
}

void sim_need(const struct sim_opts *o, struct sim_need *n)
{
    n->threads = threads_at_start(o);
    n->events = (uint64_t)o->conns + 1;      /* every connect, and the balancer */
    double b = (double)o->conns * sizeof(struct vconn);
    if (o->rate > 0)
        b += (double)o->conns * sizeof(vtime_t);          /* the phases */
    b += doubled_to(n->events, 4096) * sizeof(struct des_event);
    b += doubled_to(n->threads, 1024) * (sizeof(struct vthread) + sizeof(uint32_t));
    if (o->model == SIM_POOL)
        b += (double)sim__pool_reach(o) * sizeof(uint32_t);
    if (o->model == SIM_REACTOR || o->model == SIM_MULTIREACTOR)
        b += (double)n->threads * sizeof(struct vloop);   /* more than the loops */
    if (o->model == SIM_VTHREAD)
        b += (double)n->threads * (sizeof(struct vcarrier) + sizeof(struct vrunner) + 4);
    b += (double)o->cores * (sizeof(struct vcore) + sizeof(vtime_t));
    n->bytes = b + sizeof(struct sim) + sizeof(struct sim_report);
}
