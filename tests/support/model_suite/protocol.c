/* protocol.c -- the echo protocol over a real socket: commands, a byte at
 * a time, a !sleep beside other connections, oversized lines, resets, a
 * client we did not write (socat), half close, pipelining. */
#include "internal.h"

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
        ck_assert_msg(n == 7 && memcmp(line, want, 7) == 0, "line %d out of order (%s)", i,
                      n < 0 ? strerror((int)-n) : n == 0 ? "EOF" : "other bytes");
    }
    pthread_join(writer, NULL);
    close(fd);
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

void ms_add_protocol_tests(TCase *proto, TCase *blocking)
{
    tcase_add_test(proto, echo_commands_over_socket);
    tcase_add_test(proto, one_byte_at_a_time);
    tcase_add_test(proto, a_reply_is_not_held_behind_a_pipelined_sleep);
    tcase_add_test(proto, oversized_line_closes_only_that_connection);
    tcase_add_test(proto, reset_mid_line_leaves_server_serving);
    tcase_add_test(proto, socat_client_echoes);
    tcase_add_test(proto, half_close_answers_then_eof);
    tcase_add_test(proto, hundred_thousand_pipelined_lines_in_order);
    tcase_add_test(blocking, sleep_and_the_other_connections);
}
