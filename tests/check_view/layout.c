/* layout.c -- the view at a class's screen sizes: nothing essential cut,
 * the panes' grid, wrapping, the list's scrolling and order, zoom. */
#include "check_view.h"

/* How many rows contain needle. */
static int rows_with(const struct screen *scr, const char *needle)
{
    char row[1024];
    int n = 0;
    for (int y = 0; y < scr->h; y++) {
        screen_row_text(scr, y, row, sizeof(row));
        n += strstr(row, needle) != NULL;
    }
    return n;
}

static const char long_reason[] =
    "reactor unblocked: it was stuck in one handler for at least 0.2 s";
static const char narrator[] =
    "[slow-handler] 1% of lines sleep 200 ms: the reactor's one loop sleeps too "
    "(BLOCKED) and all its connections wait; BIO and the pool block just one thread.";

/* Four panes as the slow-handler demo has them: a reactor whose loop is
 * blocked, a long event reason, the narrator under the panes. */
static void demo_view(struct view *v, struct board_snapshot *s[4])
{
    static const char *const models[4] = { "bio", "pool", "reactor", "multireactor" };
    view_init(v, false);
    v->npanes = 4;
    for (int i = 0; i < 4; i++) {
        s[i] = make_snapshot(models[i], 100 + i, 6);
        add_thread(s[i], ROLE_WORKER_LOOP, "loop", STATE_BLOCKED_SLEEP, 0);
        s[i]->counters[CTR_ACTIVE] = 64;
        s[i]->counters[CTR_LINES] = 123456789;
        v->panes[i].pid = s[i]->pid;
        v->panes[i].now = s[i];
    }
    struct board_snapshot *r = s[2];
    r->nloops = 1;
    snprintf(r->loops[0].name, BOARD_NAME_BYTES, "reactor");
    r->loops[0].channels = 64;
    r->loops[0].phase = 2;
    r->loops[0].blocked_since_ns = r->taken_mono_ns - SEC / 5;
    r->nevents = 1;
    r->events[0].kind = EV_BLOCKED;
    r->events[0].time_ns = r->taken_mono_ns - SEC;
    snprintf(r->events[0].text, sizeof(r->events[0].text), "%s", long_reason);
    snprintf(v->footer, sizeof(v->footer), "%s", narrator);
}

/* The rows from..to-1 joined by spaces, each row's leading blanks cut. */
static void joined_rows(const struct screen *scr, int from, int to, int x0, int w,
                        char *out, size_t len)
{
    out[0] = '\0';
    for (int y = from; y < to; y++) {
        char row[1024];
        screen_row_text(scr, y, row, sizeof(row));
        if ((int)strlen(row) > x0 + w)
            row[x0 + w] = '\0';
        for (size_t n = strlen(row); n > 0 && row[n - 1] == ' '; n--)
            row[n - 1] = '\0';
        const char *p = (int)strlen(row) > x0 ? row + x0 : "";
        while (*p == ' ')
            p++;
        size_t n = strlen(out);
        snprintf(out + n, len - n, "%s%s", n && *p ? " " : "", p);
    }
}

START_TEST(nothing_essential_is_cut_at_120x40_or_80x24)
{
    struct board_snapshot *s[4];
    struct view v;
    struct screen scr;
    demo_view(&v, s);
    screen_init(&scr, 120, 40);
    view_render(&v, &scr);
    /* Every pane: its failures, even in the short form. */
    ck_assert_int_eq(rows_with(&scr, "rej 0 err 0"), 2);   /* two rows of two panes */
    ck_assert_int_ge(screen_find(&scr, "rej 0 err 0 "), 0);
    /* The reactor's loop row keeps its phase and its BLOCKED time. */
    ck_assert_int_ge(screen_find(&scr, "PHASE"), 0);
    ck_assert_int_ge(screen_find(&scr, "io    BLOCKED 0.2s"), 0);
    /* The event reason wraps inside the reactor's pane (bottom left,
     * columns 0-58), every word of it there. */
    char text[2048];
    int ev = screen_find(&scr, "+5.000s blocked reactor");
    ck_assert_int_gt(ev, 18);          /* the bottom row of panes */
    joined_rows(&scr, ev, ev + 3, 0, 59, text, sizeof(text));
    ck_assert_msg(strstr(text, long_reason), "the reason is cut: '%s'", text);
    /* The narrator, whole, on the rows above the legend. */
    int top = screen_find(&scr, "[slow-handler]");
    ck_assert_int_gt(top, 30);
    joined_rows(&scr, top, 39, 0, 120, text, sizeof(text));
    ck_assert_str_eq(text, narrator);
    char row[256];
    screen_row_text(&scr, 39, row, sizeof(row));
    ck_assert_ptr_nonnull(strstr(row, "q quit  ? help"));
    ck_assert_int_eq(strcmp(row + strlen(row) - 6, " 500ms"), 0);

    /* 80x24: one pane at a time, and still the way out and to the help. */
    screen_free(&scr);
    screen_init(&scr, 80, 24);
    view_render(&v, &scr);
    screen_row_text(&scr, 23, row, sizeof(row));
    ck_assert_msg(strstr(row, "q quit  ? help"), "legend at 80: '%s'", row);
    ck_assert_int_eq(strcmp(row + strlen(row) - 6, " 500ms"), 0);
    top = screen_find(&scr, "[slow-handler]");
    joined_rows(&scr, top, 23, 0, 80, text, sizeof(text));
    ck_assert_str_eq(text, narrator);
    screen_free(&scr);
    for (int i = 0; i < 4; i++)
        free(s[i]);
}
END_TEST

