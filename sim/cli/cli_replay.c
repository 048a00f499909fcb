/* cli_replay.c -- `threadlab replay FILE`. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "viz/replay.h"
#include "viz/view.h"

static void replay_usage(FILE *out)
{
    fprintf(out,
            "usage: threadlab replay FILE [options]\n"
            "\n"
            "Play a recording made by threadlab top --record, demo --record or\n"
            "sim --viz --record, in the same visualizer, with no server running.\n"
            "\n"
            "keys: space play/pause, <- -> (or b n) one frame back/forward, , . the\n"
            "      previous/next frame with a new event, w W the next/previous\n"
            "      warning (a blocked loop, a rejection, a pool shrinking), 0-9 seek\n"
            "      to 0%%..90%%, g G first/last frame, + - speed, q quit; and top's\n"
            "      keys (tab focus, t list/grid, l log, ? help). Moving pauses.\n"
            "\n"
            "options:\n"
            "  --speed X        play X times as fast as recorded (default 1)\n"
            "  --at S           seek to S seconds into the recording (paused there;\n"
            "                   with --plain, print that frame)\n"
            "  --plain          print every frame as text (the default when output\n"
            "                   is not a terminal)\n"
            "  --frame N        with --plain, only frame N (past the last: an error)\n"
            "  --backward       with --plain, the last frame first\n"
            "  --size WxH       with --plain, the frame size (default 120x40)\n"
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

enum { OPT_SPEED = 256, OPT_AT, OPT_PLAIN, OPT_FRAME, OPT_BACKWARD, OPT_SIZE, OPT_BIG, OPT_LANG };

static const struct option replay_options[] = {
    { "speed", required_argument, NULL, OPT_SPEED },
    { "at", required_argument, NULL, OPT_AT },
    { "plain", no_argument, NULL, OPT_PLAIN },
    { "frame", required_argument, NULL, OPT_FRAME },
    { "backward", no_argument, NULL, OPT_BACKWARD },
    { "size", required_argument, NULL, OPT_SIZE },
    { "big", no_argument, NULL, OPT_BIG },
    { "lang", required_argument, NULL, OPT_LANG },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

int cli_replay(int argc, char **argv)
{
    struct replay_opts o = { .speed = 1 };
    long v;
    double d;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", replay_options, NULL)) != -1) {
        const char *flag = argv[optind - 1];
        switch (c) {
        case OPT_SPEED:
            if (!cli_parse_double("replay", "--speed", optarg, 1.0 / 64, 64, &d))
                return CLI_EXIT_USAGE;
            o.speed = d;
            break;
        case OPT_AT:
            if (!cli_parse_double("replay", "--at", optarg, 0, 1e9, &d))
                return CLI_EXIT_USAGE;
            o.at_s = d;
            break;
        case OPT_PLAIN:
            o.plain = true;
            break;
        case OPT_FRAME:
            if (!cli_parse_long("replay", "--frame", optarg, 1, 100000000, &v))
                return CLI_EXIT_USAGE;
            o.frame = (int)v;
            break;
        case OPT_BACKWARD:
            o.backward = true;
            break;
        case OPT_SIZE:
            if (!cli_parse_size("replay", optarg, VIEW_MIN_W, VIEW_MIN_H, &o.width,
                                &o.height))
                return CLI_EXIT_USAGE;
            break;
        case OPT_LANG:
            if (!cli_parse_lang("replay", optarg))
                return CLI_EXIT_USAGE;
            break;
        case OPT_BIG:
            o.big = true;
            break;
        case 'h':
            replay_usage(stdout);
            return CLI_EXIT_OK;
        default:
            cli_usage_error("replay", optopt ? "option '%s' needs a value"
                                             : "unknown option '%s'", flag);
            return CLI_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        cli_usage_error("replay", optind >= argc ? "name the recording to play"
                                                 : "unexpected argument '%s'",
                        argv[argc - 1]);
        return CLI_EXIT_USAGE;
    }
    o.path = argv[optind];
    return replay_run(&o) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAILED;
}
