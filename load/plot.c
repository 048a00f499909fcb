/* plot.c -- a sweep drawn by gnuplot: four panels, one line per model.
 *
 * The numbers go into a data file (one block per model, gnuplot's
 * "index"), the commands into a script file, and gnuplot runs on the
 * script as a child process of its own (no shell: nothing in a path is
 * ever interpreted). Each model keeps one colour, dash and point shape in
 * every figure, so a class learns "red is bio" once; the real points of
 * an overlay are open circles of their model's colour over its line.
 */
#include "sweep.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

/* The models in their course order; the index is the gnuplot linetype. */
static const char *const model_order[] = { "bio", "pool", "reactor", "multireactor",
                                           "vthread" };
#define MODEL_ORDER 5

static int model_linetype(const char *model)
{
    for (int i = 0; i < MODEL_ORDER; i++)
        if (strcmp(model, model_order[i]) == 0)
            return i + 1;
    return MODEL_ORDER + 1;
}

bool sweep_plot_path_ok(const char *path)
{
    /* The path goes into gnuplot's script between single quotes. */
    const char *ext = strrchr(path, '.');
    return ext && (strcmp(ext, ".png") == 0 || strcmp(ext, ".svg") == 0) &&
           !strpbrk(path, "'\"\n");
}

void sweep_machine(char *buf, size_t len)
{
    struct utsname u;
    char cpu[128] = "";
    FILE *fp = fopen("/proc/cpuinfo", "r");
    if (fp) {
        char line[256];
        while (fgets(line, sizeof(line), fp))
            if (strncmp(line, "model name", 10) == 0 && strchr(line, ':')) {
                snprintf(cpu, sizeof(cpu), ", %s", strchr(line, ':') + 2);
                cpu[strcspn(cpu, "\n")] = '\0';
                break;
            }
        fclose(fp);
    }
    if (uname(&u) < 0) {
        snprintf(u.nodename, sizeof(u.nodename), "?");
        snprintf(u.release, sizeof(u.release), "?");
    }
    snprintf(buf, len, "%s: %ld cores%s, Linux %s", u.nodename,
             sysconf(_SC_NPROCESSORS_ONLN), cpu, u.release);
}

/* ---- the data file ------------------------------------------------------- */

/* The models of rows, once each, in the course's order (the keys then
 * read bio, pool, reactor, multireactor, vthread in every figure). */
static int distinct_models(const struct sweep_row *rows, int n, const char **models)
{
    int m = 0;
    for (int i = 0; i < n; i++) {
        int k = 0;
        while (k < m && strcmp(models[k], rows[i].model) != 0)
            k++;
        if (k < m || m == SWEEP_MAX_ROWS)
            continue;
        /* Insertion: shift the later models up by one. */
        int at = m++;
        while (at > 0 && model_linetype(models[at - 1]) > model_linetype(rows[i].model)) {
            models[at] = models[at - 1];
            at--;
        }
        models[at] = rows[i].model;
    }
    return m;
}

/* gnuplot skips NaN: a missing figure, or a zero on a log scale. */
static double positive_or_nan(double v)
{
    return v > 0 ? v : NAN;
}

/* One block per model of models[]: x, lines/s, p99 ms, threads, MiB.
 * Rows outside [xmin, xmax] are left out (an overlay's, past the lines). */
static void write_blocks(FILE *df, const struct sweep_row *rows, int n, const char **models,
                         int nmodels, double xmin, double xmax)
{
    for (int k = 0; k < nmodels; k++) {
        fprintf(df, "# %s\n", models[k]);
        for (int i = 0; i < n; i++) {
            const struct sweep_row *r = &rows[i];
            if (strcmp(r->model, models[k]) != 0 || r->value < xmin || r->value > xmax)
                continue;
            fprintf(df, "%g %g %g %g %g\n", r->value, r->have_load ? r->lines_per_s : NAN,
                    r->have_load ? positive_or_nan(r->p99_us / 1e3) : NAN,
                    positive_or_nan(r->peak_threads), positive_or_nan(r->resident_kb / 1024));
        }
        fprintf(df, "\n\n");           /* two blank lines end an index block */
    }
}

/* ---- the script ---------------------------------------------------------- */

static const struct panel {
    int column;
    const char *title, *ylabel;
    bool log_y;
} panels[] = {
    { 2, "throughput", "lines/s", false },
    { 3, "round trip p99", "p99 (ms, log)", true },
    { 4, "peak threads", "threads (log)", true },
    { 5, "peak resident memory", "resident (MiB, log)", true },
};

