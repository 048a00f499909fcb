/* cli.h -- the `threadlab` command: one binary, one subcommand per job. */
#ifndef THREADLAB_CLI_H
#define THREADLAB_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CLI_EXIT_OK 0       /* it worked */
#define CLI_EXIT_FAILED 1   /* it ran, and something failed (errors in a load) */
#define CLI_EXIT_USAGE 2    /* bad command line */

/* Subcommands: argv[0] is the subcommand's name. */
int cli_serve(int argc, char **argv);
int cli_load(int argc, char **argv);
int cli_top(int argc, char **argv);
int cli_demo(int argc, char **argv);
int cli_compare(int argc, char **argv);
int cli_sim(int argc, char **argv);
int cli_quiz(int argc, char **argv);      /* `threadlab sim quiz` */
int cli_calibrate(int argc, char **argv);
int cli_replay(int argc, char **argv);

/* Parse a whole number in [min, max] given to option `flag`; on error print
 * "threadlab CMD: --flag: ..." and return false. */
bool cli_parse_long(const char *cmd, const char *flag, const char *arg,
                    long min, long max, long *out);

/* The same for a real number (seconds, rates, percentages). */
bool cli_parse_double(const char *cmd, const char *flag, const char *arg,
                      double min, double max, double *out);

/* --mix cpu=US:PCT,sleep=MS:PCT[,task=US:PCT] (load and sim): sets the
 * shares and amounts named; the others keep their value. task= only where
 * task_pct is not NULL. On error prints a usage error and returns false. */
bool cli_parse_mix(const char *cmd, const char *spec, double *cpu_pct, uint32_t *cpu_us,
                   double *sleep_pct, uint32_t *sleep_ms, double *task_pct,
                   uint32_t *task_us);

/* --lang en|zh (top, replay, demo, sim --viz): the visualizer's language
 * (viz/msg.h); without it, LANG / LC_MESSAGES choose. On error prints a
 * usage error and returns false. */
bool cli_parse_lang(const char *cmd, const char *arg);

/* --size WxH, from min_w x min_h to 1000x1000 (top and replay). */
bool cli_parse_size(const char *cmd, const char *arg, int min_w, int min_h, int *w, int *h);

/* Raise this process's soft open-file limit to its hard limit (children
 * inherit it), so that a desktop's default of 1024 does not quietly cap a
 * load, demo or compare of many connections. Returns false, with the reason
 * and the command that fixes it in msg, if `conns` connections and a few
 * fds of our own still do not fit. */
bool cli_fd_limit_fits(int conns, char *msg, size_t msg_len);

/* Print "threadlab CMD: message" and a hint to try --help. */
void cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
