/* view.c -- render board snapshots into a screen model. See view.h.
 *
 *  +-- pane: one server ---------------------------------------------+
 *  | bio  pid 4242  up 1m02s  conns 300  lines/s 91.2k  handle p50 .. |  header
 *  | threads 301: R 2 running  b 298 blocked-io  w 1 waiting ...      |  by state
 *  | a list of threads, or a grid of one cell per thread              |
 *  | loops: channels, task queue bar, io/task split, blocked warning  |
 *  | queues: depth bar against capacity, rejected                     |
 *  | events: the log tail, with reasons                               |
 *  +------------------------------------------------------------------+
 *  legend of states and keys (always on screen)
 *
 * The numbers, the loop phase names and the centred box are in
 * view_parts.c; the box Enter opens on a thread is detail.c; every string
 * comes from msg.c, in English or Chinese.
 */
#include "view.h"

#include "msg.h"
#include "reason.h"
#include "view_parts.h"
#include "term.h"
#include "fmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FOOTER_ROWS_MAX 3       /* the narrator wraps onto up to 3 rows */

static const enum style state_style[STATE_COUNT] = {
    [STATE_IDLE] = ST_IDLE,          [STATE_WAITING] = ST_WAITING,
    [STATE_RUNNING] = ST_RUNNING,    [STATE_RUNNABLE] = ST_WAITING,
    [STATE_BLOCKED_IO] = ST_BLOCKED_IO,
    [STATE_BLOCKED_SLEEP] = ST_BLOCKED_SLEEP,
    [STATE_TERMINATED] = ST_TERMINATED,
};

char view_state_letter(enum board_state s)
{
    static const char letters[STATE_COUNT] = { '.', 'w', 'R', 'r', 'b', 'S', 'x' };
    return (unsigned)s < STATE_COUNT ? letters[s] : '?';
}

void view_init(struct view *v, bool big)
{
    memset(v, 0, sizeof(*v));
    v->show_log = true;
    v->big = big;
    v->layout = LAYOUT_AUTO;
    v->refresh_ms = big ? VIEW_REFRESH_MS_BIG : VIEW_REFRESH_MS_DEFAULT;
}

void pane_rates(const struct pane *p, struct pane_rates *r)
{
    memset(r, 0, sizeof(*r));
    const struct board_snapshot *a = p->before, *b = p->now;
    if (!a || !b || b->taken_mono_ns <= a->taken_mono_ns || a->pid != b->pid)
        return;
    r->have = true;
    r->interval_s = (double)(b->taken_mono_ns - a->taken_mono_ns) / 1e9;
    uint64_t lines = b->counters[CTR_LINES] - a->counters[CTR_LINES];
    r->lines = b->counters[CTR_LINES] >= a->counters[CTR_LINES] ? lines : 0;
    r->lines_per_s = (double)r->lines / r->interval_s;
    /* Percentiles of the interval: the difference of two histograms. */
    uint64_t delta[HIST_BUCKETS];
    for (unsigned i = 0; i < HIST_BUCKETS; i++)
        delta[i] = b->hist[i] >= a->hist[i] ? b->hist[i] - a->hist[i] : 0;
    r->p50_ns = hist_counts_percentile(delta, 0, 50);
    r->p99_ns = hist_counts_percentile(delta, 0, 99);
}

/* ---- which threads to show, in which order --------------------------------- */

static bool thread_shown(const struct board_snapshot *s,
                         const struct board_thread_snap *t)
{
    return t->state != STATE_TERMINATED ||
           s->taken_mono_ns - t->since_ns < VIEW_TERMINATED_SHOWN_NS;
}

/* Ties broken the same way in every order, so rows do not jump about
 * between refreshes: by role, then connection, then name. */
