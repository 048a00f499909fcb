/* checker.c -- the blocked-loop checker: handlers timed for it, long ones
 * flagged, warnings on time, repeated, the length measured. */
#include "check_loop.h"

/* ---- the blocked checker ------------------------------------------------------ */

/* A handler that blocks must be visible to the blocked checker the way a
 * task is: marked busy while it runs (loop__busy_since_ns), and measured
 * by the loop around the call (loop__last_long_handler). The handler
 * looks at its own mark, and sleeps 30 ms: the loop's measure of it can
 * only be longer, whatever the scheduler does. */
enum { SLOW_HANDLER_MS = 30 };

struct slow_watch {
    struct loop *l;
    struct loop_watch w;
    atomic_int calls;
    atomic_bool marked;          /* busy_since was set while it ran */
};

static void slow_handler_cb(void *arg, uint32_t events)
{
    struct slow_watch *s = arg;
    (void)events;
    uint64_t n;
    (void)!read(s->w.fd, &n, sizeof(n));
    atomic_store(&s->marked, loop__busy_since_ns(s->l) != 0);
    usleep(SLOW_HANDLER_MS * 1000);
    loop_watch_remove(s->l, &s->w);
    atomic_fetch_add(&s->calls, 1);
}

static void add_slow_watch_task(void *arg)
{
    struct slow_watch *s = arg;
    ck_assert_int_eq(loop_watch_add(s->l, &s->w), 0);
}

START_TEST(a_handler_is_timed_for_the_checker)
{
    struct slow_watch s = { .l = start_loop(50) };
    s.w = (struct loop_watch){ .fd = eventfd(1, EFD_NONBLOCK), .events = EPOLLIN,
                               .cb = slow_handler_cb, .arg = &s };
    ck_assert_int_ge(s.w.fd, 0);
    ck_assert_int_eq(loop_execute(s.l, add_slow_watch_task, &s), 0);
    ck_assert_int_eq(wait_count(&s.calls, 1), 1);
    ck_assert_msg(atomic_load(&s.marked), "a handler ran without its busy mark: the "
                  "blocked checker cannot see a handler that blocks the loop");
    uint64_t began = 0, took = 0;
    ck_assert_msg(loop__last_long_handler(s.l, &began, &took) &&
                  took >= SLOW_HANDLER_MS * 1000000ull,
                  "a %d ms handler was not measured by the loop (took %llu ns)",
                  SLOW_HANDLER_MS, (unsigned long long)took);
    stop_loop(s.l);
    close(s.w.fd);
}
END_TEST

static atomic_int sleeps_done;

static void sleep_task(void *arg)
{
    usleep((useconds_t)(intptr_t)arg * 1000);
    atomic_fetch_add(&sleeps_done, 1);
}

static struct loop_checker_stats stats_of(struct loop_checker *c)
{
    struct loop_checker_stats st;
    loop_checker_stats(c, &st);
    return st;
}

/* A task that stays until the checker has flagged it, then until the
 * checker has looked at it twice more (WAIT_UNTIL: states, not times), so
 * that it must not warn again about the same block. A fixed 2.5 s task
 * would leave the checker, which looks every 500 ms, one chance to see it
 * past 2 s: a checker thread held up by a busy machine would miss it. */
static struct loop_checker *watching;

static void block_until_flagged_task(void *arg)
{
    (void)arg;
    WAIT_UNTIL(stats_of(watching).episodes > 0);
    uint64_t looks_at_flag = stats_of(watching).looks;
    WAIT_UNTIL(stats_of(watching).looks >= looks_at_flag + 2);
    atomic_fetch_add(&sleeps_done, 1);
}

START_TEST(checker_flags_long_handlers_only)
{
    struct loop *l = start_loop(50);
    struct loop_checker *c = loop_checker_start(&l, 1, 2000, 0, NULL, true);
    watching = c;
    for (int i = 0; i < 10; i++)
        loop_execute(l, sleep_task, (void *)(intptr_t)100);
    ck_assert_int_eq(wait_count(&sleeps_done, 10), 10);
    ck_assert_uint_eq(stats_of(c).episodes, 0);    /* 100 ms: fine */
    loop_execute(l, block_until_flagged_task, NULL);
    ck_assert_int_eq(wait_count(&sleeps_done, 11), 11);
    ck_assert_uint_eq(stats_of(c).episodes, 1);    /* flagged, once */
    loop_checker_stop(c);
    stop_loop(l);
}
END_TEST

/* A task that sleeps and notes, on the loop's clock, how long it really
 * ran: the length the checker must report. */
struct measured_sleep {
    int ms;
    _Atomic uint64_t ran_ns;
};

static void measured_sleep_task(void *arg)
{
    struct measured_sleep *m = arg;
    uint64_t start = now_ns();
    echo_sleep_ms((uint32_t)m->ms);
    atomic_store(&m->ran_ns, now_ns() - start);
}

