/* model_suite.h -- the echo suite every model must pass, by name.
 *
 * As Netty runs one socket test suite against every transport, threadlab
 * runs one echo suite against every model: a model's test file calls
 * model_suite("bio") (or "reactor", ...) and adds only what is its own.
 */
#ifndef THREADLAB_MODEL_SUITE_H
#define THREADLAB_MODEL_SUITE_H

#include <check.h>
#include <stdbool.h>
#include <stdint.h>

#include "probe/board.h"
#include "server.h"

/* A running server of the model under test. */
struct test_server {
    const struct model_desc *model;
    void *server;
    uint16_t port;
    int fds_before, threads_before;   /* this process, once started */
    char fd_names_before[512];        /* tn_fd_names then */
    long rss_before_kb;
};

/* Options for tests: 127.0.0.1, a free port, defaults otherwise. */
void ts_opts(struct server_opts *o);

/* Start model `name` with opts (asserts it started). */
void ts_start(struct test_server *t, const char *name,
              const struct server_opts *opts);
/* Stop it after checking, from /proc, that this process's fds and
 * threads came back to what they were once the server had started (it
 * waits a while for closes to be seen), and that RSS did not run away;
 * prints the three before and after under the scenario's name. The test's
 * own clients must be closed by then. */
#define ts_stop(t) ts_stop_checked((t), __func__)
void ts_stop_checked(struct test_server *t, const char *scenario);
/* Stop it now, checking nothing (a stop racing with clients). */
void ts_stop_now(struct test_server *t);

/* This process's own board, read now (the test's server publishes one);
 * the caller frees it. Fails the test when there is none. */
struct board_snapshot *ts_own_board(void);

/* How long a test awaits a state the server must reach: long enough that
 * no busy machine reaches it, since a right server gets there in
 * milliseconds and a wrong one never does. */
#define TS_AWAIT_MS 20000

/* Await (polling the board, up to TS_AWAIT_MS) at least `at_least` of this
 * process's server threads in `state`; fails the test, naming `what`, if
 * they never are. This is how a test knows a !sleep has begun. */
void ts_await_threads_in(enum board_state state, uint64_t at_least, const char *what);

/* Whether the board shows any thread in `state` now. */
bool ts_board_shows(enum board_state state);

/* The shared suite for one model. */
Suite *model_suite(const char *model_name);

/* Run suites with Check's fork mode; returns the process exit status.
 * Afterwards removes the boards that failed or timed-out cases left. */
int ts_run(Suite *s);

#endif
