/* fairness.c -- a connection that holds its loop: a pipelined slow line
 * waits behind other connections, and the stop holds its timeout. */
#include "internal.h"

/* ---- a connection that holds its loop ------------------------------------------ */

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

void ms_add_fairness_tests(TCase *fairness, TCase *stop, bool loop_model)
{
    tcase_add_test(fairness, a_pipelined_slow_line_waits_behind_other_connections);
    if (loop_model)
        tcase_add_test(stop, the_stop_holds_its_timeout_behind_pipelined_slow_lines);
}
