/* cli_replay.c -- `threadlab replay FILE`. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_help_zh.h"
#include "viz/replay.h"
#include "viz/view.h"

static void replay_usage(FILE *out)
{
    if (msg_lang() == LANG_ZH) {           /* cli_help_zh.c: the same options */
        fputs(cli_replay_usage_zh, out);
        return;
    }
    fprintf(out,
            "usage: threadlab replay FILE [options]\n"
            "\n"
            "Play a recording made by threadlab top --record, demo --record or\n"
            "sim --viz --record, in the same visualizer, with no server running.\n"
            "A demo's recording ends with its table (printed when replay quits);\n"
            "a sim --viz recording holds one frame per event, with its next: line.\n"
            "The narrator and the table are recorded in English and Chinese, and\n"
            "shown as --lang says.\n"
            "Ready recordings of each demo scenario: recordings/ (make recordings).\n"
            "\n"
            "keys: space play/pause, <- -> (or b n) one frame back/forward, , . the\n"
            "      previous/next frame with a new event, w W the next/previous\n"
            "      frame where a warning starts (a loop's stall, until it unblocks;\n"
            "      a rejection or a pool shrinking from a source that gave none\n"
            "      the frame before; past the last, it says so), 0-9\n"
            "      seek to 0%%..90%%, g G first/last frame, + - speed, q quit; and\n"
            "      top's keys (tab focus, t list/grid, l log, ? help). Moving pauses.\n"
            "\n"
            "options:\n"
            "  --speed X        play X times as fast as recorded (default 1)\n"
            "  --at S           seek to S seconds into the recording (paused there;\n"
            "                   with --plain, print that frame; --at 0 is the first)\n"
            "  --plain          print every frame as text (the default when output\n"
            "                   is not a terminal)\n"
            "  --frame N        with --plain, only frame N (past the last: an error)\n"
            "  --backward       with --plain, the last frame first\n"
            "  --size WxH       with --plain or --cast, the frame size (default\n"
            "                   120x40)\n"
            "  --cast FILE      write every frame, at its recorded time, to FILE as\n"
            "                   asciicast v2 (what terminal-recording players\n"
            "                   such as asciinema play: no threadlab needed), the\n"
            "                   frames as --plain prints them; a demo's table last\n"
            "  --big            projector mode\n"
            "  --lang en|zh     the screen in English or Chinese (default: zh when\n"
            "                   LC_ALL, LC_MESSAGES or LANG starts with zh)\n"
            "  -h, --help       this help\n"
            "\n"
            "A recording cut short (the recorder was killed, the disk filled up)\n"
            "plays its whole frames; where it was cut is said on stderr and under\n"
            "the panes. A file that is not a recording, of another version, with\n"
            "any byte changed, or cut before its first whole frame is refused\n"
            "with the reason (exit status 1).\n");
}

int cli_replay(int argc, char **argv)
{
    struct replay_opts o = { .speed = 1, .at_s = -1 };   /* -1: no --at */
    bool lang_given = false;       /* --lang: the viewer's language */
    struct cli_size size = { &o.width, &o.height, VIEW_MIN_W, VIEW_MIN_H };
    const struct cli_opt options[] = {
        { CLI_REAL("speed", &o.speed, 1.0 / 64, 64) },
        { CLI_REAL("at", &o.at_s, 0, 1e9) },
        { CLI_FLAG("plain", &o.plain) },
        { CLI_INT("frame", &o.frame, 1, 100000000) },
        { CLI_FLAG("backward", &o.backward) },
        { CLI_CALL("size", cli_parse_size, &size) },
        { CLI_TEXT("cast", &o.cast) },
        { CLI_FLAG("big", &o.big) },
        { CLI_CALL("lang", cli_parse_lang, &lang_given) },
        { 0 },
    };
    int first_arg;
    int rc = cli_parse_options("replay", argc, argv, options, replay_usage, 1, &first_arg);
    if (rc != CLI_PARSED)
        return rc;
    o.path = argv[first_arg];          /* argv[argc] is NULL: none given */
    if (!o.path) {
        cli_usage_error("replay", "name the recording to play");
        return CLI_EXIT_USAGE;
    }
    return replay_run(&o) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAILED;
}
