/* results.h -- one row per model: what the load measured and what /proc
 * and wait4 said about the server; printed as a table, CSV, JSON, or bars
 * drawn by gnuplot. */
#ifndef THREADLAB_RESULTS_H
#define THREADLAB_RESULTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "fleet.h"

struct result {
    char model[16];
    bool have_load;                 /* the load's report was read */
    uint64_t lines_ok, errors;
    double lines_per_s, mb_per_s;
    double p50_us, p99_us, p999_us;
    int peak_threads;
    long peak_rss_kb;
    double cpu_s;
    uint64_t voluntary_cs, involuntary_cs;
    char fate[160];                 /* "ok", "crashed: SIGSEGV" ... (fleet_server_fate);
                                       "; " and why, when no line was answered
                                       and no error counted */
};

/* What a CSV's or a sweep's server field says: the fate, or "no report"
 * when the server ended well but the load's report is missing. A server
 * that failed says how, report or not. */
const char *result_server(const struct result *r);

/* Fill r from server s of a fleet (usage, fate) and its load's JSON report.
 * Returns false (have_load false) when the report is missing or unreadable. */
bool result_from_fleet(const struct fleet_server *s, struct result *r);

/* Parse the JSON object `threadlab load --json` prints. When it answered
 * no line and counted no error, r->fate gets why ("; no line answered:
 * 0 of 10000 conns opened in 5.0 s"): a row of zeros is never silent. */
bool result_parse_load_json(const char *json, struct result *r);

/* The table in 80 columns: model, lines/s, p50, p99, threads, RSS, CPU s,
 * errors, server (its fate). Its latencies are round trips, as the load
 * generator timed them, and a heading over them says so. The headings are
 * in the language msg() speaks, each padded by display width over its
 * column (a Chinese heading too); the cells are figures and stay as they
 * are. */
void results_print_table(FILE *out, const struct result *r, int n);
/* Every column (125 wide): adds MB/s, p99.9 and the context switches. */
void results_print_wide_table(FILE *out, const struct result *r, int n);
/* The CSV and JSON are for programs: English whatever the language. They
 * name the latencies round_trip_p50_us, _p99_us and
 * _p999_us (before issue 17: p50_us, p99_us, p999_us). */
void results_print_csv(FILE *out, const struct result *r, int n);
void results_print_json(FILE *out, const struct result *r, int n);

/* The heading over a table's latency columns, which begin at column `at`
 * and are `width` wide together: "---round-trip----". The client's round
 * trip includes the network and the wait to be served; top's "handle p50"
 * is the server's handling time alone, and the two are never one label. */
void results_print_round_trip_heading(FILE *out, int at, int width);

/* Bars of lines/s, p99, peak threads and peak RSS per model, with gnuplot,
 * into path (.png or .svg), titled "threadlab compare: SCENARIO". Returns
 * 0, or -1 with a message in err (no gnuplot, an unknown extension, a quote
 * in the path or scenario, gnuplot failed). */
int results_plot(const char *path, const char *scenario, const struct result *r,
                 int n, char *err, size_t err_len);

#endif
