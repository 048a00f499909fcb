/* model_suite.c -- the shared echo suite. See model_suite.h.
 *
 * Every case starts the model on a free loopback port inside Check's forked
 * child, talks to it as a client would, and stops it; each has a timeout.
 */
#include "model_suite.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "echo/session.h"
#include "load/load.h"
#include "registry.h"
#include "testnet.h"

static const char *model_under_test;   /* set before the runner forks */

void ts_opts(struct server_opts *o)
{
    server_opts_init(o);
    o->listen.port = 0;
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
}

void ts_stop(struct test_server *t)
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

/* ---- the load generator against the model -------------------------------- */

static const struct load_case {
    int conns, depth;
    size_t size;
} load_cases[] = {
    { 1, 1, 1 },     { 1, 1, 64 },     { 1, 8, 64 },    { 1, 8, 65536 },
    { 64, 1, 64 },   { 64, 8, 1 },     { 64, 8, 4096 }, { 64, 1, 65536 },
    { 512, 1, 64 },  { 512, 8, 64 },   { 512, 8, 1000 },{ 512, 1, 65536 },
};

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
    if (lc->size >= 65536 && o.total_lines > 2048)
        o.total_lines = 2048;
    o.threads = lc->conns > 1 ? 2 : 1;
    o.timeout_s = 20;
    ck_assert_int_eq(load_run(&o, r), 0);
    ck_assert_msg(r->errors_total == 0,
                  "%d conns depth %d size %zu: %llu errors (connect %llu reset "
                  "%llu closed %llu mismatch %llu busy %llu timeout %llu)",
                  lc->conns, lc->depth, lc->size,
                  (unsigned long long)r->errors_total,
                  (unsigned long long)r->errors[LOAD_ERR_CONNECT],
                  (unsigned long long)r->errors[LOAD_ERR_RESET],
                  (unsigned long long)r->errors[LOAD_ERR_CLOSED],
                  (unsigned long long)r->errors[LOAD_ERR_MISMATCH],
                  (unsigned long long)r->errors[LOAD_ERR_BUSY],
                  (unsigned long long)r->errors[LOAD_ERR_TIMEOUT]);
    ck_assert_uint_eq(r->lines_ok, o.total_lines);
    ck_assert_uint_eq(r->conns_opened, (uint64_t)lc->conns);
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

    tn_send_str(sleeper, "!sleep 300\n");
    usleep(20000);                           /* the sleep has begun */
    uint64_t start = tn_now_ms();
    for (int i = 0; i < 20; i++) {
        tn_send_str(other, "ping\n");
        ck_assert_int_eq(tn_read_line(other, line, sizeof(line)), 5);
    }
    uint64_t others_ms = tn_now_ms() - start;
    if (sleep_stalls_others(model_under_test)) {
        ck_assert_msg(others_ms >= 200, "20 pings took %llu ms: the loop did not "
                      "stall behind !sleep 300", (unsigned long long)others_ms);
    } else {
        ck_assert_msg(!tn_readable(sleeper, 0),
                      "the sleeper answered before the other connection finished");
    }
    ck_assert_int_eq(tn_read_line(sleeper, line, sizeof(line)), 11);
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
    ts_stop(((struct stopper *)arg)->t);
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
        ck_assert_msg(n == 7 && memcmp(line, want, 7) == 0, "line %d out of order", i);
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
    ck_assert_int_lt(tn_rss_kb() - rss_before, 8 * 1024);
    free(mb);
    close(junk);
    close(other);
    ts_stop(&t);
}
END_TEST

/* 200 slowloris connections drip a byte every 0.5 s; all are closed at the
 * line deadline, while a probe client is answered fast all along. */
