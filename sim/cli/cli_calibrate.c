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
            "accept, close, epoll_wait, an eventfd write, a wakeup across cores, a\n"
            "context switch, pthread_create, handling one line, the loopback\n"
            "network's share of a round trip, and a thread's resident memory (stack\n"
            "pages touched, kernel stack). Takes a few seconds; run it on an idle\n"
            "machine. Each figure is the median of 5 rounds; when the rounds spread\n"
            "(max - min) over 30%% of it, the figure is measured again, up to 3 times,\n"
            "then refused: it keeps the built-in value, and calibrate still writes\n"
            "the profile (each spread is a comment in it) but exits 1.\n"
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
