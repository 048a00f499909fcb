/* channel.c -- a connection's life on its loop, as one state machine. See
 * channel.h.
 *
 * One wakeup (channel_io_cb):
 *
 *   EPOLLERR, EPOLLHUP  --> lingering: read to the end; else close now
 *   EPOLLIN, or a resume --> answer the lines already buffered, read more
 *                            (16 KiB at most), answer those ... until the
 *                            budget (1024 lines or 1 ms of handlers) runs
 *                            out; write what the socket takes; lines left?
 *                            ask the loop to come back (loop_watch_resume)
 *   EPOLLOUT             --> write; move on if the output drained
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
 * does. No state ignores a hang-up: one that did (the old OFFLOADED, with
 * EPOLLIN dropped) would be woken for it by epoll on every iteration.
 */
#include "channel_impl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/net.h"
#include "loop/promise.h"
#include "net/clock.h"


/* ---- the budget (Netty's maxMessagesPerRead, Redis's per-client fairness) ---- */

void batch_begin(struct batch *b, uint64_t read_ns, uint64_t now)
{
    *b = (struct batch){ .read_ns = read_ns ? read_ns : now,
                         .deadline_ns = now + CHANNEL_HANDLER_BUDGET_US * 1000ull };
}

/* Count lines answered. The clock is read every CHANNEL_LINES_PER_CLOCK
 * lines, and after a line that did work, which costs far more than the
 * read: a run of plain lines pays an add and two compares. */
void batch_count(struct batch *b, bool did_work, uint32_t lines)
{
    b->lines += lines;
    if (b->lines >= CHANNEL_LINES_PER_WAKEUP ||
        ((did_work || b->lines % CHANNEL_LINES_PER_CLOCK == 0) &&
         now_ns() >= b->deadline_ns))
        b->spent = true;
}

/* The most lines the next reply may hold: a run of plain lines ends where
 * the clock is to be read, so that no run steps over a reading. */
static uint32_t batch_room(const struct batch *b)
{
    return CHANNEL_LINES_PER_CLOCK - b->lines % CHANNEL_LINES_PER_CLOCK;
}

/* ---- states ----------------------------------------------------------------- */

static bool answers_lines(const struct channel *ch)
{
    return ch->state == CHANNEL_OPEN || ch->state == CHANNEL_PAUSED ||
           ch->state == CHANNEL_INPUT_ENDED;
}

/* Where a channel goes when its line comes back from the pool, or its
 * output drains: reading again, or, if a stop's bytes are all read,
 * answering what is left. */
enum channel_state input_state(const struct channel *ch)
{
    return ch->read_left == 0 ? CHANNEL_INPUT_ENDED : CHANNEL_OPEN;
}

/* ---- ending ----------------------------------------------------------------- */

void channel_free(struct channel *ch)
{
    echo_session_free(&ch->session);
    free(ch->out);
    free(ch);
}

/* Bring this channel's share of the loop's backlog (output not yet
 * written, paused or not) up to date, and publish the totals on the
 * loop's board slot: after every write decision (update) and at the end,
 * so the board shows backpressure as it builds, per loop. */
static void count_backlog(struct channel *ch, size_t pending, bool paused)
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
    struct board_loop *slot = loop_board_slot(ch->loop);
    if (slot) {
        atomic_store_explicit(&slot->out_pending_bytes, bl->pending_bytes,
                              memory_order_relaxed);
        atomic_store_explicit(&slot->channels_paused, bl->paused, memory_order_relaxed);
    }
}

/* Close the fd and tell the model. The channel is freed here, or, if a
 * line of it is still on the business pool, when that line comes back. */
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
        ch->state = CHANNEL_CLOSED;     /* offload_done frees it */
    else
        channel_free(ch);
}

/* The socket reported a hang-up or an error: a reset, as a rule. Its
 * pending error says which, for the board. */
static void end_on_socket_error(struct channel *ch)
{
    int err = 0;
    socklen_t len = sizeof(err);
    getsockopt(ch->watch.fd, SOL_SOCKET, SO_ERROR, &err, &len);
    channel_end(ch, err == 0 || err == ECONNRESET || err == EPIPE ? ECHO_END_RESET
                                                                  : ECHO_END_IO_ERROR);
}

/* Lingering: read and drop what the client still sends (one read budget
 * per wakeup, like any channel); its EOF or a reset ends the linger. */
static void drain_lingering(struct channel *ch)
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
static bool start_lingering(struct channel *ch)
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

/* ---- output ----------------------------------------------------------------- */

