/* check_bio.c -- model 1: the shared echo suite, plus what only BIO has:
 * a thread per connection, created on accept and reaped after close, and
 * --max-threads refusing the rest with "!err busy". */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bio/bio.h"
#include "blocking/conn.h"
#include "echo/session.h"
#include "model_suite.h"
#include "probe/board.h"
#include "registry.h"
#include "testnet.h"

static void wait_for_live_threads(struct bio_server *s, uint64_t want)
{
    struct bio_stats st;
    uint64_t deadline = now_ms() + 5000;
    do {
        bio_stats(s, &st);
        if (st.live_threads == want)
            return;
        usleep(5000);
    } while (now_ms() < deadline);
    ck_abort_msg("live threads stayed at %llu, wanted %llu",
                 (unsigned long long)st.live_threads, (unsigned long long)want);
}

START_TEST(thread_per_connection_created_and_reaped)
{
    enum { N = 40 };
    struct server_opts o;
    struct bio_stats st;
    int fds[N];
    char line[32];

    ts_opts(&o);
    struct bio_server *s = bio_start(&o);
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(tn_thread_count("acceptor"), 1);
    ck_assert_int_eq(tn_thread_count("conn-"), 0);

    for (int i = 0; i < N; i++) {
        fds[i] = tn_connect(bio_port(s));
        tn_send_str(fds[i], "hi\n");      /* a reply proves its thread runs */
        ck_assert_int_eq(tn_read_line(fds[i], line, sizeof(line)), 3);
    }
    tn_expect_threads("conn-", N);
    /* The acceptor counts a thread just after pthread_create returns, and
     * by then the thread may have answered: poll for the count too. */
    uint64_t deadline = now_ms() + 5000;
    do {
        bio_stats(s, &st);
    } while (st.threads_spawned < N && now_ms() < deadline && !usleep(2000));
    ck_assert_uint_eq(st.live_threads, N);
    ck_assert_uint_eq(st.threads_spawned, N);

    for (int i = 0; i < N; i++)
        close(fds[i]);
    wait_for_live_threads(s, 0);
    /* The acceptor joins exited threads at least once a second. */
    deadline = now_ms() + 5000;
    do {
        bio_stats(s, &st);
        usleep(10000);
    } while (st.threads_reaped < N && now_ms() < deadline);
    ck_assert_uint_eq(st.threads_reaped, N);
    tn_expect_threads("conn-", 0);
    bio_stop(s);
}
END_TEST

START_TEST(max_threads_refuses_with_busy)
{
    struct server_opts o;
    struct bio_stats st;
    char line[32];

    ts_opts(&o);
    o.max_threads = 2;
    struct bio_server *s = bio_start(&o);
    ck_assert_ptr_nonnull(s);

    int a = tn_connect(bio_port(s)), b = tn_connect(bio_port(s));
    tn_send_str(a, "a\n");
    tn_send_str(b, "b\n");
    ck_assert_int_eq(tn_read_line(a, line, sizeof(line)), 2);
    ck_assert_int_eq(tn_read_line(b, line, sizeof(line)), 2);

    /* The third is told, and closed cleanly: the reply is not lost to a
     * reset even though it sent a line first. */
    int c = tn_connect(bio_port(s));
    tn_send_str(c, "let me in\n");
    ssize_t n = tn_read_line(c, line, sizeof(line));
    ck_assert_int_eq(n, (ssize_t)strlen(ECHO_ERR_BUSY));
    ck_assert(memcmp(line, ECHO_ERR_BUSY, (size_t)n) == 0);
    ck_assert_int_eq(tn_read_eof(c), 0);
    close(c);

    /* The first two are unaffected, and a slot frees when one leaves. */
    tn_send_str(a, "still\n");
    ck_assert_int_eq(tn_read_line(a, line, sizeof(line)), 6);
    close(b);
    wait_for_live_threads(s, 1);
    int d = tn_connect(bio_port(s));
    tn_send_str(d, "d\n");
    ck_assert_int_eq(tn_read_line(d, line, sizeof(line)), 2);

    bio_stats(s, &st);
    ck_assert_uint_eq(st.rejected, 1);
    ck_assert_uint_eq(st.accepted, 4);
    close(a);
    close(d);
    bio_stop(s);
}
END_TEST

