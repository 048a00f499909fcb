/* channel.c -- a connection's life on its loop, as one state machine. See
 * channel.h; inside_channel.h lists the files below this one (answering,
 * output, closing, offload, deadlines).
 *
 * One wakeup (channel_io_cb):
 *
 *   EPOLLERR, EPOLLHUP  --> lingering: read to the end; else close now
 *   EPOLLIN, or a resume --> answer the lines already buffered, read more
 *                            (16 KiB at most), answer those ... until the
 *                            budget (1024 lines or 1 ms of handlers) runs
 *                            out (answer_lines); write what the socket
 *                            takes; lines left? ask the loop to come back
 *                            (finish_wakeup)
 *   EPOLLOUT             --> write; move on if the output drained
 *                            (write_out, react_to_output)
 *
 * The states (memcached's drive_machine: a connection is in one state, and
 * only the transitions below move it):
 *
 *                 output above high water
 *      +--------+ ----------------------> +--------+
 *      |  OPEN  |                         | PAUSED |
 *      |        | <---------------------- |        |
 *      +--------+  output below low water +--------+
 *       | |   ^                             |   |
 *       | |   | the line is back            |   | the stop, nothing held
 *       | |   |                             |   v
 *       | |  +-----------+   a reset   +--------+   +-------------+
 *       | +->| OFFLOADED |-----------> | CLOSED |   | INPUT_ENDED |
 *       |    +-----------+  (EPOLLERR, +--------+   +-------------+
 *       |     !cpu/!sleep    EPOLLHUP)  freed when    ^   |    |
 *       |     with --offload,           the line      |   |    | flushed,
 *       |     or !task                  is back       |   |    | after EOF
 *       +---- EOF, or the stop's bytes all read ------+   |    v
 *       |                                                 |  (closed)
 *       |                     flushed, after a stop       |
 *       |    +-----------+ <------------------------------+
 *       |    | LINGERING | --- EOF, a reset, the linger timer ---> (closed)
 *       |    +-----------+
 *       |          ^ flushed
 *       |    +-----------+
 *       +--->|  CLOSING  |  !quit, a line too long (also from PAUSED and
 *            +-----------+  INPUT_ENDED), or refused (--max-conns)
 *
 *   OPEN         reads, answers lines, writes
 *   PAUSED       answers what is buffered, writes; reads nothing
 *   OFFLOADED    waits for the business pool, or for its !task to run in
 *                the loop's task phase: reads nothing, answers
 *                nothing (later lines keep their order); back to OPEN, or
 *                to INPUT_ENDED if a stop's bytes are all read already
 *   INPUT_ENDED  answers what is buffered (a !cpu/!sleep line there goes to
 *                OFFLOADED like any other), writes, then closes (EOF) or
 *                lingers (a stop: the client may still be sending)
 *   CLOSING      writes the last reply, then lingers
 *   LINGERING    write side shut; reads and drops until EOF or the timer
 *   CLOSED       fd closed, the channel kept for its offloaded line
 *
 * In every state but CLOSED: EPOLLHUP or EPOLLERR (a reset), a read or
 * write error, a timeout, the stop's hard timeout, or running out of
 * memory closes the channel at once. A hang-up ends LINGERING as its EOF
 * does. No state ignores a hang-up: one that did (say OFFLOADED, which
 * watches no input) would be woken for it by epoll on every iteration.
 */
#include "inside_channel.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "net/net.h"
#include "net/clock.h"

/* One read into the session, within the wakeup's allowance and a stop's
 * count. A read that got less than it asked for emptied the socket, so the
 * wakeup does not pay a read just to hear EAGAIN (Netty stops reading on a
 * short read too); epoll says when more comes. EOF and the last of a
 * stop's bytes end the input (CHANNEL_INPUT_ENDED). */
enum read_result {
    READ_ENDED = -1,  /* the channel ended (it is freed: do not touch it) */
    READ_NOTHING,     /* no bytes, and none to read now (EAGAIN, EOF, no room) */
    READ_DRAINED,     /* bytes came, and the socket has no more for now */
    READ_MORE,        /* bytes came, and more may wait */
};

static enum read_result read_some(struct channel *ch, size_t *allowance)
{
    size_t room;
    char *buf = echo_session_space(&ch->session, &room);
    if (!buf) {
        channel_end(ch, ECHO_END_NO_MEMORY);
        return READ_ENDED;
    }
    size_t want = room < *allowance ? room : *allowance;
    if (ch->read_left < want)
        want = ch->read_left;
    if (want == 0)                    /* a line too long is decided first */
        return READ_NOTHING;
    ssize_t n = net_read(ch->watch.fd, buf, want);
    if (n == -EAGAIN)
        return READ_NOTHING;
    if (n < 0) {
        channel_end(ch, n == -ECONNRESET ? ECHO_END_RESET : ECHO_END_IO_ERROR);
        return READ_ENDED;
    }
    if (n == 0) {
        ch->state = CHANNEL_INPUT_ENDED;  /* half-close: still answer what came */
        return READ_NOTHING;
    }
    echo_session_commit(&ch->session, (size_t)n);
    probe_channel_read(loop_probe_of(ch->loop), (uint64_t)n);
    *allowance -= (size_t)n;
    if (ch->read_left != SIZE_MAX && (ch->read_left -= (size_t)n) == 0)
        ch->state = CHANNEL_INPUT_ENDED;  /* all that came before the stop */
    ch->last_read_ns = now_ns();
    return (size_t)n < want ? READ_DRAINED : READ_MORE;
}

