/* cli_calibrate.c -- `threadlab calibrate`: measure costs, write a profile. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_help_zh.h"
#include "sim/calibrate.h"
#include "sim/profile.h"

static void calibrate_usage(FILE *out)
{
    if (msg_lang() == LANG_ZH) {           /* cli_help_zh.c: the same options */
        fputs(cli_calibrate_usage_zh, out);
        return;
    }
    fprintf(out,
            "usage: threadlab calibrate [--out FILE] [--only GROUP,...] [--base FILE]\n"
            "\n"
            "Measure on this machine what the simulator charges: read and write\n"
            "(64-byte messages over 16 loopback connections, echoed between two\n"
            "threads on two cores, as a loaded server and its clients pay them),\n"
            "accept, close, epoll_wait, an eventfd write, a context switch, an idle\n"
            "core's wakeup from another (its CPU and its latency, from the threads'\n"
            "own CPU clocks), pthread_create, handling one line, the spread of\n"
            "syscalls and of wakeups and their tails (p99, p99.9), and a thread's\n"
            "resident memory (stack pages touched, kernel stack), and the virtual\n"
            "threads' switch (this build's: asm or ucontext), their stacks mapped\n"
            "and unmapped, and the stack pages a handler touches; and reads the\n"
            "scheduler's wakeup granularity from the kernel (debugfs, /proc) or\n"
            "takes CFS's default, 1 ms x (1 + log2 cores).\n"
            "Takes a few seconds; run it on an idle machine.\n"
            "Each cost is timed call by call in 5 rounds; a round's figure is the\n"
            "mean of the log-normal through its calls' p50 and p90 (a few calls\n"
            "stretched by other processes move neither), and the figure is the\n"
            "median of the rounds. Rounds that disagree by more than 30%% of it (a\n"
            "shape: by more than 0.15 in log-normal sigma) are measured again, up\n"
            "to 3 times, then the figure is refused. A tail (p99, p99.9) is taken\n"
            "from all rounds' calls pooled, and judged in two halves, the even\n"
            "rounds against the odd (within 0.15). A refused figure keeps the value\n"
            "it had (the built-in one, or --base's), and calibrate still writes\n"
            "the profile (each figure's p10/p50/p90 and spread are comments in it)\n"
            "but exits 1. A figure that is what is left of another (a wakeup) and\n"
            "comes out a little below 0 is 0; more than 30%% below, it is refused.\n"
            "Writes a profile for threadlab sim --profile FILE.\n"
            "\n"
            "  --out FILE   where to write it (default threadlab.profile; - for stdout)\n"
            "  --only GROUP,...  measure only these groups of figures: syscalls\n"
            "               (read_ns, write_ns, syscall_sigma, syscall_p99,\n"
            "               syscall_p999), accept (accept_ns,\n"
            "               close_ns), epoll (epoll_wait_ns, eventfd_ns), poll (poll_ns,\n"
            "               read_empty_ns), threads (thread_create_ns, stack_kb), memory\n"
            "               (stack_touched_kb, kernel_stack_kb), handle (handle_ns),\n"
            "               switches (context_switch_ns, wakeup_cpu_ns, wakeup_ns,\n"
            "               wakeup_ipi_ns, wakeup_sigma, wakeup_p99, wakeup_p999,\n"
            "               wakeup_granularity_ns, migration_cost_ns), vthread\n"
            "               (vt_switch_ns, vt_stack_map_ns, vt_stack_unmap_ns,\n"
            "               vt_stack_touched_kb), idle (wakeup_deep_ns,\n"
            "               wakeup_deep_sigma, wakeup_deep_p99, wakeup_deep_p999:\n"
            "               a core that idled 100 us wakes later; timer_late_ns,\n"
            "               timer_late_sigma, timer_late_p99, timer_late_p999: a\n"
            "               timer wakes its thread late; about 5 s);\n"
            "               the rest come from --base.\n"
            "               make bench-sim measures switches and syscalls again\n"
            "               before each real run (in open loop idle too): on a\n"
            "               VM they drift within seconds\n"
            "  --base FILE  the profile the other figures come from (default: the\n"
            "               built-in one); a damaged file is refused, exit 2\n"
            "  -h, --help   this help\n");
}

/* Measure, and write the profile to out ("-": stdout). Returns the exit
 * status: 1 if a figure was refused or the file cannot be written. */
static int measure_and_save(struct profile *base, unsigned groups, const char *out)
{
    struct profile p = *base;
    int refused = calibrate_measure_groups(&p, groups, stderr);
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

/* "switches,syscalls" as group bits; 0 with a message when a name is not
 * a group. */
static unsigned parse_groups(const char *list)
{
    unsigned groups = 0;
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", list);
    for (char *save = NULL, *name = strtok_r(buf, ",", &save); name;
         name = strtok_r(NULL, ",", &save)) {
        unsigned g = calibrate_group(name);
        if (!g) {
            fprintf(stderr, "threadlab calibrate: --only: '%s' is not a group (", name);
            for (int i = 0; calibrate_group_name(i); i++)
                fprintf(stderr, "%s%s", i ? ", " : "", calibrate_group_name(i));
            fprintf(stderr, ")\n");
            return 0;
        }
        groups |= g;
    }
    if (!groups)
        fprintf(stderr, "threadlab calibrate: --only: no group named\n");
    return groups;
}

int cli_calibrate(int argc, char **argv)
{
    const char *out = "threadlab.profile", *only = NULL, *base_path = NULL;
    const struct cli_opt options[] = {
        { CLI_TEXT("out", &out) }, { CLI_TEXT("only", &only) }, { CLI_TEXT("base", &base_path) },
        { 0 },
    };
    int rc = cli_parse_options("calibrate", argc, argv, options, calibrate_usage, 0, NULL);
    if (rc != CLI_PARSED)
        return rc;
    unsigned groups = only ? parse_groups(only) : CALIBRATE_ALL;
    if (!groups)
        return CLI_EXIT_USAGE;
    struct profile base;
    profile_default(&base);
    char err[300];
    if (base_path && profile_load(&base, base_path, err, sizeof(err)) < 0) {
        fprintf(stderr, "threadlab calibrate: --base %s\n", err);
        return CLI_EXIT_USAGE;
    }
    return measure_and_save(&base, groups, out);
}
