/* cli.h -- the `threadlab` command: one binary, one subcommand per job. */
#ifndef THREADLAB_CLI_H
#define THREADLAB_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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

/* --size WxH, from min_w x min_h to 1000x1000 (top and replay), as a
 * CLI_OPT_CALL whose target is a struct cli_size. */
struct cli_size {
    int *width, *height;       /* where W and H go */
    int min_w, min_h;          /* the smallest allowed */
};
bool cli_parse_size(const char *cmd, const char *arg, void *size);

/* --plot FILE (compare and sim): FILE.png or FILE.svg, no quote in it
 * (gnuplot is given the name); a CLI_OPT_CALL into a const char *. */
bool cli_parse_plot_path(const char *cmd, const char *arg, void *path);

/* --lang en|zh (top, replay, demo, sim --viz), a CLI_OPT_CALL: the
 * visualizer's language (viz/msg.h); without it, LANG / LC_MESSAGES
 * choose. given (a bool *, or NULL) is set when it is. */
bool cli_parse_lang(const char *cmd, const char *arg, void *given);
/* --stack SIZE, a virtual thread's stack: bytes, or a number with K or M,
 * from 16K to 1024M, into the size_t at target (CLI_OPT_CALL). */
bool cli_parse_stack(const char *cmd, const char *arg, void *target);

/* Raise this process's soft open-file limit to its hard limit (children
 * inherit it), so that a desktop's default of 1024 does not quietly cap a
 * load, demo or compare of many connections. Returns false, with the reason
 * and the command that fixes it in msg, if `conns` connections and a few
 * fds of our own still do not fit. */
bool cli_fd_limit_fits(int conns, char *msg, size_t msg_len);

/* ---- options: one table per command, read by cli_parse_options ------------ */

enum cli_opt_type {
    CLI_OPT_FLAG,     /* no value: sets a bool to true */
    CLI_OPT_INT,      /* a whole number in [min, max], into an integer of any width */
    CLI_OPT_REAL,     /* a real number in [lo, hi], into a double */
    CLI_OPT_TEXT,     /* the value as given, into a const char * */
    CLI_OPT_CALL,     /* the value handed to parse(), which checks and stores it */
};

/* One row of a command's table. Write rows with the macros below, inside
 * braces so that a row may add a short name or a given flag:
 * { CLI_INT(...), .short_name = 'c', .given = &conns_given }. */
struct cli_opt {
    const char *name;          /* the long name, without "--"; NULL ends a table */
    char short_name;           /* a one-letter alias (-c), or 0 */
    enum cli_opt_type type;
    void *target;              /* where the value goes */
    size_t target_size;        /* its size (an INT target may be 1, 2, 4 or 8 bytes) */
    long min, max;             /* CLI_OPT_INT: the range, both ends allowed */
    double lo, hi;             /* CLI_OPT_REAL: the range, both ends allowed */
    bool *given;               /* set true when the option is given (NULL: no
                                  one asks): "not given" is never a value a
                                  user can type, such as the default itself */
    /* CLI_OPT_CALL: check arg and store it in target; on error print with
     * cli_usage_error and return false. */
    bool (*parse)(const char *cmd, const char *arg, void *target);
};

#define CLI_FLAG(n, p)          .name = (n), .type = CLI_OPT_FLAG, .target = (p), \
                                .target_size = sizeof(*(p))
#define CLI_INT(n, p, lo_, hi_) .name = (n), .type = CLI_OPT_INT, .target = (p), \
                                .target_size = sizeof(*(p)), .min = (lo_), .max = (hi_)
#define CLI_REAL(n, p, lo_, hi_) .name = (n), .type = CLI_OPT_REAL, .target = (p), \
                                .target_size = sizeof(*(p)), .lo = (lo_), .hi = (hi_)
#define CLI_TEXT(n, p)          .name = (n), .type = CLI_OPT_TEXT, .target = (p), \
                                .target_size = sizeof(*(p))
#define CLI_CALL(n, fn, p)      .name = (n), .type = CLI_OPT_CALL, .target = (p), \
                                .target_size = sizeof(*(p)), .parse = (fn)

#define CLI_PARSED (-1)   /* cli_parse_options: the options are read, go on */

/* Read argv[1..argc-1]'s options by table (ended by a row without a name).
 * Values are range-checked with cli_parse_long / cli_parse_double, so every
 * command words its errors alike. -h and --help print usage() on stdout,
 * after checking it against the table: a row the help does not list, or an
 * option the help lists that has no row, is printed on stderr and makes the
 * exit status CLI_EXIT_FAILED. Options and arguments may mix; more than
 * max_args arguments (-1: any number) is an error, "unexpected argument".
 * Returns CLI_PARSED with the arguments from argv[*first_arg] on (first_arg
 * may be NULL where max_args is 0); or the
 * exit status to return: CLI_EXIT_OK after --help, CLI_EXIT_USAGE after
 * an error message. Uses getopt_long: main thread only. */
int cli_parse_options(const char *cmd, int argc, char **argv, const struct cli_opt *table,
                      void (*usage)(FILE *out), int max_args, int *first_arg);

/* Whether argv (argv[0] the command) asks for --help or -h, anywhere
 * before a "--". When it does, a --lang en|zh among argv chooses the
 * help's language, also for a command that has no --lang of its own; a
 * bad value leaves the environment's. cli_parse_options then prints the
 * help whatever else argv holds. */
bool cli_help_asked(int argc, char **argv);

/* Print "threadlab CMD: message" and a hint to try --help. */
void cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
