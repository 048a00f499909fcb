/* top.h -- `threadlab top`: attach to boards, refresh, draw. */
#ifndef THREADLAB_TOP_H
#define THREADLAB_TOP_H

#include <stdbool.h>
#include <stddef.h>

struct recorder;

struct top_opts {
    char **targets;        /* PIDs or model names; none: every live board */
    int ntargets;
    bool plain;            /* text snapshots instead of a full screen */
    bool json;             /* plain, as one JSON line per server per snapshot */
    bool big;              /* projector mode */
    int refresh_ms;        /* 0: the default */
    int count;             /* --plain: stop after this many snapshots (0: no limit) */
    int width, height;     /* --plain: the size of each snapshot */
    const char *footer;    /* a line under the panes (the demo's narrator) */
    const char *footer_en, *footer_zh; /* that line in each language, for the
                              recording (a replay shows its viewer's); NULL:
                              footer as shown */
    const char *record_path; /* --record: append every refresh to this file */
    struct recorder *recorder; /* that file, opened by the caller (record.h) so
                                  that a bad path fails before anything starts;
                                  top_run closes it. NULL: top_run opens it */
    bool caller_closes_recorder; /* recorder: the caller closes it after top_run
                                  (the demo adds its table as the ending) */
    /* Called at every refresh (the demo samples /proc and watches its
     * children here); returning false ends top_run as q would. */
    bool (*tick)(void *arg);
    void *tick_arg;
    /* Called before every drawing: fills the footer (overrides footer). */
    void (*status)(void *arg, char *buf, size_t len);
    /* Called with every key first; true when it used the key. */
    bool (*key)(void *arg, int key);
};

/* Run until q, a stop signal (SIGINT, SIGTERM, SIGHUP: stop.h), or (plain)
 * the count, a reader that went away, or every named server gone. A
 * recording is finished (its end mark written) on every way out. Returns an
 * exit status: 0, 1 when a named target has no board or --record cannot be
 * written. Main thread. */
int top_run(const struct top_opts *o);

#endif