START_TEST(two_hundred_slowloris_and_a_probe)
{
    enum { SLOW = 200 };
    struct test_server t;
    struct server_opts o;
    char line[64];
    ts_opts(&o);
    o.line_timeout_ms = 1000;
    o.pool.max_threads = 256;          /* the pool must not queue the probe */
    ts_start(&t, model_under_test, &o);
    int fds[SLOW], open_left = SLOW, probe = tn_connect(t.port);
    for (int i = 0; i < SLOW; i++)
        fds[i] = tn_connect(t.port);
    uint64_t worst_ms = 0, start = tn_now_ms();
    while (open_left > 0 && tn_now_ms() - start < 5000) {
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
        for (int k = 0; k < 10; k++) {  /* probe every 50 ms for 0.5 s */
            uint64_t t0 = tn_now_ms();
            tn_send_str(probe, "probe\n");
            ck_assert_int_eq(tn_read_line(probe, line, sizeof(line)), 6);
            if (tn_now_ms() - t0 > worst_ms)
                worst_ms = tn_now_ms() - t0;
            usleep(50000);
        }
    }
    ck_assert_msg(open_left == 0, "%d slowloris connections still open after 5 s",
                  open_left);
    /* Loose: the probe is typically answered in well under 1 ms. */
    ck_assert_msg(worst_ms < 100, "the probe waited %llu ms", (unsigned long long)worst_ms);
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
    uint64_t deadline = tn_now_ms() + 10000;
    while ((tn_fd_count() != fds_before || tn_thread_count("") > threads_before) &&
           tn_now_ms() < deadline)
        usleep(20000);
    ck_assert_int_eq(tn_fd_count(), fds_before);
    ck_assert_int_le(tn_thread_count(""), threads_before);
    ts_stop(&t);
}
END_TEST

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
    uint64_t deadline = tn_now_ms() + 5000;
    for (;;) {
        again = tn_connect(t.port);
        tn_send_str(again, "now\n");
        n = tn_read_line(again, line, sizeof(line));
        if (n == 4 || tn_now_ms() > deadline)
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

START_TEST(idle_connections_are_closed)
{
    struct test_server t;
    struct server_opts o;
    char line[64];
    ts_opts(&o);
    o.idle_timeout_ms = 300;
    ts_start(&t, model_under_test, &o);
    int silent = tn_connect(t.port), chatty = tn_connect(t.port);
    uint64_t start = tn_now_ms();
    for (int i = 0; i < 12; i++) {               /* 12 x 100 ms of talking */
        tn_send_str(chatty, "hi\n");
        ck_assert_int_eq(tn_read_line(chatty, line, sizeof(line)), 3);
        usleep(100000);
    }
    ck_assert_int_eq(tn_read_eof(silent), 0);     /* closed while we talked */
    uint64_t waited = tn_now_ms() - start;
    ck_assert_msg(waited >= 300, "closed after %llu ms", (unsigned long long)waited);
    tn_send_str(chatty, "still\n");              /* the talker never idled */
    ck_assert_int_eq(tn_read_line(chatty, line, sizeof(line)), 6);
    close(silent);
    close(chatty);
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
    ts_start(&t, model_under_test, &o);
    int drip = tn_connect(t.port), normal = tn_connect(t.port);
    uint64_t start = tn_now_ms();
    bool closed = false;
    for (int i = 0; i < 30 && !closed; i++) {     /* a byte every 100 ms */
        if (send(drip, "x", 1, MSG_NOSIGNAL) != 1)
            closed = true;
        else if (tn_readable(drip, 100))
            closed = tn_read_eof(drip) <= 0;
        tn_send_str(normal, "ok\n");
        ck_assert_int_eq(tn_read_line(normal, line, sizeof(line)), 3);
    }
    uint64_t took = tn_now_ms() - start;
    ck_assert_msg(closed, "a line dripping for 3 s was never closed");
    ck_assert_msg(took >= 400, "closed after %llu ms", (unsigned long long)took);
    close(drip);
    close(normal);
    ts_stop(&t);
}
END_TEST

struct flood_sender { int fd; _Atomic bool failed; };

static void *flood_send(void *arg)
{
    struct flood_sender *f = arg;
    char *buf = malloc(65536);
    memset(buf, 'f', 65535);
    buf[65535] = '\n';
    uint64_t deadline = tn_now_ms() + 20000;
    while (tn_now_ms() < deadline) {
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
    ts_start(&t, model_under_test, &o);
    struct flood_sender f = { .fd = tn_connect(t.port) };
    int other = tn_connect(t.port);
    pthread_t th;
    pthread_create(&th, NULL, flood_send, &f);
    pthread_join(th, NULL);                       /* ends when the server closes */
    ck_assert_msg(atomic_load(&f.failed), "a client that never read was never closed");
    tn_send_str(other, "fine\n");
    ck_assert_int_eq(tn_read_line(other, line, sizeof(line)), 5);
    close(f.fd);
    close(other);
    ts_stop(&t);
}
END_TEST

Suite *model_suite(const char *model_name)
{
    model_under_test = model_name;
    Suite *s = suite_create(model_name);

    TCase *proto = tcase_create("protocol");
    tcase_set_timeout(proto, 30);
    tcase_add_test(proto, echo_commands_over_socket);
    tcase_add_test(proto, one_byte_at_a_time);
    tcase_add_test(proto, oversized_line_closes_only_that_connection);
    tcase_add_test(proto, reset_mid_line_leaves_server_serving);
    tcase_add_test(proto, socat_client_echoes);
    tcase_add_test(proto, half_close_answers_then_eof);
    tcase_add_test(proto, hundred_thousand_pipelined_lines_in_order);
    suite_add_tcase(s, proto);

    TCase *blocking = tcase_create("blocking");
    tcase_set_timeout(blocking, 30);
    tcase_add_test(blocking, sleep_and_the_other_connections);
    suite_add_tcase(s, blocking);

    TCase *stop = tcase_create("stop");
    tcase_set_timeout(stop, 30);
    tcase_add_test(stop, stop_loses_no_received_line);
    suite_add_tcase(s, stop);

    TCase *faults = tcase_create("faults");
    tcase_set_timeout(faults, 120);
    tcase_add_test(faults, a_megabyte_without_newline);
    tcase_add_test(faults, two_hundred_slowloris_and_a_probe);
    tcase_add_test(faults, ten_thousand_connections_come_and_go);
    suite_add_tcase(s, faults);

    TCase *limits = tcase_create("limits");
    tcase_set_timeout(limits, 60);
    tcase_add_test(limits, max_conns_refuses_with_busy);
    tcase_add_test(limits, idle_connections_are_closed);
    tcase_add_test(limits, slow_lines_are_closed);
    tcase_add_test(limits, clients_that_never_read_are_closed);
    suite_add_tcase(s, limits);

    TCase *load = tcase_create("load");
    tcase_set_timeout(load, 120);
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
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
