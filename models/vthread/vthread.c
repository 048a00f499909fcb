/* vthread.c -- model 5: virtual threads on carrier threads.
 *
 * BIO's code at a reactor's cost. Each connection gets a virtual thread
 * whose handler reads like BIO's connection loop -- read, let the session
 * cut lines, answer, write -- but its read and write are the runtime's:
 * on EAGAIN they park the virtual thread, and the carrier's epoll resumes
 * it when the socket is ready. A few carriers serve thousands of
 * connections, each with a small stack of its own instead of a kernel
 * thread.
 *
 *   acceptor thread          carrier threads (--carriers, default: cores)
 *   +----------------+       +------------------------------------------+
 *   | poll, accept   | vt-1  | carrier-0: epoll + run queue             |
 *   | spawn a vthread|------>|   switch into vt-1: read, answer, write  |
 *   | round robin    | vt-2  |   EAGAIN: park, switch to the next       |
 *   +----------------+------>| carrier-1: ...                           |
 *                            +------------------------------------------+
 *   monitor thread: a carrier stuck in !sleep past --handoff-ms gets a
 *   spare thread that takes its run queue; the spare ends when the call
 *   returns. With --pin, no handoff: the whole carrier waits.
 *
 * A line travels: kernel -> vt_read (parked until epoll says readable)
 * -> the session decides -> the work (!sleep a real blocking call) ->
 * vt_write_all -> kernel. The vthread owns its fd for the connection's
 * life; its carrier never changes.
 *
 * Where it lives, and what to read first:
 *   conn_main (here)                 the handler, in blocking style
 *   vt_read, vt__park (park.c)       the read that parks, and the park
 *   carrier__ready (park.c)          the resume, after epoll_wait
 *   carrier__run (carrier.c)         a carrier's loop
 *   vt__switch (switch.c)            the context switch, in assembly
 *   look_at (monitor.c)              the handoff
 */
#include "vthread.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blocking/acceptor.h"
#include "blocking/reply_batch.h"
#include "echo/session.h"
#include "net/clock.h"
#include "probe/probe.h"
#include "runtime.h"
#include "stack.h"

struct vthread_server {
    struct server_opts opts;        /* a copy */
    struct acceptor acceptor;       /* the listening socket and its thread */
    struct vt_runtime *rt;          /* the carriers and the monitor */
    struct board *board;            /* NULL with --no-board */
    atomic_uint_fast64_t open;      /* connections accepted, not yet closed */
};

/* ---- one connection, in blocking style (on its vthread) ------------------------ */


/* What the handler keeps between reads: on its own stack. */
struct serving {
    const struct server_opts *opts; /* the server's */
    struct vthread *self;           /* the virtual thread serving */
    struct echo_session session;    /* the decoder and the reply buffers */
    struct reply_batch replies;     /* one read's replies, written together */
    uint64_t read_ns;               /* when the bytes being answered came */
    uint64_t last_read_ns;          /* the idle clock */
    uint64_t partial_since_ns;      /* the line clock; 0: no partial line */
    bool stop_seen;                 /* a stop began: answer what was held */
    size_t stop_left;               /* bytes held at the stop, still to read */
    uint64_t lines;                 /* lines answered so far */
    enum echo_end end;              /* why it ended, once it has */
};

/* How the reply batch writes, here: parked while the socket is full, as
 * a blocking thread would block (the batch itself is BIO's,
 * models/blocking/reply_batch.c). */
static int write_replies(void *to, struct iovec *iov, int count)
{
    struct serving *sv = to;
    return vt_write_all(sv->self, iov, count, sv->opts->stall_timeout_ms);
}

/* The work of a line, the vthread's way. !sleep is a real blocking call:
 * without --pin its carrier is given up meanwhile (and handed to a spare
 * after --handoff-ms). !cpu burns the carrier: nothing preempts a
 * vthread. !task lets the carrier's other vthreads run first, as a task
 * queued behind them on a loop would. */
static void do_work(struct vthread *self, const struct echo_reply *r)
{
    if (r->work == ECHO_WORK_SLEEP) {
        vt_blocking_begin(self);
        echo_do_work(r);
        vt_blocking_end(self);
        return;
    }
    if (r->work == ECHO_WORK_TASK)
        vt_yield(self);
    echo_do_work(r);
}

/* Answer every complete line held, in order; replies before a line's
 * work are written first, so none waits behind a !sleep. Returns the
 * lines answered; sets sv->end when the connection ends (a failed write,
 * !quit, a line too long). */