START_TEST(small_stacks_still_serve)
{
    struct server_opts o;
    char line[32];
    ts_opts(&o);
    o.stack_kb = 64;
    struct bio_server *s = bio_start(&o);
    ck_assert_ptr_nonnull(s);
    int fd = tn_connect(bio_port(s));
    tn_send_str(fd, "!cpu 100\nsmall\n");
    ck_assert_int_eq(tn_read_line(fd, line, sizeof(line)), 9);
    ck_assert_int_eq(tn_read_line(fd, line, sizeof(line)), 6);
    close(fd);
    bio_stop(s);
}
END_TEST

START_TEST(stop_with_idle_connections_joins_all)
{
    struct server_opts o;
    int fds[10];
    ts_opts(&o);
    struct bio_server *s = bio_start(&o);
    ck_assert_ptr_nonnull(s);
    for (int i = 0; i < 10; i++)
        fds[i] = tn_connect(bio_port(s));
    wait_for_live_threads(s, 10);
    tn_expect_threads("conn-", 10);
    bio_stop(s);           /* must not wait for the clients to leave */
    tn_expect_threads("conn-", 0);
    tn_expect_threads("acceptor", 0);
    for (int i = 0; i < 10; i++) {
        ck_assert_int_eq(tn_read_eof(fds[i]), 0);
        close(fds[i]);
    }
}
END_TEST

START_TEST(port_in_use_is_an_error)
{
    struct server_opts o;
    ts_opts(&o);
    struct bio_server *a = bio_start(&o);
    ck_assert_ptr_nonnull(a);
    o.listen.port = bio_port(a);
    struct bio_server *b = bio_start(&o);
    ck_assert_ptr_null(b);
    ck_assert_int_eq(errno, EADDRINUSE);
    bio_stop(a);
}
END_TEST

/* ---- the connection loop itself, on a socketpair ---------------------------- */

/* conn_serve on one end of a SOCK_SEQPACKET socketpair: the packets keep
 * their boundaries, so each write the server makes arrives as one packet
 * and the test can count them. Bio and pool share this loop. */
struct conn_on_pair {
    struct server_opts opts;
    struct conn_registry conns;  /* the stop flag and the serving list */
    struct conn_server srv;
    struct conn conn;
    int client;                 /* the test's end */
    enum echo_end end;          /* how conn_serve ended */
    uint64_t lines;             /* lines it answered */
    pthread_t thread;
};

static void *serve_pair_cb(void *arg)
{
    struct conn_on_pair *p = arg;
    struct board_thread_ref me = { .slot = -1 };
    p->end = conn_serve(&p->srv, &p->conn, "conn-test", &me, &p->lines);
    return NULL;
}

/* The socketpair and the registry, with p->opts as the test set them. */
static void conn_pair_open(struct conn_on_pair *p)
{
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
    ck_assert_int_eq(conn_registry_init(&p->conns), 0);
    p->srv = (struct conn_server){ .model = "bio", .opts = &p->opts,
                                   .board = NULL, .conns = &p->conns };
    p->conn = (struct conn){ .fd = sv[0], .id = 1 };
    p->client = sv[1];
}

/* conn_serve on its own thread. */
static void conn_pair_serve(struct conn_on_pair *p)
{
    ck_assert_int_eq(pthread_create(&p->thread, NULL, serve_pair_cb, p), 0);
}

static void conn_pair_run(struct conn_on_pair *p)
{
    conn_pair_open(p);
    conn_pair_serve(p);
}

