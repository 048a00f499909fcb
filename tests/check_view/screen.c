/* screen.c -- what a pane draws for given snapshots: a list or a grid of
 * states, rates from two snapshots, loops and queues, two panes, keys, and
 * hostile text made printable. */
#include "check_view.h"

START_TEST(few_threads_are_a_list_with_states)
{
    struct board_snapshot *s = make_snapshot("bio", 4242, 65);
    add_thread(s, ROLE_ACCEPTOR, "acceptor", STATE_WAITING, 0);
    add_thread(s, ROLE_CONN, "conn-2", STATE_BLOCKED_SLEEP, 2);
    add_thread(s, ROLE_CONN, "conn-1", STATE_BLOCKED_IO, 1);
    s->counters[CTR_ACTIVE] = 2;
    struct view v;
    struct screen scr;
    one_pane(&v, s, NULL);
    screen_init(&scr, 120, 40);
    view_render(&v, &scr);

    ck_assert_int_eq(screen_find(&scr, "bio  pid 4242  up 1m05s"), 0);
    ck_assert_int_ge(screen_find(&scr, "conns 2"), 0);
    ck_assert_int_ge(screen_find(&scr, "threads 3:"), 0);
    ck_assert_int_ge(screen_find(&scr, "b 1 blocked-io"), 0);
    ck_assert_int_ge(screen_find(&scr, "S 1 blocked-sleep"), 0);
    int acc = screen_find(&scr, "acceptor        w waiting");
    int c1 = screen_find(&scr, "conn-1          b blocked-io");
    int c2 = screen_find(&scr, "conn-2          S blocked-sleep");
    ck_assert_int_ge(acc, 0);
    ck_assert_msg(acc < c1 && c1 < c2, "order: acceptor, then by connection");
    /* The legend stays on the last row. */
    char row[256];
    screen_row_text(&scr, 39, row, sizeof(row));
    ck_assert_ptr_nonnull(strstr(row, "R running"));
    ck_assert_ptr_nonnull(strstr(row, "q quit"));
    screen_free(&scr);
    free(s);
}
END_TEST

START_TEST(many_threads_are_a_grid_of_state_cells)
{
    struct board_snapshot *s = make_snapshot("bio", 7, 10);
    add_thread(s, ROLE_ACCEPTOR, "acceptor", STATE_WAITING, 0);
    for (int i = 1; i <= 300; i++)
        add_thread(s, ROLE_CONN, "conn", i % 3 ? STATE_BLOCKED_IO : STATE_RUNNING,
                   (uint64_t)i);
    struct view v;
    struct screen scr;
    one_pane(&v, s, NULL);
    screen_init(&scr, 120, 40);
    view_render(&v, &scr);
    ck_assert_int_ge(screen_find(&scr, "one cell per thread (301 shown)"), 0);
    ck_assert_int_ge(screen_find(&scr, "threads 301:"), 0);
    /* One cell per thread, lettered and styled by state (plus one letter
     * each in the by-state line and the legend). */
    ck_assert_int_eq(count_cells(&scr, 'b', ST_BLOCKED_IO), 200 + 2);
    ck_assert_int_eq(count_cells(&scr, 'R', ST_RUNNING), 100 + 2);
    ck_assert_int_eq(count_cells(&scr, 'w', ST_WAITING), 1 + 2);

    /* t forces the list: only the first rows fit. */
    view_key(&v, 't');
    ck_assert_int_eq(v.layout, LAYOUT_LIST);
    view_render(&v, &scr);
    ck_assert_int_lt(screen_find(&scr, "one cell per thread"), 0);
    ck_assert_int_ge(screen_find(&scr, "THREAD"), 0);
    screen_free(&scr);
    free(s);
}
END_TEST

START_TEST(rates_come_from_two_snapshots)
{
    struct board_snapshot *a = make_snapshot("bio", 7, 10);
    struct board_snapshot *b = make_snapshot("bio", 7, 12);
    a->counters[CTR_LINES] = 1000;
    b->counters[CTR_LINES] = 51000;       /* 50 000 lines in 2 s */
    b->hist[hist_bucket_of(2000)] = 49000;
    b->hist[hist_bucket_of(5000000)] = 1000;
    struct pane_rates r;
    struct pane p = { .pid = 7, .now = b, .before = a };
    pane_rates(&p, &r);
    ck_assert(r.have);
    ck_assert(r.lines_per_s > 24999 && r.lines_per_s < 25001);
    ck_assert_uint_le(r.p50_ns, 2000 * 17 / 16);
    ck_assert_uint_ge(r.p50_ns, 2000);
    ck_assert_uint_ge(r.p99_ns, 5000000 - 1);

    struct view v;
    struct screen scr;
    one_pane(&v, b, a);
    screen_init(&scr, 120, 40);
    view_render(&v, &scr);
    ck_assert_int_ge(screen_find(&scr, "lines/s 25.0k  handle p50 2.0us  p99 5."), 0);
    /* No earlier snapshot: no rate, a dash instead of a made-up number. */
    v.panes[0].before = NULL;
    view_render(&v, &scr);
    ck_assert_int_ge(screen_find(&scr, "lines/s -  handle p50 -  p99 -"), 0);
    screen_free(&scr);
    free(a);
    free(b);
}
END_TEST

