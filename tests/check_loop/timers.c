/* timers.c -- timers on a running loop: deadline order, never early;
 * fixed rate and catching up; cancelling, also from the timer itself and
 * after the deadline; every timer freed. */
#include "check_loop.h"

/* ---- timers ------------------------------------------------------------------- */

struct fired { uint64_t due_ns, at_ns; int order; };
static struct fired fired[64];
static atomic_int nfired;

struct timer_arg { int index; uint64_t due_ns; };

static void timer_cb(void *arg)
{
    struct timer_arg *t = arg;
    int k = atomic_fetch_add(&nfired, 1);
    fired[t->index] = (struct fired){ t->due_ns, now_ns(), k };
}

START_TEST(timers_fire_in_deadline_order_never_early)
{
    enum { N = 30 };
    struct loop *l = start_loop(50);
    struct timer_arg args[N];
    uint64_t latest_due_ns[N];
    unsigned seed = 3;
    for (int i = 0; i < N; i++) {
        /* The deadline is set inside loop_schedule, between these two
         * clock reads: a test thread preempted there (a loaded machine)
         * moves it later than the first read says. */
        uint64_t delay_ms = 5 + (uint64_t)(rand_r(&seed) % 120);
        args[i] = (struct timer_arg){ i, now_ns() + delay_ms * 1000000u };
        loop_timer_release(loop_schedule(l, delay_ms, timer_cb, &args[i]));
        latest_due_ns[i] = now_ns() + delay_ms * 1000000u;
    }
    ck_assert_int_eq(wait_count(&nfired, N), N);
    stop_loop(l);
    for (int i = 0; i < N; i++) {
        ck_assert_msg(fired[i].at_ns >= fired[i].due_ns, "timer %d fired %lld ns early",
                      i, (long long)(fired[i].due_ns - fired[i].at_ns));
        for (int j = 0; j < N; j++)   /* surely due 2 ms before j: fired first */
            if (latest_due_ns[i] + 2000000 < fired[j].due_ns)
                ck_assert_int_lt(fired[i].order, fired[j].order);
    }
}
END_TEST

static atomic_int ticks;

static void tick_cb(void *arg)
{
    (void)arg;
    atomic_fetch_add(&ticks, 1);
}

/* Fixed rate (deadline + period) against fixed delay (now + period), by a
 * bound the code sets, not the scheduler: one run (RATE_LONG_RUN) takes
 * RATE_LONG_PERIODS periods, the others nothing. Fixed rate then owes the
 * runs that fell due meanwhile and runs them at once, one per iteration:
 * some two of them start less than half a period apart. Fixed delay
 * starts every run at least a period after the last one began, however
 * fast or slow the machine is. Every run still comes no earlier than
 * k periods after the start. */
enum { RATE_PERIOD_MS = 20, RATE_RUNS = 16, RATE_LONG_RUN = 2, RATE_LONG_PERIODS = 6 };
static uint64_t rate_ran_ns[RATE_RUNS + 8];

static void rate_tick_cb(void *arg)
{
    (void)arg;
    int k = atomic_load(&ticks);            /* only the loop writes it */
    if (k < RATE_RUNS + 8)
        rate_ran_ns[k] = now_ns();
    atomic_store(&ticks, k + 1);            /* publishes rate_ran_ns[k] */
    if (k == RATE_LONG_RUN)
        usleep(RATE_LONG_PERIODS * RATE_PERIOD_MS * 1000);
}

START_TEST(fixed_rate_fires_the_expected_number_of_times)
{
    struct loop *l = start_loop(50);
    uint64_t start_ns = now_ns();
    struct loop_timer *t = loop_schedule_at_fixed_rate(l, RATE_PERIOD_MS, RATE_PERIOD_MS,
                                                       rate_tick_cb, NULL);
    ck_assert_int_ge(wait_count(&ticks, RATE_RUNS), RATE_RUNS);
    ck_assert(loop_timer_cancel(t));     /* from another thread, while running */
    int n = atomic_load(&ticks);
    usleep(100000);
    ck_assert_int_eq(atomic_load(&ticks), n);     /* no run after cancel */
    for (int k = 0; k < RATE_RUNS; k++)
        ck_assert_msg(rate_ran_ns[k] >= start_ns + (uint64_t)(k + 1) * RATE_PERIOD_MS * 1000000u,
                      "fixed rate: run %d came %llu ms after the start, early", k + 1,
                      (unsigned long long)((rate_ran_ns[k] - start_ns) / 1000000u));
    uint64_t least_gap_ms = UINT64_MAX;
    for (int k = RATE_LONG_RUN + 1; k < RATE_LONG_RUN + RATE_LONG_PERIODS; k++) {
        uint64_t gap_ms = (rate_ran_ns[k + 1] - rate_ran_ns[k]) / 1000000u;
        if (gap_ms < least_gap_ms)
            least_gap_ms = gap_ms;
    }
    printf("fixed rate: after a run of %d periods, the runs it owed came %llu ms apart at least\n",
           RATE_LONG_PERIODS, (unsigned long long)least_gap_ms);
    ck_assert_msg(least_gap_ms < RATE_PERIOD_MS / 2, "fixed rate: after a run that took %d "
                  "periods, the runs that fell due meanwhile came %llu ms apart or more, not at "
                  "once: the next deadline was counted from now (a fixed delay), not from the last "
                  "deadline", RATE_LONG_PERIODS, (unsigned long long)least_gap_ms);
    stop_loop(l);
}
END_TEST

