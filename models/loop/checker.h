/* checker.h -- the blocked-loop checker (Vert.x's blocked-thread-checker).
 *
 * A thread that looks at every loop a few times a second: a loop that has
 * been inside one handler or task for longer than warn_ms is flagged on the
 * board (its slot's blocked_since, an event) and on stderr, with its blast
 * radius: how many connections are on that loop, all waiting. When the
 * handler returns, the flag clears and the checker says for how long the
 * loop was stuck.
 */
#ifndef THREADLAB_CHECKER_H
#define THREADLAB_CHECKER_H

#include <stdbool.h>
#include <stdint.h>

#include "loop.h"

#define CHECKER_WARN_MS_DEFAULT 2000   /* as Vert.x */

struct loop_checker;

/* Watch loops[0..n) (the array is copied). quiet: no stderr (tests).
 * NULL + errno on failure. */
struct loop_checker *loop_checker_start(struct loop **loops, int n,
                                        int warn_ms, struct board *board,
                                        bool quiet);

/* Stop and join the checker thread, free. Before the loops are freed. */
void loop_checker_stop(struct loop_checker *c);

/* Warnings given so far (episodes of a blocked loop). Any thread. */
uint64_t loop_checker_warnings(struct loop_checker *c);

#endif
