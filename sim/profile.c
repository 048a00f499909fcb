/* profile.c -- costs: defaults, files. See profile.h. */
#include "profile.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The keys of a profile file, with where each lives in the struct. */
static const struct {
    const char *key;
    size_t offset;
} keys[] = {
#define KEY(name) { #name, offsetof(struct profile, name) }
    KEY(read_ns), KEY(write_ns), KEY(accept_ns), KEY(close_ns), KEY(epoll_wait_ns), KEY(poll_ns), KEY(read_empty_ns),
    KEY(eventfd_ns), KEY(wakeup_ns), KEY(wakeup_cpu_ns), KEY(wakeup_ipi_ns),
    KEY(wakeup_granularity_ns), KEY(idle_search_pct), KEY(balance_interval_ns),
    KEY(migration_cost_ns),
    KEY(context_switch_ns),
    KEY(context_switch_log2_ns), KEY(cross_core_ns), KEY(thread_create_ns), KEY(handle_ns),
    KEY(net_one_way_ns), KEY(time_slice_ns), KEY(syscall_sigma), KEY(wakeup_sigma),
    KEY(syscall_p99), KEY(syscall_p999), KEY(wakeup_p99), KEY(wakeup_p999),
    KEY(wakeup_deep_after_ns), KEY(wakeup_deep_ns), KEY(wakeup_deep_sigma),
    KEY(wakeup_deep_p99), KEY(wakeup_deep_p999),
    KEY(timer_late_ns), KEY(timer_late_sigma), KEY(timer_late_p99), KEY(timer_late_p999),
    KEY(stack_kb), KEY(stack_touched_kb),
    KEY(kernel_stack_kb), KEY(conn_kb),
    KEY(vt_switch_ns), KEY(vt_stack_map_ns), KEY(vt_stack_unmap_ns), KEY(vt_stack_touched_kb),
#undef KEY
};

void profile_default(struct profile *p)
{
    /* Measured by `threadlab calibrate` on this project's machine; the
     * same numbers as sim/profiles/default.profile. */
    *p = (struct profile){
        .measured = "2026-11-30, threadlab calibrate on vm (2 cores, "
                    "Linux 6.18.44-fc-v595)",
        .read_ns = 3349, .write_ns = 3515, .accept_ns = 2495, .close_ns = 7740,
        .epoll_wait_ns = 463, .eventfd_ns = 457,
        /* An idle core's wakeup, measured on 2026-12-01 (calibrate's
         * pass between two pinned threads): 21 948 ns of it CPU (rounds
         * within 7.6%), and what the quiet run's pass took beyond that
         * (34.2 us at 17:19 UTC), latency; of the CPU, what the waker's
         * write pays (the interrupt), the median of four calibrations on
         * 2026-12-02 (9.6-16.2 us). CFS's default granularity on 2
         * cores: 1 ms x (1 + log2 2). Linux's: SIS_UTIL's
         * imbalance_pct, the migration cost; the balancer at the tick
         * (HZ = 250 here). */
        .wakeup_ns = 7050, .wakeup_cpu_ns = 21948, .wakeup_ipi_ns = 14600,
        .wakeup_granularity_ns = 2000000, .idle_search_pct = 117,
        .balance_interval_ns = 4000000, .migration_cost_ns = 500000,
        .context_switch_ns = 2354, .context_switch_log2_ns = 150,
        .thread_create_ns = 50483, .handle_ns = 19, .net_one_way_ns = 6214,
        .time_slice_ns = 3000000, .stack_kb = 8192, .stack_touched_kb = 24,
        .kernel_stack_kb = 16, .conn_kb = 8,
        /* calibrate --only poll,vthread on 2026-12-04, the same vm: the
         * read that finds nothing (a vthread's park pays it), and the
         * virtual threads' switch (asm), stacks and pages touched. */
        .poll_ns = 299, .read_empty_ns = 169,
        .vt_switch_ns = 12, .vt_stack_map_ns = 1947, .vt_stack_unmap_ns = 3307,
        .vt_stack_touched_kb = 4,
        /* calibrate --only idle on 2026-12-07, the same vm: a timer's
         * wakeup (rounds within 18%; its tail's halves within 0.06). A
         * core's late wakeup after a long idle stays 0 here: its median
         * moved by half between calibrations minutes apart. */
        .timer_late_ns = 34483, .timer_late_sigma = 0.155, .timer_late_p99 = 5.246,
        .timer_late_p999 = 50.114,
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
    if (strstr(key, "_sigma") && value > PROFILE_SIGMA_MAX)
        return "is out of range (a log-normal shape from 0 to " PROFILE_SIGMA_MAX_TEXT ")";
    if (strstr(key, "_p99") && value != 0 && (value < 1 || value > PROFILE_TAIL_MAX))
        return "is out of range (0, or a multiple of the median from 1 to "
               PROFILE_TAIL_MAX_TEXT ")";
    if (strcmp(key, "stack_kb") == 0 && value < 4)
        return "is too small (a stack is at least 4 KiB)";
    if (strcmp(key, "time_slice_ns") == 0 && value > 0 && value < 1000)
        return "is too small (0: no preemption, else at least 1000 ns)";
    if (strcmp(key, "balance_interval_ns") == 0 && value > 0 && value < 100000)
        return "is too small (0: no balancer, else at least 100000 ns)";
    return NULL;
}

/* The file to read: a regular file, not too big. NULL with a message.
 * Opened without blocking and looked at before it is read: fopen() of a
 * FIFO would wait for a writer forever, and /dev/zero never ends. */
static FILE *open_profile(const char *path, char *err, size_t err_len)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    const char *why = NULL;
    if (fd < 0 || fstat(fd, &st) < 0)
        why = strerror(errno);
    else if (S_ISDIR(st.st_mode))
        why = strerror(EISDIR);
    else if (!S_ISREG(st.st_mode))
        why = "not a regular file";
    else if (st.st_size > PROFILE_FILE_MAX_BYTES)
        why = "too big to be a profile (over 64 KiB)";
    FILE *f = why ? NULL : fdopen(fd, "r");
    if (f)
        return f;
    snprintf(err, err_len, "%s: %s", path, why ? why : strerror(errno));
    if (fd >= 0)
        close(fd);
    return NULL;
}

