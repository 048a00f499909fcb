/* calibrate_linux.c -- the figures of Linux's scheduler that the linux
 * scheduler of the simulator (sched_linux.c) reads: not measured but read
 * where the kernel shows them, else Linux's defaults. The simple
 * scheduler (sched_simple.c) uses neither. See calibrate.h.
 */
#include "calibrate.h"

#include <math.h>
#include <stdio.h>

/* The first of the kernel's files `where` (n of them) that holds a number
 * from lo to hi, in *ns: its path, or NULL when none does (missing,
 * unreadable, not a number, out of range). */
static const char *read_kernel_ns(const char *const *where, size_t n, double lo, double hi,
                                  double *ns)
{
    for (size_t i = 0; i < n; i++) {
        FILE *f = fopen(where[i], "r");
        int got = f ? fscanf(f, "%lf", ns) : 0;
        if (f)
            fclose(f);
        if (got == 1 && isfinite(*ns) && *ns >= lo && *ns <= hi)
            return where[i];
    }
    return NULL;
}

/* A figure calibrate read rather than measured: in the profile's
 * comments and on the progress stream. */
static void note_read_figure(struct profile *p, FILE *progress, const char *note)
{
    profile_note_spread(p, note);
    fprintf(progress, "  %s\n", note);
}

/* wakeup_granularity_ns is Linux's, not measured: the scheduler's own
 * figure where the kernel shows it (debugfs: EEVDF's base_slice_ns, or
 * CFS's wakeup_granularity_ns; /proc/sys on older kernels), else CFS's
 * default, 1 ms x (1 + log2 of the cores, at most 8). */
static void read_wakeup_granularity(struct profile *p, long ncpu, FILE *progress)
{
    static const char *const where[] = {
        "/sys/kernel/debug/sched/base_slice_ns",
        "/sys/kernel/debug/sched/wakeup_granularity_ns",
        "/proc/sys/kernel/sched_wakeup_granularity_ns",
    };
    char note[200];
    double ns;
    const char *from = read_kernel_ns(where, sizeof(where) / sizeof(where[0]), 1000, 1e9, &ns);
    if (from) {
        p->wakeup_granularity_ns = ns;
        snprintf(note, sizeof(note), "wakeup_granularity_ns %.0f: read from %s", ns, from);
    } else {
        int factor = 1;
        for (long n = ncpu < 8 ? ncpu : 8; n > 1; n /= 2)
            factor++;                               /* 1 + ilog2(min(cores, 8)) */
        p->wakeup_granularity_ns = 1e6 * factor;
        snprintf(note, sizeof(note), "wakeup_granularity_ns %.0f: not shown by this kernel; "
                 "CFS's default, 1 ms x (1 + log2 %ld cores)", p->wakeup_granularity_ns,
                 ncpu < 8 ? ncpu : 8);
    }
    note_read_figure(p, progress, note);
}

/* migration_cost_ns is Linux's, not measured: the kernel's own figure
 * where it shows one, else Linux's default, 0.5 ms. */
static void read_migration_cost(struct profile *p, FILE *progress)
{
    static const char *const where[] = {
        "/sys/kernel/debug/sched/migration_cost_ns",
        "/proc/sys/kernel/sched_migration_cost_ns",
    };
    char note[200];
    double ns;
    const char *from = read_kernel_ns(where, sizeof(where) / sizeof(where[0]), 0, 1e9, &ns);
    p->migration_cost_ns = from ? ns : 500000;
    if (from)
        snprintf(note, sizeof(note), "migration_cost_ns %.0f: read from %s", ns, from);
    else
        snprintf(note, sizeof(note), "migration_cost_ns 500000: not shown by this kernel; "
                 "Linux's default");
    note_read_figure(p, progress, note);
}

void calibrate_read_linux_sched(struct profile *p, long ncpu, FILE *progress)
{
    read_wakeup_granularity(p, ncpu, progress);
    read_migration_cost(p, progress);
}