/* The column where needle starts in row y, or -1. */
static int column_of(const struct screen *scr, int y, const char *needle)
{
    char row[1024];
    screen_row_text(scr, y, row, sizeof(row));
    const char *at = strstr(row, needle);
    return at ? (int)(at - row) : -1;
}

/* Five panes, as the demo has them: at 120x36 a 3x2 grid of 40 columns,
 * where the reactor's loop row gives its phase's place to its BLOCKED
 * time; at 160x48 a 2x3 grid of 80 columns. */
START_TEST(five_panes_are_a_3x2_grid_at_120_and_a_2x3_grid_at_160)
{
    struct board_snapshot *s[5];
    struct view v;
    struct screen scr;
    demo_view(&v, s);
    s[4] = make_snapshot("vthread", 104, 6);
    add_thread(s[4], ROLE_WORKER_LOOP, "carrier-0", STATE_RUNNING, 0);
    s[4]->counters[CTR_ACTIVE] = 64;
    v.panes[4].pid = s[4]->pid;
    v.panes[4].now = s[4];
    v.npanes = 5;

    screen_init(&scr, 120, 36);
    view_render(&v, &scr);
    ck_assert_int_eq(column_of(&scr, 0, "bio  pid"), 1);
    ck_assert_int_eq(column_of(&scr, 0, "pool  pid"), 41);
    ck_assert_int_eq(column_of(&scr, 0, "reactor  pid"), 81);
    int second = screen_find(&scr, "multireactor  pid");
    ck_assert_int_gt(second, 12);                  /* each pane 12 rows at least */
    ck_assert_int_eq(column_of(&scr, second, "multireactor  pid"), 1);
    ck_assert_int_eq(column_of(&scr, second, "vthread  pid"), 41);
    ck_assert_int_eq(rows_with(&scr, "rej 0 err 0"), 2);
    int loop = screen_find(&scr, "LOOP      CHANS QUEUE PHASE");
    ck_assert_int_ge(loop, 0);
    ck_assert_int_eq(column_of(&scr, loop + 1, "reactor      64     0 BLOCKED 0.2s"), 81);
    screen_free(&scr);

    screen_init(&scr, 160, 48);
    view_render(&v, &scr);
    ck_assert_int_eq(column_of(&scr, 0, "pool  pid"), 81);
    int third = screen_find(&scr, "vthread  pid");
    ck_assert_int_gt(third, screen_find(&scr, "reactor  pid"));
    ck_assert_int_eq(column_of(&scr, third, "vthread  pid"), 1);
    ck_assert_int_ge(screen_find(&scr, "io    BLOCKED 0.2s"), 0);   /* the wider row */
    screen_free(&scr);
    for (int i = 0; i < 5; i++)
        free(s[i]);
}
END_TEST

