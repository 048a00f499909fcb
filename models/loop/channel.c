/* channel.c -- nonblocking read, decide, buffer, write. See channel.h.
 *
 *   readable --> read into the session (until EAGAIN or the budget)
 *            --> next line --> !cpu/!sleep: offload (later lines wait)
 *                          --> or do it here, on the loop (the lesson)
 *                          --> append the reply to out
 *            --> write out as far as the socket takes it
 *   writable --> write out; below low water, read again
 *   EOF      --> answer what is left, flush, close
 */
#include "channel.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/net.h"

struct offload {
    struct channel *ch;
    uint64_t read_ns;            /* when the line was read */
    struct echo_reply work;      /* what to do; data points into `line` */
    size_t len;
    char line[];                 /* the reply (the echoed line), copied */
};

static void channel_io_cb(void *arg, uint32_t events);
static bool process_lines(struct channel *ch, uint64_t read_ns);

/* ---- ending ------------------------------------------------------------- */

static void channel_free(struct channel *ch)
{
    echo_session_free(&ch->session);
    free(ch->out);
    free(ch);
}

/* Close the fd and tell the model. The channel is freed here, or, if a
 * line of it is still on the business pool, when that line comes back. */
static void channel_end(struct channel *ch, enum echo_end end)
{
    const struct channel_host *h = ch->host;
    if (ch->watch.fd < 0)
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
    board_conn_ended(h->board, ch->id, end, h->stopping && h->stopping(h->host_arg),
                     ch->lines);
    h->on_closed(ch, h->host_arg);
    if (ch->waiting_offload)
        ch->dead = true;        /* offload_done frees it */
    else
        channel_free(ch);
}

/* How a lingering close ends: it followed a refusal, a stop, or an error
 * reply. */
static enum echo_end linger_end(const struct channel *ch)
{
    return ch->refused ? ECHO_END_REFUSED
         : ch->stopping ? ECHO_END_EOF : ECHO_END_QUIT;
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
        return;
    }
    channel_end(ch, linger_end(ch));
}

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

static void arm_deadline(struct channel *ch, uint64_t now)
{
    uint64_t when = next_deadline(ch);
    if (!when) {
        /* Nothing to watch now; look again after the shortest timeout. */
        const struct channel_host *h = ch->host;
        int ms = h->idle_timeout_ms ? h->idle_timeout_ms
               : h->line_timeout_ms ? h->line_timeout_ms : h->stall_timeout_ms;
        when = now + ms_ns(ms);
    }
    uint64_t delay_ms = when > now ? (when - now + 999999) / 1000000 : 0;
    ch->deadline_timer = loop_schedule(ch->loop, delay_ms, check_deadlines, ch);
}

