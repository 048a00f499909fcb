/* main.c -- `threadlab`: dispatch to a subcommand (what the commands share
 * to read their arguments is cli_parse.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_help_zh.h"
#include "viz/msg.h"

#ifndef THREADLAB_VERSION
#define THREADLAB_VERSION "0.1"
#endif

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} commands[] = {
    { "serve", cli_serve, "run a model's echo server: bio, pool, reactor, multireactor, vthread" },
    { "load", cli_load, "drive an echo server with verifying clients" },
    { "top", cli_top, "watch running servers' threads, loops and queues live" },
    { "replay", cli_replay, "play a recording of top, demo or sim --viz, forward and back" },
    { "demo", cli_demo, "the models side by side under one scenario, then a table" },
    { "compare", cli_compare, "each model in turn under one workload: the numbers" },
    { "sim", cli_sim, "a model on a simulated machine of any size (deterministic)" },
    { "calibrate", cli_calibrate, "measure this machine's costs into a profile for sim" },
};

static void usage_zh(FILE *out)
{
    fputs(cli_usage_head_zh, out);
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        const char *summary = cli_command_summary_zh(commands[i].name);
        fprintf(out, "  %-9s %s\n", commands[i].name, summary ? summary : commands[i].summary);
    }
    fputs(cli_usage_tail_zh, out);
}

static void usage(FILE *out)
{
    if (msg_lang() == LANG_ZH) {           /* cli_help_zh.c */
        usage_zh(out);
        return;
    }
    fprintf(out,
            "usage: threadlab COMMAND [options]\n"
            "\n"
            "A teaching kit for server threading models: real echo servers,\n"
            "a load generator that checks every byte, and a live visualizer.\n"
            "\n"
            "commands:\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(out,
            "\n"
            "threadlab COMMAND --help shows a command's options (in Chinese with\n"
            "--lang zh, or under a zh LANG).\n"
            "Try:  threadlab demo          (or: make demo)\n"
            "      threadlab serve bio &   threadlab load 127.0.0.1:7007 --conns 64\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    (void)cli_help_asked(argc, argv);   /* --help follows --lang, for every command */
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        usage(stdout);
        return CLI_EXIT_OK;
    }
    if (!strcmp(cmd, "--version")) {
        printf("threadlab %s\n", THREADLAB_VERSION);
        return CLI_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (!strcmp(cmd, commands[i].name))
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "threadlab: unknown command '%s'\n\n", cmd);
    usage(stderr);
    return CLI_EXIT_USAGE;
}
