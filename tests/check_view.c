/* check_view.c -- what `threadlab top` shows for given snapshots, read from
 * the screen model without a terminal; and its panes: a killed server is
 * gone at the next refresh, out of memory leaves a pane as it was. */
#include <check.h>
#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model_suite.h"
#include "load/results.h"
#include "load/scenario.h"
#include "echo/session.h"
#include "probe/board.h"
#include "viz/cpu.h"
#include "viz/msg.h"
#include "viz/pane.h"
#include "viz/reason.h"
#include "viz/record.h"
#include "viz/term.h"
#include "viz/view.h"

#define SEC 1000000000ull

static struct board_snapshot *make_snapshot(const char *model, int pid,
                                            uint64_t taken_s)
{
    struct board_snapshot *s = calloc(1, sizeof(*s));
    snprintf(s->model, sizeof(s->model), "%s", model);
    s->pid = pid;
    s->start_mono_ns = 100 * SEC;
    s->taken_mono_ns = (100 + taken_s) * SEC;
    return s;
}

static void add_thread(struct board_snapshot *s, enum board_role role,
                       const char *name, enum board_state st, uint64_t conn)
{
    struct board_thread_snap *t = &s->threads[s->nthreads++];
    t->role = role;
    t->state = st;
    snprintf(t->name, sizeof(t->name), "%s", name);
    t->conn = conn;
    t->since_ns = s->taken_mono_ns - SEC;
    s->threads_by_state[st]++;
}

static void one_pane(struct view *v, struct board_snapshot *now,
                     struct board_snapshot *before)
{
    view_init(v, false);
    v->npanes = 1;
    v->panes[0].pid = now->pid;
    v->panes[0].now = now;
    v->panes[0].before = before;
}

static int count_cells(const struct screen *scr, char ch, enum style st)
{
    int n = 0;
    for (int i = 0; i < scr->w * scr->h; i++)
        n += scr->cells[i].ch == (uint32_t)(unsigned char)ch && scr->cells[i].style == st;
    return n;
}

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

/* A child process that publishes a board and waits to be killed; its pid,
 * and the board's path in path. */
static pid_t board_child(char *path, size_t len)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(fds[0]);
        struct board *b = board_create("bio", "killed in a test");
        const char *at = b ? board_path(b) : "";
        ssize_t w = write(fds[1], at, strlen(at) + 1);
        (void)w;
        for (;;)
            pause();
    }
    close(fds[1]);
    ssize_t n = read(fds[0], path, len - 1);
    close(fds[0]);
    ck_assert_int_gt(n, 1);
    path[n] = '\0';
    return pid;
}

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


/* ---- display width: CJK takes two columns ---------------------------------- */

START_TEST(wide_characters_take_two_columns_and_stay_whole)
{
    ck_assert_ptr_nonnull(setlocale(LC_CTYPE, "C.UTF-8"));
    struct screen scr;
    char row[256];
    screen_init(&scr, 20, 4);
    ck_assert_int_eq(screen_put(&scr, 0, 0, -1, ST_NORMAL, "值守线程ab"), 10);
    screen_row_text(&scr, 0, row, sizeof(row));
    ck_assert_str_eq(row, "值守线程ab");
    ck_assert_uint_eq(screen_at(&scr, 0, 0)->ch, (uint32_t)L'值');
    ck_assert_uint_eq(screen_at(&scr, 1, 0)->ch, SCREEN_WIDE_RIGHT);
    ck_assert_int_eq(screen_text_width("任务队列 q"), 10);
    /* A wide character that does not fit whole is left out. */
    ck_assert_int_eq(screen_put(&scr, 0, 1, 3, ST_NORMAL, "值守"), 2);
    screen_row_text(&scr, 1, row, sizeof(row));
    ck_assert_str_eq(row, "值");
    /* Overwriting half of one blanks its other half. */
    screen_put(&scr, 1, 1, -1, ST_NORMAL, "ab");
    screen_row_text(&scr, 1, row, sizeof(row));
    ck_assert_str_eq(row, " ab");
    /* Columns padded by width, not bytes. */
    screen_put_col(&scr, 0, 2, 10, ST_NORMAL, "任务队列", false);
    screen_put(&scr, 10, 2, -1, ST_NORMAL, "|");
    screen_put_col(&scr, 11, 2, 6, ST_NORMAL, "阻塞", true);
    screen_row_text(&scr, 2, row, sizeof(row));
    ck_assert_str_eq(row, "任务队列  |  阻塞");
    /* Not a character, a control: '?'. The last column takes no wide half. */
    screen_put(&scr, 0, 3, -1, ST_NORMAL, "\xff\x1b[2J");
    screen_put(&scr, 15, 3, -1, ST_NORMAL, "abcd值");
    screen_row_text(&scr, 3, row, sizeof(row));
    ck_assert_str_eq(row, "??[2J          abcd");
    screen_free(&scr);
}
END_TEST

