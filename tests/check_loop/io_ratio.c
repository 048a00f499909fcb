/* io_ratio.c -- ioRatio on a running loop: the tasks' share of the loop's
 * time, with short tasks and with tasks longer than the budget. */
#include "check_loop.h"

/* ---- ioRatio ------------------------------------------------------------------- */

/* What the loop promises: after I/O that took io_ns, tasks run until
 * loop_task_budget_ns(io_ns) has passed, less what earlier tasks overran
 * (a task cannot be stopped halfway: the loop owes it, and pays it back
 * from the next budgets). The test keeps both sides busy without needing
 * the scheduler's help: an always-ready fd whose callback burns CPU, and
 * a task queue that never runs dry because every task queues its
 * successor. The counters are read at iteration boundaries, from the I/O
 * callback, where both are settled; the window is a count of iterations,
 * not of seconds.
 *
 * Two bounds, both the loop's own, in its own time accounting (so a
 * loaded machine, which stretches I/O and tasks alike, changes neither):
 * the task time is exactly the budget plus what was owed at the window's
 * end less what was owed at its start (a nanosecond of rounding per
 * iteration), where what is owed never grows past the longest task; so
 * the share is 100 - ratio give or take one task, with short tasks (2 us against 5 ms of I/O) and long ones (3 ms against
 * 1 ms: longer than a whole budget at ioRatio 50 and 80, where a loop that
 * always ran one task, or a batch of 64 between clock reads, gave tasks
 * 75% or 99%). */
enum {
    RATIO_QUEUE = 256,                  /* tasks always waiting (> one batch) */
    RATIO_WARMUP = 3,                   /* I/O rounds before the window opens */
    RATIO_CLOCK_SLACK_NS = 100000,      /* clock reads between a task and the deadline */

};

struct ratio_probe {
    struct loop *l;
    uint32_t io_us, task_us;            /* CPU burnt per I/O callback, per task */
    int rounds, window;                 /* I/O callbacks so far; how many measured */
    struct loop_stats first, last;      /* at the window's two ends */
    uint64_t waited_first, waited_last; /* the loop thread's run-queue wait then */
    atomic_bool done;                   /* the window is closed */
    atomic_bool stop;                   /* tasks stop queueing successors */
};

/* How long the calling thread has waited, runnable, for a core (the
 * second field of its schedstat), 0 where the kernel does not say. A
 * phase that was preempted ran long in wall time through no fault of the
 * loop: this is the scheduler's part, to leave out of the loop's bound. */
static uint64_t run_queue_wait_ns(void)
{
    unsigned long long ran = 0, waited = 0;
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    if (!f)
        return 0;
    if (fscanf(f, "%llu %llu", &ran, &waited) != 2)
        waited = 0;
    fclose(f);
    return waited;
}

static void io_burn_cb(void *arg, uint32_t events)
{
    struct ratio_probe *p = arg;
    (void)events;
    p->rounds++;
    if (p->rounds == RATIO_WARMUP) {
        loop_stats(p->l, &p->first);
        p->waited_first = run_queue_wait_ns();
    } else if (p->rounds == RATIO_WARMUP + p->window) {
        loop_stats(p->l, &p->last);
        p->waited_last = run_queue_wait_ns();
        atomic_store(&p->done, true);
    }
    echo_burn_cpu_us(p->io_us);
}

static void endless_task(void *arg)
{
    struct ratio_probe *p = arg;
    echo_burn_cpu_us(p->task_us);
    if (!atomic_load(&p->stop))
        loop_execute(p->l, endless_task, p);
}

static void add_watch_task(void *arg)
{
    struct loop_watch *w = arg;
    ck_assert_int_eq(loop_watch_add(((struct ratio_probe *)w->arg)->l, w), 0);
}

/* Run `window` I/O rounds at this ratio and check the task share of the
 * loop's busy time against the loop's bounds. */
