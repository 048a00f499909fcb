/* probe.h -- the one seam between a server's mechanism and its board.
 *
 * The files students read (conn.c, acceptor.c, pool.c, loop.c, channel.c,
 * loopserver.c: the "hearts") say what happened, one call per event, named
 * for the event: probe_accepted, probe_blocked, probe_wrote, probe_grew.
 * What the board makes of it (which counters, which thread state, the
 * event's text) is decided here, so that a heart reads as its mechanism
 * and the instruments can change without touching it (tests/arch refuses
 * a board_ call in a heart). The loop's and the pool's probes, with the
 * counters they keep, are probe_loop.h and probe_pool.h.
 *
 * Cost: what was there before, no more. The calls that run per read or
 * per state change are static inline, each the board_* stores it stood
 * for; the ones that format an event's text are in probe.c (events are
 * rare: an accept, a refusal, an error). No probe call takes a lock,
 * reads the clock or makes a system call of its own.
 *
 * Every function: any thread, for its own board_thread_ref (a ref is one
 * thread's, board.h); b may be NULL (publishing off).
 */
#ifndef THREADLAB_PROBE_H
#define THREADLAB_PROBE_H

#include <stdbool.h>
#include <stdint.h>

#include "board.h"
#include "echo/session.h"

/* ---- a thread's life ---- */

/* The calling thread begins, as role and name, on the board. */
static inline void probe_thread_began(struct board *b, struct board_thread_ref *t,
                                      enum board_role role, const char *name)
{
    board_thread_begin(b, t, role, name, 0);
}

static inline void probe_thread_ended(struct board *b, struct board_thread_ref *t)
{
    board_thread_end(b, t);
}

/* ---- what a thread is doing ---- */

/* It waits for work: poll, epoll_wait, a condition. */
static inline void probe_waiting(struct board *b, struct board_thread_ref *t)
{
    board_thread_state(b, t, STATE_WAITING);
}

/* Its wait ended: it runs. */
static inline void probe_woke(struct board *b, struct board_thread_ref *t)
{
    board_thread_state(b, t, STATE_RUNNING);
}

/* A pool thread between tasks. */
static inline void probe_idle(struct board *b, struct board_thread_ref *t)
{
    board_thread_state(b, t, STATE_IDLE);
}

/* It may block in read() (or a lingering close) on its connection. */
static inline void probe_blocked(struct board *b, struct board_thread_ref *t)
{
    board_thread_state(b, t, STATE_BLOCKED_IO);
}

/* It blocks in !sleep. */
static inline void probe_sleeping(struct board *b, struct board_thread_ref *t)
{
    board_thread_state(b, t, STATE_BLOCKED_SLEEP);
}

/* Its block (read, !sleep) ended: it runs. */
static inline void probe_unblocked(struct board *b, struct board_thread_ref *t)
{
    board_thread_state(b, t, STATE_RUNNING);
}

/* The same, with the clock already read at at_ns (read()'s return). */
static inline void probe_unblocked_at(struct board *b, struct board_thread_ref *t,
                                      uint64_t at_ns)
{
    board_thread_state_at(b, t, STATE_RUNNING, at_ns);
}

/* A pool thread took a task serving connection conn (0: none). */
static inline void probe_task_began(struct board *b, struct board_thread_ref *t,
                                    uint64_t conn)
{
    board_thread_conn(b, t, conn);
    board_thread_state(b, t, STATE_RUNNING);
}

/* ---- lines and bytes ---- */

/* A line was answered with an error: counted by kind. Per line, so
 * inline: one compare for a line without error. */
static inline void probe_line_failed(struct board *b, enum echo_error error)
{
    if (error == ECHO_ERROR_BAD_ARGUMENT)
        board_add(b, CTR_ERR_BAD_ARGUMENT, 1);
    if (error == ECHO_ERROR_LINE_TOO_LONG)
        board_add(b, CTR_ERR_LINE_TOO_LONG, 1);
}

/* One read answered: bytes_in read, lines answered, their replies
 * (bytes_out) written. Once per read, not per line: with pipelined lines
 * that keeps shared cache lines out of the hot path. */
static inline void probe_wrote(struct board *b, struct board_thread_ref *t,
                               uint64_t bytes_in, uint64_t bytes_out, uint64_t lines)
{
    board_add(b, CTR_BYTES_IN, bytes_in);
    board_add(b, CTR_BYTES_OUT, bytes_out);
    board_add(b, CTR_LINES, lines);
    board_thread_lines(b, t, lines);
    board_thread_bytes(b, t, bytes_in, bytes_out);
}

/* ---- connections ---- */

/* Connection id was accepted (the event says so). */
void probe_accepted(struct board *b, uint64_t id);

/* Connection id was accepted by a boss and goes to worker, index (from 1)
 * of workers, by round robin. */
void probe_assigned(struct board *b, uint64_t id, const char *worker, int index,
                    int workers);

/* accept() failed with err. spare_took_it: say that the spare fd took
 * the connection and closed it with "!err busy" (the blocking acceptor,
 * for EMFILE and ENFILE; the loop server's boss logs the failure plain). */
void probe_accept_failed(struct board *b, int err, bool spare_took_it);

/* Connection id was refused ("!err busy"): counted, and with a reason
 * (why, or NULL when the event was said already) an event. */
void probe_rejected(struct board *b, uint64_t id, const char *why);

/* Connection id goes over --max-conns (max): it will be refused, and the
 * event says why (the channel that refuses it counts it:
 * probe_channel_refused). */
void probe_over_limit(struct board *b, uint64_t id, int max);

/* Connection id's hand-off to worker failed (err): it is closed unserved. */
void probe_handoff_failed(struct board *b, uint64_t id, const char *worker, int err);

/* Refusing connection id, the acceptor had lingering refusals lingering
 * already, its most: the oldest was closed early. */
void probe_refusal_cut_short(struct board *b, uint64_t id, int lingering);

/* A connection is open and served (the board's active count). */
static inline void probe_conn_opened(struct board *b)
{
    board_add(b, CTR_ACTIVE, 1);
}

/* An opened connection found nobody to serve it after all (it is
 * refused): no longer active. */
static inline void probe_conn_unserved(struct board *b)
{
    board_sub(b, CTR_ACTIVE, 1);
}

/* Connection id ended (why: end; during a stop: stopping) after lines
 * lines: counted, and an event saying why. */
static inline void probe_conn_ended(struct board *b, uint64_t id, enum echo_end end,
                                    bool stopping, uint64_t lines)
{
    board_conn_ended(b, id, end, stopping, lines);
}

/* ---- the server ---- */

/* The server began a graceful stop: the board's closing flag. */
static inline void probe_stopping(struct board *b)
{
    board_mark_closing(b);
}

/* The server is gone: its board is closed (every writer has ended). */
static inline void probe_closed(struct board *b)
{
    board_close(b);
}

#endif
