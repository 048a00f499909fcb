/* load.c -- echo clients that verify every byte. See load.h.
 *
 * Each client thread owns a share of the connections and serves them with
 * one epoll loop: nonblocking connect, send while the window allows, read,
 * cut the input into lines and compare each with the line it answers.
 *
 *   closed loop: a connection sends while fewer than --depth lines wait
 *   open loop:   line k of a thread is due at t0 + k / rate_per_thread and
 *                goes to the thread's connections in turn; its latency is
 *                counted from that due time, however late it really left
 */
#include "load.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "net/net.h"
#include "net/clock.h"

#define LOAD_IO_CHUNK_BYTES 65536      /* extra room in each buffer */
#define LOAD_CMD_MAX_BYTES 32          /* "!sleep 60000\n" and friends */
#define LOAD_SWEEP_INTERVAL_NS 100000000ull /* timeouts checked every 100 ms */
#define LOAD_MAX_EVENTS 256

enum conn_state { CONN_WAITING, CONN_CONNECTING, CONN_OPEN, CONN_DONE };

struct load_conn {
    int fd;
    uint32_t id;                  /* global connection number */
    enum conn_state state;
    uint64_t connect_at_ns;       /* when the ramp lets it connect */
    uint64_t quota;               /* lines it may send */
    uint64_t sent;                /* lines sent (the next one's seq) */
    uint64_t verified;            /* replies checked (the next one's seq) */
    uint64_t *due_ns;             /* ring: when line seq was meant to leave */
    uint64_t ring_cap;
    uint64_t last_progress_ns;    /* last byte received, or first line owed */
    char *out;                    /* lines made, not yet written */
    size_t out_off, out_len, out_cap;
    char *in;                     /* bytes received, not yet checked */
    size_t in_start, in_end, in_cap;
    bool want_out;                /* registered for EPOLLOUT */
};

struct load_worker {
    const struct load_opts *o;
    struct load_conn *conns;
    int nconns;
    int next_to_connect;          /* conns are sorted by connect_at_ns */
    int live;                     /* not yet DONE */
    int epfd;
    int timer_fd;                 /* timerfd: wakes epoll_wait to the ns */
    uint64_t timer_armed_ns;      /* the deadline it is set to */
    char *expect;                 /* the reply we are waiting for */
    uint64_t start_ns, stop_sending_ns, last_reply_ns;
    uint64_t open_next_ns;        /* open loop: when the next line is due */
    uint64_t open_interval_ns;
    int open_next_conn;           /* open loop: who gets it */
    pthread_t thread;
    struct load_report r;         /* this thread's share */
    atomic_uint_fast64_t progress_ok, progress_errors;
    atomic_bool finished;
};

/* ---- lines ---------------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

size_t load_make_line(const struct load_opts *o, uint32_t conn, uint64_t seq,
                      char *buf)
{
    uint64_t state = o->seed ^ ((uint64_t)conn << 40) ^ seq;
    double pick = (double)(splitmix64(&state) >> 11) / 9007199254740992.0 * 100;

    if (pick < o->cpu_pct)
        return (size_t)sprintf(buf, "!cpu %u\n", o->cpu_us);
    if (pick < o->cpu_pct + o->sleep_pct)
        return (size_t)sprintf(buf, "!sleep %u\n", o->sleep_ms);
    if (pick < o->cpu_pct + o->sleep_pct + o->task_pct)
        return (size_t)sprintf(buf, "!task %u\n", o->task_us);

    /* Any byte but '\n', so that binary data is tested too; never '!'
     * first, or a line could turn into a command by chance. */
    size_t n = o->line_bytes - 1;
    for (size_t i = 0; i < n; i += 8) {
        uint64_t bits = splitmix64(&state);
        for (size_t j = i; j < n && j < i + 8; j++, bits >>= 8)
            buf[j] = (char)((bits & 0xff) == '\n' ? 'n' : bits & 0xff);
    }
    if (n > 0 && buf[0] == '!')
        buf[0] = '?';
    buf[n] = '\n';
    return o->line_bytes;
}

