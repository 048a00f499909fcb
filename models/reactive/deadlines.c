/* deadlines.c -- a channel's timeouts: idle, a line never finished, output
 * that stalls (lab 05). See channel.h for what each closes, and
 * inside_channel.h for the files below this one, which it calls.
 */
#include "inside_channel.h"
#include "net/clock.h"

/* ---- timeouts (Netty's IdleStateHandler, done lazily) ------------------------ *
 * One timer per channel, re-armed only when it fires: reads and writes just
 * note the time, and the timer, when it fires, decides whether a deadline
 * really passed or when to look again. */

static void check_deadlines(void *arg);

static uint64_t ms_ns(int ms) { return (uint64_t)ms * 1000000u; }

/* The earliest moment a timeout could pass, or 0 for none. */
static uint64_t next_deadline(const struct channel *ch)
{
    const struct channel_host *h = ch->host;
    uint64_t next = 0;
#define EARLIEST(t) do { uint64_t t_ = (t); if (!next || t_ < next) next = t_; } while (0)
    if (h->idle_timeout_ms > 0)
        EARLIEST(ch->last_read_ns + ms_ns(h->idle_timeout_ms));
    if (h->line_timeout_ms > 0 && ch->partial_since_ns)
        EARLIEST(ch->partial_since_ns + ms_ns(h->line_timeout_ms));
    if (h->stall_timeout_ms > 0 && channel_pending_output(ch) > 0)
        EARLIEST(ch->last_drain_ns + ms_ns(h->stall_timeout_ms));
#undef EARLIEST
    return next;
}

/* Set the timer for the next deadline. Returns false, the timer unset,
 * when out of memory. */
bool arm_deadline(struct channel *ch, uint64_t now)
{
    uint64_t when = next_deadline(ch);
    if (!when || when <= now) {
        /* Nothing to watch now, or a deadline already past that
         * check_deadlines left alone (a lingering or offloaded channel is
         * not judged): look again after the shortest timeout. At once
         * would fire the timer every iteration, a loop at 100% CPU for as
         * long as an offloaded line works. */
        const struct channel_host *h = ch->host;
        int ms = h->idle_timeout_ms ? h->idle_timeout_ms
               : h->line_timeout_ms ? h->line_timeout_ms : h->stall_timeout_ms;
        when = now + ms_ns(ms);
    }
    uint64_t delay_ms = when > now ? (when - now + 999999) / 1000000 : 0;
    ch->deadline_timer = loop_schedule(ch->loop, delay_ms, check_deadlines, ch);
    return ch->deadline_timer != NULL;
}

/* Re-arm from the timer itself; a channel whose timeouts can no longer be
 * watched is closed rather than left unwatched. */
static void rearm_deadline(struct channel *ch, uint64_t now)
{
    if (!arm_deadline(ch, now))
        channel_end(ch, ECHO_END_NO_MEMORY);
}

static void check_deadlines(void *arg)
{
    struct channel *ch = arg;
    const struct channel_host *h = ch->host;
    uint64_t now = now_ns();
    loop_timer_release(ch->deadline_timer);
    ch->deadline_timer = NULL;
    if (ch->state == CHANNEL_LINGERING || ch->state == CHANNEL_OFFLOADED) {
        rearm_deadline(ch, now);   /* closing already, or the pool has it */
        return;
    }
    if (h->stall_timeout_ms > 0 && channel_pending_output(ch) > 0 &&
        now >= ch->last_drain_ns + ms_ns(h->stall_timeout_ms)) {
        channel_end(ch, ECHO_END_STALLED);
        return;
    }
    if (h->line_timeout_ms > 0 && ch->partial_since_ns &&
        now >= ch->partial_since_ns + ms_ns(h->line_timeout_ms)) {
        channel_end(ch, ECHO_END_LINE_TIMEOUT);
        return;
    }
    if (h->idle_timeout_ms > 0 && now >= ch->last_read_ns + ms_ns(h->idle_timeout_ms)) {
        channel_end(ch, ECHO_END_IDLE);
        return;
    }
    rearm_deadline(ch, now);
}
