/* cli_fleet.h -- what `demo` and `compare` share: the models, scenario,
 * duration and connections to run, and starting one model with its load. */
#ifndef THREADLAB_CLI_FLEET_H
#define THREADLAB_CLI_FLEET_H

#include <stdbool.h>
#include <stdio.h>

#include "cli.h"
#include "load/fleet.h"
#include "load/results.h"
#include "load/scenario.h"

#define PLAN_MAX_LOAD_ARGS 4

struct plan {
    const char *models[FLEET_MAX];
    int nmodels;
    char models_buf[128];
    const struct scenario *sc;
    double duration_s;
    int conns;                 /* 0: the scenario's */
    /* More `threadlab load` options, after the scenario's so that they
     * win (compare --sweep: "--depth 8"); NULL-terminated. */
    const char *load_args[PLAN_MAX_LOAD_ARGS + 1];
};

/* The rows of the options demo and compare share, for their cli_opt
 * tables. Each load and each server is a process of its own: 2 fds per
 * connection spread over two processes' 20 000, hence --conns <= 15000. */
#define PLAN_OPTION_ROWS(p)                                   \
    { CLI_CALL("models", plan_parse_models, (p)) },           \
    { CLI_CALL("scenario", plan_parse_scenario, (p)) },       \
    { CLI_REAL("duration", &(p)->duration_s, 1, 3600) },      \
    { CLI_INT("conns", &(p)->conns, 1, 15000) }

/* --models LIST and --scenario NAME into a struct plan (CLI_OPT_CALL). */
bool plan_parse_models(const char *cmd, const char *arg, void *plan);
bool plan_parse_scenario(const char *cmd, const char *arg, void *plan);

/* SIGINT, SIGTERM and SIGHUP only set a flag from now on: the children
 * are ours to stop, in order. */
void plan_catch_stop_signals(void);
bool plan_interrupted(void);

/* Every model, the steady scenario, duration_s. */
void plan_init(struct plan *p, double duration_s);

/* The connections each model gets: --conns, or the scenario's. */
int plan_conns(const struct plan *p);

/* Raise the open-file limit for the plan's connections (servers and loads
 * inherit it); if they still do not fit, say so on stderr and in msg, with
 * the ulimit command that fixes it, and return false. The run goes on:
 * the errors it will show are then explained. */
bool plan_fd_limit_fits(const struct plan *p, const char *cmd, char *msg, size_t msg_len);

/* The --help lines for the shared options, and the scenario list. */
void plan_usage(FILE *out, double default_duration_s);
void plan_usage_scenarios(FILE *out);

/* Start model (index i of the plan) as a server, then its load. Returns
 * the fleet index, or -1 with a message in err. */
int plan_start(struct fleet *f, const struct plan *p, int i, char *err, size_t err_len);

#endif
