/* cli_parse.c -- what every command shares to read its arguments: a usage
 * error said in one line, numbers range-checked, the --mix, --lang, --plot
 * and --size values, and whether this process may hold N connections.
 * main.c dispatches to the commands; they and cli_options.c call these.
 * See cli.h. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "cli.h"
#include "load/sweep.h"
#include "viz/msg.h"

void cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "threadlab %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n(threadlab %s --help lists the options)\n", cmd);
}

bool cli_parse_long(const char *cmd, const char *flag, const char *arg,
                    long min, long max, long *out)
{
    char *end;
    long v = strtol(arg, &end, 10);
    if (end == arg || *end != '\0') {
        cli_usage_error(cmd, "%s: '%s' is not a whole number", flag, arg);
        return false;
    }
    if (v < min || v > max) {
        cli_usage_error(cmd, "%s: %ld is out of range (%ld to %ld)", flag, v,
                        min, max);
        return false;
    }
    *out = v;
    return true;
}

bool cli_parse_double(const char *cmd, const char *flag, const char *arg,
                      double min, double max, double *out)
{
    char *end;
    double v = strtod(arg, &end);
    if (end == arg || *end != '\0' || v != v) {
        cli_usage_error(cmd, "%s: '%s' is not a number", flag, arg);
        return false;
    }
    if (v < min || v > max) {
        cli_usage_error(cmd, "%s: %g is out of range (%g to %g)", flag, v, min,
                        max);
        return false;
    }
    *out = v;
    return true;
}

/* A load, a server and a demo's own files: the fds a process needs
 * beside its connections. */
#define FD_SPARE 64

bool cli_fd_limit_fits(int conns, char *msg, size_t msg_len)
{
    struct rlimit lim;
    if (getrlimit(RLIMIT_NOFILE, &lim) < 0)
        return true;               /* nothing known, nothing to say */
    if (lim.rlim_cur < lim.rlim_max) {
        lim.rlim_cur = lim.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &lim);
        (void)getrlimit(RLIMIT_NOFILE, &lim);
    }
    rlim_t need = (rlim_t)conns + FD_SPARE;
    if (lim.rlim_cur == RLIM_INFINITY || lim.rlim_cur >= need)
        return true;
    snprintf(msg, msg_len,
             "%d connections need about %lu open files, but this process may "
             "hold only %lu (its hard limit): run `ulimit -n %lu` as root, or "
             "raise nofile in /etc/security/limits.conf, or use fewer --conns",
             conns, (unsigned long)need, (unsigned long)lim.rlim_cur,
             (unsigned long)need);
    return false;
}

bool cli_parse_mix(const char *cmd, const char *spec, double *cpu_pct, uint32_t *cpu_us,
                   double *sleep_pct, uint32_t *sleep_ms, double *task_pct,
                   uint32_t *task_us)
{
    char *copy = strdup(spec), *save = NULL;
    bool ok = copy != NULL;
    for (char *part = strtok_r(copy, ",", &save); ok && part;
         part = strtok_r(NULL, ",", &save)) {
        unsigned amount;
        double pct;
        char kind[8], tail;
        if (sscanf(part, "%7[a-z]=%u:%lf%c", kind, &amount, &pct, &tail) != 3 ||
            !(pct >= 0 && pct <= 100)) {            /* written so that NaN fails */
            ok = false;
        } else if (!strcmp(kind, "cpu") && amount <= 10000000) {
            *cpu_us = amount;
            *cpu_pct = pct;
        } else if (!strcmp(kind, "sleep") && amount <= 60000) {
            *sleep_ms = amount;
            *sleep_pct = pct;
        } else if (!strcmp(kind, "task") && task_pct && amount <= 10000000) {
            *task_us = amount;
            *task_pct = pct;
        } else {
            ok = false;
        }
    }
    free(copy);
    if (!ok)
        cli_usage_error(cmd, "--mix: '%s' is not like cpu=US:PCT,sleep=MS:PCT%s "
                        "(cpu%s up to 10000000 us, sleep up to 60000 ms)", spec,
                        task_pct ? ",task=US:PCT" : "", task_pct ? " and task" : "");
    return ok;
}

bool cli_parse_lang(const char *cmd, const char *arg, void *given)
{
    if (msg_set_lang(arg) < 0) {
        cli_usage_error(cmd, "--lang: '%s' is not en or zh", arg);
        return false;
    }
    if (given)
        *(bool *)given = true;
    return true;
}

bool cli_parse_plot_path(const char *cmd, const char *arg, void *path)
{
    if (!sweep_plot_path_ok(arg)) {
        cli_usage_error(cmd, "--plot: '%s' must end in .png or .svg, without quotes", arg);
        return false;
    }
    *(const char **)path = arg;
    return true;
}

bool cli_parse_size(const char *cmd, const char *arg, void *size)
{
    struct cli_size *s = size;
    int w, h;
    char extra;
    if (sscanf(arg, "%dx%d%c", &w, &h, &extra) != 2 || w < s->min_w || h < s->min_h ||
        w > 1000 || h > 1000) {
        cli_usage_error(cmd, "--size: '%s' is not WxH from %dx%d to 1000x1000", arg,
                        s->min_w, s->min_h);
        return false;
    }
    *s->width = w;
    *s->height = h;
    return true;
}
