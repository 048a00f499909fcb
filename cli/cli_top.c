/* cli_top.c -- `threadlab top [PID|MODEL ...]`: the visualizer. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_help_zh.h"
#include "viz/top.h"
#include "viz/view.h"

static void top_usage(FILE *out)
{
    if (msg_lang() == LANG_ZH) {           /* cli_help_zh.c: the same options */
        fprintf(out, cli_top_usage_zh, VIEW_REFRESH_MS_DEFAULT, VIEW_REFRESH_MS_BIG);
        return;
    }
    fprintf(out,
            "usage: threadlab top [options] [PID|MODEL ...]\n"
            "\n"
            "Watch running threadlab servers live: threads by state, loops, queues,\n"
            "latency and the event log, up to five servers side by side. With no\n"
            "PID or MODEL, watches every live server (and picks up new ones).\n"
            "\n"
            "options:\n"
            "  --plain          print text snapshots instead of a full screen (the\n"
            "                   default when output is not a terminal)\n"
            "  --json           like --plain, but one line of JSON per server per\n"
            "                   snapshot: counters, threads by state, handle_p50_us\n"
            "                   and handle_p99_us (handling time, not round trip)\n"
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
            "  --caption TEXT   a line under the panes, what to look at (recorded\n"
            "                   with --record, as the demo's narrator is)\n"
            "  -h, --help       this help\n"
            "\n"
            "keys: q quit, p pause, tab or 1-5 focus a pane, t list/grid, l event log,\n"
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

int cli_top(int argc, char **argv)
{
    struct top_opts o = { 0 };
    bool lang_given = false;       /* --lang: the viewer's language */
    struct cli_size size = { &o.width, &o.height, VIEW_MIN_W, VIEW_MIN_H };
    const struct cli_opt options[] = {
        { CLI_FLAG("plain", &o.plain) },
        { CLI_FLAG("json", &o.json) },
        { CLI_TEXT("record", &o.record_path) },
        { CLI_INT("count", &o.count, 1, 1000000) },
        { CLI_CALL("size", cli_parse_size, &size) },
        { CLI_INT("interval", &o.refresh_ms, VIEW_REFRESH_MS_MIN, VIEW_REFRESH_MS_MAX) },
        { CLI_FLAG("big", &o.big) },
        { CLI_CALL("lang", cli_parse_lang, &lang_given) },
        { CLI_TEXT("caption", &o.footer) },
        { 0 },
    };
    int first_arg;
    int rc = cli_parse_options("top", argc, argv, options, top_usage, -1, &first_arg);
    if (rc != CLI_PARSED)
        return rc;
    if (o.json)
        o.plain = true;             /* --json is --plain, as JSON */
    o.targets = argv + first_arg;
    o.ntargets = argc - first_arg;
    if (o.ntargets > VIEW_MAX_PANES) {
        cli_usage_error("top", "at most five servers at once (%d given)", o.ntargets);
        return CLI_EXIT_USAGE;
    }
    return top_run(&o);
}