START_TEST(cjk_wraps_between_characters)
{
    ck_assert_ptr_nonnull(setlocale(LC_CTYPE, "C.UTF-8"));
    const char *text = "阻塞线程检查器发现事件循环阻塞";   /* 15 characters, 30 columns */
    ck_assert_int_eq(screen_put_wrapped(NULL, 0, 0, 10, 9, 0, ST_NORMAL, text), 3);
    struct screen scr;
    char row[256];
    screen_init(&scr, 10, 3);
    ck_assert_int_eq(screen_put_wrapped(&scr, 0, 0, 10, 2, 0, ST_NORMAL, text), 3);
    screen_row_text(&scr, 0, row, sizeof(row));
    ck_assert_str_eq(row, "阻塞线程检");
    screen_row_text(&scr, 1, row, sizeof(row));
    ck_assert_str_eq(row, "查器发...");     /* cut: within its 10 columns */
    /* Between two wide characters, not back at the last space. */
    screen_clear(&scr);
    screen_put_wrapped(&scr, 0, 0, 10, 3, 0, ST_NORMAL, "ab 阻塞线程检查器");
    screen_row_text(&scr, 0, row, sizeof(row));
    ck_assert_str_eq(row, "ab 阻塞线");
    screen_free(&scr);
}
END_TEST


/* ---- the message table, and a Chinese screen ------------------------------- */

/* The printf conversions of a format, in order ("%s%llu" -> "sllu"). */
static void conversions(const char *fmt, char *out, size_t len)
{
    size_t n = 0;
    for (const char *p = fmt; *p && n + 4 < len; p++) {
        if (*p != '%')
            continue;
        p++;
        if (*p == '%')
            continue;
        while (*p && strchr("-+ #0123456789.*", *p))
            p++;
        while (*p && strchr("hlLqjzt", *p))
            out[n++] = *p++;
        if (*p)
            out[n++] = *p;
    }
    out[n] = '\0';
}

START_TEST(every_message_has_both_languages_with_the_same_conversions)
{
    for (int id = 0; id < MSG_COUNT; id++) {
        char en[64], zh[64];
        ck_assert_int_eq(msg_set_lang("en"), 0);
        const char *e = msg((enum msg_id)id);
        ck_assert_int_eq(msg_set_lang("zh"), 0);
        const char *z = msg((enum msg_id)id);
        ck_assert_msg(e && z, "message %d is missing a language", id);
        ck_assert_msg(*e == '\0' || strcmp(e, z) || id == M_COL_CPU || id == M_PHASE_IO,
                      "message %d ('%s') is not translated", id, e);
        if (msg_is_text((enum msg_id)id))
            continue;          /* drawn as text, never a format: '%' is itself */
        conversions(e, en, sizeof(en));
        conversions(z, zh, sizeof(zh));
        ck_assert_msg(!strcmp(en, zh), "message %d: '%s' has %%%s, '%s' has %%%s", id, e, en,
                      z, zh);
    }
    ck_assert_int_eq(msg_set_lang("fr"), -EINVAL);
}
END_TEST

START_TEST(the_language_comes_from_the_environment_unless_chosen)
{
    /* (each test is its own process: the choice starts unmade) */
    setenv("LANG", "zh_CN.UTF-8", 1);
    unsetenv("LC_ALL");
    setenv("LC_MESSAGES", "en_US.UTF-8", 1);
    ck_assert_int_eq(msg_lang(), LANG_EN);          /* LC_MESSAGES before LANG */
    ck_assert_int_eq(msg_set_lang("zh"), 0);
    ck_assert_int_eq(msg_lang(), LANG_ZH);
    ck_assert_str_eq(msg_state(STATE_BLOCKED_IO), "阻塞于读写");
    ck_assert_int_eq(msg_set_lang("en"), 0);
    ck_assert_str_eq(msg_state(STATE_BLOCKED_IO), "blocked-io");
}
END_TEST

START_TEST(a_chinese_screen_is_laid_out_by_display_width)
{
    ck_assert_int_eq(msg_set_lang("zh"), 0);
    unsetenv("LC_ALL");
    setenv("LANG", "C", 1);
    msg_setup_locale();                    /* no UTF-8 locale: C.UTF-8 */
    struct board_snapshot *s = make_snapshot("reactor", 7, 10);
    add_thread(s, ROLE_WORKER_LOOP, "reactor", STATE_BLOCKED_SLEEP, 0);
    add_thread(s, ROLE_CHECKER, "checker", STATE_WAITING, 0);
    s->nloops = 1;
    snprintf(s->loops[0].name, sizeof(s->loops[0].name), "reactor");
    s->loops[0].channels = 64;
    s->loops[0].phase = 2;
    s->loops[0].blocked_since_ns = s->taken_mono_ns - SEC / 5;
    s->counters[CTR_ACTIVE] = 64;
    s->nevents = 1;
    s->events[0] = (struct board_event_snap){ 1, s->start_mono_ns + SEC / 2, EV_BLOCKED,
                                              "reactor blocked 0.2 s" };
    struct view v;
    struct screen scr;
    char row[512];
    one_pane(&v, s, NULL);
    screen_init(&scr, 59, 40);             /* one pane of a 2x2 grid at 120 */
    view_render(&v, &scr);
    ck_assert_int_ge(screen_find(&scr, "连接 64 拒绝 0 错误 0"), 0);
    ck_assert_int_ge(screen_find(&scr, "线程         状态              持续  CPU%  连接    行数"), 0);
    ck_assert_int_ge(screen_find(&scr, "reactor      S 阻塞于sleep     1.0s     -     -       0"), 0);
    int y = screen_find(&scr, "事件循环    通道 任务队列      IO/任务 阶段");
    ck_assert_int_ge(y, 0);
    /* The row under the heading: each figure under its heading's columns. */
    screen_row_text(&scr, y + 1, row, sizeof(row));
    ck_assert_str_eq(row, " reactor       64 [......]    0   0/0   IO    阻塞 0.2s");
    /* The event's kind padded to the prefix's 7 columns, not 7 bytes. */
    ck_assert_int_ge(screen_find(&scr, "   +0.500s 阻塞    reactor blocked 0.2 s"), 0);
    screen_row_text(&scr, scr.h - 1, row, sizeof(row));
    ck_assert_msg(strstr(row, "q 退出  ? 帮助  500ms"), "legend: %s", row);
    /* The help box and the detail, in Chinese. */
    view_key(&v, '?');
    view_render(&v, &scr);
    ck_assert_int_ge(screen_find(&scr, "threadlab top：按键"), 0);
    view_key(&v, 'x');
    v.layout = LAYOUT_LIST;
    view_key(&v, TERM_KEY_ENTER);
    screen_free(&scr);
    screen_init(&scr, 120, 40);
    view_render(&v, &scr);
    ck_assert_int_ge(screen_find(&scr, "reactor  （worker 事件循环，无内核线程）"), 0);
    ck_assert_int_ge(screen_find(&scr, "状态         阻塞于sleep，已持续 1.0s"), 0);
    ck_assert_int_ge(screen_find(&scr, "所属事件循环 64 个通道，任务队列 0，定时器 0"), 0);
    screen_free(&scr);
    free(s);
}
END_TEST

