/* profile.c -- costs: defaults, files. See profile.h. */
#include "profile.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The keys of a profile file, with where each lives in the struct. */
static const struct {
    const char *key;
    size_t offset;
} keys[] = {
#define KEY(name) { #name, offsetof(struct profile, name) }
    KEY(read_ns), KEY(write_ns), KEY(accept_ns), KEY(close_ns), KEY(epoll_wait_ns),
    KEY(eventfd_ns), KEY(wakeup_ns), KEY(context_switch_ns),
    KEY(context_switch_log2_ns), KEY(thread_create_ns), KEY(handle_ns),
    KEY(net_one_way_ns), KEY(time_slice_ns), KEY(syscall_sigma), KEY(wakeup_sigma),
    KEY(stack_kb), KEY(stack_touched_kb),
    KEY(kernel_stack_kb), KEY(conn_kb),
#undef KEY
};

void profile_default(struct profile *p)
{
    /* Measured by `threadlab calibrate` on this project's machine; the
     * same numbers as sim/des/profiles/default.profile. */
    *p = (struct profile){
        .measured = "2026-11-30, threadlab calibrate on vm (2 cores, "
                    "Linux 6.18.44-fc-v595)",
        .read_ns = 3349, .write_ns = 3515, .accept_ns = 2495, .close_ns = 7740,
        .epoll_wait_ns = 463, .eventfd_ns = 457, .wakeup_ns = 25415,
        .context_switch_ns = 2354, .context_switch_log2_ns = 150,
        .thread_create_ns = 50483, .handle_ns = 19, .net_one_way_ns = 6214,
        .time_slice_ns = 3000000, .stack_kb = 8192, .stack_touched_kb = 24,
        .kernel_stack_kb = 16, .conn_kb = 8,
    };
}

void profile_zero(struct profile *p)
{
    memset(p, 0, sizeof(*p));
    snprintf(p->measured, sizeof(p->measured), "zero: no costs (queueing theory)");
}

/* Why value cannot be key's, or NULL when it can. A value the simulator
 * would turn into a run without end is refused here: NaN compares false
 * with everything (a burst of NaN ns never ends), and a time slice that
 * rounds to 0 ns preempts forever without running anything. */
static const char *value_refused(const char *key, double value)
{
    if (!isfinite(value))
        return "is not a finite number";
    if (value < 0 || value > 1e12)
        return "is out of range (0 to 1e12)";
    if (strstr(key, "_sigma") && value > 3)
        return "is out of range (a log-normal shape from 0 to 3)";
    if (strcmp(key, "stack_kb") == 0 && value < 4)
        return "is too small (a stack is at least 4 KiB)";
    if (strcmp(key, "time_slice_ns") == 0 && value > 0 && value < 1000)
        return "is too small (0: no preemption, else at least 1000 ns)";
    return NULL;
}

int profile_load(struct profile *p, const char *path, char *err, size_t err_len)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, err_len, "%s: %s", path, strerror(errno));
        return -1;
    }
    char line[512];
    int lineno = 0, nkeys = 0;
    while (fgets(line, sizeof(line), f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash) {
            if (strncmp(line, "# measured:", 11) == 0) {
                char *m = line + 11;
                while (*m == ' ')
                    m++;
                m[strcspn(m, "\n")] = '\0';
                snprintf(p->measured, sizeof(p->measured), "%.159s", m);
            }
            *hash = '\0';
        }
        char key[64], extra;
        double value;
        if (sscanf(line, " %63s", key) != 1)
            continue;                               /* blank or comment */
        if (sscanf(line, " %63[a-z0-9_] = %lf %c", key, &value, &extra) != 2) {
            snprintf(err, err_len, "%s: line %d: not 'key = number'", path, lineno);
            fclose(f);
            return -1;
        }
        size_t i;
        for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
            if (strcmp(keys[i].key, key) == 0)
                break;
        if (i == sizeof(keys) / sizeof(keys[0])) {
            snprintf(err, err_len, "%s: line %d: unknown key '%s'", path, lineno, key);
            fclose(f);
            return -1;
        }
        const char *why = value_refused(key, value);
        if (why) {
            snprintf(err, err_len, "%s: line %d: %s = %g %s", path, lineno, key, value,
                     why);
            fclose(f);
            return -1;
        }
        *(double *)((char *)p + keys[i].offset) = value;
        nkeys++;
    }
    /* A directory opens, and its first read fails (EISDIR). */
    int read_errno = ferror(f) ? errno : 0;
    fclose(f);
    if (read_errno) {
        snprintf(err, err_len, "%s: %s", path, strerror(read_errno));
        return -1;
    }
    if (nkeys == 0) {
        snprintf(err, err_len, "%s: no 'key = number' line: not a profile", path);
        return -1;
    }
    return 0;
}

void profile_note_spread(struct profile *p, const char *key, double spread)
{
    size_t used = strlen(p->spreads);
    if (used < sizeof(p->spreads))
        snprintf(p->spreads + used, sizeof(p->spreads) - used, "%s%s %.1f%%",
                 used ? ", " : "", key, 100 * spread);
}

int profile_save(const struct profile *p, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -errno;
    fprintf(f, "# threadlab simulator profile: nanoseconds unless the key says kb\n");
    fprintf(f, "# measured: %s\n", p->measured);
    if (p->spreads[0])           /* (max - min) / median of each figure's rounds */
        fprintf(f, "# spread: %s\n", p->spreads);
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        double v = *(const double *)((const char *)p + keys[i].offset);
        fprintf(f, v == (double)(long long)v ? "%s = %.0f\n" : "%s = %.3f\n",
                keys[i].key, v);  /* whole numbers as before; sigmas as 0.123 */
    }
    return fclose(f) == 0 ? 0 : -errno;
}
