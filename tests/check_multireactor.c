/* check_multireactor.c -- model 4: the shared echo suite, then what is the
 * multi-reactor's own: round robin over the workers (from one boss or
 * two), one thread per connection for its whole life, a refused
 * connection answered by its worker, a !sleep that stalls only its own
 * loop, and connections opening and closing from many threads (run it
 * under make check-tsan). Last, lab 06's proof of affinity
 * (support/affinity_proof.c) graded: it holds on this server and finds
 * out each flawed fake (support/who_fake.c). The hand-off race is forced
 * through a test seam (loop__set_after_queue), and runs again alone as
 * the case "races" (make lab-races LAB=06). */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "affinity_proof.h"
#include "echo/session.h"
#include "loop/loop.h"
#include "multireactor/loopserver.h"
#include "model_suite.h"
#include "multireactor/multireactor.h"
#include "testnet.h"
#include "who_fake.h"

static struct multireactor_server *start_multi_opts(struct server_opts *o)
{
    struct multireactor_server *s = multireactor_start(o);
    ck_assert_ptr_nonnull(s);
    return s;
}

static struct multireactor_server *start_multi(int workers)
{
    struct server_opts o;
    ts_opts(&o);
    o.workers = workers;
    struct multireactor_server *s = multireactor_start(&o);
    ck_assert_ptr_nonnull(s);
    return s;
}

/* The worker a connection is on, from !who. */
static int who_worker(int fd)
{
    char thread[64];
    tn_who_thread(fd, thread, sizeof(thread));
    ck_assert_msg(strncmp(thread, "worker-", strlen("worker-")) == 0,
                  "!who named thread %s, not a worker", thread);
    return atoi(thread + strlen("worker-"));
}

START_TEST(round_robin_over_the_workers)
{
    enum { N = 22, W = 4 };
    struct multireactor_server *s = start_multi(W);
    int fds[N], per_worker[W + 1] = { 0 };
    for (int i = 0; i < N; i++) {
        fds[i] = tn_connect(multireactor_port(s));
        int w = who_worker(fds[i]);
        ck_assert_int_ge(w, 1);
        ck_assert_int_le(w, W);
        ck_assert_int_eq(w, i % W + 1);          /* strictly in turn */
        per_worker[w]++;
    }
    for (int w = 1; w <= W; w++) {
        ck_assert_int_ge(per_worker[w], N / W);  /* N/W, plus or minus one */
        ck_assert_int_le(per_worker[w], N / W + 1);
        ck_assert_uint_eq(multireactor_worker_channels(s, w - 1),
                          (uint64_t)per_worker[w]);   /* the board agrees */
    }
    for (int i = 0; i < N; i++)
        close(fds[i]);
    multireactor_stop(s);
}
END_TEST

/* Two bosses, each accepting on its own SO_REUSEPORT socket (the kernel
 * picks one per connection by its addresses), share one chooser: each
 * connection, answered before the next connects, still goes to the next
 * worker. A counter per boss (or per thread) would restart the turn on
 * each: with 24 connections spread over two bosses by a hash, all of
 * them on one boss, the only way such a counter passes, has odds of
 * 2^-23. */
START_TEST(round_robin_across_two_bosses)
{
    enum { N = 24, W = 3 };
    struct server_opts o;
    ts_opts(&o);
    o.bosses = 2;
    o.workers = W;
    struct multireactor_server *s = start_multi_opts(&o);
    int fds[N];
    for (int i = 0; i < N; i++) {
        fds[i] = tn_connect(multireactor_port(s));
        int w = who_worker(fds[i]);
        ck_assert_msg(w == i % W + 1, "with two bosses, connection %d went to worker-%d, "
                      "not worker-%d: the bosses do not share one turn", i, w, i % W + 1);
    }
    for (int i = 0; i < N; i++)
        close(fds[i]);
    multireactor_stop(s);
}
END_TEST

/* Over --max-conns, the connection still goes to its worker, which
 * answers "!err busy" and closes it cleanly; its place is given back when
 * it closes, so the limit counts only the connections being served. */