/* Replies leave in order: first out[off, len), bytes copied there, then
 * the span, replies not copied at all. Most replies are the request line
 * itself, lying in the session's input buffer, and a read's lines lie side
 * by side there: its echoes are one span, written with what is in out[] by
 * one sendmsg, and copied only if the socket does not take them all. The
 * input buffer is reused by the next read, so a span never outlives a
 * flush or a read (keep_span). As the blocking models' batched sendmsg,
 * this saves the copy of every reply (docs/performance.md). */

size_t channel_pending_output(const struct channel *ch)
{
    return ch->out_len - ch->out_off + ch->span_len;
}

/* Copy bytes behind out[]. Returns false when out of memory (nothing
 * copied). */
static bool copy_out(struct channel *ch, const char *data, size_t len)
{
    if (ch->out_off > 0 && ch->out_off == ch->out_len)
        ch->out_off = ch->out_len = 0;
    if (ch->out_len + len > ch->out_cap) {
        if (ch->out_off > 0) {        /* slide the unsent part to the front */
            memmove(ch->out, ch->out + ch->out_off, ch->out_len - ch->out_off);
            ch->out_len -= ch->out_off;
            ch->out_off = 0;
        }
        size_t cap = ch->out_cap ? ch->out_cap : 4096;
        while (cap < ch->out_len + len)
            cap *= 2;
        if (cap != ch->out_cap) {
            char *grown = realloc(ch->out, cap);
            if (!grown)
                return false;
            ch->out = grown;
            ch->out_cap = cap;
        }
    }
    memcpy(ch->out + ch->out_len, data, len);
    ch->out_len += len;
    return true;
}

/* Copy the span into out[]: before the input buffer it points into is
 * reused, and before a reply that is not part of it queues behind it.
 * Returns false when out of memory. */
static bool keep_span(struct channel *ch)
{
    bool kept = ch->span_len == 0 || copy_out(ch, ch->span, ch->span_len);
    ch->span_len = 0;
    return kept;
}

/* The stall clock runs while output waits: it starts when the first byte
 * queues behind an empty output. */
static void note_first_pending(struct channel *ch)
{
    if (channel_pending_output(ch) == 0)
        ch->last_drain_ns = now_ns();
}

/* Queue a reply that must be copied (it will not stay where it is).
 * Returns false when out of memory (nothing queued). */
bool append_out(struct channel *ch, const char *data, size_t len)
{
    note_first_pending(ch);
    return keep_span(ch) && copy_out(ch, data, len);
}

/* Queue a reply that stays where it is until the next read: a span, grown
 * when it follows the last one. Returns false when out of memory. */
static bool append_in_place(struct channel *ch, const char *data, size_t len)
{
    note_first_pending(ch);
    if (ch->span_len > 0 && data == ch->span + ch->span_len) {
        ch->span_len += len;
        return true;
    }
    if (!keep_span(ch))
        return false;
    ch->span = data;
    ch->span_len = len;
    return true;
}

/* Write what the socket takes, then keep what it did not. Returns false if
 * the channel ended. */
static bool flush(struct channel *ch)
{
    size_t copied = ch->out_len - ch->out_off;
    if (copied + ch->span_len > 0) {
        struct iovec iov[2] = {
            { .iov_base = ch->out + ch->out_off, .iov_len = copied },
            { .iov_base = (void *)ch->span, .iov_len = ch->span_len },
        };
        ssize_t n = net_writev(ch->watch.fd, copied ? iov : iov + 1, copied ? 2 : 1);
        if (n < 0 && n != -EAGAIN) {
            channel_end(ch, n == -ECONNRESET || n == -EPIPE ? ECHO_END_RESET
                                                             : ECHO_END_IO_ERROR);
            return false;
        }
        if (n > 0) {
            size_t from_out = (size_t)n < copied ? (size_t)n : copied;
            ch->out_off += from_out;
            ch->span += (size_t)n - from_out;
            ch->span_len -= (size_t)n - from_out;
            ch->last_drain_ns = now_ns();
            board_add(ch->host->board, CTR_BYTES_OUT, (uint64_t)n);
            board_thread_bytes(ch->host->board, loop_board_ref(ch->loop), 0, (uint64_t)n);
        }
    }
    if (ch->out_off == ch->out_len)
        ch->out_off = ch->out_len = 0;
    if (!keep_span(ch)) {
        channel_end(ch, ECHO_END_NO_MEMORY);
        return false;
    }
    return true;
}

/* The transitions that depend on the output: pause and resume reading at
 * the water marks, and close or linger once the last reply is out
 * (lines_left: the budget ran out with lines still to answer, so not yet).
 * Then tell the loop what to watch. Returns false if the channel ended. */