static void check_deadlines(void *arg)
{
    struct channel *ch = arg;
    const struct channel_host *h = ch->host;
    uint64_t now = loop_now_ns();
    loop_timer_release(ch->deadline_timer);
    ch->deadline_timer = NULL;
    if (ch->lingering || ch->waiting_offload) {
        arm_deadline(ch, now);     /* closing already, or the pool has it */
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
    /* LAB 05 BEGIN: the idle timeout (Netty's IdleStateHandler). With
     * --idle-timeout set, a channel that has read nothing for that long
     * (since ch->last_read_ns) ends with ECHO_END_IDLE. Reads only note the
     * time; this one timer per channel, re-armed below, does the rest.
     * STUB: (void)0;
     */
    if (h->idle_timeout_ms > 0 && now >= ch->last_read_ns + ms_ns(h->idle_timeout_ms)) {
        channel_end(ch, ECHO_END_IDLE);
        return;
    }
    /* LAB 05 END */
    arm_deadline(ch, now);
}

/* The reply before a close is out: shut our side, keep reading and
 * dropping the client's bytes until it closes too, or until linger_ms pass
 * in which it took none of our output, so the reply is not destroyed by a
 * reset (nginx's lingering close). */
static void start_lingering(struct channel *ch)
{
    ch->lingering = true;
    shutdown(ch->watch.fd, SHUT_WR);
    ch->linger_unacked = SIZE_MAX;
    net_peer_took_output(ch->watch.fd, &ch->linger_unacked);
    ch->linger_timer = loop_schedule(ch->loop, (uint64_t)ch->host->linger_ms,
                                     linger_expired, ch);
}

/* ---- output ------------------------------------------------------------- */

size_t channel_pending_output(const struct channel *ch)
{
    return ch->out_len - ch->out_off;
}

static bool append_out(struct channel *ch, const char *data, size_t len)
{
    if (channel_pending_output(ch) == 0)
        ch->last_drain_ns = loop_now_ns();   /* the stall clock starts now */
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

/* Write what the socket takes. Returns false if the channel ended. */
static bool flush(struct channel *ch)
{
    size_t pending = channel_pending_output(ch);
    if (pending > 0) {
        ssize_t n = net_write(ch->watch.fd, ch->out + ch->out_off, pending);
        if (n < 0 && n != -EAGAIN) {
            channel_end(ch, n == -ECONNRESET || n == -EPIPE ? ECHO_END_RESET
                                                             : ECHO_END_IO_ERROR);
            return false;
        }
        if (n > 0) {
            ch->out_off += (size_t)n;
            ch->last_drain_ns = loop_now_ns();
            board_add(ch->host->board, CTR_BYTES_OUT, (uint64_t)n);
        }
    }
    if (ch->out_off == ch->out_len)
        ch->out_off = ch->out_len = 0;
    return true;
}

/* Decide what to watch for, and whether the channel is done. Returns
 * false if it ended. */
static bool update(struct channel *ch)
{
    size_t pending = channel_pending_output(ch);
    if (ch->reading_paused && pending <= ch->host->low_water)
        ch->reading_paused = false;
    else if (!ch->reading_paused && pending > ch->host->high_water)
        ch->reading_paused = true;

    if (pending == 0 && !ch->waiting_offload) {
        if (ch->closing && !ch->lingering)
            start_lingering(ch);
        else if (ch->peer_closed && !ch->lingering) {
            channel_end(ch, ECHO_END_EOF);
            return false;
        }
    }
    uint32_t events = 0;
    if (ch->lingering || (!ch->reading_paused && !ch->waiting_offload &&
                          !ch->peer_closed && !ch->closing))
        events |= EPOLLIN;
    if (pending > 0)
        events |= EPOLLOUT;
    loop_watch_modify(ch->loop, &ch->watch, events);
    return true;
}

/* ---- offload ------------------------------------------------------------ */

/* Back on the loop: the offloaded line's reply, then the lines behind it. */
static void offload_done(void *arg)
{
    /* LAB 04 BEGIN: back on the loop's thread. The channel stops waiting;
     * if the client left meanwhile (ch->dead), free the channel and the
     * task and stop. Else append the offloaded line's reply to the
     * channel's output (append_out), count it (ch->lines, and
     * ch->batch_lines for the timing), free the task, and go on with the
     * lines that waited behind it (process_lines(ch, the task's read_ns)):
     * that is what keeps the replies in order.
     * STUB: (void)arg;
     */
    struct offload *o = arg;
    struct channel *ch = o->ch;
    ch->waiting_offload = false;
    if (ch->dead) {               /* the client left meanwhile */
        channel_free(ch);
        free(o);
        return;
    }
    append_out(ch, o->line, o->len);
    ch->lines++;
    uint64_t read_ns = o->read_ns;
    free(o);
    /* The offloaded line's reply is counted with the lines behind it, which
     * have waited since about the same read. */
    ch->batch_lines++;
    process_lines(ch, read_ns);
    /* LAB 04 END */
}

/* On a business thread: the slow part, then post the reply back. */
static void offload_run(void *arg, struct pool_thread *self)
{
    /* LAB 04 BEGIN: on a business thread. Do the line's slow work
     * (echo_do_work), showing the thread blocked in !sleep on the board
     * while it sleeps (pool_thread_board(self), board_thread_state). Then
     * send the reply home: the channel belongs to its loop's thread, so do
     * not touch it here; queue offload_done on the channel's loop
     * (loop_execute). If the loop no longer takes tasks, free the task.
     * STUB: struct offload *o = arg;
     * STUB: (void)self;
     * STUB: (void)offload_done;
     * STUB: echo_do_work(&o->work);
     * STUB: free(o);
     */
    struct offload *o = arg;
    struct board *board = o->ch->host->board;
    struct board_thread_ref *me = self ? pool_thread_board(self) : NULL;
    if (me && o->work.work == ECHO_WORK_SLEEP)
        board_thread_state(board, me, STATE_BLOCKED_SLEEP);
    echo_do_work(&o->work);
    if (me)
        board_thread_state(board, me, STATE_RUNNING);
    /* The channel lives until this task comes back, so ch is valid here;
     * the loop outlives every channel. */
    if (loop_execute(o->ch->loop, offload_done, o) < 0)
        free(o);
    /* LAB 04 END */
}

/* Hand a !cpu or !sleep line to the business pool. Returns false if the
 * pool refused it (the line then gets "!err busy"). */
static bool offload(struct channel *ch, const struct echo_reply *r, uint64_t read_ns)
{
    struct offload *o = malloc(sizeof(*o) + r->len);
    if (!o)
        return false;
    o->ch = ch;
    o->read_ns = read_ns;
    o->work = *r;
    o->len = r->len;
    memcpy(o->line, r->data, r->len);
    o->work.data = o->line;
    ch->waiting_offload = true;
    if (pool_submit(ch->host->business, offload_run, o, ch->id) < 0) {
        ch->waiting_offload = false;
        free(o);
        return false;
    }
    board_add(ch->host->board, CTR_OFFLOADED, 1);
    return true;
}

/* ---- input -------------------------------------------------------------- */

/* Answer the complete lines received, in order, until one must wait.
 * read_ns: when the bytes were read. A line's handling time, as in every
 * model, runs from the read that completed it to its reply being written.
 * Returns false if the channel ended (it may be freed: do not touch it). */
static bool process_lines(struct channel *ch, uint64_t read_ns)
{
    const struct channel_host *h = ch->host;
    struct board *board = h->board;
    struct echo_reply reply;

    while (!ch->waiting_offload && !ch->closing &&
           echo_session_next(&ch->session, loop_name(ch->loop), &reply)) {
        if (reply.work != ECHO_WORK_NONE && h->business) {
            if (offload(ch, &reply, read_ns))
                break;                /* later lines wait for this one */
            reply.data = ECHO_ERR_BUSY;
            reply.len = sizeof(ECHO_ERR_BUSY) - 1;
            reply.work = ECHO_WORK_NONE;
        }
        /* No business pool: the work runs here, and every channel of this
         * loop waits for it. That is the lesson of the single reactor. */
        if (reply.work == ECHO_WORK_SLEEP)
            board_thread_state(board, loop_board_ref(ch->loop), STATE_BLOCKED_SLEEP);
        echo_do_work(&reply);
        if (reply.work == ECHO_WORK_SLEEP)
            board_thread_state(board, loop_board_ref(ch->loop), STATE_RUNNING);
        if (!append_out(ch, reply.data, reply.len)) {
            channel_end(ch, ECHO_END_NO_MEMORY);
            return false;
        }
        ch->lines++;
        ch->batch_lines++;
        if (reply.error == ECHO_ERROR_BAD_ARGUMENT)
            board_add(board, CTR_ERR_BAD_ARGUMENT, 1);
        if (reply.error == ECHO_ERROR_LINE_TOO_LONG)
            board_add(board, CTR_ERR_LINE_TOO_LONG, 1);
        if (reply.close_after)
            ch->closing = true;
    }
    /* The line clock: a partial line left over starts it (or keeps it if
     * no line completed meanwhile). */
    if (echo_decoder_pending(&ch->session.decoder) == 0)
        ch->partial_since_ns = 0;
    else if (ch->partial_since_ns == 0 || ch->batch_lines > 0)
        ch->partial_since_ns = ch->last_read_ns;
    if (!flush(ch))
        return false;
    if (board && ch->batch_lines) {
        uint64_t took = board_now_ns() - read_ns;
        for (uint64_t i = 0; i < ch->batch_lines; i++)
            board_record_latency(board, took);
        board_add(board, CTR_LINES, ch->batch_lines);
        board_thread_lines(board, loop_board_ref(ch->loop), ch->batch_lines);
    }
    ch->batch_lines = 0;
    return update(ch);
}

/* Read what is there (up to the budget), then answer it. */
static void on_readable(struct channel *ch)
{
    size_t budget = CHANNEL_READ_BUDGET_BYTES;
    char sink[4096];

    if (ch->lingering) {          /* drop what the client still sends */
        ssize_t n;
        while ((n = net_read(ch->watch.fd, sink, sizeof(sink))) > 0)
            ;
        if (n == 0 || n != -EAGAIN)
            channel_end(ch, linger_end(ch));
        return;
    }
    while (budget > 0 && !ch->waiting_offload && !ch->closing && !ch->reading_paused) {
        size_t room;
        char *buf = echo_session_space(&ch->session, &room);
        if (!buf) {
            channel_end(ch, ECHO_END_NO_MEMORY);
            return;
        }
        if (room == 0)                /* a line too long: let it be decided */
            break;
        size_t want = room < budget ? room : budget;
        if (ch->stopping && ch->stop_left < want)
            want = ch->stop_left;
        ssize_t n = net_read(ch->watch.fd, buf, want);
        if (n == -EAGAIN)
            break;
        if (n < 0) {
            channel_end(ch, n == -ECONNRESET ? ECHO_END_RESET : ECHO_END_IO_ERROR);
            return;
        }
        if (n == 0) {
            ch->peer_closed = true;   /* half-close: still answer what came */
            break;
        }
        echo_session_commit(&ch->session, (size_t)n);
        board_add(ch->host->board, CTR_BYTES_IN, (uint64_t)n);
        if (ch->stopping && (ch->stop_left -= (size_t)n) == 0)
            ch->closing = true;       /* all that came before the stop */
        budget -= (size_t)n < budget ? (size_t)n : budget;
        ch->last_read_ns = loop_now_ns();
        if (!process_lines(ch, ch->last_read_ns))
            return;                   /* ended (and freed) while answering */
    }
    process_lines(ch, ch->last_read_ns);  /* EOF or nothing new: settle */
}

static void channel_io_cb(void *arg, uint32_t events)
{
    struct channel *ch = arg;
    if (events & EPOLLOUT) {
        if (!flush(ch) || !update(ch))
            return;
    }
    if (events & (EPOLLIN | EPOLLHUP | EPOLLERR))
        on_readable(ch);
}

/* ---- opening and stopping ----------------------------------------------- */

struct channel *channel_open(struct loop *l, int fd, uint64_t id,
                             const struct channel_host *host)
{
    struct channel *ch = calloc(1, sizeof(*ch));
    if (!ch || echo_session_init(&ch->session, host->model, id, host->max_line) < 0) {
        free(ch);
        close(fd);
        return NULL;
    }
    net_set_nonblocking(fd, true);
    ch->loop = l;
    ch->id = id;
    ch->host = host;
    ch->watch = (struct loop_watch){ .fd = fd, .events = EPOLLIN, .cb = channel_io_cb,
                                     .arg = ch };
    if (loop_watch_add(l, &ch->watch) < 0) {
        echo_session_free(&ch->session);
        free(ch);
        close(fd);
        return NULL;
    }
    loop_channels_add(l, 1);
    board_add(host->board, CTR_ACTIVE, 1);
    ch->last_read_ns = ch->last_drain_ns = loop_now_ns();
    if (host->idle_timeout_ms > 0 || host->line_timeout_ms > 0 || host->stall_timeout_ms > 0)
        arm_deadline(ch, ch->last_read_ns);
    return ch;
}

void channel_refuse(struct channel *ch)
{
    ch->refused = true;
    ch->closing = true;            /* read no requests; linger after the reply */
    board_add(ch->host->board, CTR_REJECTED, 1);
    append_out(ch, ECHO_ERR_BUSY, sizeof(ECHO_ERR_BUSY) - 1);
    if (flush(ch))
        update(ch);
}

void channel_stop_reading(struct channel *ch)
{
    /* Count what the kernel holds now: that much is read and answered
     * (later, if the channel waits for an offload or for its output to
     * drain), and nothing after it. No shutdown(SHUT_RD): the lingering
     * close needs to see the client's own EOF. */
    size_t held = net_bytes_held(ch->watch.fd);
    ch->stopping = true;
    ch->stop_left = held;
    if (held == 0)
        ch->closing = true;
    if (!ch->waiting_offload && !ch->reading_paused)
        on_readable(ch);
    else if (held == 0)
        update(ch);
}

void channel_close_now(struct channel *ch)
{
    channel_end(ch, ECHO_END_STOPPED);
}