/* Join conn_serve's thread, giving it limit_ms: false if it is still
 * running then (the thread is left behind; the case fails anyway). */
static bool conn_pair_joined_within(struct conn_on_pair *p, int limit_ms)
{
    struct timespec at;
    clock_gettime(CLOCK_REALTIME, &at);
    at.tv_sec += limit_ms / 1000;
    at.tv_nsec += (long)(limit_ms % 1000) * 1000000L;
    if (at.tv_nsec >= 1000000000L) {
        at.tv_sec++;
        at.tv_nsec -= 1000000000L;
    }
    return pthread_timedjoin_np(p->thread, NULL, &at) == 0;
}

static void conn_pair_start(struct conn_on_pair *p)
{
    server_opts_init(&p->opts);
    conn_pair_run(p);
}

/* Both ends and the registry, once the serving thread has been joined. */
static void conn_pair_free(struct conn_on_pair *p)
{
    close(p->client);
    close(p->conn.fd);
    conn_registry_destroy(&p->conns);
}

/* Close the client's end and wait for conn_serve to see the EOF. */
static void conn_pair_finish(struct conn_on_pair *p)
{
    close(p->client);
    pthread_join(p->thread, NULL);
    close(p->conn.fd);
    conn_registry_destroy(&p->conns);
}

/* Read packets until want bytes came; returns how many packets. */
static int read_packets(int fd, char *buf, size_t want)
{
    int packets = 0;
    size_t got = 0;
    while (got < want) {
        ck_assert(tn_readable(fd, 5000));
        ssize_t n = recv(fd, buf + got, want - got, 0);
        ck_assert_int_gt(n, 0);
        got += (size_t)n;
        packets++;
    }
    return packets;
}

/* Sixteen lines in one packet make one read, and their replies leave in
 * one write, in order: a write per line (the old loop: 16 packets) is the
 * syscall that made bio and pool cost several times the naive peer per
 * line (docs/performance.md). One read, one write: fixed by the code, not
 * by the scheduler. */
START_TEST(replies_of_one_read_leave_in_one_write)
{
    enum { LINES = 16 };
    struct conn_on_pair p;
    char sent[LINES * 8 + 1] = "", got[sizeof(sent)];
    for (int i = 0; i < LINES; i++)
        snprintf(sent + strlen(sent), sizeof(sent) - strlen(sent), "line%02d\n", i);
    conn_pair_start(&p);
    tn_send(p.client, sent, strlen(sent));
    int packets = read_packets(p.client, got, strlen(sent));
    ck_assert_int_eq(memcmp(got, sent, strlen(sent)), 0);
    ck_assert_int_eq(packets, 1);
    conn_pair_finish(&p);
    ck_assert_int_eq(p.end, ECHO_END_EOF);
    ck_assert_uint_eq(p.lines, LINES);
}
END_TEST

/* Work splits a batch: the replies before a !cpu leave before its work,
 * the rest after it (three packets: "a b", then the !cpu line and "c"
 * together), in order. A loop that wrote a read's replies only at its end
 * would send one packet; one that wrote per line, four. */
START_TEST(work_writes_what_was_collected_first)
{
    struct conn_on_pair p;
    const char *sent = "a\nb\n!cpu 1000\nc\n";
    char got[64];
    conn_pair_start(&p);
    tn_send(p.client, sent, strlen(sent));
    ck_assert(tn_readable(p.client, 5000));
    ssize_t n = recv(p.client, got, sizeof(got), 0);
    ck_assert_int_eq(n, 4);
    ck_assert_int_eq(memcmp(got, "a\nb\n", 4), 0);
    int packets = read_packets(p.client, got, strlen(sent) - 4);
    ck_assert_int_eq(memcmp(got, "!cpu 1000\nc\n", strlen(sent) - 4), 0);
    ck_assert_int_eq(packets, 1);
    conn_pair_finish(&p);
    ck_assert_uint_eq(p.lines, 4);
}
END_TEST

