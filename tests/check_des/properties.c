/* properties.c -- properties on random configurations: the laws every
 * run keeps. */
#include "check_des.h"

/* ---- properties on random configurations ------------------------------------------ */

/* How many random configurations: THREADLAB_SIM_PROPS, or a few for make
 * check (make check-sim-props N=2000 runs more). */
#define SIM_PROPS_DEFAULT 100

static int props_count(void)
{
    const char *n = getenv("THREADLAB_SIM_PROPS");
    return n && atoi(n) > 0 ? atoi(n) : SIM_PROPS_DEFAULT;
}

/* A share of lines for --mix: none most of the time, else 1-25%. */
static double draw_share(struct rng *r)
{
    return rng_uniform(r) < 0.6 ? 0 : 1 + (double)rng_below(r, 25);
}

/* The clients of configuration i: closed loop (think time, or so many
 * lines each) or open loop (a rate whose period is seldom whole
 * nanoseconds), and a --mix. */
static void draw_clients(struct rng *r, struct sim_opts *o, bool zero)
{
    o->conns = 1 + (uint32_t)rng_below(r, rng_uniform(r) < 0.2 ? 400 : 40);
    o->duration_s = 0.002 + 0.048 * rng_uniform(r);
    o->cpu_pct = draw_share(r);
    o->cpu_us = 1 + (uint32_t)rng_below(r, 200);
    o->sleep_pct = draw_share(r);
    o->sleep_ms = 1 + (uint32_t)rng_below(r, 3);
    o->task_pct = draw_share(r);
    o->task_us = 1 + (uint32_t)rng_below(r, 200);
    o->service_exp_us = rng_uniform(r) < 0.3 ? 100 * rng_uniform(r) : 0;
    if (rng_uniform(r) < 0.5) {                               /* open loop */
        o->rate = o->conns * (100 + 50000 * rng_uniform(r));
        return;
    }
    /* Lines that take no time would never end a closed loop: think. */
    o->think_us = (zero ? 50 : 0) + (rng_uniform(r) < 0.5 ? 1000 * rng_uniform(r) : 0);
    o->ramp_s = rng_uniform(r) < 0.3 ? 0.005 * rng_uniform(r) : 0;
    o->random_connects = rng_uniform(r) < 0.5;
    if (rng_uniform(r) < 0.2) {
        o->lines_per_conn = 1 + rng_below(r, 100);
        o->duration_s = 0;                                    /* no time limit */
    }
}

/* Configuration i: any model, either profile (the built-in one with or
 * without a late wakeup after a long idle), the clients above, and a
 * server sized to refuse now and then (a thread limit, a full queue or
 * backlog). */
static void draw_config(int i, struct sim_opts *o)
{
    struct rng r;
    rng_seed(&r, 0x5eed0000u + (uint64_t)i);
    sim_opts_init(o, (enum sim_model)rng_below(&r, SIM_MODEL_COUNT));
    o->seed = 1 + rng_below(&r, 1000);
    bool zero = rng_uniform(&r) < 0.5;
    if (zero)
        profile_zero(&o->prof);
    o->cores = 1 + (int)rng_below(&r, 8);
    draw_clients(&r, o, zero);
    o->client_on_machine = rng_uniform(&r) < 0.2;
    o->max_threads = rng_uniform(&r) < 0.2 ? 2 + (uint32_t)rng_below(&r, 20) : 0;
    o->backlog = rng_uniform(&r) < 0.2 ? 1 + (uint32_t)rng_below(&r, 20) : 0;
    o->pool_min = (int)rng_below(&r, 4);
    o->pool_max = o->pool_min + 1 + (int)rng_below(&r, 12);
    o->pool_queue = (int)rng_below(&r, 30);
    if (o->max_threads > 0 && (uint32_t)o->pool_min > o->max_threads)
        o->pool_min = (int)o->max_threads;
    o->workers = (int)rng_below(&r, 6);
    o->offload = (int)rng_below(&r, 4);
    o->io_ratio = 1 + (int)rng_below(&r, 100);
    o->carriers = (int)rng_below(&r, 5);                      /* 0: the cores */
    o->pin = rng_uniform(&r) < 0.3;
    o->handoff_ms = 1 + (int)rng_below(&r, 30);
    if (!zero && rng_uniform(&r) < 0.5) {      /* a core that idled long wakes late */
        o->prof.wakeup_deep_after_ns = 20000 + 200000 * rng_uniform(&r);
        o->prof.wakeup_deep_ns = 5000 + 50000 * rng_uniform(&r);
        o->prof.wakeup_deep_sigma = rng_uniform(&r);
        o->prof.wakeup_deep_p99 = 5 + 30 * rng_uniform(&r);
        o->prof.wakeup_deep_p999 = o->prof.wakeup_deep_p99 * (1 + 5 * rng_uniform(&r));
        o->prof.timer_late_ns = 50000 * rng_uniform(&r);   /* an open loop's client's timer */
        o->prof.timer_late_p999 = 1 + 100 * rng_uniform(&r);
    }
}

/* The configuration as the command that runs it again (printed before
 * the run, so that a failure names it). */
