/* inside_channel.h -- inside a channel: what its files give each other.
 * Only models/reactive/ includes it; everyone else sees channel.h.
 *
 * One channel, one file per subject, each calling only the files below it:
 *
 *   channel.c          a wakeup: read, answer, write; open, refuse, stop
 *     offload.c        a slow line to the business pool and back (lab 04)
 *     deadlines.c      the idle, line and stall timeouts (lab 05)
 *   channel_lines.c    answer the lines read, under the wakeup's budget;
 *                      a !task line queued on the loop
 *   channel_output.c   write the replies; backpressure (the water marks)
 *   channel_close.c    close now, or linger after the last reply
 *   outbuf.c           the output buffer
 *
 * Every function here is called on the channel's loop thread only, the
 * one thread that touches a channel.
 */
#ifndef THREADLAB_INSIDE_CHANNEL_H
#define THREADLAB_INSIDE_CHANNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "channel.h"

/* Where a channel goes when its line comes back from the pool or the task
 * queue, or its output drains: reading again, or, if a stop's bytes are
 * all read, answering what is left. */
static inline enum channel_state input_state(const struct channel *ch)
{
    return ch->read_left == 0 ? CHANNEL_INPUT_ENDED : CHANNEL_OPEN;
}

/* ---- channel_close.c ---- */

/* Close the fd and tell the model; the channel is freed now, or, if a
 * line of it is on the business pool or the task queue, when that line is
 * back (channel_free). */
void channel_end(struct channel *ch, enum echo_end end);
void channel_free(struct channel *ch);

/* The socket reported a hang-up or an error: end it, counted as a reset
 * or an I/O error by its pending error. */
void end_on_socket_error(struct channel *ch);

/* The last reply is out: shut our side and drop what the client still
 * sends until it closes too (or the linger runs out). Returns false if
 * the channel ended. */
bool start_lingering(struct channel *ch);

/* Lingering and readable: read and drop one read budget; EOF or an error
 * ends the channel. */
void drain_lingering(struct channel *ch);

/* This channel's share of its loop's backlog (unsent bytes, paused or
 * not), published on the loop's board slot. */
void count_backlog(struct channel *ch, size_t pending, bool paused);

/* ---- channel_output.c ---- */

/* Queue a reply's bytes for the socket, behind what waits. Returns false
 * when memory ran out (nothing queued). */
bool append_out(struct channel *ch, const char *data, size_t len);

/* Write what the socket takes now. Returns false if the channel ended (a
 * reset or an I/O error). */
bool write_out(struct channel *ch);

/* After a write: pause or resume reading at the water marks, close or
 * linger once the last reply is out (lines_left: the budget ran out with
 * lines still to answer, so not yet), and tell the loop what to watch.
 * Returns false if the channel ended. */
bool react_to_output(struct channel *ch, bool lines_left);

/* ---- channel_lines.c ---- */

/* One wakeup's allowance and what it answered. */
struct batch {
    uint64_t read_ns;            /* the lines answered were read at or after this:
                                  * their latency errs long, never short */
    uint64_t deadline_ns;        /* the handler budget ends */
    uint32_t lines;              /* answered in this wakeup */
    bool spent;                  /* the budget ran out: come back for the rest */
};

/* A wakeup's allowance starts (lines read at or after read_ns, or now). */
void batch_begin(struct batch *b, uint64_t read_ns, uint64_t now);

/* Count a reply's lines; the budget is spent at CHANNEL_LINES_PER_WAKEUP
 * lines or at the handler deadline (the clock is read here, once per
 * reply). */
void batch_count(struct batch *b, uint32_t lines);

/* Answer the complete lines received, in order, while the state answers
 * lines and the batch's budget lasts. A line with work goes to
 * ch->hand_off if there is one, a !task to the loop's task queue; either
 * way the lines behind it wait. Returns false if the channel ended (it
 * may be freed: do not touch it). */
bool answer_lines(struct channel *ch, struct batch *b);

/* The wakeup's end: start or stop the line clock, write, count the
 * batch's lines on the board, ask the loop to come back if the budget ran
 * out, then react_to_output. Returns false if the channel ended. */
bool finish_wakeup(struct channel *ch, struct batch *b);

/* ---- offload.c ---- */

/* Hand a !cpu, !sleep or !who line to the business pool; its reply comes
 * back on this loop. Returns false if the pool refused it or memory ran
 * out (the line then gets "!err busy"). channel_open makes it the
 * channel's ch->hand_off when the model has a business pool. */
bool offload(struct channel *ch, const struct echo_reply *r, uint64_t read_ns);

/* ---- deadlines.c ---- */

/* Set the channel's one timer for its next deadline (idle, line, stall).
 * Returns false, the timer unset, when out of memory. */
bool arm_deadline(struct channel *ch, uint64_t now);

#endif