/* !quit ends the batch: what came before it and its own reply are
 * written, the line after it is not answered. */
START_TEST(quit_flushes_the_batch_and_ends)
{
    struct conn_on_pair p;
    const char *sent = "x\n!quit\nnever\n";
    char got[64];
    conn_pair_start(&p);
    tn_send(p.client, sent, strlen(sent));
    pthread_join(p.thread, NULL);
    ck_assert_int_eq(p.end, ECHO_END_QUIT);
    ck_assert_uint_eq(p.lines, 2);
    ssize_t n = recv(p.client, got, sizeof(got), MSG_DONTWAIT);
    ck_assert_int_eq(n, 8);
    ck_assert_int_eq(memcmp(got, "x\n!quit\n", 8), 0);
    ck_assert_int_lt(recv(p.client, got, sizeof(got), MSG_DONTWAIT), 0);
    conn_pair_free(&p);
}
END_TEST

/* A partial line's clock (--line-timeout) starts at that line's first
 * byte: "a" waits 1.5 s, then "\nb" completes it and begins "b", which may
 * wait its own 4 s. A loop that kept the first clock would close the
 * connection 4 s after "a", 2.5 s after "\nb"; this one cannot close it
 * before 4 s after "\nb" came, by its own clock, which reads the time
 * after our send. So an end seen before then is the mistake, whatever
 * the scheduler did. Three reads, two lines: *lines adds them up. */
START_TEST(the_line_clock_restarts_with_each_line)
{
    enum { LINE_TIMEOUT_MS = 4000, FIRST_WAIT_MS = 1500, WATCH_MS = 3200 };
    struct conn_on_pair p;
    char got[8];
    server_opts_init(&p.opts);
    p.opts.line_timeout_ms = LINE_TIMEOUT_MS;
    conn_pair_run(&p);
    tn_send_str(p.client, "a");
    usleep(FIRST_WAIT_MS * 1000);
    uint64_t restart_ms = now_ms();
    tn_send_str(p.client, "\nb");
    ck_assert(tn_readable(p.client, 5000));
    ck_assert_int_eq(recv(p.client, got, sizeof(got), 0), 2);     /* "a\n" */
    if (tn_readable(p.client, WATCH_MS)) {
        uint64_t after_ms = now_ms() - restart_ms;
        ck_assert_msg(after_ms >= LINE_TIMEOUT_MS, "the line 'b' was cut off %llu ms "
                      "after it began: its clock did not restart when 'a' ended",
                      (unsigned long long)after_ms);
    }
    tn_send_str(p.client, "\n");
    ck_assert(tn_readable(p.client, 5000));
    ck_assert_int_eq(recv(p.client, got, sizeof(got), 0), 2);     /* "b\n" */
    conn_pair_finish(&p);
    ck_assert_int_eq(p.end, ECHO_END_EOF);
    ck_assert_msg(p.lines == 2, "2 lines over three reads, but *lines says %llu",
                  (unsigned long long)p.lines);
}
END_TEST

/* A partial line that never completes ends the connection by the line
 * timeout, and says so (the board counts each timeout by its kind). */
START_TEST(a_partial_line_ends_by_the_line_timeout)
{
    struct conn_on_pair p;
    server_opts_init(&p.opts);
    p.opts.line_timeout_ms = 200;
    conn_pair_run(&p);
    tn_send_str(p.client, "never ends");
    pthread_join(p.thread, NULL);
    ck_assert_msg(p.end == ECHO_END_LINE_TIMEOUT, "ended as '%s', not as a line timeout",
                  echo_end_reason(p.end, false));
    conn_pair_free(&p);
}
END_TEST

/* ---- the stop and the timeouts, with the thread blocked in read() --------- */

/* A thread blocked in read() with nothing to read wakes at the stop and
 * ends, though the client neither sends nor leaves: the stop's signal
 * makes the read fail with EINTR, and the thread sees the flag. A stop
 * that set the flag only (or signalled nobody) leaves it blocked for good:
 * conn_registry_stop_input then never returns, or the join below fails. */
