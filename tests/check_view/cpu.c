/* cpu.c -- CPU% from /proc, and Enter's detail of one thread. */
#include "check_view.h"

/* ---- CPU% from /proc, and Enter's detail ---------------------------------- */

START_TEST(a_stat_line_is_parsed_from_its_last_paren)
{
    uint64_t t = 0;
    /* tty_nr 0 and tpgid -1 come before utime (14) and stime (15). */
    const char *line = "42 (a) b) (c) S 1 42 42 0 -1 4194368 13 0 0 0 7 5 0 0 20 0 2 0";
    ck_assert_int_eq(cpu_parse_stat(line, &t), 0);
    ck_assert_uint_eq(t, 12);
    static const char *const bad[] = {
        "", "42 no parens S 1 2 3", "42 (x)S 1 42 42 0 -1 1 1 1 1 1 7 5 0",
        "42 (x) S 1 42 42 0 -1 1 1 1 1 1 7",            /* cut after utime */
        "42 (x) S 1 42 42 0 -1 1 1 1 1 1 -7 5 0",       /* a negative utime */
        "42 (x) S 1 42 42 0 -1 1 1 1 1 1 7x 5 0",
        "42 (x) S 1 42 42 0 -1 1 1 1 1 1 99999999999999999999999 5 0",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        t = 77;
        ck_assert_msg(cpu_parse_stat(bad[i], &t) == -EINVAL, "parsed '%s'", bad[i]);
        ck_assert_uint_eq(t, 77);                      /* untouched */
    }
    ck_assert_int_eq(cpu_task_ticks(getpid(), (uint32_t)gettid(), &t), 0);
    /* Not a thread of this process (pid 1's own), none, or out of range. */
    ck_assert_int_eq(cpu_task_ticks(getpid(), 1, &t), -ENOENT);
    ck_assert_int_eq(cpu_task_ticks(getpid(), 0, &t), -ENOENT);
    ck_assert_int_eq(cpu_task_ticks(getpid(), 0xffffffffu, &t), -ENOENT);
}
END_TEST

START_TEST(cpu_is_sampled_from_proc_and_dashed_without_a_task)
{
    struct board_snapshot *s = make_snapshot("bio", getpid(), 10);
    add_thread(s, ROLE_CONN, "me", STATE_RUNNING, 1);
    add_thread(s, ROLE_CONN, "pid-1", STATE_RUNNING, 2);
    add_thread(s, ROLE_CONN, "simulated", STATE_RUNNING, 3);
    add_thread(s, ROLE_CONN, "ended", STATE_TERMINATED, 4);
    s->threads[0].tid = (uint32_t)gettid();
    s->threads[1].tid = 1;                 /* a scribbled tid: not ours */
    s->threads[3].tid = (uint32_t)gettid();
    struct cpu_sampler *c = calloc(1, sizeof(*c));
    float pct[4];
    cpu_sample(c, getpid(), s, pct);
    for (int i = 0; i < 4; i++)            /* the first sample has nothing to compare */
        ck_assert_msg(pct[i] == CPU_NONE, "thread %d: %f", i, (double)pct[i]);
    /* Burn CPU until the kernel has counted a tick more: bounded by what
     * this thread does, not by how fast the machine is. */
    uint64_t start, now;
    ck_assert_int_eq(cpu_task_ticks(getpid(), (uint32_t)gettid(), &start), 0);
    volatile uint64_t spin = 0;
    do {
        for (int i = 0; i < 1000000; i++)
            spin++;
        ck_assert_int_eq(cpu_task_ticks(getpid(), (uint32_t)gettid(), &now), 0);
    } while (now == start);
    cpu_sample(c, getpid(), s, pct);
    ck_assert_msg(pct[0] > 0, "me: %f", (double)pct[0]);
    ck_assert(pct[1] == CPU_NONE && pct[2] == CPU_NONE && pct[3] == CPU_NONE);
    /* The tid came back with fewer ticks (reused by a new thread): no figure. */
    c->last[0].ticks += 1000000;
    cpu_sample(c, getpid(), s, pct);
    ck_assert(pct[0] == CPU_NONE);
    free(c);
    free(s);
}
END_TEST

