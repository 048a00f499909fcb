/* sweep.c -- a sweep's variable, its values and its rows. See sweep.h. */
#include "sweep.h"
#include "viz/fmt.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the variable and its values ---------------------------------------- */

struct var_desc {
    const char *name;
    double min, max;                /* the range of one value */
    bool whole;                     /* whole numbers only */
    const char *unit;               /* for messages and the x axis */
};

/* The ranges are what the load, the server and the protocol accept:
 * depth as load --depth, size up to the default --max-line plus '\n',
 * cpu-us as the protocol's !cpu limit. conns' upper bound is the
 * caller's (this machine's fds, or the simulator's). */
static const struct var_desc vars[SWEEP_VAR_COUNT] = {
    [SWEEP_CONNS] = { "conns", 1, 0, true, "connections" },
    [SWEEP_DEPTH] = { "depth", 1, 4096, true, "lines in flight per connection" },
    [SWEEP_SIZE] = { "size", 1, 65537, true, "bytes per line" },
    [SWEEP_CPU_US] = { "cpu-us", 0, SWEEP_CPU_US_MAX, true, "us of !cpu per line" },
    [SWEEP_SLEEP_PCT] = { "sleep-pct", 0, 100, false, "% of lines !sleep 10" },
};

const char *sweep_var_name(enum sweep_var v)
{
    return v < SWEEP_VAR_COUNT ? vars[v].name : "?";
}

static int find_var(const char *name, size_t len)
{
    for (int i = 0; i < SWEEP_VAR_COUNT; i++)
        if (strlen(vars[i].name) == len && strncmp(vars[i].name, name, len) == 0)
            return i;
    return -1;
}

/* One number of a LIST: all of [p, end) must be the number. */
static bool parse_number(const char *p, const char *end, double *out)
{
    char buf[64];
    size_t len = (size_t)(end - p);
    if (len == 0 || len >= sizeof(buf))
        return false;
    memcpy(buf, p, len);
    buf[len] = '\0';
    char *stop;
    errno = 0;
    double v = strtod(buf, &stop);
    if (*stop != '\0' || errno != 0 || !isfinite(v))
        return false;
    *out = v;
    return true;
}

/* Add one value, checked against the variable's range and the last one. */
static int add_value(struct sweep_spec *s, double v, double max, char *err, size_t err_len)
{
    const struct var_desc *d = &vars[s->var];
    if (d->whole && v != floor(v)) {
        snprintf(err, err_len, "--sweep: %s=%g is not a whole number", d->name, v);
        return -EINVAL;
    }
    if (v < d->min || v > max) {
        snprintf(err, err_len, "--sweep: %s=%g is out of range (%g to %g %s)", d->name,
                 v, d->min, max, d->unit);
        return -EINVAL;
    }
    if (s->nvalues > 0 && v <= s->values[s->nvalues - 1]) {
        snprintf(err, err_len, "--sweep: the values must increase (%g after %g)", v,
                 s->values[s->nvalues - 1]);
        return -EINVAL;
    }
    if (s->nvalues == SWEEP_MAX_VALUES) {
        snprintf(err, err_len, "--sweep: at most %d values", SWEEP_MAX_VALUES);
        return -EINVAL;
    }
    s->values[s->nvalues++] = v;
    return 0;
}

