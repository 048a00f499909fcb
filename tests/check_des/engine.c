/* engine.c -- the engine: events in time order, the random numbers, the
 * cost factors and their tail. */
#include "check_des.h"

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

void add_engine_tests(TCase *engine)
{
    tcase_add_test(engine, events_come_out_in_time_order_ties_in_scheduling_order);
    tcase_add_test(engine, the_rng_repeats_for_a_seed);
    tcase_add_test(engine, the_lognormal_factor_has_mean_one);
    tcase_add_test(engine, a_cost_tail_puts_p99_and_p999_where_measured);
}