/* ---- errors and endings --------------------------------------------------- */

static const char *const error_names[LOAD_ERR_COUNT] = {
    [LOAD_ERR_CONNECT] = "connect",     [LOAD_ERR_RESET] = "reset",
    [LOAD_ERR_CLOSED] = "closed",       [LOAD_ERR_MISMATCH] = "mismatch",
    [LOAD_ERR_BUSY] = "busy",           [LOAD_ERR_TOO_LONG] = "line-too-long",
    [LOAD_ERR_BAD_ARGUMENT] = "bad-argument",
    [LOAD_ERR_OTHER_ERR] = "other-err", [LOAD_ERR_TIMEOUT] = "timeout",
};

const char *load_error_name(enum load_error e)
{
    return e < LOAD_ERR_COUNT ? error_names[e] : "?";
}

static void count_error(struct load_worker *w, enum load_error e)
{
    w->r.errors[e]++;
    atomic_fetch_add_explicit(&w->progress_errors, 1, memory_order_relaxed);
}

static void conn_finish(struct load_worker *w, struct load_conn *c)
{
    if (c->fd >= 0) {
        epoll_ctl(w->epfd, EPOLL_CTL_DEL, c->fd, NULL);
        close(c->fd);
        c->fd = -1;
    }
    c->state = CONN_DONE;
    w->live--;
}

static void conn_fail(struct load_worker *w, struct load_conn *c,
                      enum load_error e)
{
    count_error(w, e);
    conn_finish(w, c);
}

static bool conn_owes(const struct load_conn *c)
{
    return c->verified < c->sent;
}

/* ---- sending -------------------------------------------------------------- */

static size_t line_max_bytes(const struct load_opts *o)
{
    return o->line_bytes > LOAD_CMD_MAX_BYTES ? o->line_bytes : LOAD_CMD_MAX_BYTES;
}

/* May connection c take one more line now? */
static bool conn_can_take(const struct load_worker *w, const struct load_conn *c,
                          uint64_t now)
{
    const struct load_opts *o = w->o;
    if (c->state != CONN_OPEN || c->sent >= c->quota || now >= w->stop_sending_ns)
        return false;
    if (c->out_len - c->out_off + line_max_bytes(o) > c->out_cap)
        return false;
    uint64_t window = o->rate > 0 ? c->ring_cap : (uint64_t)o->depth;
    return c->sent - c->verified < window;
}

static void conn_add_line(struct load_worker *w, struct load_conn *c,
                          uint64_t due_ns)
{
    if (c->out_off > 0 && c->out_len + line_max_bytes(w->o) > c->out_cap) {
        memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
        c->out_len -= c->out_off;
        c->out_off = 0;
    }
    if (!conn_owes(c))
        c->last_progress_ns = due_ns;   /* the wait for a reply starts now */
    c->out_len += load_make_line(w->o, c->id, c->sent, c->out + c->out_len);
    c->due_ns[c->sent % c->ring_cap] = due_ns;
    c->sent++;
    w->r.lines_sent++;
}

static void conn_watch(struct load_worker *w, struct load_conn *c, bool out)
{
    if (c->want_out == out)
        return;
    struct epoll_event ev = { .events = EPOLLIN | (out ? EPOLLOUT : 0),
                              .data.ptr = c };
    epoll_ctl(w->epfd, EPOLL_CTL_MOD, c->fd, &ev);
    c->want_out = out;
}

/* Write what is waiting. Returns false if the connection died. */
static bool conn_flush(struct load_worker *w, struct load_conn *c)
{
    if (c->out_off < c->out_len) {
        ssize_t n = net_write(c->fd, c->out + c->out_off, c->out_len - c->out_off);
        if (n < 0 && n != -EAGAIN) {
            conn_fail(w, c, LOAD_ERR_RESET);
            return false;
        }
        if (n > 0) {
            c->out_off += (size_t)n;
            w->r.bytes_sent += (uint64_t)n;
        }
    }
    if (c->out_off == c->out_len)
        c->out_off = c->out_len = 0;
    conn_watch(w, c, c->out_off < c->out_len);
    return true;
}

