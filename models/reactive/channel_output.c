/* channel_output.c -- a channel's replies on their way out: queued in its
 * output buffer (outbuf.c), written as the socket takes them, and the
 * backpressure that follows: above high water the channel stops reading
 * until the output drains below low water (channel.h). See channel.c for
 * the states, and inside_channel.h for how the files of a channel call each
 * other.
 */
#include "inside_channel.h"

#include <errno.h>
#include <sys/epoll.h>

#include "net/clock.h"

size_t channel_pending_output(const struct channel *ch)
{
    return outbuf_pending(&ch->out);
}

bool append_out(struct channel *ch, const char *data, size_t len)
{
    /* The stall clock runs while output waits: it starts when the first
     * byte queues behind an empty output. */
    if (channel_pending_output(ch) == 0)
        ch->last_drain_ns = now_ns();
    return outbuf_append(&ch->out, data, len);
}

bool write_out(struct channel *ch)
{
    ssize_t n = outbuf_write(&ch->out, ch->watch.fd);
    if (n < 0 && n != -EAGAIN) {
        channel_end(ch, n == -ECONNRESET || n == -EPIPE ? ECHO_END_RESET
                                                         : ECHO_END_IO_ERROR);
        return false;
    }
    if (n > 0) {
        ch->last_drain_ns = now_ns();
        board_add(ch->host->board, CTR_BYTES_OUT, (uint64_t)n);
        board_thread_bytes(ch->host->board, loop_thread_on_board(ch->loop), 0, (uint64_t)n);
    }
    return true;
}

/* What the loop watches: input in the states that read, output while
 * some waits. Returns false if the channel ended. */
static bool watch_for(struct channel *ch, size_t pending)
{
    uint32_t events = 0;
    if (ch->state == CHANNEL_OPEN || ch->state == CHANNEL_LINGERING)
        events |= EPOLLIN;
    if (pending > 0)
        events |= EPOLLOUT;
    if (loop_watch_modify(ch->loop, &ch->watch, events) < 0) {
        channel_end(ch, ECHO_END_IO_ERROR);
        return false;
    }
    return true;
}

bool react_to_output(struct channel *ch, bool lines_left)
{
    size_t pending = channel_pending_output(ch);
    switch (ch->state) {
    case CHANNEL_OPEN:
        if (pending > ch->host->high_water)
            ch->state = CHANNEL_PAUSED;
        break;
    case CHANNEL_PAUSED:
        if (pending <= ch->host->low_water) {
            ch->state = input_state(ch);
            if (ch->state == CHANNEL_INPUT_ENDED)
                return react_to_output(ch, lines_left);
        }
        break;
    case CHANNEL_INPUT_ENDED:
        if (pending > 0 || lines_left)
            break;
        if (ch->read_left == 0) {     /* a stop's bytes: the client may still send */
            ch->linger_end = ECHO_END_EOF;
            if (!start_lingering(ch))
                return false;
            break;
        }
        channel_end(ch, ECHO_END_EOF);
        return false;
    case CHANNEL_CLOSING:
        if (pending == 0 && !start_lingering(ch))
            return false;
        break;
    case CHANNEL_OFFLOADED:
    case CHANNEL_LINGERING:
    case CHANNEL_CLOSED:
        break;
    }
    count_backlog(ch, pending, ch->state == CHANNEL_PAUSED);
    return watch_for(ch, pending);
}