/* A title goes inside gnuplot's double quotes: a newline becomes its
 * "\n" escape, and nothing else can end the string or start an escape. */
static void print_title(FILE *gp, const char *title)
{
    fputc('"', gp);
    for (const char *c = title; *c; c++)
        if (*c == '\n')
            fputs("\\n", gp);
        else
            fputc(*c == '"' ? '\'' : *c == '\\' ? '/' : *c, gp);
    fputc('"', gp);
}

static void write_panel(FILE *gp, const struct panel *p, const char *data, const char *over,
                        const char **models, int nmodels, const char **omodels, int nover)
{
    /* Linear: 2.5M rather than 2.5e+06. */
    fprintf(gp, "set title \"%s\"\nset ylabel \"%s\"\n%s\nplot ", p->title, p->ylabel,
            p->log_y ? "set logscale y; set format y \"%g\""
                     : "unset logscale y; set yrange [0:*]; set format y \"%.1s%c\"");
    for (int k = 0; k < nmodels; k++)
        fprintf(gp, "%s'%s' index %d using 1:%d with linespoints lt %d title \"%s\"",
                k ? ", " : "", data, k, p->column, model_linetype(models[k]), models[k]);
    for (int k = 0; k < nover; k++)
        fprintf(gp, ", '%s' index %d using 1:%d with points lt %d pt 6 ps 2 lw 2 "
                "title \"%s (real)\"", over, k, p->column, model_linetype(omodels[k]),
                omodels[k]);
    fprintf(gp, "\nset yrange [*:*]\n");
}

static void write_script(FILE *gp, const char *path, const char *title, enum sweep_var v,
                         bool log_x, const char *data, const char *over, const char **models,
                         int nmodels, const char **omodels, int nover)
{
    bool png = strcmp(strrchr(path, '.'), ".png") == 0;
    static const char *const xlabels[SWEEP_VAR_COUNT] = {
        "connections", "lines in flight per connection", "bytes per line",
        "us of !cpu per line", "% of lines that !sleep 10 ms",
    };
    fprintf(gp, "set terminal %s size 1400,1000 font \"sans,11\"\nset output '%s'\n",
            png ? "pngcairo" : "svg", path);
    /* One look per model, by linetype: colour, dash, point. */
    fprintf(gp, "set linetype 1 lc rgb '#d62728' lw 2 dt 1 pt 5 ps 1.2\n"
                "set linetype 2 lc rgb '#ff7f0e' lw 2 dt 2 pt 7 ps 1.2\n"
                "set linetype 3 lc rgb '#1f77b4' lw 2 dt 4 pt 9 ps 1.4\n"
                "set linetype 4 lc rgb '#2ca02c' lw 2 dt 5 pt 11 ps 1.4\n"
                "set linetype 5 lc rgb '#9467bd' lw 2 dt 3 pt 13 ps 1.4\n"
                "set linetype 6 lc rgb '#7f7f7f' lw 2 dt 3 pt 3 ps 1.2\n");
    fprintf(gp, "set multiplot layout 2,2 title ");
    print_title(gp, title);
    fprintf(gp, " font \"sans,12\"\n");
    /* The keys go right of the panels: inside, a line would run behind them. */
    fprintf(gp, "set grid\nset key outside right top vertical font \",9\"\n"
                "set xlabel \"%s%s\"\n%s\nset format x \"%s\"\n"
                "set offsets graph 0.03, graph 0.03, 0, 0\n",
            xlabels[v], log_x ? " (log)" : "", /* Linear: no negative shares or microseconds. */
            log_x ? "set logscale x" : "unset logscale x; set xrange [0:*]",
            /* Counts read 1k, 10k, 1M; shares and microseconds as they are. */
            v == SWEEP_CONNS || v == SWEEP_DEPTH || v == SWEEP_SIZE ? "%.0s%c" : "%g");
    for (size_t i = 0; i < sizeof(panels) / sizeof(panels[0]); i++)
        write_panel(gp, &panels[i], data, over, models, nmodels, omodels, nover);
    fprintf(gp, "unset multiplot\n");
}

/* ---- running gnuplot ----------------------------------------------------- */

/* gnuplot SCRIPT, its messages into errfile. Returns 0, -ENOENT (not
 * installed) or -EIO (it failed). */
