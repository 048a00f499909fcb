/* cli_demo.c -- `threadlab demo`: the models side by side under one load.
 *
 * Each model runs as a child `threadlab serve`, each driven by its own
 * child `threadlab load`; the visualizer watches their boards; when the
 * loads end (or on q, Ctrl-C) the children are stopped in order and the
 * table is printed. The children share this machine's cores, so the demo
 * is for watching; `threadlab compare` runs them one at a time for
 * numbers.
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_fleet.h"
#include "cli_help_zh.h"
#include "net/net.h"
#include "viz/msg.h"
#include "viz/record.h"
#include "viz/top.h"
#include "viz/view.h"
#include "net/clock.h"

#define DEMO_DURATION_S 30

/* The --help text in Chinese (cli_help_zh.c): the same options. */
static void demo_usage_zh(FILE *out)
{
    fputs(cli_demo_head_zh, out);
    plan_usage(out, DEMO_DURATION_S);
    fputs(cli_demo_options_zh, out);
    plan_usage_scenarios(out);
    fputs(cli_demo_tail_zh, out);
}

static void demo_usage(FILE *out)
{
    if (msg_lang() == LANG_ZH) {
        demo_usage_zh(out);
        return;
    }
    fprintf(out,
            "usage: threadlab demo [options]\n"
            "\n"
            "Start the models as servers on free loopback ports, drive each with\n"
            "the same scenario, and watch them side by side; when the load ends\n"
            "(or on q / Ctrl-C) stop them all and print the comparison table.\n"
            "\n"
            "options:\n");
    plan_usage(out, DEMO_DURATION_S);
    fprintf(out,
            "  --plain          print text snapshots instead of a full screen (the\n"
            "                   default when output is not a terminal)\n"
            "  --interval MS    refresh every MS milliseconds (default 500; 2000\n"
            "                   with --plain)\n"
            "  --big            projector mode: bold, bigger grid cells, a slower\n"
            "                   refresh (1000 ms)\n"
            "  --wide           the table with every column (125 wide: adds MB/s,\n"
            "                   p99.9 and context switches); the default fits 80\n"
            "  --record FILE    also record what the panes show, to play later with\n"
            "                   threadlab replay FILE (no server needed); a FILE that\n"
            "                   cannot be written is refused before any server starts\n"
            "  --lang en|zh     the screen in English or Chinese (default: zh when\n"
            "                   LC_ALL, LC_MESSAGES or LANG starts with zh)\n"
            "  -h, --help       this help\n"
            "\n");
    plan_usage_scenarios(out);
    fprintf(out,
            "\n"
            "Keys are top's: q quit, p pause, tab focus, l log, ? help. The line\n"
            "under the panes says what to look at. The models share this machine's\n"
            "cores while they run side by side: for numbers, use threadlab compare.\n"
            "See docs/demo.md.\n");
}

struct demo {
    struct fleet fleet;
    uint64_t give_up_ms;       /* the loads should have ended by then */
    bool viewer_failed;        /* the panes could not be shown (said why) */
};

/* At every refresh: sample the servers; end when the loads are done, on a
 * stop signal, or well past the duration. */
static bool demo_tick(void *arg)
{
    struct demo *d = arg;
    for (int i = 0; i < d->fleet.n; i++)
        fleet_sample(&d->fleet, i);
    if (plan_interrupted() || now_ms() > d->give_up_ms)
        return false;
    return fleet_loads_running(&d->fleet);
}

/* The final table, with what it needs to be read right. */
static void print_table(FILE *out, const struct plan *plan, const struct result *results,
                        int n, bool wide, double cut_short_s)
{
    fputc('\n', out);
    fprintf(out, msg(M_T_SCENARIO), plan->sc->name, msg(plan->sc->summary));
    fputc('\n', out);
    (wide ? results_print_wide_table : results_print_table)(out, results, n);
    if (cut_short_s > 0) {
        fprintf(out, msg(M_T_CUT_SHORT), cut_short_s, plan->duration_s);
        fputc('\n', out);
    }
    /* Under 80 columns too, like the table. */
    fprintf(out, msg(M_T_SIDE_BY_SIDE), plan->sc->name);
    fputc('\n', out);
}