static int by_role_then_conn(const struct board_thread_snap *a,
                             const struct board_thread_snap *b)
{
    if (a->role != b->role)
        return a->role < b->role ? -1 : 1;
    if (a->conn != b->conn)
        return a->conn < b->conn ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* Where a state comes in ORDER_STATE: what is happening first. */
static int state_rank(enum board_state st)
{
    static const int rank[STATE_COUNT] = {
        [STATE_RUNNING] = 0, [STATE_RUNNABLE] = 1, [STATE_BLOCKED_SLEEP] = 2,
        [STATE_BLOCKED_IO] = 3, [STATE_WAITING] = 4, [STATE_IDLE] = 5,
        [STATE_TERMINATED] = 6,
    };
    return (unsigned)st < STATE_COUNT ? rank[st] : STATE_COUNT;
}

struct order_ctx {
    const struct board_snapshot *s;
    const float *cpu;          /* CPU% per thread, or NULL */
    enum thread_order order;
};

static int compare_threads(const void *x, const void *y, void *arg)
{
    const struct order_ctx *c = arg;
    const struct board_thread_snap *a = &c->s->threads[*(const int *)x];
    const struct board_thread_snap *b = &c->s->threads[*(const int *)y];
    if (c->order == ORDER_STATE && a->state != b->state)
        return state_rank(a->state) < state_rank(b->state) ? -1 : 1;
    if (c->order == ORDER_LINES && a->lines != b->lines)
        return a->lines > b->lines ? -1 : 1;
    if (c->order == ORDER_CPU && c->cpu) {   /* the busiest first; no figure last */
        float ca = c->cpu[*(const int *)x], cb = c->cpu[*(const int *)y];
        if (ca != cb)
            return ca > cb ? -1 : 1;
    }
    return by_role_then_conn(a, b);
}

static int shown_threads(const struct pane *p, enum thread_order order, int *out)
{
    const struct board_snapshot *s = p->now;
    int n = 0;
    for (int i = 0; i < s->nthreads; i++)
        if (thread_shown(s, &s->threads[i]))
            out[n++] = i;
    struct order_ctx ctx = { s, p->cpu_pct, order };
    qsort_r(out, (size_t)n, sizeof(*out), compare_threads, &ctx);
    return n;
}

/* ---- the parts of a pane --------------------------------------------------- */

struct rect { int x, y, w, h; };

/* The ended threads: how many in the last few seconds (the ones still
 * fading in the list), beside the lifetime total the board counts (which
 * only grows, so alone it says little about now). */
static int draw_exited(const struct board_snapshot *s, bool wide, struct screen *scr,
                       int x, int y, int w)
{
    unsigned recent = 0;
    for (int i = 0; i < s->nthreads; i++)
        recent += s->threads[i].state == STATE_TERMINATED &&
                  thread_shown(s, &s->threads[i]);
    unsigned long long total = s->threads_by_state[STATE_TERMINATED];
    return wide ? screen_printf(scr, x, y, w, ST_NORMAL, msg(M_EXITED_WIDE),
                                recent,
                                (unsigned long long)(VIEW_TERMINATED_SHOWN_NS / 1000000000u),
                                total)
                : screen_printf(scr, x, y, w, ST_NORMAL, "%u/%llu", recent, total);
}

/* The header's third row: threads by state, counted for every thread,
 * slot or no slot. */
static void draw_states(const struct board_snapshot *s, bool wide, struct screen *scr,
                        struct rect r)
{
    int x;
    uint64_t live = 0;
    for (int st = 0; st < STATE_COUNT; st++)
        if (st != STATE_TERMINATED)
            live += s->threads_by_state[st];
    x = r.x + 1;
    x += screen_printf(scr, x, r.y, r.x + r.w - x, ST_NORMAL, msg(M_THREADS),
                       (unsigned long long)live);
    for (int st = 0; st < STATE_COUNT && x < r.x + r.w; st++) {
        if (st == STATE_RUNNABLE && !s->simulated)
            continue;                /* only the simulator sees its run queue */
        x += screen_put(scr, x, r.y, r.x + r.w - x, ST_NORMAL, " ");
        x += screen_printf(scr, x, r.y, r.x + r.w - x, state_style[st], "%c",
                           view_state_letter((enum board_state)st));
        if (st == STATE_TERMINATED)
            x += draw_exited(s, wide, scr, x, r.y, r.x + r.w - x);
        else if (wide)
            x += screen_printf(scr, x, r.y, r.x + r.w - x, ST_NORMAL, " %llu %s",
                               (unsigned long long)s->threads_by_state[st],
                               msg_state((enum board_state)st));
        else
            x += screen_printf(scr, x, r.y, r.x + r.w - x, ST_NORMAL, "%llu",
                               (unsigned long long)s->threads_by_state[st]);
    }
}

static int draw_header(const struct view *v, const struct pane *p, int index,
                       struct screen *scr, struct rect r)
{
    const struct board_snapshot *s = p->now;
    bool focused = v->npanes > 1 && index == v->focus;
    char up[32];
    int x = r.x;

    if (s->simulated)            /* a simulated run lives in microseconds */
        snprintf(up, sizeof(up), "%.6fs", (double)(s->taken_mono_ns - s->start_mono_ns) / 1e9);
    else
        view__fmt_age(up, sizeof(up), s->taken_mono_ns - s->start_mono_ns);
    x += screen_printf(scr, x, r.y, r.w, focused ? ST_FOCUS : ST_TITLE,
                       "%s%s ", focused ? ">" : " ", s->model);
    x += screen_printf(scr, x, r.y, r.x + r.w - x, ST_NORMAL, msg(M_PID_UP), s->pid, up);
    if (p->gone)
        screen_put(scr, x, r.y, r.x + r.w - x, ST_WARN, msg(M_GONE));
    else if (p->error[0])                   /* its last picture, from before */
        screen_put(scr, x, r.y, r.x + r.w - x, ST_WARN, msg(M_UNREADABLE));
    else if (s->closing)
        screen_put(scr, x, r.y, r.x + r.w - x, ST_WARN, msg(M_STOPPING));

    struct pane_rates rates;
    char lps[16] = "-", p50[16] = "-", p99[16] = "-";
    pane_rates(p, &rates);
    if (rates.have && !p->gone) {
        view__fmt_count(lps, sizeof(lps), rates.lines_per_s);
        if (rates.lines > 0) {
            view__fmt_ns(p50, sizeof(p50), rates.p50_ns);
            view__fmt_ns(p99, sizeof(p99), rates.p99_ns);
        }
    }
    uint64_t errors = s->counters[CTR_ERR_LINE_TOO_LONG] +
                      s->counters[CTR_ERR_BAD_ARGUMENT] + s->counters[CTR_ERR_RESET] +
                      s->counters[CTR_ERR_ACCEPT];
    bool wide = r.w >= 100;     /* narrow panes get the short forms */
    uint64_t rejected = s->counters[CTR_REJECTED];
    enum style bad = rejected || errors ? ST_WARN : ST_NORMAL;
    x = r.x + 1;
    x += screen_printf(scr, x, r.y + 1, r.x + r.w - x, ST_NORMAL, msg(M_CONNS),
                       (unsigned long long)s->counters[CTR_ACTIVE]);
    if (wide) {
        x += screen_printf(scr, x, r.y + 1, r.x + r.w - x, ST_NORMAL,
                           msg(M_RATES_WIDE), lps, p50, p99);
        screen_printf(scr, x, r.y + 1, r.x + r.w - x, bad,
                      msg(M_FAILS_WIDE), (unsigned long long)rejected,
                      (unsigned long long)errors);
    } else {
        /* The failures first: a narrow pane may cut the end of the row. */
        x += screen_printf(scr, x, r.y + 1, r.x + r.w - x, bad, msg(M_FAILS_NARROW),
                           (unsigned long long)rejected, (unsigned long long)errors);
        screen_printf(scr, x, r.y + 1, r.x + r.w - x, ST_NORMAL,
                      msg(M_RATES_NARROW), lps, p50, p99);
    }

    draw_states(s, wide, scr, (struct rect){ r.x, r.y + 2, r.w, 1 });
    return 3;
}

/* The list, scrolled so that the selected thread (cursor, in a focused
 * pane; -1 elsewhere) is on screen: the window starts at the top and, once
 * the cursor passes its last row, follows it. When not every thread fits,
 * the last row says how many are shown, so none is hidden without a word.
 * A pane under 64 columns (a 2x2 grid at 120) gets narrower name, CONN and
 * LINES columns, so that every column stays on screen. */
static void draw_thread_list(const struct pane *p, enum thread_order order,
                             const int *shown, int n, int cursor, struct screen *scr,
                             struct rect r)
{
    static const enum msg_id by[ORDER_COUNT] = { M_BY_ROLE, M_BY_STATE, M_BY_LINES,
                                                 M_BY_CPU };
    const struct board_snapshot *s = p->now;
    bool wide = r.w >= 64;
    int name_w = wide ? 15 : 12, conn_w = wide ? 7 : 5, lines_w = wide ? 9 : 7;
    /* Columns by display width: a Chinese heading is narrower than its bytes. */
    int hx = r.x + 1, hy = r.y, end = r.x + r.w;
    const struct { enum msg_id id; int w; bool right; } cols[] = {
        { M_COL_THREAD, name_w + 1, false }, { M_COL_STATE, 16, false },
        { M_COL_FOR, 6, true }, { M_COL_CPU, 6, true }, { M_COL_CONN, conn_w + 1, true },
        { M_COL_LINES, lines_w + 1, true },
    };
    for (size_t c = 0; c < sizeof(cols) / sizeof(cols[0]) && hx < end; c++)
        hx += screen_put_col(scr, hx, hy, cols[c].w < end - hx ? cols[c].w : end - hx,
                             ST_DIM, msg(cols[c].id), cols[c].right);
    screen_put(scr, hx, hy, end - hx, ST_DIM, msg(by[order]));
    int rows = r.h - 1;
    bool cut = n > rows;
    if (cut)
        rows--;                /* the last row says what is not shown */
    if (rows < 1)
        return;
    int top = cursor >= rows ? cursor - rows + 1 : 0;
    for (int i = 0; i < rows && top + i < n; i++) {
        const struct board_thread_snap *t = &s->threads[shown[top + i]];
        bool selected = top + i == cursor;
        char age[32], conn[24] = "-", cpu[16];
        view__fmt_age(age, sizeof(age), s->taken_mono_ns - t->since_ns);
        view__fmt_cpu(cpu, sizeof(cpu), p->cpu_pct, shown[top + i]);
        if (t->conn)
            snprintf(conn, sizeof(conn), "%llu", (unsigned long long)t->conn);
        int x = r.x + 1, y = r.y + 1 + i;
        x += screen_printf(scr, x, y, r.x + r.w - x,
                           selected ? ST_FOCUS
                           : t->state == STATE_TERMINATED ? ST_DIM : ST_NORMAL,
                           "%-*.*s ", name_w, name_w, t->name);
        x += screen_printf(scr, x, y, r.x + r.w - x,
                           state_style[t->state], "%c", view_state_letter(t->state));
        x += screen_put(scr, x, y, r.x + r.w - x, ST_NORMAL, " ");
        x += screen_put_col(scr, x, y, 13 < r.x + r.w - x ? 13 : r.x + r.w - x, ST_NORMAL,
                            msg_state(t->state), false);
        screen_printf(scr, x, y, r.x + r.w - x, ST_NORMAL, " %6s %5s %*s %*llu", age, cpu,
                      conn_w, conn, lines_w, (unsigned long long)t->lines);
    }
    if (cut) {
        int last = top + rows < n ? top + rows : n;
        screen_printf(scr, r.x + 1, r.y + r.h - 1, r.w - 1, ST_DIM,
                      msg(M_SHOWN_OF),
                      last - top, n, top + 1, last);
    }
}

static void draw_thread_grid(const struct view *v, const struct board_snapshot *s,
                             const int *order, int n, struct screen *scr,
                             struct rect r)
{
    int cell_w = v->big ? 3 : 2;
    int per_row = (r.w - 1) / cell_w;
    int rows = r.h - 1;
    if (per_row < 1 || rows < 1)
        return;
    int fit = per_row * rows;
    int shown = n <= fit ? n : fit - 1;
    /* Cells give way at the end of the last row until "+N" fits inside the
     * pane: drawn past its edge, it ran over the divider into the next. */
    while (shown > 0 && shown < n &&
           (shown % per_row) * cell_w + snprintf(NULL, 0, "+%d", n - shown) > r.w - 1)
        shown--;
    screen_printf(scr, r.x + 1, r.y, r.w - 1, ST_DIM,
                  msg(M_GRID_TITLE), shown, s->threads_unslotted ? msg(M_GRID_MORE) : "");
    for (int i = 0; i < shown; i++) {
        const struct board_thread_snap *t = &s->threads[order[i]];
        int x = r.x + 1 + (i % per_row) * cell_w, y = r.y + 1 + i / per_row;
        char cell[4] = { ' ', ' ', ' ', 0 };
        cell[cell_w == 3 ? 1 : 0] = view_state_letter(t->state);
        cell[cell_w] = '\0';
        screen_put(scr, x, y, cell_w - 1 + (v->big ? 0 : 0), state_style[t->state],
                   cell);
    }
    if (shown < n) {
        int x = r.x + 1 + (shown % per_row) * cell_w;
        screen_printf(scr, x, r.y + 1 + shown / per_row, r.x + r.w - x, ST_DIM, "+%d",
                      n - shown);
    }
}

static void draw_bar(struct screen *scr, int x, int y, int w, uint64_t value,
                     uint64_t full, enum style st)
{
    int filled = full ? (int)((double)value * w / (double)full + 0.5) : 0;
    if (value > 0 && filled == 0)
        filled = 1;
    if (filled > w)
        filled = w;
    screen_put(scr, x, y, 1, ST_DIM, "[");
    screen_fill(scr, x + 1, y, filled, '#', st);
    screen_fill(scr, x + 1 + filled, y, w - filled, '.', ST_DIM);
    screen_put(scr, x + 1 + w, y, 1, ST_DIM, "]");
}

/* The loop's I/O and task time since the snapshot before (the split as it
 * is now), or since it started when there is no earlier one, or the loop
 * is new there (another name in that slot) or its counters went back. */
static void loop_split_ns(const struct board_loop_snap *l, const struct board_snapshot *before,
                          int index, uint64_t *io_ns, uint64_t *task_ns)
{
    *io_ns = l->io_ns;
    *task_ns = l->task_ns;
    if (!before || index >= before->nloops)
        return;
    const struct board_loop_snap *b = &before->loops[index];
    if (strcmp(b->name, l->name) != 0 || b->io_ns > l->io_ns || b->task_ns > l->task_ns)
        return;
    if (l->io_ns - b->io_ns + (l->task_ns - b->task_ns) == 0)
        return;                       /* idle meanwhile: keep the longer view */
    *io_ns = l->io_ns - b->io_ns;
    *task_ns = l->task_ns - b->task_ns;
}

/* One row per loop. A pane under 70 columns (a 2x2 grid at 120) gets the
 * short form: shorter name and bar, no backpressure columns, so that the
 * PHASE and the BLOCKED warning (the slow-handler lesson) stay on screen;
 * the backpressure columns need LOOPS_BACKPRESSURE_W (a pane of a 2x2 grid
 * at 160 has 80: without them, so BLOCKED is not cut there either). A pane
 * under LOOPS_TIGHT_W (the 3x2 grid of five at 120) keeps the name, the
 * channels, the task queue's length and the phase, which a BLOCKED
 * warning takes the place of (a blocked loop's phase is io): the bar and
 * the IO/TASK split give way.
 * IO/TASK is the split since the last refresh: it moves with --io-ratio as
 * it happens. OUTPUT is what the loop's channels have not yet written, and
 * PAUSED how many stopped reading at high water (backpressure). */
enum { LOOPS_BACKPRESSURE_W = 92, LOOPS_TIGHT_W = 50 };

/* The end of a loop's row from x: its phase, then what is wrong, if
 * anything (BLOCKED and for how long, or tasks starving its I/O); in the
 * tight form the warning replaces the phase. */
static void draw_loop_phase(const struct board_snapshot *s, const struct board_loop_snap *l,
                            struct screen *scr, int x, int y, int end, bool tight)
{
    bool blocked = l->blocked_since_ns && l->blocked_since_ns < s->taken_mono_ns;
    if (tight && blocked)
        x--;                   /* the warning's leading space is the gap */
    else if (x < end)
        x += screen_put_col(scr, x, y, 5 < end - x ? 5 : end - x, ST_NORMAL,
                            view__phase_name(l->phase), false);
    if (blocked) {
        char age[32];
        view__fmt_age(age, sizeof(age), s->taken_mono_ns - l->blocked_since_ns);
        screen_printf(scr, x, y, end - x, ST_WARN, msg(M_BLOCKED), age);
    } else if (l->tasks_starving_io) {
        screen_printf(scr, x, y, end - x, ST_WARN, msg(M_TASKS_STARVE),
                      (unsigned long long)l->tasks_starving_io);
    }
}

static int draw_loops(const struct board_snapshot *s, const struct board_snapshot *before,
                      struct screen *scr, struct rect r)
{
    if (s->nloops == 0 || r.h < 2)
        return 0;
    bool tight = r.w < LOOPS_TIGHT_W, wide = r.w >= 70;
    bool backpressure = r.w >= LOOPS_BACKPRESSURE_W;
    int name_w = wide ? 15 : tight ? 9 : 10, bar_w = wide ? 10 : tight ? 0 : 6;
    screen_put(scr, r.x + 1, r.y, r.w - 1, ST_DIM,
               msg(backpressure ? M_LOOPS_WIDE : wide ? M_LOOPS_MID
                   : tight ? M_LOOPS_TIGHT : M_LOOPS_NARROW));
    int n = 0, end = r.x + r.w;
    for (; n < s->nloops && n + 1 < r.h; n++) {
        const struct board_loop_snap *l = &s->loops[n];
        int y = r.y + 1 + n, x = r.x + 1;
        x += screen_printf(scr, x, y, end - x, ST_NORMAL, "%-*.*s %*llu ",
                           name_w, name_w, l->name, wide ? 8 : 5,
                           (unsigned long long)l->channels);
        if (bar_w > 0) {
            draw_bar(scr, x, y, bar_w, l->task_queue_depth, 64,
                     l->task_queue_depth > 32 ? ST_WARN : ST_BAR);
            x += bar_w + 2;
        }
        uint64_t io_ns, task_ns;
        loop_split_ns(l, before, n, &io_ns, &task_ns);
        /* In doubles: the counters come from another process's memory,
         * and a sum of two of them could wrap. */
        double total = (double)io_ns + (double)task_ns;
        int io_pct = total > 0 ? (int)((double)io_ns * 100 / total + 0.5) : 0;
        x += screen_printf(scr, x, y, end - x,
                           tight && l->task_queue_depth > 32 ? ST_WARN : ST_NORMAL, "%5llu ",
                           (unsigned long long)l->task_queue_depth);
        if (backpressure) {
            char out[16];
            fmt_count(out, sizeof(out), (double)l->out_pending_bytes);
            x += screen_printf(scr, x, y, end - x,
                               l->channels_paused ? ST_WARN : ST_NORMAL, "%7sB %6llu ",
                               out, (unsigned long long)l->channels_paused);
        }
        if (!tight)
            x += screen_printf(scr, x, y, end - x, ST_NORMAL, "%3d/%-3d ",
                               io_pct, total > 0 ? 100 - io_pct : 0);
        draw_loop_phase(s, l, scr, x, y, end, tight);
    }
    return n + 1;
}

static int draw_queues(const struct board_snapshot *s, struct screen *scr,
                       struct rect r)
{
    if (s->nqueues == 0 || r.h < 2)
        return 0;
    screen_put(scr, r.x + 1, r.y, r.w - 1, ST_DIM,
               msg(M_QUEUES));
    int n = 0;
    for (; n < s->nqueues && n + 1 < r.h; n++) {
        const struct board_queue_snap *q = &s->queues[n];
        int y = r.y + 1 + n, x = r.x + 1;
        x += screen_printf(scr, x, y, r.x + r.w - x, ST_NORMAL, "%-15s ", q->name);
        draw_bar(scr, x, y, 14, q->depth, q->capacity,
                 q->capacity && q->depth >= q->capacity ? ST_WARN : ST_BAR);
        x += 16;
        screen_printf(scr, x, y, r.x + r.w - x,
                      q->rejected ? ST_WARN : ST_NORMAL, "%4llu/%-4llu %5llu %9llu",
                      (unsigned long long)q->depth, (unsigned long long)q->capacity,
                      (unsigned long long)q->high_water,
                      (unsigned long long)q->rejected);
    }
    return n + 1;
}

/* The log tail, newest last, each reason in the viewer's language
 * (reason.c: the board holds it in English). An event's text wraps inside
 * the pane (under its own text, not under the time), so a reason is never
 * cut mid-sentence; only the oldest shown may end in "..." when the pane
 * is short. */
static void draw_events(const struct board_snapshot *s, struct screen *scr,
                        struct rect r)
{
    enum { PREFIX_W = 18 };    /* "%+9.3fs %-7s " */
    if (r.h < 2)
        return;
    screen_put(scr, r.x + 1, r.y, r.w - 1, ST_DIM, msg(M_EVENTS));
    int y_end = r.y + r.h;     /* the row below the last one ours */
    for (int i = s->nevents - 1; i >= 0 && y_end > r.y + 1; i--) {
        const struct board_event_snap *e = &s->events[i];
        bool warn = e->kind == EV_REJECT || e->kind == EV_BLOCKED ||
                    e->kind == EV_ERROR;
        char reason[REASON_TEXT_BYTES], line[REASON_TEXT_BYTES + 64];
        reason_translate(msg_lang(), e->text, reason, sizeof(reason));
        const char *kind = msg_event(e->kind);
        int pad = 7 - screen_text_width(kind);     /* "%-7s" by display width */
        snprintf(line, sizeof(line), s->simulated ? "%+9.6fs %s%*s %s" : "%+9.3fs %s%*s %s",
                 (double)(e->time_ns - s->start_mono_ns) / 1e9, kind, pad > 0 ? pad : 0,
                 "", reason);
        int rows = screen_put_wrapped(NULL, 0, 0, r.w - 1, r.h, PREFIX_W,
                                      ST_NORMAL, line);
        int room = y_end - (r.y + 1);
        if (rows > room)       /* the oldest shown: its first rows, ending "..." */
            rows = room;
        y_end -= rows;
        screen_put_wrapped(scr, r.x + 1, y_end, r.w - 1, rows, PREFIX_W,
                           warn ? ST_WARN : ST_NORMAL, line);
    }
}

static void draw_pane(const struct view *v, int index, struct screen *scr,
                      struct rect r)
{
    const struct pane *p = &v->panes[index];
    const struct board_snapshot *s = p->now;

    if (!s) {
        screen_printf(scr, r.x + 1, r.y, r.w - 1, ST_TITLE, "pid %d", p->pid);
        screen_put(scr, r.x + 1, r.y + 1, r.w - 1, p->gone ? ST_WARN : ST_DIM,
                   p->error[0] ? p->error : msg(M_WAITING_FIRST));
        return;
    }
    int used = draw_header(v, p, index, scr, r);
    if (p->error[0] && !p->gone)
        screen_put(scr, r.x + 1, r.y + used++, r.w - 1, ST_WARN, p->error);

    /* Split the rest: loops and queues take what they need (up to a half
     * and a quarter: a loop's row holds its BLOCKED warning), the threads
     * what they need of the remainder but leave the log a third, and the
     * log takes whatever is left. */
    int rest = r.h - used;
    int loops_h = s->nloops ? (s->nloops + 1 < rest / 2 ? s->nloops + 1 : rest / 2) : 0;
    int queues_h = s->nqueues ? (s->nqueues + 1 < rest / 4 ? s->nqueues + 1 : rest / 4) : 0;
    int for_threads = rest - loops_h - queues_h;
    int threads_max = v->show_log ? for_threads - for_threads / 3 : for_threads;

    int order[BOARD_THREAD_SLOTS];
    int n = shown_threads(p, v->order, order);
    bool list = v->layout == LAYOUT_LIST ||
                (v->layout == LAYOUT_AUTO && n + 1 <= threads_max && !v->big);
    int per_row = (r.w - 1) / (v->big ? 3 : 2);
    int needed = list ? n + 1 : (per_row > 0 ? (n + per_row - 1) / per_row : 0) + 1;
    int threads_h = needed < threads_max ? needed : threads_max;
    struct rect tr = { r.x, r.y + used, r.w, threads_h };
    if (list)
        draw_thread_list(p, v->order, order, n, index == v->focus ? v->cursor : -1,
                         scr, tr);
    else
        draw_thread_grid(v, s, order, n, scr, tr);
    int y = tr.y + threads_h;
    y += draw_loops(s, p->before, scr, (struct rect){ r.x, y, r.w, loops_h });
    y += draw_queues(s, scr, (struct rect){ r.x, y, r.w, queues_h });
    if (v->show_log)
        draw_events(s, scr, (struct rect){ r.x, y + 1, r.w, r.y + r.h - y - 1 });
}

/* ---- the whole screen ------------------------------------------------------ */

/* The bottom row: the states' letters, the keys, the refresh status at the
 * right edge. What must never be cut is the way out and the way to the rest
 * ("q quit  ? help") and the status; the states legend gives way first, a
 * whole entry at a time, then the long list of keys. */
/* Runnable is a state only the simulator can see: shown where one runs. */
static bool shows_runnable(const struct view *v, enum board_state st)
{
    if (st != STATE_RUNNABLE)
        return true;
    for (int i = 0; i < v->npanes; i++)
        if (v->panes[i].now && v->panes[i].now->simulated)
            return true;
    return false;
}

static void draw_legend(const struct view *v, struct screen *scr)
{
    const char *keys_full = msg(M_KEYS_FULL), *keys_short = msg(M_KEYS_SHORT);
    char status[32];
    int y = scr->h - 1, x = 0;
    snprintf(status, sizeof(status), " %s%dms", v->paused ? msg(M_PAUSED) : "",
             v->refresh_ms);
    int status_w = screen_text_width(status);
    int end = scr->w - status_w;
    int states_w = 0;
    for (int st = 0; st < STATE_COUNT; st++)
        if (shows_runnable(v, (enum board_state)st))
            states_w += 3 + screen_text_width(msg_state((enum board_state)st)) + 2;
    const char *keys = states_w + screen_text_width(keys_full) <= end ? keys_full : keys_short;
    int keys_x = end - screen_text_width(keys) - 1;
    if (keys_x < 0)
        keys_x = 0;
    for (int st = 0; st < STATE_COUNT; st++) {
        const char *name = msg_state((enum board_state)st);
        if (!shows_runnable(v, (enum board_state)st))
            continue;
        if (x + 1 + 1 + screen_text_width(name) + 2 > keys_x)
            break;             /* whole entries only, and a gap before the keys */
        x += screen_printf(scr, x, y, 1, state_style[st], "%c",
                           view_state_letter((enum board_state)st));
        x += screen_printf(scr, x, y, keys_x - x, ST_NORMAL, " %s  ", name);
    }
    screen_put(scr, keys == keys_full ? x : keys_x, y, end - keys_x, ST_DIM, keys);
    screen_put(scr, end, y, status_w, v->paused ? ST_WARN : ST_DIM, status);
}

static void draw_help(struct screen *scr)
{
    const char *lines[M_HELP_18 - M_HELP_1 + 1];
    int n = 0;
    for (int id = M_HELP_1; id <= M_HELP_18; id++)
        lines[n++] = msg((enum msg_id)id);
    view__draw_box(scr, lines, n, 72);
}

/* The columns of a grid for n panes in w x h: two when each pane gets 60
 * columns and 12 rows (14 when there are three rows: 2x3 for five at
 * 160x48); else, for five, three columns of 40 and 12 rows (3x2 at 120x36
 * and 120x40, where 2x3 leaves 10 to 12 rows, too few for a pane's threads,
 * loops and events; at 40 columns a pane cuts its widest columns first).
 * 0 when no grid fits. */
static int pick_grid(int n, int w, int h)
{
    for (int cols = 2; cols <= (n >= 5 ? 3 : 2); cols++) {
        int rows = (n + cols - 1) / cols;
        if (w / cols >= (cols == 2 ? 60 : VIEW_MIN_W) && h / rows >= (rows > 2 ? 14 : 12))
            return cols;
    }
    return 0;
}

/* Pane i at column i % cols, row i / cols; a bar between the columns of a
 * row, a dashed line between the rows. */
static void draw_grid(const struct view *v, struct screen *scr, int cols, int avail_h)
{
    int n = v->npanes, rows = (n + cols - 1) / cols;
    int w = scr->w / cols, h = avail_h / rows;
    for (int i = 0; i < n; i++) {
        int col = i % cols, row = i / cols;
        draw_pane(v, i, scr, (struct rect){ col * w, row * h, w - 1, h - 1 });
        if (col > 0)
            for (int y = row * h; y < row * h + h - 1; y++)
                screen_put(scr, col * w - 1, y, 1, ST_DIM, "|");
    }
    for (int row = 1; row < rows; row++)
        screen_fill(scr, 0, row * h - 1, scr->w, '-', ST_DIM);
}

void view_render(const struct view *v, struct screen *scr)
{
    screen_clear(scr);
    if (scr->w < VIEW_MIN_W || scr->h < VIEW_MIN_H) {
        screen_printf(scr, 0, 0, -1, ST_WARN, msg(M_TOO_SMALL),
                      scr->w, scr->h);
        screen_printf(scr, 0, 1, -1, ST_NORMAL, msg(M_NEED_AT_LEAST),
                      VIEW_MIN_W, VIEW_MIN_H);
        return;
    }
    if (v->npanes == 0) {
        screen_put(scr, 1, 1, -1, ST_TITLE, msg(M_NO_SERVERS));
        screen_printf(scr, 1, 3, -1, ST_NORMAL, msg(M_LOOKED_IN), v->board_dir);
        screen_put(scr, 1, 4, -1, ST_NORMAL,
                   msg(M_START_ONE));
    }

    /* Side by side when each pane gets 60 columns; three or more in a
     * grid (pick_grid: 2x2, or 3x2 for five); else stacked when each gets
     * 10 rows; else only the focused pane. The footer (the demo's
     * narrator) takes the rows above the legend, wrapped: it is the lesson
     * in words, so it is never cut off at the screen's edge. */
    int footer_h = v->footer[0] ? screen_put_wrapped(NULL, 0, 0, scr->w, FOOTER_ROWS_MAX,
                                                     2, ST_TITLE, v->footer) : 0;
    if (footer_h > FOOTER_ROWS_MAX)
        footer_h = FOOTER_ROWS_MAX;
    int avail_h = scr->h - 1 - footer_h, n = v->npanes, cols;
    screen_put_wrapped(scr, 0, avail_h, scr->w, footer_h, 2, ST_TITLE, v->footer);
    if (n == 0) {
        /* nothing to lay out */
    } else if (v->zoomed && n > 1) {
        draw_pane(v, v->focus, scr, (struct rect){ 0, 0, scr->w, avail_h - 1 });
        screen_printf(scr, 0, avail_h - 1, -1, ST_DIM,
                      msg(M_ZOOMED),
                      v->focus + 1, n);
    } else if (scr->w / n >= 60) {
        int w = scr->w / n;
        for (int i = 0; i < n; i++) {
            draw_pane(v, i, scr, (struct rect){ i * w, 0, w - 1, avail_h });
            if (i > 0)
                for (int y = 0; y < avail_h; y++)
                    screen_put(scr, i * w - 1, y, 1, ST_DIM, "|");
        }
    } else if (n > 2 && (cols = pick_grid(n, scr->w, avail_h)) > 0) {
        draw_grid(v, scr, cols, avail_h);
    } else if (avail_h / n >= 10) {
        int h = avail_h / n;
        for (int i = 0; i < n; i++) {
            draw_pane(v, i, scr, (struct rect){ 0, i * h, scr->w, h - 1 });
            if (i > 0)
                screen_fill(scr, 0, i * h - 1, scr->w, '-', ST_DIM);
        }
    } else {
        draw_pane(v, v->focus, scr, (struct rect){ 0, 0, scr->w, avail_h - 1 });
        screen_printf(scr, 0, avail_h - 1, -1, ST_DIM,
                      msg(M_ONE_PANE),
                      v->focus + 1, n);
    }
    draw_legend(v, scr);
    if (v->detail)
        view__draw_detail(v, scr);
    if (v->help)
        draw_help(scr);
}

void view_resize(struct view *v, int w, int h)
{
    v->small = w < VIEW_GRID_MIN_W || h < VIEW_GRID_MIN_H;
    if (!v->small)
        v->zoomed = false;
}

/* Focus the next pane. On a small screen, where the grid may cut a pane's
 * columns, tab zooms instead: the grid, then each pane full screen in
 * turn, then the grid again. */
static void tab(struct view *v)
{
    if (v->npanes == 0)
        return;
    if (v->small && v->npanes > 1 && !v->zoomed) {
        v->zoomed = true;      /* the focused pane first */
        return;
    }
    v->focus = (v->focus + 1) % v->npanes;
    if (v->zoomed && v->focus == 0)
        v->zoomed = false;     /* after the last: all of them again */
}

/* Move the list's selection, kept within the focused pane's threads. */
static void move_cursor(struct view *v, int key)
{
    const struct pane *p = v->npanes ? &v->panes[v->focus] : NULL;
    int order[BOARD_THREAD_SLOTS];
    int n = p && p->now ? shown_threads(p, v->order, order) : 0;
    int c = v->cursor;
    switch (key) {
    case TERM_KEY_UP: c--; break;
    case TERM_KEY_DOWN: c++; break;
    case TERM_KEY_PGUP: c -= VIEW_PAGE_ROWS; break;
    case TERM_KEY_PGDN: c += VIEW_PAGE_ROWS; break;
    case TERM_KEY_HOME: c = 0; break;
    case TERM_KEY_END: c = n - 1; break;
    }
    v->cursor = c >= n ? n - 1 : c;
    if (v->cursor < 0)
        v->cursor = 0;
}

/* Enter: the box about the selected thread of the focused pane (its
 * name is kept, so the box follows it as the list reorders). */
static void open_detail(struct view *v)
{
    const struct pane *p = v->npanes ? &v->panes[v->focus] : NULL;
    int order[BOARD_THREAD_SLOTS];
    int n = p && p->now ? shown_threads(p, v->order, order) : 0;
    if (v->cursor < 0 || v->cursor >= n)
        return;
    snprintf(v->detail_name, sizeof(v->detail_name), "%s",
             p->now->threads[order[v->cursor]].name);
    v->detail = true;
}

bool view_key(struct view *v, int key)
{
    if ((v->help || v->detail) && key != 'q') {  /* any key closes a box */
        v->help = v->detail = false;
        return true;
    }
    switch (key) {
    case 'q': case 'Q':
        return false;
    case 'p': case ' ':
        v->paused = !v->paused;
        break;
    case '\t':
        tab(v);
        v->cursor = 0;         /* another pane's threads: from the top */
        break;
    case '1': case '2': case '3': case '4': case '5':
        if (key - '1' < v->npanes)
            v->focus = key - '1';
        v->cursor = 0;
        break;
    case 't':
        v->layout = (enum thread_layout)((v->layout + 1) % 3);
        break;
    case 'l':
        v->show_log = !v->show_log;
        break;
    case 'o':
        v->order = (enum thread_order)((v->order + 1) % ORDER_COUNT);
        break;
    case '+': case '=':
        v->refresh_ms = v->refresh_ms / 2 < VIEW_REFRESH_MS_MIN
                            ? VIEW_REFRESH_MS_MIN : v->refresh_ms / 2;
        break;
    case '-':
        v->refresh_ms = v->refresh_ms * 2 > VIEW_REFRESH_MS_MAX
                            ? VIEW_REFRESH_MS_MAX : v->refresh_ms * 2;
        break;
    case '?': case 'h':
        v->help = true;
        break;
    case TERM_KEY_UP: case TERM_KEY_DOWN: case TERM_KEY_PGUP: case TERM_KEY_PGDN:
    case TERM_KEY_HOME: case TERM_KEY_END:
        move_cursor(v, key);
        break;
    case TERM_KEY_ENTER:
        open_detail(v);
        break;
    }
    return true;
}