static int run_gnuplot(const char *script, const char *errfile)
{
    pid_t pid = fork();
    if (pid < 0)
        return -errno;
    if (pid == 0) {
        int fd = open(errfile, O_WRONLY | O_TRUNC);
        if (fd >= 0) {
            dup2(fd, STDOUT_FILENO);
            dup2(fd, STDERR_FILENO);
        }
        execlp("gnuplot", "gnuplot", script, (char *)NULL);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -EIO;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        return -ENOENT;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

/* The first line gnuplot complained with, for the message. */
static void first_complaint(const char *errfile, char *buf, size_t len)
{
    buf[0] = '\0';
    FILE *fp = fopen(errfile, "r");
    if (!fp)
        return;
    char line[256];
    while (fgets(line, sizeof(line), fp))
        if (strspn(line, " \t^\n") != strlen(line)) {
            line[strcspn(line, "\n")] = '\0';
            snprintf(buf, len, ": %s", line);
            break;
        }
    fclose(fp);
}

struct tmpfiles {
    char data[64], over[64], script[64], errs[64];
};

static int make_tmp(char *name, size_t len, FILE **fp)
{
    const char *dir = getenv("TMPDIR");
    snprintf(name, len, "%s/threadlab-plot-XXXXXX", dir && *dir && strlen(dir) < 40 ? dir
                                                                                   : "/tmp");
    int fd = mkstemp(name);
    if (fd < 0)
        return -errno;
    *fp = fdopen(fd, "w");
    if (!*fp) {
        close(fd);
        return -errno;
    }
    return 0;
}

static void remove_tmp(struct tmpfiles *t)
{
    char *names[] = { t->data, t->over, t->script, t->errs };
    for (int i = 0; i < 4; i++)
        if (names[i][0])
            unlink(names[i]);
}

int sweep_plot(const char *path, const char *title, enum sweep_var v,
               const struct sweep_row *rows, int n, const struct sweep_row *overlay,
               int noverlay, char *err, size_t err_len)
{
    if (!sweep_plot_path_ok(path)) {
        snprintf(err, err_len, "--plot: '%s' must end in .png or .svg, without quotes",
                 path);
        return -EINVAL;
    }
    const char *models[SWEEP_MAX_ROWS], *omodels[SWEEP_MAX_ROWS];
    int nmodels = distinct_models(rows, n, models);
    /* Only the overlay's models that have a line, in the lines' x range. */
    double xmin = INFINITY, xmax = -INFINITY;
    bool log_x = true;
    for (int i = 0; i < n; i++) {
        xmin = fmin(xmin, rows[i].value);
        xmax = fmax(xmax, rows[i].value);
        log_x = log_x && rows[i].value > 0;
    }
    int nover = 0;
    for (int k = 0, m = distinct_models(overlay, noverlay, omodels); k < m; k++)
        for (int j = 0; j < nmodels; j++)
            if (strcmp(omodels[k], models[j]) == 0)
                omodels[nover++] = omodels[k];

    struct tmpfiles t = { "", "", "", "" };
    FILE *df = NULL, *of = NULL, *gp = NULL, *ef = NULL;
    int rc = make_tmp(t.data, sizeof(t.data), &df);
    rc = rc < 0 ? rc : make_tmp(t.over, sizeof(t.over), &of);
    rc = rc < 0 ? rc : make_tmp(t.script, sizeof(t.script), &gp);
    rc = rc < 0 ? rc : make_tmp(t.errs, sizeof(t.errs), &ef);
    if (rc == 0) {
        write_blocks(df, rows, n, models, nmodels, -INFINITY, INFINITY);
        write_blocks(of, overlay, noverlay, omodels, nover, xmin, xmax);
        write_script(gp, path, title, v, log_x, t.data, t.over, models, nmodels,
                     omodels, nover);
    }
    FILE *files[] = { df, of, gp, ef };
    for (int i = 0; i < 4; i++)
        if (files[i] && fclose(files[i]) != 0 && rc == 0)
            rc = -EIO;
    if (rc < 0) {
        snprintf(err, err_len, "--plot: cannot write a temporary file: %s", strerror(-rc));
    } else if ((rc = run_gnuplot(t.script, t.errs)) == -ENOENT) {
        snprintf(err, err_len, "--plot needs gnuplot, which is not installed "
                 "(Debian/Ubuntu: apt-get install gnuplot-nox)");
    } else if (rc < 0) {
        char why[200];
        first_complaint(t.errs, why, sizeof(why));
        snprintf(err, err_len, "--plot: gnuplot could not draw %s%s", path, why);
    }
    remove_tmp(&t);
    return rc;
}
