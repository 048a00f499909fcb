/* check_net.c -- the lingering close, on a socket pair we control; and a
 * name lookup that fails with EAI_SYSTEM.
 *
 * A lingering close waits while the peer keeps taking our output, and
 * gives up linger_ms after it stops; but never lingers longer than
 * NET_LINGER_MAX_PERIODS linger periods in all. A Unix socket pair makes
 * "the peer took our output" exact: a read frees the send queue at once
 * (SIOCOUTQ), with no TCP window in between.
 */
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/net.h"
#include "model_suite.h"
#include "testnet.h"

/* The sipper below takes one 4 KiB block every 100 ms; the linger gives
 * up after LINGER_MS without progress. 300 ms leaves a busy machine 200 ms
 * to run the sipper late before it really stops reading (with 150 ms and
 * a read every 50 ms, an ASan build at load 20 made the linger give up on
 * it, rightly: the test had bounded the scheduler). */
enum { LINGER_MS = 300, SIP_BYTES = 4096, SIP_EVERY_US = 100000 };

/* The server's end with its send queue full, as after a burst of replies
 * the client has not read yet. */
static void full_pair(int sv[2])
{
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    /* As large as the system allows: the sipper must not empty it before
     * the cap (4.5 s x 40 KiB/s = 180 KiB). */
    int big = 1 << 30;
    setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
    char block[SIP_BYTES] = { 0 };
    fcntl(sv[0], F_SETFL, O_NONBLOCK);
    while (write(sv[0], block, sizeof(block)) > 0)
        ;
    fcntl(sv[0], F_SETFL, 0);
}

struct sipper { int fd; atomic_bool stop; };

/* A client that reads one block every 100 ms: always taking a little. (A
 * Unix socket frees send-queue space a whole written block at a time, so
 * it reads whole blocks.) */
static void *sip(void *arg)
{
    struct sipper *s = arg;
    char buf[SIP_BYTES];
    while (!atomic_load(&s->stop) && read(s->fd, buf, sizeof(buf)) > 0)
        usleep(SIP_EVERY_US);
    return NULL;
}

START_TEST(a_peer_that_reads_nothing_is_cut_after_linger_ms)
{
    int sv[2];
    full_pair(sv);
    uint64_t start = now_ms();
    net_lingering_close(sv[0], LINGER_MS);
    uint64_t took = now_ms() - start;
    ck_assert_msg(took >= LINGER_MS && took < LINGER_MS * NET_LINGER_MAX_PERIODS / 2,
                  "lingered %llu ms for a peer that read nothing",
                  (unsigned long long)took);
    close(sv[1]);
}
END_TEST

START_TEST(a_peer_that_keeps_reading_is_waited_for_up_to_the_cap)
{
    int sv[2];
    full_pair(sv);
    struct sipper s = { .fd = sv[1] };
    pthread_t th;
    pthread_create(&th, NULL, sip, &s);
    uint64_t start = now_ms();
    net_lingering_close(sv[0], LINGER_MS);
    uint64_t took = now_ms() - start;
    /* Our end is closed now, so the sipper's read cannot block: it gets
     * data or EOF, sees the flag, and leaves. */
    atomic_store(&s.stop, true);
    pthread_join(th, NULL);
    close(sv[1]);
    /* It was reading all along: the linger ran to the cap (4.5 s), not
     * to the first linger_ms, and stopped there though the peer had more
     * to read. */
    ck_assert_msg(took >= LINGER_MS * (NET_LINGER_MAX_PERIODS - 1),
                  "gave up after %llu ms on a peer that kept reading",
                  (unsigned long long)took);
    ck_assert_msg(took < LINGER_MS * NET_LINGER_MAX_PERIODS * 2,
                  "lingered %llu ms, past the cap", (unsigned long long)took);
}
END_TEST

/* ---- a lookup that fails with EAI_SYSTEM -------------------------------------- */

/* This binary's getaddrinfo stands in for libc's (the executable's symbol
 * wins): while failing_lookups is set it fails the way a resolver out of
 * fds or memory can, EAI_SYSTEM, with errno left at 0. */
static atomic_bool failing_lookups;

int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
                struct addrinfo **res)
{
    if (atomic_load(&failing_lookups)) {
        errno = 0;
        return EAI_SYSTEM;
    }
    int (*real)(const char *, const char *, const struct addrinfo *, struct addrinfo **);
    *(void **)&real = dlsym(RTLD_NEXT, "getaddrinfo");
    return real(node, service, hints, res);
}

