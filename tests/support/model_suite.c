/* model_suite.c -- the shared echo suite. See model_suite.h.
 *
 * Every case starts the model on a free loopback port inside Check's forked
 * child, talks to it as a client would, and stops it; each has a timeout.
 */
#include "model_suite.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "echo/session.h"
#include "load/fleet.h"
#include "load/load.h"
#include "loop/loop.h"
#include "registry.h"
#include "probe/board_read.h"
#include "reactive/channel.h"
#include "probe/histogram.h"
#include "testnet.h"

static const char *model_under_test;   /* set before the runner forks */

void ts_opts(struct server_opts *o)
{
    server_opts_init(o);
    o->listen.port = 0;
    /* Pool threads above min end soon, so that a scenario's thread count
     * comes back to its baseline within the check's wait. */
    o->pool.idle_ms = 300;
}

void ts_start(struct test_server *t, const char *name,
              const struct server_opts *opts)
{
    t->model = model_find(name);
    ck_assert_msg(t->model != NULL, "no model called %s", name);
    /* A server must ignore SIGPIPE itself: one that forgets dies here. */
    signal(SIGPIPE, SIG_DFL);
    t->server = t->model->start(opts);
    ck_assert_msg(t->server != NULL, "%s did not start: %s", name,
                  strerror(errno));
    t->port = t->model->port(t->server);
    ck_assert_int_ne(t->port, 0);
    t->fds_before = tn_fd_count();
    tn_fd_names(t->fd_names_before, sizeof(t->fd_names_before));
    t->threads_before = tn_thread_count("");
    t->rss_before_kb = tn_rss_kb();
}

/* RSS may grow by what the test's own clients hold and by what malloc
 * keeps for reuse; a leak of a buffer per line or per connection, or an
 * unbounded queue, goes far past this. Under the sanitizers freed memory
 * stays resident on purpose (ASan's quarantine), so RSS says nothing. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif
enum { RSS_GROWTH_LIMIT_KB = 256 * 1024 };

/* Wait up to 10 s for this process to hold no more fds and threads than
 * it did before; *fds and *threads get the last look. The figures judged
 * are those of that look, not a fresh one: a second look may catch an fd
 * that something opens for a moment (the eintr shim's walk of
 * /proc/self/task did) and fail a clean stop. */
static void settle(int fds_before, int threads_before, int *fds, int *threads)
{
    uint64_t deadline = now_ms() + 10000;
    *fds = tn_fd_count();
    *threads = tn_thread_count("");
    while ((*fds > fds_before || *threads > threads_before) && now_ms() < deadline) {
        usleep(20000);
        *fds = tn_fd_count();
        *threads = tn_thread_count("");
    }
}

void ts_stop_checked(struct test_server *t, const char *scenario)
{
    int fds, threads;
    settle(t->fds_before, t->threads_before, &fds, &threads);
    long rss = tn_rss_kb();
    size_t name_len = strlen(scenario);        /* Check names it "<test>_fn" */
    if (name_len > 3 && strcmp(scenario + name_len - 3, "_fn") == 0)
        name_len -= 3;
    printf("  %-12s %-42.*s rss %6ld -> %6ld KiB  fds %3d -> %3d  threads %3d -> %3d\n",
           model_under_test, (int)name_len, scenario, t->rss_before_kb, rss,
           t->fds_before, fds, t->threads_before, threads);
    fflush(stdout);
    char states[256], fd_names[512];
    tn_port_states(t->port, states, sizeof(states));
    tn_fd_names(fd_names, sizeof(fd_names));
    ck_assert_msg(fds <= t->fds_before, "%s: %d fds open after, %d before; sockets "
                  "on the port: %s; fds before: %s; after: %s", scenario, fds,
                  t->fds_before, states, t->fd_names_before, fd_names);
    char names[512];
    tn_thread_names(names, sizeof(names));
    ck_assert_msg(threads <= t->threads_before, "%s: %d threads after, %d before: %s",
                  scenario, threads, t->threads_before, names);
    ck_assert_msg(SANITIZED || rss - t->rss_before_kb < RSS_GROWTH_LIMIT_KB,
                  "%s: RSS grew from %ld to %ld KiB", scenario, t->rss_before_kb, rss);
    ts_stop_now(t);
}

void ts_stop_now(struct test_server *t)
{
    t->model->stop(t->server);
    t->server = NULL;
}

static void start_default(struct test_server *t)
{
    struct server_opts o;
    ts_opts(&o);
    ts_start(t, model_under_test, &o);
}

/* A server whose connections all share one loop (one worker; the blocking
 * models ignore it): what a test of one loop's fairness needs. */
static void start_one_loop(struct test_server *t)
{
    struct server_opts o;
    ts_opts(&o);
    o.workers = 1;
    ts_start(t, model_under_test, &o);
}

/* ---- the load generator against the model -------------------------------- */

enum { LOAD_LINE_TIMEOUT_S = 120 };

static const struct load_case {
    int conns, depth;
    size_t size;
} load_cases[] = {
    { 1, 1, 1 },     { 1, 1, 64 },     { 1, 8, 64 },    { 1, 8, 65536 },
    { 64, 1, 64 },   { 64, 8, 1 },     { 64, 8, 4096 }, { 64, 1, 65536 },
    { 512, 1, 64 },  { 512, 8, 64 },   { 512, 8, 1000 },{ 512, 1, 65536 },
};

/* THREADLAB_SUITE_LOAD_BYTES: the most payload a load case moves, for the
 * runs under a fault shim (tests/faults/run.sh), where every few bytes
 * cost a system call: a case then keeps its line size and depth, and has
 * as many lines (and at most as many connections) as fit. Unset or 0: no
 * cap. A value that is not a number is refused, not taken for 0. */
static uint64_t load_bytes_cap(void)
{
    const char *v = getenv("THREADLAB_SUITE_LOAD_BYTES");
    if (!v || !*v)
        return 0;
    char *end;
    errno = 0;
    unsigned long long cap = strtoull(v, &end, 10);
    ck_assert_msg(errno == 0 && *end == '\0' && v[0] != '-',
                  "THREADLAB_SUITE_LOAD_BYTES=%s: not a number of bytes", v);
    return (uint64_t)cap;
}

START_TEST(load_matrix_no_errors)
{
    const struct load_case *lc = &load_cases[_i];
    struct test_server t;
    struct load_opts o;
    struct load_report *r = malloc(sizeof(*r));
    char target[32];

    start_default(&t);
    load_opts_init(&o);
    snprintf(target, sizeof(target), "127.0.0.1:%u", t.port);
    char err[128];
    ck_assert_int_eq(net_parse_hostport(target, &o.addr, &o.addr_len, err,
                                        sizeof(err)), 0);
    o.target = target;
    o.conns = lc->conns;
    o.depth = lc->depth;
    o.line_bytes = lc->size;
    o.duration_s = 0;
    o.total_lines = (uint64_t)lc->conns * (uint64_t)lc->depth * 4;
    /* 64 KiB lines: 2048 of them (128 MiB each way) at most; under the
     * sanitizers, which run for correctness and copy every byte many times
     * slower, one per connection. */
    uint64_t big_lines = SANITIZED ? (uint64_t)lc->conns : 2048;
    if (lc->size >= 65536 && o.total_lines > big_lines)
        o.total_lines = big_lines;
    uint64_t cap = load_bytes_cap();
    if (cap > 0 && o.total_lines * lc->size > cap) {
        o.total_lines = cap / lc->size > 0 ? cap / lc->size : 1;
        if ((uint64_t)o.conns > o.total_lines)
            o.conns = (int)o.total_lines;
    }
    o.threads = o.conns > 1 ? 2 : 1;
    /* A line's timeout guards against a hang, not a slow machine: the pool
     * queues connections past its threads, and a queued one waits its
     * turn however long the others take. */
    o.timeout_s = LOAD_LINE_TIMEOUT_S;
    ck_assert_int_eq(load_run(&o, r), 0);
    ck_assert_msg(r->errors_total == 0,
                  "%d conns depth %d size %zu: %llu errors (connect %llu reset "
                  "%llu closed %llu mismatch %llu busy %llu timeout %llu)",
                  o.conns, lc->depth, lc->size,
                  (unsigned long long)r->errors_total,
                  (unsigned long long)r->errors[LOAD_ERR_CONNECT],
                  (unsigned long long)r->errors[LOAD_ERR_RESET],
                  (unsigned long long)r->errors[LOAD_ERR_CLOSED],
                  (unsigned long long)r->errors[LOAD_ERR_MISMATCH],
                  (unsigned long long)r->errors[LOAD_ERR_BUSY],
                  (unsigned long long)r->errors[LOAD_ERR_TIMEOUT]);
    ck_assert_uint_eq(r->lines_ok, o.total_lines);
    ck_assert_uint_eq(r->conns_opened, (uint64_t)o.conns);
    ck_assert_uint_eq(r->bytes_received, o.total_lines * lc->size);
    free(r);
    ts_stop(&t);
}
END_TEST

/* ---- protocol over a real socket ------------------------------------------ */

START_TEST(echo_commands_over_socket)
{
    struct test_server t;
    char line[256];
    start_default(&t);
    int fd = tn_connect(t.port);

    tn_send_str(fd, "hello\n");
    ck_assert_int_eq(tn_read_line(fd, line, sizeof(line)), 6);
    ck_assert(memcmp(line, "hello\n", 6) == 0);

    tn_send_str(fd, "!who\n");
    ssize_t n = tn_read_line(fd, line, sizeof(line));
    ck_assert_int_gt(n, 0);
    line[n] = '\0';
    char expect[64];
    snprintf(expect, sizeof(expect), "!who model=%s thread=", model_under_test);
    ck_assert_msg(strncmp(line, expect, strlen(expect)) == 0, "got %s", line);
    ck_assert_ptr_nonnull(strstr(line, " conn="));

    tn_send_str(fd, "!cpu 1000\n!sleep 10\n!cpu nope\n!sleep 60001\n");
    ck_assert_int_eq(tn_read_line(fd, line, sizeof(line)), 10);
    ck_assert(memcmp(line, "!cpu 1000\n", 10) == 0);
    ck_assert_int_eq(tn_read_line(fd, line, sizeof(line)), 10);
    ck_assert(memcmp(line, "!sleep 10\n", 10) == 0);
    for (int i = 0; i < 2; i++) {
        n = tn_read_line(fd, line, sizeof(line));
        ck_assert_int_eq(n, (ssize_t)strlen(ECHO_ERR_BAD_ARGUMENT));
        ck_assert(memcmp(line, ECHO_ERR_BAD_ARGUMENT, (size_t)n) == 0);
    }
    /* Binary bytes, NUL and CR included, come back as they went. */
    const char binary[] = { 'a', '\0', '\r', (char)0xff, (char)0x80, '\r', '\n' };
    tn_send(fd, binary, sizeof(binary));
    char got[sizeof(binary)];
    ck_assert(tn_read_exact(fd, got, sizeof(got)));
    ck_assert(memcmp(got, binary, sizeof(binary)) == 0);

    tn_send_str(fd, "!quit\nafter quit\n");
    ck_assert_int_eq(tn_read_line(fd, line, sizeof(line)), 6);
    ck_assert(memcmp(line, "!quit\n", 6) == 0);
    ck_assert_int_eq(tn_read_eof(fd), 0);   /* closed cleanly, nothing more */
    close(fd);
    ts_stop(&t);
}
END_TEST

START_TEST(one_byte_at_a_time)
{
    struct test_server t;
    const char *msg = "split\nacross\nmany sends\n";
    char got[64];
    start_default(&t);
    int fd = tn_connect(t.port);
    for (const char *p = msg; *p; p++)
        tn_send(fd, p, 1);
    ck_assert(tn_read_exact(fd, got, strlen(msg)));
    ck_assert(memcmp(got, msg, strlen(msg)) == 0);
    close(fd);
    ts_stop(&t);
}
END_TEST

/* What a !sleep on one connection does to another is each model's lesson:
 * BIO and the pool block one thread, so the other connection is answered
 * at once; the single reactor blocks its only loop, so the other waits. */
