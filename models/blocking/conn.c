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

/* ---- the registry ------------------------------------------------------- */

/* The wake signal's handler: nothing to do. What matters is that it is
 * installed without SA_RESTART, so the read() it interrupts fails with
 * EINTR instead of being restarted by the kernel. */
static void on_wake_signal(int sig)
{
    (void)sig;
}

static int wake_handler_rc = -1;

static void install_wake_handler(void)
{
    struct sigaction sa = { .sa_handler = on_wake_signal };
    sigemptyset(&sa.sa_mask);
    wake_handler_rc = sigaction(CONN_WAKE_SIGNAL, &sa, NULL) == 0 ? 0 : -errno;
}

int conn_registry_init(struct conn_registry *r)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, install_wake_handler);   /* once per process */
    if (wake_handler_rc < 0)
        return wake_handler_rc;
    int rc = clock_cond_init(&r->changed);    /* the stop's retries: monotonic */
    if (rc < 0)
        return rc;
    pthread_mutex_init(&r->lock, NULL);
    r->count = 0;
    r->serving = NULL;
    atomic_init(&r->stopping, false);
    return 0;
}

void conn_registry_destroy(struct conn_registry *r)
{
    pthread_cond_destroy(&r->changed);
    pthread_mutex_destroy(&r->lock);
}

void conn_registry_add(struct conn_registry *r)
{
    pthread_mutex_lock(&r->lock);
    r->count++;
    pthread_mutex_unlock(&r->lock);
}

uint64_t conn_registry_remove(struct conn_registry *r)
{
    pthread_mutex_lock(&r->lock);
    uint64_t left = --r->count;
    if (left == 0)
        pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);
    return left;
}

uint64_t conn_registry_count(struct conn_registry *r)
{
    pthread_mutex_lock(&r->lock);
    uint64_t n = r->count;
    pthread_mutex_unlock(&r->lock);
    return n;
}

/* c's thread begins serving it: on the list, where a stop finds it. The
 * wake signal is unblocked here, whatever mask the thread inherited. */
static void registry_enter(struct conn_registry *r, struct conn *c)
{
    sigset_t wake;
    sigemptyset(&wake);
    sigaddset(&wake, CONN_WAKE_SIGNAL);
    pthread_sigmask(SIG_UNBLOCK, &wake, NULL);
    c->thread = pthread_self();
    atomic_store(&c->phase, CONN_ANSWERING);
    pthread_mutex_lock(&r->lock);
    c->prev = NULL;
    c->next = r->serving;
    if (r->serving)
        r->serving->prev = c;
    r->serving = c;
    pthread_mutex_unlock(&r->lock);
}

/* c's thread is done with it: off the list before its fd is closed, and
 * before the thread ends, so a stop never signals a thread that is gone. */
static void registry_leave(struct conn_registry *r, struct conn *c)
{
    pthread_mutex_lock(&r->lock);
    if (c->prev)
        c->prev->next = c->next;
    else
        r->serving = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->prev = c->next = NULL;
    pthread_cond_broadcast(&r->changed);         /* a stop may wait for it */
    pthread_mutex_unlock(&r->lock);
}

/* c's thread saw the stop: a stop waiting for it may go on. */
static void registry_saw_stop(struct conn_registry *r, struct conn *c)
{
    pthread_mutex_lock(&r->lock);
    atomic_store(&c->phase, CONN_DRAINING);
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);
}

/* Count the threads that may be blocked in read() and have not seen the
 * stop, and signal them when signal_them says so. Under r->lock: each is
 * on the list, so alive (pthread_kill cannot fail with ESRCH). */
static int readers_not_stopped(struct conn_registry *r, bool signal_them)
{
    int readers = 0;
    for (struct conn *c = r->serving; c; c = c->next) {
        if (atomic_load(&c->phase) != CONN_READING)
            continue;
        if (signal_them)
            (void)pthread_kill(c->thread, CONN_WAKE_SIGNAL);
        readers++;
    }
    return readers;
}

void conn_registry_stop_input(struct conn_registry *r)
{
    pthread_mutex_lock(&r->lock);
    /* The flag first, then the phases (both sequentially consistent): a
     * thread stores READING before it loads the flag, so either it sees
     * the flag, or we see it READING and signal it. A connection that
     * begins serving later (a queued pool connection) sees the flag at
     * its first read. Each thread that saw the stop wakes us to count
     * again; the signals go again only once per CONN_WAKE_RETRY_MS, so a
     * thousand threads cost a thousand signals, not a million. */
    atomic_store(&r->stopping, true);
    uint64_t resend_ns = now_ns();
    for (;;) {
        bool resend = now_ns() >= resend_ns;
        if (readers_not_stopped(r, resend) == 0)
            break;
        if (resend)
            resend_ns = deadline_in_ms(CONN_WAKE_RETRY_MS);
        struct timespec at = timespec_at_ns(resend_ns);
        pthread_cond_timedwait(&r->changed, &r->lock, &at);
    }
    pthread_mutex_unlock(&r->lock);
}