static void check_task_share(int ratio, uint32_t io_us, uint32_t task_us, int window)
{
    struct ratio_probe p = { .l = start_loop(ratio), .io_us = io_us, .task_us = task_us,
                             .window = window };
    int efd = eventfd(1, EFD_NONBLOCK);         /* readable, never read */
    struct loop_watch w = { .fd = efd, .events = EPOLLIN, .cb = io_burn_cb, .arg = &p };
    ck_assert_int_eq(loop_execute(p.l, add_watch_task, &w), 0);
    for (int i = 0; i < RATIO_QUEUE; i++)
        ck_assert_int_eq(loop_execute(p.l, endless_task, &p), 0);
    /* The work is CPU time, so a busy machine stretches it in wall time:
     * the deadline is a hang guard (a task phase that never ends). */
    uint64_t deadline = now_ms() + RATIO_HANG_GUARD_S * 1000;
    while (!atomic_load(&p.done) && now_ms() < deadline)
        usleep(10000);
    bool done = atomic_load(&p.done);
    atomic_store(&p.stop, true);                /* the queue drains, the loop can stop */
    ck_assert_msg(done, "ioRatio %d: fewer than %d I/O rounds in %d s: a task "
                  "phase that never ends?", ratio, RATIO_WARMUP + window, RATIO_HANG_GUARD_S);
    stop_loop(p.l);
    close(efd);

    uint64_t io = p.last.io_ns - p.first.io_ns, task = p.last.task_ns - p.first.task_ns;
    uint64_t rounds = p.last.iterations - p.first.iterations;
    uint64_t budget = io * (uint64_t)(100 - ratio) / (uint64_t)ratio;
    int64_t owed = (int64_t)p.last.task_owed_ns - (int64_t)p.first.task_owed_ns;
    int64_t expect = (int64_t)budget + owed;
    double share = (double)task / (double)(io + task);
    printf("ioRatio %d, %u us tasks: tasks took %.1f%% of the loop's busy time "
           "(expected %d%%)\n", ratio, task_us, share * 100, 100 - ratio);
    ck_assert_msg(llabs((int64_t)task - expect) <= (int64_t)rounds + 1,
                  "ioRatio %d, %u us tasks: tasks ran %llu ns, not their budget of %llu ns "
                  "%+lld ns owed over %llu iterations", ratio, task_us,
                  (unsigned long long)task, (unsigned long long)budget, (long long)owed,
                  (unsigned long long)rounds);
    /* What is owed grows past one task's overrun never: a phase runs
     * tasks only once the debt is paid, and stops at the first task that
     * ends past its deadline. (What was owed at the window's start may be
     * more: a phase the scheduler stretched before the window, being
     * repaid.) A loop that always ran a task, or a batch of them between
     * clock reads, owes more and more. With the equality above, this puts
     * the share within one task of 100 - ratio. The loop's clock is wall
     * time, so a phase the scheduler preempted between two tasks overran
     * by the wait: what the loop thread waited for a core in the window
     * is the scheduler's part, not the loop's (0 on a quiet machine). */
    uint64_t most = p.last.longest_task_ns > p.first.task_owed_ns ? p.last.longest_task_ns
                                                                   : p.first.task_owed_ns;
    uint64_t preempted = p.waited_last - p.waited_first;
    ck_assert_msg(p.last.task_owed_ns <= most + preempted + RATIO_CLOCK_SLACK_NS,
                  "ioRatio %d, %u us tasks: %llu ns owed, more than the longest task "
                  "(%llu ns) or what was owed before (%llu ns), with %llu ns preempted",
                  ratio, task_us, (unsigned long long)p.last.task_owed_ns,
                  (unsigned long long)p.last.longest_task_ns,
                  (unsigned long long)p.first.task_owed_ns, (unsigned long long)preempted);
}

START_TEST(io_ratio_sets_the_task_share)
{
    for (int ratio = 20; ratio <= 80; ratio += 30)
        check_task_share(ratio, 5000, 2, 20);
}
END_TEST

START_TEST(io_ratio_holds_for_tasks_longer_than_the_budget)
{
    /* The accounting is exact (within a nanosecond an iteration), so 40
     * rounds judge it as well as more would. */
    for (int ratio = 20; ratio <= 80; ratio += 30)
        check_task_share(ratio, 1000, 3000, 40);
}
END_TEST

void add_io_ratio_tests(TCase *running)
{
    tcase_add_test(running, io_ratio_sets_the_task_share);
    tcase_add_test(running, io_ratio_holds_for_tasks_longer_than_the_budget);
}
