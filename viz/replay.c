/* replay.c -- `threadlab replay FILE`: a recording in the visualizer.
 *
 * The same screen as `threadlab top`, drawn from recorded frames instead
 * of live boards. Playing advances through the frames at their recorded
 * pace times the speed; every key that moves (a frame, an event, a
 * warning, a seek) pauses, so what you stepped to stays on screen.
 */
#include "replay.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "probe/board.h"
#include "msg.h"
#include "record.h"
#include "runner.h"
#include "stop.h"
#include "term.h"
#include "view.h"
#include "net/clock.h"

struct player {
    struct recording *rec;
    int frame, nframes;
    bool paused;
    double speed;
    const char *note;                    /* what the last key found, or "" */
    struct pane own[VIEW_MAX_PANES];     /* buffers the recording fills */
    const char *path;
};

/* Put frame p->frame into the view (panes without a snapshot are empty).
 * False when it could not be rebuilt (memory ran out): the line under the
 * panes says so, and text output stops there. */
static bool show(struct player *p, struct view *v)
{
    int n = recording_show(p->rec, p->frame, p->own);
    if (recording_trouble(p->rec)) {
        v->npanes = 0;
        snprintf(v->footer, sizeof(v->footer), "[replay] %s", recording_trouble(p->rec));
        return false;
    }
    v->npanes = n;
    for (int i = 0; i < n; i++) {
        v->panes[i] = p->own[i];
        if (p->own[i].now->pid == 0)
            v->panes[i].now = NULL;
        if (p->own[i].before->pid == 0)
            v->panes[i].before = NULL;
    }
    if (v->focus >= n)
        v->focus = 0;
    double t = recording_time_ns(p->rec, p->frame) / 1e9;
    double end = recording_time_ns(p->rec, p->nframes - 1) / 1e9;
    /* What the screen said under the panes then (sim --viz's "next:", the
     * demo's narrator) comes first: it is what the class read. */
    const char *caption = recording_caption(p->rec, p->frame, msg_lang());
    /* In three parts, the status's words from the message table; each
     * part goes after what fitted (a cut caption cuts the rest, and never
     * writes past the buffer). */
    size_t size = sizeof(v->footer), at = 0;
    at += (size_t)snprintf(v->footer, size, "%s%s", caption, caption[0] ? "  " : "");
    if (at < size)
        at += (size_t)snprintf(v->footer + at, size - at, msg(M_R_STATUS), p->frame + 1,
                               p->nframes, t, end, p->speed,
                               msg(p->paused ? M_R_PAUSED : M_R_PLAYING));
    if (at < size)
        snprintf(v->footer + at, size - at, "%s%s%s%s%s", p->note,
                 recording_new_warning(p->rec, p->frame) ? msg(M_R_NEW_WARNING)
                 : recording_has_warning(p->rec, p->frame) ? msg(M_R_WARNINGS_GO_ON) : "",
                 recording_cut(p->rec) ? msg(M_R_CUT) : "",
                 p->frame == p->nframes - 1 && recording_ending(p->rec, LANG_EN) ? msg(M_R_END) : "",
                 msg(M_R_KEYS));
    return true;
}

/* What stops text output: the frame that could not be rebuilt, and why. */
static int trouble(const struct player *p)
{
    fprintf(stderr, "threadlab replay: %s: %s\n", p->path, recording_trouble(p->rec));
    return 1;
}

/* The next (dir +1) or previous (-1) frame from `from` with a new event,
 * or (warning) where a warning starts: frames where the same loop goes on
 * warning are passed over. */
static int find(const struct player *p, int from, int dir, bool warning)
{
    for (int i = from + dir; i >= 0 && i < p->nframes; i += dir)
        if (warning ? recording_new_warning(p->rec, i) : recording_new_events(p->rec, i) > 0)
            return i;
    return from;
}

/* The next (dir +1) or previous warning's frame from the current one; when
 * there is none, the player stays and says so (w used to stop without a
 * word). */
static int find_warning(struct player *p, int dir)
{
    int to = find(p, p->frame, dir, true);
    if (to == p->frame)
        p->note = msg(dir > 0 ? M_R_NO_WARNING_AFTER : M_R_NO_WARNING_BEFORE);
    return to;
}