/* EAI_SYSTEM with errno 0 once made the lookup return 0, "resolved", with
 * the address never written: a parse that succeeds into garbage. */
START_TEST(eai_system_is_an_error_even_without_errno)
{
    struct sockaddr_storage addr;
    socklen_t len = 0;
    char err[128];
    ck_assert_int_eq(net_parse_hostport("127.0.0.1:7", &addr, &len, err, sizeof(err)), 0);
    atomic_store(&failing_lookups, true);
    ck_assert_int_eq(net_parse_hostport("127.0.0.1:7", &addr, &len, err, sizeof(err)),
                     -EINVAL);
    struct net_acceptor a;
    struct net_listen_opts lo = { .bind = "127.0.0.1" };
    int rc = net_acceptor_open(&a, &lo, true);
    ck_assert_int_lt(rc, 0);
    ck_assert_int_eq(a.listen_fd, -1);
    atomic_store(&failing_lookups, false);
}
END_TEST

/* ---- the one clock (net/clock.h) ------------------------------------------ */

START_TEST(timespec_at_ns_splits_seconds_and_nanoseconds)
{
    struct timespec ts = timespec_at_ns(3 * NS_PER_S + 999999999u);
    ck_assert_int_eq(ts.tv_sec, 3);
    ck_assert_int_eq(ts.tv_nsec, 999999999);
    ts = timespec_at_ns(0);
    ck_assert_int_eq(ts.tv_sec, 0);
    ck_assert_int_eq(ts.tv_nsec, 0);
    uint64_t before = now_ns(), deadline = deadline_in_ms(250);
    ck_assert_uint_ge(deadline, before + 250 * NS_PER_MS);
    ck_assert_uint_ge(now_ms(), before / NS_PER_MS);
}
END_TEST

/* A timed wait on a clock_cond_init condvar ends at the deadline on
 * now_ns's clock: not before it (a condvar left on CLOCK_REALTIME reads
 * the monotonic deadline as a date decades ago and returns at once). Only
 * the lower bound is checked: a busy machine may wake it late. */
START_TEST(a_clock_cond_waits_until_the_monotonic_deadline)
{
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t cond;
    ck_assert_int_eq(clock_cond_init(&cond), 0);
    uint64_t deadline = deadline_in_ms(50);
    struct timespec until = timespec_at_ns(deadline);
    pthread_mutex_lock(&lock);
    int rc;
    do
        rc = pthread_cond_timedwait(&cond, &lock, &until);
    while (rc == 0);                 /* a spurious wakeup: wait on */
    pthread_mutex_unlock(&lock);
    ck_assert_int_eq(rc, ETIMEDOUT);
    ck_assert_uint_ge(now_ns(), deadline);
    pthread_cond_destroy(&cond);
}
END_TEST

/* A partial write: the vectors it took whole are stepped past, the one
 * it took part of starts where the write stopped, the rest are intact. */
START_TEST(iov_consume_steps_past_what_was_written)
{
    char a[] = "abc", b[] = "defgh", c[] = "ij";
    struct iovec v[3] = { { a, 3 }, { b, 5 }, { c, 2 } }, *at = v;
    int left = net_iov_consume(&at, 3, 5);
    ck_assert_int_eq(left, 2);
    ck_assert_ptr_eq(at, &v[1]);
    ck_assert_ptr_eq(at->iov_base, b + 2);
    ck_assert_uint_eq(at->iov_len, 3);
    left = net_iov_consume(&at, left, 3);
    ck_assert_int_eq(left, 1);
    ck_assert_ptr_eq(at, &v[2]);
    ck_assert_uint_eq(at->iov_len, 2);
    ck_assert_int_eq(net_iov_consume(&at, left, 2), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("net");
    TCase *tc = tcase_create("linger");
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, a_peer_that_reads_nothing_is_cut_after_linger_ms);
    tcase_add_test(tc, a_peer_that_keeps_reading_is_waited_for_up_to_the_cap);
    suite_add_tcase(s, tc);
    TCase *lookup = tcase_create("lookup");
    tcase_add_test(lookup, eai_system_is_an_error_even_without_errno);
    tcase_add_test(lookup, iov_consume_steps_past_what_was_written);
    suite_add_tcase(s, lookup);
    TCase *clock = tcase_create("clock");
    tcase_add_test(clock, timespec_at_ns_splits_seconds_and_nanoseconds);
    tcase_add_test(clock, a_clock_cond_waits_until_the_monotonic_deadline);
    suite_add_tcase(s, clock);
    return ts_run(s);
}
