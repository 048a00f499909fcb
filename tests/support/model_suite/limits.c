/* limits.c -- the limits every model has: --max-conns refuses with
 * !err busy without holding the acceptor; idle, slow-line and stalled
 * connections are closed, and a line at work or a lingering close is not. */
#include "internal.h"

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
int start_full_server(struct test_server *t)
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

void ms_add_limit_tests(TCase *limits)
{
    tcase_add_test(limits, max_conns_refuses_with_busy);
    tcase_add_test(limits, refusals_do_not_hold_the_acceptor);
    tcase_add_test(limits, idle_connections_are_closed);
    tcase_add_test(limits, a_line_at_work_is_not_idle);
    tcase_add_test(limits, slow_lines_are_closed);
    tcase_add_test(limits, clients_that_never_read_are_closed);
    tcase_add_test(limits, a_lingering_close_is_not_timed_out);
}
