/* check_stop.c -- the graceful stop and the accept queue, in every model.
 *
 * A client's connect() returns once the kernel completed the handshake;
 * the connection then waits in the listening socket's accept queue until
 * the server accepts it, and the lines the client sends are acknowledged
 * by the kernel meanwhile. A stop that closes the listening socket with
 * connections in that queue resets each of them (the kernel's abort of a
 * listener's children), and its client loses every line it sent: the
 * ECONNRESET that a stop test met on a loaded machine, where the acceptor
 * had not yet run when the stop began.
 *
 * The interleaving is forced, not waited for: the thread that accepts is
 * parked (park.h) while the client connects and sends, the stop begins,
 * and only once the stop's wakeup is written (its flag set, its task
 * queued) does the accepting thread go on, and find the stop.
 */
#include <check.h>
#include <pthread.h>
#include <string.h>

#include "model_suite.h"
#include "park.h"
#include "testnet.h"

static const struct {
    const char *model;
    const char *acceptor;        /* the name of the thread that accepts */
} models[] = {
    { "bio", "acceptor" },
    { "pool", "acceptor" },
    { "reactor", "reactor" },    /* the one loop accepts for itself */
    { "multireactor", "boss" },
};

static void *stop_main(void *arg)
{
    ts_stop_now(arg);
    return NULL;
}

/* Wait (up to 10 s) for an eventfd write beyond before: the stop's
 * wakeup of the parked thread, written once the stop's flag is set (the
 * blocking acceptor) or its task queued (a boss loop). */
static void await_stop_wakeup(uint64_t before)
{
    uint64_t deadline = now_ms() + 10000;
    while (tn_eventfd_pending() <= before && now_ms() < deadline)
        usleep(1000);
    ck_assert_msg(tn_eventfd_pending() > before, "the stop never woke the acceptor");
}

START_TEST(a_connection_queued_before_the_stop_is_answered)
{
    const char *model = models[_i].model;
    struct test_server t;
    struct server_opts o;
    char line[64];
    ts_opts(&o);
    ts_start(&t, model, &o);

    park_thread(park_find_thread(models[_i].acceptor));
    int fd = tn_connect(t.port);          /* completed by the kernel, queued */
    tn_send_str(fd, "sent before the stop\n");
    uint64_t wakeups = tn_eventfd_pending();
    pthread_t stopper;
    ck_assert_int_eq(pthread_create(&stopper, NULL, stop_main, &t), 0);
    await_stop_wakeup(wakeups);
    park_release();

    ssize_t n = tn_read_line(fd, line, sizeof(line));
    ck_assert_msg(n == 21 && memcmp(line, "sent before the stop\n", 21) == 0,
                  "%s: the line sent before the stop got %s", model,
                  n < 0 ? strerror((int)-n) : n == 0 ? "EOF" : "another reply");
    ck_assert_int_eq(tn_read_eof(fd), 0);
    close(fd);
    pthread_join(stopper, NULL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("stop");
    TCase *tc = tcase_create("accept queue");
    tcase_set_timeout(tc, 30);
    tcase_add_loop_test(tc, a_connection_queued_before_the_stop_is_answered, 0,
                        (int)(sizeof(models) / sizeof(models[0])));
    suite_add_tcase(s, tc);
    return ts_run(s);
}