/* The loop row's IO/TASK is the split since the snapshot before (live),
 * not since the start; its OUTPUT and PAUSED show backpressure (PAUSED in
 * the warning colour when a channel stopped reading); a loop whose tasks
 * starved its I/O says so. A counter that went back (another process
 * scribbling) falls back to the totals instead of wrapping. */
START_TEST(loop_rows_show_the_split_now_and_backpressure)
{
    struct board_snapshot *before = make_snapshot("reactor", 9, 5);
    struct board_snapshot *s = make_snapshot("reactor", 9, 5);
    before->nloops = s->nloops = 1;
    snprintf(before->loops[0].name, BOARD_NAME_BYTES, "loop-1");
    snprintf(s->loops[0].name, BOARD_NAME_BYTES, "loop-1");
    before->loops[0].io_ns = 9000;          /* 90/10 since the start... */
    before->loops[0].task_ns = 1000;
    s->loops[0].io_ns = 9000 + 200;         /* ...but 20/80 since the last look */
    s->loops[0].task_ns = 1000 + 800;
    s->loops[0].phase = 3;
    s->loops[0].out_pending_bytes = 2500000;
    s->loops[0].channels_paused = 2;
    s->loops[0].tasks_starving_io = 3;
    struct view v;
    struct screen scr;
    one_pane(&v, s, before);
    screen_init(&scr, 120, 40);
    view_render(&v, &scr);
    ck_assert_int_ge(screen_find(&scr, "   2.50MB      2  20/80  tasks TASKS STARVE I/O x3"), 0);
    ck_assert_int_ge(count_cells(&scr, 'M', ST_WARN), 1);    /* paused channels warn */
    screen_free(&scr);

    before->loops[0].task_ns = UINT64_MAX;                    /* went back */
    one_pane(&v, s, before);
    screen_init(&scr, 120, 40);
    view_render(&v, &scr);
    ck_assert_int_ge(screen_find(&scr, "  84/16  tasks"), 0);     /* the totals */
    screen_free(&scr);
    free(s);
    free(before);
}
END_TEST

START_TEST(loops_and_queues_show_bars)
{
    struct board_snapshot *s = make_snapshot("reactor", 9, 5);
    add_thread(s, ROLE_WORKER_LOOP, "loop-1", STATE_WAITING, 0);
    s->nloops = 1;
    snprintf(s->loops[0].name, BOARD_NAME_BYTES, "loop-1");
    s->loops[0].channels = 12;
    s->loops[0].task_queue_depth = 32;     /* half of the bar's 64 */
    s->loops[0].io_ns = 700;
    s->loops[0].task_ns = 300;
    s->loops[0].blocked_since_ns = s->taken_mono_ns - 2 * SEC;
    s->loops[0].phase = 2;                 /* stuck in a handler: io */
    s->nqueues = 1;
    snprintf(s->queues[0].name, BOARD_NAME_BYTES, "tasks");
    s->queues[0].depth = 10;
    s->queues[0].capacity = 10;
    s->queues[0].rejected = 3;
    struct view v;
    struct screen scr;
    one_pane(&v, s, NULL);
    screen_init(&scr, 120, 40);
    view_render(&v, &scr);
    ck_assert_int_ge(screen_find(&scr, "loop-1                12 [#####.....]   32       0B      0  70/30  io    BLOCKED 2.0s"), 0);
    ck_assert_int_ge(screen_find(&scr, "tasks           [##############]  10/10"), 0);
    ck_assert_int_gt(count_cells(&scr, '#', ST_WARN), 13);   /* a full queue warns */
    ck_assert_int_eq(count_cells(&scr, 'B', ST_WARN), 1);    /* BLOCKED is red */
    screen_free(&scr);
    free(s);
}
END_TEST

