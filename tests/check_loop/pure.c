/* pure.c -- the loop's pieces without a running loop: the timer heap,
 * the chooser, the task budget and the tasks' phase, played by the test's
 * own thread. */
#include "check_loop.h"

/* ---- pure pieces ------------------------------------------------------------ */

START_TEST(heap_orders_by_deadline_then_fifo)
{
    enum { N = 2000 };
    struct timer_heap h;
    struct heap_node *nodes = calloc(N, sizeof(*nodes));
    unsigned seed = 7;
    heap_init(&h);
    for (int i = 0; i < N; i++) {
        nodes[i].deadline_ns = (uint64_t)(rand_r(&seed) % 500);
        ck_assert_int_eq(heap_push(&h, &nodes[i]), 0);
    }
    for (int i = 0; i < N; i += 3)           /* remove from the middle */
        heap_remove(&h, &nodes[i]);
    uint64_t last_deadline = 0, last_seq = 0;
    size_t popped = 0;
    struct heap_node *n;
    while ((n = heap_pop(&h))) {
        ck_assert_uint_ge(n->deadline_ns, last_deadline);
        if (popped && n->deadline_ns == last_deadline)
            ck_assert_uint_gt(n->seq, last_seq);   /* ties: insertion order */
        ck_assert_uint_ne((size_t)(n - nodes) % 3, 0);
        last_deadline = n->deadline_ns;
        last_seq = n->seq;
        popped++;
    }
    ck_assert_uint_eq(popped, N - (N + 2) / 3);
    heap_free(&h);
    free(nodes);
}
END_TEST

/* The chooser's answer, said for a student when it is wrong (lab 06). */
static void assert_chooses(unsigned counter, int size, bool power_of_two, int want)
{
    int got = loop_group_choose(counter, size, power_of_two);
    ck_assert_msg(got == want, "with %d loops, connection number %u went to loop %d, "
                  "not %d (loops count from 0)", size, counter, got, want);
}

START_TEST(chooser_round_robin_and_mask)
{
    /* Power of two: a mask, also across the counter's wrap-around. */
    assert_chooses(0, 4, true, 0);
    assert_chooses(5, 4, true, 1);
    assert_chooses(0xffffffffu, 4, true, 3);
    assert_chooses(0xffffffffu + 1u, 4, true, 0);
    assert_chooses(7, 3, false, 1);
    int counts[3] = { 0 };
    for (unsigned i = 0; i < 300; i++)
        counts[loop_group_choose(i, 3, false)]++;
    ck_assert_msg(counts[0] == 100 && counts[1] == 100 && counts[2] == 100,
                  "300 connections over 3 workers went %d, %d, %d (round robin: 100 each)",
                  counts[0], counts[1], counts[2]);
}
END_TEST

/* The budget, said for a student when it is wrong (lab 07). */
static void assert_budget(uint64_t io_ns, int ratio, uint64_t want_ns)
{
    uint64_t got = loop_task_budget_ns(io_ns, ratio);
    ck_assert_msg(got == want_ns, "ioRatio %d after %llu ns of I/O: a task budget of %llu ns, "
                  "not %llu ns", ratio, (unsigned long long)io_ns,
                  (unsigned long long)got, (unsigned long long)want_ns);
}

/* Netty 4.1's ioRatio: tasks get io_time * (100 - ratio) / ratio. The
 * README's ratios (20, 50, 80), and others no lab names (1, 33, 99, an I/O
 * phase of seconds), so that only the formula passes, not a table of the
 * ratios the running check measures (lab 07). */
START_TEST(io_ratio_task_budget)
{
    assert_budget(1000, 50, 1000);
    assert_budget(1000, 80, 250);
    assert_budget(1000, 20, 4000);
    assert_budget(1000, 100, UINT64_MAX);
    assert_budget(1000, 33, 2030);              /* 67 000 / 33, rounded down */
    assert_budget(1000, 99, 10);
    assert_budget(3000000000u, 1, 297000000000u);
    assert_budget(0, 50, 0);
    /* And inputs no one can list in advance: drawn from a seed that the
     * failure message names (THREADLAB_TEST_SEED=N repeats a run). */
    const char *env = getenv("THREADLAB_TEST_SEED");
    unsigned seed = env ? (unsigned)strtoul(env, NULL, 10)
                        : (unsigned)now_ns() ^ (unsigned)getpid();
    unsigned state = seed;
    for (int i = 0; i < 64; i++) {
        int ratio = 1 + (int)(rand_r(&state) % 99);
        uint64_t io_ns = ((uint64_t)rand_r(&state) << 20 ^ (uint64_t)rand_r(&state)) % (1ull << 40);
        uint64_t want = io_ns * (uint64_t)(100 - ratio) / (uint64_t)ratio;
        uint64_t got = loop_task_budget_ns(io_ns, ratio);
        ck_assert_msg(got == want, "ioRatio %d after %" PRIu64 " ns of I/O: a task budget of %" PRIu64
                      " ns, not %" PRIu64 " ns (inputs drawn at random; THREADLAB_TEST_SEED=%u repeats "
                      "them)", ratio, io_ns, got, want, seed);
    }
}
END_TEST