/* The table in lang, as text (NULL when out of memory). The message
 * table's language is switched for it and back: the show is over, and
 * nothing else draws. */
static char *table_in(enum msg_lang lang, const struct plan *plan,
                      const struct result *results, int n, bool wide, double cut_short_s)
{
    char *table = NULL;
    size_t table_len = 0;
    FILE *out = open_memstream(&table, &table_len);
    if (!out)
        return NULL;
    enum msg_lang before = msg_use_lang(lang);
    msg_setup_locale();               /* Chinese is measured multibyte */
    print_table(out, plan, results, n, wide, cut_short_s);
    msg_use_lang(before);
    if (fclose(out) != 0) {
        free(table);
        return NULL;
    }
    return table;
}

/* Close and remove a recording that never got its first frame. */
static void discard_recording(struct top_opts *view)
{
    if (!view->recorder)
        return;
    recorder_close(view->recorder);
    view->recorder = NULL;
    unlink(view->record_path);
}

/* The line under the panes in lang: the scenario's narrator, or, with too
 * few fds, fd_warning. */
static void put_footer(char *footer, size_t size, enum msg_lang lang,
                       const struct plan *plan, const char *fd_warning)
{
    int at = snprintf(footer, size, "[%s] ", plan->sc->name);
    if (!fd_warning)
        snprintf(footer + at, size - at, "%s", msg_in(lang, plan->sc->narrator));
    else
        snprintf(footer + at, size - at, msg_in(lang, M_T_TOO_FEW_FILES), fd_warning);
}

/* The show: every server's rows, the scenario's narrator in the footer
 * (or, with too few fds, fd_warning), until the loads end or the viewer
 * quits. Returns how long it ran if it was cut short before the loads
 * ended (q, Ctrl-C, a stop signal), else 0. */
static double show(struct demo *d, const struct plan *plan, struct top_opts *view,
                   const char *fd_warning)
{
    char pids[FLEET_MAX][16], footers[LANG_COUNT][720];
    char *targets[FLEET_MAX];
    for (int i = 0; i < d->fleet.n; i++) {
        snprintf(pids[i], sizeof(pids[i]), "%d", (int)d->fleet.servers[i].pid);
        targets[i] = pids[i];
    }
    for (int lang = 0; lang < LANG_COUNT; lang++)   /* a recording keeps both */
        put_footer(footers[lang], sizeof(footers[lang]), (enum msg_lang)lang, plan, fd_warning);
    const char *footer = footers[msg_lang()];
    view->targets = targets;
    view->ntargets = d->fleet.n;
    view->footer = footer;
    view->footer_en = footers[LANG_EN];
    view->footer_zh = footers[LANG_ZH];
    view->tick = demo_tick;
    view->caller_closes_recorder = true;  /* the table goes in after the show */
    view->tick_arg = d;
    d->give_up_ms = now_ms() + (uint64_t)(plan->duration_s * 1000) + 20000;
    if (view->plain)
        printf("%s\n", footer);
    uint64_t started_ms = now_ms();
    d->viewer_failed = top_run(view) != 0;
    view->targets = NULL;            /* they were this function's */
    view->footer = view->footer_en = view->footer_zh = NULL;
    /* Said under the table, so nobody reads a 3 s run as a 30 s one. */
    return fleet_loads_running(&d->fleet) ? (double)(now_ms() - started_ms) / 1000.0 : 0;
}

/* After the show: stop the loads (they report what they did), then the
 * servers; read the reports and the kernel's accounts; print the table
 * (kept as the recording's ending: a replay ends so too). Returns false
 * if a server did not end well, whether or not its log had anything to
 * say: that fails the demo. */
