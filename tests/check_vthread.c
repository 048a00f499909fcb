/* check_vthread.c -- model 5: the shared echo suite, plus what only the
 * virtual threads have: a few carriers for many connections, spread
 * round robin; the switch; the guard page's report; a blocking call that
 * pins its carrier with --pin and is handed to a spare without. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model_suite.h"
#include "probe/board_read.h"
#include "testnet.h"
#include "vthread/runtime.h"
#include "vthread/stack.h"
#include "vthread/switch.h"
#include "vthread/vthread.h"

/* ---- the switch, alone ---------------------------------------------------------- */

static struct vt_context main_ctx, coro_ctx;
static int trace[8], ntrace;

static void coro_entry(void *arg)
{
    vt_context_entered();
    int *step = arg;
    for (;;) {
        trace[ntrace++] = 100 + (*step)++;
        vt_switch(&coro_ctx, &main_ctx);
    }
}

/* A context made on a stack of its own runs when switched to, keeps its
 * locals across switches, and gives control back where it was taken. */
START_TEST(the_switch_goes_and_comes_back)
{
    struct vt_stack st;
    int step = 0;
    ck_assert_int_eq(vt_stack_alloc(&st, VT_STACK_MIN_BYTES), 0);
    vt_context_of_thread(&main_ctx);
    vt_context_make(&coro_ctx, st.lo, st.bytes, coro_entry, &step);
    for (int i = 0; i < 3; i++) {
        trace[ntrace++] = i;
        vt_switch(&main_ctx, &coro_ctx);
    }
    int want[] = { 0, 100, 1, 101, 2, 102 };
    ck_assert_int_eq(ntrace, 6);
    for (int i = 0; i < 6; i++)
        ck_assert_int_eq(trace[i], want[i]);
    printf("  vthread      switch: %s\n", vt_switch_kind());
    vt_context_free(&coro_ctx);
    vt_context_free(&main_ctx);
    vt_stack_free(&st);
}
END_TEST

/* ---- the guard page ---------------------------------------------------------------- */

/* Deep enough for any stack: each frame holds a kilobyte it uses. */
static __attribute__((noinline)) int recurse(int depth)
{
    volatile char frame[1024];
    frame[0] = (char)depth;
    return depth > 1000000 ? frame[0] : recurse(depth + 1) + frame[0];
}

static void overflowing_main(struct vthread *self, void *arg)
{
    (void)self, (void)arg;
    printf("%d\n", recurse(0));
}

/* A vthread that recurses past its stack hits the guard page: the report
 * names it and the stack's size, and the process exits with
 * VT_STACK_OVERFLOW_EXIT (a plain SIGSEGV without the handler). */
START_TEST(an_overflow_names_the_vthread_and_exits)
{
    int pipefd[2];
    ck_assert_int_eq(pipe(pipefd), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        dup2(pipefd[1], STDERR_FILENO);
        struct vt_runtime_opts o = { .carriers = 1, .stack_bytes = 32 * 1024,
                                     .handoff_ms = 20 };
        struct vt_runtime *rt = vt_runtime_start(&o);
        if (!rt || vt_spawn(rt, -1, 7, overflowing_main, NULL) < 0)
            _exit(2);
        vt_runtime_wait_empty(rt);
        _exit(0);                       /* survived: the test fails */
    }
    close(pipefd[1]);
    char msg[512] = "";
    size_t got = 0;
    ssize_t n;
    while (got + 1 < sizeof(msg) && (n = read(pipefd[0], msg + got, sizeof(msg) - 1 - got)) > 0)
        got += (size_t)n;
    msg[got] = '\0';
    close(pipefd[0]);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == VT_STACK_OVERFLOW_EXIT,
                  "the child ended with status 0x%x, not exit %d; it said: %s", status,
                  VT_STACK_OVERFLOW_EXIT, msg);
    ck_assert_msg(strstr(msg, "virtual thread vt-7 overflowed its stack of 32768 bytes"),
                  "the report does not name vt-7 and 32768 bytes: %s", msg);
}
END_TEST

/* ---- carriers ------------------------------------------------------------------------ */

static void start_vthread(struct test_server *t, int carriers, bool pin)
{
    struct server_opts o;
    ts_opts(&o);
    o.carriers = carriers;
    o.pin = pin;
    ts_start(t, "vthread", &o);
}

/* 200 connections, each answered, on the same threads as none: two
 * carriers, the monitor, the acceptor. !who names the vthread and its
 * carrier, and new connections go round robin over the carriers. */
START_TEST(many_connections_few_threads_round_robin)
{
    enum { N = 200 };
    struct test_server t;
    int fds[N];
    char line[128], thread[64], want[64];
    start_vthread(&t, 2, false);
    tn_expect_threads("carrier-", 2);    /* each names itself as it starts */
    tn_expect_threads("monitor", 1);
    for (int i = 0; i < N; i++) {
        fds[i] = tn_connect(t.port);
        tn_send_str(fds[i], "hi\n");
        ck_assert_int_eq(tn_read_line(fds[i], line, sizeof(line)), 3);
    }
    ck_assert_int_eq(tn_thread_count(""), t.threads_before);
    for (int i = 0; i < 4; i++) {
        tn_who_thread(fds[i], thread, sizeof(thread));
        snprintf(want, sizeof(want), "vt-%d@carrier-%d", i + 1, i % 2);
        ck_assert_str_eq(thread, want);
    }
    for (int i = 0; i < N; i++)
        close(fds[i]);
    ts_stop(&t);
}
END_TEST

