/* theory.c -- queueing theory: the pool against Erlang C (M/M/c), the
 * reactor against M/M/1. */
#include "check_des.h"

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
double simulated_wait_ns(enum sim_model model, int c, double rho, uint32_t n,
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

void add_theory_tests(TCase *theory)
{
    tcase_add_loop_test(theory, pool_matches_erlang_c, 0,
                        (int)(sizeof(mmc_cases) / sizeof(mmc_cases[0])));
    tcase_add_loop_test(theory, reactor_matches_m_m_1, 0, 3);
}
