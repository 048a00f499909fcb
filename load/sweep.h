/* sweep.h -- curves: one workload variable swept over a list of values,
 * every model run at each value, one row per (model, value).
 *
 * `threadlab compare --sweep VAR=LIST` fills the rows from real servers,
 * `threadlab sim --sweep VAR=LIST` from the simulator; both print them
 * with the functions below, in one CSV format, so a real sweep's CSV can
 * be read back (sweep_read_csv) and drawn over a simulated one
 * (sweep_plot, in plot.c). A CSV is a file anyone may have edited: the
 * reader checks every field and says which line is wrong.
 */
#ifndef THREADLAB_SWEEP_H
#define THREADLAB_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "results.h"

#define SWEEP_MAX_VALUES 32         /* values in one LIST */
#define SWEEP_MAX_MODELS 5          /* models in one sweep: compare's FLEET_MAX,
                                       or all five in sim all --sweep */
#define SWEEP_MAX_ROWS (SWEEP_MAX_MODELS * SWEEP_MAX_VALUES)  /* models x values */
#define SWEEP_SLEEP_MS 10           /* a sleep-pct line runs "!sleep 10" */
#define SWEEP_CPU_US_MAX 10000000   /* the protocol's !cpu limit (10 s) */

/* What a sweep varies. */
enum sweep_var {
    SWEEP_CONNS,                    /* connections */
    SWEEP_DEPTH,                    /* lines in flight per connection */
    SWEEP_SIZE,                     /* bytes per line, '\n' included */
    SWEEP_CPU_US,                   /* every line is "!cpu N" */
    SWEEP_SLEEP_PCT,                /* this share of lines is "!sleep 10" */
    SWEEP_VAR_COUNT,
};

struct sweep_spec {
    enum sweep_var var;
    int nvalues;
    double values[SWEEP_MAX_VALUES]; /* increasing, each in the var's range */
};

/* One point of a curve. Real rows leave the simulator's columns at -1
 * (printed "-"); simulated rows take resident memory from the model's
 * threads and connections (see sim --help). */
struct sweep_row {
    char model[16];
    double value;                   /* of the swept variable */
    bool simulated;
    bool have_load;                 /* the load's figures are there */
    double lines_per_s;
    double p50_us, p99_us, p999_us;
    double peak_threads;
    double resident_kb;             /* real: the server's peak RSS */
    double cpu_s;                   /* CPU time the server used */
    double context_switches;        /* voluntary + involuntary */
    double errors;                  /* lines or connections that failed */
    double cpu_busy_pct;            /* simulated: all cores, average; real: -1 */
    double reserved_kb;             /* simulated: stacks + connections; real: -1 */
    char server[160];               /* real: how the server ended ("ok" ...),
                                       and why no line was answered */
};

/* ---- the variable and its values ---------------------------------------- */

/* "conns", "depth", ... */
const char *sweep_var_name(enum sweep_var v);

/* Parse "VAR=LIST". LIST is comma-separated numbers (1e3 allowed), or
 * A..B for the powers of ten from A to B (1e1..1e6: 10, 100, ... 1e6).
 * Values must be whole numbers except for sleep-pct, increasing, and in
 * the variable's range; conns at most max_conns. Returns 0, or -EINVAL
 * with a one-line message in err. */
int sweep_parse(const char *arg, long max_conns, struct sweep_spec *s, char *err,
                size_t err_len);

/* The value as the variable's option wants it ("100", "2.5"). */
void sweep_value_str(enum sweep_var v, double value, char *buf, size_t len);

/* ---- rows ---------------------------------------------------------------- */

/* A row from a real run's result (struct result, results.h). */
void sweep_row_from_result(const struct result *r, double value, struct sweep_row *row);

void sweep_print_table(FILE *out, enum sweep_var v, const struct sweep_row *rows, int n);
void sweep_print_csv(FILE *out, enum sweep_var v, const struct sweep_row *rows, int n);
void sweep_print_json(FILE *out, enum sweep_var v, const struct sweep_row *rows, int n);

/* Read a CSV that sweep_print_csv wrote (at most max rows). Returns the
 * row count and the variable in *v, or -EINVAL (-errno if unreadable)
 * with "FILE: line N: what is wrong" in err. */
int sweep_read_csv(const char *path, enum sweep_var *v, struct sweep_row *rows, int max,
                   char *err, size_t err_len);

/* Print the rows (a table under title, or JSON when json), write them to
 * csv_out when given, and draw plot when given (with the overlay's
 * points). Without gnuplot the CSV goes to plot's name ending in .csv
 * instead (unless csv_out was given), so the run is kept. Messages go to
 * stderr as "threadlab CMD: ...". Returns 0, or -1 when the figure could
 * not be made. */
int sweep_report(const char *cmd, enum sweep_var v, const struct sweep_row *rows, int n,
                 const struct sweep_row *overlay, int noverlay, const char *title,
                 bool json, FILE *csv_out, const char *plot);

/* ---- the figure (plot.c) ------------------------------------------------- */

/* Four panels (lines/s; p99, threads and resident memory on log scales),
 * x the variable (log when every value is positive), one line per model;
 * overlay rows, when given, drawn as points over the lines of their model
 * inside the lines' x range. title names the workload and the machine
 * (a newline in it starts a second line).
 * path ends in .png or .svg. Returns 0, or -ENOENT when gnuplot is not
 * installed, -EINVAL for a bad path, -EIO when gnuplot failed; a message
 * in err. */
int sweep_plot(const char *path, const char *title, enum sweep_var v,
               const struct sweep_row *rows, int n, const struct sweep_row *overlay,
               int noverlay, char *err, size_t err_len);

/* True when path ends in .png or .svg and holds no quote or newline. */
bool sweep_plot_path_ok(const char *path);

/* "host: 2 cores, AMD EPYC ..., Linux 6.1": for a figure's title. */
void sweep_machine(char *buf, size_t len);

#endif
