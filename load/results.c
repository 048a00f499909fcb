/* results.c -- the comparison table. See results.h. */
#include "results.h"
#include "viz/fmt.h"
#include "viz/msg.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The number after "key": in a flat JSON text (the load's report). */
static bool json_number(const char *json, const char *key, double *out)
{
    char pattern[64];
    snprintf(pattern, sizeof(pattern), "\"%s\":", key);
    const char *p = strstr(json, pattern);
    if (!p)
        return false;
    char *end;
    double v = strtod(p + strlen(pattern), &end);
    if (end == p + strlen(pattern))
        return false;
    *out = v;
    return true;
}

/* A run with no line answered and no error: the load's own counts say
 * why (connections still opening when the time was up, lines sent but
 * not yet answered), after the server's fate. Older reports without these
 * counts get no reason. */
static void note_why_no_line(const char *json, struct result *r)
{
    double conns, opened, sent, elapsed_s;
    if (r->lines_ok > 0 || r->errors > 0 || !json_number(json, "conns", &conns) ||
        !json_number(json, "conns_opened", &opened) ||
        !json_number(json, "lines_sent", &sent) || !json_number(json, "elapsed_s", &elapsed_s))
        return;
    char in[32] = "";                /* the load's time, when it has one */
    if (elapsed_s > 0)
        snprintf(in, sizeof(in), " in %.1f s", elapsed_s);
    size_t at = strlen(r->fate);
    if (opened < conns)
        snprintf(r->fate + at, sizeof(r->fate) - at, "; no line answered: %.0f of %.0f "
                 "conns opened%s", opened, conns, in);
    else if (sent == 0)
        snprintf(r->fate + at, sizeof(r->fate) - at, "; no line sent%s", in);
    else
        snprintf(r->fate + at, sizeof(r->fate) - at, "; %.0f lines sent, none answered%s",
                 sent, in);
}

bool result_parse_load_json(const char *json, struct result *r)
{
    double lines_ok, errors, lps, mbps, p50, p99, p999;
    if (!json_number(json, "lines_ok", &lines_ok) ||
        !json_number(json, "errors_total", &errors) ||
        !json_number(json, "lines_per_s", &lps) || !json_number(json, "mb_per_s", &mbps) ||
        !json_number(json, "p50", &p50) || !json_number(json, "p99", &p99) ||
        !json_number(json, "p99.9", &p999))
        return false;
    r->lines_ok = (uint64_t)lines_ok;
    r->errors = (uint64_t)errors;
    r->lines_per_s = lps;
    r->mb_per_s = mbps;
    r->p50_us = p50;
    r->p99_us = p99;
    r->p999_us = p999;
    r->have_load = true;
    note_why_no_line(json, r);
    return true;
}

bool result_from_fleet(const struct fleet_server *s, struct result *r)
{
    memset(r, 0, sizeof(*r));
    snprintf(r->model, sizeof(r->model), "%s", s->model);
    r->peak_threads = s->usage.peak_threads;
    r->peak_rss_kb = s->usage.peak_rss_kb;
    r->cpu_s = s->usage.cpu_s;
    r->voluntary_cs = s->usage.voluntary_cs;
    r->involuntary_cs = s->usage.involuntary_cs;
    fleet_server_fate(s, r->fate, sizeof(r->fate));

    FILE *fp = s->load_out[0] ? fopen(s->load_out, "r") : NULL;
    if (!fp)
        return false;
    char json[4096];
    size_t n = fread(json, 1, sizeof(json) - 1, fp);
    fclose(fp);
    json[n] = '\0';
    return result_parse_load_json(json, r);
}

void results_print_round_trip_heading(FILE *out, int at, int width)
{
    /* Centred by display width: the Chinese label is two columns a
     * character. */
    const char *label = msg(M_T_ROUND_TRIP);
    int dashes = width - msg_width(label);
    int left = dashes > 0 ? dashes / 2 : 0;
    int right = dashes > 0 ? dashes - left : 0;
    fprintf(out, "%*s%.*s%s%.*s\n", at, "", left, "--------------------", label,
            right, "--------------------");
}

/* A table's column heading: its text (an id, or literal text for the
 * p50/p99 names, which no language changes) and the width of the rows'
 * conversion under it. */
struct heading {
    enum msg_id id;                 /* MSG_COUNT: use text */
    const char *text;
    int width;                      /* display columns; the last: 0 */
    bool left;                      /* left-aligned, like "%-12s" */
};

/* The heading row: each heading in its column by display width, one space
 * between columns (two before the last, as the rows have), so a Chinese
 * heading stands over its figures as an English one does. */
static void print_headings(FILE *out, const struct heading *h, int n)
{
    for (int i = 0; i < n; i++) {
        const char *text = h[i].id == MSG_COUNT ? h[i].text : msg(h[i].id);
        if (i > 0)
            fputs(i == n - 1 ? "  " : " ", out);
        msg_fput_col(out, text, h[i].width, !h[i].left);
    }
    fputc('\n', out);
}