/* Closed loop: fill the window, then write. */
static void conn_send_closed(struct load_worker *w, struct load_conn *c,
                             uint64_t now)
{
    while (conn_can_take(w, c, now))
        conn_add_line(w, c, now);
    conn_flush(w, c);
}

/* Open loop: hand out every line that is due, in turn. */
static void send_due_open(struct load_worker *w, uint64_t now)
{
    int tried = 0;
    while (w->open_next_ns <= now && w->open_next_ns < w->stop_sending_ns &&
           tried < w->nconns) {
        struct load_conn *c = &w->conns[w->open_next_conn];
        if (c->state == CONN_DONE || c->sent >= c->quota) {
            w->open_next_conn = (w->open_next_conn + 1) % w->nconns;
            tried++;                  /* give its turn to the next one */
            continue;
        }
        if (!conn_can_take(w, c, now))
            break;                    /* late: the due time keeps counting */
        conn_add_line(w, c, w->open_next_ns);
        conn_flush(w, c);
        w->open_next_ns += w->open_interval_ns;
        w->open_next_conn = (w->open_next_conn + 1) % w->nconns;
        tried = 0;
    }
}

/* ---- receiving ------------------------------------------------------------ */

static enum load_error classify_err_reply(const char *line, size_t len)
{
    static const struct { const char *text; enum load_error e; } known[] = {
        { "!err busy", LOAD_ERR_BUSY },
        { "!err line-too-long", LOAD_ERR_TOO_LONG },
        { "!err bad-argument", LOAD_ERR_BAD_ARGUMENT },
    };
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
        size_t n = strlen(known[i].text);
        if (len >= n + 1 && memcmp(line, known[i].text, n) == 0 &&
            (line[n] == '\n' || line[n] == '\r'))
            return known[i].e;
    }
    return LOAD_ERR_OTHER_ERR;
}

/* Check one reply line. Returns false if the connection is finished. */
static bool conn_check_line(struct load_worker *w, struct load_conn *c,
                            const char *line, size_t len, uint64_t now)
{
    if (!conn_owes(c)) {
        conn_fail(w, c, LOAD_ERR_MISMATCH);   /* a reply nobody asked for */
        return false;
    }
    size_t want = load_make_line(w->o, c->id, c->verified, w->expect);
    if (len == want && memcmp(line, w->expect, len) == 0) {
        hist_record(&w->r.latency_ns, now - c->due_ns[c->verified % c->ring_cap]);
        c->verified++;
        w->r.lines_ok++;
        w->last_reply_ns = now;
        atomic_fetch_add_explicit(&w->progress_ok, 1, memory_order_relaxed);
        return true;
    }
    if (len > 5 && memcmp(line, "!err ", 5) == 0) {
        enum load_error e = classify_err_reply(line, len);
        c->verified++;
        if (e == LOAD_ERR_BAD_ARGUMENT) {     /* the server keeps the line open */
            count_error(w, e);
            return true;
        }
        conn_fail(w, c, e);                   /* busy, too long: it closes */
        return false;
    }
    conn_fail(w, c, LOAD_ERR_MISMATCH);
    return false;
}