START_TEST(cancel_before_and_after_firing)
{
    struct loop *l = start_loop(50);
    struct loop_timer *early = loop_schedule(l, 50, tick_cb, NULL);
    ck_assert(loop_timer_cancel(early));          /* before: it never runs */
    struct loop_timer *late = loop_schedule(l, 5, tick_cb, NULL);
    ck_assert_int_eq(wait_count(&ticks, 1), 1);
    usleep(100000);                               /* `early` was due at 50 ms */
    ck_assert_int_eq(atomic_load(&ticks), 1);     /* only `late` ran */
    ck_assert(!loop_timer_cancel(late));          /* after: nothing to stop */
    struct loop_timer *dropped = loop_schedule(l, 10000, tick_cb, NULL);
    struct loop_stats st;
    uint64_t deadline = now_ms() + 10000;      /* counted at the next iteration */
    do {
        usleep(1000);
        loop_stats(l, &st);
    } while (st.timers != 1 && now_ms() < deadline);
    ck_assert_uint_eq(st.timers, 1);              /* the pending one */
    stop_loop(l);                                 /* drops the pending one */
    ck_assert_int_eq(atomic_load(&ticks), 1);
    ck_assert(!loop_timer_cancel(dropped));       /* the handle outlives the loop */
}
END_TEST

static _Atomic(struct loop_timer *) self_cancelling;

static void cancel_self_cb(void *arg)
{
    (void)arg;
    if (atomic_fetch_add(&ticks, 1) == 2) {
        struct loop_timer *me;
        while (!(me = atomic_load(&self_cancelling)))
            ;                                     /* the test stores it in µs */
        loop_timer_cancel(me);                    /* from its own callback */
    }
}

START_TEST(a_timer_can_cancel_itself)
{
    struct loop *l = start_loop(50);
    atomic_store(&self_cancelling, loop_schedule_at_fixed_rate(l, 5, 5, cancel_self_cb, NULL));
    ck_assert_int_eq(wait_count(&ticks, 3), 3);
    usleep(100000);                               /* 20 more periods: none run */
    ck_assert_int_eq(atomic_load(&ticks), 3);
    stop_loop(l);
}
END_TEST

/* A fixed-rate timer whose callback outlasts its period is always due
 * again by the time it returns. The loop must still leave its timers for
 * its tasks and its fds: it fires the timers due when the phase began,
 * and the rest in the next iteration. (A loop that read the clock again
 * after each callback fired this one forever and ran nothing else: the
 * same with a channel's deadline re-armed for a time already past.) */
static void outlasting_tick_cb(void *arg)
{
    (void)arg;
    atomic_fetch_add(&ticks, 1);
    usleep(10000);                                /* twice its 5 ms period */
}

static atomic_int tasks_seen;

static void seen_task(void *arg)
{
    (void)arg;
    atomic_fetch_add(&tasks_seen, 1);
}

START_TEST(a_timer_that_outlasts_its_period_does_not_hold_the_loop)
{
    struct loop *l = start_loop(50);
    struct loop_timer *t = loop_schedule_at_fixed_rate(l, 5, 5, outlasting_tick_cb, NULL);
    ck_assert_int_ge(wait_count(&ticks, 3), 3);
    ck_assert_int_eq(loop_execute(l, seen_task, NULL), 0);
    ck_assert_msg(wait_count(&tasks_seen, 1) == 1, "a task queued beside a fixed-rate "
                  "timer that outlasts its period never ran: the timers held the loop");
    loop_timer_cancel(t);
    stop_loop(l);
}
END_TEST