void conn_registry_wait_empty(struct conn_registry *r)
{
    pthread_mutex_lock(&r->lock);
    while (r->count > 0)
        pthread_cond_wait(&r->changed, &r->lock);
    pthread_mutex_unlock(&r->lock);
}

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

/* The replies of one read, collected to leave in one sendmsg(): with
 * pipelined lines a write per line costs a syscall per line, the largest
 * share of a blocking thread's CPU (docs/performance.md). */
#define REPLY_BATCH_MAX 64      /* replies per write; more: write, go on */

struct reply_batch {
    struct iovec iov[REPLY_BATCH_MAX]; /* the replies, in order */
    int count;                  /* replies collected, not yet written */
    uint64_t lines;             /* the request lines they answer */
    uint64_t bytes;             /* their bytes */
    bool holds_who;             /* one points at the session's !who buffer,
                                   which the next !who overwrites */
};

/* Write iov[0..count) in order, all of it: net_writev (one sendmsg, EINTR
 * retried, MSG_NOSIGNAL: a peer gone is -EPIPE, not a signal) again after
 * each partial write, iov advanced past what went. A blocking socket with
 * SO_SNDTIMEO fails with -EAGAIN when the client stops reading. Returns 0
 * or -errno. */
static int write_iov_all(int fd, struct iovec *iov, int count)
{
    while (count > 0) {
        ssize_t n = net_writev(fd, iov, count);
        if (n < 0)
            return (int)n;
        count = net_iov_consume(&iov, count, (size_t)n);
    }
    return 0;
}

/* Write what the batch holds; its lines took from the read at read_ns to
 * now. The clock is read once per write, and the latency recorded for all
 * the batch's lines at once: the same measure in every model. */
static int flush_replies(struct board *board, int fd, struct reply_batch *rb,
                         uint64_t read_ns)
{
    if (rb->count == 0)
        return 0;
    int rc = write_iov_all(fd, rb->iov, rb->count);
    if (rc == 0)
        board_record_latency_n(board, now_ns() - read_ns, rb->lines);
    rb->count = 0;
    rb->lines = 0;
    rb->holds_who = false;
    return rc;
}

/* Add a reply to the batch; a full batch (or a second !who) is written
 * first. Returns 0 or -errno from that write. */
static int collect_reply(struct board *board, int fd, struct reply_batch *rb,
                         const struct echo_session *s,
                         const struct echo_reply *r, uint64_t read_ns)
{
    bool is_who = r->data == s->who;
    if (rb->count == REPLY_BATCH_MAX || (is_who && rb->holds_who)) {
        int rc = flush_replies(board, fd, rb, read_ns);
        if (rc < 0)
            return rc;
    }
    rb->iov[rb->count++] = (struct iovec){ .iov_base = (void *)r->data,
                                           .iov_len = r->len };
    rb->lines += r->lines;
    rb->bytes += r->len;
    rb->holds_who |= is_who;
    return 0;
}

static enum echo_end end_of_failed_write(int wrc)
{
    return wrc == -EAGAIN ? ECHO_END_STALLED
         : wrc == -ECONNRESET || wrc == -EPIPE ? ECHO_END_RESET
         : ECHO_END_IO_ERROR;
}

/* Answer every complete line the session holds, in order, replies
 * collected and written together. Work (!cpu, !sleep) first writes what is
 * collected: no reply waits behind another line's sleep, and the sleep
 * blocks only this thread. Returns true when the connection ends (*end
 * says why): a failed write, !quit, or a line too long (its error reply
 * written first). rb->bytes: the bytes of the replies this call wrote. */