static bool sleep_stalls_others(const char *model)
{
    return strcmp(model, "reactor") == 0;
}

START_TEST(sleep_and_the_other_connections)
{
    struct test_server t;
    char line[64];
    start_default(&t);
    int sleeper = tn_connect(t.port);
    int other = tn_connect(t.port);
    tn_send_str(other, "warm\n");           /* both connections are set up */
    ck_assert_int_eq(tn_read_line(other, line, sizeof(line)), 5);

    /* Judged by order, not by time: is the ping answered while the board
     * still shows the sleep? (A round trip takes microseconds; the sleep,
     * a second.) */
    tn_send_str(sleeper, "!sleep 1000\n");
    ts_await_threads_in(STATE_BLOCKED_SLEEP, 1, "!sleep 1000");
    tn_send_str(other, "ping\n");
    ck_assert_int_eq(tn_read_line(other, line, sizeof(line)), 5);
    bool answered_during_the_sleep = ts_board_shows(STATE_BLOCKED_SLEEP);
    if (sleep_stalls_others(model_under_test)) {
        ck_assert_msg(!answered_during_the_sleep, "the ping was answered while the loop "
                      "slept in !sleep 1000: the loop did not stall");
    } else {
        ck_assert_msg(answered_during_the_sleep, "the ping waited for !sleep 1000 on "
                      "another connection to end");
        ck_assert_msg(!tn_readable(sleeper, 0),
                      "the sleeper answered before the other connection");
    }
    ck_assert_int_eq(tn_read_line(sleeper, line, sizeof(line)), 12);
    close(sleeper);
    close(other);
    ts_stop(&t);
}
END_TEST

START_TEST(oversized_line_closes_only_that_connection)
{
    struct test_server t;
    struct server_opts o;
    char line[64];
    enum { MAX = 1000 };
    ts_opts(&o);
    o.max_line = MAX;
    ts_start(&t, model_under_test, &o);

    int bad = tn_connect(t.port), good = tn_connect(t.port);
    char *big = malloc(MAX + 2);

    /* Exactly max bytes is fine. */
    memset(big, 'x', MAX);
    big[MAX] = '\n';
    tn_send(good, big, MAX + 1);
    char *back = malloc(MAX + 1);
    ck_assert(tn_read_exact(good, back, MAX + 1));
    ck_assert(memcmp(back, big, MAX + 1) == 0);

    /* Max + 1 is not: the reply arrives, then a clean EOF, not a reset. */
    memset(big, 'y', MAX + 1);
    big[MAX + 1] = '\n';
    tn_send(bad, "fine\n", 5);
    tn_send(bad, big, MAX + 2);
    ck_assert_int_eq(tn_read_line(bad, line, sizeof(line)), 5);
    ssize_t n = tn_read_line(bad, line, sizeof(line));
    ck_assert_int_eq(n, (ssize_t)strlen(ECHO_ERR_LINE_TOO_LONG));
    ck_assert(memcmp(line, ECHO_ERR_LINE_TOO_LONG, (size_t)n) == 0);
    ck_assert_int_eq(tn_read_eof(bad), 0);

    tn_send_str(good, "still here\n");
    ck_assert_int_eq(tn_read_line(good, line, sizeof(line)), 11);
    free(big);
    free(back);
    close(bad);
    close(good);
    ts_stop(&t);
}
END_TEST

START_TEST(reset_mid_line_leaves_server_serving)
{
    struct test_server t;
    char line[64];
    start_default(&t);
    for (int i = 0; i < 20; i++) {
        int fd = tn_connect(t.port);
        tn_send_str(fd, "complete\nhalf a li");
        ck_assert_int_eq(tn_read_line(fd, line, sizeof(line)), 9);
        tn_close_reset(fd);
    }
    int fd = tn_connect(t.port);
    tn_send_str(fd, "after resets\n");
    ck_assert_int_eq(tn_read_line(fd, line, sizeof(line)), 13);
    close(fd);
    ts_stop(&t);
}
END_TEST

/* ---- graceful stop -------------------------------------------------------- */

struct stopper { struct test_server *t; };

static void *stop_cb(void *arg)
{
    ts_stop_now(((struct stopper *)arg)->t);
    return NULL;
}

/* Lines the server has received when the stop begins are all answered:
 * the connection is busy in "!sleep 300" with 500 more lines queued behind
 * it when we stop the server. */
START_TEST(stop_loses_no_received_line)
{
    struct test_server t;
    enum { BEFORE = 100, AFTER = 500 };
    char line[64];
    start_default(&t);
    int fd = tn_connect(t.port);

    char *burst = malloc((BEFORE + AFTER) * 16 + 32);
    size_t len = 0;
    for (int i = 0; i < BEFORE; i++)
        len += (size_t)sprintf(burst + len, "before %d\n", i);
    len += (size_t)sprintf(burst + len, "!sleep 300\n");
    for (int i = 0; i < AFTER; i++)
        len += (size_t)sprintf(burst + len, "after %d\n", i);
    tn_send(fd, burst, len);

    for (int i = 0; i < BEFORE; i++) {
        char want[32];
        ssize_t n = tn_read_line(fd, line, sizeof(line));
        snprintf(want, sizeof(want), "before %d\n", i);
        ck_assert_int_eq(n, (ssize_t)strlen(want));
        ck_assert(memcmp(line, want, (size_t)n) == 0);
    }
    /* The server now sleeps; everything after it is in its socket. */
    pthread_t stopper_thread;
    struct stopper st = { &t };
    pthread_create(&stopper_thread, NULL, stop_cb, &st);

    ck_assert_int_eq(tn_read_line(fd, line, sizeof(line)), 11);
    for (int i = 0; i < AFTER; i++) {
        char want[32];
        ssize_t n = tn_read_line(fd, line, sizeof(line));
        snprintf(want, sizeof(want), "after %d\n", i);
        ck_assert_msg(n == (ssize_t)strlen(want) &&
                      memcmp(line, want, (size_t)n) == 0,
                      "line 'after %d' lost in the stop (read %zd)", i, n);
    }
    ck_assert_int_eq(tn_read_eof(fd), 0);
    pthread_join(stopper_thread, NULL);
    free(burst);
    close(fd);
}
END_TEST

/* The same with --offload 2 (the blocking models sleep on their own
 * thread): the stop comes while the !sleep is on the business pool and
 * the lines behind it wait in the channel's buffer, all read already.
 * They are answered when the sleep comes back, then EOF. (The channel once
 * took "the stop's bytes are all read" for "close after this reply", and
 * dropped them.) */
START_TEST(stop_loses_no_line_waiting_behind_an_offloaded_one)
{
    enum { AFTER = 100 };
    struct test_server t;
    struct server_opts o;
    char line[64], want[32];
    ts_opts(&o);
    o.offload_threads = 2;
    ts_start(&t, model_under_test, &o);
    int fd = tn_connect(t.port);
    char burst[16 + AFTER * 16];
    /* 2 s: the test awaits the board showing the sleep, and a window of
     * 300 ms was missed by a poller held off the CPU (TSan, load 30). */
    size_t len = (size_t)sprintf(burst, "!sleep 2000\n");
    for (int i = 0; i < AFTER; i++)
        len += (size_t)sprintf(burst + len, "behind %d\n", i);
    tn_send(fd, burst, len);
    ts_await_threads_in(STATE_BLOCKED_SLEEP, 1, "a !sleep 2000 before the stop");
    pthread_t stopper_thread;
    struct stopper st = { &t };
    pthread_create(&stopper_thread, NULL, stop_cb, &st);
    ck_assert_int_eq(tn_read_line(fd, line, sizeof(line)), 12);
    for (int i = 0; i < AFTER; i++) {
        ssize_t n = tn_read_line(fd, line, sizeof(line));
        snprintf(want, sizeof(want), "behind %d\n", i);
        ck_assert_msg(n == (ssize_t)strlen(want) && memcmp(line, want, (size_t)n) == 0,
                      "line 'behind %d' lost in the stop (read %zd)", i, n);
    }
    ck_assert_int_eq(tn_read_eof(fd), 0);
    pthread_join(stopper_thread, NULL);
    close(fd);
}
END_TEST

/* ---- a client we did not write -------------------------------------------- */

START_TEST(socat_client_echoes)
{
    struct test_server t;
    char cmd[256], out[512];
    start_default(&t);
    snprintf(cmd, sizeof(cmd),
             "printf 'typed by a person\\n!who\\n!quit\\n' | "
             "socat -t 5 - TCP:127.0.0.1:%u", t.port);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t n = fread(out, 1, sizeof(out) - 1, p);
    out[n] = '\0';
    int status = pclose(p);
    ck_assert_msg(status == 0, "socat failed (is it installed?): status %d", status);
    char want[128];
    snprintf(want, sizeof(want), "typed by a person\n!who model=%s thread=",
             model_under_test);
    ck_assert_msg(strncmp(out, want, strlen(want)) == 0, "socat got: %s", out);
    ck_assert_msg(strstr(out, "\n!quit\n") != NULL, "socat got: %s", out);
    ts_stop(&t);
}
END_TEST

/* A client that says !quit with megabytes of replies still on their way,
 * keeps sending, and reads slowly: the lingering close must wait while it
 * keeps reading. Closing after linger_ms regardless would reset the
 * connection with its input unread, and the reset throws away every reply
 * the client has not received yet. */
enum { SLOW_READER_LINES = 2048 };     /* 2 MiB of 1 KiB lines */

struct quit_sender { int fd; _Atomic bool stop; };

