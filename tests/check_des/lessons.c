/* lessons.c -- the lessons the simulator is there to teach, each on a
 * run: determinism, Little's law, the run queue, tails, cores, ioRatio,
 * stacks, the thread limit, saturation, virtual threads. */
#include "check_des.h"

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
 * last time (scheduler.c checks the charge itself). One BIO
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

void add_lesson_tests(TCase *lessons)
{
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
}