/* Read once and check every complete line. Returns false if finished. */
static bool conn_read(struct load_worker *w, struct load_conn *c, uint64_t now)
{
    if (c->in_end == c->in_cap) {
        memmove(c->in, c->in + c->in_start, c->in_end - c->in_start);
        c->in_end -= c->in_start;
        c->in_start = 0;
        if (c->in_end == c->in_cap) {      /* longer than any line we sent */
            conn_fail(w, c, LOAD_ERR_MISMATCH);
            return false;
        }
    }
    ssize_t n = net_read(c->fd, c->in + c->in_end, c->in_cap - c->in_end);
    if (n == -EAGAIN)
        return true;
    if (n < 0) {
        conn_fail(w, c, LOAD_ERR_RESET);
        return false;
    }
    if (n == 0) {
        if (conn_owes(c))
            conn_fail(w, c, LOAD_ERR_CLOSED);
        else
            conn_finish(w, c);
        return false;
    }
    c->in_end += (size_t)n;
    w->r.bytes_received += (uint64_t)n;
    c->last_progress_ns = now;

    for (;;) {
        char *from = c->in + c->in_start;
        char *nl = memchr(from, '\n', c->in_end - c->in_start);
        if (!nl)
            break;
        size_t len = (size_t)(nl - from) + 1;
        if (!conn_check_line(w, c, from, len, now))
            return false;
        c->in_start += len;
    }
    if (c->in_start == c->in_end)
        c->in_start = c->in_end = 0;
    return true;
}

/* ---- connecting ----------------------------------------------------------- */

static void conn_connect(struct load_worker *w, struct load_conn *c, uint64_t now)
{
    const struct load_opts *o = w->o;
    c->fd = net_connect(&o->addr, o->addr_len, true);
    if (c->fd < 0) {
        conn_fail(w, c, LOAD_ERR_CONNECT);
        return;
    }
    struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT, .data.ptr = c };
    if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, c->fd, &ev) < 0) {
        conn_fail(w, c, LOAD_ERR_CONNECT);
        return;
    }
    c->want_out = true;
    c->state = CONN_CONNECTING;
    c->last_progress_ns = now;
}

static void conn_connected(struct load_worker *w, struct load_conn *c, uint64_t now)
{
    int err = 0;
    socklen_t len = sizeof(err);
    getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) {
        conn_fail(w, c, LOAD_ERR_CONNECT);
        return;
    }
    c->state = CONN_OPEN;
    c->last_progress_ns = now;
    w->r.conns_opened++;
    if (w->o->rate > 0)
        conn_flush(w, c);
    else
        conn_send_closed(w, c, now);
}

/* ---- the client thread ---------------------------------------------------- */

static void on_event(struct load_worker *w, struct load_conn *c, uint32_t events,
                     uint64_t now)
{
    if (c->state == CONN_CONNECTING) {
        conn_connected(w, c, now);
        return;
    }
    if (c->state != CONN_OPEN)
        return;
    if ((events & (EPOLLIN | EPOLLERR | EPOLLHUP)) && !conn_read(w, c, now))
        return;
    bool ending = now >= w->stop_sending_ns || c->verified >= c->quota;
    if (ending && !conn_owes(c) && c->out_off == c->out_len) {
        conn_finish(w, c);
        return;
    }
    if (w->o->rate > 0)
        conn_flush(w, c);
    else
        conn_send_closed(w, c, now);
}

/* Every 100 ms: end connections that wait too long, and idle ones once the
 * sending is over. */
static void sweep(struct load_worker *w, uint64_t now)
{
    uint64_t timeout_ns = (uint64_t)(w->o->timeout_s * 1e9);
    for (int i = 0; i < w->nconns; i++) {
        struct load_conn *c = &w->conns[i];
        if (c->state == CONN_CONNECTING && now - c->last_progress_ns > timeout_ns)
            conn_fail(w, c, LOAD_ERR_CONNECT);
        else if (c->state == CONN_OPEN && conn_owes(c) &&
                 now - c->last_progress_ns > timeout_ns)
            conn_fail(w, c, LOAD_ERR_TIMEOUT);
        else if (c->state == CONN_OPEN && !conn_owes(c) &&
                 (now >= w->stop_sending_ns || c->sent >= c->quota))
            conn_finish(w, c);
    }
}

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* Make the timerfd fire at wake_ns (CLOCK_MONOTONIC), unless it already
 * will. A fired timerfd is only re-armed, never read: setting it again
 * clears its readiness. */
