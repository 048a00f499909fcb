/* cli_load.c -- `threadlab load HOST:PORT`: run the load generator. */
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_help_zh.h"
#include "load/load.h"
#include "net/net.h"

static void load_usage(FILE *out)
{
    if (msg_lang() == LANG_ZH) {           /* cli_help_zh.c: the same options */
        fputs(cli_load_usage_zh, out);
        return;
    }
    fprintf(out,
            "usage: threadlab load HOST:PORT [options]\n"
            "\n"
            "Open connections to an echo server, send lines, and check that every\n"
            "reply is the line sent, byte for byte and in order. Reports lines/s,\n"
            "MB/s, latency percentiles and errors by kind. Exit status: 0 when every\n"
            "line came back right, 1 when any error happened, 2 for a bad command.\n"
            "\n"
            "options:\n"
            "  -c, --conns N      connections (default 1)\n"
            "  -d, --depth N      lines in flight per connection, closed loop (default 1)\n"
            "  -s, --size N       bytes per line, '\\n' included (default 64); lines hold\n"
            "                     any byte but '\\n', so binary data is tested too\n"
            "  -t, --duration S   seconds of sending (default 10)\n"
            "  -n, --lines N      stop after N lines in all (then --duration is a limit\n"
            "                     only if given)\n"
            "  -r, --rate R       open loop: R lines/s over all connections; latency\n"
            "                     counts from when each line was due, so stalls show\n"
            "      --mix SPEC     share of command lines, e.g. cpu=200:10,sleep=50:1 is\n"
            "                     \"!cpu 200\" on 10%% of lines and \"!sleep 50\" on 1%%;\n"
            "                     task=200:50 is \"!task 200\" on half: 200 us of CPU\n"
            "                     queued on the connection's loop (the ioRatio lesson)\n"
            "      --ramp S       spread the connects over S seconds (default 0)\n"
            "      --waves N      connects come in N waves spread over --duration\n"
            "                     (connection count climbs in steps)\n"
            "      --threads N    client threads (default 1)\n"
            "      --timeout S    give up on a connection that owes a reply and has\n"
            "                     sent nothing for S seconds (default 5)\n"
            "      --seed N       seed of the line contents (default 1)\n"
            "      --json         print the report as one JSON object\n"
            "      --no-progress  no progress line (it shows only on a terminal)\n"
            "  -h, --help         this help\n"
            "\n"
            "Ctrl-C (SIGINT) or SIGTERM stops sending, waits for the replies in\n"
            "flight and prints the report so far; a second one ends it at once.\n"
            "\n"
            "Example: threadlab load 127.0.0.1:7007 --conns 200 --duration 5\n");
}

static _Atomic bool stop_requested;

static void on_stop_signal(int sig)
{
    (void)sig;
    atomic_store(&stop_requested, true);
}

/* --mix "cpu=200:10,sleep=50:1" -> amounts and percentages (CLI_OPT_CALL). */
static bool parse_mix(const char *cmd, const char *arg, void *load_opts)
{
    struct load_opts *o = load_opts;
    return cli_parse_mix(cmd, arg, &o->cpu_pct, &o->cpu_us, &o->sleep_pct, &o->sleep_ms,
                         &o->task_pct, &o->task_us);
}

int cli_load(int argc, char **argv)
{
    struct load_opts o;
    bool json = false, no_progress = false;
    double duration_s = -1;               /* -1: not given */
    load_opts_init(&o);
    const struct cli_opt options[] = {
        { CLI_INT("conns", &o.conns, 1, 1000000), .short_name = 'c' },
        { CLI_INT("depth", &o.depth, 1, LOAD_OPEN_LOOP_MAX_IN_FLIGHT), .short_name = 'd' },
        { CLI_INT("size", &o.line_bytes, 1, 64L << 20), .short_name = 's' },
        { CLI_REAL("duration", &duration_s, 0.001, 1e6), .short_name = 't' },
        { CLI_INT("lines", &o.total_lines, 1, LONG_MAX), .short_name = 'n' },
        { CLI_REAL("rate", &o.rate, 0.001, 1e9), .short_name = 'r' },
        { CLI_CALL("mix", parse_mix, &o) },
        { CLI_REAL("ramp", &o.ramp_s, 0, 3600) },
        { CLI_INT("waves", &o.waves, 1, 1000) },
        { CLI_INT("threads", &o.threads, 1, 64) },
        { CLI_REAL("timeout", &o.timeout_s, 0.001, 3600) },
        { CLI_INT("seed", &o.seed, 0, LONG_MAX) },
        { CLI_FLAG("json", &json) },
        { CLI_FLAG("no-progress", &no_progress) },
        { 0 },
    };
    int first_arg;
    int rc = cli_parse_options("load", argc, argv, options, load_usage, 1, &first_arg);
    if (rc != CLI_PARSED)
        return rc;
    if (first_arg == argc) {
        cli_usage_error("load", "give the server as HOST:PORT");
        return CLI_EXIT_USAGE;
    }
    bool duration_given = duration_s >= 0;
    if (duration_given)
        o.duration_s = duration_s;
    if (o.total_lines > 0 && !duration_given)
        o.duration_s = 0;
    if (o.threads > o.conns)
        o.threads = o.conns;
    o.target = argv[first_arg];
    o.progress = isatty(STDERR_FILENO) && !no_progress && !json;

    char err[256];
    if (net_parse_hostport(o.target, &o.addr, &o.addr_len, err, sizeof(err)) < 0 ||
        load_opts_check(&o, err, sizeof(err)) < 0) {
        cli_usage_error("load", "%s", err);
        return CLI_EXIT_USAGE;
    }

    char fd_warning[320];
    if (!cli_fd_limit_fits(o.conns, fd_warning, sizeof(fd_warning)))
        fprintf(stderr, "threadlab load: %s\n", fd_warning);

    /* The first Ctrl-C stops sending and still reports; the handler then
     * steps aside, so a second one ends the process. */
    o.stop = &stop_requested;
    struct sigaction stop = { .sa_handler = on_stop_signal, .sa_flags = SA_RESETHAND };
    sigaction(SIGINT, &stop, NULL);
    sigaction(SIGTERM, &stop, NULL);

    struct load_report *r = malloc(sizeof(*r));
    if (!r || load_run(&o, r) < 0) {
        fprintf(stderr, "threadlab load: could not start (out of memory or threads)\n");
        free(r);
        return CLI_EXIT_FAILED;
    }
    if (json)
        load_report_json(&o, r, stdout);
    else
        load_report_print(&o, r, stdout);
    if (r->conns_opened == 0 && r->errors[LOAD_ERR_CONNECT] > 0)
        fprintf(stderr, "threadlab load: could not connect to %s: is a server "
                "running there?\n", o.target);
    else if (r->errors[LOAD_ERR_TIMEOUT] > 0)
        fprintf(stderr, "threadlab load: %llu connection(s) got no reply for "
                "%.1fs (--timeout): the server stopped answering\n",
                (unsigned long long)r->errors[LOAD_ERR_TIMEOUT], o.timeout_s);
    rc = r->errors_total == 0 && r->lines_ok > 0 ? CLI_EXIT_OK : CLI_EXIT_FAILED;
    free(r);
    return rc;
}