START_TEST(wrapping_breaks_at_words_and_marks_a_cut)
{
    struct screen scr;
    screen_init(&scr, 20, 4);
    /* 12 columns: "one two" / "three four" / "five" */
    ck_assert_int_eq(screen_put_wrapped(NULL, 0, 0, 12, 9, 0, ST_NORMAL,
                                        "one two three four five"), 3);
    int rows = screen_put_wrapped(&scr, 0, 0, 12, 2, 2, ST_NORMAL,
                                  "one two three four five six");
    ck_assert_int_eq(rows, 3);                 /* needs 3, given 2 */
    char row[64];
    screen_row_text(&scr, 0, row, sizeof(row));
    ck_assert_str_eq(row, "one two");
    screen_row_text(&scr, 1, row, sizeof(row));
    ck_assert_str_eq(row, "  three...");   /* indented, cut after a word */
    /* A word longer than the row is cut hard, not lost. */
    ck_assert_int_eq(screen_put_wrapped(NULL, 0, 0, 4, 9, 0, ST_NORMAL, "abcdefghij"), 3);
    screen_free(&scr);
}
END_TEST

START_TEST(the_list_scrolls_and_says_how_many_are_shown)
{
    struct board_snapshot *s = make_snapshot("bio", 7, 10);
    add_thread(s, ROLE_ACCEPTOR, "acceptor", STATE_WAITING, 0);
    for (int i = 1; i <= 200; i++) {
        char name[16];
        snprintf(name, sizeof(name), "conn-%d", i);
        add_thread(s, ROLE_CONN, name, STATE_BLOCKED_IO, (uint64_t)i);
    }
    struct view v;
    struct screen scr;
    one_pane(&v, s, NULL);
    v.layout = LAYOUT_LIST;
    screen_init(&scr, 120, 40);
    view_render(&v, &scr);
    char row[256];
    int said = screen_find(&scr, " of 201 shown (1-");
    ck_assert_int_ge(said, 0);
    screen_row_text(&scr, said, row, sizeof(row));
    int shown = atoi(row + 1);
    ck_assert_int_gt(shown, 5);
    ck_assert_int_lt(screen_find(&scr, "conn-200 "), 0);
    /* End: the last thread, selected, and the window ends with it. */
    view_key(&v, TERM_KEY_END);
    view_render(&v, &scr);
    int last = screen_find(&scr, "conn-200 ");
    ck_assert_int_ge(last, 0);
    ck_assert_int_eq(screen_at(&scr, 1, last)->style, ST_FOCUS);
    char want[64];
    snprintf(want, sizeof(want), "%d of 201 shown (%d-201;", shown, 201 - shown + 1);
    ck_assert_int_eq(screen_find(&scr, want), last + 1);
    /* Up scrolls at once (the window follows the selection), down past the
     * end stays at the end, PgUp moves 10, Home goes back to the top. */
    view_key(&v, TERM_KEY_UP);
    view_key(&v, TERM_KEY_DOWN);
    view_key(&v, TERM_KEY_DOWN);
    ck_assert_int_eq(v.cursor, 200);
    view_key(&v, TERM_KEY_PGUP);
    ck_assert_int_eq(v.cursor, 190);
    view_render(&v, &scr);
    ck_assert_int_ge(screen_find(&scr, "conn-190 "), 0);
    ck_assert_int_lt(screen_find(&scr, "conn-200 "), 0);
    view_key(&v, TERM_KEY_HOME);
    view_render(&v, &scr);
    ck_assert_int_ge(screen_find(&scr, "acceptor "), 0);
    ck_assert_int_ge(screen_find(&scr, " of 201 shown (1-"), 0);
    screen_free(&scr);
    free(s);
}
END_TEST

START_TEST(exited_threads_are_counted_recent_and_in_all)
{
    struct board_snapshot *s = make_snapshot("bio", 7, 20);
    add_thread(s, ROLE_ACCEPTOR, "acceptor", STATE_WAITING, 0);
    add_thread(s, ROLE_CONN, "conn-1", STATE_TERMINATED, 1);     /* 1 s ago */
    add_thread(s, ROLE_CONN, "conn-2", STATE_TERMINATED, 2);
    s->threads[2].since_ns = s->taken_mono_ns - 10 * SEC;        /* faded */
    s->threads_by_state[STATE_TERMINATED] = 205;                 /* lifetime */
    struct view v;
    struct screen scr;
    one_pane(&v, s, NULL);
    screen_init(&scr, 120, 40);
    view_render(&v, &scr);
    ck_assert_int_ge(screen_find(&scr, "x 1 exited in 3s (205 in all)"), 0);
    screen_free(&scr);
    /* Two panes side by side at 120: the short form. */
    v.npanes = 2;
    v.panes[1] = v.panes[0];
    screen_init(&scr, 120, 40);
    view_render(&v, &scr);
    ck_assert_int_ge(screen_find(&scr, " x1/205"), 0);
    screen_free(&scr);
    free(s);
}
END_TEST