static void arm_timer(struct load_worker *w, uint64_t wake_ns)
{
    if (wake_ns == w->timer_armed_ns)
        return;
    if (wake_ns == 0)
        wake_ns = 1;                     /* 0 would disarm it */
    struct itimerspec its = {
        .it_value = { .tv_sec = (time_t)(wake_ns / 1000000000u),
                      .tv_nsec = (long)(wake_ns % 1000000000u) } };
    timerfd_settime(w->timer_fd, TFD_TIMER_ABSTIME, &its, NULL);
    w->timer_armed_ns = wake_ns;
}

static void *worker_main(void *arg)
{
    struct load_worker *w = arg;
    struct epoll_event events[LOAD_MAX_EVENTS];
    uint64_t next_sweep_ns = w->start_ns + LOAD_SWEEP_INTERVAL_NS;

    while (w->live > 0) {
        uint64_t now = now_ns();
        if (w->o->stop && atomic_load(w->o->stop) && now < w->stop_sending_ns) {
            /* Stopped early: finish what is in flight, connect no more. */
            w->stop_sending_ns = now;
            for (; w->next_to_connect < w->nconns; w->next_to_connect++)
                conn_finish(w, &w->conns[w->next_to_connect]);
            if (w->live == 0)
                break;
        }
        while (w->next_to_connect < w->nconns &&
               w->conns[w->next_to_connect].connect_at_ns <= now)
            conn_connect(w, &w->conns[w->next_to_connect++], now);
        if (w->o->rate > 0)
            send_due_open(w, now);
        if (now >= next_sweep_ns) {
            sweep(w, now);
            next_sweep_ns = now + LOAD_SWEEP_INTERVAL_NS;
        }

        /* Sleep until the next thing that is due, to the nanosecond: a
         * timerfd, because epoll_wait's timeout counts whole milliseconds
         * and an open-loop schedule needs better. */
        uint64_t wake_ns = next_sweep_ns;
        if (w->next_to_connect < w->nconns)
            wake_ns = min_u64(wake_ns, w->conns[w->next_to_connect].connect_at_ns);
        if (w->o->rate > 0 && w->open_next_ns < w->stop_sending_ns)
            wake_ns = min_u64(wake_ns, w->open_next_ns);
        if (now < w->stop_sending_ns)
            wake_ns = min_u64(wake_ns, w->stop_sending_ns);
        arm_timer(w, wake_ns);
        int n = epoll_wait(w->epfd, events, LOAD_MAX_EVENTS, -1);
        now = now_ns();
        for (int i = 0; i < n; i++) {
            if (events[i].data.ptr == NULL)
                w->timer_armed_ns = 0;      /* fired: re-arm next time */
            else
                on_event(w, events[i].data.ptr, events[i].events, now);
        }
    }
    atomic_store(&w->finished, true);
    return NULL;
}

/* ---- setting up and reporting -------------------------------------------- */

void load_opts_init(struct load_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->conns = 1;
    o->depth = 1;
    o->line_bytes = 64;
    o->duration_s = 10;
    o->threads = 1;
    o->timeout_s = 5;
    o->seed = 1;
}

int load_opts_check(const struct load_opts *o, char *err, size_t err_len)
{
    const char *why = NULL;
    if (o->conns < 1 || o->conns > 1000000)
        why = "--conns must be from 1 to 1000000";
    else if (o->depth < 1 || o->depth > LOAD_OPEN_LOOP_MAX_IN_FLIGHT)
        why = "--depth must be from 1 to 4096";
    else if (o->line_bytes < 1 || o->line_bytes > (64u << 20))
        why = "--size must be from 1 byte to 64 MiB ('\\n' included)";
    else if (o->duration_s <= 0 && o->total_lines == 0)
        why = "give --duration or --lines";
    else if (o->rate < 0)
        why = "--rate must not be negative";
    else if (!(o->cpu_pct >= 0 && o->sleep_pct >= 0 && o->task_pct >= 0 &&
               o->cpu_pct + o->sleep_pct + o->task_pct <= 100))   /* NaN fails too */
        why = "--mix shares must add up to at most 100%";
    else if (o->threads < 1 || o->threads > 64)
        why = "--threads must be from 1 to 64";
    else if (o->timeout_s <= 0)
        why = "--timeout must be positive";
    else if (o->ramp_s < 0)
        why = "--ramp must not be negative";
    else if (o->waves > 0 && (o->duration_s <= 0 || o->ramp_s > 0))
        why = "--waves needs --duration, and not --ramp";
    if (why) {
        snprintf(err, err_len, "%s", why);
        return -EINVAL;
    }
    return 0;
}

