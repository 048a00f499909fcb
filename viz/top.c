/* top.c -- find boards, read snapshots, render, paint or print.
 *
 *   board files --board_read--> panes (two snapshots each)
 *        --view_render--> screen model --term_paint or print--> you
 */
#include "top.h"

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "probe/board.h"
#include "probe/board_read.h"
#include "msg.h"
#include "pane.h"
#include "record.h"
#include "runner.h"
#include "stop.h"
#include "term.h"
#include "view.h"
#include "net/clock.h"

/* ---- panes ------------------------------------------------------------------ */

/* The view reads NULL for "no snapshot yet". */
static void pane_expose(const struct pane *p, struct pane *out)
{
    *out = *p;
    if (p->now && p->now->pid == 0)
        out->now = NULL;
    if (p->before && p->before->pid == 0)
        out->before = NULL;
}

/* ---- which boards ------------------------------------------------------------ */

static bool is_number(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s))
            return false;
    return true;
}

static bool watching(const struct view *v, const char *path)
{
    for (int i = 0; i < v->npanes; i++)
        if (!strcmp(v->panes[i].path, path))
            return true;
    return false;
}

static const char *model_of(const char *path, char *model, size_t len)
{
    struct board_snapshot *s = malloc(sizeof(*s));
    char err[256];
    model[0] = '\0';
    if (s && board_read(path, s, err, sizeof(err)) == 0)
        snprintf(model, len, "%s", s->model);
    free(s);
    return model;
}

/* Attach panes to what the targets name; returns false (with a message)
 * when a named target has no board. */
static bool attach_targets(struct view *v, const struct top_opts *o)
{
    struct board_entry entries[BOARD_LIST_MAX];
    int n = board_list(entries, BOARD_LIST_MAX, true);
    if (n < 0)
        n = 0;
    for (int t = 0; t < o->ntargets; t++) {
        bool found = false;
        for (int i = 0; i < n && v->npanes < VIEW_MAX_PANES; i++) {
            char model[BOARD_MODEL_BYTES];
            bool match = is_number(o->targets[t])
                ? entries[i].pid == atoi(o->targets[t])
                : !strcmp(model_of(entries[i].path, model, sizeof(model)),
                          o->targets[t]);
            if (match && !watching(v, entries[i].path)) {
                if (pane_attach(&v->panes[v->npanes], entries[i].path,
                                entries[i].pid) < 0) {
                    fprintf(stderr, "threadlab top: out of memory\n");
                    return false;
                }
                found = true;
                v->npanes++;
            }
        }
        if (!found) {
            fprintf(stderr, "threadlab top: no live board for '%s' in %s "
                    "(is it a threadlab server, started without --no-board?)\n",
                    o->targets[t], v->board_dir);
            return false;
        }
    }
    return true;
}

/* No targets: watch every live board, up to five; a new server takes the
 * place of one that is gone. */
static void attach_every_live_board(struct view *v)
{
    struct board_entry entries[BOARD_LIST_MAX];
    int n = board_list(entries, BOARD_LIST_MAX, true);
    for (int i = 0; i < n; i++) {
        if (!entries[i].alive || watching(v, entries[i].path))
            continue;
        int slot = v->npanes < VIEW_MAX_PANES ? v->npanes : -1;
        for (int k = 0; slot < 0 && k < v->npanes; k++)
            if (v->panes[k].gone)
                slot = k;
        if (slot < 0)
            break;
        /* Out of memory, the gone pane stays; the next refresh tries again. */
        if (pane_attach(&v->panes[slot], entries[i].path, entries[i].pid) == 0 &&
            slot == v->npanes)
            v->npanes++;
    }
}

/* ---- the two ways of showing ------------------------------------------------- */

static void render(const struct view *v, struct screen *scr)
{
    struct view shown = *v;
    for (int i = 0; i < v->npanes; i++)
        pane_expose(&v->panes[i], &shown.panes[i]);
    view_render(&shown, scr);
}

static bool all_gone(const struct view *v)
{
    for (int i = 0; i < v->npanes; i++)
        if (!v->panes[i].gone)
            return false;
    return v->npanes > 0;
}

/* --record: the file every refresh is appended to. */
static struct {
    struct recorder *r;
    const char *caption_en, *caption_zh; /* the footer in each language, or NULL */
    uint64_t start_ns;                 /* when it began */
    int failed;                        /* the -errno that ended it early, or 0 */
} recording;

static void refresh_all(struct view *v, bool auto_attach)
{
    if (auto_attach)
        attach_every_live_board(v);
    for (int i = 0; i < v->npanes; i++)
        pane_refresh(&v->panes[i]);
    /* A failed frame (the disk is full) ends the recording, not top: the
     * recorder has cut the file back to its last whole frame. Said at the
     * end, not now, when it would scribble on the full screen. */
    if (recording.r && !recording.failed) {
        if (recording.caption_en)                     /* the narrator, in both */
            recorder_caption(recording.r, recording.caption_en, recording.caption_zh);
        else
            recorder_caption(recording.r, v->footer, NULL);  /* as shown */
        recording.failed = recorder_frame(recording.r, now_ns() - recording.start_ns,
                                          v->panes, v->npanes);
    }
}