/* Is a stop's hard timeout past? Its force-close task may still wait
 * behind other channels' wakeups; a channel that began another line now
 * would hold the stop back by that line. */
static bool past_stop_deadline(const struct channel *ch, uint64_t now)
{
    const struct channel_host *h = ch->host;
    uint64_t deadline = h->stop_deadline_ns ? h->stop_deadline_ns(h->host_arg) : 0;
    return deadline != 0 && now >= deadline;
}

/* Readable, or resumed: answer what is buffered, read, answer, until the
 * budget or the input runs out. */
static void on_input(struct channel *ch)
{
    if (ch->state == CHANNEL_LINGERING) {
        drain_lingering(ch);
        return;
    }
    uint64_t now = now_ns();
    if (past_stop_deadline(ch, now)) {
        channel_end(ch, ECHO_END_STOPPED);
        return;
    }
    struct batch b;
    batch_begin(&b, ch->unanswered_since_ns, now);
    ch->unanswered_since_ns = 0;
    size_t allowance = CHANNEL_READ_BUDGET_BYTES;
    enum read_result got = READ_MORE;
    for (;;) {
        if (!answer_lines(ch, &b))
            return;                   /* ended (and freed) while answering */
        if (b.spent || ch->state != CHANNEL_OPEN || got != READ_MORE)
            break;
        got = read_some(ch, &allowance);
        if (got == READ_ENDED)
            return;
        if (got == READ_NOTHING && ch->state == CHANNEL_OPEN)
            break;                    /* nothing more for now */
    }
    finish_wakeup(ch, &b);
}

static void channel_io_cb(void *arg, uint32_t events)
{
    struct channel *ch = arg;
    if (events & (EPOLLERR | EPOLLHUP)) {
        /* A reset (or our SHUT_WR and the client's FIN, when lingering).
         * Epoll reports these whatever we watch, so every state must end
         * on them, or the loop is woken for them again and again. */
        if (ch->state == CHANNEL_LINGERING)
            drain_lingering(ch);
        else
            end_on_socket_error(ch);
        return;
    }
    if (events & (EPOLLIN | LOOP_EV_RESUME)) {
        on_input(ch);                 /* writes too, at its end */
        return;
    }
    if ((events & EPOLLOUT) && write_out(ch))
        react_to_output(ch, false);
}

/* ---- opening and stopping --------------------------------------------------- */

struct channel *channel_open(struct loop *l, int fd, uint64_t id,
                             const struct channel_host *host)
{
    struct channel *ch = calloc(1, sizeof(*ch));
    if (!ch || echo_session_init(&ch->session, host->model, id, host->max_line) < 0)
        goto out_free;
    net_set_nonblocking(fd, true);
    ch->loop = l;
    ch->id = id;
    ch->host = host;
    ch->state = CHANNEL_OPEN;
    ch->linger_end = ECHO_END_QUIT;
    ch->read_left = SIZE_MAX;
    ch->hand_off = host->business ? offload : NULL;
    ch->watch = (struct loop_watch){ .fd = fd, .events = EPOLLIN, .cb = channel_io_cb,
                                     .arg = ch };
    ch->last_read_ns = ch->last_drain_ns = now_ns();
    if ((host->idle_timeout_ms > 0 || host->line_timeout_ms > 0 ||
         host->stall_timeout_ms > 0) && !arm_deadline(ch, ch->last_read_ns))
        goto out_free_session;
    if (loop_watch_add(l, &ch->watch) < 0)
        goto out_cancel_timer;
    probe_channel_opened(loop_probe_of(l));
    return ch;

out_cancel_timer:
    if (ch->deadline_timer)
        loop_timer_cancel(ch->deadline_timer);
out_free_session:
    echo_session_free(&ch->session);
out_free:
    free(ch);
    close(fd);
    return NULL;
}

void channel_refuse(struct channel *ch)
{
    ch->state = CHANNEL_CLOSING;       /* read no requests; linger after the reply */
    ch->linger_end = ECHO_END_REFUSED;
    probe_channel_refused(loop_probe_of(ch->loop));
    if (!append_out(ch, ECHO_ERR_BUSY, sizeof(ECHO_ERR_BUSY) - 1)) {
        channel_end(ch, ECHO_END_NO_MEMORY);
        return;
    }
    if (write_out(ch))
        react_to_output(ch, false);
}

void channel_stop_reading(struct channel *ch)
{
    if (ch->state != CHANNEL_OPEN && ch->state != CHANNEL_PAUSED &&
        ch->state != CHANNEL_OFFLOADED)
        return;                        /* its input has ended, or it is closing */
    /* Count what the kernel holds now: that much is read and answered
     * (later, if the channel waits for an offload or for its output to
     * drain), and nothing after it. No shutdown(SHUT_RD): the lingering
     * close needs to see the client's own EOF. */
    ch->read_left = net_bytes_held(ch->watch.fd);
    if (ch->state == CHANNEL_OFFLOADED)
        return;                        /* the line's return goes on from here */
    if (ch->read_left == 0)
        ch->state = CHANNEL_INPUT_ENDED;
    /* Answering what is buffered and reading what is held is a wakeup's
     * work, under its budget, in the loop's next I/O phase: done here, in
     * the stop's task, a loop of busy channels would run every one of
     * them before the stop's next task (its hard timeout) got a turn. */
    loop_watch_resume(ch->loop, &ch->watch);
}

void channel_close_now(struct channel *ch)
{
    channel_end(ch, ECHO_END_STOPPED);
}