START_TEST(a_stop_wakes_a_thread_blocked_in_read)
{
    struct conn_on_pair p;
    char got[8];
    conn_pair_start(&p);
    tn_send_str(p.client, "a\n");
    ck_assert(tn_readable(p.client, 5000));
    ck_assert_int_eq(recv(p.client, got, sizeof(got), 0), 2);
    usleep(50000);                    /* most likely in read() by now; if not, the flag */
    conn_registry_stop_input(&p.conns);
    ck_assert_msg(conn_pair_joined_within(&p, 5000),
                  "a thread blocked in read() was still serving 5 s after the stop");
    ck_assert_int_eq(p.end, ECHO_END_EOF);
    ck_assert_uint_eq(p.lines, 1);
    conn_pair_free(&p);
}
END_TEST

/* A connection whose serving begins after the stop (a pool connection
 * that was queued) answers what the kernel holds for it and ends without
 * waiting: no signal was ever sent to its thread, so only the flag, looked
 * at before its first read, can tell it. */
START_TEST(a_connection_served_after_the_stop_answers_what_is_held)
{
    struct conn_on_pair p;
    char got[16];
    server_opts_init(&p.opts);
    conn_pair_open(&p);
    conn_registry_stop_input(&p.conns);         /* nobody serving yet */
    tn_send_str(p.client, "x\ny\n");
    conn_pair_serve(&p);
    ck_assert_msg(conn_pair_joined_within(&p, 5000),
                  "a connection served after the stop was still waiting for input 5 s later");
    ck_assert_int_eq(p.end, ECHO_END_EOF);
    ck_assert_uint_eq(p.lines, 2);
    ck_assert_int_eq(recv(p.client, got, sizeof(got), MSG_DONTWAIT), 4);
    ck_assert_int_eq(memcmp(got, "x\ny\n", 4), 0);
    conn_pair_free(&p);
}
END_TEST

/* A thread blocked in read() on a silent connection sleeps there until
 * bytes, the stop's signal or its SO_RCVTIMEO (the idle deadline, here a
 * minute away) come: over 0.5 s it wakes a handful of times and runs for
 * no measurable time. One that polls the stop flag with a short
 * SO_RCVTIMEO (10 ms) wakes fifty times on a quiet machine; on a busy one
 * fewer, so the timeout it armed on its socket is read too. Counted and
 * read, not timed. */
START_TEST(an_idle_reader_sleeps_in_read)
{
    struct conn_on_pair p;
    char got[8];
    server_opts_init(&p.opts);
    p.opts.idle_timeout_ms = 60000;
    conn_pair_run(&p);
    pthread_setname_np(p.thread, "conn-idle-test");
    tn_send_str(p.client, "a\n");
    ck_assert(tn_readable(p.client, 5000));
    ck_assert_int_eq(recv(p.client, got, sizeof(got), 0), 2);
    usleep(50000);                      /* back in read() */
    struct tn_thread_use idle = tn_thread_use_over("conn-idle-test", 500);
    /* What the read may block for, as the thread armed it on its socket:
     * the deadline a minute away, or no limit. A short one is a poll,
     * whatever the scheduler lets the thread do with it (a busy machine
     * can hold a 10 ms poller to a few wakeups in 0.5 s). */
    struct timeval armed;
    socklen_t armed_len = sizeof(armed);
    ck_assert_int_eq(getsockopt(p.conn.fd, SOL_SOCKET, SO_RCVTIMEO, &armed, &armed_len), 0);
    conn_pair_finish(&p);
    ck_assert_msg((armed.tv_sec == 0 && armed.tv_usec == 0) || armed.tv_sec >= 1,
                  "a thread blocked in read() on a silent connection armed its read to give up "
                  "after %ld ms, with the idle deadline a minute away: it polls; it should block "
                  "until bytes, the stop's signal or the idle deadline come",
                  (long)armed.tv_sec * 1000 + (long)armed.tv_usec / 1000);
    ck_assert_int_eq(idle.threads, 1);
    long woke = idle.switches, ran = idle.cpu_ticks;
    ck_assert_msg(woke <= 10 && ran <= 5,
                  "a thread blocked in read() on a silent connection woke %ld times and ran %ld ms "
                  "in 0.5 s: it polls; it should block until bytes, the stop's signal or the idle "
                  "deadline come (at most 10 wakeups, 50 ms)", woke, ran * 1000 / sysconf(_SC_CLK_TCK));
}
END_TEST