static bool report(struct demo *d, const struct plan *plan, struct top_opts *view,
                   bool wide, double cut_short_s)
{
    fprintf(stderr, "threadlab demo: stopping...\n");
    fleet_stop_all(&d->fleet);
    struct result results[FLEET_MAX];
    for (int i = 0; i < d->fleet.n; i++)
        result_from_fleet(&d->fleet.servers[i], &results[i]);
    if (d->fleet.n > 0) {
        char *tables[LANG_COUNT];         /* a recording keeps both */
        for (int lang = 0; lang < LANG_COUNT; lang++)
            tables[lang] = table_in((enum msg_lang)lang, plan, results, d->fleet.n, wide,
                                    cut_short_s);
        if (tables[msg_lang()])
            fputs(tables[msg_lang()], stdout);
        else                              /* out of memory: straight out */
            print_table(stdout, plan, results, d->fleet.n, wide, cut_short_s);
        if (view->recorder && tables[LANG_EN])
            recorder_ending(view->recorder, tables[LANG_EN], tables[LANG_ZH]);
        for (int lang = 0; lang < LANG_COUNT; lang++)
            free(tables[lang]);
    }
    bool ok = recorder_finish(view->recorder, view->record_path, "threadlab demo", "frame");
    view->recorder = NULL;
    for (int i = 0; i < d->fleet.n; i++)
        if (fleet_report_failure(&d->fleet.servers[i], "demo"))
            ok = false;
    return ok;
}

int cli_demo(int argc, char **argv)
{
    struct plan plan;
    struct top_opts view = { 0 };
    bool wide = false;

    plan_init(&plan, DEMO_DURATION_S);
    bool lang_given = false;       /* --lang: the viewer's language */
    const struct cli_opt options[] = {
        PLAN_OPTION_ROWS(&plan),
        { CLI_FLAG("plain", &view.plain) },
        { CLI_INT("interval", &view.refresh_ms, VIEW_REFRESH_MS_MIN, VIEW_REFRESH_MS_MAX) },
        { CLI_TEXT("record", &view.record_path) },
        { CLI_FLAG("big", &view.big) },
        { CLI_CALL("lang", cli_parse_lang, &lang_given) },
        { CLI_FLAG("wide", &wide) },
        { 0 },
    };
    int rc = cli_parse_options("demo", argc, argv, options, demo_usage, 0, NULL);
    if (rc != CLI_PARSED)
        return rc;
    msg_setup_locale();        /* the table's widths count Chinese columns */
    bool tty = isatty(STDOUT_FILENO) && isatty(STDIN_FILENO);
    if (!tty)
        view.plain = true;
    if (view.plain && view.refresh_ms == 0)
        view.refresh_ms = 2000;

    /* Until the visualizer takes over (it restores the terminal on these
     * itself), a stop signal only sets a flag: the children are ours to
     * stop. */
    plan_catch_stop_signals();

    char err[512];
    /* A recording that cannot be written is refused before any server
     * starts, not found out after the show. */
    if (view.record_path &&
        !(view.recorder = recorder_open(view.record_path, err, sizeof(err)))) {
        fprintf(stderr, "threadlab demo: --record: %s\n", err);
        return CLI_EXIT_FAILED;
    }
    struct demo *d = calloc(1, sizeof(*d));
    if (!d || fleet_init(&d->fleet, err, sizeof(err)) < 0) {
        fprintf(stderr, "threadlab demo: %s\n", d ? err : "out of memory");
        free(d);
        discard_recording(&view);
        return CLI_EXIT_FAILED;
    }
    rc = CLI_EXIT_OK;
    double cut_short_s = 0;    /* how long it ran, if it was stopped early */
    char fd_warning[400] = "";
    bool fds_fit = plan_fd_limit_fits(&plan, "demo", fd_warning, sizeof(fd_warning));
    fprintf(stderr, "threadlab demo: scenario %s, %g s, starting %d server%s...\n",
            plan.sc->name, plan.duration_s, plan.nmodels, plan.nmodels == 1 ? "" : "s");
    for (int i = 0; i < plan.nmodels && !plan_interrupted(); i++)
        if (plan_start(&d->fleet, &plan, i, err, sizeof(err)) < 0) {
            fprintf(stderr, "threadlab demo: %s\n", err);
            rc = CLI_EXIT_FAILED;
            break;
        }

    if (rc == CLI_EXIT_OK && !plan_interrupted())
        cut_short_s = show(d, &plan, &view, fds_fit ? NULL : fd_warning);
    else
        discard_recording(&view);    /* no server to show: no show to keep */
    if (!report(d, &plan, &view, wide, cut_short_s) || d->viewer_failed)
        rc = CLI_EXIT_FAILED;
    fleet_cleanup(&d->fleet);
    free(d);
    return rc;
}
