/* channel_close.c -- how a channel ends: closed at once (a reset, an
 * error, a timeout, the stop's hard timeout, no memory), or, after a last
 * reply that the client must read (!quit, a line too long, refused, a
 * stop), by a lingering close. See channel.c for the states, and
 * inside_channel.h for how the files of a channel call each other.
 */
#include "inside_channel.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/net.h"

void channel_free(struct channel *ch)
{
    echo_session_free(&ch->session);
    outbuf_free(&ch->out);
    free(ch);
}

/* Bring this channel's share of the loop's backlog (output not yet
 * written, paused or not) up to date, and publish the totals on the
 * loop's board slot: after every write (react_to_output) and at the end,
 * so the board shows backpressure as it builds, per loop. */
void count_backlog(struct channel *ch, size_t pending, bool paused)
{
    struct channel_backlog *bl = ch->host->backlog;
    if (!bl)
        return;
    bl->pending_bytes += pending;
    bl->pending_bytes -= ch->pending_counted;
    ch->pending_counted = pending;
    if (paused != ch->paused_counted) {
        bl->paused += paused ? 1 : (uint64_t)-1;
        ch->paused_counted = paused;
    }
    struct board_loop *slot = loop_slot_on_board(ch->loop);
    if (slot) {
        atomic_store_explicit(&slot->out_pending_bytes, bl->pending_bytes,
                              memory_order_relaxed);
        atomic_store_explicit(&slot->channels_paused, bl->paused, memory_order_relaxed);
    }
}

/* Close the fd and tell the model. The channel is freed here, or, if a
 * line of it is still away (business pool, task queue), when that line
 * comes back. */
void channel_end(struct channel *ch, enum echo_end end)
{
    const struct channel_host *h = ch->host;
    if (ch->state == CHANNEL_CLOSED)
        return;
    if (ch->linger_timer) {
        loop_timer_cancel(ch->linger_timer);
        ch->linger_timer = NULL;
    }
    if (ch->deadline_timer) {
        loop_timer_cancel(ch->deadline_timer);
        ch->deadline_timer = NULL;
    }
    loop_watch_remove(ch->loop, &ch->watch);
    close(ch->watch.fd);
    ch->watch.fd = -1;
    loop_channels_add(ch->loop, -1);
    count_backlog(ch, 0, false);
    board_conn_ended(h->board, ch->id, end, h->stopping && h->stopping(h->host_arg),
                     ch->lines);
    h->on_closed(ch, h->host_arg);
    if (ch->state == CHANNEL_OFFLOADED)
        ch->state = CHANNEL_CLOSED;     /* the line's return frees it */
    else
        channel_free(ch);
}

/* A hang-up or an error is a reset, as a rule. The socket's pending
 * error says which, for the board. */
void end_on_socket_error(struct channel *ch)
{
    int err = 0;
    socklen_t len = sizeof(err);
    getsockopt(ch->watch.fd, SOL_SOCKET, SO_ERROR, &err, &len);
    channel_end(ch, err == 0 || err == ECONNRESET || err == EPIPE ? ECHO_END_RESET
                                                                  : ECHO_END_IO_ERROR);
}

/* Lingering: read and drop what the client still sends (one read budget
 * per wakeup, like any channel); its EOF or a reset ends the linger. */
void drain_lingering(struct channel *ch)
{
    char sink[4096];
    size_t allowance = CHANNEL_READ_BUDGET_BYTES;
    ssize_t n = -EAGAIN;
    while (allowance > 0 && (n = net_read(ch->watch.fd, sink, sizeof(sink))) > 0)
        allowance -= (size_t)n < allowance ? (size_t)n : allowance;
    if (allowance > 0 && n != -EAGAIN)
        channel_end(ch, ch->linger_end);
}

static void linger_expired(void *arg)
{
    struct channel *ch = arg;
    loop_timer_release(ch->linger_timer);
    ch->linger_timer = NULL;
    if (net_peer_took_output(ch->watch.fd, &ch->linger_unacked) &&
        ++ch->linger_periods < NET_LINGER_MAX_PERIODS) {
        /* Still reading our replies, slowly: a close now could reset them
         * away. Give it another linger_ms. */
        ch->linger_timer = loop_schedule(ch->loop, (uint64_t)ch->host->linger_ms,
                                         linger_expired, ch);
        if (ch->linger_timer)
            return;
    }
    channel_end(ch, ch->linger_end);
}

/* The reply before a close is out: shut our side, keep reading and
 * dropping the client's bytes until it closes too, or until linger_ms pass
 * in which it took none of our output, so the reply is not destroyed by a
 * reset (nginx's lingering close). Returns false if the channel ended (no
 * memory for the timer that bounds the linger: it closes at once). */
bool start_lingering(struct channel *ch)
{
    ch->state = CHANNEL_LINGERING;
    shutdown(ch->watch.fd, SHUT_WR);
    ch->linger_unacked = SIZE_MAX;
    net_peer_took_output(ch->watch.fd, &ch->linger_unacked);
    ch->linger_timer = loop_schedule(ch->loop, (uint64_t)ch->host->linger_ms,
                                     linger_expired, ch);
    if (!ch->linger_timer) {
        channel_end(ch, ch->linger_end);
        return false;
    }
    return true;
}