/* ---- event reasons: the servers' English, the viewer's Chinese --------------- */

/* The calls whose string literals become an event's text on the board:
 * the events themselves, and the reasons handed to them (a `why`). A
 * snprintf into `why` counts only in a file that makes such calls (not in
 * board_read.c, whose `why` is an error message). */
static const char *const event_calls[] = {
    "board_event(", "board_event_at(", "simviz_event(",
};
static const char *const reason_calls[] = {
    "acceptor_refuse(", "sim__refuse(", "spawn_task_thread(", "retire_task_thread(",
};
static const char *const why_buffer[] = { "snprintf(why," };
/* sim --viz's status line says what the next event is (sim.c, describe). */
static const char *const describe_buffer[] = { "snprintf(out, len," };

/* One text found in the sources, and where. */
struct source_text {
    char text[256];
    char where[128];                    /* FILE:LINE */
};

/* Blank the comments of C source in place (a comment opener inside a
 * string literal stays). */
static void blank_comments(char *src)
{
    char quote = 0;
    for (char *p = src; *p; p++) {
        if (quote) {
            if (*p == '\\' && p[1])
                p++;
            else if (*p == quote)
                quote = 0;
        } else if (*p == '"' || *p == '\'') {
            quote = *p;
        } else if (p[0] == '/' && p[1] == '*') {
            char *end = strstr(p + 2, "*/");
            char *stop = end ? end + 2 : p + strlen(p);
            for (; p < stop; p++)
                if (*p != '\n')
                    *p = ' ';
            p--;
        } else if (p[0] == '/' && p[1] == '/') {
            for (; *p && *p != '\n'; p++)
                *p = ' ';
            p--;
        }
    }
}

/* The string literal at p (its opening quote) appended to out, escapes
 * read; returns the byte after its closing quote. */
static const char *read_literal(const char *p, char *out, size_t len)
{
    size_t n = strlen(out);
    for (p++; *p && *p != '"'; p++) {
        char c = *p;
        if (c == '\\' && p[1]) {
            c = *++p;
            c = c == 'n' ? '\n' : c == 't' ? '\t' : c;
        }
        if (n + 1 < len)
            out[n++] = c;
    }
    out[n] = '\0';
    return *p ? p + 1 : p;
}

/* The literals of the call whose '(' is at open, each run of adjacent
 * ones joined ("a " "b" is "a b"), appended to texts. */
static int call_literals(const char *src, const char *open, const char *file,
                         struct source_text *texts, int n, int max)
{
    int line = 1, depth = 0;
    for (const char *q = src; q < open; q++)
        line += *q == '\n';
    for (const char *p = open; *p; p++) {
        if (*p == '(')
            depth++;
        else if (*p == ')' && --depth == 0)
            break;
        else if (*p == '\'')
            p += p[1] == '\\' ? 3 : 2;
        else if (*p == '"' && n < max) {
            struct source_text *t = &texts[n++];
            t->text[0] = '\0';
            snprintf(t->where, sizeof(t->where), "%s:%d", file, line);
            do {
                p = read_literal(p, t->text, sizeof(t->text));
                while (isspace((unsigned char)*p))
                    line += *p++ == '\n';
            } while (*p == '"');
            p--;
        }
        line += *p == '\n';
    }
    return n;
}

/* Where src calls one of names[] (not a longer name ending so), from p. */
static const char *next_call(const char *src, const char *p, const char *name)
{
    for (p = strstr(p, name); p; p = strstr(p + 1, name))
        if (p == src || !(isalnum((unsigned char)p[-1]) || p[-1] == '_'))
            return p;
    return NULL;
}

static bool has_call(const char *src, const char *const *names, int nnames)
{
    for (int c = 0; c < nnames; c++)
        if (next_call(src, src, names[c]))
            return true;
    return false;
}

/* Every call of one of names[] in src: its literals. */
static int scan_calls(const char *src, const char *file, const char *const *names,
                      int nnames, struct source_text *texts, int n, int max)
{
    for (int c = 0; c < nnames; c++)
        for (const char *p = next_call(src, src, names[c]); p;
             p = next_call(src, p + 1, names[c]))
            n = call_literals(src, strchr(p, '('), file, texts, n, max);
    return n;
}

/* The texts every event call and reason call in models/ and sim/
 * hands the board. Returns how many; *nevents: how many were formats of
 * event calls. */