static int worker_setup(struct load_worker *w, const struct load_opts *o,
                        int index, uint64_t start_ns)
{
    memset(w, 0, sizeof(*w));
    w->o = o;
    w->epfd = w->timer_fd = -1;
    w->epfd = epoll_create1(EPOLL_CLOEXEC);
    w->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    if (w->epfd < 0 || w->timer_fd < 0)
        return -errno;
    struct epoll_event tev = { .events = EPOLLIN, .data.ptr = NULL };
    if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->timer_fd, &tev) < 0)
        return -errno;
    hist_init(&w->r.latency_ns);
    w->start_ns = start_ns;
    w->stop_sending_ns = o->duration_s > 0
        ? start_ns + (uint64_t)(o->duration_s * 1e9) : UINT64_MAX;
    w->expect = malloc(line_max_bytes(o));
    for (int i = index; i < o->conns; i += o->threads)
        w->nconns++;
    w->conns = calloc((size_t)w->nconns, sizeof(*w->conns));
    if (!w->expect || !w->conns)
        return -ENOMEM;
    w->live = w->nconns;

    uint64_t ring_cap = o->rate > 0 ? LOAD_OPEN_LOOP_MAX_IN_FLIGHT : (uint64_t)o->depth;
    size_t line_max = line_max_bytes(o);
    for (int k = 0; k < w->nconns; k++) {
        struct load_conn *c = &w->conns[k];
        uint32_t id = (uint32_t)(index + k * o->threads);
        c->fd = -1;
        c->id = id;
        if (o->waves > 0)             /* wave k connects at k/waves of the run */
            c->connect_at_ns = start_ns + (uint64_t)(o->duration_s * 1e9 *
                                                     (id * (uint64_t)o->waves / o->conns) /
                                                     o->waves);
        else
            c->connect_at_ns = start_ns + (uint64_t)(o->ramp_s * 1e9 * id / o->conns);
        c->quota = UINT64_MAX;
        if (o->total_lines > 0)
            c->quota = o->total_lines / (uint64_t)o->conns +
                       (id < o->total_lines % (uint64_t)o->conns);
        c->ring_cap = ring_cap;
        c->due_ns = calloc(ring_cap, sizeof(uint64_t));
        c->out_cap = line_max + LOAD_IO_CHUNK_BYTES;
        c->in_cap = line_max + LOAD_IO_CHUNK_BYTES;
        c->out = malloc(c->out_cap);
        c->in = malloc(c->in_cap);
        if (!c->due_ns || !c->out || !c->in)
            return -ENOMEM;
    }
    if (o->rate > 0) {
        double thread_rate = o->rate / o->threads;
        w->open_interval_ns = (uint64_t)(1e9 / thread_rate);
        if (w->open_interval_ns == 0)
            w->open_interval_ns = 1;
        /* Offset each thread by a fraction of an interval so that the
         * threads do not all send at the same instant. */
        w->open_next_ns = start_ns + (uint64_t)(o->ramp_s * 1e9) +
                          w->open_interval_ns * (uint64_t)index / (uint64_t)o->threads;
    }
    return 0;
}

static void worker_free(struct load_worker *w)
{
    for (int k = 0; k < w->nconns && w->conns; k++) {
        struct load_conn *c = &w->conns[k];
        if (c->fd >= 0)
            close(c->fd);
        free(c->due_ns);
        free(c->out);
        free(c->in);
    }
    free(w->conns);
    free(w->expect);
    if (w->epfd >= 0)
        close(w->epfd);
    if (w->timer_fd >= 0)
        close(w->timer_fd);
}

