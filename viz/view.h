/* view.h -- what `threadlab top` shows, as a pure function of snapshots.
 *
 * view_render draws the panes, legend and help into a screen model; it does
 * no I/O, so tests feed it snapshots and read the cells back. top.c does
 * the reading and the painting around it.
 */
#ifndef THREADLAB_VIEW_H
#define THREADLAB_VIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "probe/board_read.h"
#include "screen.h"

#define VIEW_MAX_PANES 5            /* every model side by side */
#define VIEW_MIN_W 40              /* smaller terminals get a message */
#define VIEW_MIN_H 12
#define VIEW_GRID_MIN_W 120        /* the tested minimum for the 2x2 grid: */
#define VIEW_GRID_MIN_H 40         /* below it, tab zooms one pane */
#define VIEW_TERMINATED_SHOWN_NS 3000000000ull /* ended threads fade after 3 s */
#define VIEW_REFRESH_MS_DEFAULT 500
#define VIEW_REFRESH_MS_BIG 1000   /* --big: slower, for a classroom */
#define VIEW_REFRESH_MS_MIN 100
#define VIEW_REFRESH_MS_MAX 5000
#define VIEW_PAGE_ROWS 10          /* PgUp/PgDn in the thread list */

/* How a pane draws its threads. */
enum thread_layout {
    LAYOUT_AUTO,   /* a list when they fit, a grid of cells when not */
    LAYOUT_LIST,
    LAYOUT_GRID,
};

/* The order of the thread list and grid (o cycles them). */
enum thread_order {
    ORDER_ROLE,    /* by role, then connection: the model's shape */
    ORDER_STATE,   /* running first, then blocked, waiting, idle, ended */
    ORDER_LINES,   /* the most lines first */
    ORDER_CPU,     /* the most CPU% first (cpu.h) */
    ORDER_COUNT,
};

struct cpu_sampler;

/* One watched server. */
struct pane {
    char path[256];                  /* its board file */
    int pid;
    struct board_snapshot *now;      /* latest good snapshot, or NULL */
    struct board_snapshot *before;   /* the one before, for rates, or NULL */
    bool gone;                       /* the server exited: last state shown */
    char error[256];                 /* why the last read failed, or "" */
    struct cpu_sampler *cpu;         /* the last /proc sample (cpu.h), or NULL */
    float *cpu_pct;                  /* CPU% of now->threads[i], CPU_NONE for
                                        no figure; NULL: none at all (replay) */
};

/* Numbers derived from a pane's last two snapshots. */
struct pane_rates {
    bool have;                       /* false until two snapshots exist */
    double interval_s;
    double lines_per_s;
    uint64_t p50_ns, p99_ns;         /* of lines handled in the interval */
    uint64_t lines;                  /* lines handled in the interval */
};

struct view {
    struct pane panes[VIEW_MAX_PANES];
    int npanes;
    int focus;                       /* index of the focused pane */
    bool paused;                     /* p: keep showing the same snapshots */
    bool show_log;                   /* l: the event log */
    bool big;                        /* --big: projector mode */
    bool help;                       /* ?: the help box */
    bool small;                      /* the screen is below the grid's tested
                                        minimum (view_resize) */
    bool zoomed;                     /* small: the focused pane fills the
                                        screen (tab steps through the panes,
                                        then back to all of them) */
    enum thread_layout layout;       /* t cycles auto, list, grid */
    enum thread_order order;         /* o cycles role, state, lines, CPU */
    int cursor;                      /* list: the selected thread of the focused
                                        pane (its index in the shown order);
                                        the list scrolls to keep it on screen */
    bool detail;                     /* Enter in the list: the selected
                                        thread's figures in a box (any key
                                        closes it) */
    char detail_name[BOARD_NAME_BYTES]; /* that thread, found again by name
                                        at every refresh */
    int refresh_ms;
    char board_dir[200];             /* for the "nothing to watch" message */
    char footer[1024];               /* a line under the panes (the demo's
                                        narrator; in Chinese three bytes a
                                        character), or "" */
};

/* A view with defaults: log shown, auto layout, 500 ms. */
void view_init(struct view *v, bool big);

/* Rates of a pane between its last two snapshots. */
void pane_rates(const struct pane *p, struct pane_rates *r);

/* Tell the view its screen's size (at start and at every resize): below
 * VIEW_GRID_MIN_W x VIEW_GRID_MIN_H, tab zooms one pane. */
void view_resize(struct view *v, int w, int h);

/* Draw everything into scr (cleared first). */
void view_render(const struct view *v, struct screen *scr);

/* Apply a key. Returns false when the key means quit. Keys: q quit, p pause,
 * tab or 1-5 focus (on a small screen tab zooms the panes in turn, then
 * shows them all again), t list/grid, o order by role/state/lines/CPU, l log, + faster, - slower, ? help; in the
 * list, up/down move the selection by one, PgUp/PgDn by VIEW_PAGE_ROWS,
 * Home/End to the first/last thread, Enter shows the selected thread's
 * connection or loop (term.h's TERM_KEY_* codes). */
bool view_key(struct view *v, int key);

/* One letter per thread state, used in grids and legends. */
char view_state_letter(enum board_state s);

#endif