static int source_texts(struct source_text *texts, int max, int *nevents)
{
    glob_t g;
    int n = 0;
    *nevents = 0;
    ck_assert_int_eq(glob("models/*.c", 0, NULL, &g), 0);
    ck_assert_int_eq(glob("models/*/*.c", GLOB_APPEND, NULL, &g), 0);
    ck_assert_int_eq(glob("sim/*.c", GLOB_APPEND, NULL, &g), 0);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        FILE *f = fopen(g.gl_pathv[i], "r");
        ck_assert_msg(f, "%s: %s", g.gl_pathv[i], strerror(errno));
        static char src[1 << 20];
        size_t len = fread(src, 1, sizeof(src) - 1, f);
        fclose(f);
        src[len] = '\0';
        blank_comments(src);
        int before = n;
        n = scan_calls(src, g.gl_pathv[i], event_calls, 3, texts, n, max);
        *nevents += n - before;
        n = scan_calls(src, g.gl_pathv[i], reason_calls, 4, texts, n, max);
        if (has_call(src, event_calls, 3) || has_call(src, reason_calls, 4))
            n = scan_calls(src, g.gl_pathv[i], why_buffer, 1, texts, n, max);
        if (!strcmp(g.gl_pathv[i], "sim/sim.c"))
            n = scan_calls(src, g.gl_pathv[i], describe_buffer, 1, texts, n, max);
    }
    globfree(&g);
    return n;
}

/* Does a Chinese template keep the word (n letters at w) as it is, as a
 * word of its own (accept, epoll_wait, --max-conns)? */
static bool chinese_keeps(const char *w, size_t n)
{
    for (int i = 0; i < reason_count(); i++)
        for (const char *z = reason_template(i, LANG_ZH); *z; z++)
            if (!strncmp(z, w, n) && !isalpha((unsigned char)z[n]) &&
                (z == reason_template(i, LANG_ZH) || !isalpha((unsigned char)z[-1])))
                return true;
    return false;
}

/* Does s hold an English word (two letters or more) that no Chinese
 * template keeps? A thread's name (conn-7, task-2) is no word. Returns
 * the first, in word (size len), or false. */
static bool english_left(const char *s, char *word, size_t len)
{
    while (*s) {
        size_t n = 0;
        while (isalpha((unsigned char)s[n]))
            n++;
        bool name = s[n] == '-' && isdigit((unsigned char)s[n + 1]);
        if (n >= 2 && !name && !chinese_keeps(s, n)) {
            snprintf(word, len, "%.*s", (int)n, s);
            return true;
        }
        s += n ? n : 1;
    }
    return false;
}

/* A format as a server fills it in: every number 7, every string "x". */
static void sample_of(const char *fmt, char *out, size_t len)
{
    size_t n = 0;
    for (const char *p = fmt; *p && n + 2 < len; p++) {
        if (*p != '%') {
            out[n++] = *p;
            continue;
        }
        if (p[1] == '%') {
            out[n++] = *++p;
            continue;
        }
        while (p[1] && strchr("-+ #0123456789.hljzt", p[1]))
            p++;
        if (!*++p)
            break;
        out[n++] = *p == 's' ? 'x' : '7';
    }
    out[n] = '\0';
}

/* The text, filled in, is translated whole: a template fits it and no
 * English is left. Marks the template used. */
static void expect_translated(const char *text, const char *where, bool *used)
{
    char sample[256], zh[REASON_TEXT_BYTES], word[64];
    sample_of(text, sample, sizeof(sample));
    bool has_word = false;
    for (const char *p = sample; *p && !has_word; p++)
        has_word = isalpha((unsigned char)p[0]) && isalpha((unsigned char)p[1]);
    if (!has_word)
        return;                         /* nothing to translate: "%s", "", "s" */
    int i = reason_translate(LANG_ZH, sample, zh, sizeof(zh));
    ck_assert_msg(i >= 0, "%s: the event text \"%s\" has no template in viz/reason.c",
                  where, text);
    used[i] = true;
    ck_assert_msg(!english_left(zh, word, sizeof(word)),
                  "%s: \"%s\" is shown as \"%s\": '%s' is not translated (a template in "
                  "viz/reason.c for it)", where, text, zh, word);
}

START_TEST(every_event_the_servers_write_is_translated)
{
    static struct source_text texts[512];
    int nevents, n = source_texts(texts, 512, &nevents);
    /* The scan must find the events, or it would pass on nothing: about
     * 25 board_event calls in models/, 8 in sim/. */
    ck_assert_msg(nevents >= 30, "found only %d event texts (run from the top of the "
                  "tree, as make check does)", nevents);
    ck_assert_int_lt(n, 512);
    bool used[256] = { false };
    ck_assert_int_le(reason_count(), 256);
    for (int i = 0; i < n; i++)
        expect_translated(texts[i].text, texts[i].where, used);
    /* Why a connection ended: every ending the session names. */
    for (int e = 0; e < 64; e++)
        for (int stopping = 0; stopping < 2; stopping++) {
            const char *why = echo_end_reason((enum echo_end)e, stopping);
            if (strcmp(why, "?"))
                expect_translated(why, "echo_end_reason", used);
        }
    /* And the table holds nothing no server writes any more. */
    for (int i = 0; i < reason_count(); i++)
        ck_assert_msg(used[i], "template \"%s\" matches no event in the sources",
                      reason_template(i, LANG_EN));
}
END_TEST

/* A template's Chinese names each conversion of its English as %1 .. %9,
 * and names none that is not there. The one it may leave out: an English
 * plural's ending, a %s right after a letter (connection%s). */