static bool answer_lines(const struct conn_server *srv, struct conn *c,
                         struct echo_session *session, const char *thread_name,
                         struct board_thread_ref *me, uint64_t read_ns,
                         struct reply_batch *rb, uint64_t *batch_lines,
                         enum echo_end *end)
{
    struct board *board = srv->board;
    struct echo_reply reply;
    bool ends = false;
    int wrc = 0;
    rb->bytes = 0;                     /* this call's replies: publish_read's bytes out */
    while (!ends && echo_session_next(session, thread_name, SIZE_MAX, &reply)) {
        if (reply.work != ECHO_WORK_NONE) {
            if ((wrc = flush_replies(board, c->fd, rb, read_ns)) < 0)
                break;
            if (reply.work == ECHO_WORK_SLEEP)
                board_thread_state(board, me, STATE_BLOCKED_SLEEP);
            echo_do_work(&reply);     /* blocking is fine: a thread of our own */
            if (reply.work == ECHO_WORK_SLEEP)
                board_thread_state(board, me, STATE_RUNNING);
        }
        if (reply.error == ECHO_ERROR_BAD_ARGUMENT)
            board_add(board, CTR_ERR_BAD_ARGUMENT, 1);
        if (reply.error == ECHO_ERROR_LINE_TOO_LONG)
            board_add(board, CTR_ERR_LINE_TOO_LONG, 1);
        *batch_lines += reply.lines;
        if ((wrc = collect_reply(board, c->fd, rb, session, &reply, read_ns)) < 0)
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
        wrc = flush_replies(board, c->fd, rb, read_ns);
    if (wrc < 0) {
        *end = end_of_failed_write(wrc);
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

/* One read's figures on the board, added once per read, not per line:
 * with pipelined lines that keeps shared cache lines out of the hot path. */
static void publish_read(struct board *board, struct board_thread_ref *me,
                         uint64_t bytes_in, uint64_t bytes_out, uint64_t lines)
{
    board_add(board, CTR_BYTES_IN, bytes_in);
    board_add(board, CTR_BYTES_OUT, bytes_out);
    board_add(board, CTR_LINES, lines);
    board_thread_lines(board, me, lines);
    board_thread_bytes(board, me, bytes_in, bytes_out);
}

/* What a serving thread keeps between reads. */
struct serving {
    struct echo_session session;  /* the decoder and the reply buffers */
    struct reply_batch replies;   /* one read's replies, written together */
    uint64_t last_read_ns;        /* the idle clock (--idle-timeout) */
    uint64_t partial_since_ns;    /* the line clock (--line-timeout); 0: no partial line */
    uint64_t rcvtimeo_us;         /* SO_RCVTIMEO armed on the socket; 0: none */
    bool stop_seen;               /* a stop began: read what was held, then end */
    size_t stop_left;             /* bytes held at the stop, still to read */
};

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
            registry_saw_stop(srv->conns, c);
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
                         struct board_thread_ref *me, struct serving *sv,
                         enum echo_end *end)
{
    size_t room;
    char *buf = echo_session_space(&sv->session, &room);
    if (!buf) {
        *end = ECHO_END_NO_MEMORY;
        return 0;
    }
    board_thread_state(srv->board, me, STATE_BLOCKED_IO);
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
static bool answer_read(const struct conn_server *srv, struct conn *c,
                        const char *thread_name, struct board_thread_ref *me,
                        struct serving *sv, size_t n, uint64_t *lines,
                        enum echo_end *end)
{
    uint64_t read_ns = now_ns();
    board_thread_state_at(srv->board, me, STATE_RUNNING, read_ns);
    echo_session_commit(&sv->session, n);
    sv->last_read_ns = read_ns;

    uint64_t batch_lines = 0;
    bool closing = answer_lines(srv, c, &sv->session, thread_name, me, read_ns,
                                &sv->replies, &batch_lines, end);
    *lines += batch_lines;
    /* A partial line left over starts (or keeps) the line clock; one that
     * began after a complete line restarts it. */
    if (echo_decoder_pending(&sv->session.decoder) == 0)
        sv->partial_since_ns = 0;
    else if (sv->partial_since_ns == 0 || batch_lines > 0)
        sv->partial_since_ns = read_ns;
    publish_read(srv->board, me, n, sv->replies.bytes, batch_lines);
    return closing;
}

/* The heart of both blocking models: read, answer, until the end. */
enum echo_end conn_serve(const struct conn_server *srv, struct conn *c,
                         const char *thread_name,
                         struct board_thread_ref *me, uint64_t *lines)
{
    struct serving sv = { .replies = { .count = 0 } };
    enum echo_end end = ECHO_END_EOF;

    *lines = 0;
    if (echo_session_init(&sv.session, srv->model, c->id, srv->opts->max_line) < 0)
        return ECHO_END_NO_MEMORY;
    set_stall_timeout(c->fd, srv->opts->stall_timeout_ms);
    registry_enter(srv->conns, c);                       /* a stop sees us */
    sv.last_read_ns = now_ns();
    for (;;) {
        size_t n = read_input(srv, c, me, &sv, &end);      /* blocks */
        if (n == 0)
            break;                                       /* end says why */
        if (answer_read(srv, c, thread_name, me, &sv, n, lines, &end))
            break;
    }
    registry_leave(srv->conns, c);
    echo_session_free(&sv.session);
    return end;
}

void conn_finish(const struct conn_server *srv, struct conn_registry *r,
                 struct conn *c, struct board_thread_ref *on_board, enum echo_end end,
                 uint64_t lines)
{
    /* The registry's flag, not the acceptor's: the stop sets it first. */
    bool stopping = atomic_load(&r->stopping);
    conn_registry_remove(r);
    /* After an error reply, or when a stop cut a client off mid-stream,
     * linger: the last replies are read, not lost to a reset. The thread
     * waits in read for up to linger_ms, and says so: left "running" (a
     * !quit or an error reply ends there), its last stretch counted as
     * CPU time. */
    if (echo_end_lingers(end) || stopping) {
        board_thread_state(srv->board, on_board, STATE_BLOCKED_IO);
        net_lingering_close(c->fd, srv->opts->linger_ms);
    } else
        close(c->fd);
    c->fd = -1;
    board_conn_ended(srv->board, c->id, end, stopping, lines);
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
