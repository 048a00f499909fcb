/* scenario.h -- the workloads of `threadlab demo` and `compare`: what the
 * load does, what each server is told, and what a class should watch. */
#ifndef THREADLAB_SCENARIO_H
#define THREADLAB_SCENARIO_H

#include <stddef.h>

#include "viz/msg.h"

#define SCENARIO_MAX_ARGS 16

struct scenario {
    const char *name;
    /* Its words are in the one message table (viz/msg.c), in English and
     * Chinese: msg(summary) on a screen, msg_in(LANG_EN, summary) where
     * the program speaks English (--help, stderr, a plot's title). */
    enum msg_id summary;          /* one line, for --help, the table, the docs */
    enum msg_id narrator;         /* what to look at, shown under the panes */
    int conns;                    /* the default --conns */
    const char *load_args;        /* extra `threadlab load` options */
    /* Extra `threadlab serve` options per model ("" for none), in the
     * order bio, pool, reactor, multireactor, vthread. */
    const char *serve_args[5];
};

/* The scenarios, in --help order, and how many. */
extern const struct scenario scenarios[];
extern const size_t nscenarios;

/* By name, or NULL. */
const struct scenario *scenario_find(const char *name);

/* The serve options of model for this scenario ("" if none). */
const char *scenario_serve_args(const struct scenario *s, const char *model);

/* Split a space-separated option string into argv (pointers into buf, a
 * copy); returns the count, at most max - 1, argv NULL-terminated. */
int scenario_split(const char *args, char *buf, size_t buf_len, const char **argv,
                   int max);

#endif
