/* scheduler.c -- the scheduler (sim/machine.c) on a bare machine:
 * preemption, wakeups, idle cores, what a wakeup and a switch cost. */
#include "check_des.h"

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
    ck_assert_int_eq(machine_init(&b->m, &b->eng, &b->prof, cores, &sched_linux, EV_TEST_CORE,
                                  bare_done, b), 0);
    for (int i = 0; i < TEST_THREADS; i++) {
        b->t[i] = machine_spawn(&b->m, (uint32_t)i);
        b->wakes[i] = -1;
    }
}

/* A bare machine whose idle core, woken, runs its thread 5 us later
 * after 20 us of CPU: the wakeup the cases below count in. */
static void bare_init_woken(struct bare *b, int cores)
{
    bare_init(b, cores);
    b->prof.wakeup_ns = 5000;
    b->prof.wakeup_cpu_ns = 20000;
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
    bare_init_woken(&b, 1);
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

/* A core that idled wakeup_deep_after_ns or more wakes wakeup_deep_ns
 * later still (latency, not CPU): on a VM a halted virtual CPU must be
 * woken by the host. One core, a thread woken three times for 1 us: at
 * 0 (the core idle for no time: 5 + 20 + 1 us), at 40 us (idle 14 us:
 * the same), at 200 us (idle 134 us, past 50: 30 us more). */
START_TEST(a_core_that_idled_long_wakes_later)
{
    struct bare b;
    bare_init_woken(&b, 1);
    b.prof.wakeup_deep_after_ns = 50000;
    b.prof.wakeup_deep_ns = 30000;
    static const vtime_t at[] = { 0, 40000, 200000 }, done[] = { 26000, 66000, 256000 };
    for (int i = 0; i < 3; i++) {
        bare_wake_at(&b, 0, at[i] - b.eng.now, 1000);
        bare_run_until(&b, at[i] + 100000);
        printf("1 core, idle since %.1f us, woken at %.1f us: done at %.1f us\n",
               i > 0 ? done[i - 1] / 1e3 : 0.0, at[i] / 1e3, b.done_at[0] / 1e3);
        ck_assert_uint_eq(b.done_at[0], done[i]);
    }
    bare_run(&b);
    ck_assert_uint_eq(b.busy_ns, 3 * 21000);
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
    bare_init_woken(&b, 2);
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

/* ---- the simple scheduler (sim/sched_simple.c), by hand ------------------------- */

/* A bare machine (as above) steered by the simple scheduler, with no
 * costs but those given. */
static void bare_init_simple(struct bare *b, int cores, double switch_ns, double slice_ns)
{
    bare_init(b, cores);
    b->m.sched = &sched_simple;
    b->prof.context_switch_ns = switch_ns;
    b->prof.time_slice_ns = slice_ns;
}

/* Run to the end, keeping the machine for its counters. */
static void bare_run_keep(struct bare *b)
{
    bare_run_until(b, UINT64_MAX);
    b->busy_ns = machine_busy_ns(&b->m);
}

static void bare_free(struct bare *b)
{
    machine_free(&b->m);
    des_free(&b->eng);
}

/* One core, a 3 us slice, a 1 us switch; A (5 us) and B (2 us) woken at
 * 0. By hand: A takes the idle core at 0 (an idle core's wakeup costs
 * wakeup_cpu_ns, 0 here), B waits. At 3 A's slice ends: A to the tail, B
 * on (2 + 1 us switch): done at 6. A back on (2 left + 1 switch): done
 * at 9. Three switches, one preemption, 9 us busy. */
START_TEST(simple_one_core_runs_two_threads_round_robin)
{
    struct bare b;
    bare_init_simple(&b, 1, 1000, 3000);
    bare_wake_at(&b, 0, 0, 5000);
    bare_wake_at(&b, 1, 0, 2000);
    bare_run_keep(&b);
    ck_assert_uint_eq(b.done_at[1], 6000);
    ck_assert_uint_eq(b.done_at[0], 9000);
    ck_assert_uint_eq(b.busy_ns, 9000);
    ck_assert_uint_eq(b.m.context_switches, 3);
    ck_assert_uint_eq(b.m.preemptions, 1);
    ck_assert_uint_eq(b.m.wakeup_preemptions, 0);
    bare_free(&b);
}
END_TEST

/* Two cores, no slices; an idle core's wakeup costs 0.2 us of CPU and
 * 0.5 us of latency, a switch 1 us. A (4 us), B (1 us), C (1 us) woken at
 * 0, in that order. By hand: A takes core 0 (the lowest idle), from 0.5
 * to 4.7; B core 1, from 0.5 to 1.7; C finds no idle core and waits on
 * the shortest queue, core 0's (a tie: the lower). At 1.7 core 1 has
 * nothing: it takes C from core 0's queue (a switch, 1 + 1 us): done at
 * 3.7, not at 6.7 behind A. */
START_TEST(simple_wakes_on_an_idle_core_and_an_idle_core_takes_a_waiter)
{
    struct bare b;
    bare_init_simple(&b, 2, 1000, 0);
    b.prof.wakeup_cpu_ns = 200;
    b.prof.wakeup_ns = 500;
    bare_wake_at(&b, 0, 0, 4000);
    bare_wake_at(&b, 1, 0, 1000);
    bare_wake_at(&b, 2, 0, 1000);
    bare_run_keep(&b);
    ck_assert_uint_eq(b.done_at[0], 4700);
    ck_assert_uint_eq(b.done_at[1], 1700);
    ck_assert_uint_eq(b.done_at[2], 3700);
    ck_assert_uint_eq(b.busy_ns, 4200 + 1200 + 2000);
    ck_assert_uint_eq(b.m.migrations, 0);        /* C had never run: no move */
    bare_free(&b);
}
END_TEST

/* Both schedulers, every model, closed and open loop, a pool that grows,
 * offload, pinned vthreads: L = lambda x W to 1% (run_checked). */
START_TEST(both_schedulers_keep_littles_law)
{
    static const struct sched_ops *const scheds[] = { &sched_linux, &sched_simple };
    struct sim_report *r = malloc(sizeof(*r));
    for (size_t k = 0; k < 2; k++)
        for (int m = 0; m < SIM_MODEL_COUNT; m++) {
            struct sim_opts o;
            sim_opts_init(&o, (enum sim_model)m);
            o.sched = scheds[k];
            o.conns = 200;
            o.duration_s = 0.1;
            o.cores = 1 + m % 4;
            o.rate = m % 2 ? 50000 : 0;
            o.pool_min = 2;
            o.sleep_pct = 5;
            o.sleep_ms = 1;
            o.offload = m == SIM_MULTIREACTOR ? 4 : 0;
            o.pin = m == SIM_VTHREAD && k == 1;
            run_checked(&o, r);
            printf("%s --sched %s: L %.3f, lambda x W %.3f\n", sim_model_name(o.model),
                   o.sched->name, r->mean_in_system, r->arrival_per_s * r->sojourn_ns / 1e9);
        }
    free(r);
}
END_TEST

void add_scheduler_tests(TCase *sched)
{
    tcase_add_test(sched, a_woken_thread_preempts_a_hog_past_the_granularity);
    tcase_add_test(sched, wakeups_do_not_starve_a_busy_thread);
    tcase_add_test(sched, an_idle_core_wakeup_costs_wakeup_cpu_ns_a_switch_costs_context_switch_ns);
    tcase_add_test(sched, one_connection_wakes_an_idle_core_twice_a_line);
    tcase_add_test(sched, a_woken_thread_looks_for_an_idle_core_only_on_a_quiet_machine);
    tcase_add_test(sched, the_waker_pays_the_wakeups_interrupt);
    tcase_add_test(sched, a_core_that_idled_long_wakes_later);
}

void add_simple_scheduler_tests(TCase *simple)
{
    tcase_add_test(simple, simple_one_core_runs_two_threads_round_robin);
    tcase_add_test(simple, simple_wakes_on_an_idle_core_and_an_idle_core_takes_a_waiter);
    tcase_add_test(simple, both_schedulers_keep_littles_law);
}