/* A key; false to quit. */
static bool key(struct player *p, struct view *v, int k)
{
    int to = -1;
    p->note = "";
    switch (k) {
    case 'q': case 'Q':
        return false;
    case ' ': case 'p':
        p->paused = !p->paused;
        if (!p->paused && p->frame == p->nframes - 1)
            to = 0;                                  /* play again from the start */
        break;
    case TERM_KEY_RIGHT: case 'n': to = p->frame + 1; break;
    case TERM_KEY_LEFT: case 'b': to = p->frame - 1; break;
    case '.': to = find(p, p->frame, +1, false); break;
    case ',': to = find(p, p->frame, -1, false); break;
    case 'w': to = find_warning(p, +1); break;
    case 'W': to = find_warning(p, -1); break;
    case 'g': to = 0; break;
    case 'G': to = p->nframes - 1; break;
    case '+': case '=': if (p->speed < 64) p->speed *= 2; break;
    case '-': if (p->speed > 1.0 / 64) p->speed /= 2; break;
    default:
        if (k >= '0' && k <= '9')
            to = (k - '0') * p->nframes / 10;
        else
            return view_key(v, k);
    }
    if (to >= 0) {
        if (k != ' ' && k != 'p')
            p->paused = true;
        p->frame = to < 0 ? 0 : to >= p->nframes ? p->nframes - 1 : to;
    }
    return true;
}

static bool print_frame(struct player *p, struct view *v, struct screen *scr)
{
    if (!show(p, v))
        return false;
    view_render(v, scr);
    printf("--- frame %d t=%.3fs ---\n", p->frame + 1,
           recording_time_ns(p->rec, p->frame) / 1e9);
    screen_print(scr, scr->h, stdout);
    return true;
}

/* After the last frame, what the recording ends with (the demo's table),
 * as the live run printed it. */
static void print_ending(const struct player *p)
{
    const char *ending = recording_ending(p->rec, msg_lang());
    if (ending)
        printf("%s", ending);
}

static int run_plain(struct player *p, struct view *v, const struct replay_opts *o)
{
    struct screen scr;
    bool ok = true;
    if (screen_init(&scr, o->width > 0 ? o->width : 120, o->height > 0 ? o->height : 40) < 0)
        return 1;
    if (o->frame > 0 || o->at_s >= 0) {
        if (o->frame > p->nframes) {
            fprintf(stderr, "threadlab replay: --frame %d: the recording has %d frame%s\n",
                    o->frame, p->nframes, p->nframes == 1 ? "" : "s");
            screen_free(&scr);
            return 1;
        }
        if (o->frame > 0)
            p->frame = o->frame - 1;
        ok = print_frame(p, v, &scr);
    } else if (o->backward) {
        for (p->frame = p->nframes - 1; ok && p->frame >= 0; p->frame--)
            ok = print_frame(p, v, &scr);
    } else {
        for (p->frame = 0; ok && p->frame < p->nframes; p->frame++)
            ok = print_frame(p, v, &scr);
        if (ok)
            print_ending(p);
    }
    screen_free(&scr);
    return ok ? 0 : trouble(p);
}

/* ---- --cast: asciicast v2, for players that know no threadlab ---------- */

/* text as the inside of a JSON string, each "\n" a terminal's "\r\n". */
static void cast_put_text(FILE *out, const char *text, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c == '\n')
            fputs("\\r\\n", out);
        else if (c < 0x20 || c == 0x7f)
            fprintf(out, "\\u%04x", c);
        else
            fputc(c, out);           /* UTF-8 as it is: JSON text is UTF-8 */
    }
}

/* One output event: at t seconds, clear the screen (when clear) and print
 * text. The text is what --plain prints, so the two cannot differ. */
static void cast_event(FILE *out, double t, bool clear, const char *text, size_t len)
{
    fprintf(out, "[%.6f, \"o\", \"%s", t, clear ? "\\u001b[H\\u001b[2J" : "");
    cast_put_text(out, text, len);
    fputs("\"]\n", out);
}

/* Every frame as one event at its recorded time (from the first frame's),
 * the ending (a demo's table) a second after the last: an asciicast v2
 * file (a JSON header line, then [time, "o", data] lines), which
 * terminal-recording players play with no threadlab. */
static int run_cast(struct player *p, struct view *v, const struct replay_opts *o)
{
    int w = o->width > 0 ? o->width : 120, h = o->height > 0 ? o->height : 40;
    struct screen scr;
    char *text = NULL;
    size_t len = 0;
    FILE *out = fopen(o->cast, "w");
    if (!out) {
        fprintf(stderr, "threadlab replay: --cast %s: %s\n", o->cast, strerror(errno));
        return 1;
    }
    FILE *frame = open_memstream(&text, &len);
    if (!frame || screen_init(&scr, w, h) < 0) {
        fprintf(stderr, "threadlab replay: --cast: out of memory\n");
        if (frame)
            fclose(frame);
        free(text);
        fclose(out);
        return 1;
    }
    fprintf(out, "{\"version\": 2, \"width\": %d, \"height\": %d, \"title\": \"threadlab "
            "replay ", w, h);
    cast_put_text(out, o->path, strlen(o->path));
    fputs("\", \"env\": {\"TERM\": \"xterm-256color\"}}\n", out);
    uint64_t t0 = recording_time_ns(p->rec, 0);
    bool ok = true;
    for (p->frame = 0; ok && p->frame < p->nframes; p->frame++) {
        if (!(ok = show(p, v)))
            break;
        view_render(v, &scr);
        rewind(frame);
        screen_print(&scr, scr.h, frame);
        fflush(frame);
        cast_event(out, (double)(recording_time_ns(p->rec, p->frame) - t0) / 1e9, true,
                   text, (size_t)ftell(frame));
    }
    const char *ending = recording_ending(p->rec, msg_lang());
    if (ok && ending)
        cast_event(out, (double)(recording_time_ns(p->rec, p->nframes - 1) - t0) / 1e9 + 1,
                   true, ending, strlen(ending));
    p->frame = p->nframes - 1;
    screen_free(&scr);
    fclose(frame);
    free(text);
    bool failed = ferror(out);
    if (fclose(out) != 0 || failed || !ok) {
        if (!ok)
            return trouble(p);
        fprintf(stderr, "threadlab replay: --cast %s: %s\n", o->cast, strerror(errno));
        return 1;
    }
    fprintf(stderr, "threadlab replay: wrote %s (asciicast v2, %d frames, %dx%d)\n", o->cast,
            p->nframes, w, h);
    return 0;
}