static void print_config(int i, const struct sim_opts *o)
{
    char sending[96], workers[32] = "", carriers[32] = "";
    if (o->rate > 0)
        snprintf(sending, sizeof(sending), "--duration %.9g --rate %.9g", o->duration_s, o->rate);
    else if (o->lines_per_conn > 0)
        snprintf(sending, sizeof(sending), "--lines-per-conn %llu --think-us %.9g",
                 (unsigned long long)o->lines_per_conn, o->think_us);
    else
        snprintf(sending, sizeof(sending), "--duration %.9g --think-us %.9g", o->duration_s,
                 o->think_us);
    if (o->workers > 0)
        snprintf(workers, sizeof(workers), " --workers %d", o->workers);
    if (o->carriers > 0)
        snprintf(carriers, sizeof(carriers), " --carriers %d", o->carriers);
    printf("configuration %d: threadlab sim %s%s --seed %llu --cores %d --conns %u %s "
           "--mix cpu=%u:%g,sleep=%u:%g,task=%u:%g --service-exp %.9g --ramp %.9g%s%s "
           "--max-threads %u --backlog %u --min %d --max %d --queue %d%s --offload %d "
           "--io-ratio %d%s --handoff-ms %d%s\n", i, sim_model_name(o->model),
           o->prof.net_one_way_ns > 0 ? "" : " --profile zero", (unsigned long long)o->seed,
           o->cores, o->conns, sending, o->cpu_us, o->cpu_pct, o->sleep_ms, o->sleep_pct,
           o->task_us, o->task_pct, o->service_exp_us, o->ramp_s,
           o->random_connects ? " --random-connects" : "",
           o->client_on_machine ? " --client-cpu" : "", o->max_threads, o->backlog,
           o->pool_min, o->pool_max, o->pool_queue, workers, o->offload, o->io_ratio,
           carriers, o->handoff_ms, o->pin ? " --pin" : "");
    if (o->prof.wakeup_deep_ns > 0)         /* no option sets these: a profile file does */
        printf("  over a profile of wakeup_deep_after_ns = %.0f, wakeup_deep_ns = %.0f, "
               "wakeup_deep_sigma = %.3f, wakeup_deep_p99 = %.3f, wakeup_deep_p999 = %.3f, "
               "timer_late_ns = %.0f, timer_late_p999 = %.3f\n",
               o->prof.wakeup_deep_after_ns, o->prof.wakeup_deep_ns, o->prof.wakeup_deep_sigma,
               o->prof.wakeup_deep_p99, o->prof.wakeup_deep_p999, o->prof.timer_late_ns,
               o->prof.timer_late_p999);
}

/* Open loop: rate x duration lines, to within one a connection (fewer
 * when connections were refused and sent nothing after). Closed loop with
 * --lines-per-conn: that many each, unless refused. */
static void check_lines_sent(const struct sim_opts *o, const struct sim_report *r)
{
    double want = o->rate > 0 ? o->rate * o->duration_s
                : o->lines_per_conn > 0 ? (double)o->lines_per_conn * o->conns : -1;
    if (want < 0)
        return;
    double slack = o->rate > 0 ? o->conns : 0;
    ck_assert_msg((double)r->lines_sent <= want + slack, "%llu lines sent, %.1f due",
                  (unsigned long long)r->lines_sent, want);
    if (r->conns_refused == 0)
        ck_assert_msg((double)r->lines_sent >= want - slack, "%llu lines sent, %.1f due",
                      (unsigned long long)r->lines_sent, want);
}

/* Every model (vthread pinned or not, any handoff), closed and open loop,
 * every --mix, both profiles: Little's
 * law to 1%, no latency longer than the run, the lines due are the lines
 * sent, and every line sent is answered or lost for a reason. */
START_TEST(random_configurations_keep_the_laws)
{
    struct sim_opts o;
    draw_config(_i, &o);
    print_config(_i, &o);
    char err[256];
    ck_assert_msg(sim_opts_check(&o, err, sizeof(err)) == 0, "%s", err);
    struct sim_report *r = malloc(sizeof(*r));
    ck_assert_int_eq(sim_run(&o, r), 0);
    printf("  %llu lines sent, %llu answered, %llu lost (%llu refused, %llu unserved)\n",
           (unsigned long long)r->lines_sent, (unsigned long long)r->lines_ok,
           (unsigned long long)r->lines_lost, (unsigned long long)r->lines_refused,
           (unsigned long long)r->lines_unserved);
    double lw = r->arrival_per_s * r->sojourn_ns / 1e9;
    ck_assert_msg(fabs(r->mean_in_system - lw) <= 0.01 * lw + 1e-9,
                  "Little's law: L %.6f but lambda x W %.6f", r->mean_in_system, lw);
    double max_ns = (double)atomic_load(&r->latency_ns.max);
    ck_assert_msg(max_ns <= r->virtual_s * 1e9 + 0.5,      /* virtual_s: the ns / 1e9 */
                  "a latency of %.0f ns in a run of %.0f ns",
                  max_ns, r->virtual_s * 1e9);
    check_lines_sent(&o, r);
    ck_assert_uint_eq(r->lines_sent,
                      r->lines_ok + r->lines_refused + r->lines_unserved + r->lines_cut);
    ck_assert_uint_eq(r->lines_cut, 0);
    ck_assert_uint_eq(r->lines_lost, r->lines_sent - r->lines_ok);
    free(r);
}
END_TEST

void add_property_tests(TCase *props)
{
    tcase_add_loop_test(props, random_configurations_keep_the_laws, 0, props_count());
}
