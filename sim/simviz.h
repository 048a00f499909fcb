/* simviz.h -- `threadlab sim --viz`: a simulated run played on a board, so
 * that `threadlab top`'s screen shows it as it would a real server, at a
 * speed you choose, with pause and single step.
 *
 * The simulation thread writes the board (threads and their states, loops,
 * counters, events) and paces itself: virtual time advances `speed` times
 * as fast as the wall clock. The screen's thread reads the board and turns
 * keys into requests (pause, one step, faster, slower, quit) through the
 * atomics of struct sim_viz_ctl.
 */
#ifndef THREADLAB_SIMVIZ_H
#define THREADLAB_SIMVIZ_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "sim/engine.h"

enum viz_state { VIZ_RUNNING, VIZ_RUNNABLE, VIZ_READING, VIZ_SLEEPING, VIZ_WAITING,
                 VIZ_IDLE };
enum viz_role { VIZ_ACCEPTOR, VIZ_CONN, VIZ_POOL_THREAD, VIZ_BOSS, VIZ_WORKER,
                VIZ_BUSINESS, VIZ_CLIENT, VIZ_CARRIER, VIZ_MONITOR };
enum viz_event { VIZ_EV_ACCEPT, VIZ_EV_ASSIGN, VIZ_EV_SPAWN, VIZ_EV_EXIT, VIZ_EV_REJECT,
                 VIZ_EV_BLOCKED, VIZ_EV_CLOSE, VIZ_EV_QUEUED };
enum viz_counter { VIZ_ACCEPTED, VIZ_ACTIVE, VIZ_CLOSED, VIZ_LINES, VIZ_REJECTED,
                   VIZ_OFFLOADED };

/* What a class can step to with the "next of this kind" key: the things
 * that happen to connections and loops, not the cores' bursts and slices. */
enum viz_kind { VIZ_KIND_NONE, VIZ_KIND_ACCEPT, VIZ_KIND_ASSIGN, VIZ_KIND_SPAWN,
                VIZ_KIND_EXIT, VIZ_KIND_REJECT, VIZ_KIND_BLOCK, VIZ_KIND_CLOSE,
                VIZ_KIND_QUEUED, VIZ_KIND_REPLY, VIZ_KIND_COUNT };

/* Shared between the simulation and the screen. */
struct sim_viz_ctl {
    _Atomic bool paused;
    _Atomic int64_t steps;         /* events to run while paused */
    _Atomic uint64_t speed_ppb;    /* virtual ns per wall ns, x 10^9 */
    _Atomic bool quit;             /* stop the run */
    _Atomic bool finished;         /* the run is over */
    _Atomic uint64_t vnow_ns;      /* where the run is */
    _Atomic uint64_t events;       /* events done (the next is events + 1) */
    _Atomic bool restart;          /* step back: run again from the seed ... */
    _Atomic int64_t replay_to;     /* ... at full speed until this many events
                                      are done, then pause; -1: not going back.
                                      Cleared after events is stored, so a
                                      reader that sees -1 sees the new events */
    _Atomic int last_kind;         /* enum viz_kind: the latest that happened */
    _Atomic uint64_t kind_seen[VIZ_KIND_COUNT]; /* how often each happened */
    _Atomic uint64_t until;        /* run on until a kind has happened so
                                      many times in all, then pause: one
                                      word (VIZ_UNTIL), so that a press and
                                      the arrival never miss each other;
                                      0: not running on */
    /* Called by the simulation before each event it shows (not those run
     * through when going back or on to a kind): the recorder's hook. */
    void (*shown)(void *arg, uint64_t events, const char *desc);
    void *shown_arg;
    pthread_mutex_t lock;          /* guards last */
    char last[160];                /* what the last event was */
};

/* The until word: the kind in the top byte, the count below. */
#define VIZ_UNTIL(kind, seen) ((uint64_t)(kind) << 56 | (seen))
#define VIZ_UNTIL_KIND(u) ((int)((u) >> 56))
#define VIZ_UNTIL_SEEN(u) ((u) & ((1ull << 56) - 1))

/* e: run on to the next event of the kind that happened last; pressed
 * again before it gets there, one more of the kind it is running to (so
 * a burst of presses counts every press). Nothing happened yet: one
 * event. Screen thread. */
void sim_viz_step_to_kind(struct sim_viz_ctl *c);

/* The kind's name, as the status line says it ("assign"). */
const char *viz_kind_name(enum viz_kind k);

void sim_viz_ctl_init(struct sim_viz_ctl *c, double speed);

struct sim_viz;

/* Publish a board for the simulated model. NULL (and a message in err)
 * when the board cannot be made. */
struct sim_viz *simviz_open(struct sim_viz_ctl *ctl, const char *model,
                            const char *options, char *err, size_t err_len);
void simviz_close(struct sim_viz *v);

/* The board's path, for reading it back (sim --viz --record). */
const char *simviz_board_path(const struct sim_viz *v);

void simviz_thread(struct sim_viz *v, uint32_t t, enum viz_role role, const char *name,
                   uint64_t conn);
void simviz_thread_conn(struct sim_viz *v, uint32_t t, uint64_t conn);
void simviz_state(struct sim_viz *v, uint32_t t, enum viz_state st);
void simviz_thread_end(struct sim_viz *v, uint32_t t);
void simviz_lines(struct sim_viz *v, uint32_t t, uint64_t n);

void simviz_count(struct sim_viz *v, enum viz_counter c, int64_t delta);
void simviz_latency(struct sim_viz *v, uint64_t ns);
void simviz_event(struct sim_viz *v, enum viz_event kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Loops: a slot per loop; its channel count; stuck in a handler or not. */
int simviz_loop(struct sim_viz *v, const char *name);
void simviz_loop_channels(struct sim_viz *v, int loop, uint64_t channels);
void simviz_loop_blocked(struct sim_viz *v, int loop, bool blocked);
void simviz_loop_waiting(struct sim_viz *v, int loop, bool waiting);
/* The loop's simulated CPU so far, on I/O and on tasks (the io/task split). */
void simviz_loop_time(struct sim_viz *v, int loop, uint64_t io_ns, uint64_t task_ns);

/* Before the event at virtual time `at` (described by desc): wait until
 * its time has come at the chosen speed, or while paused. False: quit. */
bool simviz_pace(struct sim_viz *v, vtime_t at, uint64_t events, const char *desc);

/* The run is over: say so, keep the board for the screen. */
void simviz_finish(struct sim_viz *v);

/* Before a run again from the seed (a step back): a fresh board, same
 * place, the kinds counted from zero. Returns false when the board cannot
 * be made again. */
bool simviz_reset(struct sim_viz *v);

#endif