START_TEST(the_list_has_a_cpu_column)
{
    struct board_snapshot *s = make_snapshot("bio", 7, 10);
    add_thread(s, ROLE_ACCEPTOR, "acceptor", STATE_WAITING, 0);
    add_thread(s, ROLE_CONN, "conn-1", STATE_RUNNING, 1);
    float cpu[2] = { CPU_NONE, 12.5f };
    struct view v;
    struct screen scr;
    one_pane(&v, s, NULL);
    v.panes[0].cpu_pct = cpu;
    screen_init(&scr, 120, 40);
    view_render(&v, &scr);
    ck_assert_int_ge(screen_find(&scr, "FOR  CPU%    CONN"), 0);
    ck_assert_int_ge(screen_find(&scr, "waiting         1.0s     -       -"), 0);
    ck_assert_int_ge(screen_find(&scr, "running         1.0s  12.5       1"), 0);
    v.panes[0].cpu_pct = NULL;             /* a replay: no figures at all */
    view_render(&v, &scr);
    ck_assert_int_ge(screen_find(&scr, "running         1.0s     -       1"), 0);
    /* A 2x2 pane at 120 columns (59): every column, LINES included. */
    screen_free(&scr);
    screen_init(&scr, 59, 40);
    v.panes[0].cpu_pct = cpu;
    view_render(&v, &scr);
    ck_assert_int_ge(screen_find(&scr, "CPU%  CONN   LINES"), 0);
    ck_assert_int_ge(screen_find(&scr, "12.5     1       0"), 0);
    screen_free(&scr);
    free(s);
}
END_TEST

START_TEST(enter_shows_the_selected_threads_figures)
{
    struct board_snapshot *s = make_snapshot("reactor", 7, 10);
    add_thread(s, ROLE_CONN, "conn-1", STATE_BLOCKED_IO, 1);
    add_thread(s, ROLE_WORKER_LOOP, "worker-1", STATE_RUNNING, 0);
    s->threads[0].bytes_in = 2048;
    s->threads[0].bytes_out = 100000;
    s->threads[0].lines = 33;
    s->threads[0].tid = 4321;
    s->nloops = 1;
    snprintf(s->loops[0].name, sizeof(s->loops[0].name), "worker-1");
    s->loops[0].channels = 12;
    s->loops[0].task_queue_depth = 3;
    float cpu[2] = { 2.5f, CPU_NONE };
    struct view v;
    struct screen scr;
    one_pane(&v, s, NULL);
    v.panes[0].cpu_pct = cpu;
    v.layout = LAYOUT_LIST;
    screen_init(&scr, 120, 40);
    ck_assert(view_key(&v, TERM_KEY_ENTER));
    view_render(&v, &scr);
    ck_assert_int_ge(screen_find(&scr, "conn-1  (conn, tid 4321)"), 0);
    ck_assert_int_ge(screen_find(&scr, "state        blocked-io, for 1.0s"), 0);
    ck_assert_int_ge(screen_find(&scr, "connection   1"), 0);
    ck_assert_int_ge(screen_find(&scr, "lines        33 answered"), 0);
    ck_assert_int_ge(screen_find(&scr, "bytes        in 2048 B, out 97.7 KiB"), 0);
    ck_assert_int_ge(screen_find(&scr, "CPU          2.5% now"), 0);
    ck_assert_int_ge(screen_find(&scr, "pending out  none held"), 0);
    ck_assert(view_key(&v, 'x'));          /* any key closes it */
    view_render(&v, &scr);
    ck_assert_int_lt(screen_find(&scr, "bytes        in"), 0);

    /* A loop thread: its loop's figures. */
    view_key(&v, TERM_KEY_DOWN);
    view_key(&v, TERM_KEY_ENTER);
    view_render(&v, &scr);
    ck_assert_int_ge(screen_find(&scr, "worker-1  (worker-loop, no kernel thread)"), 0);
    ck_assert_int_ge(screen_find(&scr, "its loop     12 channels, task queue 3"), 0);
    ck_assert_int_ge(screen_find(&scr, "CPU          - now"), 0);
    /* The thread leaves the board: the box says so, and reads nothing stale. */
    s->nthreads = 1;
    view_render(&v, &scr);
    ck_assert_int_ge(screen_find(&scr, "worker-1: no longer on the board"), 0);
    view_key(&v, 'x');
    /* Nothing to select: Enter opens nothing. */
    s->nthreads = 0;
    v.cursor = 0;
    view_key(&v, TERM_KEY_ENTER);
    ck_assert(!v.detail);
    screen_free(&scr);
    free(s);
}
END_TEST

void add_cpu_tests(TCase *tc)
{
    tcase_add_test(tc, a_stat_line_is_parsed_from_its_last_paren);
    tcase_add_test(tc, cpu_is_sampled_from_proc_and_dashed_without_a_task);
    tcase_add_test(tc, the_list_has_a_cpu_column);
    tcase_add_test(tc, enter_shows_the_selected_threads_figures);
}