START_TEST(every_reason_template_keeps_its_conversions)
{
    for (int i = 0; i < reason_count(); i++) {
        const char *en = reason_template(i, LANG_EN), *zh = reason_template(i, LANG_ZH);
        int n = 0;
        for (const char *p = en; *p; p++) {
            if (*p != '%')
                continue;
            if (*++p == '%')
                continue;                   /* "%%": no conversion */
            bool plural = p - 1 > en && isalpha((unsigned char)p[-2]) && *p == 's';
            char mark[12];
            snprintf(mark, sizeof(mark), "%%%d", ++n);
            ck_assert_msg(n <= 9, "\"%s\": more than 9 conversions", en);
            ck_assert_msg(plural || strstr(zh, mark), "\"%s\" -> \"%s\": %s (a number or "
                          "a name) is left out", en, zh, mark);
        }
        for (const char *p = strchr(zh, '%'); p; p = strchr(p + 1, '%'))
            ck_assert_msg(p[1] >= '1' && p[1] <= '0' + n, "\"%s\" -> \"%s\": '%.2s' names no "
                          "conversion of the English", en, zh, p);
    }
}
END_TEST

START_TEST(a_reason_is_translated_with_its_numbers_names_and_inner_reasons)
{
    char out[REASON_TEXT_BYTES];
    /* Numbers and names as written; the inner reason in its Chinese. */
    ck_assert_int_ge(reason_translate(LANG_ZH, "task-3: no idle thread, 6 queued, size 59 of "
                                      "max 128", out, sizeof(out)), 0);
    ck_assert_str_eq(out, "task-3：没有空闲线程，6 个在排队，线程池尺寸 59（最大 128）");
    reason_translate(LANG_ZH, "conn 12: not reading its replies (--stall-timeout), after 40 "
                     "lines", out, sizeof(out));
    ck_assert_str_eq(out, "连接 12：不读取自己的回复（--stall-timeout），此前应答了 40 行");
    /* The most particular template wins over "conn %llu: %s". */
    reason_translate(LANG_ZH, "conn 5: queue full (4), the caller runs it (caller-runs)",
                     out, sizeof(out));
    ck_assert_str_eq(out, "连接 5：任务队列已满（4），由提交者自己运行（caller-runs）");
    /* A %s that is no reason (strerror's) stays; an empty one fits. */
    reason_translate(LANG_ZH, "accept failed: Too many open files", out, sizeof(out));
    ck_assert_str_eq(out, "accept 失败：Too many open files");
    reason_translate(LANG_ZH, "worker-2 unblocked: its handler ran 2.0 s", out, sizeof(out));
    ck_assert_str_eq(out, "worker-2 解除阻塞：它的处理器运行了 2.0 秒");
    reason_translate(LANG_ZH, "worker-2 unblocked: its handler ran at least 2.0 s", out,
                     sizeof(out));
    ck_assert_str_eq(out, "worker-2 解除阻塞：它的处理器运行了 至少 2.0 秒");
    /* English is the board's text as it is; an unknown text, or one cut at
     * the board's 95 bytes, is shown as it is. */
    const char *text = "conn 7 -> worker-2: round robin (2 of 4)";
    ck_assert_int_ge(reason_translate(LANG_EN, text, out, sizeof(out)), 0);
    ck_assert_str_eq(out, text);
    ck_assert_int_eq(reason_translate(LANG_ZH, "a reason from an older server", out,
                                      sizeof(out)), -1);
    ck_assert_str_eq(out, "a reason from an older server");
    ck_assert_int_eq(reason_translate(LANG_ZH, "conn 7 -> worker-2: round robin (2 of",
                                      out, sizeof(out)), -1);
}
END_TEST

START_TEST(a_translation_is_cut_at_a_character_and_hostile_text_stays_bounded)
{
    /* "连接 12：" is 6 + 3 + 3 bytes; 10 bytes of room keep "连接 12" whole
     * and leave out the "：" that does not fit, not two bytes of it. */
    char out[11];
    reason_translate(LANG_ZH, "conn 12: stopping", out, sizeof(out));
    ck_assert_str_eq(out, "连接 12");
    ck_assert_int_eq(reason_translate(LANG_ZH, "conn 12", out, 1), 0);
    ck_assert_str_eq(out, "");
    /* Text another process wrote to make the matcher backtrack: ": " and
     * ", " everywhere, 95 bytes. It ends (bounded steps) and fits nothing. */
    char hostile[96], big[REASON_TEXT_BYTES];
    for (int i = 0; i < 95; i++)
        hostile[i] = ": , "[i % 4];
    hostile[95] = '\0';
    ck_assert_int_eq(reason_translate(LANG_ZH, hostile, big, sizeof(big)), -1);
    ck_assert_str_eq(big, hostile);
}
END_TEST