static int run_plain(struct view *v, const struct top_opts *o, bool auto_attach)
{
    struct screen scr;
    int w = o->width > 0 ? o->width : 120, h = o->height > 0 ? o->height : 40;
    view_resize(v, w, h);
    if (screen_init(&scr, w, h) < 0)
        return 1;
    /* A reader that goes away (top --plain | head) ends top as q would, not
     * SIGPIPE, which would kill it before a recording is finished. */
    struct sigaction ignore = { .sa_handler = SIG_IGN }, old_pipe;
    sigaction(SIGPIPE, &ignore, &old_pipe);
    refresh_all(v, auto_attach);
    for (int shot = 1; (o->count == 0 || shot <= o->count) && !stop_signal(); shot++) {
        struct timespec tick = { v->refresh_ms / 1000,
                                 (long)(v->refresh_ms % 1000) * 1000000L };
        /* A stop signal cuts the sleep short (EINTR); one that comes just
         * before it costs at most this one refresh. */
        if (nanosleep(&tick, NULL) < 0 && stop_signal())
            break;
        refresh_all(v, auto_attach);
        /* The show's end (a simulated run that finished) still prints the
         * snapshot just read: a run shorter than one refresh would
         * otherwise print only its first, empty, one. */
        bool last = o->tick && !o->tick(o->tick_arg);
        if (o->json) {
            for (int i = 0; i < v->npanes; i++)
                if (v->panes[i].now->pid != 0 && !v->panes[i].gone)
                    board_snapshot_json(v->panes[i].now, stdout);
            if (fflush(stdout) != 0 || last)
                break;
            if (!auto_attach && all_gone(v))
                break;
            continue;
        }
        if (o->status)
            o->status(o->tick_arg, v->footer, sizeof(v->footer));
        render(v, &scr);
        time_t now = time(NULL);
        char when[32];
        strftime(when, sizeof(when), "%H:%M:%S", localtime(&now));
        printf("--- threadlab top %s ---\n", when);
        screen_print(&scr, h - 1, stdout);  /* the legend's keys mean nothing here */
        if (fflush(stdout) != 0 || last)  /* the reader went away, or a signal cut the write */
            break;
        if (!auto_attach && all_gone(v))
            break;
    }
    sigaction(SIGPIPE, &old_pipe, NULL);
    screen_free(&scr);
    return 0;
}

/* The full screen's hooks (runner.h). */
struct live {
    const struct top_opts *o;
    bool auto_attach;
    uint64_t next_ms;                  /* when to read the boards again */
};

static int live_draw(void *arg, struct view *v, struct screen *scr)
{
    struct live *l = arg;
    uint64_t now = now_ms();
    if (now >= l->next_ms) {
        if (!v->paused)
            refresh_all(v, l->auto_attach);
        if (l->o->tick && !l->o->tick(l->o->tick_arg))
            return -1;
        l->next_ms = now + (uint64_t)v->refresh_ms;
    }
    if (l->o->status)
        l->o->status(l->o->tick_arg, v->footer, sizeof(v->footer));
    render(v, scr);
    return (int)(l->next_ms > now ? l->next_ms - now : 0);
}

static bool live_key(void *arg, struct view *v, int key)
{
    struct live *l = arg;
    return (l->o->key && l->o->key(l->o->tick_arg, key)) || view_key(v, key);
}

static int run_terminal(struct view *v, const struct top_opts *o, bool auto_attach)
{
    struct live l = { o, auto_attach, 0 };
    refresh_all(v, auto_attach);     /* and again at once: two snapshots give rates */
    int rc = runner_run(v, &(struct runner_hooks){ live_draw, live_key, &l });
    return rc == -ENOMEM ? 1 : rc;
}

/* Run the terminal screen, or text where there is no terminal that can
 * draw one. Returns an exit status. */
static int run(struct view *v, const struct top_opts *o, bool auto_attach)
{
    bool plain = o->plain || !isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO);
    int rc = plain ? 0 : run_terminal(v, o, auto_attach);
    if (rc == -EINVAL) {             /* TERM=dumb or unknown: text, not a broken screen */
        const char *term = getenv("TERM");
        fprintf(stderr, "threadlab top: TERM=%s cannot draw a full screen; printing "
                "text snapshots instead (as --plain does)\n", term ? term : "(unset)");
        plain = true;
    }
    if (plain)
        return run_plain(v, o, auto_attach);
    return rc < 0 ? 1 : rc;
}

int top_run(const struct top_opts *o)
{
    struct view *v = malloc(sizeof(*v));
    int rc = 1;
    recording.r = o->recorder;
    recording.caption_en = o->footer_en;
    recording.caption_zh = o->footer_zh;
    recording.failed = 0;
    if (!v)
        goto out;
    view_init(v, o->big);
    if (o->refresh_ms > 0)
        v->refresh_ms = o->refresh_ms;
    if (o->footer)
        snprintf(v->footer, sizeof(v->footer), "%s", o->footer);
    if (board_dir(v->board_dir, sizeof(v->board_dir)) < 0) {
        fprintf(stderr, "threadlab top: the board directory %s is not usable "
                "(not ours, not private, or a symlink)\n", v->board_dir);
        goto out;
    }
    bool auto_attach = o->ntargets == 0;
    if (!auto_attach && !attach_targets(v, o))
        goto out;
    if (!recording.r && o->record_path) {
        char err[300];
        recording.r = recorder_open(o->record_path, err, sizeof(err));
        if (!recording.r) {
            fprintf(stderr, "threadlab: --record: %s\n", err);
            goto out;
        }
    }
    recording.start_ns = now_ns();  /* frame 1 is at t=0, whoever opened the file */
    msg_setup_locale();              /* --plain too: Chinese text is multibyte */
    stop_signals_catch();
    rc = run(v, o, auto_attach);
    stop_signals_restore();
out:
    if (recording.r && o->caller_closes_recorder)
        recording.r = NULL;          /* the caller adds its ending, then closes */
    if (recording.r &&                /* every way out finishes the file */
        !recorder_finish(recording.r, o->record_path, "threadlab", "frame") && rc == 0)
        rc = 1;
    recording.r = NULL;
    for (int i = 0; v && i < v->npanes; i++)
        pane_detach(&v->panes[i]);
    free(v);
    return rc;
}
