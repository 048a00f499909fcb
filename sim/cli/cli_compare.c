/* cli_compare.c -- `threadlab compare`: each model in turn, one table.
 *
 * One model at a time, so that the server and its load have the machine
 * to themselves (two cores here: they would fight otherwise). The load
 * says lines/s, MB/s and latency; /proc, sampled while it runs, says the
 * peak thread count; wait4 says CPU time, context switches and peak RSS
 * over the server's whole life.
 */
#include <getopt.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_fleet.h"

#define COMPARE_DURATION_S 5

static void compare_usage(FILE *out)
{
    fprintf(out,
            "usage: threadlab compare [options]\n"
            "\n"
            "Run each model in turn (so they do not fight for the cores) under one\n"
            "workload and print a table: lines/s, MB/s, p50, p99, p99.9, peak\n"
            "threads, peak RSS, CPU seconds, voluntary and involuntary context\n"
            "switches, errors.\n"
            "\n"
            "options:\n");
    plan_usage(out, COMPARE_DURATION_S);
    fprintf(out,
            "  --csv FILE       also write the table as CSV\n"
            "  --json           print the table as JSON instead\n"
            "  --plot FILE      draw bars into FILE.png or FILE.svg (needs gnuplot)\n"
            "  -h, --help       this help\n"
            "\n");
    plan_usage_scenarios(out);
    fprintf(out,
            "\n"
            "Ctrl-C stops the model running now and prints the rows so far.\n"
            "Figures come from one machine in one run: compare rows, not runs.\n");
}

enum { OPT_CSV = 256, OPT_JSON, OPT_PLOT };

static const struct option compare_options[] = {
    PLAN_LONG_OPTIONS,
    { "csv", required_argument, NULL, OPT_CSV },
    { "json", no_argument, NULL, OPT_JSON },
    { "plot", required_argument, NULL, OPT_PLOT },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

/* Run model i of the plan to the end of its load, sampling its server. */
static int run_one(struct fleet *f, const struct plan *p, int i, struct result *r)
{
    char err[512];
    int at = plan_start(f, p, i, err, sizeof(err));
    if (at < 0) {
        fprintf(stderr, "threadlab compare: %s\n", err);
        return -1;
    }
    struct timespec tick = { 0, 100 * 1000000L };
    int ticks = 0;
    bool show = isatty(STDERR_FILENO);
    while (fleet_loads_running(f) && !plan_interrupted()) {
        fleet_sample(f, at);
        nanosleep(&tick, NULL);
        if (show && ++ticks % 10 == 0)
            fprintf(stderr, "\r  %s (%d of %d): %d s of %g, %d threads   ", p->models[i],
                    i + 1, p->nmodels, ticks / 10, p->duration_s,
                    f->servers[at].usage.threads);
    }
    if (show)
        fprintf(stderr, "\r%60s\r", "");
    fleet_stop_loads(f, 10000);
    fleet_stop_server(f, at);
    result_from_fleet(&f->servers[at], r);
    if (f->servers[at].last_words[0])
        fprintf(stderr, "threadlab compare: the %s server %s; its last words: %s\n",
                r->model, r->fate, f->servers[at].last_words);
    return 0;
}

int cli_compare(int argc, char **argv)
{
    struct plan plan;
    const char *csv = NULL, *plot = NULL;
    bool json = false;
    int c;

    plan_init(&plan, COMPARE_DURATION_S);
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", compare_options, NULL)) != -1) {
        const char *flag = argv[optind - 1];
        switch (c) {
        case PLAN_OPT_MODELS: case PLAN_OPT_SCENARIO:
        case PLAN_OPT_DURATION: case PLAN_OPT_CONNS:
            if (!plan_option("compare", c, optarg, &plan))
                return CLI_EXIT_USAGE;
            break;
        case OPT_CSV:
            csv = optarg;
            break;
        case OPT_JSON:
            json = true;
            break;
        case OPT_PLOT:
            plot = optarg;
            if (!strchr(plot, '.') || (strcmp(strrchr(plot, '.'), ".png") != 0 &&
                                       strcmp(strrchr(plot, '.'), ".svg") != 0)) {
                cli_usage_error("compare", "--plot: '%s' must end in .png or .svg", plot);
                return CLI_EXIT_USAGE;
            }
            break;
        case 'h':
            compare_usage(stdout);
            return CLI_EXIT_OK;
        default:
            cli_usage_error("compare", optopt ? "option '%s' needs a value"
                                              : "unknown option '%s'", flag);
            return CLI_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        cli_usage_error("compare", "unexpected argument '%s'", argv[optind]);
        return CLI_EXIT_USAGE;
    }
    FILE *csv_out = NULL;
    if (csv && !(csv_out = fopen(csv, "w"))) {
        perror(csv);
        return CLI_EXIT_FAILED;
    }

    plan_catch_stop_signals();

    struct fleet *f = malloc(sizeof(*f));
    char err[512];
    if (!f || fleet_init(f, err, sizeof(err)) < 0) {
        fprintf(stderr, "threadlab compare: %s\n", f ? err : "out of memory");
        free(f);
        if (csv_out)
            fclose(csv_out);
        return CLI_EXIT_FAILED;
    }
    char fd_warning[400];
    (void)plan_fd_limit_fits(&plan, "compare", fd_warning, sizeof(fd_warning));
    fprintf(stderr, "threadlab compare: scenario %s (%s), %g s per model, one at a time\n",
            plan.sc->name, plan.sc->summary, plan.duration_s);
    struct result results[FLEET_MAX];
    int done = 0, rc = CLI_EXIT_OK;
    for (int i = 0; i < plan.nmodels && !plan_interrupted(); i++) {
        if (run_one(f, &plan, i, &results[done]) < 0) {
            rc = CLI_EXIT_FAILED;
            break;
        }
        if (!results[done].have_load || strcmp(results[done].fate, "ok") != 0)
            rc = CLI_EXIT_FAILED;
        done++;
    }
    fleet_cleanup(f);
    free(f);

    if (json) {
        results_print_json(stdout, results, done);
    } else {
        printf("scenario %s: %s, %g s per model\n", plan.sc->name, plan.sc->summary,
               plan.duration_s);
        results_print_table(stdout, results, done);
    }
    if (csv_out) {
        results_print_csv(csv_out, results, done);
        fclose(csv_out);
    }
    if (plot && done > 0) {
        if (results_plot(plot, plan.sc->name, results, done, err, sizeof(err)) < 0) {
            fprintf(stderr, "threadlab compare: %s\n", err);
            rc = CLI_EXIT_FAILED;
        } else {
            fprintf(stderr, "threadlab compare: wrote %s\n", plot);
        }
    }
    return rc;
}