START_TEST(the_chinese_event_log_shows_the_reasons_in_chinese)
{
    ck_assert_int_eq(msg_set_lang("zh"), 0);
    setenv("LANG", "C", 1);
    unsetenv("LC_ALL");
    msg_setup_locale();
    struct board_snapshot *s = make_snapshot("pool", 7, 10);
    add_thread(s, ROLE_WATCHDOG, "watchdog", STATE_WAITING, 0);
    s->nevents = 2;
    s->events[0] = (struct board_event_snap){ 1, s->start_mono_ns + SEC, EV_REJECT,
        "conn 12 dropped: queue full (1024), oldest discarded for conn 13" };
    s->events[1] = (struct board_event_snap){ 2, s->start_mono_ns + 2 * SEC, EV_GROW,
        "task-9: no idle thread, 2 queued, size 9 of max 128" };
    struct view v;
    struct screen scr;
    one_pane(&v, s, NULL);
    /* 80 columns: the longer wraps under its own text, between two
     * characters, and no row starts with a closing mark. */
    screen_init(&scr, 80, 24);
    view_render(&v, &scr);
    ck_assert_int_eq(screen_find(&scr, "pool  pid 7  已运行 10.0s"), 0);
    int y = screen_find(&scr, "+1.000s 拒绝    连接 12 被丢弃：任务队列已满（1024），为连接 13 丢弃了最早");
    ck_assert_int_ge(y, 0);
    char row[512];
    screen_row_text(&scr, y + 1, row, sizeof(row));
    ck_assert_str_eq(row, "                   的任务");
    ck_assert_int_ge(screen_find(&scr, "+2.000s 扩容    task-9：没有空闲线程，2 个在排队，线程池尺寸 9（最大 128）"), 0);
    /* At 60, between two characters of a word: CJK has no spaces. */
    screen_free(&scr);
    screen_init(&scr, 60, 24);
    view_render(&v, &scr);
    y = screen_find(&scr, "+2.000s 扩容    task-9：没有空闲线程，2 个在排队，线程");
    ck_assert_int_ge(y, 0);
    screen_row_text(&scr, y + 1, row, sizeof(row));
    ck_assert_str_eq(row, "                   池尺寸 9（最大 128）");
    /* A break that would start a row with "，" or end one with "（" moves
     * back a character. */
    screen_clear(&scr);
    screen_put_wrapped(&scr, 0, 0, 10, 3, 0, ST_NORMAL, "阻塞线程检，查器");
    screen_row_text(&scr, 1, row, sizeof(row));
    ck_assert_str_eq(row, "检，查器");
    screen_clear(&scr);
    screen_put_wrapped(&scr, 0, 0, 10, 3, 0, ST_NORMAL, "阻塞线程（检查器）");
    screen_row_text(&scr, 1, row, sizeof(row));
    ck_assert_str_eq(row, "（检查器）");
    ck_assert_int_lt(screen_find(&scr, "no idle thread"), 0);
    screen_free(&scr);
    free(s);
}
END_TEST

static char board_tmp[64];

static void use_temporary_board_dir(void)
{
    snprintf(board_tmp, sizeof(board_tmp), "/tmp/threadlab-pane-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(board_tmp));
    setenv("THREADLAB_BOARD_DIR", board_tmp, 1);
}

static void remove_board_dir(void)
{
    char cmd[100];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", board_tmp);
    ck_assert_int_eq(system(cmd), 0);
}

START_TEST(a_server_killed_with_sigkill_is_gone_at_the_next_refresh)
{
    use_temporary_board_dir();
    char path[256];
    pid_t pid = board_child(path, sizeof(path));
    struct pane p = { 0 };
    ck_assert_int_eq(pane_attach(&p, path, pid), 0);
    pane_refresh(&p);
    ck_assert_msg(!p.gone && p.now->pid == pid, "a live server: %s", p.error);
    ck_assert(pane_process_alive(pid));
    /* Killed, not yet reaped: a zombie, which kill(pid, 0) still finds.
     * WNOWAIT waits for the death and leaves the zombie in place. */
    kill(pid, SIGKILL);
    siginfo_t info;
    ck_assert_int_eq(waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT), 0);
    ck_assert_int_eq(kill(pid, 0), 0);
    ck_assert(!pane_process_alive(pid));
    struct stat left;                            /* its board's link stays behind */
    ck_assert_int_eq(lstat(path, &left), 0);
    pane_refresh(&p);
    ck_assert_msg(p.gone, "a SIGKILLed server's pane is not gone");
    ck_assert_ptr_nonnull(strstr(p.error, "the server exited"));
    ck_assert_int_eq(p.now->pid, pid);          /* its last picture is kept */
    /* Reaped: no process at all. */
    ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
    struct pane q = { 0 };
    ck_assert_int_eq(pane_attach(&q, path, pid), 0);
    pane_refresh(&q);
    ck_assert(q.gone);
    pane_detach(&p);
    pane_detach(&q);
    unlink(path);                        /* what a killed server leaves, we clean */
    remove_board_dir();
}
END_TEST

/* A live server whose board was removed, or replaced by something that is
 * not a board, is not gone: its pane says the board cannot be read, keeps
 * its last picture, and reads again once the board is back. */