/* A stop answers the bytes the kernel held when the thread saw it, and no
 * byte that came after. The stop is on before the serving begins, and the
 * held line is a !sleep: the thread reads it (the server's end of the
 * pair then holds nothing: it was read), and the test sends a line while
 * the thread sleeps in it. A thread that reads whatever is there at the
 * end answers that line too. (On a machine so slow that the line comes
 * after the thread has ended, a wrong answer could pass; the right one
 * never fails.) */
START_TEST(a_stop_answers_nothing_sent_after_it)
{
    struct conn_on_pair p;
    char got[64];
    server_opts_init(&p.opts);
    conn_pair_open(&p);
    conn_registry_stop_input(&p.conns);
    tn_send_str(p.client, "!sleep 300\n");
    conn_pair_serve(&p);
    int held = 1;
    for (uint64_t until = now_ms() + 5000; held > 0 && now_ms() < until; usleep(1000))
        ck_assert_int_eq(ioctl(p.conn.fd, FIONREAD, &held), 0);
    ck_assert_msg(held == 0, "the held line was never read after the stop");
    tn_send_str(p.client, "late\n");
    ck_assert_msg(conn_pair_joined_within(&p, 5000),
                  "after a stop, the thread was still serving 5 s later");
    ck_assert_int_eq(p.end, ECHO_END_EOF);
    size_t used = 0;                    /* every reply packet there */
    for (ssize_t n; used < sizeof(got) - 1 &&
                    (n = recv(p.client, got + used, sizeof(got) - 1 - used, MSG_DONTWAIT)) > 0;)
        used += (size_t)n;
    got[used] = '\0';
    bool only_held = p.lines == 1 && strcmp(got, "!sleep 300\n") == 0;
    for (char *c = got; *c; c++)
        *c = *c == '\n' ? ' ' : *c;          /* one line for the grader's message */
    ck_assert_msg(only_held,
                  "a stop answered %" PRIu64 " lines ('%s'): the line sent after the stop began "
                  "was read and answered; only the bytes held when the thread saw the stop are "
                  "(read no further than those)", p.lines, got);
    conn_pair_free(&p);
}
END_TEST

/* What a connection did shows on its server's board: the lines it
 * answered and the bytes in and out, counted as each read is answered. */
START_TEST(a_session_is_counted_on_the_board)
{
    struct conn_on_pair p;
    char got[16];
    server_opts_init(&p.opts);
    conn_pair_open(&p);
    struct board *b = board_create("bio", "test");
    ck_assert_ptr_nonnull(b);
    p.srv.board = b;
    conn_pair_serve(&p);
    tn_send_str(p.client, "a\nbb\n");
    ck_assert_int_eq(read_packets(p.client, got, 5) >= 1, 1);
    conn_pair_finish(&p);
    uint64_t lines = board_counter(b, CTR_LINES), in = board_counter(b, CTR_BYTES_IN),
             out = board_counter(b, CTR_BYTES_OUT);
    board_close(b);
    ck_assert_msg(lines == 2 && in == 5 && out == 5,
                  "after a session of 2 lines (5 bytes each way) the board counts %" PRIu64
                  " lines, %" PRIu64 " bytes in and %" PRIu64 " out: publish each read's lines "
                  "and bytes", lines, in, out);
}
END_TEST