START_TEST(a_refused_connection_is_answered_by_its_worker)
{
    struct server_opts o;
    char line[64];
    ts_opts(&o);
    o.workers = 2;
    o.max_conns = 1;
    struct multireactor_server *s = start_multi_opts(&o);
    int holder = tn_connect(multireactor_port(s));
    ck_assert_int_eq(who_worker(holder), 1);
    for (int i = 0; i < 3; i++) {
        int extra = tn_connect(multireactor_port(s));
        tn_send_str(extra, "me too\n");          /* served by mistake: echoed at once */
        ssize_t n = tn_read_line(extra, line, sizeof(line) - 1);
        line[n > 0 ? n : 0] = '\0';
        ck_assert_msg(n == (ssize_t)strlen(ECHO_ERR_BUSY) && strcmp(line, ECHO_ERR_BUSY) == 0,
                      "connection %d over --max-conns 1 got %s%s%s, not \"!err busy\"", i + 1,
                      n > 0 ? "the line \"" : "", n > 0 ? strtok(line, "\n") : n == 0 ?
                      "a close" : strerror((int)-n), n > 0 ? "\"" : "");
        ck_assert_msg(tn_read_eof(extra) == 0, "a refused connection was not closed "
                      "cleanly after \"!err busy\"");
        close(extra);
    }
    ck_assert_int_eq(who_worker(holder), 1);   /* the one served is still served */
    close(holder);
    multireactor_stop(s);
}
END_TEST

START_TEST(one_thread_per_connection_for_life)
{
    struct multireactor_server *s = start_multi(4);
    int a = tn_connect(multireactor_port(s)), b = tn_connect(multireactor_port(s));
    int wa = who_worker(a), wb = who_worker(b);
    ck_assert_int_ne(wa, wb);
    for (int i = 0; i < 50; i++) {
        ck_assert_int_eq(who_worker(a), wa);
        ck_assert_int_eq(who_worker(b), wb);
    }
    close(a);
    close(b);
    multireactor_stop(s);
}
END_TEST

START_TEST(sleep_stalls_only_its_own_loop)
{
    struct multireactor_server *s = start_multi(2);
    char line[64];
    int sleeper = tn_connect(multireactor_port(s));   /* worker-1 */
    int other = tn_connect(multireactor_port(s));     /* worker-2 */
    int neighbour = tn_connect(multireactor_port(s)); /* worker-1 again */
    ck_assert_int_eq(who_worker(sleeper), 1);
    ck_assert_int_eq(who_worker(other), 2);
    ck_assert_int_eq(who_worker(neighbour), 1);

    /* Judged by order: the other loop answers while the board shows the
     * sleeping loop in its sleep; the sleeping loop answers its neighbour
     * only after the sleep, so the sleeper's reply comes first. */
    tn_send_str(sleeper, "!sleep 1000\n");
    ts_await_threads_in(STATE_BLOCKED_SLEEP, 1, "!sleep 1000 on worker-1");
    for (int i = 0; i < 20; i++) {
        tn_send_str(other, "ping\n");
        ck_assert_int_eq(tn_read_line(other, line, sizeof(line)), 5);
    }
    ck_assert_msg(ts_board_shows(STATE_BLOCKED_SLEEP), "another loop's connection "
                  "waited for worker-1's !sleep 1000 to end");
    ck_assert_msg(!tn_readable(sleeper, 0), "the sleeper answered first");

    tn_send_str(neighbour, "ping\n");
    ck_assert_int_eq(tn_read_line(neighbour, line, sizeof(line)), 5);
    ck_assert_msg(tn_readable(sleeper, 0), "the sleeping loop answered its other "
                  "connection before the sleeper's own !sleep 1000");
    ck_assert_int_eq(tn_read_line(sleeper, line, sizeof(line)), 12);
    close(sleeper);
    close(other);
    close(neighbour);
    multireactor_stop(s);
}
END_TEST

struct churn { uint16_t port; int rounds; };

static void *churn_main(void *arg)
{
    struct churn *c = arg;
    char line[64];
    for (int i = 0; i < c->rounds; i++) {
        int fd = tn_connect(c->port);
        tn_send_str(fd, "hello\n");
        ck_assert_int_eq(tn_read_line(fd, line, sizeof(line)), 6);
        if (i % 3 == 0)
            tn_close_reset(fd);           /* some leave rudely */
        else
            close(fd);
    }
    return NULL;
}