static void print_progress(struct load_worker *ws, int nw, uint64_t start_ns)
{
    uint64_t ok = 0, errors = 0;
    int live = 0;
    for (int i = 0; i < nw; i++) {
        ok += atomic_load(&ws[i].progress_ok);
        errors += atomic_load(&ws[i].progress_errors);
        live += !atomic_load(&ws[i].finished);
    }
    double t = (double)(now_ns() - start_ns) / 1e9;
    fprintf(stderr, "\r  %6.1fs  %12llu lines  %10.0f lines/s  %llu errors  %d/%d threads busy ",
            t, (unsigned long long)ok, t > 0 ? (double)ok / t : 0.0,
            (unsigned long long)errors, live, nw);
    fflush(stderr);
}

int load_run(const struct load_opts *o, struct load_report *r)
{
    int rc = 0;
    struct load_worker *ws = calloc((size_t)o->threads, sizeof(*ws));
    if (!ws)
        return -ENOMEM;
    memset(r, 0, sizeof(*r));
    hist_init(&r->latency_ns);
    net_ignore_sigpipe();
    /* Linux lets a sleeping thread's timer fire up to its slack late (50
     * us by default) to batch wakeups: an open loop's lines would leave
     * late, and their latency (counted from when each was due) carry the
     * client's own lateness. 1 ns: fire when due. The client threads
     * made below inherit it. */
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);

    uint64_t start_ns = now_ns();
    int started = 0;
    for (int i = 0; i < o->threads; i++)
        ws[i].epfd = ws[i].timer_fd = -1;   /* nothing to close yet */
    for (int i = 0; i < o->threads && rc == 0; i++)
        rc = worker_setup(&ws[i], o, i, start_ns);
    for (int i = 0; i < o->threads && rc == 0; i++) {
        rc = -pthread_create(&ws[i].thread, NULL, worker_main, &ws[i]);
        if (rc == 0)
            started++;
    }
    if (o->progress) {
        bool all_done = false;
        while (!all_done) {
            struct timespec tick = { .tv_sec = 0, .tv_nsec = 250000000 };
            nanosleep(&tick, NULL);
            print_progress(ws, started, start_ns);
            all_done = true;
            for (int i = 0; i < started; i++)
                all_done &= atomic_load(&ws[i].finished);
        }
        fputc('\n', stderr);
    }

    uint64_t last_ns = start_ns;
    for (int i = 0; i < started; i++) {
        pthread_join(ws[i].thread, NULL);
        struct load_report *s = &ws[i].r;
        r->lines_sent += s->lines_sent;
        r->lines_ok += s->lines_ok;
        r->bytes_sent += s->bytes_sent;
        r->bytes_received += s->bytes_received;
        r->conns_opened += s->conns_opened;
        for (int e = 0; e < LOAD_ERR_COUNT; e++)
            r->errors[e] += s->errors[e];
        hist_merge(&r->latency_ns, &s->latency_ns);
        if (ws[i].last_reply_ns > last_ns)
            last_ns = ws[i].last_reply_ns;
    }
    for (int e = 0; e < LOAD_ERR_COUNT; e++)
        r->errors_total += r->errors[e];
    r->elapsed_s = (double)(last_ns - start_ns) / 1e9;
    if (r->elapsed_s > 0) {
        r->lines_per_s = (double)r->lines_ok / r->elapsed_s;
        r->mb_per_s = (double)r->bytes_received / 1e6 / r->elapsed_s;
    }
    for (int i = 0; i < o->threads; i++)
        worker_free(&ws[i]);
    free(ws);
    return rc;
}