static uint64_t answer_lines(struct vthread *self, struct serving *sv, bool *ends)
{
    struct board *b = vt_board(self);
    struct echo_reply r;
    uint64_t lines = 0;
    int rc = 0;
    sv->replies.bytes = 0;
    while (!*ends && echo_session_next(&sv->session, vt_where(self), SIZE_MAX, &r)) {
        if (r.work != ECHO_WORK_NONE) {
            if ((rc = reply_batch_flush(&sv->replies, sv->read_ns)) < 0)
                break;
            do_work(self, &r);
        }
        probe_line_failed(b, r.error);
        lines += r.lines;
        if ((rc = reply_batch_add(&sv->replies, &r, sv->read_ns)) < 0)
            break;
        if (r.close_after) {
            sv->end = r.error == ECHO_ERROR_LINE_TOO_LONG ? ECHO_END_TOO_LONG : ECHO_END_QUIT;
            *ends = true;
        }
    }
    if (rc == 0)
        rc = reply_batch_flush(&sv->replies, sv->read_ns);
    if (rc < 0) {
        sv->end = reply_batch_end_of(rc);
        *ends = true;
    }
    return lines;
}

/* When input must arrive by: a partial line within --line-timeout, any
 * line within --idle-timeout of the last read (0: no limit). *why: the
 * end that deadline means. */
static uint64_t input_deadline(const struct serving *sv, enum echo_end *why)
{
    const struct server_opts *o = sv->opts;
    if (sv->partial_since_ns && o->line_timeout_ms > 0) {
        *why = ECHO_END_LINE_TIMEOUT;
        return sv->partial_since_ns + (uint64_t)o->line_timeout_ms * 1000000u;
    }
    *why = ECHO_END_IDLE;
    return o->idle_timeout_ms > 0
        ? sv->last_read_ns + (uint64_t)o->idle_timeout_ms * 1000000u : 0;
}

/* May the handler read now, and until when? Once a stop began, only the
 * bytes held at that moment are read. Returns false, sv->end set, when
 * the connection ends here. */
static bool await_input(struct vthread *self, struct serving *sv, uint64_t *deadline)
{
    if (!sv->stop_seen && vt_stopping(self)) {
        sv->stop_seen = true;
        sv->stop_left = net_bytes_held(vt_fd(self));
    }
    *deadline = 0;
    if (sv->stop_seen) {
        sv->end = ECHO_END_EOF;
        return sv->stop_left > 0;
    }
    *deadline = input_deadline(sv, &sv->end);
    return *deadline == 0 || now_ns() < *deadline;
}

/* Read once into the session, parking while there is nothing to read.
 * Returns the bytes read, or 0 with sv->end set. */
static size_t read_input(struct vthread *self, struct serving *sv)
{
    size_t room;
    char *buf = echo_session_space(&sv->session, &room);
    if (!buf) {
        sv->end = ECHO_END_NO_MEMORY;
        return 0;
    }
    for (;;) {
        uint64_t deadline;
        if (!await_input(self, sv, &deadline))
            return 0;
        size_t want = sv->stop_seen && sv->stop_left < room ? sv->stop_left : room;
        ssize_t n = vt_read(self, buf, want, deadline, !sv->stop_seen);   /* parks */
        if (n > 0) {
            if (sv->stop_seen)
                sv->stop_left -= (size_t)n;
            return (size_t)n;
        }
        if (n == -ETIMEDOUT || n == -ECANCELED)
            continue;               /* await_input says what it meant */
        sv->end = n == 0 ? ECHO_END_EOF : n == -ECONNRESET ? ECHO_END_RESET
                                                           : ECHO_END_IO_ERROR;
        return 0;
    }
}

/* The n bytes just read: answer, restart the clocks, publish. Returns
 * true when the connection ends (sv->end says why). */
static bool answer_read(struct vthread *self, struct serving *sv, size_t n)
{
    struct board *b = vt_board(self);
    bool ends = false;
    sv->read_ns = now_ns();
    echo_session_commit(&sv->session, n);
    sv->last_read_ns = sv->read_ns;
    uint64_t batch = answer_lines(self, sv, &ends);
    sv->lines += batch;
    if (echo_decoder_pending(&sv->session.decoder) == 0)
        sv->partial_since_ns = 0;
    else if (sv->partial_since_ns == 0 || batch > 0)
        sv->partial_since_ns = sv->read_ns;
    probe_wrote(b, vt_on_board(self), n, sv->replies.bytes, batch);
    return ends;
}

