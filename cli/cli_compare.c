/* cli_compare.c -- `threadlab compare`: each model in turn, one table.
 *
 * One model at a time, so that the server and its load have the machine
 * to themselves (two cores here: they would fight otherwise). The load
 * says lines/s, MB/s and latency; /proc, sampled while it runs, says the
 * peak thread count; wait4 says CPU time, context switches and peak RSS
 * over the server's whole life.
 *
 * --sweep VAR=LIST does that at every value of LIST (values outer, models
 * inner, so a Ctrl-C leaves whole points): one row per (model, value),
 * the curves of docs/curves.md.
 */
#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_fleet.h"
#include "cli_help_zh.h"
#include "load/sweep.h"

#define COMPARE_DURATION_S 5
/* fds a server or a load needs besides its connections (listening
 * socket, epoll, eventfds, board, logs, pipes), kept back from the
 * process limit when a sweep decides how many connections this machine
 * allows. */
#define COMPARE_SPARE_FDS 1000

/* The --help text in Chinese (cli_help_zh.c): the same options. */
static void compare_usage_zh(FILE *out)
{
    fputs(cli_compare_head_zh, out);
    plan_usage(out, COMPARE_DURATION_S);
    fprintf(out, cli_compare_options_zh, SWEEP_SLEEP_MS);
    plan_usage_scenarios(out);
    fputs(cli_compare_tail_zh, out);
}

static void compare_usage(FILE *out)
{
    if (msg_lang() == LANG_ZH) {
        compare_usage_zh(out);
        return;
    }
    fprintf(out,
            "usage: threadlab compare [options]\n"
            "\n"
            "Run each model in turn (so they do not fight for the cores) under one\n"
            "workload and print a table: lines/s, MB/s, round-trip p50, p99 and\n"
            "p99.9 (as the client timed them: top's \"handle p50\" is the server's\n"
            "handling time alone), peak threads (every thread of the process, from\n"
            "/proc), peak RSS, CPU seconds, voluntary and involuntary context\n"
            "switches, errors.\n"
            "\n"
            "options:\n");
    plan_usage(out, COMPARE_DURATION_S);
    fprintf(out,
            "  --csv FILE       also write the table as CSV\n"
            "  --json           print the table as JSON instead\n"
            "  --plot FILE      draw bars into FILE.png or FILE.svg (needs gnuplot)\n"
            "  --sweep VAR=LIST run every model at each value of LIST: one row per\n"
            "                   (model, value), and with --plot the curves (lines/s,\n"
            "                   p99, threads, RSS against VAR, one line per model).\n"
            "                   VAR: conns, depth (lines in flight), size (bytes per\n"
            "                   line), cpu-us (every line is \"!cpu N\"), sleep-pct\n"
            "                   (this %% of lines is \"!sleep %d\"). LIST: 1,10,100 or\n"
            "                   1e1..1e4 (the powers of ten between); increasing.\n"
            "                   conns stops at this machine's fd limit (said when it\n"
            "                   does); --duration is per point\n"
            "  --lang en|zh     the table's headings and the lines around it in\n"
            "                   English or Chinese (default: zh when LC_ALL,\n"
            "                   LC_MESSAGES or LANG starts with zh); CSV and JSON\n"
            "                   stay English, for programs\n"
            "  -h, --help       this help\n"
            "\n", SWEEP_SLEEP_MS);
    plan_usage_scenarios(out);
    fprintf(out,
            "\n"
            "Ctrl-C stops the model running now and prints the rows so far.\n"
            "Without gnuplot, --plot says how to install it and writes FILE.csv.\n"
            "Example: threadlab compare --sweep conns=1,10,100,1000,10000 --plot c10k.png\n"
            "Figures come from one machine in one run: compare rows, not runs.\n");
}

/* Run model i of the plan to the end of its load, sampling its server.
 * point names the sweep's point in the progress line ("" for none). */
static int run_one(struct fleet *f, const struct plan *p, int i, const char *point,
                   struct result *r)
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
            fprintf(stderr, "\r  %s%s (%d of %d): %d s of %g, %d threads   ", point,
                    p->models[i], i + 1, p->nmodels, ticks / 10, p->duration_s,
                    f->servers[at].usage.threads);
    }
    if (show)
        fprintf(stderr, "\r%78s\r", "");
    fleet_stop_loads(f, 10000);
    fleet_stop_server(f, at);
    result_from_fleet(&f->servers[at], r);
    fleet_report_failure(&f->servers[at], "compare");   /* the caller fails on r->fate */
    return 0;
}

/* ---- one point: each model once --------------------------------------- */

struct compare_args {
    struct plan plan;
    const char *csv, *plot;
    bool json;
    bool sweep;                     /* --sweep given: spec holds it */
    struct sweep_spec spec;
};