/* Signals for the storm below: a handler that does nothing, without
 * SA_RESTART, as the eintr fault shim does for the whole process. */
static void on_storm_signal(int sig)
{
    (void)sig;
}

struct signal_storm {
    pthread_t target;           /* the thread to interrupt */
    atomic_bool over;           /* the test is done with it */
    atomic_uint sent;
};

static void *storm_main(void *arg)
{
    struct signal_storm *st = arg;
    while (!atomic_load(&st->over)) {
        if (pthread_kill(st->target, SIGUSR1) == 0)
            atomic_fetch_add(&st->sent, 1);
        usleep(1000);
    }
    return NULL;
}

/* --idle-timeout holds while the thread's read() is interrupted every
 * millisecond: each EINTR goes back to the real deadline and re-arms only
 * what is left. A read retried after EINTR with the full SO_RCVTIMEO
 * again (net_read's retry) never reaches a 300 ms timeout under a 1 ms
 * storm, and the join fails. The bound (5 s) is the code's, not the
 * scheduler's: the deadline is 300 ms after conn_serve began. */
START_TEST(the_idle_timeout_holds_under_a_signal_storm)
{
    struct conn_on_pair p;
    struct signal_storm storm = { .sent = 0 };
    struct sigaction sa = { .sa_handler = on_storm_signal };
    sigemptyset(&sa.sa_mask);
    ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);
    server_opts_init(&p.opts);
    p.opts.idle_timeout_ms = 300;
    uint64_t start_ms = now_ms();
    conn_pair_run(&p);
    storm.target = p.thread;
    atomic_init(&storm.over, false);
    pthread_t ticker;
    ck_assert_int_eq(pthread_create(&ticker, NULL, storm_main, &storm), 0);
    bool joined = conn_pair_joined_within(&p, 5000);
    atomic_store(&storm.over, true);
    pthread_join(ticker, NULL);
    ck_assert_msg(joined, "an idle connection was still open 5 s into a 300 ms "
                  "--idle-timeout, its read interrupted %u times",
                  atomic_load(&storm.sent));
    ck_assert_msg(atomic_load(&storm.sent) >= 10, "only %u signals sent: no storm",
                  atomic_load(&storm.sent));
    ck_assert_msg(p.end == ECHO_END_IDLE, "ended as '%s', not as idle",
                  echo_end_reason(p.end, false));
    ck_assert_uint_ge(now_ms() - start_ms, 300);
    conn_pair_free(&p);
}
END_TEST

int main(void)
{
    Suite *s = model_suite("bio");
    TCase *tc = tcase_create("bio");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, thread_per_connection_created_and_reaped);
    tcase_add_test(tc, max_threads_refuses_with_busy);
    tcase_add_test(tc, small_stacks_still_serve);
    tcase_add_test(tc, stop_with_idle_connections_joins_all);
    tcase_add_test(tc, port_in_use_is_an_error);
    tcase_add_test(tc, replies_of_one_read_leave_in_one_write);
    tcase_add_test(tc, work_writes_what_was_collected_first);
    tcase_add_test(tc, quit_flushes_the_batch_and_ends);
    tcase_add_test(tc, the_line_clock_restarts_with_each_line);
    tcase_add_test(tc, a_partial_line_ends_by_the_line_timeout);
    tcase_add_test(tc, a_stop_wakes_a_thread_blocked_in_read);
    tcase_add_test(tc, a_connection_served_after_the_stop_answers_what_is_held);
    tcase_add_test(tc, the_idle_timeout_holds_under_a_signal_storm);
    tcase_add_test(tc, an_idle_reader_sleeps_in_read);
    tcase_add_test(tc, a_stop_answers_nothing_sent_after_it);
    tcase_add_test(tc, a_session_is_counted_on_the_board);
    suite_add_tcase(s, tc);
    return ts_run(s);
}