#define HEADING(id, width) { id, NULL, width, false }
#define LITERAL(text, width) { MSG_COUNT, text, width, false }

/* Every column: 125 wide, for a wide terminal or a file. */
void results_print_wide_table(FILE *out, const struct result *r, int n)
{
    static const struct heading headings[] = {
        { M_T_MODEL, NULL, 13, true }, HEADING(M_T_LINES_S, 10), HEADING(M_T_MB_S, 7),
        LITERAL("p50", 8), LITERAL("p99", 8), LITERAL("p99.9", 8),
        HEADING(M_T_THREADS, 7), HEADING(M_T_RSS, 8), HEADING(M_T_CPU_S, 6),
        HEADING(M_T_VOL_CS, 9), HEADING(M_T_INVOL_CS, 9), HEADING(M_T_ERRORS, 7),
        { M_T_SERVER, NULL, 0, true },
    };
    results_print_round_trip_heading(out, 33, 26);   /* over p50, p99, p99.9 */
    print_headings(out, headings, sizeof(headings) / sizeof(headings[0]));
    for (int i = 0; i < n; i++) {
        char p50[16] = "-", p99[16] = "-", p999[16] = "-", rss[16];
        char lps[16] = "-", mbps[16] = "-", errors[16] = "";
        snprintf(rss, sizeof(rss), "%.1fM", r[i].peak_rss_kb / 1024.0);
        if (r[i].have_load) {
            fmt_us(p50, sizeof(p50), r[i].p50_us);
            fmt_us(p99, sizeof(p99), r[i].p99_us);
            fmt_us(p999, sizeof(p999), r[i].p999_us);
            snprintf(lps, sizeof(lps), "%.0f", r[i].lines_per_s);
            snprintf(mbps, sizeof(mbps), "%.2f", r[i].mb_per_s);
            snprintf(errors, sizeof(errors), "%llu", (unsigned long long)r[i].errors);
        }
        fprintf(out, "%-13s %10s %7s %8s %8s %8s %7d %8s %6.2f %9llu %9llu ",
                r[i].model, lps, mbps, p50, p99, p999, r[i].peak_threads, rss,
                r[i].cpu_s, (unsigned long long)r[i].voluntary_cs,
                (unsigned long long)r[i].involuntary_cs);
        msg_fput_col(out, r[i].have_load ? errors : msg(M_T_NO_REPORT), 7, true);
        fprintf(out, "  %s\n", r[i].fate);
    }
}

/* The columns a class reads first, in 80: throughput, the tail, what the
 * model cost in threads, memory and CPU, and whether anything failed.
 * MB/s, p99.9 and the context switches are in the wide table and the CSV. */
void results_print_table(FILE *out, const struct result *r, int n)
{
    static const struct heading headings[] = {
        { M_T_MODEL, NULL, 12, true }, HEADING(M_T_LINES_S, 8), LITERAL("p50", 8),
        LITERAL("p99", 8), HEADING(M_T_THREADS, 7), HEADING(M_T_RSS, 7),
        HEADING(M_T_CPU_S, 6), HEADING(M_T_ERRORS, 9), { M_T_SERVER, NULL, 0, true },
    };
    results_print_round_trip_heading(out, 22, 17);   /* over p50 and p99 */
    print_headings(out, headings, sizeof(headings) / sizeof(headings[0]));
    for (int i = 0; i < n; i++) {
        char p50[16] = "-", p99[16] = "-", rss[16];
        char lps[16] = "-", errors[16] = "";
        snprintf(rss, sizeof(rss), "%.1fM", r[i].peak_rss_kb / 1024.0);
        if (r[i].have_load) {
            fmt_us(p50, sizeof(p50), r[i].p50_us);
            fmt_us(p99, sizeof(p99), r[i].p99_us);
            snprintf(lps, sizeof(lps), "%.0f", r[i].lines_per_s);
            snprintf(errors, sizeof(errors), "%llu", (unsigned long long)r[i].errors);
        }
        fprintf(out, "%-12s %8s %8s %8s %7d %7s %6.2f ", r[i].model, lps, p50, p99,
                r[i].peak_threads, rss, r[i].cpu_s);
        msg_fput_col(out, r[i].have_load ? errors : msg(M_T_NO_REPORT), 9, true);
        fprintf(out, "  %s\n", r[i].fate);
    }
}

const char *result_server(const struct result *r)
{
    return r->have_load || strcmp(r->fate, "ok") != 0 ? r->fate : "no report";
}

