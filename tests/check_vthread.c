/* check_vthread.c -- model 5: the shared echo suite, plus what only the
 * virtual threads have: a few carriers for many connections, spread
 * round robin; the switch; the guard page's report; a blocking call that
 * pins its carrier with --pin and is handed to a spare without; and, on
 * the runtime alone, the park and the resume (lab 09's cases "park",
 * "carriers" and "server"). */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model_suite.h"
#include "park.h"
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

/* ---- lab 09: the park and the resume, on the runtime alone ---------------------------- */

/* The grader shows these sentences to the student: in Chinese when the
 * grader speaks it (make lab-check LAB=09 LANG=zh sets LAB_LANG). */
static const char *say(const char *en, const char *zh)
{
    const char *lang = getenv("LAB_LANG");
    if (!lang || !*lang)
        lang = getenv("LANG");
    return lang && strncmp(lang, "zh", 2) == 0 ? zh : en;
}

/* What a test's vthread did, seen from the test's thread. */
struct probe {
    atomic_int reads;         /* read calls begun (each may park) */
    atomic_int done;          /* main returned */
    atomic_llong result;      /* its last read's (or write's) result */
    int fd;                   /* the test's end */
    size_t write_bytes;       /* writer_main: how much to write */
};

/* Answers each read with the name of the thread it ran on ("carrier-0"),
 * until the end of its input. */
static void answer_main(struct vthread *self, void *arg)
{
    struct probe *p = arg;
    char buf[256], name[32] = "";
    for (;;) {
        atomic_fetch_add(&p->reads, 1);
        ssize_t n = vt_read(self, buf, sizeof(buf), 0, false);
        atomic_store(&p->result, n);
        if (n <= 0)
            break;
        pthread_getname_np(pthread_self(), name, sizeof(name));
        size_t len = strlen(name);
        name[len] = '\n';
        struct iovec iov = { .iov_base = name, .iov_len = len + 1 };
        if (vt_write_all(self, &iov, 1, 0) < 0)
            break;
    }
    vt_close(self);
    atomic_store(&p->done, 1);
}

/* Reads once, with a deadline 20 ms away (arg's result) and a stop that
 * may cut the wait. */
static void deadline_main(struct vthread *self, void *arg)
{
    struct probe *p = arg;
    char buf[16];
    atomic_fetch_add(&p->reads, 1);
    atomic_store(&p->result, vt_read(self, buf, sizeof(buf), deadline_in_ms(20), false));
    vt_close(self);
    atomic_store(&p->done, 1);
}

static void stop_main(struct vthread *self, void *arg)
{
    struct probe *p = arg;
    char buf[16];
    atomic_fetch_add(&p->reads, 1);
    atomic_store(&p->result, vt_read(self, buf, sizeof(buf), 0, true));
    vt_close(self);
    atomic_store(&p->done, 1);
}

/* Writes p->write_bytes, more than the socket holds: it must park. */
static void writer_main(struct vthread *self, void *arg)
{
    struct probe *p = arg;
    char *data = calloc(1, p->write_bytes);
    struct iovec iov = { .iov_base = data, .iov_len = p->write_bytes };
    atomic_fetch_add(&p->reads, 1);
    atomic_store(&p->result, vt_write_all(self, &iov, 1, 0));
    free(data);
    vt_close(self);
    atomic_store(&p->done, 1);
}

/* Reads with a deadline 1 ms away and times out: its registration stays
 * armed for reading. Then it makes its own input come (a byte written
 * into the test's end, so the event is due at once) and yields: it is
 * runnable, not parked, when its carrier next polls. It should run once,
 * read the byte, and end. */
static void stale_event_main(struct vthread *self, void *arg)
{
    struct probe *p = arg;
    char buf[16];
    atomic_store(&p->result, vt_read(self, buf, sizeof(buf), deadline_in_ms(1), false));
    if (atomic_load(&p->result) == -ETIMEDOUT && write(p->fd, "x", 1) == 1) {
        vt_yield(self);
        atomic_fetch_add(&p->reads, 1);     /* runs after the yield: once */
        atomic_store(&p->result, vt_read(self, buf, sizeof(buf), 0, false));
    }
    vt_close(self);
    atomic_store(&p->done, 1);
}