/* A fixed-rate timer sixty periods behind catches up one run per
 * iteration, never in a burst: between every two of its runs the loop
 * served its fd and ran a task (the one the previous run queued). The
 * loop's fd is an eventfd that stays readable, so every iteration has
 * I/O; the order of what ran is written down by the loop's own callbacks
 * (one thread: no lock), and judged afterwards. Ordered, not timed: the
 * first run sleeps LATE_PERIODS periods, so the runs after it are owed
 * however slow the machine is. A loop that put the timer straight back on
 * the heap ran it LATE_PERIODS times in a row, nothing between. */
enum { LATE_PERIOD_MS = 1, LATE_PERIODS = 60, LATE_RUNS = 40, LATE_LOG = 4096 };
static char late_log[LATE_LOG];              /* 'T' timer, 'I' fd, 'K' task */
static atomic_int late_len, late_runs;
static struct loop *late_loop;
static struct loop_watch late_watch;

static void late_note(char what)
{
    int n = atomic_load(&late_runs);
    int at = atomic_load(&late_len);
    if (n >= 1 && n <= LATE_RUNS && at < LATE_LOG)
        late_log[at] = what, atomic_store(&late_len, at + 1);
}

static void late_task(void *arg)
{
    (void)arg;
    late_note('K');
}

static void late_io_cb(void *arg, uint32_t events)
{
    (void)arg;
    (void)events;
    late_note('I');                              /* never read: ready again */
}

static void late_tick_cb(void *arg)
{
    (void)arg;
    int k = atomic_fetch_add(&late_runs, 1);
    late_note('T');
    loop_execute(late_loop, late_task, NULL);
    /* The first run stalls the loop, so the timer falls behind: at least
     * LATE_PERIODS periods (a busy machine only makes it later, and the
     * checks hold for any lag). Time passing is the subject here. */
    if (k == 0)
        usleep(LATE_PERIODS * LATE_PERIOD_MS * 1000);
}

static void late_watch_task(void *arg)
{
    ck_assert_int_eq(loop_watch_add(late_loop, &late_watch), 0);
    (void)arg;
}

static void late_unwatch_task(void *arg)
{
    (void)arg;
    loop_watch_remove(late_loop, &late_watch);
}

START_TEST(a_late_fixed_rate_timer_catches_up_once_per_iteration)
{
    late_loop = start_loop(100);                /* every queued task, each iteration */
    late_watch = (struct loop_watch){ .fd = eventfd(1, EFD_CLOEXEC), .events = EPOLLIN,
                                      .cb = late_io_cb };
    ck_assert_int_ge(late_watch.fd, 0);
    ck_assert_int_eq(loop_execute(late_loop, late_watch_task, NULL), 0);
    struct loop_timer *t = loop_schedule_at_fixed_rate(late_loop, LATE_PERIOD_MS,
                                                       LATE_PERIOD_MS, late_tick_cb, NULL);
    ck_assert_int_ge(wait_count(&late_runs, LATE_RUNS + 1), LATE_RUNS + 1);
    loop_timer_cancel(t);
    ck_assert_int_eq(loop_execute(late_loop, late_unwatch_task, NULL), 0);
    struct loop_stats st;
    loop_stats(late_loop, &st);
    stop_loop(late_loop);
    close(late_watch.fd);

    int len = atomic_load(&late_len), run = 0, io = 0, task = 0;
    for (int i = 0; i < len; i++) {
        if (late_log[i] == 'T') {
            ck_assert_msg(run == 0 || (io > 0 && task > 0), "a fixed-rate timer %d periods "
                          "behind ran twice in a row (runs %d and %d) with %s between: it "
                          "should run once per iteration, the loop's fds and tasks between "
                          "its runs", LATE_PERIODS, run, run + 1,
                          io ? "no task" : task ? "no fd served" : "no fd served and no task");
            run++, io = 0, task = 0;
        }
        io += late_log[i] == 'I';
        task += late_log[i] == 'K';
    }
    ck_assert_int_eq(run, LATE_RUNS);
    /* Every run but the first found the next deadline still past. */
    ck_assert_msg(st.timers_late >= LATE_RUNS - 1, "timers_late counted %llu runs of a timer "
                  "%d periods behind; it should count each of its %d catching-up runs",
                  (unsigned long long)st.timers_late, LATE_PERIODS, LATE_RUNS - 1);
}
END_TEST

static atomic_int repeats;

static void repeat_cb(void *arg)
{
    (void)arg;
    atomic_fetch_add(&repeats, 1);
}

/* Every timer is freed once it is done and its handle is given back: one
 * that ran, one cancelled before it ran, a fixed-rate one cancelled while
 * it repeats, and, at the loop's end, one still pending and one whose
 * handle outlives the loop. The count of timers alive (loop_timers_alive,
 * kept where the last reference frees a timer) comes back to where it
 * was. A run_due_timers that never drops the loop's hold, or its own
 * while a callback runs, keeps it up by one a timer; ASan would see the
 * leak too, but the lab's check runs without it. Counted, not timed: the
 * waits are for what the loop does, however late. */
