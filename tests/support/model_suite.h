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
};

/* Options for tests: 127.0.0.1, a free port, defaults otherwise. */
void ts_opts(struct server_opts *o);

/* Start model `name` with opts (asserts it started). */
void ts_start(struct test_server *t, const char *name,
              const struct server_opts *opts);
void ts_stop(struct test_server *t);

/* The shared suite for one model. */
Suite *model_suite(const char *model_name);

/* Run suites with Check's fork mode; returns the process exit status. */
int ts_run(Suite *s);

#endif