START_TEST(a_live_server_whose_board_cannot_be_read_is_not_gone)
{
    use_temporary_board_dir();
    char path[256], target[256];
    pid_t pid = board_child(path, sizeof(path));
    ssize_t n = readlink(path, target, sizeof(target) - 1);
    ck_assert_int_gt(n, 0);
    target[n] = '\0';
    struct pane p = { 0 };
    ck_assert_int_eq(pane_attach(&p, path, pid), 0);
    pane_refresh(&p);
    ck_assert_msg(!p.gone && p.now->pid == pid, "a live server: %s", p.error);
    ck_assert_int_eq(unlink(path), 0);                       /* removed */
    pane_refresh(&p);
    ck_assert_msg(!p.gone, "a removed board's live server is gone: %s", p.error);
    ck_assert_msg(strstr(p.error, "lives, but its board cannot be read"), "%s", p.error);
    ck_assert_int_eq(p.now->pid, pid);                       /* its last picture */
    FILE *f = fopen(path, "w");                              /* not a board */
    ck_assert_ptr_nonnull(f);
    fputs("not a board\n", f);
    fclose(f);
    pane_refresh(&p);
    ck_assert_msg(!p.gone && strstr(p.error, "cannot be read"), "%s", p.error);
    struct screen scr;
    struct view *v = calloc(1, sizeof(*v));
    view_init(v, false);
    view_resize(v, 120, 36);
    v->npanes = 1;
    v->panes[0] = p;
    ck_assert_int_eq(screen_init(&scr, 120, 36), 0);
    view_render(v, &scr);
    ck_assert_int_gt(screen_find(&scr, "BOARD UNREADABLE: the server lives"), -1);
    ck_assert_int_lt(screen_find(&scr, "GONE"), 0);
    screen_free(&scr);
    free(v);
    ck_assert_int_eq(unlink(path), 0);                       /* back */
    ck_assert_int_eq(symlink(target, path), 0);
    pane_refresh(&p);
    ck_assert_msg(!p.gone && p.error[0] == '\0', "the board is back: %s", p.error);
    kill(pid, SIGKILL);
    ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
    pane_refresh(&p);
    ck_assert(p.gone);
    pane_detach(&p);
    unlink(path);
    remove_board_dir();
}
END_TEST

/* Address-space limits break the sanitizers' shadow memory: plain builds only. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif

START_TEST(out_of_memory_leaves_a_pane_as_it_was)
{
    if (SANITIZED)
        return;
    use_temporary_board_dir();
    char path[256];
    pid_t pid = board_child(path, sizeof(path));
    struct pane p = { 0 };
    ck_assert_int_eq(pane_attach(&p, path, pid), 0);
    pane_refresh(&p);
    struct board_snapshot *now = p.now, *before = p.before;
    p.gone = true;                           /* the pane a new server would take */
    /* No room for a snapshot: the address space capped just above its size now. */
    long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fscanf(f, "%ld", &pages), 1);
    fclose(f);
    struct rlimit old, cap;
    ck_assert_int_eq(getrlimit(RLIMIT_AS, &old), 0);
    cap = old;
    cap.rlim_cur = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + sizeof(struct board_snapshot) / 2;
    ck_assert_int_eq(setrlimit(RLIMIT_AS, &cap), 0);
    int rc = pane_attach(&p, "/elsewhere/1.board", 1);
    ck_assert_int_eq(setrlimit(RLIMIT_AS, &old), 0);
    ck_assert_int_eq(rc, -ENOMEM);
    ck_assert_str_eq(p.path, path);
    ck_assert_int_eq(p.pid, pid);
    ck_assert(p.gone);
    ck_assert(p.now == now && p.before == before);   /* still ours, still valid */
    ck_assert_int_eq(p.now->pid, pid);
    pane_detach(&p);                                  /* freed once */
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    unlink(path);
    remove_board_dir();
}
END_TEST

/* ---- the demo's words: its table and its narrator, in both languages ------ */

/* The display column where the last column (the server's fate) begins on
 * a table row: after the last run of two spaces. */
static int fate_column(const char *row)
{
    const char *last = NULL;
    for (const char *p = strstr(row, "  "); p; p = strstr(p + 1, "  "))
        last = p;
    ck_assert_msg(last, "no two spaces before the last column: '%s'", row);
    while (*last == ' ')
        last++;
    char head[512];
    snprintf(head, sizeof(head), "%.*s", (int)(last - row), row);
    return msg_width(head);
}

/* The rows of a table printed into memory, in lang. */
static int table_rows(const char *lang, bool wide, char rows[][512], int max)
{
    struct result r[2] = {
        { .model = "multireactor", .have_load = true, .lines_per_s = 123456, .p50_us = 51,
          .p99_us = 1000, .p999_us = 2500, .peak_threads = 12, .peak_rss_kb = 4096,
          .cpu_s = 1.5, .errors = 0, .fate = "ok" },
        { .model = "bio", .have_load = false, .peak_threads = 3, .fate = "crashed: SIGKILL" },
    };
    ck_assert_int_eq(msg_set_lang(lang), 0);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    (wide ? results_print_wide_table : results_print_table)(out, r, 2);
    ck_assert_int_eq(fclose(out), 0);
    int n = 0;
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line && n < max;
         line = strtok_r(NULL, "\n", &save))
        snprintf(rows[n++], 512, "%s", line);
    free(text);
    return n;
}

START_TEST(the_table_is_laid_out_by_display_width_in_both_languages)
{
    unsetenv("LC_ALL");
    setenv("LANG", "C", 1);
    ck_assert_int_eq(msg_set_lang("zh"), 0);
    msg_setup_locale();                    /* C.UTF-8, as the demo has it */
    for (int wide = 0; wide <= 1; wide++) {
        char en[4][512], zh[4][512];
        ck_assert_int_eq(table_rows("en", wide, en, 4), 4);
        ck_assert_int_eq(table_rows("zh", wide, zh, 4), 4);
        ck_assert_msg(strstr(zh[1], "模型") && strstr(zh[1], "行/秒") &&
                      strstr(zh[1], "线程") && strstr(zh[1], "服务器") &&
                      strstr(zh[0], "往返时间") && strstr(zh[3], "无报告"),
                      "not in Chinese: '%s' / '%s' / '%s'", zh[0], zh[1], zh[3]);
        /* The round-trip heading over the same columns; each heading row
         * as wide as the English one; the last heading over the fates,
         * the row without a report (无报告) too. */
        ck_assert_int_eq(msg_width(zh[0]), msg_width(en[0]));
        ck_assert_int_eq(msg_width(zh[1]), msg_width(en[1]));
        for (int i = 1; i < 4; i++) {
            ck_assert_msg(fate_column(zh[i]) == fate_column(en[1]),
                          "%s table, row %d: its last column at %d, not %d: '%s'",
                          wide ? "wide" : "80", i, fate_column(zh[i]), fate_column(en[1]),
                          zh[i]);
            /* (a long fate may pass 80, in either language) */
            ck_assert_msg(wide || i == 3 || msg_width(zh[i]) <= 80, "wider than 80: '%s'",
                          zh[i]);
        }
    }
    ck_assert_int_eq(msg_set_lang("en"), 0);
}
END_TEST