static int compare_point(const struct compare_args *a, FILE *csv_out)
{
    const struct plan *plan = &a->plan;
    struct fleet *f = malloc(sizeof(*f));
    char err[512];
    if (!f || fleet_init(f, err, sizeof(err)) < 0) {
        fprintf(stderr, "threadlab compare: %s\n", f ? err : "out of memory");
        free(f);
        return CLI_EXIT_FAILED;
    }
    char fd_warning[400];
    (void)plan_fd_limit_fits(plan, "compare", fd_warning, sizeof(fd_warning));
    fprintf(stderr, "threadlab compare: scenario %s (%s), %g s per model, one at a time\n",
            plan->sc->name, msg_in(LANG_EN, plan->sc->summary), plan->duration_s);
    struct result results[FLEET_MAX];
    int done = 0, rc = CLI_EXIT_OK;
    for (int i = 0; i < plan->nmodels && !plan_interrupted(); i++) {
        if (run_one(f, plan, i, "", &results[done]) < 0) {
            rc = CLI_EXIT_FAILED;
            break;
        }
        if (!results[done].have_load || strcmp(results[done].fate, "ok") != 0)
            rc = CLI_EXIT_FAILED;
        done++;
    }
    fleet_cleanup(f);
    free(f);

    if (a->json) {
        results_print_json(stdout, results, done);
    } else {
        printf(msg(M_T_SCENARIO_PER_MODEL), plan->sc->name, msg(plan->sc->summary),
               plan->duration_s);
        printf("\n");
        results_print_table(stdout, results, done);
    }
    if (csv_out)
        results_print_csv(csv_out, results, done);
    if (a->plot && done > 0) {
        if (results_plot(a->plot, a->plan.sc->name, results, done, err, sizeof(err)) < 0) {
            fprintf(stderr, "threadlab compare: %s\n", err);
            rc = CLI_EXIT_FAILED;
        } else {
            fprintf(stderr, "threadlab compare: wrote %s\n", a->plot);
        }
    }
    return rc;
}

/* ---- a sweep: each model at every value ---------------------------------- */

/* Raise the soft fd limit to the hard one (the children inherit it) and
 * say how many connections a server and its load may then hold: each is
 * a process of its own, one fd per connection each. */
static long machine_max_conns(rlim_t *limit)
{
    struct rlimit rl;
    *limit = 2 * COMPARE_SPARE_FDS;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return COMPARE_SPARE_FDS;
    if (rl.rlim_cur < rl.rlim_max) {
        rlim_t soft = rl.rlim_cur;
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
            rl.rlim_cur = soft;
    }
    *limit = rl.rlim_cur;
    if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 1000000)
        return 1000000 - COMPARE_SPARE_FDS;
    return rl.rlim_cur > 2 * COMPARE_SPARE_FDS ? (long)rl.rlim_cur - COMPARE_SPARE_FDS
                                               : (long)rl.rlim_cur / 2;
}

/* Drop the conns values past this machine, saying so. Returns false when
 * none is left. */
static bool fit_to_machine(struct sweep_spec *s)
{
    rlim_t limit;
    long max = machine_max_conns(&limit);
    if (s->var != SWEEP_CONNS || s->values[s->nvalues - 1] <= max)
        return true;
    int keep = 0;
    while (keep < s->nvalues && s->values[keep] <= max)
        keep++;
    fprintf(stderr, "threadlab compare: conns=%.0f and above are past this machine "
            "(%llu fds per process: at most %ld connections)%s\n", s->values[keep],
            (unsigned long long)limit, max, keep ? "; the sweep stops before them" : "");
    if (keep == 0)
        return false;
    s->nvalues = keep;
    return true;
}

/* Set the plan's workload to value v of the sweep. buf holds the option
 * value the load is given. */
static void plan_at_value(struct plan *p, enum sweep_var var, double v, char *buf,
                          size_t len)
{
    static const char *const load_flag[SWEEP_VAR_COUNT] = {
        [SWEEP_DEPTH] = "--depth", [SWEEP_SIZE] = "--size",
        [SWEEP_CPU_US] = "--mix", [SWEEP_SLEEP_PCT] = "--mix",
    };
    memset(p->load_args, 0, sizeof(p->load_args));
    if (var == SWEEP_CONNS) {
        p->conns = (int)v;
        return;
    }
    if (var == SWEEP_CPU_US)
        snprintf(buf, len, "cpu=%.0f:100", v);
    else if (var == SWEEP_SLEEP_PCT)
        snprintf(buf, len, "sleep=%d:%g", SWEEP_SLEEP_MS, v);
    else
        sweep_value_str(var, v, buf, len);
    p->load_args[0] = load_flag[var];
    p->load_args[1] = buf;
}

/* Every model at value k; rows appended at rows[*n]. Returns false when a
 * run could not start (the sweep stops). */