/* "version = N": why N cannot be read, or NULL. */
static const char *version_refused(double v)
{
    if (v != (double)(int)v || v < 1)
        return "is not a version (1, 2, ...)";
    if (v > PROFILE_VERSION)
        return "is newer than this threadlab reads (up to " PROFILE_VERSION_TEXT ")";
    return NULL;
}

/* "# measured: ..." is the one comment read back. */
static void read_measured(struct profile *p, char *line)
{
    char *m = line + 11;
    while (*m == ' ')
        m++;
    m[strcspn(m, "\n")] = '\0';
    snprintf(p->measured, sizeof(p->measured), "%.159s", m);
}

/* One line, comment cut off: 1 if it set a key, 0 if blank, -1 with a
 * message if it is not a line of a profile. */
static int load_line(struct profile *p, char *line, int *version, char *err, size_t err_len)
{
    char key[64], extra;
    double value;
    if (sscanf(line, " %63s", key) != 1)
        return 0;                                   /* blank or comment */
    if (sscanf(line, " %63[a-z0-9_] = %lf %c", key, &value, &extra) != 2) {
        snprintf(err, err_len, "not 'key = number'");
        return -1;
    }
    if (strcmp(key, "version") == 0) {
        const char *why = isfinite(value) ? version_refused(value) : "is not a version";
        if (why)
            snprintf(err, err_len, "version = %g %s", value, why);
        else
            *version = (int)value;
        return why ? -1 : 0;
    }
    size_t i;
    for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (strcmp(keys[i].key, key) == 0)
            break;
    if (i == sizeof(keys) / sizeof(keys[0])) {
        snprintf(err, err_len, "unknown key '%s'", key);
        return -1;
    }
    const char *why = value_refused(key, value);
    if (why) {
        snprintf(err, err_len, "%s = %g %s", key, value, why);
        return -1;
    }
    *(double *)((char *)p + keys[i].offset) = value;
    return 1;
}

int profile_load(struct profile *p, const char *path, char *err, size_t err_len)
{
    FILE *f = open_profile(path, err, err_len);
    if (!f)
        return -1;
    char line[512], why[200];
    int lineno = 0, nkeys = 0, rc = 0, version = 1;
    /* Keys a file before version 3 cannot have, noted to tell "not in
     * the file" from "in it" (below). */
    double unset = -1, cpu_before = p->wakeup_cpu_ns, gran_before = p->wakeup_granularity_ns;
    p->wakeup_cpu_ns = p->wakeup_granularity_ns = unset;
    while (rc >= 0 && fgets(line, sizeof(line), f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            snprintf(why, sizeof(why), "longer than %zu characters", sizeof(line) - 2);
            rc = -1;
            break;
        }
        char *hash = strchr(line, '#');
        if (hash) {
            if (strncmp(line, "# measured:", 11) == 0)
                read_measured(p, line);
            *hash = '\0';
        }
        rc = load_line(p, line, &version, why, sizeof(why));
        nkeys += rc > 0;
    }
    /* Before version 3, wakeup_ns was an idle core's whole wakeup, as
     * latency, the switch was all its CPU, and no woken thread preempted:
     * such a file keeps that meaning. A newer file's missing keys keep
     * the values they had. */
    if (p->wakeup_cpu_ns == unset)
        p->wakeup_cpu_ns = version < 3 ? p->context_switch_ns : cpu_before;
    if (p->wakeup_granularity_ns == unset)
        p->wakeup_granularity_ns = version < 3 ? 0 : gran_before;
    /* A read error (an I/O error, a file that shrank) is said as such. */
    int read_errno = ferror(f) ? errno : 0;
    fclose(f);
    if (rc < 0)
        snprintf(err, err_len, "%s: line %d: %s", path, lineno, why);
    else if (read_errno)
        snprintf(err, err_len, "%s: %s", path, strerror(read_errno));
    else if (nkeys == 0)
        snprintf(err, err_len, "%s: no 'key = number' line: not a profile", path);
    return rc < 0 || read_errno || nkeys == 0 ? -1 : 0;
}

void profile_note_spread(struct profile *p, const char *note)
{
    size_t used = strlen(p->spreads);
    if (used < sizeof(p->spreads))
        snprintf(p->spreads + used, sizeof(p->spreads) - used, "%s\n", note);
}

int profile_save(const struct profile *p, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -errno;
    fprintf(f, "# threadlab simulator profile: nanoseconds unless the key says kb\n");
    fprintf(f, "# measured: %s\n", p->measured);
    /* Each figure's calls and rounds, as calibrate measured them. */
    for (const char *s = p->spreads; *s;) {
        size_t n = strcspn(s, "\n");
        fprintf(f, "# spread %.*s\n", (int)n, s);
        s += n + (s[n] == '\n');
    }
    fprintf(f, "version = %d\n", PROFILE_VERSION);
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        double v = *(const double *)((const char *)p + keys[i].offset);
        fprintf(f, v == (double)(long long)v ? "%s = %.0f\n" : "%s = %.3f\n",
                keys[i].key, v);  /* whole numbers as before; sigmas as 0.123 */
    }
    return fclose(f) == 0 ? 0 : -errno;
}