/* The full screen's hooks (runner.h): play at the recorded pace. */
struct playing {
    struct player *p;
    uint64_t wall0, rec0;              /* the pace: recorded time rec0 was
                                          shown at wall time wall0 */
};

static int playing_draw(void *arg, struct view *v, struct screen *scr)
{
    struct playing *g = arg;
    struct player *p = g->p;
    if (!p->paused) {                                 /* follow the recorded pace */
        uint64_t due = g->rec0 + (uint64_t)((double)(now_ns() - g->wall0) * p->speed);
        while (p->frame + 1 < p->nframes && recording_time_ns(p->rec, p->frame + 1) <= due)
            p->frame++;
        if (p->frame == p->nframes - 1)
            p->paused = true;
    }
    show(p, v);
    view_render(v, scr);
    return 50;
}

static bool playing_key(void *arg, struct view *v, int k)
{
    struct playing *g = arg;
    struct player *p = g->p;
    double speed = p->speed;
    bool paused = p->paused;
    bool running = key(p, v, k);
    if (paused != p->paused || speed != p->speed || !p->paused) {
        g->wall0 = now_ns();                    /* the pace restarts here */
        g->rec0 = recording_time_ns(p->rec, p->frame);
    }
    return running;
}

static int run_terminal(struct player *p, struct view *v)
{
    struct playing g = { p, now_ns(), recording_time_ns(p->rec, p->frame) };
    return runner_run(v, &(struct runner_hooks){ playing_draw, playing_key, &g });
}

int replay_run(const struct replay_opts *o)
{
    char err[512];
    struct player *p = calloc(1, sizeof(*p));
    struct view *v = malloc(sizeof(*v));
    if (!p || !v) {
        free(p);
        free(v);
        return 1;
    }
    p->rec = recording_load(o->path, err, sizeof(err));
    if (!p->rec) {
        fprintf(stderr, "threadlab replay: %s\n", err);
        free(p);
        free(v);
        return 1;
    }
    if (recording_cut(p->rec))                 /* it plays, and says what is missing */
        fprintf(stderr, "threadlab replay: %s\n", recording_cut(p->rec));
    p->nframes = recording_frames(p->rec);
    p->speed = o->speed > 0 ? o->speed : 1;
    p->note = "";
    p->path = o->path;
    p->frame = 0;
    if (o->at_s >= 0)                          /* the last frame at or before it */
        while (p->frame + 1 < p->nframes &&
               recording_time_ns(p->rec, p->frame + 1) <= (uint64_t)(o->at_s * 1e9))
            p->frame++;
    view_init(v, o->big);
    msg_setup_locale();                        /* --plain too: Chinese is multibyte */
    snprintf(v->board_dir, sizeof(v->board_dir), "%s", o->path);
    bool plain = o->plain || !isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO);
    int rc;
    if (o->cast) {
        p->paused = true;
        rc = run_cast(p, v, o);
    } else if (plain) {
        p->paused = true;
        rc = run_plain(p, v, o);
    } else {
        p->paused = o->at_s >= 0;              /* --at: show that moment first */
        stop_signals_catch();
        rc = run_terminal(p, v);
        stop_signals_restore();
        if (rc == 0)
            print_ending(p);                   /* the screen is gone: as the demo ends */
        if (rc == -EINVAL) {                   /* TERM=dumb or unknown: text instead */
            const char *term = getenv("TERM");
            fprintf(stderr, "threadlab replay: TERM=%s cannot draw a full screen; "
                    "printing the frames as text instead (as --plain does)\n",
                    term ? term : "(unset)");
            p->paused = true;
            rc = run_plain(p, v, o);
        } else if (rc < 0) {
            rc = 1;
        }
    }
    recording_release_panes(p->own);
    recording_free(p->rec);
    free(p);
    free(v);
    return rc;
}