static bool update(struct channel *ch, bool lines_left)
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
                return update(ch, lines_left);
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

/* ---- !task: work queued on the channel's own loop --------------------------- *
 * Netty's channel.eventLoop().execute(): the handler does not do the work
 * now, it queues it on its own loop, which runs it in the task phase, as
 * long as ioRatio allows. The channel waits in OFFLOADED meanwhile (its
 * later lines keep their order), and the task, once it ran, hands the
 * reply to the next I/O phase (loop_watch_resume), where the lines behind
 * it are answered and the output written: so the loop's task time is the
 * work itself, and its I/O time is the echo. */

struct queued_task {
    struct channel *ch;
    uint64_t read_ns;            /* when the line was read */
    uint32_t cpu_us;             /* what to burn */
    size_t len;
    char line[];                 /* the reply (the echoed line), copied */
};

/* On the loop, in its task phase: the work, then the reply. */
static void queued_task_run(void *arg)
{
    struct queued_task *t = arg;
    struct channel *ch = t->ch;
    echo_burn_cpu_us(t->cpu_us);
    if (ch->state == CHANNEL_CLOSED) {  /* the client left meanwhile */
        channel_free(ch);
        free(t);
        return;
    }
    ch->state = input_state(ch);
    bool queued = append_out(ch, t->line, t->len);
    uint64_t read_ns = t->read_ns;
    free(t);
    if (!queued) {
        channel_end(ch, ECHO_END_NO_MEMORY);
        return;
    }
    ch->lines++;
    /* Counted here, from its read to its reply, as settle counts the
     * others: the write follows in the next I/O phase. */
    struct board *board = ch->host->board;
    if (board) {
        board_record_latency_n(board, now_ns() - read_ns, 1);
        board_add(board, CTR_LINES, 1);
        board_thread_lines(board, loop_board_ref(ch->loop), 1);
    }
    loop_watch_resume(ch->loop, &ch->watch);
}

/* Queue a !task line on the channel's loop. Returns false if the loop's
 * task queue refused it (full: the loop counts it) or memory ran out; the
 * line then gets "!err busy". */
static bool queue_task(struct channel *ch, const struct echo_reply *r, uint64_t read_ns)
{
    struct queued_task *t = malloc(sizeof(*t) + r->len);
    if (!t)
        return false;
    *t = (struct queued_task){ .ch = ch, .read_ns = read_ns, .cpu_us = r->work_amount,
                               .len = r->len };
    memcpy(t->line, r->data, r->len);
    if (loop_execute(ch->loop, queued_task_run, t) < 0) {
        free(t);
        return false;
    }
    ch->state = CHANNEL_OFFLOADED;
    return true;
}

/* ---- input ------------------------------------------------------------------ */

static void count_error(struct board *board, enum echo_error error)
{
    if (error == ECHO_ERROR_BAD_ARGUMENT)
        board_add(board, CTR_ERR_BAD_ARGUMENT, 1);
    if (error == ECHO_ERROR_LINE_TOO_LONG)
        board_add(board, CTR_ERR_LINE_TOO_LONG, 1);
}

/* Answer the complete lines received, in order, while the state answers
 * lines and the budget lasts. Returns false if the channel ended (it may be
 * freed: do not touch it). */
