/* cli_top.c -- `threadlab top [PID|MODEL ...]`: the visualizer. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "viz/top.h"
#include "viz/view.h"

static void top_usage(FILE *out)
{
    fprintf(out,
            "usage: threadlab top [options] [PID|MODEL ...]\n"
            "\n"
            "Watch running threadlab servers live: threads by state, loops, queues,\n"
            "latency and the event log, up to four servers side by side. With no\n"
            "PID or MODEL, watches every live server (and picks up new ones).\n"
            "\n"
            "options:\n"
            "  --plain          print text snapshots instead of a full screen (the\n"
            "                   default when output is not a terminal)\n"
            "  --json           like --plain, but one line of JSON per server per\n"
            "                   snapshot: counters, threads by state, p50/p99\n"
            "  --count N        with --plain or --json, stop after N snapshots\n"
            "  --record FILE    also write every refresh to FILE, to play later with\n"
            "                   threadlab replay FILE; q, Ctrl-C, SIGTERM and SIGHUP\n"
            "                   finish the file; one cut short (kill -9, a full disk)\n"
            "                   still plays its whole frames\n"
            "  --size WxH       with --plain, the snapshot size (default 120x40)\n"
            "  --interval MS    refresh every MS milliseconds (default %d; %d with --big)\n"
            "  --big            projector mode: bigger cells, bold, slower refresh\n"
            "  --lang en|zh     the screen in English or Chinese (default: zh when\n"
            "                   LC_ALL, LC_MESSAGES or LANG starts with zh)\n"
            "  -h, --help       this help\n"
            "\n"
            "keys: q quit, p pause, tab or 1-4 focus a pane, t list/grid, l event log,\n"
            "      o order by role/state/lines/CPU, up/down PgUp/PgDn Home/End select,\n"
            "      Enter the selected thread's figures, + / - refresh faster / slower,\n"
            "      ? help. The list's CPU%% comes from /proc/PID/task/TID/stat (\"-\": none)\n"
            "\n"
            "Colours follow the thread states; NO_COLOR=1 turns them off (the state\n"
            "letters remain). A terminal that cannot draw a full screen (TERM=dumb)\n"
            "gets text snapshots, as with --plain. A server that exits, or is killed,\n"
            "is marked GONE within one refresh. Boards live in $XDG_RUNTIME_DIR/threadlab or\n"
            "/tmp/threadlab-$UID (THREADLAB_BOARD_DIR overrides). See docs/visualizer.md.\n",
            VIEW_REFRESH_MS_DEFAULT, VIEW_REFRESH_MS_BIG);
}

enum { OPT_PLAIN = 256, OPT_JSON, OPT_RECORD, OPT_COUNT, OPT_SIZE, OPT_INTERVAL, OPT_BIG, OPT_LANG };

static const struct option top_options[] = {
    { "plain", no_argument, NULL, OPT_PLAIN },
    { "json", no_argument, NULL, OPT_JSON },
    { "record", required_argument, NULL, OPT_RECORD },
    { "count", required_argument, NULL, OPT_COUNT },
    { "size", required_argument, NULL, OPT_SIZE },
    { "interval", required_argument, NULL, OPT_INTERVAL },
    { "big", no_argument, NULL, OPT_BIG },
    { "lang", required_argument, NULL, OPT_LANG },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

int cli_top(int argc, char **argv)
{
    struct top_opts o = { 0 };
    long v;
    int c;

    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", top_options, NULL)) != -1) {
        const char *flag = argv[optind - 1];
        switch (c) {
        case OPT_PLAIN:
            o.plain = true;
            break;
        case OPT_JSON:
            o.plain = o.json = true;
            break;
        case OPT_RECORD:
            o.record_path = optarg;
            break;
        case OPT_COUNT:
            if (!cli_parse_long("top", "--count", optarg, 1, 1000000, &v))
                return CLI_EXIT_USAGE;
            o.count = (int)v;
            break;
        case OPT_SIZE:
            if (!cli_parse_size("top", optarg, VIEW_MIN_W, VIEW_MIN_H, &o.width,
                                &o.height))
                return CLI_EXIT_USAGE;
            break;
        case OPT_INTERVAL:
            if (!cli_parse_long("top", "--interval", optarg, VIEW_REFRESH_MS_MIN,
                                VIEW_REFRESH_MS_MAX, &v))
                return CLI_EXIT_USAGE;
            o.refresh_ms = (int)v;
            break;
        case OPT_LANG:
            if (!cli_parse_lang("top", optarg))
                return CLI_EXIT_USAGE;
            break;
        case OPT_BIG:
            o.big = true;
            break;
        case 'h':
            top_usage(stdout);
            return CLI_EXIT_OK;
        default:
            cli_usage_error("top", optopt ? "option '%s' needs a value"
                                          : "unknown option '%s'", flag);
            return CLI_EXIT_USAGE;
        }
    }
    o.targets = argv + optind;
    o.ntargets = argc - optind;
    if (o.ntargets > 4) {
        cli_usage_error("top", "at most four servers at once (%d given)", o.ntargets);
        return CLI_EXIT_USAGE;
    }
    return top_run(&o);
}