START_TEST(tab_zooms_the_panes_in_turn_on_a_small_screen)
{
    struct board_snapshot *s[4];
    struct view v;
    struct screen scr;
    demo_view(&v, s);
    screen_init(&scr, 120, 36);
    view_resize(&v, 120, 36);
    view_key(&v, '\t');                   /* the grid -> pane 1 zoomed */
    ck_assert(v.zoomed);
    ck_assert_int_eq(v.focus, 0);
    view_key(&v, '\t');
    view_key(&v, '\t');                   /* the reactor */
    view_render(&v, &scr);
    ck_assert_int_eq(screen_find(&scr, "reactor  pid 102"), 0);
    ck_assert_int_ge(screen_find(&scr, "LOOP            CHANNELS"), 0);   /* the wide row */
    ck_assert_int_ge(screen_find(&scr, "io    BLOCKED 0.2s"), 0);
    ck_assert_int_ge(screen_find(&scr, "pane 3 of 4, zoomed"), 0);
    view_key(&v, '\t');
    view_key(&v, '\t');                   /* after the last: all four */
    ck_assert(!v.zoomed);
    ck_assert_int_eq(v.focus, 0);
    /* At the tested minimum tab only moves the focus. */
    view_resize(&v, 120, 40);
    view_key(&v, '\t');
    ck_assert(!v.zoomed);
    ck_assert_int_eq(v.focus, 1);
    screen_free(&scr);
    for (int i = 0; i < 4; i++)
        free(s[i]);
}
END_TEST

START_TEST(o_orders_the_list_by_role_state_lines_or_cpu)
{
    struct board_snapshot *s = make_snapshot("bio", 7, 10);
    add_thread(s, ROLE_ACCEPTOR, "acceptor", STATE_WAITING, 0);
    add_thread(s, ROLE_CONN, "conn-1", STATE_BLOCKED_IO, 1);
    add_thread(s, ROLE_CONN, "conn-2", STATE_RUNNING, 2);
    add_thread(s, ROLE_CONN, "conn-3", STATE_IDLE, 3);
    s->threads[1].lines = 5;
    s->threads[2].lines = 1;
    s->threads[3].lines = 9;
    float cpu[4] = { 0.0f, 50.0f, CPU_NONE, 10.0f };
    struct view v;
    struct screen scr;
    one_pane(&v, s, NULL);
    v.panes[0].cpu_pct = cpu;
    screen_init(&scr, 120, 40);
    static const char *const want[ORDER_COUNT][4] = {
        { "acceptor ", "conn-1 ", "conn-2 ", "conn-3 " },   /* role, conn */
        { "conn-2 ", "conn-1 ", "acceptor ", "conn-3 " },   /* R, b, w, . */
        { "conn-3 ", "conn-1 ", "conn-2 ", "acceptor " },   /* 9, 5, 1, 0 lines */
        { "conn-1 ", "conn-3 ", "acceptor ", "conn-2 " },   /* 50, 10, 0 %, none */
    };
    for (int o = 0; o < ORDER_COUNT; o++) {
        view_render(&v, &scr);
        for (int i = 0; i < 3; i++)
            ck_assert_msg(screen_find(&scr, want[o][i]) < screen_find(&scr, want[o][i + 1]),
                          "order %d: %s before %s", o, want[o][i], want[o][i + 1]);
        view_key(&v, 'o');
    }
    ck_assert_int_eq(v.order, ORDER_ROLE);   /* o cycles back */
    screen_free(&scr);
    free(s);
}
END_TEST

void add_layout_tests(TCase *tc)
{
    tcase_add_test(tc, nothing_essential_is_cut_at_120x40_or_80x24);
    tcase_add_test(tc, five_panes_are_a_3x2_grid_at_120_and_a_2x3_grid_at_160);
    tcase_add_test(tc, wrapping_breaks_at_words_and_marks_a_cut);
    tcase_add_test(tc, the_list_scrolls_and_says_how_many_are_shown);
    tcase_add_test(tc, exited_threads_are_counted_recent_and_in_all);
    tcase_add_test(tc, tab_zooms_the_panes_in_turn_on_a_small_screen);
    tcase_add_test(tc, o_orders_the_list_by_role_state_lines_or_cpu);
}