/* A..B: A, 10A, 100A, ... up to B. */
static int add_decades(struct sweep_spec *s, double from, double to, double max, char *err,
                       size_t err_len)
{
    if (from <= 0 || to < from) {
        snprintf(err, err_len, "--sweep: in A..B, A must be above 0 and B at least A "
                 "(%g..%g)", from, to);
        return -EINVAL;
    }
    for (double v = from; v <= to * (1 + 1e-9); v *= 10) {
        int rc = add_value(s, round(v * 1e6) / 1e6, max, err, err_len);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* One item of a LIST, [p, end): a number or A..B. */
static int add_item(struct sweep_spec *s, const char *p, const char *end, double max,
                    char *err, size_t err_len)
{
    const char *dots = strstr(p, "..");
    double a, b;
    if (dots && dots < end) {
        if (parse_number(p, dots, &a) && parse_number(dots + 2, end, &b))
            return add_decades(s, a, b, max, err, err_len);
    } else if (parse_number(p, end, &a)) {
        return add_value(s, a, max, err, err_len);
    }
    snprintf(err, err_len, "--sweep: '%.*s' is not a number or A..B", (int)(end - p), p);
    return -EINVAL;
}

int sweep_parse(const char *arg, long max_conns, struct sweep_spec *s, char *err,
                size_t err_len)
{
    memset(s, 0, sizeof(*s));
    const char *eq = strchr(arg, '=');
    int var = eq ? find_var(arg, (size_t)(eq - arg)) : -1;
    if (var < 0) {
        snprintf(err, err_len, "--sweep: '%s' is not VAR=LIST with VAR one of conns, "
                 "depth, size, cpu-us, sleep-pct", arg);
        return -EINVAL;
    }
    s->var = (enum sweep_var)var;
    double max = s->var == SWEEP_CONNS ? (double)max_conns : vars[var].max;
    for (const char *p = eq + 1;;) {
        const char *comma = strchr(p, ',');
        const char *end = comma ? comma : p + strlen(p);
        int rc = add_item(s, p, end, max, err, err_len);
        if (rc < 0 || !comma)
            return rc;
        p = comma + 1;
    }
}

void sweep_value_str(enum sweep_var v, double value, char *buf, size_t len)
{
    if (vars[v].whole)
        snprintf(buf, len, "%.0f", value);
    else
        snprintf(buf, len, "%g", value);
}

/* ---- rows ---------------------------------------------------------------- */

void sweep_row_from_result(const struct result *r, double value, struct sweep_row *row)
{
    memset(row, 0, sizeof(*row));
    snprintf(row->model, sizeof(row->model), "%s", r->model);
    row->value = value;
    row->have_load = r->have_load;
    row->lines_per_s = r->lines_per_s;
    row->p50_us = r->p50_us;
    row->p99_us = r->p99_us;
    row->p999_us = r->p999_us;
    row->peak_threads = r->peak_threads;
    row->resident_kb = (double)r->peak_rss_kb;
    row->cpu_s = r->cpu_s;
    row->context_switches = (double)(r->voluntary_cs + r->involuntary_cs);
    row->errors = (double)r->errors;
    row->cpu_busy_pct = -1;
    row->reserved_kb = -1;
    snprintf(row->server, sizeof(row->server), "%s", result_server(r));
}

static void fmt_kb(char *buf, size_t len, double kb)
{
    if (kb < 0)
        snprintf(buf, len, "-");
    else if (kb >= 1024.0 * 1024)
        snprintf(buf, len, "%.1fG", kb / (1024.0 * 1024));
    else
        snprintf(buf, len, "%.1fM", kb / 1024);
}

void sweep_print_table(FILE *out, enum sweep_var v, const struct sweep_row *rows, int n)
{
    results_print_round_trip_heading(out, 35, 26);   /* over p50, p99, p99.9 */
    fprintf(out, "%-13s %9s %10s %8s %8s %8s %8s %8s %8s %9s %9s %6s %8s  %s\n", "model",
            sweep_var_name(v), "lines/s", "p50", "p99", "p99.9", "threads", "RSS",
            "CPU s", "ctx sw", "errors", "busy", "reserved", "server");
    for (int i = 0; i < n; i++) {
        const struct sweep_row *r = &rows[i];
        char value[32], lps[24], p50[16] = "-", p99[16] = "-", p999[16] = "-";
        char rss[16], busy[16], resv[16];
        sweep_value_str(v, r->value, value, sizeof(value));
        snprintf(lps, sizeof(lps), r->have_load ? "%.0f" : "-", r->lines_per_s);
        if (r->have_load) {
            fmt_us(p50, sizeof(p50), r->p50_us);
            fmt_us(p99, sizeof(p99), r->p99_us);
            fmt_us(p999, sizeof(p999), r->p999_us);
        }
        fmt_kb(rss, sizeof(rss), r->resident_kb);
        fmt_kb(resv, sizeof(resv), r->reserved_kb);
        snprintf(busy, sizeof(busy), r->cpu_busy_pct < 0 ? "-" : "%.0f%%", r->cpu_busy_pct);
        fprintf(out, "%-13s %9s %10s %8s %8s %8s %8.0f %8s %8.2f %9.0f %9.0f %6s %8s  %s\n",
                r->model, value, lps, p50, p99, p999, r->peak_threads, rss, r->cpu_s,
                r->context_switches, r->errors, busy, resv, r->server);
    }
}

/* The CSV's header: sweep_read_csv insists on exactly this line, or on
 * the one before issue 17 (the same columns, the latencies not yet named
 * round trips), so an older sweep still overlays. */
static const char csv_header[] =
    "model,var,value,source,lines_per_s,round_trip_p50_us,round_trip_p99_us,"
    "round_trip_p999_us,peak_threads,"
    "resident_kb,cpu_s,context_switches,errors,cpu_busy_pct,reserved_kb,server";
static const char csv_header_before_17[] =
    "model,var,value,source,lines_per_s,p50_us,p99_us,p999_us,peak_threads,"
    "resident_kb,cpu_s,context_switches,errors,cpu_busy_pct,reserved_kb,server";

#define CSV_FIELDS 16

void sweep_print_csv(FILE *out, enum sweep_var v, const struct sweep_row *rows, int n)
{
    fprintf(out, "%s\n", csv_header);
    for (int i = 0; i < n; i++) {
        const struct sweep_row *r = &rows[i];
        char value[32];
        sweep_value_str(v, r->value, value, sizeof(value));
        /* A row without the load's report has no lines/s or latency:
         * empty fields, read back as such. */
        if (r->have_load)
            fprintf(out, "%s,%s,%s,%s,%.1f,%.1f,%.1f,%.1f,", r->model, sweep_var_name(v),
                    value, r->simulated ? "sim" : "real", r->lines_per_s, r->p50_us,
                    r->p99_us, r->p999_us);
        else
            fprintf(out, "%s,%s,%s,%s,,,,,", r->model, sweep_var_name(v), value,
                    r->simulated ? "sim" : "real");
        /* The server's fate is free text: a comma in it would be a field. */
        char server[sizeof(r->server)];
        snprintf(server, sizeof(server), "%s", r->server);
        for (char *c = server; (c = strchr(c, ',')); )
            *c = ';';
        fprintf(out, "%.0f,%.0f,%.3f,%.0f,%.0f,%.2f,%.0f,%s\n", r->peak_threads,
                r->resident_kb, r->cpu_s, r->context_switches, r->errors,
                r->cpu_busy_pct, r->reserved_kb, server);
    }
}

void sweep_print_json(FILE *out, enum sweep_var v, const struct sweep_row *rows, int n)
{
    fprintf(out, "{\"var\":\"%s\",\"rows\":[", sweep_var_name(v));
    for (int i = 0; i < n; i++) {
        const struct sweep_row *r = &rows[i];
        fprintf(out, "%s{\"model\":\"%s\",\"value\":%g,\"source\":\"%s\",\"have_load\":%s,"
                "\"lines_per_s\":%.1f,\"round_trip_p50_us\":%.1f,\"round_trip_p99_us\":%.1f,"
                "\"round_trip_p999_us\":%.1f,"
                "\"peak_threads\":%.0f,\"resident_kb\":%.0f,\"cpu_s\":%.3f,"
                "\"context_switches\":%.0f,\"errors\":%.0f", i ? "," : "", r->model,
                r->value, r->simulated ? "sim" : "real", r->have_load ? "true" : "false",
                r->lines_per_s, r->p50_us, r->p99_us, r->p999_us, r->peak_threads,
                r->resident_kb, r->cpu_s, r->context_switches, r->errors);
        if (r->simulated)
            fprintf(out, ",\"cpu_busy_pct\":%.2f,\"reserved_kb\":%.0f", r->cpu_busy_pct,
                    r->reserved_kb);
        fprintf(out, ",\"server\":\"%s\"}", r->server);
    }
    fprintf(out, "]}\n");
}

/* ---- all of it ---------------------------------------------------------- */

/* plot's name with .csv for .png or .svg, or false when it would not fit. */
static bool csv_beside(const char *plot, char *buf, size_t len)
{
    size_t stem = strlen(plot) - strlen(strrchr(plot, '.'));
    return (size_t)snprintf(buf, len, "%.*s.csv", (int)stem, plot) < len;
}

int sweep_report(const char *cmd, enum sweep_var v, const struct sweep_row *rows, int n,
                 const struct sweep_row *overlay, int noverlay, const char *title,
                 bool json, FILE *csv_out, const char *plot)
{
    if (json) {
        sweep_print_json(stdout, v, rows, n);
    } else {
        printf("%s\n", title);
        sweep_print_table(stdout, v, rows, n);
    }
    fflush(stdout);
    if (csv_out)
        sweep_print_csv(csv_out, v, rows, n);
    if (!plot || n == 0)
        return 0;
    char err[512], csv[512];
    int rc = sweep_plot(plot, title, v, rows, n, overlay, noverlay, err, sizeof(err));
    if (rc == 0) {
        fprintf(stderr, "threadlab %s: wrote %s\n", cmd, plot);
        return 0;
    }
    fprintf(stderr, "threadlab %s: %s\n", cmd, err);
    if (rc == -ENOENT && !csv_out && csv_beside(plot, csv, sizeof(csv))) {
        FILE *fp = fopen(csv, "w");
        if (fp) {
            sweep_print_csv(fp, v, rows, n);
            if (fclose(fp) == 0) {
                fprintf(stderr, "threadlab %s: the numbers are in %s; draw them later "
                        "with gnuplot\n", cmd, csv);
                return -1;
            }
        }
        fprintf(stderr, "threadlab %s: %s: %s\n", cmd, csv, strerror(errno));
    }
    return -1;
}

/* ---- reading a CSV back -------------------------------------------------- */

/* Split line at commas into at most max fields (in place). */
static int split_fields(char *line, char **fields, int max)
{
    int n = 0;
    for (char *p = line;;) {
        if (n == max)
            return max + 1;
        fields[n++] = p;
        char *comma = strchr(p, ',');
        if (!comma)
            return n;
        *comma = '\0';
        p = comma + 1;
    }
}

static bool field_number(const char *f, double min, double *out)
{
    if (*f == '\0')
        return false;
    char *end;
    errno = 0;
    double v = strtod(f, &end);
    if (*end != '\0' || errno != 0 || !isfinite(v) || v < min)
        return false;
    *out = v;
    return true;
}

/* One data line into row; the variable must be *v (set by the first). */
static const char *parse_row(char *line, int nrow, enum sweep_var *v, struct sweep_row *row)
{
    char *f[CSV_FIELDS + 1];
    if (split_fields(line, f, CSV_FIELDS) != CSV_FIELDS)
        return "not 16 comma-separated fields";
    memset(row, 0, sizeof(*row));
    if (strlen(f[0]) == 0 || strlen(f[0]) >= sizeof(row->model))
        return "no model name, or a too long one";
    snprintf(row->model, sizeof(row->model), "%s", f[0]);
    int var = find_var(f[1], strlen(f[1]));
    if (var < 0)
        return "the var is none of conns, depth, size, cpu-us, sleep-pct";
    if (nrow > 0 && (enum sweep_var)var != *v)
        return "a second var in one sweep";
    *v = (enum sweep_var)var;
    if (strcmp(f[3], "real") != 0 && strcmp(f[3], "sim") != 0)
        return "the source is neither real nor sim";
    row->simulated = strcmp(f[3], "sim") == 0;
    if (!field_number(f[2], 0, &row->value))
        return "the value is not a number";
    /* The load's four figures are all there or all empty. */
    row->have_load = f[4][0] != '\0';
    double *load[] = { &row->lines_per_s, &row->p50_us, &row->p99_us, &row->p999_us };
    for (int i = 0; i < 4; i++)
        if (row->have_load ? !field_number(f[4 + i], 0, load[i]) : f[4 + i][0] != '\0')
            return "lines/s and latency are not all numbers (or all empty)";
    double *rest[] = { &row->peak_threads, &row->resident_kb, &row->cpu_s,
                       &row->context_switches, &row->errors };
    for (int i = 0; i < 5; i++)
        if (!field_number(f[8 + i], 0, rest[i]))
            return "threads, RSS, CPU, switches or errors is not a number";
    /* -1: a real row's "not measured". */
    if (!field_number(f[13], -1, &row->cpu_busy_pct) ||
        !field_number(f[14], -1, &row->reserved_kb))
        return "busy or reserved is not a number";
    snprintf(row->server, sizeof(row->server), "%s", f[15]);
    return NULL;
}

int sweep_read_csv(const char *path, enum sweep_var *v, struct sweep_row *rows, int max,
                   char *err, size_t err_len)
{
    FILE *fp = fopen(path, "r");
    if (!fp) {
        int e = errno;
        snprintf(err, err_len, "%s: %s", path, strerror(e));
        return -e;
    }
    char line[512];
    int n = 0, lineno = 0, rc = 0;
    const char *why = NULL;
    while (fgets(line, sizeof(line), fp)) {
        lineno++;
        size_t len = strlen(line);
        if (len > 0 && line[len - 1] != '\n' && !feof(fp)) {
            why = "longer than 511 bytes";
            break;
        }
        line[strcspn(line, "\r\n")] = '\0';
        if (lineno == 1) {
            if (strcmp(line, csv_header) != 0 && strcmp(line, csv_header_before_17) != 0)
                why = "not the header of a sweep CSV (made by compare --sweep --csv)";
        } else if (n == max) {
            why = "more rows than a sweep has";
        } else {
            why = parse_row(line, n, v, &rows[n]);
            n++;
        }
        if (why)
            break;
    }
    if (!why && lineno == 0)
        why = "empty";
    else if (!why && n == 0)
        why = "no rows";
    if (!why && ferror(fp))
        why = "could not be read";
    if (why) {
        snprintf(err, err_len, "%s: line %d: %s", path, lineno ? lineno : 1, why);
        rc = -EINVAL;
    }
    fclose(fp);
    return rc < 0 ? rc : n;
}