START_TEST(connections_churn_from_many_threads)
{
    struct multireactor_server *s = start_multi(4);
    struct churn c = { multireactor_port(s), 150 };
    pthread_t th[6];
    for (int i = 0; i < 6; i++)
        pthread_create(&th[i], NULL, churn_main, &c);
    for (int i = 0; i < 6; i++)
        pthread_join(th[i], NULL);
    uint64_t deadline = now_ms() + 5000;
    uint64_t left;
    do {
        left = 0;
        for (int w = 0; w < 4; w++)
            left += multireactor_worker_channels(s, w);
    } while (left > 0 && now_ms() < deadline && !usleep(5000));
    ck_assert_uint_eq(left, 0);               /* every one closed on its loop */
    multireactor_stop(s);
}
END_TEST

/* ---- failures at the edges -------------------------------------------------------- */

/* A listener on a free loopback port, without SO_REUSEPORT: no one can
 * join it. Returns the fd; *port is its port. */
static int occupy_a_port(uint16_t *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = { .sin_family = AF_INET,
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof(a);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(listen(fd, 8), 0);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    *port = ntohs(a.sin_port);
    return fd;
}

/* --bosses 2 on a port in use: the first boss fails to bind, the second
 * was never opened. The start fails with EADDRINUSE and closes nothing it
 * did not open -- an unopened boss once had fd 0 (calloc's), and the
 * cleanup closed stdin. */
START_TEST(a_failed_start_closes_no_fd_it_did_not_open)
{
    uint16_t port;
    int holder = occupy_a_port(&port);
    int null_fd = open("/dev/null", O_RDONLY);
    ck_assert_int_eq(dup2(null_fd, 0), 0);    /* fd 0 is open, and ours */
    close(null_fd);
    struct server_opts o;
    ts_opts(&o);
    o.listen.port = port;
    o.bosses = 2;
    o.workers = 1;
    ck_assert_ptr_null(multireactor_start(&o));
    ck_assert_int_eq(errno, EADDRINUSE);
    ck_assert_msg(fcntl(0, F_GETFD) >= 0, "the failed start closed fd 0");
    close(holder);
}
END_TEST

/* A worker whose task queue holds one task, stuck in an inline !sleep:
 * the boss hands it one connection (queued) and cannot hand it two more.
 * Those two are closed and counted, and give back their places: the stop
 * then waits for no connection that will never close. (Before, each lost
 * hand-off stayed counted as open, and the stop waited its whole
 * timeout.) */
START_TEST(a_failed_hand_off_is_counted_and_does_not_hold_the_stop)
{
    enum { STOP_TIMEOUT_MS = 5000 };
    struct server_opts opts;
    ts_opts(&opts);
    opts.stop_timeout_ms = STOP_TIMEOUT_MS;
    struct loop_server_opts o = {
        .model = "multireactor", .boss_prefix = "boss", .worker_prefix = "worker",
        .bosses = 1, .workers = 1, .worker_max_tasks = 1, .opts = &opts,
    };
    struct loop_server *s = loop_server_start(&o);
    ck_assert_ptr_nonnull(s);
    uint16_t port = loop_server_port(s);
    char line[64];
    int sleeper = tn_connect(port);
    tn_send_str(sleeper, "hi\n");
    ck_assert_int_eq(tn_read_line(sleeper, line, sizeof(line)), 3);
    tn_send_str(sleeper, "!sleep 1000\n");
    ts_await_threads_in(STATE_BLOCKED_SLEEP, 1, "!sleep 1000 on the one worker");
    int queued = tn_connect(port);
    uint64_t deadline = now_ms() + 5000;    /* its hand-off takes the one place */
    usleep(100000);
    int lost[2] = { tn_connect(port), tn_connect(port) };
    while (loop_server_handoffs_failed(s) < 2 && now_ms() < deadline)
        usleep(1000);
    ck_assert_msg(loop_server_handoffs_failed(s) == 2, "two hand-offs found the worker's "
                  "queue full, and %llu were counted as lost (count_lost_handoff puts each "
                  "on the board)", (unsigned long long)loop_server_handoffs_failed(s));
    for (int i = 0; i < 2; i++) {
        ck_assert_int_le(tn_read_eof(lost[i]), 0);   /* closed: EOF or a reset */
        close(lost[i]);
    }
    ck_assert_int_eq(tn_read_line(sleeper, line, sizeof(line)), 12);
    tn_send_str(queued, "served\n");           /* the queued one is served */
    ck_assert_int_eq(tn_read_line(queued, line, sizeof(line)), 7);
    close(sleeper);
    close(queued);
    deadline = now_ms() + 5000;
    while (loop_server_worker_channels(s, 0) > 0 && now_ms() < deadline)
        usleep(1000);
    uint64_t start = now_ms();
    loop_server_stop(s);
    uint64_t took = now_ms() - start;
    ck_assert_msg(took < STOP_TIMEOUT_MS / 2, "the stop took %llu ms: it waited for "
                  "connections that were never handed over", (unsigned long long)took);
}
END_TEST

/* ---- lab 06: the hand-off race, forced ---------------------------------------- */

/* The boss counts a connection in open_channels before its worker can see
 * it, because from the hand-off on the worker may serve it, close it and
 * give its place back at any moment, before the boss's next line runs. A
 * boss that takes the place after the hand-off loses that race whenever
 * the worker is quick: the count falls below zero (a 64-bit wrap), and
 * --max-conns refuses, and a graceful stop misses its wakeup, until the
 * boss catches up. The test forces the worker to be quick: the seam
 * (loop__set_after_queue, on the worker's loop) holds the boss the moment
 * loop_run_in_loop has queued register_task on the worker, and the count
 * is read there. Only when it is wrong does the client then quit, so that
 * the worker closes the connection while the boss is still held, and the
 * message says what the count became. No timed guess decides anything:
 * the order is forced, the verdict is a state read at the seam, and the
 * waits are hang guards. */
enum handoff_stage { HANDOFF_ARMED, HANDOFF_HELD, HANDOFF_GO, HANDOFF_PASSED };
static pthread_mutex_t handoff_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t handoff_moved = PTHREAD_COND_INITIALIZER;
static enum handoff_stage handoff_stage;     /* handoff_lock */

/* On the boss's thread, once: later hand-offs go by. */
static void hold_the_boss(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&handoff_lock);
    if (handoff_stage == HANDOFF_ARMED) {
        handoff_stage = HANDOFF_HELD;
        pthread_cond_broadcast(&handoff_moved);
        while (handoff_stage != HANDOFF_GO)
            pthread_cond_wait(&handoff_moved, &handoff_lock);
        handoff_stage = HANDOFF_PASSED;
    }
    pthread_mutex_unlock(&handoff_lock);
}

