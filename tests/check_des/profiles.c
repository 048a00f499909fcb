/* profiles.c -- options and profiles: bad ones refused, files that round
 * trip, older and damaged ones; calibrate's judgement of its rounds. */
#include "check_des.h"

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
    static const char *const refused[] = { "version = 8\nread_ns = 5\n",
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

/* Before version 7 a profile has no late wakeup of a core that idled
 * long nor of a timer: it gets the built-in's (0 and 34 us); a version 7
 * file sets them. */
START_TEST(a_version_7_profile_has_the_late_wakeups)
{
    char dir[] = "/tmp/threadlab-profile-XXXXXX", path[96], err[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/v6.profile", dir);
    FILE *f = fopen(path, "w");
    fputs("version = 6\nread_ns = 5\n", f);
    fclose(f);
    struct profile p, builtin;
    profile_default(&builtin);
    profile_default(&p);
    ck_assert_int_eq(profile_load(&p, path, err, sizeof(err)), 0);
    ck_assert_double_eq(p.wakeup_deep_ns, 0);
    ck_assert_double_eq(p.timer_late_ns, builtin.timer_late_ns);
    ck_assert_double_gt(builtin.timer_late_ns, 0);
    f = fopen(path, "w");
    fputs("version = 7\nwakeup_deep_after_ns = 50000\nwakeup_deep_ns = 12000\n"
          "wakeup_deep_p999 = 120\ntimer_late_ns = 34000\n", f);
    fclose(f);
    ck_assert_int_eq(profile_load(&p, path, err, sizeof(err)), 0);
    ck_assert_double_eq(p.wakeup_deep_ns, 12000);
    ck_assert_double_eq(p.wakeup_deep_p999, 120);
    ck_assert_double_eq(p.timer_late_ns, 34000);
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
    /* Rounds that agree on a shape no profile takes (3.11 was measured
     * beside a loaded ASan run): refused, not written for sim to refuse. */
    const double too_wide[5] = { 3.10, 3.11, 3.12, 3.11, 3.10 };
    v = calibrate_judge(too_wide, 5, true);
    ck_assert(v.beyond_shape_max && !v.trusted);
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
    /* Halves that agree on a knot no profile takes (a busy machine's
     * stalls): refused, so calibrate never writes a profile sim refuses. */
    tail_calls(even, 6000, 2.0, 6000.0);
    tail_calls(odd, 4000, 2.0, 6000.0);
    p999 = calibrate_judge_tail(even, 6000, odd, 4000, 999);
    ck_assert(p999.beyond_tail_max && !p999.trusted);
    ck_assert(calibrate_judge_tail(even, 6000, odd, 4000, 99).trusted);
}
END_TEST

void add_profile_tests(TCase *engine)
{
    tcase_add_test(engine, calibrate_judges_a_tail_in_two_halves);
    tcase_add_test(engine, bad_options_are_refused);
    tcase_add_test(engine, a_profile_file_round_trips_and_bad_ones_are_refused);
    tcase_add_test(engine, an_older_profile_loads_and_a_newer_one_is_refused);
    tcase_add_test(engine, a_version_7_profile_has_the_late_wakeups);
    tcase_add_test(engine, a_damaged_profile_never_hangs);
    tcase_add_test(engine, calibrate_trusts_what_agrees_and_refuses_the_rest);
    tcase_add_test(engine, calibrate_takes_the_shape_of_two_kinds_of_call_apart);
}
