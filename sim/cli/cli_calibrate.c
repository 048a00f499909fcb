/* cli_calibrate.c -- `threadlab calibrate`: measure costs, write a profile. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "des/calibrate.h"

static void calibrate_usage(FILE *out)
{
    fprintf(out,
            "usage: threadlab calibrate [--out FILE]\n"
            "\n"
            "Measure on this machine what the simulator charges: read, write,\n"
            "accept, close, epoll_wait, an eventfd write, a context switch, an idle\n"
            "core's wakeup from another (its CPU and its latency, from the threads'\n"
            "own CPU clocks), pthread_create, handling one line, the loopback\n"
            "network's share of a round trip, the spread of syscalls and of\n"
            "wakeups, and a thread's resident memory (stack pages touched, kernel\n"
            "stack); and reads the scheduler's wakeup granularity from the kernel\n"
            "(debugfs, /proc) or takes CFS's default, 1 ms x (1 + log2 cores).\n"
            "Takes a few seconds; run it on an idle machine.\n"
            "Each cost is timed call by call in 5 rounds; a round's figure is the\n"
            "mean of the log-normal through its calls' p50 and p90 (a few calls\n"
            "stretched by other processes move neither), and the figure is the\n"
            "median of the rounds. Rounds that disagree by more than 30%% of it (a\n"
            "shape: by more than 0.15) are measured again, up to 3 times, then the\n"
            "figure is refused: it keeps the built-in value, and calibrate still\n"
            "writes the profile (each figure's p10/p50/p90 and spread are comments\n"
            "in it) but exits 1. A figure that is what is left of another (a\n"
            "wakeup, the network's share) and comes out a little below 0 is 0;\n"
            "more than 30%% below, it is refused.\n"
            "Writes a profile for threadlab sim --profile FILE.\n"
            "\n"
            "  --out FILE   where to write it (default threadlab.profile; - for stdout)\n"
            "  -h, --help   this help\n");
}

/* Measure, and write the profile to out ("-": stdout). Returns the exit
 * status: 1 if a figure was refused or the file cannot be written. */
static int measure_and_save(const char *out)
{
    struct profile p;
    int refused = calibrate_measure(&p, stderr);
    if (strcmp(out, "-") == 0) {
        if (profile_save(&p, "/dev/stdout") < 0) {
            perror("threadlab calibrate");
            return CLI_EXIT_FAILED;
        }
        return refused ? CLI_EXIT_FAILED : CLI_EXIT_OK;
    }
    int rc = profile_save(&p, out);
    if (rc < 0) {
        fprintf(stderr, "threadlab calibrate: cannot write %s: %s\n", out, strerror(-rc));
        return CLI_EXIT_FAILED;
    }
    fprintf(stderr, "threadlab calibrate: wrote %s (use: threadlab sim MODEL --profile %s)\n",
            out, out);
    return refused ? CLI_EXIT_FAILED : CLI_EXIT_OK;
}

int cli_calibrate(int argc, char **argv)
{
    const char *out = "threadlab.profile";
    const struct cli_opt options[] = { { CLI_TEXT("out", &out) }, { 0 } };
    int rc = cli_parse_options("calibrate", argc, argv, options, calibrate_usage, 0, NULL);
    return rc == CLI_PARSED ? measure_and_save(out) : rc;
}
