/* resets.c -- a reset while the server is busy with the connection
 * (offloaded, sleeping, refused) leaves it quiet. */
#include "internal.h"

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

void ms_add_reset_tests(TCase *resets)
{
    tcase_add_test(resets, a_reset_while_offloaded_does_not_spin);
    tcase_add_test(resets, a_reset_while_sleeping_does_not_spin);
    tcase_add_test(resets, a_reset_while_refused_does_not_spin);
}