static void *send_lines_then_quit_then_junk(void *arg)
{
    struct quit_sender *q = arg;
    char line[1024];
    for (int i = 0; i < SLOW_READER_LINES; i++) {
        memset(line, 'a' + i % 26, sizeof(line) - 1);
        line[sizeof(line) - 1] = '\n';
        if (send(q->fd, line, sizeof(line), MSG_NOSIGNAL) != (ssize_t)sizeof(line))
            return NULL;
    }
    if (send(q->fd, "!quit\n", 6, MSG_NOSIGNAL) != 6)
        return NULL;
    while (!atomic_load(&q->stop)) {           /* input the server must drop */
        if (send(q->fd, "junk\n", 5, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 &&
            errno != EAGAIN)
            return NULL;                       /* closed: fine */
        usleep(2000);
    }
    return NULL;
}

/* What a slow reader got: the bytes (the replies, then "!quit\n"), how
 * long it read, and how the stream ended. */
struct slow_read {
    char *buf;
    size_t got, want;
    uint64_t took_ms;
    ssize_t last;          /* the read after everything: 0 is EOF */
    int err;               /* errno of a failed read, or 0 */
};

/* Against a server lingering linger_ms: send the lines, !quit and junk,
 * and read 16 KiB every 20 ms (the 2 MiB take 2.6 s). */
static void read_slowly_after_quit(int linger_ms, struct slow_read *r)
{
    struct test_server t;
    struct server_opts o;
    ts_opts(&o);
    o.linger_ms = linger_ms;
    ts_start(&t, model_under_test, &o);
    struct quit_sender q = { .fd = tn_connect(t.port) };
    pthread_t sender;
    pthread_create(&sender, NULL, send_lines_then_quit_then_junk, &q);
    *r = (struct slow_read){ .want = (size_t)SLOW_READER_LINES * 1024 + 6, .last = -1 };
    r->buf = malloc(r->want + 1);
    ssize_t n = 1;
    uint64_t start = now_ms();
    while (r->got < r->want && n > 0) {
        size_t ask = r->want - r->got < 16384 ? r->want - r->got : 16384;
        n = recv(q.fd, r->buf + r->got, ask, 0);
        if (n > 0)
            r->got += (size_t)n;
        usleep(20000);
    }
    r->err = n < 0 ? errno : 0;
    r->took_ms = now_ms() - start;
    char after;
    if (r->got == r->want) {
        r->last = recv(q.fd, &after, 1, 0);
        r->err = r->last < 0 ? errno : 0;
    }
    atomic_store(&q.stop, true);
    shutdown(q.fd, SHUT_WR);
    pthread_join(sender, NULL);
    printf("  %-12s slow reader, linger %d ms: %zu of %zu bytes in %llu ms, then %s\n",
           model_under_test, linger_ms, r->got, r->want, (unsigned long long)r->took_ms,
           r->last == 0 ? "EOF" : r->err ? strerror(r->err) : "EOF or reset");
    close(q.fd);
    ts_stop(&t);
}

START_TEST(slow_reader_gets_every_reply_before_the_close)
{
    struct slow_read r;
    /* Shorter than the 2.6 s read (a fixed linger of 2 s delivers about
     * three quarters), and long enough that a client thread held up by a
     * busy machine (1.2 s was seen under TSan at load 30) still counts as
     * reading. */
    read_slowly_after_quit(2000, &r);
    ck_assert_msg(r.got == r.want, "got %zu of %zu bytes (%s)", r.got, r.want,
                  r.err ? strerror(r.err) : "EOF");
    for (int i = 0; i < SLOW_READER_LINES; i++) {
        const char *l = r.buf + (size_t)i * 1024;
        ck_assert_msg(l[0] == 'a' + i % 26 && l[1022] == 'a' + i % 26 && l[1023] == '\n',
                      "reply %d differs", i);
    }
    ck_assert(memcmp(r.buf + r.want - 6, "!quit\n", 6) == 0);
    ck_assert_msg(r.last == 0, "after the last reply: %s, not EOF",
                  r.last > 0 ? "more bytes" : strerror(r.err));
    free(r.buf);
}
END_TEST


START_TEST(half_close_answers_then_eof)
{
    struct test_server t;
    char got[16];
    start_default(&t);
    int fd = tn_connect(t.port);
    tn_send_str(fd, "a\nb\n");
    shutdown(fd, SHUT_WR);                 /* we are done sending, not reading */
    ck_assert(tn_read_exact(fd, got, 4));
    ck_assert(memcmp(got, "a\nb\n", 4) == 0);
    ck_assert_int_eq(tn_read_eof(fd), 0);
    close(fd);
    ts_stop(&t);
}
END_TEST

enum { PIPELINED = 100000 };

static void *write_pipelined(void *arg)
{
    int fd = *(int *)arg;
    char *buf = malloc(PIPELINED * 8);
    size_t len = 0;
    for (int i = 0; i < PIPELINED; i++)
        len += (size_t)sprintf(buf + len, "%06d\n", i);
    tn_send(fd, buf, len);
    free(buf);
    return NULL;
}

START_TEST(hundred_thousand_pipelined_lines_in_order)
{
    struct test_server t;
    start_default(&t);
    int fd = tn_connect(t.port);
    pthread_t writer;
    pthread_create(&writer, NULL, write_pipelined, &fd);
    char line[16], want[16];
    for (int i = 0; i < PIPELINED; i++) {
        ssize_t n = tn_read_line(fd, line, sizeof(line));
        snprintf(want, sizeof(want), "%06d\n", i);
        ck_assert_msg(n == 7 && memcmp(line, want, 7) == 0, "line %d out of order (%s)", i,
                      n < 0 ? strerror((int)-n) : n == 0 ? "EOF" : "other bytes");
    }
    pthread_join(writer, NULL);
    close(fd);
    ts_stop(&t);
}
END_TEST

/* ---- faults ------------------------------------------------------------------ */

/* A megabyte with no newline: "!err line-too-long", then EOF, not a reset;
 * the others unaffected; the server's memory bounded. */
START_TEST(a_megabyte_without_newline)
{
    struct test_server t;
    char line[64];
    start_default(&t);
    int other = tn_connect(t.port), junk = tn_connect(t.port);
    long rss_before = tn_rss_kb();
    char *mb = malloc(1 << 20);
    unsigned seed = 5;
    for (int i = 0; i < (1 << 20); i++) {
        mb[i] = (char)rand_r(&seed);
        if (mb[i] == '\n')
            mb[i] = ' ';
    }
    /* The server closes after 64 KiB; the rest may fail to send: fine. */
    size_t sent = 0;
    while (sent < (1u << 20)) {
        ssize_t n = send(junk, mb + sent, (1u << 20) - sent, MSG_NOSIGNAL);
        if (n <= 0)
            break;
        sent += (size_t)n;
    }
    ssize_t n = tn_read_line(junk, line, sizeof(line));
    ck_assert_int_eq(n, (ssize_t)strlen(ECHO_ERR_LINE_TOO_LONG));
    ck_assert(memcmp(line, ECHO_ERR_LINE_TOO_LONG, (size_t)n) == 0);
    ck_assert_int_eq(tn_read_eof(junk), 0);
    tn_send_str(other, "unaffected\n");
    ck_assert_int_eq(tn_read_line(other, line, sizeof(line)), 11);
    ck_assert(SANITIZED || tn_rss_kb() - rss_before < 8 * 1024);
    free(mb);
    close(junk);
    close(other);
    ts_stop(&t);
}
END_TEST

/* Whether any of the n connections in fds (-1: closed) has been closed by
 * the server: its EOF (or reset) is readable. */
static bool any_closed_by_server(const int *fds, int n)
{
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0 && tn_readable(fds[i], 0))
            return true;
    return false;
}

/* 200 slowloris connections drip bytes and never end a line; all are
 * closed at the line deadline (2 s), while a probe client is answered all
 * along. Judged by order, not by latency: probes are answered while every
 * slowloris connection is still open. A probe stuck behind them would wait
 * for their deadline and be answered only after they closed. */
START_TEST(two_hundred_slowloris_and_a_probe)
{
    enum { SLOW = 200, MAX_PROBES = 1000, LINE_TIMEOUT_MS = 2000, ANSWERED_EARLY = 10 };
    struct test_server t;
    struct server_opts o;
    char line[64];
    ts_opts(&o);
    o.line_timeout_ms = LINE_TIMEOUT_MS;
    o.pool.max_threads = 256;          /* the pool must not queue the probe */
    ts_start(&t, model_under_test, &o);
    int fds[SLOW], open_left = SLOW, probe = tn_connect(t.port);
    for (int i = 0; i < SLOW; i++)
        fds[i] = tn_connect(t.port);
    int probes = 0, answered_while_all_open = 0;
    uint64_t deadline = now_ms() + TS_AWAIT_MS;
    while (open_left > 0 && now_ms() < deadline) {
        for (int i = 0; i < SLOW; i++) {
            if (fds[i] < 0)
                continue;
            if (send(fds[i], "s", 1, MSG_NOSIGNAL) != 1 ||
                (tn_readable(fds[i], 0) && tn_read_eof(fds[i]) <= 0)) {
                close(fds[i]);
                fds[i] = -1;
                open_left--;
            }
        }
        for (int k = 0; k < 20 && probes < MAX_PROBES; k++) {
            tn_send_str(probe, "probe\n");
            ck_assert_int_eq(tn_read_line(probe, line, sizeof(line)), 6);
            probes++;
            if (open_left == SLOW && !any_closed_by_server(fds, SLOW))
                answered_while_all_open++;
            usleep(10000);
        }
    }
    printf("  %-12s slowloris: %d probes, %d answered before any slowloris was closed\n",
           model_under_test, probes, answered_while_all_open);
    ck_assert_msg(open_left == 0, "%d slowloris connections still open %d s after a "
                  "%d ms line timeout", open_left, TS_AWAIT_MS / 1000, LINE_TIMEOUT_MS);
    ck_assert_msg(answered_while_all_open >= ANSWERED_EARLY, "only %d probes were answered "
                  "while the %d slowloris connections were open: the probe waited behind "
                  "them", answered_while_all_open, SLOW);
    close(probe);
    ts_stop(&t);
}
END_TEST

/* 10 000 connect/close cycles: fds and threads back where they started. */
START_TEST(ten_thousand_connections_come_and_go)
{
    struct test_server t;
    char line[16];
    start_default(&t);
    int fds_before = tn_fd_count(), threads_before = tn_thread_count("");
    for (int i = 0; i < 10000; i++) {
        int fd = tn_connect(t.port);
        if (i % 10 == 0) {             /* some say something first */
            tn_send_str(fd, "x\n");
            ck_assert_int_eq(tn_read_line(fd, line, sizeof(line)), 2);
        }
        close(fd);
    }
    int fds, threads;
    settle(fds_before, threads_before, &fds, &threads);
    char states[256];
    tn_port_states(t.port, states, sizeof(states));
    ck_assert_msg(fds == fds_before, "%d fds open, %d before; sockets on "
                  "the port: %s", fds, fds_before, states);
    ck_assert_int_le(threads, threads_before);
    ts_stop(&t);
}
END_TEST

/* ---- the server's own board ------------------------------------------------ */

/* The board of process pid, or NULL when it has none (yet, or any more). */
static struct board_snapshot *read_board_of(pid_t pid)
{
    struct board_entry e[BOARD_LIST_MAX];
    int n = board_list(e, BOARD_LIST_MAX, false);
    struct board_snapshot *snap = malloc(sizeof(*snap));
    char err[160];
    ck_assert_ptr_nonnull(snap);
    for (int i = 0; i < n; i++)
        if (e[i].pid == pid && board_read(e[i].path, snap, err, sizeof(err)) == 0)
            return snap;
    free(snap);
    return NULL;
}

struct board_snapshot *ts_own_board(void)
{
    struct board_snapshot *snap = read_board_of(getpid());
    if (!snap)
        ck_abort_msg("no board of this process");
    return snap;
}

/* Threads of process pid's server in `state` now (0 without a board). */
static uint64_t threads_in(pid_t pid, enum board_state state)
{
    struct board_snapshot *b = read_board_of(pid);
    uint64_t n = b ? b->threads_by_state[state] : 0;
    free(b);
    return n;
}

/* Await (up to TS_AWAIT_MS) at least `at_least` threads of process pid in
 * `state`; fails the test, naming `what`, if they never are. */
static void await_threads_in(pid_t pid, enum board_state state, uint64_t at_least,
                             const char *what)
{
    uint64_t deadline = now_ms() + TS_AWAIT_MS, seen;
    while ((seen = threads_in(pid, state)) < at_least && now_ms() < deadline)
        usleep(2000);
    ck_assert_msg(seen >= at_least, "%s: the board never showed %llu thread(s) in state %d "
                  "(%llu after %d s)", what, (unsigned long long)at_least, (int)state,
                  (unsigned long long)seen, TS_AWAIT_MS / 1000);
}

void ts_await_threads_in(enum board_state state, uint64_t at_least, const char *what)
{
    await_threads_in(getpid(), state, at_least, what);
}

bool ts_board_shows(enum board_state state)
{
    return threads_in(getpid(), state) > 0;
}

/* Await (up to TS_AWAIT_MS) process pid's board marked closing: its
 * server has taken the stop signal and begun the graceful stop. */
static void await_closing(pid_t pid)
{
    uint64_t deadline = now_ms() + TS_AWAIT_MS;
    bool closing = false;
    while (!closing && now_ms() < deadline) {
        struct board_snapshot *b = read_board_of(pid);
        closing = b && b->closing;
        free(b);
        if (!closing)
            usleep(2000);
    }
    ck_assert_msg(closing, "the server never began to stop (its board was not marked "
                  "closing after %d s)", TS_AWAIT_MS / 1000);
}

/* How the connections this process's server closed ended, as its board
 * counts them (board_conn_ended: one counter per timeout, and every close). */
struct timeout_ends { uint64_t idle, slow_line, stalled, closed; };

static struct timeout_ends timeout_ends_now(void)
{
    struct board_snapshot *b = ts_own_board();
    struct timeout_ends e = { b->counters[CTR_CLOSED_IDLE], b->counters[CTR_CLOSED_SLOW_LINE],
                              b->counters[CTR_CLOSED_STALLED], b->counters[CTR_CLOSED] };
    free(b);
    return e;
}

/* Wait (up to 10 s) until `closed` connections are counted closed, and
 * `timeouts` of them by a timeout: a server counts a close just after the
 * client sees it. The counts then. */
static struct timeout_ends wait_ends(uint64_t closed, uint64_t timeouts)
{
    uint64_t deadline = now_ms() + 10000;
    struct timeout_ends e = timeout_ends_now();
    while ((e.closed < closed || e.idle + e.slow_line + e.stalled < timeouts) &&
           now_ms() < deadline) {
        usleep(10000);
        e = timeout_ends_now();
    }
    return e;
}