/* Two connections on one carrier; one sends !sleep. */
struct sleeper_pair { int sleeper, other; };

static struct sleeper_pair sleep_on_one_carrier(struct test_server *t, const char *sleep)
{
    struct sleeper_pair p = { tn_connect(t->port), tn_connect(t->port) };
    char line[64];
    tn_send_str(p.other, "warm\n");              /* both are served */
    ck_assert_int_eq(tn_read_line(p.other, line, sizeof(line)), 5);
    tn_send_str(p.sleeper, sleep);
    ts_await_threads_in(STATE_BLOCKED_SLEEP, 1, "the sleeper's !sleep");
    tn_send_str(p.other, "ping\n");
    ck_assert_int_eq(tn_read_line(p.other, line, sizeof(line)), 5);
    return p;
}

static void end_pair(struct test_server *t, struct sleeper_pair *p)
{
    close(p->sleeper);
    close(p->other);
    ts_stop_checked(t, "a sleeper and another on one carrier");
}

/* --pin: the sleep holds its carrier, so the other connection's ping is
 * answered only after the sleeper's reply (Java's pinning). */
START_TEST(pin_holds_the_carrier_through_a_sleep)
{
    struct test_server t;
    char line[64];
    start_vthread(&t, 1, true);
    struct sleeper_pair p = sleep_on_one_carrier(&t, "!sleep 500\n");
    ck_assert_msg(tn_readable(p.sleeper, 0), "the ping was answered during the sleep: "
                  "the carrier was not pinned");
    ck_assert_int_eq(tn_read_line(p.sleeper, line, sizeof(line)), 11);
    ck_assert_uint_eq(vthread_handoffs(t.server), 0);
    end_pair(&t, &p);
}
END_TEST

static bool board_has_event(const char *words)
{
    struct board_entry e[BOARD_LIST_MAX];
    int n = board_list(e, BOARD_LIST_MAX, false);
    static struct board_snapshot snap;
    char err[160];
    for (int i = 0; i < n; i++) {
        if (e[i].pid != getpid() || board_read(e[i].path, &snap, err, sizeof(err)) < 0)
            continue;
        for (int k = 0; k < snap.nevents; k++)
            if (strstr(snap.events[k].text, words))
                return true;
    }
    return false;
}

/* Without --pin, the monitor sees the carrier stuck past --handoff-ms and
 * starts a spare that takes its run queue: the ping is answered while the
 * sleep goes on; the board names the handoff; the spare ends once the
 * sleep has returned. */
START_TEST(a_stuck_carrier_is_handed_to_a_spare)
{
    struct test_server t;
    char line[64];
    start_vthread(&t, 1, false);
    struct sleeper_pair p = sleep_on_one_carrier(&t, "!sleep 2000\n");
    ck_assert_msg(!tn_readable(p.sleeper, 0), "the sleeper answered before the ping");
    ck_assert_uint_eq(vthread_handoffs(t.server), 1);
    ck_assert_int_eq(tn_thread_count("spare-"), 1);
    ck_assert_msg(board_has_event("carrier-0 blocked in a call"), "no handoff event");
    ck_assert_int_eq(tn_read_line(p.sleeper, line, sizeof(line)), 12);
    tn_expect_threads("spare-", 0);
    tn_send_str(p.other, "after\n");             /* the carrier is whole again */
    ck_assert_int_eq(tn_read_line(p.other, line, sizeof(line)), 6);
    end_pair(&t, &p);
}
END_TEST

/* Many blocking calls at once on one carrier: spares stand in for spares,
 * and each runner back from its call must get the carrier back, however
 * the token races. 16 connections each sleep 30 ms, five rounds, and every
 * reply comes; a runner that took the token back before the waiters got
 * it, then slept in epoll_wait, left them waiting for ever (the stop hung
 * with them). */
START_TEST(spares_give_the_carrier_back_under_many_sleeps)
{
    enum { CONNS = 16, ROUNDS = 5 };
    struct test_server t;
    int fds[CONNS];
    char line[64];
    start_vthread(&t, 1, false);
    for (int i = 0; i < CONNS; i++)
        fds[i] = tn_connect(t.port);
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < CONNS; i++)
            tn_send_str(fds[i], "!sleep 30\nx\n");
        for (int i = 0; i < CONNS; i++) {
            ck_assert_int_eq(tn_read_line(fds[i], line, sizeof(line)), 10);
            ck_assert_int_eq(tn_read_line(fds[i], line, sizeof(line)), 2);
        }
    }
    ck_assert_uint_gt(vthread_handoffs(t.server), 0);
    for (int i = 0; i < CONNS; i++)
        close(fds[i]);
    ts_stop(&t);
}
END_TEST

int main(void)
{
    Suite *s = model_suite("vthread");
    TCase *tc = tcase_create("vthread");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, the_switch_goes_and_comes_back);
    tcase_add_test(tc, an_overflow_names_the_vthread_and_exits);
    tcase_add_test(tc, many_connections_few_threads_round_robin);
    tcase_add_test(tc, pin_holds_the_carrier_through_a_sleep);
    tcase_add_test(tc, a_stuck_carrier_is_handed_to_a_spare);
    tcase_add_test(tc, spares_give_the_carrier_back_under_many_sleeps);
    suite_add_tcase(s, tc);
    return ts_run(s);
}