static struct vt_runtime *lab_runtime(int carriers)
{
    struct vt_runtime_opts o = { .carriers = carriers, .handoff_ms = VT_HANDOFF_MS_DEFAULT };
    struct vt_runtime *rt = vt_runtime_start(&o);
    ck_assert_ptr_nonnull(rt);
    char name[16];
    for (int i = 0; i < carriers; i++) {
        snprintf(name, sizeof(name), "carrier-%d", i);
        tn_expect_threads(name, 1);
    }
    return rt;
}

/* A vthread on a socket pair: the test keeps p->fd. */
static void lab_spawn(struct vt_runtime *rt, uint64_t id, vt_main_fn main, struct probe *p)
{
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    p->fd = sv[0];
    ck_assert_int_eq(vt_spawn(rt, sv[1], id, main, p), 0);
}

/* Up to 10 s for a counter to reach want: a bound on a failure, not a
 * pause for the code to get somewhere. */
static bool await_count(atomic_int *counter, int want)
{
    uint64_t give_up = now_ms() + 10000;
    while (atomic_load(counter) < want && now_ms() < give_up)
        usleep(1000);
    return atomic_load(counter) >= want;
}

/* The vthread has begun its read number `reads`, and its carrier is
 * asleep in epoll_wait: it can only be asleep once the vthread parked. */
/* The vthread has begun its read (or write) number `reads`. */
static void expect_began(struct probe *p, int reads, const char *vt)
{
    ck_assert_msg(await_count(&p->reads, reads), say(
        "%s did not begin its read number %d in 10 s; it should have: its carrier "
        "switches into each runnable vthread, and into each resumed one again",
        "%s 在 10 秒内没有开始第 %d 次读；它本应开始：载体线程会切换进每个可运行的虚拟线程，"
        "也会再次切换进每个被恢复的虚拟线程"), vt, reads);
}

static void expect_parked(struct probe *p, int reads, const char *carrier, const char *vt)
{
    expect_began(p, reads, vt);
    ck_assert_msg(park_await_sleep(park_find_thread(carrier)), say(
        "%s waited for input that was not there, and its carrier %s never slept in "
        "epoll_wait (10 s): it kept running; a vthread that meets EAGAIN must park, "
        "not try again",
        "%s 等待尚未到达的输入，而它的载体线程 %s 一直没有在 epoll_wait 里睡下（10 秒）："
        "它一直在运行；遇到 EAGAIN 的虚拟线程必须挂起，而不是再试"), vt, carrier);
}

/* Send one byte to the vthread and read its answer: the thread it ran on. */
static bool ask_where(struct probe *p, char *where, size_t cap)
{
    tn_send_str(p->fd, "x");
    if (!tn_readable(p->fd, 10000))
        return false;
    ssize_t n = tn_read_line(p->fd, where, cap);
    if (n <= 0)
        return false;
    where[n - 1] = '\0';
    return true;
}

/* A reader parks on EAGAIN, its carrier sleeps, and input resumes it:
 * the first time, and every time after (a one-shot registration is
 * disarmed once it has fired). */
START_TEST(a_reader_parks_and_input_resumes_it_each_time)
{
    struct vt_runtime *rt = lab_runtime(1);
    struct probe p = { 0 };
    char where[64];
    lab_spawn(rt, 1, answer_main, &p);
    for (int round = 1; round <= 3; round++) {
        expect_parked(&p, round, "carrier-0", "vt-1");
        bool answered = ask_where(&p, where, sizeof(where));
        if (round == 1)
            ck_assert_msg(answered, "%s", say(
                "vt-1 parked waiting for input; a byte arrived and vt-1 was never resumed "
                "(no answer in 10 s): before it parks, a vthread registers with its "
                "carrier's epoll the event it waits for",
                "vt-1 挂起等待输入；一个字节到了，vt-1 却一直没有被恢复（10 秒内没有回答）："
                "虚拟线程挂起之前，要向它的载体线程的 epoll 登记它等待的事件"));
        else
            ck_assert_msg(answered, say(
                "vt-1 was resumed by its first input but not by input number %d (no answer "
                "in 10 s): a one-shot registration is disarmed once its event fires, so "
                "each park must arm it again",
                "vt-1 被第一次输入恢复了，第 %d 次输入却没有恢复它（10 秒内没有回答）："
                "一次性登记在它的事件触发后就失效了，所以每次挂起都要重新登记"), round);
    }
    close(p.fd);
    ck_assert_msg(await_count(&p.done, 1), "%s", say(
        "vt-1's peer closed and vt-1 never saw the end (10 s)",
        "vt-1 的对端关闭了，vt-1 却一直没有读到结束（10 秒）"));
    ck_assert_int_eq((int)atomic_load(&p.result), 0);
    vt_runtime_wait_empty(rt);
    vt_runtime_free(rt);
}
END_TEST

