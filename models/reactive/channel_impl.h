/* channel_impl.h -- inside a channel: what channel.c, offload.c and
 * deadlines.c give each other. Only models/reactive/ includes it;
 * everyone else sees channel.h.
 *
 * One channel, one file per lesson: channel.c is the state machine (read,
 * answer, write, end), offload.c hands slow lines to the business pool
 * and takes their replies back (lab 04), deadlines.c closes a channel
 * whose timeout passed (lab 05). Every function here is called on the
 * channel's loop thread only, the one thread that touches a channel.
 */
#ifndef THREADLAB_CHANNEL_IMPL_H
#define THREADLAB_CHANNEL_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "channel.h"

/* One wakeup's allowance and what it answered. */
struct batch {
    uint64_t read_ns;            /* the lines answered were read at or after this:
                                  * their latency errs long, never short */
    uint64_t deadline_ns;        /* the handler budget ends */
    uint32_t lines;              /* answered in this wakeup */
    bool spent;                  /* the budget ran out: come back for the rest */
};

/* channel.c: a wakeup's allowance starts (lines read at or after
 * read_ns), and counts what it answered. */
void batch_begin(struct batch *b, uint64_t read_ns, uint64_t now);
void batch_count(struct batch *b, bool did_work, uint32_t lines);

/* channel.c: the state a channel goes back to when a line it waited for
 * is answered: OPEN, or INPUT_ENDED when a stop's bytes are all read. */
enum channel_state input_state(const struct channel *ch);

/* channel.c: queue a reply's bytes for the socket, in order. Returns
 * false when memory ran out. */
bool append_out(struct channel *ch, const char *data, size_t len);

/* channel.c: answer the complete lines received, in order, while the
 * state answers lines and the batch's budget lasts; then decide what to
 * write and what to wait for (settle). Each returns false if the channel
 * ended (it may be freed: do not touch it). */
bool process_lines(struct channel *ch, struct batch *b);
bool settle(struct channel *ch, struct batch *b);

/* channel.c: close the fd and tell the model; the channel is freed now,
 * or, if a line of it is on the business pool, when that line is back
 * (channel_free). */
void channel_end(struct channel *ch, enum echo_end end);
void channel_free(struct channel *ch);

/* offload.c: hand a !cpu, !sleep or !who line to the business pool; its
 * reply comes back on this loop. Returns false if the pool refused it or
 * memory ran out (the line then gets "!err busy"). */
bool offload(struct channel *ch, const struct echo_reply *r, uint64_t read_ns);

/* offload.c: is this reply the session's answer to !who? (A business
 * thread answers an offloaded !who with its own name.) */
bool is_who(const struct channel *ch, const struct echo_reply *r);

/* deadlines.c: set the channel's one timer for its next deadline (idle,
 * line, stall). Returns false, the timer unset, when out of memory. */
bool arm_deadline(struct channel *ch, uint64_t now);

#endif
