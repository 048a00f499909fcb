/* cli_quiz.c -- `threadlab sim quiz --seed N [--answers]`: lab 08's
 * questions, with numbers drawn from the seed, so that every student
 * predicts (and checks) their own; --answers runs the simulations. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sim/rng.h"
#include "sim/sim.h"

struct quiz {
    int cores;
    uint32_t conns;
    uint32_t think_ms;
    uint32_t cpu_us;
    double duration_s;
};

static void make_quiz(uint64_t seed, struct quiz *q)
{
    static const int cores[] = { 8, 16, 32 };
    static const uint32_t conns[] = { 10000, 50000, 100000 };
    static const uint32_t think[] = { 100, 500, 1000 };
    static const uint32_t cpu[] = { 20, 50, 100 };
    struct rng r;
    rng_seed(&r, seed);
    q->cores = cores[rng_below(&r, 3)];
    q->conns = conns[rng_below(&r, 3)];
    q->think_ms = think[rng_below(&r, 3)];
    q->cpu_us = cpu[rng_below(&r, 3)];
    q->duration_s = 5;
}

static void quiz_opts(const struct quiz *q, enum sim_model m, uint64_t seed,
                      struct sim_opts *o)
{
    sim_opts_init(o, m);
    o->cores = q->cores;
    o->conns = q->conns;
    o->think_us = q->think_ms * 1000.0;
    o->cpu_pct = 100;
    o->cpu_us = q->cpu_us;
    o->ramp_s = 1;
    o->duration_s = q->duration_s;
    o->pool_max = 256;
    o->seed = seed;
}

static void quiz_usage(FILE *out)
{
    fprintf(out,
            "usage: threadlab sim quiz --seed N [--answers]\n"
            "\n"
            "Lab 08's questions, with numbers drawn from the seed (use your\n"
            "student number): predict, then check with --answers, which runs the\n"
            "four simulations (a minute or so).\n"
            "\n"
            "  --seed N     whose questions (default 1)\n"
            "  --answers    run the simulations and print the answers\n"
            "  -h, --help   this help\n");
}

int cli_quiz(int argc, char **argv)
{
    uint64_t seed = 1;
    bool answers = false;
    const struct cli_opt options[] = {
        { CLI_INT("seed", &seed, 0, LONG_MAX) },
        { CLI_FLAG("answers", &answers) },
        { 0 },
    };
    int rc = cli_parse_options("sim quiz", argc, argv, options, quiz_usage, 0, NULL);
    if (rc != CLI_PARSED)
        return rc;
    struct quiz q;
    make_quiz(seed, &q);
    printf("quiz %llu: %u connections on a %d-core machine. Each client sends a line,\n"
           "waits for the reply, thinks %u ms (on average), and sends again, for %g s.\n"
           "Every line costs %u us of CPU in the handler (!cpu %u). Linux allows\n"
           "32768 threads. The pool may grow to 256 threads.\n\n",
           (unsigned long long)seed, q.conns, q.cores, q.think_ms, q.duration_s, q.cpu_us,
           q.cpu_us);
    printf("Predict, for bio, pool, reactor and multireactor (2 x %d workers):\n"
           "  Q1  lines/s. (Hint: the clients offer %u / %.1f s = %.0f lines/s; the\n"
           "      cores can do at most %d / %u us = %.0f lines/s.)\n"
           "  Q2  the most threads alive at once, and the stack memory they reserve\n"
           "      (8 MiB each).\n"
           "  Q3  connections refused, and connections never served.\n"
           "  Q4  p99 latency: which model has the worst, and why?\n"
           "  Q5  which model would you deploy, and with which settings?\n",
           q.cores, q.conns, q.think_ms / 1000.0, q.conns / (q.think_ms / 1000.0), q.cores,
           q.cpu_us, q.cores / (q.cpu_us / 1e6));
    if (!answers) {
        printf("\nThen: threadlab sim quiz --seed %llu --answers\n", (unsigned long long)seed);
        return CLI_EXIT_OK;
    }
    printf("\n%-13s %10s %8s %10s %9s %9s %12s\n", "model", "lines/s", "threads",
           "stacks", "refused", "unserved", "p99");
    struct sim_report *r = malloc(sizeof(*r));
    if (!r)
        return CLI_EXIT_FAILED;
    /* Lab 08 asks about the classic four (vthread comes after it). */
    for (int m = SIM_BIO; m <= SIM_MULTIREACTOR; m++) {
        struct sim_opts o;
        quiz_opts(&q, (enum sim_model)m, seed, &o);
        if (sim_run(&o, r) < 0) {
            free(r);
            return CLI_EXIT_FAILED;
        }
        printf("%-13s %10.0f %8u %8.1fG %9llu %9llu %10.1fms\n", sim_model_name(o.model),
               r->lines_per_s, r->peak_threads, r->peak_stack_bytes / (1 << 30),
               (unsigned long long)r->conns_refused, (unsigned long long)r->conns_unserved,
               hist_percentile(&r->latency_ns, 99) / 1e6);
        fflush(stdout);
    }
    free(r);
    printf("\n(Each row is `threadlab sim MODEL --cores %d --conns %u --think-us %u \\\n"
           "  --mix cpu=%u:100 --ramp 1 --duration %g --max 256 --seed %llu`.)\n",
           q.cores, q.conns, q.think_ms * 1000, q.cpu_us, q.duration_s,
           (unsigned long long)seed);
    return CLI_EXIT_OK;
}