/* A writer whose socket is full parks for EPOLLOUT, its carrier sleeps,
 * and the peer's reading resumes it until all is written. */
START_TEST(a_writer_parks_until_the_peer_reads)
{
    enum { BYTES = 4 << 20 };
    struct vt_runtime *rt = lab_runtime(1);
    struct probe p = { .write_bytes = BYTES };
    lab_spawn(rt, 1, writer_main, &p);
    expect_parked(&p, 1, "carrier-0", "vt-1");
    static char sink[64 * 1024];
    size_t got = 0;
    while (got < BYTES && tn_readable(p.fd, 10000)) {
        ssize_t n = recv(p.fd, sink, sizeof(sink), 0);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    bool all = got == BYTES;
    ck_assert_msg(all, "%s", say(
        "vt-1 parked on a full socket; the peer read and vt-1 was never resumed to write "
        "the rest (10 s): a writer waits for EPOLLOUT (not for a reader's event), armed "
        "again each time it parks",
        "vt-1 因套接字写满而挂起；对端读了数据，vt-1 却一直没有被恢复去写剩下的（10 秒）："
        "写的一方等待的是 EPOLLOUT（不是读的一方等待的事件），每次挂起都要重新登记"));
    ck_assert_msg(await_count(&p.done, 1), "%s", say("vt-1 never finished its write",
                                                     "vt-1 一直没有写完"));
    ck_assert_int_eq((int)atomic_load(&p.result), 0);
    close(p.fd);
    vt_runtime_wait_empty(rt);
    vt_runtime_free(rt);
}
END_TEST

/* A read with a deadline and no input ends with -ETIMEDOUT; a read that a
 * stop may cut ends with -ECANCELED when the stop begins. */
START_TEST(a_deadline_or_a_stop_ends_a_wait)
{
    struct vt_runtime *rt = lab_runtime(1);
    struct probe late = { 0 }, cut = { 0 };
    lab_spawn(rt, 1, deadline_main, &late);
    expect_began(&late, 1, "vt-1");
    ck_assert_msg(await_count(&late.done, 1), "%s", say(
        "vt-1 read with a deadline 20 ms away and no input came; it was still waiting "
        "10 s later: a park with a deadline puts the vthread on its carrier's deadlines",
        "vt-1 以 20 毫秒后的截止时间读，没有输入到来；10 秒后它还在等："
        "带截止时间的挂起要把虚拟线程放进它的载体线程的截止时间里"));
    ck_assert_msg(atomic_load(&late.result) == -ETIMEDOUT, say(
        "vt-1's read past its deadline returned %lld; it should return -ETIMEDOUT",
        "vt-1 过了截止时间的读返回了 %lld；应当返回 -ETIMEDOUT"),
        (long long)atomic_load(&late.result));
    lab_spawn(rt, 2, stop_main, &cut);
    expect_parked(&cut, 1, "carrier-0", "vt-2");
    vt_runtime_stop_input(rt);
    ck_assert_msg(await_count(&cut.done, 1), "%s", say(
        "a stop began while vt-2 waited for input that a stop may cut; vt-2 was still "
        "waiting 10 s later: the park records that a stop may end it",
        "vt-2 在等待可以被停止打断的输入时，停止开始了；10 秒后它还在等："
        "挂起时要记下停止可以结束这次等待"));
    ck_assert_msg(atomic_load(&cut.result) == -ECANCELED, say(
        "vt-2's read cut by the stop returned %lld; it should return -ECANCELED",
        "vt-2 被停止打断的读返回了 %lld；应当返回 -ECANCELED"),
        (long long)atomic_load(&cut.result));
    close(late.fd);
    close(cut.fd);
    vt_runtime_wait_empty(rt);
    vt_runtime_free(rt);
}
END_TEST

/* An event for a vthread that a deadline resumed first, and that is now
 * runnable (it yielded), does not put it on the run queue a second time. */
START_TEST(a_late_event_does_not_resume_a_runnable_vthread)
{
    struct vt_runtime *rt = lab_runtime(1);
    struct probe p = { 0 };
    lab_spawn(rt, 1, stale_event_main, &p);
    ck_assert_msg(await_count(&p.done, 1) || atomic_load(&p.result) != 0, say(
        "vt-1 did not begin its read in 10 s; it should have: its carrier switches into "
        "each runnable vthread",
        "vt-1 在 10 秒内没有开始它的读；它本应开始：载体线程会切换进每个可运行的虚拟线程"));
    ck_assert_msg(await_count(&p.done, 1), "%s", say(
        "vt-1 timed out of a read, its input then came while it was runnable, and it "
        "never finished (10 s): an event for a vthread that is not parked must not "
        "resume it",
        "vt-1 的读超时了，之后它的输入在它可运行时到来，它却一直没有结束（10 秒）："
        "没有挂起的虚拟线程收到事件时，不能恢复它"));
    ck_assert_msg(atomic_load(&p.reads) == 1 && atomic_load(&p.result) == 1, say(
        "vt-1 went on from its yield %d times (its last read returned %lld); it should "
        "once, reading its 1 byte: an event for a vthread that is not parked puts it on "
        "the run queue a second time",
        "vt-1 从让出处继续了 %d 次（最后一次读返回 %lld）；应当只有一次，读到它的 1 个字节："
        "没有挂起的虚拟线程收到事件时，会被第二次放进运行队列"),
        atomic_load(&p.reads), (long long)atomic_load(&p.result));
    close(p.fd);
    vt_runtime_wait_empty(rt);
    vt_runtime_free(rt);
}
END_TEST

/* Two carriers, each asleep with a parked vthread: input for one resumes
 * it on its own carrier, every time. */
START_TEST(a_vthread_is_resumed_on_its_own_carrier)
{
    struct vt_runtime *rt = lab_runtime(2);
    struct probe p[2] = { { 0 }, { 0 } };
    const char *carrier[2] = { "carrier-0", "carrier-1" }, *vt[2] = { "vt-1", "vt-2" };
    char where[64];
    for (int i = 0; i < 2; i++)
        lab_spawn(rt, (uint64_t)i + 1, answer_main, &p[i]);   /* round robin: 0, 1 */
    for (int round = 1; round <= 3; round++) {
        for (int i = 0; i < 2; i++)
            expect_parked(&p[i], round, carrier[i], vt[i]);
        for (int i = 0; i < 2; i++) {
            bool answered = ask_where(&p[i], where, sizeof(where));
            ck_assert_msg(answered && strcmp(where, carrier[i]) == 0, say(
                "%s lives on %s; its input was ready and it %s%s: a vthread is resumed on "
                "its own carrier, the only thread that may touch its run queue",
                "%s 属于 %s；它的输入就绪了，它却%s%s：虚拟线程只能在它自己的载体线程上"
                "恢复，只有那个线程可以碰它的运行队列"),
                vt[i], carrier[i],
                answered ? say("ran on ", "运行在 ") : say("never ran (10 s)",
                                                           "一直没有运行（10 秒）"),
                answered ? where : "");
        }
    }
    for (int i = 0; i < 2; i++)
        close(p[i].fd);
    vt_runtime_wait_empty(rt);
    vt_runtime_free(rt);
}
END_TEST

/* Vthreads whose connections end give their stacks back. */
START_TEST(an_ended_vthread_gives_its_stack_back)
{
    enum { N = 20 };
    long before = vt_stacks_mapped();
    struct vt_runtime *rt = lab_runtime(2);
    static struct probe p[N];
    for (int i = 0; i < N; i++) {
        memset(&p[i], 0, sizeof(p[i]));
        lab_spawn(rt, (uint64_t)i + 1, answer_main, &p[i]);
    }
    for (int i = 0; i < N; i++)
        close(p[i].fd);
    uint64_t give_up = now_ms() + 10000;
    while (vt_runtime_live(rt) > 0 && now_ms() < give_up)
        usleep(1000);
    ck_assert_msg(vt_runtime_live(rt) == 0, say(
        "%llu of %d vthreads whose peers closed never ended (10 s)",
        "对端关闭后，%llu 个（共 %d 个）虚拟线程一直没有结束（10 秒）"),
        (unsigned long long)vt_runtime_live(rt), N);
    long left = vt_stacks_mapped() - before;
    ck_assert_msg(left == 0, say(
        "%d vthreads ended with their connections and %ld of their stacks are still "
        "mapped: the carrier unmaps an ended vthread's stack once it has switched back "
        "(the vthread cannot: it runs on it)",
        "%d 个虚拟线程随它们的连接结束了，其中 %ld 个的栈仍然映射着：载体线程切换回来以后，"
        "要释放已结束的虚拟线程的栈（虚拟线程自己不能：它正运行在上面）"), N, left);
    vt_runtime_free(rt);
}
END_TEST

/* A real vthread server on the park: 64 connections, 200 lines each sent
 * at once, every line back whole and in order; !who then names each
 * connection's own carrier (round robin). Every read has a deadline
 * (testnet.h): a vthread never resumed fails, it does not hang. */
START_TEST(a_server_on_the_park_echoes_pipelined_lines)
{
    enum { CONNS = 64, LINES = 200 };
    struct test_server t;
    static int fds[CONNS];
    static char burst[LINES * 32];
    char line[128], want[128], thread[64];
    start_vthread(&t, 2, false);
    for (int c = 0; c < CONNS; c++) {
        fds[c] = tn_connect(t.port);
        size_t len = 0;
        for (int l = 0; l < LINES; l++)
            len += (size_t)snprintf(burst + len, sizeof(burst) - len, "conn %d line %d\n", c, l);
        tn_send(fds[c], burst, len);
    }
    for (int c = 0; c < CONNS; c++)
        for (int l = 0; l < LINES; l++) {
            snprintf(want, sizeof(want), "conn %d line %d\n", c, l);
            ssize_t n = tn_read_line(fds[c], line, sizeof(line));
            ck_assert_msg(n > 0, say(
                "connection %d got no reply to its line %d in 10 s: the vthread serving it "
                "parked and was never resumed",
                "连接 %d 的第 %d 行在 10 秒内没有得到回复：服务它的虚拟线程挂起了，却一直没有被恢复"),
                c, l);
            line[n < (ssize_t)sizeof(line) ? n : (ssize_t)sizeof(line) - 1] = '\0';
            ck_assert_msg(strcmp(line, want) == 0, say(
                "connection %d's line %d came back as '%.40s'; it should be '%.40s': the lines "
                "of a connection come back whole and in order",
                "连接 %d 的第 %d 行回来的是“%.40s”；应当是“%.40s”：一个连接的各行要完整、按顺序地回来"),
                c, l, line, want);
        }
    for (int c = 0; c < 4; c++) {
        tn_who_thread(fds[c], thread, sizeof(thread));
        snprintf(want, sizeof(want), "vt-%d@carrier-%d", c + 1, c % 2);
        ck_assert_msg(strcmp(thread, want) == 0, say(
            "!who on connection %d answered %s; it should be %s",
            "连接 %d 上的 !who 回答的是 %s；应当是 %s"), c, thread, want);
    }
    for (int c = 0; c < CONNS; c++)
        close(fds[c]);
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
    /* Lab 09's steps (labs/09-virtual-threads/checks). */
    TCase *park = tcase_create("park");
    tcase_set_timeout(park, 60);
    tcase_add_test(park, a_reader_parks_and_input_resumes_it_each_time);
    tcase_add_test(park, a_writer_parks_until_the_peer_reads);
    tcase_add_test(park, a_deadline_or_a_stop_ends_a_wait);
    tcase_add_test(park, a_late_event_does_not_resume_a_runnable_vthread);
    suite_add_tcase(s, park);
    TCase *carriers = tcase_create("carriers");
    tcase_set_timeout(carriers, 60);
    tcase_add_test(carriers, a_vthread_is_resumed_on_its_own_carrier);
    tcase_add_test(carriers, an_ended_vthread_gives_its_stack_back);
    suite_add_tcase(s, carriers);
    TCase *server = tcase_create("server");
    tcase_set_timeout(server, 60);
    tcase_add_test(server, a_server_on_the_park_echoes_pipelined_lines);
    suite_add_tcase(s, server);
    return ts_run(s);
}
