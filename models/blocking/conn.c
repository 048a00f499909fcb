/* conn.c -- the blocking read/handle/write loop. See conn.h. */
#include "conn.h"

#include <errno.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

#include "echo/session.h"
#include "net/clock.h"
#include "probe/probe.h"
#include "reply_batch.h"

/* ---- serving (the heart of both blocking models) -------------------------- */

/* The next input deadline: a partial line must complete within
 * --line-timeout (slowloris); a silent connection may stay --idle-timeout. */
static uint64_t input_deadline(const struct server_opts *o, uint64_t last_read_ns,
                               uint64_t partial_since_ns, enum echo_end *why)
{
    if (partial_since_ns && o->line_timeout_ms > 0) {
        *why = ECHO_END_LINE_TIMEOUT;
        return partial_since_ns + (uint64_t)o->line_timeout_ms * 1000000u;
    }
    if (o->idle_timeout_ms > 0) {
        *why = ECHO_END_IDLE;
        return last_read_ns + (uint64_t)o->idle_timeout_ms * 1000000u;
    }
    return 0;
}

/* What a serving thread keeps between reads. */
struct serving {
    const char *thread_name;      /* the serving thread, as !who names it */
    struct board_thread_ref *me;  /* and its row on the board */
    uint64_t lines;               /* lines answered on this connection */
    uint64_t read_lines;          /* of them, the last read's (answer_lines) */
    struct echo_session session;  /* the decoder and the reply buffers */
    struct reply_batch replies;   /* one read's replies, written together */
    uint64_t last_read_ns;        /* the idle clock (--idle-timeout) */
    uint64_t partial_since_ns;    /* the line clock (--line-timeout); 0: no partial line */
    uint64_t rcvtimeo_us;         /* SO_RCVTIMEO armed on the socket; 0: none */
    bool stop_seen;               /* a stop began: read what was held, then end */
    size_t stop_left;             /* bytes held at the stop, still to read */
};

/* Answer every complete line the session holds, in order, replies
 * collected and written together. Work (!cpu, !sleep) first writes what is
 * collected: no reply waits behind another line's sleep, and the sleep
 * blocks only this thread. Returns true when the connection ends (*end
 * says why): a failed write, !quit, or a line too long (its error reply
 * written first). sv->read_lines: the lines it answered (counted from
 * 0 by the caller); sv->replies.bytes: the bytes of the replies it wrote. */
static bool answer_lines(const struct conn_server *srv, struct serving *sv,
                         uint64_t read_ns, enum echo_end *end)
{
    struct board *board = srv->board;
    struct echo_session *session = &sv->session;
    struct reply_batch *rb = &sv->replies;
    struct echo_reply reply;
    bool ends = false;
    int wrc = 0;
    rb->bytes = 0;                     /* this call's replies: probe_wrote's bytes out */
    while (!ends && echo_session_next(session, sv->thread_name, SIZE_MAX, &reply)) {
        if (reply.work != ECHO_WORK_NONE) {
            if ((wrc = reply_batch_flush(rb, read_ns)) < 0)
                break;
            if (reply.work == ECHO_WORK_SLEEP)
                probe_sleeping(board, sv->me);
            echo_do_work(&reply);     /* blocking is fine: a thread of our own */
            if (reply.work == ECHO_WORK_SLEEP)
                probe_unblocked(board, sv->me);
        }
        probe_line_failed(board, reply.error);
        sv->read_lines += reply.lines;
        if ((wrc = reply_batch_add(rb, &reply, read_ns)) < 0)
            break;
        if (reply.close_after) {
            *end = reply.error == ECHO_ERROR_LINE_TOO_LONG ? ECHO_END_TOO_LONG
                                                           : ECHO_END_QUIT;
            ends = true;
        }
    }
    /* A reply collected is written before the thread reads again (or
     * closes): replies never wait for more input. */
    if (wrc == 0)
        wrc = reply_batch_flush(rb, read_ns);
    if (wrc < 0) {
        *end = reply_batch_end_of(wrc);
        return true;
    }
    return ends;
}

/* A client that never reads makes write() block; past --stall-timeout
 * the write fails with EAGAIN and the connection is closed. */