/* Run one measured sleep on l and wait until it ended and c reported it
 * unblocked (or 2 s more passed: a checker kept from every CPU for the
 * whole sleep never saw it). Returns whether c saw it, its stats then
 * and, in *ran_ns, the task's own measure. */
static bool one_episode(struct loop *l, struct loop_checker *c, int ms,
                        struct loop_checker_stats *st, uint64_t *ran_ns)
{
    struct loop_checker_stats before;
    loop_checker_stats(c, &before);
    struct measured_sleep m = { .ms = ms };
    ck_assert_int_eq(loop_execute(l, measured_sleep_task, &m), 0);
    WAIT_UNTIL(atomic_load(&m.ran_ns) != 0);
    *ran_ns = atomic_load(&m.ran_ns);
    ck_assert_uint_ne(*ran_ns, 0);
    uint64_t until_ms = now_ms() + 2000;
    do {
        usleep(5000);
        loop_checker_stats(c, st);
    } while (st->unblocks == before.unblocks && now_ms() < until_ms);
    return st->unblocks == before.unblocks + 1;
}

/* Vert.x's checker: each first warning when warn_ms have passed (within
 * 10%, not counting how late the scheduler woke the checker: that delay
 * is measured and taken off, so a loaded machine does not fail it),
 * repeated every warn_ms, and the "unblocked" length exact to the task's
 * own measure (50 ms). Five episodes: a checker that looks every warn/4
 * instead of when a warning is due (the old one) is more than 10% late in
 * each with odds 3 in 5, so it passes all five about once in a hundred. */
START_TEST(checker_warns_on_time_repeats_and_measures_exactly)
{
    enum { WARN_MS = 200, EPISODES = 5 };
    struct loop *l = start_loop(50);
    struct loop_checker *c = loop_checker_start(&l, 1, WARN_MS, 0, NULL, true);
    ck_assert_ptr_nonnull(c);
    int seen = 0;
    for (int i = 0; i < EPISODES; i++) {
        /* The first repeats (200, 400, 600 ms); the others leave the checker
         * 200 ms of slack to see them at all on a loaded machine. */
        int sleep_ms = i == 0 ? 700 : 400;
        struct loop_checker_stats before, st;
        uint64_t ran;
        loop_checker_stats(c, &before);
        if (!one_episode(l, c, sleep_ms, &st, &ran)) {
            printf("checker, %d ms: not seen (the checker had no CPU)\n", sleep_ms);
            continue;
        }
        seen++;
        double first_ms = (double)(st.last_first_warning_ns - st.last_first_late_ns) / 1e6;
        uint64_t warnings = st.warnings - before.warnings;
        printf("checker, %d ms: first warning at %.1f ms (%.1f ms of it not the checker's), %llu "
               "warning(s); unblocked %.1f ms, the task measured %.1f ms\n", sleep_ms,
               (double)st.last_first_warning_ns / 1e6, (double)st.last_first_late_ns / 1e6,
               (unsigned long long)warnings, (double)st.last_unblocked_ns / 1e6,
               (double)ran / 1e6);
        ck_assert_uint_eq(st.episodes, before.episodes + 1);
        /* Never early; late by at most 10% once what was not the
         * checker's doing is taken off: its own wait for a CPU, and the
         * loop's between reading the clock and publishing the start (it
         * may even take us below warn_ms: the delay can begin before the
         * warning was due). */
        ck_assert_uint_ge(st.last_first_warning_ns, WARN_MS * 1000000ull);
        ck_assert_msg(first_ms <= WARN_MS * 1.1,
                      "first warning %.1f ms after the task began (less %.1f ms "
                      "not the checker's), warn at %d", first_ms,
                      (double)st.last_first_late_ns / 1e6, WARN_MS);
        /* A checker woken very late skips a repeat rather than giving two
         * at once: at least two of the three for 700 ms. */
        ck_assert_uint_ge(warnings, (i == 0 ? 2u : 1u));
        ck_assert_uint_le(warnings, ((uint64_t)sleep_ms / WARN_MS));
        int64_t off = (int64_t)st.last_unblocked_ns - (int64_t)ran;
        ck_assert_msg(st.last_unblocked_ns && off >= 0 && off <= 50 * 1000000ll,
                      "unblocked after %.1f ms, the task ran %.1f ms",
                      (double)st.last_unblocked_ns / 1e6, (double)ran / 1e6);
    }
    ck_assert_int_ge(seen, 3);
    loop_checker_stop(c);
    stop_loop(l);
}
END_TEST

void add_checker_tests(TCase *running)
{
    tcase_add_test(running, a_handler_is_timed_for_the_checker);
    tcase_add_test(running, checker_flags_long_handlers_only);
    tcase_add_test(running, checker_warns_on_time_repeats_and_measures_exactly);
}
