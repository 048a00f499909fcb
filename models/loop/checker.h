/* checker.h -- the blocked-loop checker (Vert.x's blocked-thread-checker).
 *
 * A thread that watches every loop: a loop that has been inside one
 * handler or task for warn_ms is flagged on the board (its slot's
 * blocked_since, an event) and on stderr, with its blast radius: how many
 * connections are on that loop, all waiting. As in Vert.x, the warning
 * repeats every warn_ms while the loop stays stuck (blocked 2.0 s, 4.0 s,
 * ...), and past trace_ms (Vert.x's warningExceptionTime) the stuck
 * thread's stack is printed once. When the handler returns, the flag
 * clears and the checker says how long it ran.
 *
 * Every time comes from the loop's own timestamps, not from when the
 * checker happened to look: the checker sleeps until the moment a warning
 * is due (busy_since + k * warn_ms), so a warning is late only by as much
 * as the scheduler kept the checker thread from a CPU, and it says so;
 * and the "unblocked" length is the one the loop measured around the call
 * (loop__last_long_handler).
 *
 * The stack: the checker sends CHECKER_TRACE_SIGNAL to the loop's thread,
 * whose handler writes backtrace_symbols_fd to stderr (async-signal-safe:
 * backtrace() is called once at start, so libgcc is loaded before any
 * signal). Names come from the dynamic symbol table: the binary is linked
 * with -rdynamic; static functions show as offsets.
 */
#ifndef THREADLAB_CHECKER_H
#define THREADLAB_CHECKER_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "loop.h"

#define CHECKER_WARN_MS_DEFAULT 2000   /* Vert.x's maxEventLoopExecuteTime */
#define CHECKER_TRACE_MS_DEFAULT 5000  /* Vert.x's warningExceptionTime */
#define CHECKER_TRACE_SIGNAL SIGUSR2   /* asks a loop thread for its stack */
#define CHECKER_TRACE_FRAMES 64        /* deepest stack printed */
#define CHECKER_TRACE_WAIT_MS 1000     /* longest wait for a thread to print it */

struct loop_checker;

/* What the checker saw, for tests and the curious. The last_* fields are
 * about the most recent episode (one stuck handler). */
struct loop_checker_stats {
    uint64_t episodes;              /* handlers flagged (one per stuck handler) */
    uint64_t warnings;              /* warnings given, repeats included */
    uint64_t traces;                /* stacks printed */
    uint64_t traces_missed;         /* the thread did not print within the wait */
    uint64_t unblocks;              /* flagged handlers seen to return */
    uint64_t last_first_warning_ns; /* how long the handler had run at its first warning */
    uint64_t last_first_late_ns;    /* of which was not the checker's doing: it
                                       woke late (scheduling), or the loop
                                       published the handler's start late */
    uint64_t last_unblocked_ns;     /* its length as the loop measured it; 0: not known */
    uint64_t looks;                 /* passes over the loops so far: a look that
                                       began after an event counts it as seen */
};

/* Watch loops[0..n) (the array is copied). trace_ms: print the stuck
 * thread's stack once it has been stuck this long (0: never). quiet: no
 * stderr, so no stacks either (tests). NULL + errno on failure. Any
 * thread but the loops' own; the checker thread it starts is the only one
 * that reads the loops' busy marks. */
struct loop_checker *loop_checker_start(struct loop **loops, int n, int warn_ms,
                                        int trace_ms, struct board *board, bool quiet);

/* Stop and join the checker thread, free. Before the loops are freed. Any
 * thread but the checker's own. */
void loop_checker_stop(struct loop_checker *c);

/* Copy the checker's figures into out. Any thread. */
void loop_checker_stats(struct loop_checker *c, struct loop_checker_stats *out);

#endif