/* Each timeout ends a connection with its own reason, counted as that on
 * the board: a stall or a slow line is no idle connection. */
static void assert_ended_as(const char *who, struct timeout_ends e, uint64_t idle,
                            uint64_t slow_line, uint64_t stalled)
{
    ck_assert_msg(e.idle == idle && e.slow_line == slow_line && e.stalled == stalled,
                  "%s: the board counts %llu closed as idle, %llu by the line timeout and "
                  "%llu as stalled (%llu closed in all), not %llu, %llu and %llu: each "
                  "timeout ends a connection with its own reason", who,
                  (unsigned long long)e.idle, (unsigned long long)e.slow_line,
                  (unsigned long long)e.stalled, (unsigned long long)e.closed,
                  (unsigned long long)idle, (unsigned long long)slow_line,
                  (unsigned long long)stalled);
}

/* The server's stop freed every timer it made (the channels' deadline and
 * linger timers, in the loop models): loop_timers_alive is back where it
 * was before the server started. A timer with a reference never dropped
 * (its handle, or the loop's hold) stays alive, and a leak of one per
 * timeout fired soon holds more memory than the connections. The blocking
 * models make none. */
static void assert_timers_freed(const char *scenario, uint64_t before)
{
    uint64_t left = loop_timers_alive() - before;
    ck_assert_msg(left == 0, "%s: %lld timers still alive after the server stopped (a "
                  "reference never dropped: the handle a timer fired through, or the "
                  "loop's hold on one that is done)", scenario, (long long)left);
}

/* ---- limits every model has ------------------------------------------------ */

START_TEST(max_conns_refuses_with_busy)
{
    struct test_server t;
    struct server_opts o;
    char line[64];
    ts_opts(&o);
    o.max_conns = 3;
    ts_start(&t, model_under_test, &o);
    int fds[3];
    for (int i = 0; i < 3; i++) {
        fds[i] = tn_connect(t.port);
        tn_send_str(fds[i], "in\n");
        ck_assert_int_eq(tn_read_line(fds[i], line, sizeof(line)), 3);
    }
    int extra = tn_connect(t.port);
    tn_send_str(extra, "me too\n");
    ssize_t n = tn_read_line(extra, line, sizeof(line));
    ck_assert_int_eq(n, (ssize_t)strlen(ECHO_ERR_BUSY));
    ck_assert(memcmp(line, ECHO_ERR_BUSY, (size_t)n) == 0);
    ck_assert_int_eq(tn_read_eof(extra), 0);      /* a clean close, no reset */
    close(extra);
    close(fds[0]);
    /* A place frees up: the next one is served. */
    int again = -1;
    uint64_t deadline = now_ms() + 5000;
    for (;;) {
        again = tn_connect(t.port);
        tn_send_str(again, "now\n");
        n = tn_read_line(again, line, sizeof(line));
        if (n == 4 || now_ms() > deadline)
            break;
        close(again);                             /* the close was not seen yet */
        usleep(20000);
    }
    ck_assert_int_eq(n, 4);
    close(again);
    close(fds[1]);
    close(fds[2]);
    ts_stop(&t);
}
END_TEST

/* A server with --max-conns 1 and the one connection it takes, answered:
 * every later client is refused. Returns the holder's fd. */
static int start_full_server(struct test_server *t)
{
    struct server_opts o;
    char line[64];
    ts_opts(&o);
    o.max_conns = 1;
    ts_start(t, model_under_test, &o);
    int holder = tn_connect(t->port);
    tn_send_str(holder, "in\n");
    ck_assert_int_eq(tn_read_line(holder, line, sizeof(line)), 3);
    return holder;
}

/* A refusal never holds the acceptor (or the boss): with the only place
 * taken and 300 silent clients refused just ahead of it, the next client
 * gets "!err busy" (typically within 40 ms), and so do the 300. Each
 * refusal lingers 20 s here (until its client closes), so an acceptor that
 * lingered through a refusal itself would answer the next client 20 s
 * late at the very least; the bound is half that, far beyond what 301
 * accepts take on any busy machine. */
START_TEST(refusals_do_not_hold_the_acceptor)
{
    enum { SILENT = 300 };
    struct test_server t;
    struct server_opts o;
    char line[64];
    ts_opts(&o);
    o.max_conns = 1;
    o.linger_ms = TS_AWAIT_MS;
    ts_start(&t, model_under_test, &o);
    int holder = tn_connect(t.port);
    tn_send_str(holder, "in\n");
    ck_assert_int_eq(tn_read_line(holder, line, sizeof(line)), 3);
    int silent[SILENT];
    for (int i = 0; i < SILENT; i++)
        silent[i] = tn_connect(t.port);           /* they send nothing, close nothing */
    int probe = tn_connect(t.port);
    ck_assert_msg(tn_readable(probe, TS_AWAIT_MS / 2), "behind %d silent refused clients, "
                  "the next waited %d s for '!err busy': the refusals ahead held the "
                  "acceptor", SILENT, TS_AWAIT_MS / 2000);
    ssize_t n = tn_read_line(probe, line, sizeof(line));
    ck_assert_msg(n == (ssize_t)strlen(ECHO_ERR_BUSY) &&
                  memcmp(line, ECHO_ERR_BUSY, (size_t)n) == 0,
                  "behind %d silent refused clients, the next got %zd bytes, not "
                  "'!err busy'", SILENT, n);
    for (int i = 0; i < SILENT; i++) {
        n = tn_read_line(silent[i], line, sizeof(line));
        ck_assert_msg(n == (ssize_t)strlen(ECHO_ERR_BUSY), "silent client %d got %zd "
                      "bytes, not '!err busy'", i, n);
    }
    for (int i = 0; i < SILENT; i++)
        close(silent[i]);
    close(probe);
    close(holder);
    ts_stop(&t);
}
END_TEST

START_TEST(idle_connections_are_closed)
{
    struct test_server t;
    struct server_opts o;
    char line[64];
    ts_opts(&o);
    /* The talker talks without pauses of its own, so only a machine that
     * keeps it off the CPU for the whole timeout could idle it. */
    o.idle_timeout_ms = 2000;
    uint64_t timers_before = loop_timers_alive();
    ts_start(&t, model_under_test, &o);
    /* The clock starts before the connect: the server may accept (and
     * start its idle clock) before tn_connect returns to us, and a start
     * read after it measured a right server 4 ms short on a loaded
     * machine. */
    uint64_t start = now_ms(), deadline = start + TS_AWAIT_MS;
    int silent = tn_connect(t.port), chatty = tn_connect(t.port);
    while (!tn_readable(silent, 0) && now_ms() < deadline) {
        tn_send_str(chatty, "hi\n");
        ck_assert_int_eq(tn_read_line(chatty, line, sizeof(line)), 3);
    }
    ck_assert_int_eq(tn_read_eof(silent), 0);     /* closed while we talked */
    uint64_t waited = now_ms() - start;
    ck_assert_msg(waited >= 2000, "closed after %llu ms", (unsigned long long)waited);
    tn_send_str(chatty, "still\n");              /* the talker never idled */
    ck_assert_int_eq(tn_read_line(chatty, line, sizeof(line)), 6);
    assert_ended_as("a silent connection past --idle-timeout", wait_ends(1, 1), 1, 0, 0);
    close(silent);
    close(chatty);
    ts_stop(&t);
    assert_timers_freed("idle connections closed", timers_before);
}
END_TEST

/* A line still at work is not idleness: with --idle-timeout 300 a
 * "!sleep 1000" (offloaded to the business pool in the loop models, so
 * the loop's timer is free to fire meanwhile) gets its reply. A loop that
 * judged an offloaded channel by its last read would close it at 300 ms
 * and lose the reply; the blocking models sleep on their own thread and
 * look at the clock only before their next read. */
START_TEST(a_line_at_work_is_not_idle)
{
    struct test_server t;
    struct server_opts o;
    char line[64];
    ts_opts(&o);
    o.idle_timeout_ms = 300;
    o.offload_threads = 2;
    ts_start(&t, model_under_test, &o);
    int fd = tn_connect(t.port);
    tn_send_str(fd, "!sleep 1000\n");
    ck_assert_msg(tn_read_line(fd, line, sizeof(line)) == 12,
                  "a connection in a 1 s !sleep was closed as idle (--idle-timeout 300)");
    close(fd);
    ts_stop(&t);
}
END_TEST

/* Slowloris: bytes keep coming, a line never completes. */
START_TEST(slow_lines_are_closed)
{
    struct test_server t;
    struct server_opts o;
    char line[64];
    ts_opts(&o);
    o.line_timeout_ms = 400;
    uint64_t timers_before = loop_timers_alive();
    ts_start(&t, model_under_test, &o);
    int drip = tn_connect(t.port), normal = tn_connect(t.port);
    uint64_t start = now_ms();
    bool closed = false;
    for (int i = 0; i < 30 && !closed; i++) {     /* a byte every 100 ms */
        if (send(drip, "x", 1, MSG_NOSIGNAL) != 1)
            closed = true;
        else if (tn_readable(drip, 100))
            closed = tn_read_eof(drip) <= 0;
        tn_send_str(normal, "ok\n");
        ck_assert_int_eq(tn_read_line(normal, line, sizeof(line)), 3);
    }
    uint64_t took = now_ms() - start;
    ck_assert_msg(closed, "a line dripping for 3 s was never closed");
    ck_assert_msg(took >= 400, "closed after %llu ms", (unsigned long long)took);
    assert_ended_as("a line dripping past --line-timeout", wait_ends(1, 1), 0, 1, 0);
    close(drip);
    close(normal);
    ts_stop(&t);
    assert_timers_freed("slow lines closed", timers_before);
}
END_TEST

struct flood_sender { int fd; _Atomic bool failed; };

static void *flood_send(void *arg)
{
    struct flood_sender *f = arg;
    char *buf = malloc(65536);
    memset(buf, 'f', 65535);
    buf[65535] = '\n';
    uint64_t deadline = now_ms() + 20000;
    while (now_ms() < deadline) {
        ssize_t n = send(f->fd, buf, 65536, MSG_NOSIGNAL);
        if (n < 0 && errno != EAGAIN && errno != EINTR) {
            atomic_store(&f->failed, true);       /* EPIPE, ECONNRESET: closed */
            break;
        }
    }
    free(buf);
    return NULL;
}

START_TEST(clients_that_never_read_are_closed)
{
    struct test_server t;
    struct server_opts o;
    char line[64];
    ts_opts(&o);
    o.stall_timeout_ms = 400;
    uint64_t timers_before = loop_timers_alive();
    ts_start(&t, model_under_test, &o);
    struct flood_sender f = { .fd = tn_connect(t.port) };
    int other = tn_connect(t.port);
    pthread_t th;
    pthread_create(&th, NULL, flood_send, &f);
    pthread_join(th, NULL);                       /* ends when the server closes */
    ck_assert_msg(atomic_load(&f.failed), "a client that never read was never closed");
    assert_ended_as("a client that never read past --stall-timeout", wait_ends(1, 1), 0, 0, 1);
    tn_send_str(other, "fine\n");
    ck_assert_int_eq(tn_read_line(other, line, sizeof(line)), 5);
    close(f.fd);
    close(other);
    ts_stop(&t);
    assert_timers_freed("clients that never read closed", timers_before);
}
END_TEST

/* A lingering close (the reply to !quit is out, our side is shut, the
 * client's bytes are read and dropped until it closes or linger_ms pass
 * in which it took none of our output) is no idle connection: the
 * linger's own timer ends it, linger_ms at least after the !quit (at most
 * twice that here: one more period if the reply was still unacknowledged
 * when the linger began), and --idle-timeout does not, however long the
 * client stays silent. A loop that timed out a lingering channel by its
 * last read closed it after 200 ms, counted as idle. */