/* The tasks' phase (lab 07's run_tasks_in_budget), on a loop that is not
 * started: the test's thread plays the loop, so what ran and when is the
 * test's to say. Each task spins the clock for phase_task_ns of wall time
 * (or longer, if it is preempted: never shorter), so "how many ran" is
 * bounded by the budget whatever the scheduler does. */
static _Atomic uint64_t phase_task_ns;
static _Atomic int phase_ran;

static void phase_task(void *arg)
{
    (void)arg;
    uint64_t until = now_ns() + atomic_load(&phase_task_ns);
    while (now_ns() < until)
        ;
    atomic_fetch_add(&phase_ran, 1);
}

/* A loop, not started, with n tasks of task_us each queued. */
static struct loop *phase_loop(int n, uint64_t task_us)
{
    struct loop_opts o = { .name = "test-phase", .io_ratio_pct = 50, .role = ROLE_WORKER_LOOP };
    struct loop *l = loop_create(&o);
    ck_assert_ptr_nonnull(l);
    atomic_store(&phase_task_ns, task_us * 1000);
    atomic_store(&phase_ran, 0);
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(loop_execute(l, phase_task, NULL), 0);
    return l;
}

/* The phase's budget counts from when the timers' turn began, not from
 * when the tasks' phase was called: timers that took it all leave no time
 * for tasks. */
START_TEST(a_budget_spent_by_the_timers_runs_no_task)
{
    struct loop *l = phase_loop(5, 1000);
    uint64_t began = now_ns() - 50 * 1000000ull;     /* the timers took 50 ms */
    size_t ran = run_tasks_in_budget(l, began, 50 * 1000000ull, false);
    ck_assert_msg(ran == 0 && atomic_load(&phase_ran) == 0,
                  "the timers' turn began 50 ms ago with a budget of 50 ms, and the phase still "
                  "ran %zu task(s): the budget counts from when the timers' turn began (began_ns), "
                  "not from when the tasks' phase starts", ran);
    loop_join_free(l);
}
END_TEST

/* An I/O step that found nothing to do gives the thread to tasks: one
 * runs even with no budget left. */
START_TEST(an_idle_phase_runs_one_task_without_budget)
{
    struct loop *l = phase_loop(5, 0);
    size_t ran = run_tasks_in_budget(l, now_ns(), 0, true);
    ck_assert_msg(ran == 1 && atomic_load(&phase_ran) == 1,
                  "after an I/O step that found nothing to do, with no budget, the phase ran %zu "
                  "task(s); it should run exactly one (I/O did not want the thread)", ran);
    ran = run_tasks_in_budget(l, now_ns(), 0, false);
    ck_assert_msg(ran == 0, "with no budget after busy I/O the phase ran %zu task(s), not 0", ran);
    loop_join_free(l);
}
END_TEST

/* ioRatio 100's budget has no end: began_ns + UINT64_MAX must not wrap
 * round to a deadline in the past. */
START_TEST(an_endless_budget_runs_every_task)
{
    struct loop *l = phase_loop(5, 0);
    size_t ran = run_tasks_in_budget(l, now_ns(), UINT64_MAX, false);
    ck_assert_msg(ran == 5 && atomic_load(&phase_ran) == 5,
                  "with a budget of UINT64_MAX (ioRatio 100: no limit) the phase ran %zu of 5 tasks: "
                  "does began_ns + budget_ns wrap round to a deadline in the past?", ran);
    loop_join_free(l);
}
END_TEST

/* The deadline is looked at before every task: with 5 ms tasks and a
 * 20 ms budget, at most 4 run (each takes 5 ms or more), whatever the
 * machine's load; a look every few tasks runs the whole queue. */
START_TEST(the_budget_is_looked_at_before_every_task)
{
    struct loop *l = phase_loop(30, 5000);
    size_t ran = run_tasks_in_budget(l, now_ns(), 20 * 1000000ull, false);
    ck_assert_msg(ran <= 4,
                  "with a 20 ms budget and tasks of 5 ms the phase ran %zu tasks (%zu ms): at most 4 "
                  "fit; look at the deadline before every task, not every few", ran, ran * 5);
    /* the tasks left are dropped with the loop: none may run */
    atomic_store(&phase_task_ns, 0);
    loop_join_free(l);
}
END_TEST

void add_pure_tests(TCase *pure, TCase *phase)
{
    tcase_add_test(pure, heap_orders_by_deadline_then_fifo);
    tcase_add_test(pure, chooser_round_robin_and_mask);
    tcase_add_test(pure, io_ratio_task_budget);
    tcase_add_test(phase, a_budget_spent_by_the_timers_runs_no_task);
    tcase_add_test(phase, an_idle_phase_runs_one_task_without_budget);
    tcase_add_test(phase, an_endless_budget_runs_every_task);
    tcase_add_test(phase, the_budget_is_looked_at_before_every_task);
}
