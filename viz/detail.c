/* detail.c -- the box Enter opens on the selected thread: its state and
 * for how long, its connection, lines, bytes, CPU, what output it holds,
 * and for a loop thread its loop. See view_parts.h. */
#include <stdio.h>
#include <string.h>

#include "msg.h"
#include "view_parts.h"

#define DETAIL_ROWS 14
#define DETAIL_COLS 160

/* The thread the box is about, in the focused pane's snapshot: found by
 * name, a live one first (a name comes back only after its thread ended).
 * Returns its index, or -1 when it has left the board. */
static int detail_thread(const struct view *v, const struct board_snapshot *s)
{
    int ended = -1;
    for (int i = 0; i < s->nthreads; i++)
        if (!strcmp(s->threads[i].name, v->detail_name)) {
            if (s->threads[i].state != STATE_TERMINATED)
                return i;
            ended = i;
        }
    return ended;
}

/* What the thread holds of output not yet written, said for its kind. */
static const char *detail_pending(const struct board_thread_snap *t, bool is_loop)
{
    if (is_loop)
        return msg(M_D_PENDING_LOOP);
    if (t->role == ROLE_CONN || t->role == ROLE_POOL_WORKER)
        return msg(M_D_PENDING_NONE);
    return msg(M_D_PENDING_NO_CONN);
}

/* A loop thread's loop: the loop slot of the same name (loop.c names both). */
static int detail_loop_rows(const struct board_snapshot *s, const char *name,
                            char rows[][DETAIL_COLS])
{
    for (int i = 0; i < s->nloops; i++) {
        const struct board_loop_snap *l = &s->loops[i];
        if (strcmp(l->name, name))
            continue;
        uint64_t total = l->io_ns + l->task_ns;
        int io_pct = total ? (int)(l->io_ns * 100 / total) : 0;
        char longest[16], blocked[48] = "";
        view__fmt_ns(longest, sizeof(longest), l->longest_task_ns);
        if (l->blocked_since_ns && l->blocked_since_ns < s->taken_mono_ns) {
            char age[32];
            view__fmt_age(age, sizeof(age), s->taken_mono_ns - l->blocked_since_ns);
            snprintf(blocked, sizeof(blocked), msg(M_BLOCKED), age);
        }
        snprintf(rows[0], DETAIL_COLS, msg(M_D_LOOP), (unsigned long long)l->channels,
                 (unsigned long long)l->task_queue_depth, (unsigned long long)l->timers);
        snprintf(rows[1], DETAIL_COLS, msg(M_D_LOOP2), io_pct, total ? 100 - io_pct : 0,
                 view__phase_name(l->phase), longest, blocked);
        return 2;
    }
    return 0;
}

/* The box's rows for thread i of pane p. Returns how many. */
static int detail_rows(const struct pane *p, int i, char rows[][DETAIL_COLS])
{
    const struct board_snapshot *s = p->now;
    const struct board_thread_snap *t = &s->threads[i];
    char age[32], in[24], out[24], cpu[16], busy[32], idle[32];
    int n = 0;
    view__fmt_age(age, sizeof(age), s->taken_mono_ns - t->since_ns);
    view__fmt_bytes(in, sizeof(in), t->bytes_in);
    view__fmt_bytes(out, sizeof(out), t->bytes_out);
    view__fmt_cpu(cpu, sizeof(cpu), p->cpu_pct, i);
    view__fmt_ns(busy, sizeof(busy), t->busy_ns);
    view__fmt_ns(idle, sizeof(idle), t->idle_ns);
    if (t->tid)
        snprintf(rows[n++], DETAIL_COLS, msg(M_D_TITLE_TID), t->name,
                 msg_role(t->role), (unsigned)t->tid);
    else
        snprintf(rows[n++], DETAIL_COLS, msg(M_D_TITLE_NOTID), t->name,
                 msg_role(t->role));
    rows[n++][0] = '\0';
    snprintf(rows[n++], DETAIL_COLS, msg(M_D_STATE), msg_state(t->state), age);
    if (t->conn)
        snprintf(rows[n++], DETAIL_COLS, msg(M_D_CONN), (unsigned long long)t->conn);
    else
        snprintf(rows[n++], DETAIL_COLS, "%s", msg(M_D_NO_CONN));
    snprintf(rows[n++], DETAIL_COLS, msg(M_D_LINES), (unsigned long long)t->lines);
    snprintf(rows[n++], DETAIL_COLS, msg(M_D_BYTES), in, out);
    snprintf(rows[n++], DETAIL_COLS, msg(M_D_CPU), cpu, strcmp(cpu, "-") ? "%" : "", busy,
             idle);
    int loop_rows = detail_loop_rows(s, t->name, rows + n);
    n += loop_rows;
    snprintf(rows[n++], DETAIL_COLS, "%s", detail_pending(t, loop_rows > 0));
    rows[n++][0] = '\0';
    snprintf(rows[n++], DETAIL_COLS, "%s", msg(M_D_CLOSE));
    return n;
}

void view__draw_detail(const struct view *v, struct screen *scr)
{
    char rows[DETAIL_ROWS][DETAIL_COLS];
    const char *lines[DETAIL_ROWS];
    const struct pane *p = v->npanes ? &v->panes[v->focus] : NULL;
    int i = p && p->now ? detail_thread(v, p->now) : -1;
    int n = 0;
    if (i < 0)
        snprintf(rows[n++], DETAIL_COLS, msg(M_D_GONE),
                 v->detail_name);
    else
        n = detail_rows(p, i, rows);
    for (int k = 0; k < n; k++)
        lines[k] = rows[k];
    view__draw_box(scr, lines, n, 84);
}