static bool sweep_value(struct plan *p, const struct sweep_spec *s, int k,
                        struct sweep_row *rows, int *n, int *rc)
{
    char arg[32], shown[32], point[96], err[512];
    plan_at_value(p, s->var, s->values[k], arg, sizeof(arg));
    sweep_value_str(s->var, s->values[k], shown, sizeof(shown));
    snprintf(point, sizeof(point), "%s=%s, point %d of %d: ", sweep_var_name(s->var), shown,
             k + 1, s->nvalues);
    struct fleet *f = malloc(sizeof(*f));
    if (!f || fleet_init(f, err, sizeof(err)) < 0) {
        fprintf(stderr, "threadlab compare: %s\n", f ? err : "out of memory");
        free(f);
        *rc = CLI_EXIT_FAILED;
        return false;
    }
    bool started = true;
    for (int i = 0; i < p->nmodels && !plan_interrupted(); i++) {
        struct result r;
        if (run_one(f, p, i, point, &r) < 0) {
            started = false;
            *rc = CLI_EXIT_FAILED;
            break;
        }
        if (!r.have_load || strcmp(r.fate, "ok") != 0)
            *rc = CLI_EXIT_FAILED;
        sweep_row_from_result(&r, s->values[k], &rows[(*n)++]);
    }
    fleet_cleanup(f);
    free(f);
    return started;
}

/* The figure's title: what ran, on what. */
static void sweep_title(const struct plan *p, const struct sweep_spec *s, char *buf,
                        size_t len)
{
    char machine[256];
    double load[1] = { 0 };
    sweep_machine(machine, sizeof(machine));
    if (getloadavg(load, 1) < 1)
        load[0] = -1;
    snprintf(buf, len, "threadlab compare --sweep %s: scenario %s (%s), %g s per point\n"
             "real servers on %s; load average %.1f at the end", sweep_var_name(s->var),
             p->sc->name, msg_in(LANG_EN, p->sc->summary), p->duration_s, machine, load[0]);
}

static int compare_sweep(struct compare_args *a, FILE *csv_out)
{
    const struct sweep_spec spec = a->spec;
    struct plan *p = &a->plan;
    fprintf(stderr, "threadlab compare: sweep of %s over %d values, scenario %s, %g s per "
            "model and value: about %.0f s\n", sweep_var_name(spec.var), spec.nvalues,
            p->sc->name, p->duration_s, spec.nvalues * p->nmodels * (p->duration_s + 1.5));
    static struct sweep_row rows[SWEEP_MAX_ROWS];
    int n = 0, rc = CLI_EXIT_OK;
    for (int k = 0; k < spec.nvalues && !plan_interrupted(); k++)
        if (!sweep_value(p, &spec, k, rows, &n, &rc))
            break;
    if (plan_interrupted())
        fprintf(stderr, "threadlab compare: stopped; %d rows so far\n", n);
    char title[512];
    sweep_title(p, &spec, title, sizeof(title));
    if (sweep_report("compare", spec.var, rows, n, NULL, 0, title, a->json, csv_out,
                     a->plot) < 0)
        rc = CLI_EXIT_FAILED;
    return rc;
}

/* ---- the command line ---------------------------------------------------- */

static bool parse_sweep(const char *cmd, const char *arg, void *args)
{
    struct compare_args *a = args;
    char err[256];
    if (sweep_parse(arg, 50000000, &a->spec, err, sizeof(err)) < 0) {
        cli_usage_error(cmd, "%s", err);
        return false;
    }
    a->sweep = true;
    return true;
}

/* Returns CLI_PARSED to go on, or the exit status (help, usage error). */
static int parse_args(int argc, char **argv, struct compare_args *a)
{
    memset(a, 0, sizeof(*a));
    plan_init(&a->plan, COMPARE_DURATION_S);
    bool lang_given = false;        /* --lang: the table's language */
    const struct cli_opt options[] = {
        PLAN_OPTION_ROWS(&a->plan),
        { CLI_TEXT("csv", &a->csv) },
        { CLI_FLAG("json", &a->json) },
        { CLI_CALL("plot", cli_parse_plot_path, &a->plot) },
        { CLI_CALL("sweep", parse_sweep, a) },
        { CLI_CALL("lang", cli_parse_lang, &lang_given) },
        { 0 },
    };
    int rc = cli_parse_options("compare", argc, argv, options, compare_usage, 0, NULL);
    if (rc != CLI_PARSED)
        return rc;
    if (a->sweep && a->spec.var == SWEEP_CONNS && a->plan.conns > 0) {
        cli_usage_error("compare", "--conns and --sweep conns=... both set the connections");
        return CLI_EXIT_USAGE;
    }
    if (a->sweep && !fit_to_machine(&a->spec))
        return CLI_EXIT_USAGE;
    return CLI_PARSED;
}

int cli_compare(int argc, char **argv)
{
    static struct compare_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc != CLI_PARSED)
        return rc;
    FILE *csv_out = NULL;
    if (a.csv && !(csv_out = fopen(a.csv, "w"))) {
        perror(a.csv);
        return CLI_EXIT_FAILED;
    }
    msg_setup_locale();        /* the table's widths count Chinese columns */
    plan_catch_stop_signals();
    rc = a.sweep ? compare_sweep(&a, csv_out) : compare_point(&a, csv_out);
    if (csv_out && fclose(csv_out) != 0) {
        perror(a.csv);
        rc = CLI_EXIT_FAILED;
    }
    return rc;
}