START_TEST(a_lingering_close_is_not_timed_out)
{
    enum { IDLE_MS = 200, LINGER_MS = 1000 };
    struct test_server t;
    struct server_opts o;
    char line[64];
    ts_opts(&o);
    o.idle_timeout_ms = IDLE_MS;
    o.linger_ms = LINGER_MS;
    uint64_t timers_before = loop_timers_alive();
    ts_start(&t, model_under_test, &o);
    int fd = tn_connect(t.port);
    uint64_t start = now_ms();
    tn_send_str(fd, "!quit\n");
    ck_assert_int_eq(tn_read_line(fd, line, sizeof(line)), 6);
    ck_assert_int_eq(tn_read_eof(fd), 0);         /* our side is shut: it lingers */
    struct timeout_ends e = wait_ends(1, 0);      /* silent; it closes nothing */
    uint64_t took = now_ms() - start;
    printf("  %-12s lingering after !quit (linger %d ms, --idle-timeout %d): closed after "
           "%llu ms; idle %llu, line timeout %llu, stalled %llu\n", model_under_test,
           LINGER_MS, IDLE_MS, (unsigned long long)took, (unsigned long long)e.idle,
           (unsigned long long)e.slow_line, (unsigned long long)e.stalled);
    fflush(stdout);
    ck_assert_msg(e.closed == 1, "a lingering close (linger %d ms) was not over %llu ms "
                  "after the !quit", LINGER_MS, (unsigned long long)took);
    ck_assert_msg(e.idle + e.slow_line + e.stalled == 0, "a connection lingering after "
                  "!quit (linger %d ms, --idle-timeout %d) was closed by a timeout after "
                  "%llu ms (the board counts %llu idle, %llu line timeout, %llu stalled): "
                  "a lingering channel ends when its linger does, and no timeout ends it",
                  LINGER_MS, IDLE_MS, (unsigned long long)took, (unsigned long long)e.idle,
                  (unsigned long long)e.slow_line, (unsigned long long)e.stalled);
    ck_assert_msg(took >= LINGER_MS, "a lingering close ended %llu ms after the !quit, "
                  "before its linger of %d ms", (unsigned long long)took, LINGER_MS);
    close(fd);
    ts_stop(&t);
    assert_timers_freed("a lingering close", timers_before);
}
END_TEST

/* ---- byte-exact echo under random framing ---------------------------------- */

struct chunk_sender {
    int fd;
    const char *data;
    size_t len;
    unsigned seed;
};

/* Sends data in chunks of random size, so lines arrive split anywhere. */
static void *send_in_random_chunks(void *arg)
{
    struct chunk_sender *c = arg;
    size_t off = 0;
    while (off < c->len) {
        size_t n = 1 + (size_t)rand_r(&c->seed) % 8192;
        if (n > c->len - off)
            n = c->len - off;
        ssize_t w = send(c->fd, c->data + off, n, MSG_NOSIGNAL);
        if (w <= 0 && errno != EINTR)
            break;                          /* closed: the reader will say */
        if (w > 0)
            off += (size_t)w;
    }
    return NULL;
}

/* Random binary lines (every byte value but '\n'), written and read in
 * random chunk sizes by two threads: every byte comes back, in order. */
START_TEST(random_binary_lines_in_random_chunks)
{
    enum { LINES = 3000, LONGEST = 3000 };
    struct test_server t;
    start_default(&t);
    char *data = malloc((size_t)LINES * (LONGEST + 1));
    unsigned seed = 42;
    size_t len = 0;
    for (int i = 0; i < LINES; i++) {
        int n = rand_r(&seed) % LONGEST;
        for (int k = 0; k < n; k++) {
            char b = (char)rand_r(&seed);
            data[len++] = b == '\n' ? '\r' : b;
        }
        data[len++] = '\n';
    }
    int fd = tn_connect(t.port);
    struct chunk_sender cs = { fd, data, len, 7 };
    pthread_t writer;
    pthread_create(&writer, NULL, send_in_random_chunks, &cs);
    char *got = malloc(len);
    size_t have = 0;
    unsigned rseed = 9;
    while (have < len) {
        size_t want = 1 + (size_t)rand_r(&rseed) % 8192;
        if (want > len - have)
            want = len - have;
        ssize_t n = recv(fd, got + have, want, 0);
        if (n < 0 && errno == EINTR)
            continue;
        ck_assert_msg(n > 0, "the echo ended after %zu of %zu bytes (%s)", have, len,
                      n == 0 ? "EOF" : strerror(errno));
        have += (size_t)n;
    }
    pthread_join(writer, NULL);
    /* One assertion, not one per byte: each ck_assert reports to Check's
     * parent through a pipe, and 4.4 million of them took longer than the
     * case's timeout on a loaded machine. */
    size_t first_diff = 0;
    while (first_diff < len && got[first_diff] == data[first_diff])
        first_diff++;
    ck_assert_msg(first_diff == len, "byte %zu of %zu differs", first_diff, len);
    free(got);
    free(data);
    close(fd);
    ts_stop(&t);
}
END_TEST

/* ---- junk ---------------------------------------------------------------------- */

struct junk_reader {
    int fd;
    char *got;
    size_t cap, have;
    ssize_t last;          /* 0: EOF; < 0: -errno */
};

static void *read_until_end(void *arg)
{
    struct junk_reader *r = arg;
    for (;;) {
        ssize_t n = recv(r->fd, r->got + r->have, r->cap - r->have, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0 || r->have + (size_t)n == r->cap) {
            r->last = n < 0 ? -errno : n == 0 ? 0 : 1;
            if (n > 0)
                r->have += (size_t)n;
            return NULL;
        }
        r->have += (size_t)n;
    }
}

/* Eight megabytes of random bytes (a '\n' now and then, as junk has), then
 * a run longer than --max-line: every junk line is echoed exactly, then
 * "!err line-too-long" and EOF; another client never notices; memory stays
 * bounded. */
START_TEST(endless_junk_then_a_run_too_long)
{
    enum { JUNK = 8 << 20, MAX = 4096 };
    struct test_server t;
    struct server_opts o;
    char line[64];
    ts_opts(&o);
    o.max_line = MAX;
    ts_start(&t, model_under_test, &o);
    size_t len = JUNK + 2 * MAX;
    char *data = malloc(len);
    unsigned seed = 3;
    size_t last_newline = 0, run = 0;
    for (size_t i = 0; i < JUNK; i++) {
        data[i] = (char)rand_r(&seed);
        if (++run == MAX)                    /* junk, but no line too long */
            data[i] = '\n';
        if (data[i] == '\n') {
            last_newline = i + 1;
            run = 0;
        }
    }
    memset(data + JUNK, 'z', 2 * MAX);
    struct junk_reader r = { .cap = len + 64 };
    r.got = malloc(r.cap);
    long rss_before = tn_rss_kb();

    int other = tn_connect(t.port);
    r.fd = tn_connect(t.port);
    pthread_t reader, writer;
    struct chunk_sender cs = { r.fd, data, len, 11 };
    pthread_create(&reader, NULL, read_until_end, &r);
    pthread_create(&writer, NULL, send_in_random_chunks, &cs);
    pthread_join(writer, NULL);
    pthread_join(reader, NULL);

    size_t echoed = last_newline;              /* the complete lines */
    size_t err_len = strlen(ECHO_ERR_LINE_TOO_LONG);
    ck_assert_msg(r.last == 0, "the junk connection ended with %s, not EOF",
                  r.last < 0 ? strerror((int)-r.last) : "more data");
    ck_assert_msg(r.have == echoed + err_len, "got %zu bytes, wanted %zu + the error",
                  r.have, echoed);
    ck_assert_msg(memcmp(r.got, data, echoed) == 0, "the junk lines came back changed");
    ck_assert(memcmp(r.got + echoed, ECHO_ERR_LINE_TOO_LONG, err_len) == 0);
    tn_send_str(other, "unaffected\n");
    ck_assert_int_eq(tn_read_line(other, line, sizeof(line)), 11);
    ck_assert(SANITIZED || tn_rss_kb() - rss_before < 16 * 1024);
    close(r.fd);
    close(other);
    free(r.got);
    free(data);
    ts_stop(&t);
}
END_TEST

/* ---- a reader that comes back ----------------------------------------------- */

/* Sanitizers make every byte slower: they send less. */
#if SANITIZED
enum { LATE_READER_MIB = 16 };
#else
enum { LATE_READER_MIB = 100 };
#endif

struct numbered_sender { int fd; uint32_t lines; };

static void format_numbered(char *line, uint32_t i)
{
    memset(line, 'a' + (char)(i % 26), 1023);
    snprintf(line, 16, "%010u", i);
    line[10] = ' ';
    line[1023] = '\n';
}

static void *send_numbered(void *arg)
{
    struct numbered_sender *s = arg;
    char batch[64 * 1024];
    for (uint32_t i = 0; i < s->lines; i += 64) {
        for (uint32_t k = 0; k < 64; k++)
            format_numbered(batch + k * 1024, i + k);
        size_t off = 0;
        while (off < sizeof(batch)) {
            ssize_t n = send(s->fd, batch + off, sizeof(batch) - off, MSG_NOSIGNAL);
            if (n <= 0 && errno != EINTR)
                return NULL;
            if (n > 0)
                off += (size_t)n;
        }
    }
    return NULL;
}

/* 100 MiB sent by a client that reads nothing for half a second, then
 * everything: the server stops reading while its output is full (memory
 * bounded), does not close it inside --stall-timeout, and every byte
 * arrives in order. */
START_TEST(a_late_reader_gets_every_byte)
{
    struct test_server t;
    struct server_opts o;
    ts_opts(&o);
    o.stall_timeout_ms = 5000;
    ts_start(&t, model_under_test, &o);
    struct numbered_sender ns = { tn_connect(t.port), LATE_READER_MIB * 1024u };
    long rss_before = tn_rss_kb(), rss_peak = rss_before;
    pthread_t writer;
    pthread_create(&writer, NULL, send_numbered, &ns);
    usleep(500000);                    /* not reading: everything backs up */
    rss_peak = tn_rss_kb();
    char line[1024], want[1024];
    for (uint32_t i = 0; i < ns.lines; i++) {
        ck_assert_msg(tn_read_exact(ns.fd, line, sizeof(line)),
                      "line %u of %u never arrived", i, ns.lines);
        format_numbered(want, i);
        ck_assert_msg(memcmp(line, want, sizeof(line)) == 0, "line %u changed", i);
        if (i % 4096 == 0 && tn_rss_kb() > rss_peak)
            rss_peak = tn_rss_kb();
    }
    pthread_join(writer, NULL);
    printf("  %-12s late reader: %u MiB echoed, RSS peak +%ld KiB\n", model_under_test,
           (unsigned)LATE_READER_MIB, rss_peak - rss_before);
    ck_assert_msg(SANITIZED || rss_peak - rss_before < 32 * 1024, "RSS grew by %ld KiB",
                  rss_peak - rss_before);
    close(ns.fd);
    ts_stop(&t);
}
END_TEST

/* ---- out of file descriptors ------------------------------------------------- */

/* The child's CPU time (user + system), in seconds, from /proc. */
static double child_cpu_s(pid_t pid)
{
    struct proc_usage u = { 0 };
    ck_assert(proc_usage_read(pid, &u));
    return u.cpu_s;
}

/* The server, in a process of its own under RLIMIT_NOFILE 40, is knocked
 * on by 60 clients: it serves what it can, refuses or leaves waiting the
 * rest, does not spin while out of fds, and accepts again once some
 * clients leave. */
