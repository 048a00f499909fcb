/* cli_load.c -- `threadlab load HOST:PORT`: run the load generator. */
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "load/load.h"
#include "net/net.h"

static void load_usage(FILE *out)
{
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

enum { OPT_MIX = 256, OPT_RAMP, OPT_WAVES, OPT_THREADS, OPT_TIMEOUT, OPT_SEED, OPT_JSON,
       OPT_NO_PROGRESS };

static const struct option load_options[] = {
    { "conns", required_argument, NULL, 'c' },
    { "depth", required_argument, NULL, 'd' },
    { "size", required_argument, NULL, 's' },
    { "duration", required_argument, NULL, 't' },
    { "lines", required_argument, NULL, 'n' },
    { "rate", required_argument, NULL, 'r' },
    { "mix", required_argument, NULL, OPT_MIX },
    { "ramp", required_argument, NULL, OPT_RAMP },
    { "waves", required_argument, NULL, OPT_WAVES },
    { "threads", required_argument, NULL, OPT_THREADS },
    { "timeout", required_argument, NULL, OPT_TIMEOUT },
    { "seed", required_argument, NULL, OPT_SEED },
    { "json", no_argument, NULL, OPT_JSON },
    { "no-progress", no_argument, NULL, OPT_NO_PROGRESS },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

static _Atomic bool stop_requested;

static void on_stop_signal(int sig)
{
    (void)sig;
    atomic_store(&stop_requested, true);
}

/* "cpu=200:10,sleep=50:1" -> amounts and percentages. */
int cli_load(int argc, char **argv)
{
    struct load_opts o;
    bool json = false, progress = isatty(STDERR_FILENO), duration_given = false;
    long v;
    double d;
    int c;

    load_opts_init(&o);
    opterr = 0;
    while ((c = getopt_long(argc, argv, "c:d:s:t:n:r:h", load_options, NULL)) != -1) {
        const char *flag = argv[optind - 1];
        switch (c) {
        case 'c':
            if (!cli_parse_long("load", "--conns", optarg, 1, 1000000, &v))
                return CLI_EXIT_USAGE;
            o.conns = (int)v;
            break;
        case 'd':
            if (!cli_parse_long("load", "--depth", optarg, 1,
                                LOAD_OPEN_LOOP_MAX_IN_FLIGHT, &v))
                return CLI_EXIT_USAGE;
            o.depth = (int)v;
            break;
        case 's':
            if (!cli_parse_long("load", "--size", optarg, 1, 64L << 20, &v))
                return CLI_EXIT_USAGE;
            o.line_bytes = (size_t)v;
            break;
        case 't':
            if (!cli_parse_double("load", "--duration", optarg, 0.001, 1e6, &d))
                return CLI_EXIT_USAGE;
            o.duration_s = d;
            duration_given = true;
            break;
        case 'n':
            if (!cli_parse_long("load", "--lines", optarg, 1, LONG_MAX, &v))
                return CLI_EXIT_USAGE;
            o.total_lines = (uint64_t)v;
            break;
        case 'r':
            if (!cli_parse_double("load", "--rate", optarg, 0.001, 1e9, &d))
                return CLI_EXIT_USAGE;
            o.rate = d;
            break;
        case OPT_MIX:
            if (!cli_parse_mix("load", optarg, &o.cpu_pct, &o.cpu_us, &o.sleep_pct,
                               &o.sleep_ms, &o.task_pct, &o.task_us))
                return CLI_EXIT_USAGE;
            break;
        case OPT_RAMP:
            if (!cli_parse_double("load", "--ramp", optarg, 0, 3600, &d))
                return CLI_EXIT_USAGE;
            o.ramp_s = d;
            break;
        case OPT_WAVES:
            if (!cli_parse_long("load", "--waves", optarg, 1, 1000, &v))
                return CLI_EXIT_USAGE;
            o.waves = (int)v;
            break;
        case OPT_THREADS:
            if (!cli_parse_long("load", "--threads", optarg, 1, 64, &v))
                return CLI_EXIT_USAGE;
            o.threads = (int)v;
            break;
        case OPT_TIMEOUT:
            if (!cli_parse_double("load", "--timeout", optarg, 0.001, 3600, &d))
                return CLI_EXIT_USAGE;
            o.timeout_s = d;
            break;
        case OPT_SEED:
            if (!cli_parse_long("load", "--seed", optarg, 0, LONG_MAX, &v))
                return CLI_EXIT_USAGE;
            o.seed = (uint64_t)v;
            break;
        case OPT_JSON:
            json = true;
            break;
        case OPT_NO_PROGRESS:
            progress = false;
            break;
        case 'h':
            load_usage(stdout);
            return CLI_EXIT_OK;
        default:
            cli_usage_error("load", optopt ? "option '%s' needs a value"
                                           : "unknown option '%s'", flag);
            return CLI_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        cli_usage_error("load", optind >= argc ? "give the server as HOST:PORT"
                                               : "unexpected argument '%s'",
                        argv[argc - 1]);
        return CLI_EXIT_USAGE;
    }
    if (o.total_lines > 0 && !duration_given)
        o.duration_s = 0;
    if (o.threads > o.conns)
        o.threads = o.conns;
    o.target = argv[optind];
    o.progress = progress && !json;

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
    int rc = r->errors_total == 0 && r->lines_ok > 0 ? CLI_EXIT_OK : CLI_EXIT_FAILED;
    free(r);
    return rc;
}
