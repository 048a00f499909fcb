/* main.c -- check_view: what `threadlab top` shows for given snapshots,
 * read from the screen model without a terminal; and its panes: a killed
 * server is gone at the next refresh, out of memory leaves a pane as it
 * was. This file holds the snapshots every subject builds and the case
 * they fill. */
#include "check_view.h"

struct board_snapshot *make_snapshot(const char *model, int pid,
                                     uint64_t taken_s)
{
    struct board_snapshot *s = calloc(1, sizeof(*s));
    snprintf(s->model, sizeof(s->model), "%s", model);
    s->pid = pid;
    s->start_mono_ns = 100 * SEC;
    s->taken_mono_ns = (100 + taken_s) * SEC;
    return s;
}

void add_thread(struct board_snapshot *s, enum board_role role,
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

void one_pane(struct view *v, struct board_snapshot *now,
              struct board_snapshot *before)
{
    view_init(v, false);
    v->npanes = 1;
    v->panes[0].pid = now->pid;
    v->panes[0].now = now;
    v->panes[0].before = before;
}

int count_cells(const struct screen *scr, char ch, enum style st)
{
    int n = 0;
    for (int i = 0; i < scr->w * scr->h; i++)
        n += scr->cells[i].ch == (uint32_t)(unsigned char)ch && scr->cells[i].style == st;
    return n;
}

int main(void)
{
    Suite *s = suite_create("view");
    TCase *tc = tcase_create("view");
    add_screen_tests(tc);
    add_layout_tests(tc);
    add_cpu_tests(tc);
    add_width_tests(tc);
    add_reason_tests(tc);
    add_word_tests(tc);
    add_pane_tests(tc);
    suite_add_tcase(s, tc);
    return ts_run(s);
}