static void set_stall_timeout(int fd, int stall_timeout_ms)
{
    if (stall_timeout_ms <= 0)
        return;
    struct timeval tv = { .tv_sec = stall_timeout_ms / 1000,
                          .tv_usec = (stall_timeout_ms % 1000) * 1000 };
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}


/* How far the armed read timeout may be from what is left before the
 * deadline without a setsockopt: the kernel counts it in ticks anyway. */
#define RCVTIMEO_SLACK_US 2000

/* Make a read() that blocks from now return by the deadline, left_ns away
 * (0: no deadline, block until input). SO_RCVTIMEO counts from the start
 * of each read(), not to an instant, so it is armed with what is left,
 * and only when that differs from the armed value by more than the slack:
 * once per connection for the idle timeout (each read restarts its clock,
 * and the next read begins microseconds later), again for a partial
 * line's own clock, and after a signal or an early timeout left less. (If
 * setsockopt failed, the old value stays armed and the next read tries
 * again: a read may then wake early, never block for ever.) */
static void arm_read_timeout(int fd, struct serving *sv, uint64_t left_ns)
{
    uint64_t want_us = (left_ns + 999) / 1000, have_us = sv->rcvtimeo_us;
    uint64_t off_us = want_us > have_us ? want_us - have_us : have_us - want_us;
    if ((want_us == 0) == (have_us == 0) && off_us <= RCVTIMEO_SLACK_US)
        return;
    struct timeval tv = { .tv_sec = (time_t)(want_us / 1000000),
                          .tv_usec = (suseconds_t)(want_us % 1000000) };
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == 0)
        sv->rcvtimeo_us = want_us;
}

/* May the thread read now? It first says it may block in read() (from
 * here a stop signals it), then looks at the stop flag and the clock: no
 * syscall, unless the read timeout must change. Returns false, with *end
 * set, when the connection ends here: a timeout passed, or a stop began
 * and every byte held at that moment has been read. The stop does not
 * touch the socket, and the client may go on sending: the thread answers
 * what the kernel held when it saw the stop, then no more. After the
 * stop those bytes are there to read: no more waiting. Called again after
 * each EINTR or EAGAIN of the read, so a signal (the stop's, or any
 * other) or the kernel's timeout lands here and the real deadline rules. */
static bool await_input(const struct conn_server *srv, struct conn *c,
                        struct serving *sv, enum echo_end *end)
{
    if (!sv->stop_seen) {
        atomic_store(&c->phase, CONN_READING);       /* before the flag: see conn_registry_stop_input */
        if (atomic_load(&srv->conns->stopping)) {
            conn_registry_saw_stop(srv->conns, c);
            sv->stop_seen = true;
            sv->stop_left = net_bytes_held(c->fd);
        }
    }
    if (!sv->stop_seen) {
        enum echo_end timeout_end = ECHO_END_IDLE;
        uint64_t deadline = input_deadline(srv->opts, sv->last_read_ns,
                                           sv->partial_since_ns, &timeout_end);
        uint64_t now = deadline ? now_ns() : 0;
        if (deadline && now >= deadline) {
            *end = timeout_end;
            return false;
        }
        arm_read_timeout(c->fd, sv, deadline ? deadline - now : 0);
    }
    if (sv->stop_seen && sv->stop_left == 0) {
        *end = ECHO_END_EOF;              /* a stop ended input */
        return false;
    }
    return true;
}

/* Block in read() until the client sends or leaves, a stop begins, or a
 * timeout passes, and read once into the session. EINTR and EAGAIN go
 * back to await_input, which says whether that was the end. Returns the
 * bytes read, or 0 with *end set when the connection ends. */