START_TEST(every_narrator_fits_the_screen_and_the_recording_in_both_languages)
{
    unsetenv("LC_ALL");
    setenv("LANG", "C", 1);
    ck_assert_int_eq(msg_set_lang("zh"), 0);
    msg_setup_locale();
    for (size_t i = 0; i < nscenarios; i++) {   /* a recording's caption holds both */
        int both = 0;
        for (int lang = 0; lang < LANG_COUNT; lang++)
            both += snprintf(NULL, 0, "[%s] %s", scenarios[i].name,
                             msg_in((enum msg_lang)lang, scenarios[i].narrator)) + 1;
        ck_assert_msg(both <= RECORD_CAPTION_MAX, "%s: %d bytes in both languages",
                      scenarios[i].name, both);
    }
    for (int lang = 0; lang < LANG_COUNT; lang++)
        for (size_t i = 0; i < nscenarios; i++) {
            char footer[sizeof(((struct view *)0)->footer)];
            snprintf(footer, sizeof(footer), "[%s] %s", scenarios[i].name,
                     msg_in((enum msg_lang)lang, scenarios[i].narrator));
            /* In three rows at 120 and at 80 columns (the view gives the
             * narrator three). */
            ck_assert_msg(screen_put_wrapped(NULL, 0, 0, 120, 3, 2, ST_TITLE, footer) <= 3 &&
                          screen_put_wrapped(NULL, 0, 0, 80, 3, 2, ST_TITLE, footer) <= 3,
                          "more than three rows: %s", footer);
            ck_assert_msg(msg_width(msg_in((enum msg_lang)lang, scenarios[i].summary)) <= 60,
                          "a summary too long for the table's first row: %s",
                          msg_in((enum msg_lang)lang, scenarios[i].summary));
        }
    ck_assert_int_eq(msg_set_lang("en"), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("view");
    TCase *tc = tcase_create("view");
    tcase_add_test(tc, few_threads_are_a_list_with_states);
    tcase_add_test(tc, many_threads_are_a_grid_of_state_cells);
    tcase_add_test(tc, rates_come_from_two_snapshots);
    tcase_add_test(tc, loops_and_queues_show_bars);
    tcase_add_test(tc, loop_rows_show_the_split_now_and_backpressure);
    tcase_add_test(tc, two_panes_side_by_side_or_stacked);
    tcase_add_test(tc, keys_and_empty_view);
    tcase_add_test(tc, hostile_text_is_made_printable);
    tcase_add_test(tc, nothing_essential_is_cut_at_120x40_or_80x24);
    tcase_add_test(tc, five_panes_are_a_3x2_grid_at_120_and_a_2x3_grid_at_160);
    tcase_add_test(tc, wrapping_breaks_at_words_and_marks_a_cut);
    tcase_add_test(tc, the_list_scrolls_and_says_how_many_are_shown);
    tcase_add_test(tc, exited_threads_are_counted_recent_and_in_all);
    tcase_add_test(tc, tab_zooms_the_panes_in_turn_on_a_small_screen);
    tcase_add_test(tc, o_orders_the_list_by_role_state_lines_or_cpu);
    tcase_add_test(tc, a_stat_line_is_parsed_from_its_last_paren);
    tcase_add_test(tc, cpu_is_sampled_from_proc_and_dashed_without_a_task);
    tcase_add_test(tc, the_list_has_a_cpu_column);
    tcase_add_test(tc, enter_shows_the_selected_threads_figures);
    tcase_add_test(tc, wide_characters_take_two_columns_and_stay_whole);
    tcase_add_test(tc, cjk_wraps_between_characters);
    tcase_add_test(tc, every_message_has_both_languages_with_the_same_conversions);
    tcase_add_test(tc, the_language_comes_from_the_environment_unless_chosen);
    tcase_add_test(tc, a_chinese_screen_is_laid_out_by_display_width);
    tcase_add_test(tc, every_event_the_servers_write_is_translated);
    tcase_add_test(tc, every_reason_template_keeps_its_conversions);
    tcase_add_test(tc, a_reason_is_translated_with_its_numbers_names_and_inner_reasons);
    tcase_add_test(tc, a_translation_is_cut_at_a_character_and_hostile_text_stays_bounded);
    tcase_add_test(tc, the_chinese_event_log_shows_the_reasons_in_chinese);
    tcase_add_test(tc, the_table_is_laid_out_by_display_width_in_both_languages);
    tcase_add_test(tc, every_narrator_fits_the_screen_and_the_recording_in_both_languages);
    tcase_add_test(tc, a_server_killed_with_sigkill_is_gone_at_the_next_refresh);
    tcase_add_test(tc, a_live_server_whose_board_cannot_be_read_is_not_gone);
    tcase_add_test(tc, out_of_memory_leaves_a_pane_as_it_was);
    suite_add_tcase(s, tc);
    return ts_run(s);
}
