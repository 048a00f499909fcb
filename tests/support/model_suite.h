/* model_suite.h -- the echo suite every model must pass, by name.
 *
 * As Netty runs one socket test suite against every transport, threadlab
 * runs one echo suite against every model: a model's test file calls
 * model_suite("bio") (or "reactor", ...) and adds only what is its own.
 */
#ifndef THREADLAB_MODEL_SUITE_H
#define THREADLAB_MODEL_SUITE_H

#include <check.h>
#include <stdint.h>

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

/* The shared suite for one model. */
Suite *model_suite(const char *model_name);

/* Run suites with Check's fork mode; returns the process exit status.
 * Afterwards removes the boards that failed or timed-out cases left. */
int ts_run(Suite *s);

#endif