START_TEST(every_timer_is_freed_when_done)
{
    enum { N = 20 };
    uint64_t before = loop_timers_alive();
    struct loop *l = start_loop(50);
    for (int i = 0; i < N; i++)
        loop_timer_release(loop_schedule(l, 1 + (uint64_t)i, tick_cb, NULL));
    struct loop_timer *kept = loop_schedule(l, 1, tick_cb, NULL);
    ck_assert(loop_timer_cancel(loop_schedule(l, 10000, tick_cb, NULL)));
    struct loop_timer *rate = loop_schedule_at_fixed_rate(l, 1, 2, repeat_cb, NULL);
    ck_assert_int_eq(wait_count(&ticks, N + 1), N + 1);
    ck_assert_int_ge(wait_count(&repeats, 3), 3);
    loop_timer_cancel(kept);                      /* after it ran (or as it ends) */
    ck_assert(loop_timer_cancel(rate));
    WAIT_UNTIL(loop_timers_alive() == before);
    uint64_t running = loop_timers_alive() - before;
    ck_assert_msg(running == 0, "%lld of the %d timers that ran or were cancelled were "
                  "never freed, every handle given back: a reference is never dropped "
                  "(the loop's hold when a timer is done, or its own while one runs)",
                  (long long)running, N + 3);
    loop_timer_release(loop_schedule(l, 10000, tick_cb, NULL));
    struct loop_timer *outliving = loop_schedule(l, 10000, tick_cb, NULL);
    stop_loop(l);                                 /* drops the pending ones' holds */
    ck_assert(!loop_timer_cancel(outliving));
    uint64_t ended = loop_timers_alive() - before;
    ck_assert_msg(ended == 0, "%lld timers still alive after the loop ended and every "
                  "handle was given back", (long long)ended);
}
END_TEST

/* A timer cancelled after its deadline passed, while the loop was busy,
 * must not run, although the cancel's removal task has not run yet: the
 * loop fires due timers before it runs tasks, so in the next iteration it
 * meets the cancelled timer still in its heap. The test holds the loop in
 * a task, waits past the deadline, cancels, then lets the loop go. */
static atomic_bool held_started, held_go;
static _Atomic(struct loop_timer *) held_timer;

/* The timer is scheduled here, on the loop, so it is in the heap before
 * the loop is held: scheduled from the test thread, its insertion was a
 * task of its own, and a loaded machine could run the timer's iteration
 * (it was due by then) before this task, firing it before the cancel. */
static void hold_the_loop_task(void *arg)
{
    struct loop *l = arg;
    atomic_store(&held_timer, loop_schedule(l, 10, tick_cb, NULL));
    atomic_store(&held_started, true);
    while (!atomic_load(&held_go))
        usleep(1000);
}

START_TEST(a_timer_cancelled_after_its_deadline_does_not_run)
{
    struct loop *l = start_loop(50);
    ck_assert_int_eq(loop_execute(l, hold_the_loop_task, l), 0);
    while (!atomic_load(&held_started))
        usleep(1000);
    usleep(30000);                                /* the timer is due now */
    ck_assert(loop_timer_cancel(atomic_load(&held_timer)));
    struct loop_stats st;
    loop_stats(l, &st);                           /* the held iteration is not counted */
    uint64_t held_at = st.iterations;
    atomic_store(&held_go, true);
    WAIT_UNTIL((loop_stats(l, &st), st.iterations >= held_at + 2));   /* one whole after */
    stop_loop(l);
    ck_assert_msg(atomic_load(&ticks) == 0, "a timer cancelled after its deadline, before "
                  "the loop came to it, still ran: its state should have stopped it");
}
END_TEST

void add_timer_tests(TCase *running)
{
    tcase_add_test(running, timers_fire_in_deadline_order_never_early);
    tcase_add_test(running, fixed_rate_fires_the_expected_number_of_times);
    tcase_add_test(running, cancel_before_and_after_firing);
    tcase_add_test(running, a_timer_can_cancel_itself);
    tcase_add_test(running, a_timer_cancelled_after_its_deadline_does_not_run);
    tcase_add_test(running, a_timer_that_outlasts_its_period_does_not_hold_the_loop);
    tcase_add_test(running, a_late_fixed_rate_timer_catches_up_once_per_iteration);
    tcase_add_test(running, every_timer_is_freed_when_done);
}