static void let_the_boss_go(void)
{
    pthread_mutex_lock(&handoff_lock);
    if (handoff_stage == HANDOFF_HELD)
        handoff_stage = HANDOFF_GO;
    pthread_cond_broadcast(&handoff_moved);
    pthread_mutex_unlock(&handoff_lock);
}

/* Wait (up to guard_ms, a hang guard) until the open count is no longer
 * was; returns what it is then. */
static uint64_t open_count_after(struct loop_server *s, uint64_t was, int guard_ms)
{
    uint64_t until = now_ms() + (uint64_t)guard_ms;
    while (loop_server_open_channels(s) == was && now_ms() < until)
        usleep(1000);
    return loop_server_open_channels(s);
}

START_TEST(a_connection_holds_its_place_before_its_worker_has_it)
{
    struct server_opts opts;
    ts_opts(&opts);
    struct loop_server_opts o = {
        .model = "multireactor", .boss_prefix = "boss", .worker_prefix = "worker",
        .bosses = 1, .workers = 1, .opts = &opts,
    };
    struct loop_server *s = loop_server_start(&o);
    ck_assert_ptr_nonnull(s);
    handoff_stage = HANDOFF_ARMED;
    loop__set_after_queue(loop_server__worker_loop(s, 0), hold_the_boss, NULL);
    int fd = tn_connect(loop_server_port(s));

    /* The seam signals when it holds the boss; the deadline is a hang guard. */
    struct timespec guard;
    clock_gettime(CLOCK_REALTIME, &guard);
    guard.tv_sec += 20;
    pthread_mutex_lock(&handoff_lock);
    while (handoff_stage != HANDOFF_HELD &&
           pthread_cond_timedwait(&handoff_moved, &handoff_lock, &guard) == 0)
        ;
    bool held = handoff_stage == HANDOFF_HELD;
    pthread_mutex_unlock(&handoff_lock);
    uint64_t at_handoff = loop_server_open_channels(s), after_close = at_handoff;
    if (held && at_handoff == 0) {
        /* Show what it leads to: the worker ends the connection while the
         * boss has still not run its next line. */
        char line[64];
        tn_send_str(fd, "!quit\n");
        if (tn_read_line(fd, line, sizeof(line)) > 0 && tn_read_eof(fd) == 0) {
            close(fd);
            fd = -1;
            after_close = open_count_after(s, at_handoff, 5000);
        }
    }
    let_the_boss_go();
    loop__set_after_queue(loop_server__worker_loop(s, 0), NULL, NULL);
    if (fd >= 0)
        close(fd);
    loop_server_stop(s);
    ck_assert_msg(held, "the boss never handed connection 1 to its worker through "
                  "loop_run_in_loop (nothing came in 20 s): register_task must be queued on "
                  "the worker's loop with loop_run_in_loop");
    if (after_close != at_handoff)
        ck_assert_msg(at_handoff == 1, "when the boss had handed connection 1 to its worker, "
                      "it counted 0 connections open, not 1; the worker then served it, "
                      "closed it and gave its place back before the boss's next line ran, "
                      "and the count fell below zero (to %llu). The boss should take the "
                      "place in open_channels before the hand-off",
                      (unsigned long long)after_close);
    ck_assert_msg(at_handoff == 1, "when the boss had handed connection 1 to its worker, it "
                  "counted %llu connections open, not 1: from the hand-off on the worker may "
                  "close the connection and give its place back before the boss's next line "
                  "runs, so the place is taken before the hand-off",
                  (unsigned long long)at_handoff);
}
END_TEST