bool process_lines(struct channel *ch, struct batch *b)
{
    const struct channel_host *h = ch->host;
    struct board *board = h->board;
    struct echo_reply reply;
    const char *thread_name = loop_name(ch->loop);   /* for !who */

    while (answers_lines(ch) && !b->spent &&
           echo_session_next(&ch->session, thread_name, batch_room(b), &reply)) {
        bool did_work = reply.work != ECHO_WORK_NONE;
        if (reply.work == ECHO_WORK_TASK) {
            /* The replies before it go out first, as before any work. */
            if (!flush(ch))
                return false;
            if (queue_task(ch, &reply, b->read_ns))
                return true;          /* later lines wait for this one */
            reply.data = ECHO_ERR_BUSY;
            reply.len = sizeof(ECHO_ERR_BUSY) - 1;
            reply.work = ECHO_WORK_NONE;
        } else if (h->business && (did_work || is_who(ch, &reply))) {
            if (offload(ch, &reply, b->read_ns))
                return true;          /* later lines wait for this one */
            reply.data = ECHO_ERR_BUSY;
            reply.len = sizeof(ECHO_ERR_BUSY) - 1;
            reply.work = ECHO_WORK_NONE;
        }
        /* No business pool: the work runs here, and every channel of this
         * loop waits for it. That is the lesson of the single reactor. The
         * replies before it are written first, so `hi\n!sleep 10000\n`
         * answers `hi` at once, as the blocking models do. */
        if (did_work && !flush(ch))
            return false;
        if (reply.work == ECHO_WORK_SLEEP)
            board_thread_state(board, loop_board_ref(ch->loop), STATE_BLOCKED_SLEEP);
        echo_do_work(&reply);
        if (reply.work == ECHO_WORK_SLEEP)
            board_thread_state(board, loop_board_ref(ch->loop), STATE_RUNNING);
        bool queued = reply.data == ch->session.who
                          ? append_out(ch, reply.data, reply.len)  /* the next !who overwrites it */
                          : append_in_place(ch, reply.data, reply.len);
        if (!queued) {
            channel_end(ch, ECHO_END_NO_MEMORY);
            return false;
        }
        ch->lines += reply.lines;
        if (reply.error != ECHO_ERROR_NONE)
            count_error(board, reply.error);
        if (reply.close_after) {
            ch->state = CHANNEL_CLOSING;
            ch->linger_end = reply.error == ECHO_ERROR_LINE_TOO_LONG ? ECHO_END_TOO_LONG
                                                                     : ECHO_END_QUIT;
        }
        batch_count(b, did_work, (uint32_t)reply.lines);
    }
    return true;
}

/* After a wakeup's lines: the line clock, the write, the board, what to
 * watch, and a resume if the budget ran out. Returns false if the channel
 * ended. */
bool settle(struct channel *ch, struct batch *b)
{
    struct board *board = ch->host->board;
    /* The line clock: a partial line left over starts it (or keeps it if
     * no line completed meanwhile). With the budget spent, what is left
     * starts with whole lines: the next wakeup settles it. */
    if (echo_decoder_pending(&ch->session.decoder) == 0)
        ch->partial_since_ns = 0;
    else if (!b->spent && (ch->partial_since_ns == 0 || b->lines > 0))
        ch->partial_since_ns = ch->last_read_ns;
    if (!flush(ch))
        return false;
    /* A line's handling time, as in every model, runs from the read that
     * brought it to its reply being written (here: handed to the socket). */
    if (board && b->lines) {
        uint64_t took = now_ns() - b->read_ns;
        board_record_latency_n(board, took, b->lines);
        board_add(board, CTR_LINES, b->lines);
        board_thread_lines(board, loop_board_ref(ch->loop), b->lines);
    }
    if (b->spent) {
        /* Lines may be left in our buffer, where epoll cannot see them:
         * the loop serves the other ready channels, then comes back. */
        ch->unanswered_since_ns = b->read_ns;
        loop_watch_resume(ch->loop, &ch->watch);
    }
    return update(ch, b->spent);
}

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
    board_add(ch->host->board, CTR_BYTES_IN, (uint64_t)n);
    board_thread_bytes(ch->host->board, loop_board_ref(ch->loop), (uint64_t)n, 0);
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
        if (!process_lines(ch, &b))
            return;                   /* ended (and freed) while answering */
        if (b.spent || ch->state != CHANNEL_OPEN || got != READ_MORE)
            break;
        if (!keep_span(ch)) {         /* the read reuses the buffer it lies in */
            channel_end(ch, ECHO_END_NO_MEMORY);
            return;
        }
        got = read_some(ch, &allowance);
        if (got == READ_ENDED)
            return;
        if (got == READ_NOTHING && ch->state == CHANNEL_OPEN)
            break;                    /* nothing more for now */
    }
    settle(ch, &b);
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
    if ((events & EPOLLOUT) && flush(ch))
        update(ch, false);
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
    ch->watch = (struct loop_watch){ .fd = fd, .events = EPOLLIN, .cb = channel_io_cb,
                                     .arg = ch };
    ch->last_read_ns = ch->last_drain_ns = now_ns();
    if ((host->idle_timeout_ms > 0 || host->line_timeout_ms > 0 ||
         host->stall_timeout_ms > 0) && !arm_deadline(ch, ch->last_read_ns))
        goto out_free_session;
    if (loop_watch_add(l, &ch->watch) < 0)
        goto out_cancel_timer;
    loop_channels_add(l, 1);
    board_add(host->board, CTR_ACTIVE, 1);
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
    board_add(ch->host->board, CTR_REJECTED, 1);
    if (!append_out(ch, ECHO_ERR_BUSY, sizeof(ECHO_ERR_BUSY) - 1)) {
        channel_end(ch, ECHO_END_NO_MEMORY);
        return;
    }
    if (flush(ch))
        update(ch, false);
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