START_TEST(survives_running_out_of_fds)
{
    int ports[2];
    ck_assert_int_eq(pipe(ports), 0);
    pid_t child = fork();
    if (child == 0) {
        struct rlimit lim = { 40, 40 };
        setrlimit(RLIMIT_NOFILE, &lim);
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGTERM);
        pthread_sigmask(SIG_BLOCK, &set, NULL);
        struct server_opts o;
        ts_opts(&o);
        o.no_board = true;
        o.pool.max_threads = 64;       /* the pool is limited by fds here */
        const struct model_desc *m = model_find(model_under_test);
        void *s = m->start(&o);
        uint16_t port = s ? m->port(s) : 0;
        (void)!write(ports[1], &port, sizeof(port));
        int sig;
        sigwait(&set, &sig);
        m->stop(s);
        _exit(0);
    }
    uint16_t port = 0;
    ck_assert_int_eq(read(ports[0], &port, sizeof(port)), sizeof(port));
    ck_assert_int_ne(port, 0);

    enum { N = 60 };
    int fds[N], served = 0, refused = 0;
    char line[64];
    for (int i = 0; i < N; i++) {
        fds[i] = tn_connect(port);
        tn_send_str(fds[i], "hi\n");
        if (tn_readable(fds[i], 500)) {
            ssize_t n = tn_read_line(fds[i], line, sizeof(line));
            if (n == 3)
                served++;
            else {
                refused++;             /* "!err busy", EOF or a reset */
                close(fds[i]);
                fds[i] = -1;
            }
        } else {
            refused++;                 /* waiting in the backlog */
        }
    }
    printf("  %-12s fd limit 40: %d connections served, %d refused or waiting\n",
           model_under_test, served, refused);
    /* Out of fds with clients still knocking: no busy loop. */
    double before = child_cpu_s(child);
    usleep(500000);
    double spent = child_cpu_s(child) - before;
    ck_assert_msg(spent <= 0.10, "the server spun: %.2f s of CPU in 0.5 s", spent);
    ck_assert_int_gt(served, 10);
    ck_assert_int_gt(refused, 0);
    for (int i = 0; i < N; i++)        /* the ones that got in still echo */
        if (fds[i] >= 0 && i < 10) {
            tn_send_str(fds[i], "again\n");
            ck_assert_int_eq(tn_read_line(fds[i], line, sizeof(line)), 6);
        }
    for (int i = 0; i < N; i++)        /* free descriptors: accepting resumes */
        if (fds[i] >= 0) {
            close(fds[i]);
            fds[i] = -1;
        }
    usleep(300000);
    int fresh = tn_connect(port);
    tn_send_str(fresh, "back\n");
    ck_assert_int_eq(tn_read_line(fresh, line, sizeof(line)), 5);
    close(fresh);
    kill(child, SIGTERM);
    int status;
    waitpid(child, &status, 0);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
END_TEST

/* ---- `threadlab serve` as a process: signals and the default bind ------------ */

struct cli_server {
    pid_t pid;
    uint16_t port;
    char dir[64];
    char log[96];
};

/* Start `threadlab serve MODEL EXTRA...` (the binary of this build, from
 * THREADLAB_BIN) on a free port, SIGPIPE at its default as a shell would
 * leave it, and wait for its port file. */