/* The heart: a connection's whole life, as BIO's thread lives it. */
static void conn_main(struct vthread *self, void *arg)
{
    struct vthread_server *s = arg;
    struct serving sv = { .opts = &s->opts, .self = self, .end = ECHO_END_NO_MEMORY };
    sv.replies = (struct reply_batch){ .board = vt_board(self), .write_all = write_replies,
                                       .to = &sv };

    if (echo_session_init(&sv.session, "vthread", vt_id(self), s->opts.max_line) == 0) {
        sv.last_read_ns = now_ns();
        for (;;) {
            size_t n = read_input(self, &sv);                    /* parks */
            if (n == 0 || answer_read(self, &sv, n))
                break;
        }
        echo_session_free(&sv.session);
    }
    bool stopping = vt_stopping(self);
    if (echo_end_lingers(sv.end) || stopping)
        vt_lingering_close(self, s->opts.linger_ms);
    else
        vt_close(self);
    atomic_fetch_sub(&s->open, 1);
    probe_conn_ended(s->board, vt_id(self), sv.end, stopping, sv.lines);
}

/* ---- the acceptor thread ------------------------------------------------------------ */

static void on_accept(void *owner, int fd, uint64_t id)
{
    struct vthread_server *s = owner;
    if (s->opts.max_conns > 0 && atomic_load(&s->open) >= (uint64_t)s->opts.max_conns) {
        char why[64];
        snprintf(why, sizeof(why), "limit of %d connections open (--max-conns)",
                 s->opts.max_conns);
        acceptor_refuse(&s->acceptor, fd, id, why);
        return;
    }
    atomic_fetch_add(&s->open, 1);
    probe_conn_opened(s->board);
    int rc = vt_spawn(s->rt, fd, id, conn_main, s);
    if (rc < 0) {
        atomic_fetch_sub(&s->open, 1);
        probe_conn_unserved(s->board);
        acceptor_refuse(&s->acceptor, fd, id, "no memory for a virtual thread's stack");
    }
}

/* ---- lifetime ------------------------------------------------------------------------ */

struct vthread_server *vthread_start(const struct server_opts *opts)
{
    struct vthread_server *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->opts = *opts;
    net_ignore_sigpipe();
    int rc = acceptor_open(&s->acceptor, &s->opts.listen);
    if (rc < 0)
        goto out_free;
    char own[96];
    snprintf(own, sizeof(own), " carriers=%d stack=%zu handoff-ms=%d%s",
             opts->carriers > 0 ? opts->carriers : vt_default_carriers(),
             opts->stack_bytes ? opts->stack_bytes : (size_t)VT_STACK_DEFAULT_BYTES,
             opts->handoff_ms, opts->pin ? " pin" : "");
    s->board = server_open_board("vthread", &s->opts, own);
    struct vt_runtime_opts ro = { .carriers = opts->carriers, .stack_bytes = opts->stack_bytes,
                                  .handoff_ms = opts->handoff_ms, .pin = opts->pin,
                                  .board = s->board };
    s->rt = vt_runtime_start(&ro);
    if (!s->rt) {
        rc = -errno;
        goto out_close_board;
    }
    rc = acceptor_start(&s->acceptor, s->board, on_accept, NULL, s);
    if (rc < 0)
        goto out_free_runtime;
    return s;

out_free_runtime:
    vt_runtime_free(s->rt);
out_close_board:
    acceptor_stop(&s->acceptor);
    probe_closed(s->board);
out_free:
    free(s);
    errno = -rc;
    return NULL;
}

uint16_t vthread_port(const struct vthread_server *s)
{
    return acceptor_port(&s->acceptor);
}

uint64_t vthread_handoffs(struct vthread_server *s)
{
    return vt_runtime_handoffs(s->rt);
}

void vthread_stop(struct vthread_server *s)
{
    /* 1. No new connections; every vthread waiting for input is resumed,
     *    answers what the kernel held for it at that moment, and ends. */
    probe_stopping(s->board);
    acceptor_stop(&s->acceptor);
    vt_runtime_stop_input(s->rt);
    /* 2. Wait for the last of them (a !sleep finishes first). */
    vt_runtime_wait_empty(s->rt);
    /* 3. End the carriers and the monitor, then free. */
    vt_runtime_free(s->rt);
    probe_closed(s->board);
    free(s);
}