static void print_duration(FILE *out, uint64_t ns)
{
    if (ns < 10000)
        fprintf(out, "%lluns", (unsigned long long)ns);
    else if (ns < 10000000)
        fprintf(out, "%.1fus", (double)ns / 1e3);
    else if (ns < 10000000000ull)
        fprintf(out, "%.1fms", (double)ns / 1e6);
    else
        fprintf(out, "%.2fs", (double)ns / 1e9);
}

void load_report_print(const struct load_opts *o, const struct load_report *r,
                       FILE *out)
{
    static const double pcts[] = { 50, 90, 99, 99.9 };
    static const char *const names[] = { "p50", "p90", "p99", "p99.9" };

    fprintf(out, "load %s: %d conns, depth %d, %zu-byte lines, %s",
            o->target ? o->target : "?", o->conns, o->depth, o->line_bytes,
            o->rate > 0 ? "open loop" : "closed loop");
    if (o->rate > 0)
        fprintf(out, " at %.0f lines/s", o->rate);
    fprintf(out, ", %d thread%s\n", o->threads, o->threads == 1 ? "" : "s");
    fprintf(out, "  lines    %llu ok of %llu sent in %.2fs: %.0f lines/s, %.2f MB/s\n",
            (unsigned long long)r->lines_ok, (unsigned long long)r->lines_sent,
            r->elapsed_s, r->lines_per_s, r->mb_per_s);
    fprintf(out, "  latency ");
    for (int i = 0; i < 4; i++) {
        fprintf(out, " %s ", names[i]);
        print_duration(out, hist_percentile(&r->latency_ns, pcts[i]));
    }
    fprintf(out, " max ");
    print_duration(out, atomic_load(&r->latency_ns.max));
    fprintf(out, "\n  conns    %llu of %d opened\n",
            (unsigned long long)r->conns_opened, o->conns);
    fprintf(out, "  errors   ");
    if (r->errors_total == 0)
        fprintf(out, "none");
    for (int e = 0; e < LOAD_ERR_COUNT; e++)
        if (r->errors[e])
            fprintf(out, "%s %llu  ", load_error_name((enum load_error)e),
                    (unsigned long long)r->errors[e]);
    fputc('\n', out);
}

void load_report_json(const struct load_opts *o, const struct load_report *r,
                      FILE *out)
{
    fprintf(out, "{\"target\":\"%s\",\"conns\":%d,\"depth\":%d,\"size\":%zu,"
            "\"rate\":%.3f,\"threads\":%d,", o->target ? o->target : "",
            o->conns, o->depth, o->line_bytes, o->rate, o->threads);
    fprintf(out, "\"lines_sent\":%llu,\"lines_ok\":%llu,\"bytes_sent\":%llu,"
            "\"bytes_received\":%llu,\"conns_opened\":%llu,\"elapsed_s\":%.6f,"
            "\"lines_per_s\":%.1f,\"mb_per_s\":%.3f,",
            (unsigned long long)r->lines_sent, (unsigned long long)r->lines_ok,
            (unsigned long long)r->bytes_sent,
            (unsigned long long)r->bytes_received,
            (unsigned long long)r->conns_opened, r->elapsed_s, r->lines_per_s,
            r->mb_per_s);
    fprintf(out, "\"latency_us\":{\"p50\":%.1f,\"p90\":%.1f,\"p99\":%.1f,"
            "\"p99.9\":%.1f,\"max\":%.1f},",
            hist_percentile(&r->latency_ns, 50) / 1e3,
            hist_percentile(&r->latency_ns, 90) / 1e3,
            hist_percentile(&r->latency_ns, 99) / 1e3,
            hist_percentile(&r->latency_ns, 99.9) / 1e3,
            atomic_load(&r->latency_ns.max) / 1e3);
    fprintf(out, "\"errors\":{");
    for (int e = 0; e < LOAD_ERR_COUNT; e++)
        fprintf(out, "%s\"%s\":%llu", e ? "," : "",
                load_error_name((enum load_error)e),
                (unsigned long long)r->errors[e]);
    fprintf(out, "},\"errors_total\":%llu}\n", (unsigned long long)r->errors_total);
}