static void cli_server_start(struct cli_server *cs, const char *extra)
{
    const char *bin = getenv("THREADLAB_BIN");
    if (!bin)
        bin = "build/threadlab";
    snprintf(cs->dir, sizeof(cs->dir), "/tmp/threadlab-suite-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(cs->dir));
    char port_file[96];
    snprintf(port_file, sizeof(port_file), "%s/port", cs->dir);
    snprintf(cs->log, sizeof(cs->log), "%s/log", cs->dir);
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "exec %s serve %s --port 0 --port-file %s %s",
             bin, model_under_test, port_file, extra);
    cs->pid = fork();
    ck_assert_int_ge(cs->pid, 0);
    if (cs->pid == 0) {
        int log = open(cs->log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(log, 1);
        dup2(log, 2);
        signal(SIGPIPE, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    uint64_t deadline = now_ms() + 5000;
    cs->port = 0;
    while (cs->port == 0 && now_ms() < deadline) {
        FILE *f = fopen(port_file, "r");
        unsigned p = 0;
        if (f && fscanf(f, "%u", &p) == 1)
            cs->port = (uint16_t)p;
        if (f)
            fclose(f);
        if (cs->port == 0)
            usleep(20000);
    }
    ck_assert_msg(cs->port != 0, "threadlab serve %s did not start: %s", model_under_test,
                  cmd);
}

/* Wait for the server process; returns how long it took, or -1 after
 * limit_ms (then it is killed). */
static long cli_server_wait(struct cli_server *cs, int limit_ms, int *status)
{
    uint64_t start = now_ms();
    while (now_ms() - start < (uint64_t)limit_ms) {
        if (waitpid(cs->pid, status, WNOHANG) == cs->pid)
            return (long)(now_ms() - start);
        usleep(5000);
    }
    kill(cs->pid, SIGKILL);
    waitpid(cs->pid, status, 0);
    return -1;
}

static void cli_server_cleanup(struct cli_server *cs)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/port", cs->dir);
    unlink(path);
    unlink(cs->log);
    rmdir(cs->dir);
}

/* 50 clients, each at most 64 KiB (5000 lines) ahead of its echoes:
 * enough that the server always holds unanswered lines when the stop
 * comes, few enough that answering them takes well under the 10 s bound
 * on a loaded machine (unpaced, each filled a 6 MB receive buffer, and a
 * stop under ASan took 13 s to answer 300 MB; at 256 KiB each, a reactor
 * under ThreadSanitizer beside other tests at load 25 took 10.3 s). Every line is STREAM_LINE_BYTES long. Waits
 * that only the scheduler decides (every stream under way, no silence on
 * a reader) are allowed 30 s: on a machine shared by a load average of 50,
 * a client thread once sat 10 s before its first send. */
enum { STREAMERS = 50, STREAM_LINE_BYTES = 13, STREAM_AHEAD_BYTES = 64 * 1024,
       STREAM_PATIENCE_S = 30 };

struct streamer {
    int fd, id;
    _Atomic bool done;
    _Atomic uint64_t lines_back;  /* the main thread watches it grow */
    _Atomic uint64_t bytes_sent;
    ssize_t end;            /* 0: EOF; < 0: -errno */
    int send_errno;         /* why the writer stopped: EPIPE once we said FIN */
    int late_errno;         /* SO_ERROR at the end: a reset nobody read */
    bool changed, cut_mid_line;
    char tail[16];          /* what came after the last whole line */
};

static void *stream_lines(void *arg)
{
    struct streamer *s = arg;
    char batch[64 * 16];
    for (uint32_t seq = 0; !atomic_load(&s->done); seq += 64) {
        while (atomic_load(&s->bytes_sent) - atomic_load(&s->lines_back) *
               STREAM_LINE_BYTES > STREAM_AHEAD_BYTES && !atomic_load(&s->done))
            usleep(200);
        size_t len = 0;
        for (uint32_t k = 0; k < 64; k++)
            len += (size_t)sprintf(batch + len, "s%02d %08u\n", s->id, seq + k);
        for (size_t off = 0; off < len;) {
            ssize_t n = send(s->fd, batch + off, len - off, MSG_NOSIGNAL);
            if (n <= 0 && errno != EINTR) {
                s->send_errno = errno;  /* we said FIN (EPIPE): fine */
                return NULL;
            }
            if (n > 0) {
                off += (size_t)n;
                atomic_fetch_add(&s->bytes_sent, (uint64_t)n);
            }
        }
    }
    return NULL;
}

/* Reads the echo and checks each line is the next one sent; at the end
 * says FIN, so the writer stops and the server's linger ends. */
static void *check_stream(void *arg)
{
    struct streamer *s = arg;
    char buf[8192], want[32];
    size_t have = 0;
    for (;;) {
        ssize_t n = recv(s->fd, buf + have, sizeof(buf) - have, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            s->end = n < 0 ? -errno : 0;
            s->cut_mid_line = have > 0;
            memcpy(s->tail, buf, have < sizeof(s->tail) - 1 ? have : sizeof(s->tail) - 1);
            break;
        }
        have += (size_t)n;
        char *line = buf, *nl;
        while ((nl = memchr(line, '\n', have - (size_t)(line - buf)))) {
            int len = sprintf(want, "s%02d %08u\n", s->id,
                              (unsigned)atomic_load(&s->lines_back));
            if (nl + 1 - line != len || memcmp(line, want, (size_t)len) != 0)
                s->changed = true;
            atomic_fetch_add(&s->lines_back, 1);
            line = nl + 1;
        }
        have -= (size_t)(line - buf);
        memmove(buf, line, have);
    }
    atomic_store(&s->done, true);
    shutdown(s->fd, SHUT_WR);
    return NULL;
}

/* SIGTERM while 50 clients stream pipelined lines: each gets back exactly
 * what it sent, up to a line boundary, then EOF (not a reset); the server
 * exits 0 well within its stop deadline (10 s). A reset may reach either
 * of a client's threads (whichever calls first takes the error) or come
 * after both are done, so the writer's error and the socket's pending
 * error are checked too: once the server's kernel resets a connection, the
 * replies still in its send queue are gone. */
START_TEST(sigterm_while_fifty_clients_stream)
{
    struct cli_server cs;
    /* The pool needs a thread per streaming client, or 34 of them wait. */
    cli_server_start(&cs, strcmp(model_under_test, "pool") == 0 ? "--max 64" : "");
    struct streamer *s = calloc(STREAMERS, sizeof(*s));
    pthread_t readers[STREAMERS], writers[STREAMERS];
    for (int i = 0; i < STREAMERS; i++) {
        s[i].fd = tn_connect(cs.port);
        s[i].id = i;
        struct timeval patience = { .tv_sec = STREAM_PATIENCE_S };
        setsockopt(s[i].fd, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof(patience));
        ck_assert_int_eq(pthread_create(&readers[i], NULL, check_stream, &s[i]), 0);
        ck_assert_int_eq(pthread_create(&writers[i], NULL, stream_lines, &s[i]), 0);
    }
    uint64_t deadline = now_ms() + STREAM_PATIENCE_S * 1000;
    for (int i = 0; i < STREAMERS; i++)
        while (atomic_load(&s[i].lines_back) < 100 && now_ms() < deadline)
            usleep(5000);
    kill(cs.pid, SIGTERM);
    int status = 0;
    long took_ms = cli_server_wait(&cs, 15000, &status);
    uint64_t total = 0;
    for (int i = 0; i < STREAMERS; i++) {
        pthread_join(readers[i], NULL);
        pthread_join(writers[i], NULL);
        socklen_t len = sizeof(s[i].late_errno);
        getsockopt(s[i].fd, SOL_SOCKET, SO_ERROR, &s[i].late_errno, &len);
        close(s[i].fd);
        total += s[i].lines_back;
    }
    printf("  %-12s SIGTERM with 50 clients streaming: exited in %ld ms, "
           "%llu lines answered\n", model_under_test, took_ms,
           (unsigned long long)total);
    for (int i = 0; i < STREAMERS; i++) {
        ck_assert_msg(s[i].lines_back >= 100, "client %d got %llu lines before the stop "
                      "(%llu in all), then %s; it sent %llu bytes, then %s", i,
                      (unsigned long long)s[i].lines_back, (unsigned long long)total,
                      s[i].end == 0 ? "EOF" : strerror((int)-s[i].end),
                      (unsigned long long)s[i].bytes_sent,
                      s[i].send_errno ? strerror(s[i].send_errno) : "no error");
        ck_assert_msg(!s[i].changed, "client %d got a line it did not send", i);
        ck_assert_msg(s[i].end == 0, "client %d ended with %s, not EOF", i,
                      strerror((int)-s[i].end));
        ck_assert_msg(!s[i].cut_mid_line, "client %d got half a line after %llu whole "
                      "ones: '%s'", i, (unsigned long long)s[i].lines_back, s[i].tail);
        ck_assert_msg(s[i].send_errno != ECONNRESET && s[i].late_errno != ECONNRESET,
                      "client %d was reset (seen by its %s) after %llu lines back: "
                      "replies not yet sent were thrown away", i,
                      s[i].send_errno == ECONNRESET ? "writer" : "socket, later",
                      (unsigned long long)s[i].lines_back);
    }
    if (took_ms < 0 || took_ms >= 10000) {         /* what the server said, to see why */
        FILE *log = fopen(cs.log, "r");
        char said[256];
        while (log && fgets(said, sizeof(said), log))
            printf("  server said: %s", said);
        if (log)
            fclose(log);
        fflush(stdout);
    }
    ck_assert_msg(took_ms >= 0, "the server did not exit within 15 s of SIGTERM");
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "the server exited with status %d", status);
    ck_assert_int_lt(took_ms, 10000);
    free(s);
    cli_server_cleanup(&cs);
}
END_TEST

/* A second SIGTERM while the graceful stop waits on a 30 s !sleep: the
 * server exits at once, with status 1. "At once" is typically a few ms; the
 * bound is 20 s, well short of the sleep a server that ignored the second
 * signal would wait out. */
START_TEST(second_sigterm_exits_at_once)
{
    const long bound_ms = 20000;
    struct cli_server cs;
    char line[64];
    cli_server_start(&cs, "");
    int fd = tn_connect(cs.port);
    tn_send_str(fd, "hi\n!sleep 30000\n");
    ck_assert_int_eq(tn_read_line(fd, line, sizeof(line)), 3);
    await_threads_in(cs.pid, STATE_BLOCKED_SLEEP, 1, "!sleep 30000 in a served process");
    kill(cs.pid, SIGTERM);
    await_closing(cs.pid);
    ck_assert_msg(waitpid(cs.pid, NULL, WNOHANG) == 0,
                  "the server did not wait for the sleeping line");
    kill(cs.pid, SIGTERM);
    int status = 0;
    long took_ms = cli_server_wait(&cs, bound_ms, &status);
    ck_assert_msg(took_ms >= 0, "a second SIGTERM did not end the server within %ld ms",
                  bound_ms);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    close(fd);
    cli_server_cleanup(&cs);
}
END_TEST

/* With no --bind the server listens on 127.0.0.1 only, as /proc/net/tcp
 * shows: a teaching server is not opened to the network by accident. */
START_TEST(default_bind_is_loopback_only)
{
    struct cli_server cs;
    cli_server_start(&cs, "");
    FILE *f = fopen("/proc/net/tcp", "r");
    ck_assert_ptr_nonnull(f);
    char row[512];
    int listening = 0;
    unsigned addr, port, state;
    while (fgets(row, sizeof(row), f))
        if (sscanf(row, " %*d: %8X:%4X %*8X:%*4X %2X", &addr, &port, &state) == 3 &&
            port == cs.port && state == 0x0A) {
            listening++;
            ck_assert_msg(addr == htonl(INADDR_LOOPBACK), "listening on %08X", addr);
        }
    fclose(f);
    ck_assert_int_eq(listening, 1);
    f = fopen("/proc/net/tcp6", "r");          /* and nothing on IPv6 */
    while (f && fgets(row, sizeof(row), f))
        if (sscanf(row, " %*d: %*32s %*s %2X", &state) == 1) {
            char *colon = strchr(row, ':') ? strchr(strchr(row, ':') + 1, ':') : NULL;
            ck_assert_msg(!(colon && strtoul(colon + 1, NULL, 16) == cs.port &&
                            state == 0x0A), "listening on IPv6 too");
        }
    if (f)
        fclose(f);
    kill(cs.pid, SIGTERM);
    int status;
    ck_assert(cli_server_wait(&cs, 10000, &status) >= 0);
    cli_server_cleanup(&cs);
}
END_TEST

/* ---- a connection that holds its loop ------------------------------------------ */

/* The models whose connections share a loop thread. */
static bool is_loop_model(const char *model)
{
    return strcmp(model, "reactor") == 0 || strcmp(model, "multireactor") == 0;
}

/* Two pipelined !sleep 1000 lines on one connection, then, once the first
 * has begun, a ping on another (on the same loop: one worker). The first
 * sleep stalls the loop, as it must; the second waits its turn behind the
 * ping. A loop that answered
 * every buffered line before going back to epoll answered the ping after
 * both, two seconds late. Threads answer the ping at once anyway. */
START_TEST(a_pipelined_slow_line_waits_behind_other_connections)
{
    struct test_server t;
    char line[64];
    start_one_loop(&t);
    int hog = tn_connect(t.port), other = tn_connect(t.port);
    tn_send_str(hog, "warm\n");
    ck_assert_int_eq(tn_read_line(hog, line, sizeof(line)), 5);
    tn_send_str(other, "warm\n");
    ck_assert_int_eq(tn_read_line(other, line, sizeof(line)), 5);

    tn_send_str(hog, "!sleep 1000\n!sleep 1000\n");
    ts_await_threads_in(STATE_BLOCKED_SLEEP, 1, "the first of two !sleep 1000");
    tn_send_str(other, "ping\n");
    ck_assert_int_eq(tn_read_line(other, line, sizeof(line)), 5);
    /* The ping is answered: the hog has one reply at most by now, and its
     * second comes a whole second later. */
    if (tn_readable(hog, 0))
        ck_assert_int_eq(tn_read_line(hog, line, sizeof(line)), 12);
    ck_assert_msg(!tn_readable(hog, 0), "both !sleep lines ran before the other "
                  "connection's ping was answered");
    ck_assert_int_eq(tn_read_line(hog, line, sizeof(line)), 12);
    if (tn_readable(hog, 5000))
        ck_assert_int_eq(tn_read_line(hog, line, sizeof(line)), 12);
    close(hog);
    close(other);
    ts_stop(&t);
}
END_TEST

/* The graceful stop gives up at its timeout even when ten connections
 * each have two !sleep 1000 lines pipelined (20 s in all, on one loop): a
 * line that has begun finishes -- the loop cannot be interrupted -- and
 * then the rest are closed; no connection begins another line past the
 * deadline. The stop takes the timeout (1 s), one line (1 s) and the quiet
 * period (0.1 s). A loop that ran every buffered line first took the whole
 * 20 s; one whose channels each began one more line before the stop's
 * task got its turn (a round of the ten), 10 s. The bound, 6 s, sits
 * between the right stop and the nearest wrong one with 4 s on each side.
 * Loop models only: the blocking ones have no stop timeout. */
START_TEST(the_stop_holds_its_timeout_behind_pipelined_slow_lines)
{
    enum { TIMEOUT_MS = 1000, LINE_MS = 1000, CONNS = 10, LINES = 2, BOUND_MS = 6000 };
    struct test_server t;
    struct server_opts o;
    char line[64];
    ts_opts(&o);
    o.workers = 1;
    o.stop_timeout_ms = TIMEOUT_MS;
    ts_start(&t, model_under_test, &o);
    int fds[CONNS];
    for (int c = 0; c < CONNS; c++) {
        fds[c] = tn_connect(t.port);
        tn_send_str(fds[c], "warm\n");
        ck_assert_int_eq(tn_read_line(fds[c], line, sizeof(line)), 5);
    }
    for (int c = 0; c < CONNS; c++)
        for (int i = 0; i < LINES; i++)
            tn_send_str(fds[c], "!sleep 1000\n");
    ts_await_threads_in(STATE_BLOCKED_SLEEP, 1, "the first !sleep 1000");
    uint64_t start = now_ms();
    ts_stop_now(&t);
    uint64_t took = now_ms() - start;
    printf("  %-12s stop behind %d x %d pipelined !sleep %d: %llu ms (timeout %d ms)\n",
           model_under_test, CONNS, LINES, LINE_MS, (unsigned long long)took, TIMEOUT_MS);
    ck_assert_msg(took < BOUND_MS, "the stop took %llu ms with a "
                  "%d ms timeout", (unsigned long long)took, TIMEOUT_MS);
    for (int c = 0; c < CONNS; c++)
        close(fds[c]);
}
END_TEST

/* ---- a reset while the server is busy with the connection ------------------------ */

/* This process's CPU time, user + system, in seconds. */
static double process_cpu_s(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

/* After the reset: the server spends under 0.05 s of CPU in the next
 * second (a loop woken for the hang-up on every iteration spends all of
 * it), then, once the line is done, ts_stop finds nothing leaked. */
static void assert_quiet_after_reset(const char *what)
{
    double before = process_cpu_s();
    usleep(1000000);
    double spent = process_cpu_s() - before;
    printf("  %-12s reset while %s: %.3f s of CPU in the next second\n",
           model_under_test, what, spent);
    ck_assert_msg(spent < 0.05, "reset while %s: the server spent %.2f s of CPU in "
                  "1 s", what, spent);
}

/* A client resets while its !sleep 1500 runs: offloaded (--offload 2; the
 * blocking models have no business pool and sleep on their own thread) or
 * on the serving thread itself. */
static void reset_during_sleep(int offload_threads, const char *what)
{
    struct test_server t;
    struct server_opts o;
    char line[64];
    ts_opts(&o);
    o.offload_threads = offload_threads;
    ts_start(&t, model_under_test, &o);
    int fd = tn_connect(t.port);
    tn_send_str(fd, "hi\n");
    ck_assert_int_eq(tn_read_line(fd, line, sizeof(line)), 3);
    tn_send_str(fd, "!sleep 1500\n");
    ts_await_threads_in(STATE_BLOCKED_SLEEP, 1, "!sleep 1500 before the reset");
    tn_close_reset(fd);
    assert_quiet_after_reset(what);
    ts_stop_checked(&t, what);
}

START_TEST(a_reset_while_offloaded_does_not_spin)
{
    reset_during_sleep(2, "offloaded");
}
END_TEST

START_TEST(a_reset_while_sleeping_does_not_spin)
{
    reset_during_sleep(0, "sleeping");
}
END_TEST

/* --max-conns 1: the second client is being refused ("!err busy", then a
 * lingering close) when it resets. */
START_TEST(a_reset_while_refused_does_not_spin)
{
    struct test_server t;
    char line[64];
    int holder = start_full_server(&t);
    int refused = tn_connect(t.port);
    tn_send_str(refused, "me too\n");
    ck_assert(tn_readable(refused, 5000));    /* the refusal is under way */
    tn_close_reset(refused);
    assert_quiet_after_reset("refused");
    tn_send_str(holder, "still\n");
    ck_assert_int_eq(tn_read_line(holder, line, sizeof(line)), 6);
    close(holder);
    ts_stop(&t);
}
END_TEST

/* A blocking thread writes the replies of one read together, but never
 * holds one back behind another line's work: with `hi` and a !sleep 3000
 * pipelined in one send, `hi` is readable while the board still shows the
 * thread blocked in the sleep; the sleep's reply comes after it. A batch
 * written only after the whole read's lines held `hi` until the sleep was
 * over. (The 3 s are the margin for `hi` to cross loopback, which takes
 * microseconds.) Blocking models only: a loop without offload answers its
 * read's lines together, after the sleep, and that stall is the reactor's
 * lesson. */
START_TEST(a_reply_is_not_held_behind_a_pipelined_sleep)
{
    if (is_loop_model(model_under_test))
        return;
    struct test_server t;
    char line[64];
    start_default(&t);
    int fd = tn_connect(t.port);
    tn_send_str(fd, "hi\n!sleep 3000\n");
    ts_await_threads_in(STATE_BLOCKED_SLEEP, 1, "hi, then !sleep 3000");
    bool hi_first = false;          /* readable, and the sleep still on after that */
    while (ts_board_shows(STATE_BLOCKED_SLEEP))
        if (tn_readable(fd, 10)) {
            hi_first = ts_board_shows(STATE_BLOCKED_SLEEP);
            break;
        }
    ck_assert_msg(hi_first, "hi was held behind the !sleep: nothing was readable while "
                  "the thread slept");
    ck_assert_int_eq(tn_read_line(fd, line, sizeof(line)), 3);
    ck_assert_int_eq(memcmp(line, "hi\n", 3), 0);
    ck_assert_int_eq(tn_read_line(fd, line, sizeof(line)), 12);
    ck_assert_int_eq(memcmp(line, "!sleep 3000\n", 12), 0);
    close(fd);
    ts_stop(&t);
}
END_TEST

/* ---- !task: work queued on the connection's loop ------------------------------ */

/* !task lines are echoed after their work, in order with the lines around
 * them, with or without a business pool (a loop queues a task on itself,
 * never on the pool); a bad argument is refused as !cpu's is. */
START_TEST(task_lines_echo_in_order)
{
    static const char *const want[] = { "a\n", "!task 2000\n", "b\n",
                                        ECHO_ERR_BAD_ARGUMENT, "!task 0\n", "c\n" };
    char line[64];
    for (int offload = 0; offload <= 2; offload += 2) {
        struct test_server t;
        struct server_opts o;
        ts_opts(&o);
        o.offload_threads = offload;
        ts_start(&t, model_under_test, &o);
        int fd = tn_connect(t.port);
        tn_send_str(fd, "a\n!task 2000\nb\n!task 10000001\n!task 0\nc\n");
        for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
            ssize_t n = tn_read_line(fd, line, sizeof(line));
            ck_assert_msg(n == (ssize_t)strlen(want[i]) && memcmp(line, want[i], (size_t)n) == 0,
                          "offload %d: reply %zu is not %s", offload, i, want[i]);
        }
        close(fd);
        ts_stop(&t);
    }
}
END_TEST

/* Two clients on one loop queue a long !task each; the second resets while
 * the first one's task runs, so its own task still waits in the queue (or
 * its line is still unread). The loop frees it when the task comes round,
 * and goes on serving: the sanitizer builds catch a use after free. */
START_TEST(a_reset_while_a_task_waits)
{
    struct test_server t;
    char line[64];
    start_one_loop(&t);
    int first = tn_connect(t.port), second = tn_connect(t.port);
    tn_send_str(first, "!task 200000\n");
    tn_send_str(second, "!task 200000\n");
    usleep(50000);
    tn_close_reset(second);
    ck_assert_int_eq(tn_read_line(first, line, sizeof(line)), 13);
    tn_send_str(first, "still here\n");
    ck_assert_int_eq(tn_read_line(first, line, sizeof(line)), 11);
    close(first);
    ts_stop_checked(&t, "a reset while a task waits");
}
END_TEST

/* ---- ioRatio on the real server ---------------------------------------------- */

/* Under load --conns 64 --depth 4 --mix task=200:50, the worker loops'
 * task share of the time both I/O and tasks wanted the loop (the loop's
 * own accounting: task_ns less task_idle_ns against io_ns) is 100 - ratio,
 * within 10 points, at ioRatio 50 and 80, and at most 100 - ratio + 10 at
 * ioRatio 20 (see below). Wall time plays no part: a
 * busy machine stretches I/O and tasks alike. (The whole split, idle
 * iterations included, stays near 80-90% tasks whatever the ratio: each
 * connection waits for its !task, so the clients cannot give the loop
 * more I/O than the tasks let through; docs/loop.md.) */
START_TEST(worker_loops_share_time_as_io_ratio_says)
{
    for (int ratio = 20; ratio <= 80; ratio += 30) {
        struct test_server t;
        struct server_opts so;
        struct load_opts o;
        char target[32], err[128];
        struct load_report *r = malloc(sizeof(*r));
        ts_opts(&so);
        so.io_ratio_pct = ratio;
        ts_start(&t, model_under_test, &so);
        load_opts_init(&o);
        snprintf(target, sizeof(target), "127.0.0.1:%u", t.port);
        ck_assert_int_eq(net_parse_hostport(target, &o.addr, &o.addr_len, err, sizeof(err)), 0);
        o.target = target;
        o.conns = 64;
        o.depth = 4;
        o.task_pct = 50;
        o.task_us = 200;
        o.total_lines = 8000;
        o.duration_s = 0;
        o.threads = 2;
        o.timeout_s = 30;
        ck_assert_int_eq(load_run(&o, r), 0);
        ck_assert_msg(r->errors_total == 0, "ioRatio %d: %llu load errors", ratio,
                      (unsigned long long)r->errors_total);
        struct board_snapshot *snap = ts_own_board();
        double io = 0, shared_task = 0;
        for (int i = 0; i < snap->nloops; i++) {
            if (strcmp(snap->loops[i].name, "boss") == 0)
                continue;
            io += (double)snap->loops[i].io_ns;
            shared_task += (double)(snap->loops[i].task_ns - snap->loops[i].task_idle_ns);
        }
        double pct = io + shared_task > 0 ? 100 * shared_task / (io + shared_task) : 0;
        printf("%s ioRatio %d: tasks took %.1f%% of the loops' shared time (expected %d%%)\n",
               model_under_test, ratio, pct, 100 - ratio);
        /* The budget is a ceiling: tasks never get more than their share
         * while I/O wants the loop. It is reached only while tasks are
         * queued all along: at ioRatio 20 (4 x the I/O time) this
         * workload's queue runs dry now and then on a loaded machine
         * (56.7% was seen once), so that ratio is held to the ceiling only. */
        /* Shares of time are the plain build's to judge: under the
         * sanitizers the load generator's own slowness leaves the loop
         * without I/O for long stretches (77.7% at ioRatio 80 was seen
         * under ThreadSanitizer at load 30), and the budget's exactness is
         * check_loop's (check_task_share). */
        ck_assert_msg(SANITIZED || pct <= 100 - ratio + 10, "%s ioRatio %d: task share %.1f%%, "
                      "more than %d%% +10", model_under_test, ratio, pct, 100 - ratio);
        ck_assert_msg(SANITIZED || ratio < 50 || pct >= 100 - ratio - 10, "%s ioRatio %d: task share "
                      "%.1f%%, less than %d%% -10", model_under_test, ratio, pct, 100 - ratio);
        free(snap);
        free(r);
        ts_stop(&t);
    }
}
END_TEST

/* A client that sends and never reads: its loop's board slot shows the
 * channel paused and at least high water of output pending, and both
 * come back to zero when the client leaves. */
START_TEST(backpressure_shows_on_the_loop)
{
    struct test_server t;
    char chunk[64 * 1024];
    start_default(&t);
    int fd = tn_connect(t.port);
    memset(chunk, 'x', sizeof(chunk));
    for (size_t i = 1023; i < sizeof(chunk); i += 1024)
        chunk[i] = '\n';
    bool paused = false;
    uint64_t pending = 0;
    for (uint64_t until = now_ms() + 20000; !paused && now_ms() < until;) {
        while (send(fd, chunk, sizeof(chunk), MSG_DONTWAIT | MSG_NOSIGNAL) > 0)
            ;
        usleep(20000);
        struct board_snapshot *snap = ts_own_board();
        for (int i = 0; i < snap->nloops; i++)
            if (snap->loops[i].channels_paused == 1) {
                paused = true;
                pending = snap->loops[i].out_pending_bytes;
            }
        free(snap);
    }
    ck_assert_msg(paused, "no loop showed the channel paused");
    ck_assert_msg(pending > CHANNEL_HIGH_WATER_BYTES, "paused with %llu bytes pending",
                  (unsigned long long)pending);
    tn_close_reset(fd);
    bool clear = false;
    for (uint64_t until = now_ms() + 10000; !clear && now_ms() < until;) {
        usleep(20000);
        struct board_snapshot *snap = ts_own_board();
        clear = true;
        for (int i = 0; i < snap->nloops; i++)
            clear = clear && snap->loops[i].channels_paused == 0 &&
                    snap->loops[i].out_pending_bytes == 0;
        free(snap);
    }
    ck_assert_msg(clear, "the loop still counts the closed channel's backlog");
    ts_stop(&t);
}
END_TEST

/* The shared suite: its cases by subject, each with its hang guard.
 * Long function: a table, one line a test. */
Suite *model_suite(const char *model_name)
{
    model_under_test = model_name;
    Suite *s = suite_create(model_name);

    TCase *proto = tcase_create("protocol");
    tcase_set_timeout(proto, 30);
    tcase_add_test(proto, echo_commands_over_socket);
    tcase_add_test(proto, one_byte_at_a_time);
    tcase_add_test(proto, a_reply_is_not_held_behind_a_pipelined_sleep);
    tcase_add_test(proto, oversized_line_closes_only_that_connection);
    tcase_add_test(proto, reset_mid_line_leaves_server_serving);
    tcase_add_test(proto, socat_client_echoes);
    tcase_add_test(proto, half_close_answers_then_eof);
    tcase_add_test(proto, hundred_thousand_pipelined_lines_in_order);
    tcase_add_test(proto, random_binary_lines_in_random_chunks);
    suite_add_tcase(s, proto);

    TCase *blocking = tcase_create("blocking");
    tcase_set_timeout(blocking, 30);
    tcase_add_test(blocking, sleep_and_the_other_connections);
    suite_add_tcase(s, blocking);

    TCase *stop = tcase_create("stop");
    tcase_set_timeout(stop, 30);
    tcase_add_test(stop, stop_loses_no_received_line);
    tcase_add_test(stop, stop_loses_no_line_waiting_behind_an_offloaded_one);
    if (is_loop_model(model_name))
        tcase_add_test(stop, the_stop_holds_its_timeout_behind_pipelined_slow_lines);
    suite_add_tcase(s, stop);

    TCase *fairness = tcase_create("fairness");
    tcase_set_timeout(fairness, 30);
    tcase_add_test(fairness, a_pipelined_slow_line_waits_behind_other_connections);
    suite_add_tcase(s, fairness);

    TCase *resets = tcase_create("resets");
    tcase_set_timeout(resets, 30);
    tcase_add_test(resets, a_reset_while_offloaded_does_not_spin);
    tcase_add_test(resets, a_reset_while_sleeping_does_not_spin);
    tcase_add_test(resets, a_reset_while_refused_does_not_spin);
    suite_add_tcase(s, resets);

    TCase *faults = tcase_create("faults");
    tcase_set_timeout(faults, 120);
    tcase_add_test(faults, a_megabyte_without_newline);
    tcase_add_test(faults, slow_reader_gets_every_reply_before_the_close);
    tcase_add_test(faults, two_hundred_slowloris_and_a_probe);
    tcase_add_test(faults, ten_thousand_connections_come_and_go);
    tcase_add_test(faults, endless_junk_then_a_run_too_long);
    tcase_add_test(faults, a_late_reader_gets_every_byte);
    tcase_add_test(faults, survives_running_out_of_fds);
    suite_add_tcase(s, faults);

    TCase *process = tcase_create("process");
    tcase_set_timeout(process, 60);
    tcase_add_test(process, sigterm_while_fifty_clients_stream);
    tcase_add_test(process, second_sigterm_exits_at_once);
    tcase_add_test(process, default_bind_is_loopback_only);
    suite_add_tcase(s, process);

    TCase *limits = tcase_create("limits");
    tcase_set_timeout(limits, 60);
    tcase_add_test(limits, max_conns_refuses_with_busy);
    tcase_add_test(limits, refusals_do_not_hold_the_acceptor);
    tcase_add_test(limits, idle_connections_are_closed);
    tcase_add_test(limits, a_line_at_work_is_not_idle);
    tcase_add_test(limits, slow_lines_are_closed);
    tcase_add_test(limits, clients_that_never_read_are_closed);
    tcase_add_test(limits, a_lingering_close_is_not_timed_out);
    suite_add_tcase(s, limits);

    TCase *task = tcase_create("task");
    tcase_set_timeout(task, 60);
    tcase_add_test(task, task_lines_echo_in_order);
    tcase_add_test(task, a_reset_while_a_task_waits);
    if (is_loop_model(model_name))
        tcase_add_test(task, worker_loops_share_time_as_io_ratio_says);
    if (is_loop_model(model_name))
        tcase_add_test(task, backpressure_shows_on_the_loop);
    suite_add_tcase(s, task);

    TCase *load = tcase_create("load");
    tcase_set_timeout(load, 2 * LOAD_LINE_TIMEOUT_S);   /* a hang guard */
    tcase_add_loop_test(load, load_matrix_no_errors, 0,
                        (int)(sizeof(load_cases) / sizeof(load_cases[0])));
    suite_add_tcase(s, load);
    return s;
}

int ts_run(Suite *s)
{
    /* Test servers publish boards; keep them out of the user's own board
     * directory, where a running `threadlab top` would show them. */
    char dir[64];
    snprintf(dir, sizeof(dir), "/tmp/threadlab-tests-%u", (unsigned)getuid());
    setenv("THREADLAB_BOARD_DIR", dir, 0);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    /* Each case ran in a child of its own; one that failed an assertion or
     * was killed at its timeout never stopped its servers, so their boards
     * stayed. The children are all gone now: remove the boards of dead
     * processes (what any reader does), leaving live servers' alone. */
    struct board_entry live[64];
    (void)board_list(live, 64, true);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