static size_t read_input(const struct conn_server *srv, struct conn *c,
                         struct serving *sv, enum echo_end *end)
{
    size_t room;
    char *buf = echo_session_space(&sv->session, &room);
    if (!buf) {
        *end = ECHO_END_NO_MEMORY;
        return 0;
    }
    probe_blocked(srv->board, sv->me);
    for (;;) {
        if (!await_input(srv, c, sv, end))
            return 0;
        size_t want = sv->stop_seen && sv->stop_left < room ? sv->stop_left : room;
        ssize_t n = read(c->fd, buf, want);                 /* blocks */
        if (n > 0) {
            if (sv->stop_seen)
                sv->stop_left -= (size_t)n;
            else
                atomic_store_explicit(&c->phase, CONN_ANSWERING, memory_order_release);
            return (size_t)n;
        }
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;                 /* a signal, or SO_RCVTIMEO: look again */
        *end = n == 0 ? ECHO_END_EOF
             : errno == ECONNRESET ? ECHO_END_RESET : ECHO_END_IO_ERROR;
        return 0;
    }
}

/* The n bytes just read: answer the complete lines they finish, restart
 * the clocks, count it all on the board. Returns true when the connection
 * ends (*end says why). */
static bool answer_read(const struct conn_server *srv, struct serving *sv, size_t n,
                        enum echo_end *end)
{
    uint64_t read_ns = now_ns();
    probe_unblocked_at(srv->board, sv->me, read_ns);
    echo_session_commit(&sv->session, n);
    sv->last_read_ns = read_ns;

    sv->read_lines = 0;
    bool closing = answer_lines(srv, sv, read_ns, end);
    sv->lines += sv->read_lines;
    /* A partial line left over starts (or keeps) the line clock; one that
     * began after a complete line restarts it. */
    if (echo_decoder_pending(&sv->session.decoder) == 0)
        sv->partial_since_ns = 0;
    else if (sv->partial_since_ns == 0 || sv->read_lines > 0)
        sv->partial_since_ns = read_ns;
    probe_wrote(srv->board, sv->me, n, sv->replies.bytes, sv->read_lines);
    return closing;
}

/* The heart of both blocking models: read, answer, until the end. */
enum echo_end conn_serve(const struct conn_server *srv, struct conn *c,
                         const char *thread_name,
                         struct board_thread_ref *me, uint64_t *lines)
{
    struct serving sv = { .thread_name = thread_name, .me = me,
                          .replies = { .board = srv->board, .to = &c->fd,
                                       .write_all = reply_batch_write_fd } };
    enum echo_end end = ECHO_END_EOF;

    *lines = 0;
    if (echo_session_init(&sv.session, srv->model, c->id, srv->opts->max_line) < 0)
        return ECHO_END_NO_MEMORY;
    set_stall_timeout(c->fd, srv->opts->stall_timeout_ms);
    conn_registry_enter(srv->conns, c);                  /* a stop sees us */
    sv.last_read_ns = now_ns();
    for (;;) {
        size_t n = read_input(srv, c, &sv, &end);          /* blocks */
        if (n == 0)
            break;                                       /* end says why */
        if (answer_read(srv, &sv, n, &end))
            break;
    }
    *lines = sv.lines;
    conn_registry_leave(srv->conns, c);
    echo_session_free(&sv.session);
    return end;
}

void conn_finish(const struct conn_server *srv, struct conn *c,
                 struct board_thread_ref *on_board, enum echo_end end, uint64_t lines)
{
    /* The registry's flag, not the acceptor's: the stop sets it first. */
    bool stopping = atomic_load(&srv->conns->stopping);
    conn_registry_remove(srv->conns);
    /* After an error reply, or when a stop cut a client off mid-stream,
     * linger: the last replies are read, not lost to a reset. The thread
     * waits in read for up to linger_ms, and says so: left "running" (a
     * !quit or an error reply ends there), its last stretch counted as
     * CPU time. */
    if (echo_end_lingers(end) || stopping) {
        probe_blocked(srv->board, on_board);
        net_lingering_close(c->fd, srv->opts->linger_ms);
    } else
        close(c->fd);
    c->fd = -1;
    probe_conn_ended(srv->board, c->id, end, stopping, lines);
}

bool conn_refuse_over_limit(const struct server_opts *o, struct conn_registry *r,
                            struct acceptor *a, int fd, uint64_t id)
{
    if (o->max_conns <= 0 || conn_registry_count(r) < (uint64_t)o->max_conns)
        return false;
    char why[64];
    snprintf(why, sizeof(why), "limit of %d connections open (--max-conns)",
             o->max_conns);
    acceptor_refuse(a, fd, id, why);
    return true;
}
