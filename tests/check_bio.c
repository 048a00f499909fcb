/* check_bio.c -- model 1: the shared echo suite, plus what only BIO has:
 * a thread per connection, created on accept and reaped after close, and
 * --max-threads refusing the rest with "!err busy". */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bio/bio.h"
#include "echo/session.h"
#include "model_suite.h"
#include "testnet.h"

static void wait_for_live_threads(struct bio_server *s, uint64_t want)
{
    struct bio_stats st;
    uint64_t deadline = tn_now_ms() + 5000;
    do {
        bio_stats(s, &st);
        if (st.live_threads == want)
            return;
        usleep(5000);
    } while (tn_now_ms() < deadline);
    ck_abort_msg("live threads stayed at %llu, wanted %llu",
                 (unsigned long long)st.live_threads, (unsigned long long)want);
}

/* Threads are named just after they start: poll for the name. */
static void wait_named_threads(const char *prefix, int want)
{
    uint64_t deadline = tn_now_ms() + 5000;
    while (tn_thread_count(prefix) != want && tn_now_ms() < deadline)
        usleep(2000);
    ck_assert_int_eq(tn_thread_count(prefix), want);
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
    wait_named_threads("conn-", N);
    /* The acceptor counts a thread just after pthread_create returns, and
     * by then the thread may have answered: poll for the count too. */
    uint64_t deadline = tn_now_ms() + 5000;
    do {
        bio_stats(s, &st);
    } while (st.threads_spawned < N && tn_now_ms() < deadline && !usleep(2000));
    ck_assert_uint_eq(st.live_threads, N);
    ck_assert_uint_eq(st.threads_spawned, N);

    for (int i = 0; i < N; i++)
        close(fds[i]);
    wait_for_live_threads(s, 0);
    /* The acceptor joins exited threads at least once a second. */
    deadline = tn_now_ms() + 5000;
    do {
        bio_stats(s, &st);
        usleep(10000);
    } while (st.threads_reaped < N && tn_now_ms() < deadline);
    ck_assert_uint_eq(st.threads_reaped, N);
    ck_assert_int_eq(tn_thread_count("conn-"), 0);
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
    wait_named_threads("conn-", 10);
    bio_stop(s);           /* must not wait for the clients to leave */
    ck_assert_int_eq(tn_thread_count("conn-"), 0);
    ck_assert_int_eq(tn_thread_count("acceptor"), 0);
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
    suite_add_tcase(s, tc);
    return ts_run(s);
}