void results_print_csv(FILE *out, const struct result *r, int n)
{
    fprintf(out, "model,lines_per_s,mb_per_s,round_trip_p50_us,round_trip_p99_us,"
                 "round_trip_p999_us,peak_threads,"
                 "peak_rss_kb,cpu_s,voluntary_cs,involuntary_cs,errors,server\n");
    for (int i = 0; i < n; i++)
        fprintf(out, "%s,%.1f,%.3f,%.1f,%.1f,%.1f,%d,%ld,%.3f,%llu,%llu,%llu,%s\n",
                r[i].model, r[i].lines_per_s, r[i].mb_per_s, r[i].p50_us, r[i].p99_us,
                r[i].p999_us, r[i].peak_threads, r[i].peak_rss_kb, r[i].cpu_s,
                (unsigned long long)r[i].voluntary_cs,
                (unsigned long long)r[i].involuntary_cs,
                (unsigned long long)r[i].errors, result_server(&r[i]));
}

void results_print_json(FILE *out, const struct result *r, int n)
{
    fprintf(out, "[");
    for (int i = 0; i < n; i++)
        fprintf(out, "%s{\"model\":\"%s\",\"have_load\":%s,\"lines_ok\":%llu,"
                "\"lines_per_s\":%.1f,\"mb_per_s\":%.3f,\"round_trip_p50_us\":%.1f,"
                "\"round_trip_p99_us\":%.1f,\"round_trip_p999_us\":%.1f,\"peak_threads\":%d,\"peak_rss_kb\":%ld,\"cpu_s\":%.3f,"
                "\"voluntary_cs\":%llu,\"involuntary_cs\":%llu,\"errors\":%llu,"
                "\"server\":\"%s\"}", i ? "," : "", r[i].model,
                r[i].have_load ? "true" : "false", (unsigned long long)r[i].lines_ok,
                r[i].lines_per_s, r[i].mb_per_s, r[i].p50_us, r[i].p99_us, r[i].p999_us,
                r[i].peak_threads, r[i].peak_rss_kb, r[i].cpu_s,
                (unsigned long long)r[i].voluntary_cs,
                (unsigned long long)r[i].involuntary_cs,
                (unsigned long long)r[i].errors, r[i].fate);
    fprintf(out, "]\n");
}

int results_plot(const char *path, const char *scenario, const struct result *r,
                 int n, char *err, size_t err_len)
{
    const char *ext = strrchr(path, '.');
    const char *term = !ext ? NULL
                     : strcmp(ext, ".png") == 0 ? "pngcairo size 1200,800"
                     : strcmp(ext, ".svg") == 0 ? "svg size 1200,800" : NULL;
    if (!term) {
        snprintf(err, err_len, "--plot: '%s' must end in .png or .svg", path);
        return -1;
    }
    if (system("command -v gnuplot >/dev/null 2>&1") != 0) {
        snprintf(err, err_len, "--plot needs gnuplot, which is not installed "
                 "(apt-get install gnuplot-nox); the table above has the numbers");
        return -1;
    }
    char data[] = "/tmp/threadlab-plot-XXXXXX";
    int fd = mkstemp(data);
    if (fd < 0) {
        snprintf(err, err_len, "--plot: cannot make a temporary file");
        return -1;
    }
    FILE *df = fdopen(fd, "w");
    for (int i = 0; i < n; i++)
        fprintf(df, "%s %.1f %.1f %d %.1f\n", r[i].model, r[i].lines_per_s,
                r[i].p99_us / 1e3, r[i].peak_threads, r[i].peak_rss_kb / 1024.0);
    fclose(df);
    FILE *gp = popen("gnuplot 2>&1", "w");
    if (!gp) {
        unlink(data);
        snprintf(err, err_len, "--plot: cannot run gnuplot");
        return -1;
    }
    /* The path goes inside single quotes: refuse one that holds a quote. */
    int rc = -1;
    if (!strchr(path, '\'') && !strchr(data, '\'') && !strchr(scenario, '\'')) {
        fprintf(gp,
                "set terminal %s\nset output '%s'\n"
                "set multiplot layout 2,2 title 'threadlab compare: %s'\n"
                "set style fill solid 0.6\nset boxwidth 0.6\nset yrange [0:*]\n"
                "unset key\nset grid ytics\n"
                "set title 'lines/s'\nplot '%s' using 0:2:xtic(1) with boxes\n"
                "set title 'p99 (ms)'\nplot '%s' using 0:3:xtic(1) with boxes\n"
                "set title 'peak threads'\nplot '%s' using 0:4:xtic(1) with boxes\n"
                "set title 'peak RSS (MiB)'\nplot '%s' using 0:5:xtic(1) with boxes\n"
                "unset multiplot\n",
                term, path, scenario, data, data, data, data);
        rc = 0;
    }
    int status = pclose(gp);
    unlink(data);
    if (rc < 0 || status != 0) {
        snprintf(err, err_len, "--plot: gnuplot could not write %s", path);
        return -1;
    }
    return 0;
}