START_TEST(two_panes_side_by_side_or_stacked)
{
    struct board_snapshot *a = make_snapshot("bio", 11, 1);
    struct board_snapshot *b = make_snapshot("pool", 22, 1);
    struct view v;
    struct screen wide, narrow, tiny;
    view_init(&v, false);
    v.npanes = 2;
    v.panes[0] = (struct pane){ .pid = 11, .now = a };
    v.panes[1] = (struct pane){ .pid = 22, .now = b, .gone = true };

    screen_init(&wide, 140, 40);
    view_render(&v, &wide);
    ck_assert_int_eq(screen_find(&wide, ">bio"), 0);       /* focused */
    ck_assert_int_eq(screen_find(&wide, " pool  pid 22"), 0);
    ck_assert_int_eq(screen_find(&wide, "GONE: the server exited"), 0);
    /* 70 columns a pane: the short forms. */
    ck_assert_int_ge(screen_find(&wide, "threads 0: .0 w0 R0 b0 S0 x0"), 0);
    ck_assert_int_ge(screen_find(&wide, "rej 0 err 0"), 0);

    screen_init(&narrow, 80, 40);
    view_render(&v, &narrow);
    ck_assert_int_eq(screen_find(&narrow, ">bio"), 0);
    ck_assert_int_gt(screen_find(&narrow, " pool  pid 22"), 5);

    view_key(&v, '\t');
    ck_assert_int_eq(v.focus, 1);
    screen_init(&tiny, 60, 14);              /* too short to stack two */
    view_render(&v, &tiny);
    ck_assert_int_eq(screen_find(&tiny, ">pool"), 0);
    ck_assert_int_ge(screen_find(&tiny, "pane 2 of 2"), 0);
    ck_assert_int_lt(screen_find(&tiny, "bio  pid 11"), 0);

    struct screen small;
    screen_init(&small, 30, 8);
    view_render(&v, &small);
    ck_assert_int_eq(screen_find(&small, "terminal too small: 30x8"), 0);
    screen_free(&wide);
    screen_free(&narrow);
    screen_free(&tiny);
    screen_free(&small);
    free(a);
    free(b);
}
END_TEST

START_TEST(keys_and_empty_view)
{
    struct view v;
    struct screen scr;
    view_init(&v, false);
    snprintf(v.board_dir, sizeof(v.board_dir), "/tmp/x");
    screen_init(&scr, 100, 30);
    view_render(&v, &scr);
    ck_assert_int_ge(screen_find(&scr, "no servers running"), 0);
    ck_assert_int_ge(screen_find(&scr, "looked in /tmp/x"), 0);

    ck_assert(view_key(&v, 'p'));
    ck_assert(v.paused);
    view_render(&v, &scr);
    ck_assert_int_ge(screen_find(&scr, "PAUSED 500ms"), 0);
    view_key(&v, '+');
    ck_assert_int_eq(v.refresh_ms, 250);
    for (int i = 0; i < 10; i++)
        view_key(&v, '-');
    ck_assert_int_eq(v.refresh_ms, VIEW_REFRESH_MS_MAX);
    view_key(&v, 'l');
    ck_assert(!v.show_log);
    view_key(&v, '?');
    view_render(&v, &scr);
    ck_assert_int_ge(screen_find(&scr, "threadlab top: keys"), 0);
    ck_assert(view_key(&v, 'x'));            /* any key closes help */
    ck_assert(!v.help);
    ck_assert(!view_key(&v, 'q'));
    screen_free(&scr);
}
END_TEST

START_TEST(hostile_text_is_made_printable)
{
    struct screen scr;
    screen_init(&scr, 20, 2);
    screen_put(&scr, 0, 0, -1, ST_NORMAL, "a\033[2Jb\tc");
    char row[32];
    screen_row_text(&scr, 0, row, sizeof(row));
    ck_assert_str_eq(row, "a?[2Jb?c");
    screen_free(&scr);
}
END_TEST

void add_screen_tests(TCase *tc)
{
    tcase_add_test(tc, few_threads_are_a_list_with_states);
    tcase_add_test(tc, many_threads_are_a_grid_of_state_cells);
    tcase_add_test(tc, rates_come_from_two_snapshots);
    tcase_add_test(tc, loops_and_queues_show_bars);
    tcase_add_test(tc, loop_rows_show_the_split_now_and_backpressure);
    tcase_add_test(tc, two_panes_side_by_side_or_stacked);
    tcase_add_test(tc, keys_and_empty_view);
    tcase_add_test(tc, hostile_text_is_made_printable);
}