/* ---- lab 06: the proof of affinity, graded --------------------------------------- */

#define PROOF_WORKERS 3                 /* not a power of two: a mask shows */

START_TEST(the_proof_holds_on_this_server)
{
    char why[AFFINITY_WHY_BYTES] = "";
    struct multireactor_server *s = start_multi(PROOF_WORKERS);
    bool holds = affinity_holds(multireactor_port(s), PROOF_WORKERS, why, sizeof(why));
    multireactor_stop(s);
    ck_assert_msg(holds, "your proof says this multi-reactor breaks affinity: %s", why);
}
END_TEST

/* One fake per flaw (loop test i: who_fake_flaw i); the faithful one
 * must pass, every other one must be found out. */
START_TEST(the_proof_tells_each_fake_server_for_what_it_is)
{
    enum who_fake_flaw flaw = (enum who_fake_flaw)_i;
    char why[AFFINITY_WHY_BYTES] = "";
    struct who_fake *f = who_fake_start(flaw, PROOF_WORKERS);
    ck_assert_ptr_nonnull(f);
    bool holds = affinity_holds(who_fake_port(f), PROOF_WORKERS, why, sizeof(why));
    who_fake_stop(f);
    if (flaw == WHO_FAKE_FAITHFUL)
        ck_assert_msg(holds, "your proof failed a server that %s: %s",
                      who_fake_flaw_name(flaw), why);
    else
        ck_assert_msg(!holds, "your proof passed a server whose %s",
                      who_fake_flaw_name(flaw));
}
END_TEST

int main(void)
{
    Suite *s = model_suite("multireactor");
    TCase *tc = tcase_create("multireactor");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, round_robin_over_the_workers);
    tcase_add_test(tc, round_robin_across_two_bosses);
    tcase_add_test(tc, a_refused_connection_is_answered_by_its_worker);
    tcase_add_test(tc, one_thread_per_connection_for_life);
    tcase_add_test(tc, sleep_stalls_only_its_own_loop);
    tcase_add_test(tc, connections_churn_from_many_threads);
    tcase_add_test(tc, a_failed_start_closes_no_fd_it_did_not_open);
    tcase_add_test(tc, a_failed_hand_off_is_counted_and_does_not_hold_the_stop);
    tcase_add_test(tc, a_connection_holds_its_place_before_its_worker_has_it);
    suite_add_tcase(s, tc);
    TCase *proof = tcase_create("proof");
    tcase_set_timeout(proof, 60);
    tcase_add_test(proof, the_proof_holds_on_this_server);
    tcase_add_loop_test(proof, the_proof_tells_each_fake_server_for_what_it_is, 0,
                        WHO_FAKE_FLAWS);
    suite_add_tcase(s, proof);
    /* The forced race again, on its own: make lab-races LAB=06 runs it 10
     * times on the reference and on the mutant labs/06-multi-reactor/races
     * names. */
    TCase *races = tcase_create("races");
    tcase_set_timeout(races, 60);
    tcase_add_test(races, a_connection_holds_its_place_before_its_worker_has_it);
    suite_add_tcase(s, races);
    return ts_run(s);
}
