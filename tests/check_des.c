/* check_des.c -- the simulator, checked against queueing theory, against
 * itself (determinism), and against the lessons it is there to teach. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/calibrate.h"
#include "sim/engine.h"
#include "sim/machine.h"
#include "sim/profile.h"
#include "sim/rng.h"
#include "sim/sim.h"

/* Every run in this file: it succeeds, and Little's law holds to 1%. L
 * (the area under the count of lines in the system) and W (each line's
 * own time in it) are summed apart, so a line counted in one and not the
 * other, answered twice or never, shows. */
static void run_checked(const struct sim_opts *o, struct sim_report *r)
{
    ck_assert_int_eq(sim_run(o, r), 0);
    if (r->lines_sent == 0)
        return;
    double lw = r->arrival_per_s * r->sojourn_ns / 1e9;
    ck_assert_msg(fabs(r->mean_in_system - lw) <= 0.01 * lw,
                  "%s: Little's law: L %.4f but lambda x W %.4f",
                  sim_model_name(o->model), r->mean_in_system, lw);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* ---- the engine ------------------------------------------------------------------- */

START_TEST(events_come_out_in_time_order_ties_in_scheduling_order)
{
    struct des_engine e;
    ck_assert_int_eq(des_init(&e, 4), 0);
    struct rng r;
    rng_seed(&r, 7);
    for (uint32_t i = 0; i < 10000; i++)
        ck_assert_int_eq(des_schedule(&e, rng_below(&r, 100), 0, i, 0), 0);
    struct des_event ev, prev = { 0 };
    int n = 0;
    while (des_next(&e, &ev)) {
        if (n++ > 0) {
            ck_assert_uint_ge(ev.at, prev.at);
            if (ev.at == prev.at)
                ck_assert_uint_gt(ev.seq, prev.seq);
        }
        ck_assert_uint_eq(e.now, ev.at);
        prev = ev;
    }
    ck_assert_int_eq(n, 10000);
    des_free(&e);
}
END_TEST

START_TEST(the_rng_repeats_for_a_seed)
{
    struct rng a, b, c;
    rng_seed(&a, 42);
    rng_seed(&b, 42);
    rng_seed(&c, 43);
    int same_c = 0;
    double sum = 0;
    for (int i = 0; i < 100000; i++) {
        uint64_t x = rng_next(&a);
        ck_assert_uint_eq(x, rng_next(&b));
        same_c += x == rng_next(&c);
        sum += rng_exp(&a, 10.0);
        rng_next(&b);
    }
    ck_assert_int_eq(same_c, 0);
    ck_assert_double_eq_tol(sum / 100000, 10.0, 0.15);  /* the exponential's mean */
}
END_TEST

/* The cost factor has mean 1 (a profile's figure stays the mean cost),
 * and shape 0 is exactly 1 without drawing (a run without spread is the
 * run it always was). */
START_TEST(the_lognormal_factor_has_mean_one)
{
    struct rng r, before;
    rng_seed(&r, 3);
    before = r;
    ck_assert_double_eq(rng_lognormal_factor(&r, 0), 1);
    ck_assert_uint_eq(r.s[0], before.s[0]);
    double sum = 0, above2 = 0;
    for (int i = 0; i < 1000000; i++) {
        double x = rng_lognormal_factor(&r, 0.5);
        sum += x;
        above2 += x > 2;
    }
    ck_assert_double_eq_tol(sum / 1e6, 1.0, 0.01);
    /* P(exp(0.5 Z - 0.125) > 2) = P(Z > 1.636) = 5.1% */
    ck_assert_double_eq_tol(above2 / 1e6, 0.051, 0.003);
}
END_TEST

/* A cost's tail (rng.h, struct cost_shape): without one, the draws are
 * rng_lognormal_factor's, draw for draw; with one, the calls' p99 and
 * p99.9 are where the profile puts them, while the body (p50, p90) stays
 * the log-normal's. A knot below the one before it does not bend the
 * tail back. */
START_TEST(a_cost_tail_puts_p99_and_p999_where_measured)
{
    struct rng a, b;
    rng_seed(&a, 11);
    rng_seed(&b, 11);
    for (int i = 0; i < 1000; i++)
        ck_assert_double_eq(rng_cost_factor(&a, (struct cost_shape){ 0.2, 0, 0 }),
                            rng_lognormal_factor(&b, 0.2));
    ck_assert_double_eq(rng_cost_factor(&a, (struct cost_shape){ 0, 0, 0 }), 1);
    enum { N = 1000000 };
    static double x[N];
    struct cost_shape tail = { 0.1, 2.5, 9.0 };
    double body_mean = exp(0.1 * 0.1 / 2), sum = 0;
    for (int i = 0; i < N; i++) {
        x[i] = rng_cost_factor(&a, tail) * body_mean;    /* relative to the median */
        sum += x[i];
    }
    qsort(x, N, sizeof(x[0]), cmp_double);
    ck_assert_double_eq_tol(x[N / 2], 1.0, 0.005);
    ck_assert_double_eq_tol(x[N * 9 / 10], exp(0.1 * 1.2816), 0.005);
    ck_assert_double_eq_tol(x[N * 99 / 100], 2.5, 0.05);
    ck_assert_double_eq_tol(x[N * 999 / 1000], 9.0, 0.3);
    /* The tail's calls add to the mean: a profile's figure is the body's. */
    ck_assert_double_gt(sum / N / body_mean, 1.02);
    printf("tail 2.5 / 9.0: p99 %.2f, p99.9 %.2f, mean %.3f x the body's\n",
           x[N * 99 / 100], x[N * 999 / 1000], sum / N / body_mean);
    struct cost_shape bent = { 0.5, 1.1, 1.05 };     /* both below the p90 knot */
    for (double z = -3; z < 4.5; z += 0.25)
        ck_assert_double_le(rng_cost_ln(bent, z), rng_cost_ln(bent, z + 0.25));
}
END_TEST

/* ---- queueing theory ------------------------------------------------------------- */

/* Erlang C: the mean wait in queue of M/M/c with arrival rate lambda and
 * service rate mu per server. */
static double erlang_c_p_wait(int c, double lambda, double mu)
{
    double a = lambda / mu, rho = a / c;
    double term = 1, sum = 0;             /* a^k / k! */
    for (int k = 0; k < c; k++) {
        sum += term;
        term *= a / (k + 1);
    }
    double top = term / (1 - rho);        /* a^c / c! / (1 - rho) */
    return top / (sum + top);
}

static double erlang_c_wait(int c, double lambda, double mu)
{
    return erlang_c_p_wait(c, lambda, mu) / (c * mu - lambda);
}

/* One request per connection, connections at Poisson times (uniformly
 * random over the run), exponential service of 100 us, no other costs. */
static double simulated_wait_ns(enum sim_model model, int c, double rho, uint32_t n,
                                double *p_wait)
{
    struct sim_opts o;
    sim_opts_init(&o, model);
    profile_zero(&o.prof);
    o.cores = c;
    o.pool_min = o.pool_max = c;
    o.pool_queue = 100000000;
    o.conns = n;
    o.lines_per_conn = 1;
    o.duration_s = 0;
    o.service_exp_us = 100;
    double lambda = rho * c / 100e-6;     /* per second */
    o.ramp_s = n / lambda;
    o.random_connects = true;
    o.seed = 11;
    struct sim_report *r = malloc(sizeof(*r));
    run_checked(&o, r);
    ck_assert_uint_eq(r->lines_ok, n);
    ck_assert_uint_eq(r->waits, n);
    double w = r->mean_wait_ns;
    *p_wait = r->p_wait;
    free(r);
    return w;
}

static const struct { int c; double rho; } mmc_cases[] = {
    { 1, 0.5 }, { 1, 0.8 }, { 1, 0.9 },
    { 4, 0.5 }, { 4, 0.8 }, { 4, 0.9 },
    { 16, 0.5 }, { 16, 0.8 }, { 16, 0.9 },
};

/* Under the sanitizers (10x slower) the same paths run on fewer requests,
 * for memory and race errors; the 3% check is the plain build's. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif
static const double tolerance = SANITIZED ? 0.5 : 0.03;

/* Near saturation the mean converges slowly; at low load with many
 * servers few requests wait at all: more requests in both. */
static uint32_t requests_for(int c, double rho)
{
    if (SANITIZED)
        return 100000;
    if (rho < 0.6)   /* M/M/16 at 0.5: 1 request in 110 waits at all */
        return c == 1 ? 300000 : c == 4 ? 3000000 : 8000000;
    return rho < 0.85 ? 1000000 : 3000000;
}

START_TEST(pool_matches_erlang_c)
{
    int c = mmc_cases[_i].c;
    double rho = mmc_cases[_i].rho;
    double theory = erlang_c_wait(c, rho * c / 100e-6, 1 / 100e-6) * 1e9;
    double p_theory = erlang_c_p_wait(c, rho * c / 100e-6, 1 / 100e-6), p_sim;
    double sim = simulated_wait_ns(SIM_POOL, c, rho, requests_for(c, rho), &p_sim);
    printf("M/M/%d rho %.1f: Erlang C wait %.2f us, pool simulated %.2f us (%+.1f%%); "
           "P(wait) %.4f, simulated %.4f\n", c, rho, theory / 1e3, sim / 1e3,
           100 * (sim - theory) / theory, p_theory, p_sim);
    ck_assert_msg(fabs(sim - theory) / theory < tolerance, "off by %.1f%%",
                  100 * (sim - theory) / theory);
    ck_assert_msg(fabs(p_sim - p_theory) / p_theory < tolerance, "P(wait) off by %.1f%%",
                  100 * (p_sim - p_theory) / p_theory);
}
END_TEST

static const double mm1_rhos[] = { 0.5, 0.8, 0.9 };

START_TEST(reactor_matches_m_m_1)
{
    double rho = mm1_rhos[_i];
    double lambda = rho / 100e-6, mu = 1 / 100e-6;
    double theory = rho / (mu - lambda) * 1e9;
    double p_sim;
    double sim = simulated_wait_ns(SIM_REACTOR, 1, rho, requests_for(1, rho), &p_sim);
    printf("M/M/1 rho %.1f: theory wait %.2f us, reactor simulated %.2f us (%+.1f%%)\n",
           rho, theory / 1e3, sim / 1e3, 100 * (sim - theory) / theory);
    ck_assert_msg(fabs(sim - theory) / theory < tolerance, "off by %.1f%%",
                  100 * (sim - theory) / theory);
}
END_TEST

/* ---- determinism -------------------------------------------------------------------- */

static char *report_json(const struct sim_opts *o)
{
    struct sim_report *r = malloc(sizeof(*r));
    run_checked(o, r);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    sim_report_json(o, r, f);
    fclose(f);
    free(r);
    return buf;
}

START_TEST(same_seed_same_run_other_seed_other_run)
{
    for (int m = 0; m < SIM_MODEL_COUNT; m++) {
        struct sim_opts o;
        sim_opts_init(&o, (enum sim_model)m);
        o.cores = 4;
        o.conns = 300;
        o.duration_s = 0.5;
        o.think_us = 200;
        o.cpu_pct = 10;
        o.cpu_us = 50;
        o.sleep_pct = 1;
        o.sleep_ms = 5;
        o.offload = m >= SIM_REACTOR ? 2 : 0;
        o.pool_max = 400;
        o.seed = 5;
        char *a = report_json(&o), *b = report_json(&o);
        ck_assert_str_eq(a, b);
        o.seed = 6;
        char *c = report_json(&o);
        ck_assert_msg(strcmp(a, c) != 0, "%s: seeds 5 and 6 gave the same run",
                      sim_model_name((enum sim_model)m));
        free(a);
        free(b);
        free(c);
    }
}
END_TEST

/* ---- the lessons ---------------------------------------------------------------------- */

static void run(const struct sim_opts *o, struct sim_report *r)
{
    run_checked(o, r);
}

/* ---- the scheduler (sim/machine.c), on its own ------------------------------- */

/* A bare machine: threads that run one burst each and then block; when
 * each burst ended is noted. Test events (kind 1) wake a thread. */
enum { EV_TEST_CORE, EV_TEST_WAKE, TEST_THREADS = 64 };

struct bare {
    struct des_engine eng;
    struct machine m;
    struct profile prof;
    uint32_t t[TEST_THREADS];
    vtime_t burst_ns[TEST_THREADS];      /* what each asks for when woken */
    vtime_t done_at[TEST_THREADS];       /* when its burst ended (0: not yet) */
    int wakes[TEST_THREADS];             /* whom its burst's end wakes, at once
                                            (as a write wakes a reader), or -1 */
    vtime_t busy_ns;                     /* the cores' busy time, at the end */
};

static void bare_done(void *ctx, uint32_t t)
{
    struct bare *b = ctx;
    for (int i = 0; i < TEST_THREADS; i++)
        if (b->t[i] == t) {
            b->done_at[i] = b->eng.now;
            if (b->wakes[i] >= 0)
                ck_assert_int_eq(des_schedule(&b->eng, 0, EV_TEST_WAKE,
                                              (uint32_t)b->wakes[i], 0), 0);
        }
    machine_block(&b->m, t);
}

static void bare_init(struct bare *b, int cores)
{
    memset(b, 0, sizeof(*b));
    profile_zero(&b->prof);
    ck_assert_int_eq(des_init(&b->eng, 64), 0);
    ck_assert_int_eq(machine_init(&b->m, &b->eng, &b->prof, cores, EV_TEST_CORE, bare_done,
                                  b), 0);
    for (int i = 0; i < TEST_THREADS; i++) {
        b->t[i] = machine_spawn(&b->m, (uint32_t)i);
        b->wakes[i] = -1;
    }
}

/* Thread i is woken at_ns from the start, for a burst of burst_ns. */
static void bare_wake_at(struct bare *b, int i, vtime_t at_ns, vtime_t burst_ns)
{
    b->burst_ns[i] = burst_ns;
    ck_assert_int_eq(des_schedule(&b->eng, at_ns, EV_TEST_WAKE, (uint32_t)i, 0), 0);
}

/* Run the events up to `until` ns (the next one after it stays queued). */
static void bare_run_until(struct bare *b, vtime_t until)
{
    struct des_event ev;
    while (b->eng.len > 0 && b->eng.heap[0].at <= until && des_next(&b->eng, &ev)) {
        if (ev.kind == EV_TEST_CORE)
            machine_core_event(&b->m, ev.id, ev.gen);
        else if (b->m.threads[b->t[ev.id]].state == VT_BLOCKED)
            machine_run(&b->m, b->t[ev.id], b->burst_ns[ev.id], 0);
    }
}

static void bare_run(struct bare *b)
{
    struct des_event ev;
    while (des_next(&b->eng, &ev)) {
        if (ev.kind == EV_TEST_CORE)
            machine_core_event(&b->m, ev.id, ev.gen);
        else if (b->m.threads[b->t[ev.id]].state == VT_BLOCKED)  /* else: still busy */
            machine_run(&b->m, b->t[ev.id], b->burst_ns[ev.id], 0);
    }
    b->busy_ns = machine_busy_ns(&b->m);
    machine_free(&b->m);
    des_free(&b->eng);
}

/* EEVDF's wakeup preemption: on one core, a thread woken while a hog
 * runs takes the core at once if the hog has used its slice (the
 * granularity: its vruntime is past its virtual deadline), and waits for
 * the hog's burst if not (the hog is still inside its slice and its
 * deadline comes first, or wakeup preemption is off: the old FIFO
 * machine). No time slice, so nothing else preempts. */
START_TEST(a_woken_thread_preempts_a_hog_past_the_granularity)
{
    static const struct {
        double gran_ns;
        vtime_t wake_at_ns;
        vtime_t sleeper_done_ns, hog_done_ns;
    } cases[] = {
        { 1e6, 5000000, 5001000, 10001000 },   /* hog 5 ms in, slice 1 ms: preempted */
        { 1e6, 500000, 10001000, 10000000 },   /* hog 0.5 ms in: not yet */
        { 0, 5000000, 10001000, 10000000 },    /* off: the sleeper waits its turn */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct bare b;
        bare_init(&b, 1);
        b.prof.wakeup_granularity_ns = cases[i].gran_ns;
        bare_wake_at(&b, 0, 0, 10000000);                /* the hog: 10 ms */
        bare_wake_at(&b, 1, cases[i].wake_at_ns, 1000);  /* a sleeper: 1 us */
        bare_run(&b);
        printf("1 core, granularity %.1f ms, a sleeper woken at %.1f ms: done at %.3f ms, "
               "the hog at %.3f ms\n", cases[i].gran_ns / 1e6, cases[i].wake_at_ns / 1e6,
               b.done_at[1] / 1e6, b.done_at[0] / 1e6);
        ck_assert_uint_eq(b.done_at[1], cases[i].sleeper_done_ns);
        ck_assert_uint_eq(b.done_at[0], cases[i].hog_done_ns);
    }
}
END_TEST

/* An always-runnable thread among many sleepers that wake faster than
 * it can switch back (BIO's acceptor under 100 000 connections): each of
 * its turns on the core lasts at least two switches, so its 1 ms of work
 * gets done while 63 sleepers, in turn, wake every 3 us for 10 ms (each
 * runs seldom, so each comes back far behind it in vruntime). Preempted
 * at every wakeup it would pay switch after switch and finish only when
 * they stop. */
START_TEST(wakeups_do_not_starve_a_busy_thread)
{
    struct bare b;
    bare_init(&b, 1);
    b.prof.wakeup_granularity_ns = 1000;
    b.prof.context_switch_ns = 2000;
    bare_wake_at(&b, 0, 0, 1000000);                     /* the busy one: 1 ms */
    for (vtime_t at = 100000; at < 10000000; at += 3000) {
        int i = 1 + (int)((at / 3000) % (TEST_THREADS - 1));
        b.burst_ns[i] = 1000;
        ck_assert_int_eq(des_schedule(&b.eng, at, EV_TEST_WAKE, (uint32_t)i, 0), 0);
    }
    bare_run(&b);
    printf("1 core, one of 63 sleepers woken every 3 us: the busy thread's 1 ms done at "
           "%.3f ms\n",
           b.done_at[0] / 1e6);
    ck_assert_uint_lt(b.done_at[0], 8000000);
}
END_TEST

/* What coming onto a core costs: a thread woken onto an idle core pays
 * wakeup_cpu_ns of CPU (and starts wakeup_ns later); one taken from the
 * run queue onto a core its predecessor left pays context_switch_ns.
 * Two threads woken at once on one core: the first 5 + 20 + 1 us, the
 * second after it, 1 + 1 us more. */
START_TEST(an_idle_core_wakeup_costs_wakeup_cpu_ns_a_switch_costs_context_switch_ns)
{
    struct bare b;
    bare_init(&b, 1);
    b.prof.wakeup_ns = 5000;
    b.prof.wakeup_cpu_ns = 20000;
    b.prof.context_switch_ns = 1000;
    bare_wake_at(&b, 0, 0, 1000);
    bare_wake_at(&b, 1, 0, 1000);
    bare_run(&b);
    printf("1 core: woken onto the idle core, done at %.1f us; from the run queue, %.1f "
           "us; busy %.1f us\n", b.done_at[0] / 1e3, b.done_at[1] / 1e3,
           b.busy_ns / 1e3);
    ck_assert_uint_eq(b.done_at[0], 26000);
    ck_assert_uint_eq(b.done_at[1], 28000);
    ck_assert_uint_eq(b.busy_ns, 23000);
}
END_TEST

/* Where a woken thread goes when its last core is busy and the other is
 * idle (Linux's SIS_UTIL). Thread A runs on core 0 at the start and
 * blocks; hogs take both cores from 10 us. On a quiet machine (A woken
 * at 20 us, one hog: the cores' average utilization is still near 0) A
 * takes the idle core at once and pays cross_core_ns for the move. On a
 * busy one (both hogs, the one on core 1 for 100 ms: u = 0.89 when A is
 * woken at 100.5 ms, 0.89 x 1.17 >= 1) it looks at no other core and
 * waits on core 0: until that hog's 300 ms end with no balancer, or
 * until the balancer (every 4 ms) moves it, once core 0's load average
 * is a thread above core 1's (32 ms on: at 136 ms); with idle_search_pct
 * 0 it always looks, and takes core 1 at once. */
START_TEST(a_woken_thread_looks_for_an_idle_core_only_on_a_quiet_machine)
{
    static const struct {
        bool busy;
        double search_pct, balance_ns;
        vtime_t lo_ns, hi_ns;             /* when A's second burst ends */
    } cases[] = {
        { false, 117, 0, 26000, 26000 },          /* 20 + 5 (the move) + 1 us */
        { true, 117, 0, 300011000, 300011000 },   /* behind the hog */
        { true, 117, 4e6, 132500000, 136006000 }, /* the balancer moves it */
        { true, 0, 0, 100506000, 100506000 },     /* it always looks */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct bare b;
        bare_init(&b, 2);
        b.prof.cross_core_ns = 5000;
        b.prof.idle_search_pct = cases[i].search_pct;
        b.prof.balance_interval_ns = cases[i].balance_ns;
        bare_wake_at(&b, 0, 0, 1000);                     /* A: core 0, then blocks */
        bare_wake_at(&b, 1, 10000, 300000000);            /* a hog: core 0, 300 ms */
        if (cases[i].busy)
            bare_wake_at(&b, 2, 10000, 100000000);        /* and one on core 1, 100 ms */
        vtime_t wake_at = cases[i].busy ? 100500000 : 20000;
        bare_run_until(&b, wake_at - 1);
        ck_assert_int_eq(b.m.threads[b.t[1]].core, 0);
        bare_wake_at(&b, 0, wake_at - b.eng.now, 1000);   /* A again */
        bare_run(&b);
        printf("2 cores, %s machine, idle_search_pct %.0f, balancer every %.0f ms: A woken "
               "behind a hog, done at %.3f ms\n", cases[i].busy ? "a busy" : "a quiet",
               cases[i].search_pct, cases[i].balance_ns / 1e6, b.done_at[0] / 1e6);
        ck_assert_uint_ge(b.done_at[0], cases[i].lo_ns);
        ck_assert_uint_le(b.done_at[0], cases[i].hi_ns);
    }
}
END_TEST

/* The waker pays its part of an idle core's wakeup (wakeup_ipi_ns: the
 * interrupt its write sends), the woken thread the rest: W's 10 us burst
 * ends and wakes B, who never ran, onto idle core 1 (B: 5 us later, 20 -
 * 15 us of CPU, then its 1 us); W has blocked meanwhile, so it pays its
 * 15 us on its next burst (woken at 100 us onto its idle core 0: 5 + 20
 * + 15 + 10 us). */
START_TEST(the_waker_pays_the_wakeups_interrupt)
{
    struct bare b;
    bare_init(&b, 2);
    b.prof.wakeup_ns = 5000;
    b.prof.wakeup_cpu_ns = 20000;
    b.prof.wakeup_ipi_ns = 15000;
    b.wakes[0] = 1;
    b.burst_ns[1] = 1000;
    bare_wake_at(&b, 0, 0, 10000);       /* W: 5 + 20 + 10 us on core 0 */
    bare_run_until(&b, 50000);
    b.wakes[0] = -1;
    bare_wake_at(&b, 0, 100000 - b.eng.now, 10000);
    bare_run(&b);
    printf("2 cores: W done at %.1f us, B (woken by W) at %.1f us, W again at %.1f us\n",
           35.0, b.done_at[1] / 1e3, b.done_at[0] / 1e3);
    ck_assert_uint_eq(b.done_at[1], 35000 + 5000 + 5000 + 1000);
    ck_assert_uint_eq(b.done_at[0], 100000 + 5000 + 20000 + 15000 + 10000);
}
END_TEST

/* One connection, its client on the machine, two cores: the woken thread
 * does not take its waker's core (the waker is still in the write() that
 * wakes it), so client and server each keep a core, and every line wakes
 * an idle core twice, as calibrate's ping-pong and this VM's quiet runs
 * do (50-62 us of CPU a line where the syscalls are 14). */
START_TEST(one_connection_wakes_an_idle_core_twice_a_line)
{
    struct sim_opts o;
    struct sim_report *r = malloc(sizeof(*r));
    double cpu_us[2];
    for (int with = 0; with < 2; with++) {
        sim_opts_init(&o, SIM_REACTOR);
        o.cores = 2;
        o.client_on_machine = true;
        o.duration_s = 0.5;
        o.prof.wakeup_cpu_ns = with ? 20000 : 0;
        run(&o, r);
        cpu_us[with] = r->cpu_busy_pct / 100 * 2 * r->window_s * 1e6 / r->window_lines;
        ck_assert_double_eq_tol((double)r->context_switches / r->lines_ok, 2, 0.01);
    }
    printf("reactor, 1 conn, client on 2 cores: %.1f us of CPU a line, %.1f with an idle "
           "wakeup of 20 us\n", cpu_us[0], cpu_us[1]);
    ck_assert_double_eq_tol(cpu_us[1] - cpu_us[0], 40, 0.5);
    free(r);
}
END_TEST


/* Little's law on runs that lose lines: BIO's connections past
 * --max-threads are refused with the lines they sent, the pool refuses
 * past its queue and leaves some waiting at the end. The same open-loop
 * run, with offload and sleeps, on the loop models (a channel on its
 * loop's ready list while its offloaded line waits for the business
 * pool) loses none: a connection refused at the accept queue has sent no
 * line, and a loop answers every line of one it took. */
START_TEST(littles_law_holds_when_lines_are_lost)
{
    struct sim_report *r = malloc(sizeof(*r));
    for (int m = 0; m < SIM_MODEL_COUNT; m++) {
        struct sim_opts o;
        sim_opts_init(&o, (enum sim_model)m);
        o.conns = 400;
        o.duration_s = 0.2;
        o.max_threads = 100;             /* bio refuses past it */
        o.pool_max = 8;
        o.pool_queue = 50;               /* the pool refuses, and leaves some waiting */
        o.backlog = 300;                 /* the loops refuse at the accept queue */
        o.ramp_s = 0.01;
        o.rate = 400000;
        o.sleep_pct = 2;
        o.sleep_ms = 1;
        o.offload = m >= SIM_REACTOR ? 2 : 0;
        run_checked(&o, r);
        printf("%s: L %.3f, lambda x W %.3f, %llu of %llu lines lost\n",
               sim_model_name(o.model), r->mean_in_system,
               r->arrival_per_s * r->sojourn_ns / 1e9, (unsigned long long)r->lines_lost,
               (unsigned long long)r->lines_sent);
        ck_assert_uint_gt(r->lines_sent, 0);     /* else the law held of nothing */
        bool loses_lines = m == SIM_BIO || m == SIM_POOL;
        ck_assert_msg(loses_lines ? r->lines_lost > 0 : r->lines_lost == 0,
                      "%s: %llu lines lost, where the run should lose %s",
                      sim_model_name(o.model), (unsigned long long)r->lines_lost,
                      loses_lines ? "some" : "none");
    }
    free(r);
}
END_TEST

/* Open loop at a rate whose period is no whole number of nanoseconds
 * (33 333.3 ns): a line is timed from when it was sent, to the
 * nanosecond, so no latency is negative (it wrapped to 1.8e19 ns when the
 * next send was the period rounded down and the latency's start was not),
 * L = lambda x W holds, and 10 s send rate x duration lines (not 300 003). */
START_TEST(open_loop_sends_when_it_says_it_does)
{
    struct sim_report *r = malloc(sizeof(*r));
    for (int zero = 1; zero >= 0; zero--) {
        struct sim_opts o;
        sim_opts_init(&o, SIM_REACTOR);
        if (zero)
            profile_zero(&o.prof);
        o.rate = 30000;
        o.duration_s = 10;
        run_checked(&o, r);
        double max_ns = (double)atomic_load(&r->latency_ns.max);
        printf("open loop, %s profile: %llu lines sent, latency max %.0f ns, mean %.1f ns, "
               "L %.4f\n", zero ? "zero" : "built-in", (unsigned long long)r->lines_sent,
               max_ns, r->mean_latency_ns, r->mean_in_system);
        ck_assert_double_le(max_ns, r->virtual_s * 1e9);
        if (zero)
            ck_assert_double_eq(r->mean_latency_ns, 0);
        ck_assert_uint_ge(r->lines_sent, 300000 - 1);
        ck_assert_uint_le(r->lines_sent, 300000 + 1);
    }
    free(r);
}
END_TEST

/* A woken BIO thread may wait for a core: that is its line's wait. Two
 * connections on one core, 100 us of CPU a line, no think time: while one
 * thread runs, the other's line waits its 100 us in the run queue. (A wait
 * that stopped at the wakeup read 0 here.) */
START_TEST(bio_waits_in_the_run_queue)
{
    struct sim_opts o;
    struct sim_report *r = malloc(sizeof(*r));
    sim_opts_init(&o, SIM_BIO);
    profile_zero(&o.prof);
    o.cores = 1;
    o.conns = 2;
    o.duration_s = 1;
    o.cpu_pct = 100;
    o.cpu_us = 100;
    run(&o, r);
    printf("bio, 2 conns on 1 core, 100 us a line: wait %.2f us, P(wait) %.3f\n",
           r->mean_wait_ns / 1e3, r->p_wait);
    ck_assert_double_eq_tol(r->mean_wait_ns, 100e3, 1e3);
    ck_assert_double_ge(r->p_wait, 0.99);
    free(r);
}
END_TEST

/* A reply leaves once its write() is paid for, in every model: with a
 * 1 ms write and nothing else costing anything, every latency is 1 ms. */
START_TEST(every_model_pays_the_write_before_the_reply)
{
    struct sim_report *r = malloc(sizeof(*r));
    for (int m = 0; m < SIM_MODEL_COUNT; m++) {
        struct sim_opts o;
        sim_opts_init(&o, (enum sim_model)m);
        profile_zero(&o.prof);
        o.prof.write_ns = 1e6;
        o.lines_per_conn = 20;
        o.duration_s = 0;
        o.offload = m == SIM_MULTIREACTOR ? 1 : 0;   /* the task's write too */
        o.cpu_pct = m == SIM_MULTIREACTOR ? 50 : 0;
        o.cpu_us = 1;
        run(&o, r);
        printf("%s, a 1 ms write: mean latency %.3f ms\n", sim_model_name(o.model),
               r->mean_latency_ns / 1e6);
        ck_assert_uint_eq(r->lines_ok, 20);
        ck_assert_double_ge(r->mean_latency_ns, 1e6);
    }
    free(r);
}
END_TEST

/* With constant costs one connection's latencies are all alike; drawn
 * from a distribution (wakeup_sigma, syscall_sigma), they have a tail. */
START_TEST(spread_costs_give_latency_a_tail)
{
    struct sim_opts o;
    struct sim_report *r = malloc(sizeof(*r));
    sim_opts_init(&o, SIM_BIO);
    o.duration_s = 1;
    run(&o, r);
    double flat50 = (double)hist_percentile(&r->latency_ns, 50);
    double flat99 = (double)hist_percentile(&r->latency_ns, 99);
    o.prof.wakeup_sigma = 0.5;
    o.prof.syscall_sigma = 0.5;
    run(&o, r);
    double p50 = (double)hist_percentile(&r->latency_ns, 50);
    double p99 = (double)hist_percentile(&r->latency_ns, 99);
    printf("bio, 1 conn: p50 %.1f us p99 %.1f us with constant costs; %.1f / %.1f us "
           "with sigma 0.5\n", flat50 / 1e3, flat99 / 1e3, p50 / 1e3, p99 / 1e3);
    ck_assert_double_le(flat99, flat50 * 1.1);
    ck_assert_double_ge(p99, p50 * 1.5);
    free(r);
}
END_TEST

/* cross_core_ns is paid by a thread that comes onto another core than
 * last time (the scheduler tests above check the charge itself). One BIO
 * connection and its client on two cores: each keeps a core (a woken
 * thread goes back to its last core when it is idle), nothing moves once
 * the connection is set up, and a dear move changes nothing; sixteen
 * keep both cores busy and, looking for an idle core at every wakeup
 * (idle_search_pct 0), threads move now and then, each move paying it. */
START_TEST(a_move_to_another_core_costs_cross_core_ns)
{
    struct sim_opts o;
    struct sim_report *r = malloc(sizeof(*r));
    double rate[2][2];                   /* [1 or 16 conns][without, with] */
    uint64_t moves[2];
    for (int many = 0; many < 2; many++)
        for (int with = 0; with < 2; with++) {
            sim_opts_init(&o, SIM_BIO);
            o.cores = 2;
            o.client_on_machine = true;
            o.conns = many ? 16 : 1;
            o.duration_s = 0.5;
            o.prof.idle_search_pct = 0;
            o.prof.cross_core_ns = with ? 100000 : 0;
            run(&o, r);
            rate[many][with] = r->lines_per_s;
            moves[many] = r->migrations;
        }
    printf("bio, 2 cores, clients on them: 1 conn %.0f -> %.0f lines/s, 16 conns "
           "%.0f -> %.0f lines/s with a move to another core of 100 us (%llu and %llu "
           "moves)\n", rate[0][0], rate[0][1], rate[1][0], rate[1][1],
           (unsigned long long)moves[0], (unsigned long long)moves[1]);
    ck_assert_uint_le(moves[0], 4);      /* the acceptor and the first line */
    ck_assert_double_ge(rate[0][1], 0.999 * rate[0][0]);
    ck_assert_uint_gt(moves[1], moves[0]);
    ck_assert_double_lt(rate[1][1], rate[1][0]);   /* equal if the moves paid nothing */
    free(r);
}
END_TEST

/* !task lines (--mix task=US:PCT): on a loop, the CPU is queued as a
 * task and runs under the io ratio; plain lines are read and answered
 * first while channels are ready. With ioRatio 100 tasks run as soon as
 * they are queued and plain lines wait behind them. In a blocking model
 * the CPU is burnt on the connection's thread. */
START_TEST(task_lines_run_under_the_io_ratio)
{
    struct sim_opts o;
    struct sim_report *r = malloc(sizeof(*r));
    sim_opts_init(&o, SIM_REACTOR);
    o.conns = 20;
    o.duration_s = 0.5;
    o.task_pct = 50;
    o.task_us = 200;
    run(&o, r);
    double budgeted_p50 = (double)hist_percentile(&r->latency_ns, 50);
    uint64_t budgeted_ok = r->lines_ok;
    o.io_ratio = 100;
    run(&o, r);
    double all_p50 = (double)hist_percentile(&r->latency_ns, 50);
    printf("reactor, half the lines !task 200: p50 %.1f us at ioRatio 50, %.1f us at 100 "
           "(%llu and %llu lines)\n", budgeted_p50 / 1e3, all_p50 / 1e3,
           (unsigned long long)budgeted_ok, (unsigned long long)r->lines_ok);
    ck_assert_double_lt(budgeted_p50, 0.5 * all_p50);
    ck_assert_double_eq_tol((double)budgeted_ok, (double)r->lines_ok, 0.05 * r->lines_ok);
    sim_opts_init(&o, SIM_BIO);                    /* on the thread: CPU-bound */
    profile_zero(&o.prof);
    o.cores = 4;
    o.conns = 64;
    o.duration_s = 2;
    o.task_pct = 100;
    o.task_us = 1000;
    run(&o, r);
    printf("bio, every line !task 1000 on 4 cores: %.0f lines/s\n", r->lines_per_s);
    ck_assert_double_eq_tol(r->lines_per_s, 4000, 80);
    free(r);
}
END_TEST

/* Rates are over the sending window: the drain and the think tail after
 * it (the last clients' think times run out with nothing to send) are
 * reported on their own, not averaged in. Saturated on 1 ms lines, the
 * cores are busy all the while the clients send. */
START_TEST(rates_and_cpu_are_over_the_sending_window)
{
    struct sim_opts o;
    struct sim_report *r = malloc(sizeof(*r));
    sim_opts_init(&o, SIM_BIO);
    o.conns = 2000;
    o.duration_s = 2;
    o.think_us = 50000;
    o.cpu_pct = 100;
    o.cpu_us = 1000;
    run(&o, r);
    printf("window %.3f s, drain %.3f s: %.0f lines/s, CPU %.1f%% busy while sending\n",
           r->window_s, r->drain_s, r->lines_per_s, r->cpu_busy_pct);
    ck_assert_double_eq(r->window_s, 2);
    ck_assert_double_gt(r->drain_s, 0.2);
    ck_assert_double_eq_tol(r->lines_per_s, r->window_lines / 2.0, 1e-6);
    ck_assert_uint_le(r->window_lines, r->lines_ok);
    ck_assert_double_ge(r->cpu_busy_pct, 99);
    free(r);
}
END_TEST

/* 1% of lines !sleep 100: a reactor's p99 is at least 100 ms (every line
 * behind a sleep waits for it); a multi-reactor that offloads does not. */
START_TEST(a_sleeping_handler_stalls_the_reactor_not_an_offloading_multireactor)
{
    struct sim_opts o;
    struct sim_report *r = malloc(sizeof(*r));
    sim_opts_init(&o, SIM_REACTOR);
    o.cores = 8;
    o.conns = 200;
    o.duration_s = 5;
    o.think_us = 1000;
    o.sleep_pct = 1;
    o.sleep_ms = 100;
    run(&o, r);
    double reactor_p99 = (double)hist_percentile(&r->latency_ns, 99);
    o.model = SIM_MULTIREACTOR;
    o.offload = 64;
    run(&o, r);
    double multi_p99 = (double)hist_percentile(&r->latency_ns, 99);
    double multi_p90 = (double)hist_percentile(&r->latency_ns, 90);
    printf("1%% !sleep 100: reactor p99 %.1f ms, multireactor+offload p99 %.1f ms "
           "(p90 %.2f ms)\n", reactor_p99 / 1e6, multi_p99 / 1e6, multi_p90 / 1e6);
    ck_assert_double_ge(reactor_p99, 100e6);
    /* Its p99 is the sleeping lines themselves (1%): just over 100 ms;
     * everyone else is answered in well under a millisecond. */
    ck_assert_double_lt(multi_p90, 1e6);
    ck_assert_double_lt(multi_p99, 0.5 * reactor_p99);
    free(r);
}
END_TEST

/* BIO with 100 000 connections holds 100 000 threads: 100 000 stacks. */
START_TEST(bio_holds_a_stack_per_connection)
{
    struct sim_opts o;
    struct sim_report *r = malloc(sizeof(*r));
    sim_opts_init(&o, SIM_BIO);
    o.cores = 16;
    o.conns = 100000;
    o.max_threads = 0;
    o.ramp_s = 2;
    o.duration_s = 10;
    o.think_us = 1e6;                    /* a line a second: mostly idle */
    run(&o, r);
    printf("BIO 100k conns: %u threads, %.1f GiB of stacks reserved\n", r->peak_threads,
           r->peak_stack_bytes / (1 << 30));
    ck_assert_uint_ge(r->peak_threads, 100000);          /* + the acceptor */
    ck_assert_uint_le(r->peak_threads, 100001);
    ck_assert_double_eq(r->peak_stack_bytes, r->peak_threads * 8192.0 * 1024);
    /* Resident: 24 KiB of stack and session touched, 16 KiB of kernel
     * stack a thread, 8 KiB a connection: 4.6 GiB, not 781 GiB. */
    printf("BIO 100k conns: %.2f GiB resident\n", r->peak_resident_bytes / (1 << 30));
    ck_assert_double_eq(r->peak_resident_bytes,
                        r->peak_threads * 40.0 * 1024 + 100000 * 8.0 * 1024);
    /* With Linux's default limit of threads the same run is refused. */
    o.max_threads = 32768;
    run(&o, r);
    ck_assert_msg(r->conns_refused == 100000 - 32767, "100 000 connections, a limit of "
                  "32 768 threads, the acceptor one of them: %llu refused, not 67 233",
                  (unsigned long long)r->conns_refused);
    free(r);
}
END_TEST

/* The thread limit is on the threads alive now, and binds every model
 * that makes threads on demand. Ten BIO clients connect 100 ms apart, and
 * each holds its thread for one 250 ms !sleep: three connection threads
 * overlap at most, so with the acceptor a limit of 4 refuses no one and a
 * limit of 3 refuses some; a limit that remembered the peak would refuse
 * every client after the first overlap. A pool that may grow to 64 stops
 * at the machine's 8 threads, and queues the rest. */
START_TEST(the_thread_limit_counts_the_threads_alive_now)
{
    struct sim_opts o;
    struct sim_report *r = malloc(sizeof(*r));
    sim_opts_init(&o, SIM_BIO);
    o.conns = 10;
    o.ramp_s = 1;
    o.lines_per_conn = 1;
    o.duration_s = 0;
    o.sleep_pct = 100;
    o.sleep_ms = 250;
    o.max_threads = 4;
    run(&o, r);
    printf("bio, 10 clients 100 ms apart, 250 ms each, limit 4: %u threads at most, "
           "%llu refused\n", r->peak_threads, (unsigned long long)r->conns_refused);
    ck_assert_msg(r->conns_refused == 0, "--max-threads 4: %llu of 10 clients refused, "
                  "though at most 3 connection threads and the acceptor are ever alive",
                  (unsigned long long)r->conns_refused);
    ck_assert_msg(r->peak_threads == 4, "--max-threads 4: %u threads were alive at "
                  "most, not 4 (the acceptor and 3 connections)", r->peak_threads);
    o.max_threads = 3;
    run(&o, r);
    printf("... limit 3: %u threads at most, %llu refused\n", r->peak_threads,
           (unsigned long long)r->conns_refused);
    ck_assert_msg(r->peak_threads == 3, "--max-threads 3: %u threads were alive at "
                  "most", r->peak_threads);
    ck_assert_msg(r->conns_refused > 0 && r->conns_refused < 10, "--max-threads 3: %llu "
                  "of 10 clients refused; some overlap past the limit, and a client that "
                  "comes after the others left must be served",
                  (unsigned long long)r->conns_refused);

    sim_opts_init(&o, SIM_POOL);
    o.conns = 64;
    o.duration_s = 1;
    o.think_us = 10000;
    o.pool_min = 1;
    o.pool_max = 64;
    o.max_threads = 8;
    run(&o, r);
    printf("pool, max 64, limit 8: %u threads at most, %llu refused, %llu never served\n",
           r->peak_threads, (unsigned long long)r->conns_refused,
           (unsigned long long)r->conns_unserved);
    ck_assert_msg(r->peak_threads <= 8, "the pool grew to %u threads on a machine "
                  "limited to 8", r->peak_threads);
    ck_assert_msg(r->peak_threads == 8, "the pool stopped at %u threads, below the "
                  "machine's 8", r->peak_threads);
    free(r);
}
END_TEST

/* CPU-bound lines saturate at cores / CPU per line: every model but the
 * single reactor, whose one loop uses one core. */
START_TEST(cpu_bound_saturates_at_cores_over_cpu_per_line)
{
    for (int m = 0; m < SIM_MODEL_COUNT; m++) {
        struct sim_opts o;
        struct sim_report *r = malloc(sizeof(*r));
        sim_opts_init(&o, (enum sim_model)m);
        profile_zero(&o.prof);
        o.prof.time_slice_ns = 3e6;
        o.cores = 4;
        o.conns = 64;
        o.pool_max = 64;
        o.workers = 4;
        o.duration_s = 4;
        o.cpu_pct = 100;
        o.cpu_us = 1000;                  /* 1 ms per line: 4000 lines/s on 4 cores */
        run(&o, r);
        printf("%s: %.0f lines/s CPU-bound (4 cores, 1 ms a line)\n",
               sim_model_name((enum sim_model)m), r->lines_per_s);
        double expect = m == SIM_REACTOR ? 1000 : 4000;
        ck_assert_double_eq_tol(r->lines_per_s, expect, expect * 0.02);
        free(r);
    }
}
END_TEST

/* Virtual threads against theory, no costs but the calls (seed 1):
 *   - every line a !sleep of S = 100 ms, 16 connections a carrier on 4:
 *     pinned, a carrier starts a call every S, so 4 / S = 40 lines/s;
 *   - with handoff, a carrier given up in a call gets a spare after
 *     H = --handoff-ms (on the monitor's tick, a quarter of H): each
 *     carrier starts a call every H, so 4 / H = 200 lines/s, the
 *     throughput the spares give back (BIO's bound here is 64 / S = 640);
 *     over D = 10 s of sending, the calls answered in it are those begun
 *     by D - S: 4 (D - S) / P over D, for a period P of S or H;
 *   - the calls in flight are lambda x S (Little's law on the calls):
 *     200 x 0.1 = 20, each on a thread of its own; a thread holds a
 *     carrier for no time between two calls (nothing costs here), so the
 *     threads are the 20 calls: the 4 carriers' own and 16 spares;
 *   - a spare back from its call keeps a carrier nobody holds, and a
 *     carrier gets one more whenever no call comes back within H: so
 *     4 / H is a floor, not the rate, when the monitor's tick (12 ms for
 *     H = 50) does not divide H; Little's law on the calls still holds;
 *   - two connections on one carrier: the second's first line waits for
 *     the first's call (S) pinned, for the handoff (H) else: its latency,
 *     the longest, is 2 S = 200 ms pinned and H + S = 120 ms with handoff;
 *   - on one carrier, exponential service and Poisson arrivals: M/M/1's
 *     mean wait (any order of service that does not look at the
 *     service times has the same mean). */
START_TEST(vthread_pinned_carriers_bound_throughput_handoff_restores_it)
{
    struct sim_opts o;
    struct sim_report *r = malloc(sizeof(*r));
    sim_opts_init(&o, SIM_VTHREAD);
    profile_zero(&o.prof);
    o.cores = 4;
    o.conns = 64;
    o.duration_s = 10;
    o.sleep_pct = 100;
    o.sleep_ms = 100;
    o.pin = true;
    run(&o, r);
    double pinned = r->lines_per_s;
    printf("vthread, 4 carriers, every line !sleep 100, pinned: %.1f lines/s (theory 40), "
           "%llu handoffs\n", pinned, (unsigned long long)r->handoffs);
    ck_assert_double_eq_tol(pinned, 4 * 9.9 / 0.1 / 10, 0.002 * 40);
    ck_assert_uint_eq(r->handoffs, 0);
    ck_assert_uint_eq(r->peak_threads, 4 + 2);        /* + the acceptor and the monitor */
    o.pin = false;
    run(&o, r);
    printf("... with --handoff-ms 20: %.1f lines/s (theory 200), %llu handoffs, %u spares "
           "at most (theory 16)\n", r->lines_per_s, (unsigned long long)r->handoffs,
           r->peak_spares);
    ck_assert_double_eq_tol(r->lines_per_s, 4 * 9.9 / 0.02 / 10, 0.002 * 200);
    ck_assert_uint_eq(r->peak_spares, 16);
    o.handoff_ms = 50;
    run(&o, r);
    double calls = r->lines_per_s * 10 / 9.9 * 0.1;       /* begun a second, x S */
    printf("... with --handoff-ms 50: %.1f lines/s (at least 80), %u spares at most: "
           "4 + %u threads for %.1f calls in flight\n", r->lines_per_s, r->peak_spares,
           r->peak_spares, calls);
    ck_assert_double_ge(r->lines_per_s, 4 * 9.9 / 0.05 / 10);
    ck_assert_double_le(r->lines_per_s, 64 / 0.1);
    ck_assert_double_eq_tol(4 + r->peak_spares, calls, 1);
    o.handoff_ms = 20;
    o.cores = 1;
    o.conns = 2;
    o.duration_s = 1;
    for (int pin = 1; pin >= 0; pin--) {
        o.pin = pin;
        run(&o, r);
        double max_ms = (double)atomic_load(&r->latency_ns.max) / 1e6;
        printf("vthread, 2 conns on 1 carrier, every line !sleep 100%s: latency max %.3f ms "
               "(theory %d)\n", pin ? ", pinned" : "", max_ms, pin ? 200 : 120);
        ck_assert_double_eq_tol(max_ms, pin ? 200 : 120, 0.001);
    }
    double p_wait;
    double lambda = 0.8 / 100e-6, mu = 1 / 100e-6;
    double theory = 0.8 / (mu - lambda) * 1e9;
    double sim = simulated_wait_ns(SIM_VTHREAD, 1, 0.8, SANITIZED ? 100000 : 1000000, &p_wait);
    printf("vthread, 1 carrier, M/M/1 rho 0.8: theory wait %.2f us, simulated %.2f us "
           "(%+.1f%%)\n", theory / 1e3, sim / 1e3, 100 * (sim - theory) / theory);
    ck_assert_msg(fabs(sim - theory) / theory < tolerance, "off by %.1f%%",
                  100 * (sim - theory) / theory);
    free(r);
}
END_TEST

/* A vthread's memory is the pages its stack touched, not its stack:
 * 10 000 mostly idle connections on 4 carriers hold 10 000 vthreads and
 * 6 threads; resident, 4 KiB of stack each (vt_stack_touched_kb) where
 * BIO holds 24 + 16 KiB a thread; reserved, --stack each. Each line a
 * vthread wakes for costs two switches and one park. */
START_TEST(vthread_memory_is_the_pages_touched)
{
    struct sim_opts o;
    struct sim_report *r = malloc(sizeof(*r));
    sim_opts_init(&o, SIM_VTHREAD);
    o.cores = 4;
    o.conns = 10000;
    o.ramp_s = 1;
    o.duration_s = 3;
    o.think_us = 1e6;
    run(&o, r);
    printf("vthread, 10 000 conns: %u threads, %llu vthreads, %.1f MiB resident, %.1f MiB "
           "of it vthread stacks; %.2f switches, %.2f parks a line\n", r->peak_threads,
           (unsigned long long)r->peak_vthreads, r->peak_resident_bytes / (1 << 20),
           r->peak_vthread_bytes / (1 << 20), (double)r->vt_switches / r->lines_ok,
           (double)r->vt_parks / r->lines_ok);
    ck_assert_uint_eq(r->peak_threads, 4 + 2);
    ck_assert_uint_eq(r->peak_vthreads, 10000);
    ck_assert_double_eq(r->peak_vthread_bytes, 10000 * 4.0 * 1024);
    ck_assert_double_eq(r->peak_resident_bytes,
                        6 * 40.0 * 1024 + 10000 * (8.0 + 4.0) * 1024);
    ck_assert_double_eq(r->peak_stack_bytes, 6 * 8192.0 * 1024 + 10000 * 64.0 * 1024);
    ck_assert_double_eq_tol((double)r->vt_switches / r->lines_ok, 2, 0.01);
    ck_assert_double_eq_tol((double)r->vt_parks / r->lines_ok, 1, 0.01);
    free(r);
}
END_TEST

/* Options that make no sense are refused, with a reason. */
START_TEST(bad_options_are_refused)
{
    struct sim_opts o;
    char err[128];
    sim_opts_init(&o, SIM_BIO);
    o.cores = 0;
    ck_assert_int_eq(sim_opts_check(&o, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "--cores"));
    sim_opts_init(&o, SIM_POOL);
    o.pool_min = 9;
    o.pool_max = 8;
    ck_assert_int_eq(sim_opts_check(&o, err, sizeof(err)), -1);
    sim_opts_init(&o, SIM_BIO);
    o.cpu_pct = 80;
    o.sleep_pct = 30;
    ck_assert_int_eq(sim_opts_check(&o, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "--mix"));
    sim_opts_init(&o, SIM_BIO);
    o.cpu_pct = NAN;                         /* NaN passes every < and > */
    ck_assert_int_eq(sim_opts_check(&o, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "finite"));
    sim_opts_init(&o, SIM_REACTOR);          /* 1e12 lines/s on one conn: a 0 ns period */
    o.rate = 1e12;
    ck_assert_int_eq(sim_opts_check(&o, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "--rate"));
    o.rate = 1e6;                            /* one a microsecond: the fastest allowed */
    ck_assert_int_eq(sim_opts_check(&o, err, sizeof(err)), 0);
    sim_opts_init(&o, SIM_BIO);
    ck_assert_int_eq(sim_opts_check(&o, err, sizeof(err)), 0);
}
END_TEST

START_TEST(a_profile_file_round_trips_and_bad_ones_are_refused)
{
    char dir[] = "/tmp/threadlab-profile-XXXXXX", path[96], err[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/p.profile", dir);
    struct profile a, b;
    profile_default(&a);
    a.wakeup_ns = 12345;
    ck_assert_int_eq(profile_save(&a, path), 0);
    profile_zero(&b);
    ck_assert_int_eq(profile_load(&b, path, err, sizeof(err)), 0);
    ck_assert_double_eq(b.wakeup_ns, 12345);
    ck_assert_double_eq(b.read_ns, a.read_ns);
    ck_assert_str_eq(b.measured, a.measured);
    /* A value the engine would spin on (NaN, a slice that rounds to 0 ns)
     * or a stack of nothing is refused like a typo. */
    static const char *const bad[] = { "nosuch_ns = 5\n", "read_ns = fast\n",
                                       "read_ns = -4\n", "read_ns = 5 6\n",
                                       "read_ns = nan\n", "wakeup_ns = inf\n",
                                       "stack_kb = 0\n", "time_slice_ns = 0.5\n",
                                       "syscall_p99 = 0.5\n", "wakeup_p999 = 5000\n" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        FILE *f = fopen(path, "w");
        fputs(bad[i], f);
        fclose(f);
        ck_assert_int_eq(profile_load(&b, path, err, sizeof(err)), -1);
        ck_assert_ptr_nonnull(strstr(err, "line 1"));
    }
    ck_assert_int_eq(profile_load(&b, "/nonexistent/x", err, sizeof(err)), -1);
    FILE *f = fopen(path, "w");              /* an empty file is not a profile */
    fclose(f);
    ck_assert_int_eq(profile_load(&b, path, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "not a profile"));
    ck_assert_int_eq(profile_load(&b, dir, err, sizeof(err)), -1);  /* a directory */
    ck_assert_ptr_nonnull(strstr(err, "directory"));
    unlink(path);
    rmdir(dir);
}
END_TEST


/* A profile from before version 2 (no version line, no sigma or
 * cross_core_ns keys: sim/profiles/default.profile as it was written
 * on 2026-11-30) loads, and what it lacks keeps its value, but for the
 * keys of version 3, which keep the old meaning; a version newer than
 * this one is refused, not half read. */
START_TEST(an_older_profile_loads_and_a_newer_one_is_refused)
{
    char dir[] = "/tmp/threadlab-profile-XXXXXX", path[96], err[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/old.profile", dir);
    FILE *f = fopen(path, "w");
    fputs("# threadlab simulator profile: nanoseconds unless the key says kb\n"
          "# measured: 2026-11-30, threadlab calibrate on vm\n"
          "# spread: write_ns 5.9%, read_ns 5.1%\n"
          "read_ns = 3349\nwrite_ns = 3515\nwakeup_ns = 25415\nstack_kb = 8192\n", f);
    fclose(f);
    struct profile p;
    profile_default(&p);
    p.cross_core_ns = 777;
    ck_assert_int_eq(profile_load(&p, path, err, sizeof(err)), 0);
    ck_assert_double_eq(p.read_ns, 3349);
    ck_assert_double_eq(p.cross_core_ns, 777);        /* not in the file: kept */
    ck_assert_double_eq(p.syscall_sigma, 0);
    ck_assert_str_eq(p.measured, "2026-11-30, threadlab calibrate on vm");
    /* Before version 3 its wakeup_ns was the whole wakeup, and nothing
     * preempted on a wakeup: it keeps that meaning. */
    ck_assert_double_eq(p.wakeup_cpu_ns, p.context_switch_ns);
    ck_assert_double_eq(p.wakeup_granularity_ns, 0);
    static const char *const versions[] = { "version = 1\nread_ns = 5\n",
                                            "version = 2\nread_ns = 5\n",
                                            "version = 3\nread_ns = 5\n",
                                            "version = 4\nread_ns = 5\n",
                                            "version = 5\nread_ns = 5\n",
                                            "version = 6\nread_ns = 5\n" };
    for (int i = 0; i < 6; i++) {
        f = fopen(path, "w");
        fputs(versions[i], f);
        fclose(f);
        profile_default(&p);
        ck_assert_int_eq(profile_load(&p, path, err, sizeof(err)), 0);
    }
    struct profile builtin;
    profile_default(&builtin);                       /* version 5 on: missing keys kept */
    ck_assert_double_eq(p.wakeup_cpu_ns, builtin.wakeup_cpu_ns);
    ck_assert_double_eq(p.wakeup_granularity_ns, builtin.wakeup_granularity_ns);
    ck_assert_double_eq(p.syscall_p999, builtin.syscall_p999);
    /* A file from before version 6 has no virtual threads' keys: they keep
     * the built-in values (vt_switch_ns 12 ns, measured on this VM). */
    f = fopen(path, "w");
    fputs("version = 5\nread_ns = 5\ncontext_switch_ns = 4000\n", f);
    fclose(f);
    profile_default(&p);
    ck_assert_int_eq(profile_load(&p, path, err, sizeof(err)), 0);
    ck_assert_double_eq(p.vt_switch_ns, builtin.vt_switch_ns);
    ck_assert_double_eq(p.vt_stack_touched_kb, builtin.vt_stack_touched_kb);
    ck_assert_double_eq(p.context_switch_ns, 4000);
    static const char *const refused[] = { "version = 7\nread_ns = 5\n",
                                           "version = 1.5\n", "version = nan\n" };
    for (int i = 0; i < 3; i++) {
        f = fopen(path, "w");
        fputs(refused[i], f);
        fclose(f);
        p.read_ns = 9;
        ck_assert_int_eq(profile_load(&p, path, err, sizeof(err)), -1);
        ck_assert_ptr_nonnull(strstr(err, "line 1: version"));
    }
    ck_assert_ptr_nonnull(strstr(err, "not a version"));
    unlink(path);
    rmdir(dir);
}
END_TEST

/* A damaged profile is refused with a message, never read without end:
 * a FIFO nobody writes (open would wait for a writer, a read for
 * data), /dev/zero (no newline, ever), a line longer than the reader
 * takes (a truncated or binary file), a file far bigger than a profile. */
START_TEST(a_damaged_profile_never_hangs)
{
    char dir[] = "/tmp/threadlab-profile-XXXXXX", path[96], err[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    struct profile p;
    profile_default(&p);
    snprintf(path, sizeof(path), "%s/fifo", dir);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    ck_assert_int_eq(profile_load(&p, path, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "not a regular file"));
    unlink(path);
    ck_assert_int_eq(profile_load(&p, "/dev/zero", err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "not a regular file"));
    snprintf(path, sizeof(path), "%s/long.profile", dir);
    FILE *f = fopen(path, "w");
    fputs("read_ns = 5\nwrite_ns = ", f);
    for (int i = 0; i < 600; i++)
        fputc('1', f);
    fputs("\n", f);
    fclose(f);
    ck_assert_int_eq(profile_load(&p, path, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "line 2: longer than"));
    f = fopen(path, "w");
    for (int i = 0; i < 10000; i++)
        fputs("# a comment line, many of them\n", f);
    fclose(f);
    ck_assert_int_eq(profile_load(&p, path, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "too big"));
    unlink(path);
    rmdir(dir);
}
END_TEST

/* syscall_sigma is the shape of reads and writes measured together: each
 * call against its own kind's median. Reads of 800 ns and writes of
 * 3 800, both drawn with shape 0.15: the shape comes out 0.15, where
 * pooling the two sizes as they are (calibrate before) reads whatever
 * the step between them gives: 0.50 here, 0.021 on this VM's calls. */
START_TEST(calibrate_takes_the_shape_of_two_kinds_of_call_apart)
{
    static double reads[5000], writes[5000], pooled[10000];
    struct rng r;
    rng_seed(&r, 3);
    for (int i = 0; i < 5000; i++) {
        pooled[i] = reads[i] = 800 * rng_lognormal_factor(&r, 0.15);
        pooled[5000 + i] = writes[i] = 3800 * rng_lognormal_factor(&r, 0.15);
    }
    double sigma = calibrate_shape_of_two(writes, 5000, reads, 5000);
    qsort(pooled, 10000, sizeof(*pooled), cmp_double);
    double naive = log(pooled[9000] / pooled[5000]) / 1.2816;
    printf("reads and writes of shape 0.15: %.3f each against its kind, %.3f pooled\n",
           sigma, naive);
    ck_assert_double_eq_tol(sigma, 0.15, 0.01);
    ck_assert_double_gt(fabs(naive - 0.15), 0.1);
}
END_TEST

/* calibrate's rule. A round is its calls' percentiles: five calls in a
 * thousand preempted for 3 ms (a busy machine) leave it at the typical
 * call (their mean would be 16 us). Rounds that disagree are refused; a
 * part of a pass a little below 0 is 0, far below is refused. */
START_TEST(calibrate_trusts_what_agrees_and_refuses_the_rest)
{
    static double calls[1000];
    for (int i = 0; i < 1000; i++)
        calls[i] = i % 200 == 7 ? 3e6 : 1000 + i % 10;
    double round = calibrate_round_figure(calls, 1000);
    ck_assert_double_ge(round, 1000);
    ck_assert_double_le(round, 1010);
    const double agree[5] = { 1000, 1100, 950, 1050, 1010 };
    struct calibrate_verdict v = calibrate_judge(agree, 5, false);
    ck_assert(v.trusted);
    ck_assert_double_eq(v.value, 1010);
    ck_assert_double_eq_tol(v.spread, 150.0 / 1010, 1e-9);
    const double moved[5] = { 1000, 1100, 950, 1050, 1400 };   /* 44% apart */
    ck_assert(!calibrate_judge(moved, 5, false).trusted);
    const double negative[5] = { -5, -4, -6, -5, -5 };
    ck_assert(!calibrate_judge(negative, 5, false).trusted);
    const double shapes[5] = { 0.10, 0.12, 0.20, 0.11, 0.13 };
    ck_assert(calibrate_judge(shapes, 5, true).trusted);          /* within 0.10 */
    const double wild[5] = { 0.10, 0.12, 0.40, 0.11, 0.13 };
    ck_assert(!calibrate_judge(wild, 5, true).trusted);
    const double wholes[5] = { 2500, 2500, 2500, 2500, 2500 };
    const double lost[5] = { -20, -40, 10, -30, -25 };              /* noise about 0 */
    v = calibrate_judge_part(lost, wholes, 5);
    ck_assert(v.trusted);
    ck_assert_double_eq(v.value, 0);
    const double short_by[5] = { -1000, -1100, -900, -1000, -950 }; /* 40% of the pass */
    v = calibrate_judge_part(short_by, wholes, 5);
    ck_assert(v.below_zero && !v.trusted);
    const double nan_parts[5] = { NAN, NAN, NAN, NAN, NAN };
    ck_assert(!calibrate_judge_part(nan_parts, wholes, 5).trusted);
    ck_assert(!calibrate_judge(agree, 0, false).trusted);
}
END_TEST

/* n calls of median 1 whose top 1% cost `p99` times it and top 0.1%
 * `p999` times: where each knot must land. */
static void tail_calls(double *v, int n, double p99, double p999)
{
    for (int i = 0; i < n; i++)
        v[i] = i >= n - n / 1000 ? p999 : i >= n - n / 100 ? p99 : 0.9 + 0.2 * i / n;
}

/* A tail knot is judged on all rounds' calls pooled, the even rounds
 * against the odd: halves that agree give the pooled knot (as calibrate
 * writes it, exp(value x z)); halves whose p99.9 differ five times are
 * refused, however well their p99 agrees. */
START_TEST(calibrate_judges_a_tail_in_two_halves)
{
    static double even[6000], odd[4000];
    tail_calls(even, 6000, 2.0, 8.0);
    tail_calls(odd, 4000, 2.0, 8.0);
    struct calibrate_verdict p99 = calibrate_judge_tail(even, 6000, odd, 4000, 99);
    struct calibrate_verdict p999 = calibrate_judge_tail(even, 6000, odd, 4000, 999);
    ck_assert(p99.trusted && p999.trusted);
    ck_assert_double_eq_tol(exp(p99.value * RNG_Z99), 2.0, 1e-3);
    ck_assert_double_eq_tol(exp(p999.value * RNG_Z999), 8.0, 1e-3);
    ck_assert_double_eq_tol(p999.spread, 0, 1e-9);
    tail_calls(odd, 4000, 2.0, 40.0);
    ck_assert(calibrate_judge_tail(even, 6000, odd, 4000, 99).trusted);
    p999 = calibrate_judge_tail(even, 6000, odd, 4000, 999);
    ck_assert(!p999.trusted);
    ck_assert_double_eq_tol(p999.spread, log(5.0) / RNG_Z999, 1e-3);
    ck_assert(!calibrate_judge_tail(even, 0, odd, 4000, 99).trusted);
}
END_TEST

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

/* Configuration i: any model, either profile, the clients above, and a
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

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);    /* the figures survive a failing fork */
    Suite *s = suite_create("des");
    TCase *engine = tcase_create("engine");
    tcase_set_timeout(engine, 120);      /* a hang guard: the tail cases draw millions */
    tcase_add_test(engine, events_come_out_in_time_order_ties_in_scheduling_order);
    tcase_add_test(engine, the_rng_repeats_for_a_seed);
    tcase_add_test(engine, the_lognormal_factor_has_mean_one);
    tcase_add_test(engine, a_cost_tail_puts_p99_and_p999_where_measured);
    tcase_add_test(engine, calibrate_judges_a_tail_in_two_halves);
    tcase_add_test(engine, bad_options_are_refused);
    tcase_add_test(engine, a_profile_file_round_trips_and_bad_ones_are_refused);
    tcase_add_test(engine, an_older_profile_loads_and_a_newer_one_is_refused);
    tcase_add_test(engine, a_damaged_profile_never_hangs);
    tcase_add_test(engine, calibrate_trusts_what_agrees_and_refuses_the_rest);
    tcase_add_test(engine, calibrate_takes_the_shape_of_two_kinds_of_call_apart);
    suite_add_tcase(s, engine);
    TCase *theory = tcase_create("queueing theory");
    tcase_set_timeout(theory, 600);      /* CPU-bound and deterministic: a guard against a hang only */
    tcase_add_loop_test(theory, pool_matches_erlang_c, 0,
                        (int)(sizeof(mmc_cases) / sizeof(mmc_cases[0])));
    tcase_add_loop_test(theory, reactor_matches_m_m_1, 0, 3);
    suite_add_tcase(s, theory);
    TCase *sched = tcase_create("scheduler");
    tcase_add_test(sched, a_woken_thread_preempts_a_hog_past_the_granularity);
    tcase_add_test(sched, wakeups_do_not_starve_a_busy_thread);
    tcase_add_test(sched, an_idle_core_wakeup_costs_wakeup_cpu_ns_a_switch_costs_context_switch_ns);
    tcase_add_test(sched, one_connection_wakes_an_idle_core_twice_a_line);
    tcase_add_test(sched, a_woken_thread_looks_for_an_idle_core_only_on_a_quiet_machine);
    tcase_add_test(sched, the_waker_pays_the_wakeups_interrupt);
    suite_add_tcase(s, sched);
    TCase *lessons = tcase_create("lessons");
    tcase_set_timeout(lessons, 600);     /* likewise */
    tcase_add_test(lessons, same_seed_same_run_other_seed_other_run);
    tcase_add_test(lessons, littles_law_holds_when_lines_are_lost);
    tcase_add_test(lessons, open_loop_sends_when_it_says_it_does);
    tcase_add_test(lessons, bio_waits_in_the_run_queue);
    tcase_add_test(lessons, spread_costs_give_latency_a_tail);
    tcase_add_test(lessons, a_move_to_another_core_costs_cross_core_ns);
    tcase_add_test(lessons, task_lines_run_under_the_io_ratio);
    tcase_add_test(lessons, every_model_pays_the_write_before_the_reply);
    tcase_add_test(lessons, rates_and_cpu_are_over_the_sending_window);
    tcase_add_test(lessons, a_sleeping_handler_stalls_the_reactor_not_an_offloading_multireactor);
    tcase_add_test(lessons, bio_holds_a_stack_per_connection);
    tcase_add_test(lessons, cpu_bound_saturates_at_cores_over_cpu_per_line);
    tcase_add_test(lessons, the_thread_limit_counts_the_threads_alive_now);
    tcase_add_test(lessons, vthread_pinned_carriers_bound_throughput_handoff_restores_it);
    tcase_add_test(lessons, vthread_memory_is_the_pages_touched);
    suite_add_tcase(s, lessons);
    TCase *props = tcase_create("properties");
    tcase_set_timeout(props, 60);
    tcase_add_loop_test(props, random_configurations_keep_the_laws, 0, props_count());
    suite_add_tcase(s, props);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
