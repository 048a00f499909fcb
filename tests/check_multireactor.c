/* check_multireactor.c -- model 4: the shared echo suite, then what is the
 * multi-reactor's own: round robin over the workers, one thread per
 * connection for its whole life, a !sleep that stalls only its own loop,
 * and connections opening and closing from many threads (run it under
 * make check-tsan). */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model_suite.h"
#include "multireactor/multireactor.h"
#include "testnet.h"

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
    char line[128];
    tn_send_str(fd, "!who\n");
    ssize_t n = tn_read_line(fd, line, sizeof(line));
    ck_assert_int_gt(n, 0);
    line[n] = '\0';
    const char *t = strstr(line, "thread=worker-");
    ck_assert_msg(t != NULL, "!who said: %s", line);
    return atoi(t + strlen("thread=worker-"));
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

    /* A long sleep, so that a slow run cannot blur the two answers below:
     * "at once" is about 1 ms, "stalled" is the whole second. */
    tn_send_str(sleeper, "!sleep 1000\n");
    usleep(20000);
    uint64_t start = tn_now_ms();
    for (int i = 0; i < 20; i++) {
        tn_send_str(other, "ping\n");
        ck_assert_int_eq(tn_read_line(other, line, sizeof(line)), 5);
    }
    uint64_t other_ms = tn_now_ms() - start;
    ck_assert_msg(!tn_readable(sleeper, 0), "the sleeper answered first");
    ck_assert_msg(other_ms < 500, "another loop's connection took %llu ms",
                  (unsigned long long)other_ms);

    tn_send_str(neighbour, "ping\n");
    ck_assert_int_eq(tn_read_line(neighbour, line, sizeof(line)), 5);
    uint64_t neighbour_ms = tn_now_ms() - start;
    ck_assert_msg(neighbour_ms >= 500, "the sleeping loop answered its other "
                  "connection after %llu ms", (unsigned long long)neighbour_ms);
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
    uint64_t deadline = tn_now_ms() + 5000;
    uint64_t left;
    do {
        left = 0;
        for (int w = 0; w < 4; w++)
            left += multireactor_worker_channels(s, w);
    } while (left > 0 && tn_now_ms() < deadline && !usleep(5000));
    ck_assert_uint_eq(left, 0);               /* every one closed on its loop */
    multireactor_stop(s);
}
END_TEST

int main(void)
{
    Suite *s = model_suite("multireactor");
    TCase *tc = tcase_create("multireactor");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, round_robin_over_the_workers);
    tcase_add_test(tc, one_thread_per_connection_for_life);
    tcase_add_test(tc, sleep_stalls_only_its_own_loop);
    tcase_add_test(tc, connections_churn_from_many_threads);
    suite_add_tcase(s, tc);
    return ts_run(s);
}
