/* cli_sim_memory.c -- a simulation's memory against what this process may
 * take. See cli_sim_memory.h.
 *
 * Linux overcommits: malloc rarely fails, and a run past the machine's
 * memory is killed by the OOM killer with no word. So a run that cannot
 * fit is refused before it starts; one that still runs out (it grows as
 * it goes: BIO's threads, lines in flight) fails with a message
 * (sim_run returns -1), never abort().
 */
#include "cli_sim_memory.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* Field `field` (0-based) of /proc/self/statm, in bytes; 0 if unknown. */
static double statm_bytes(int field)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long v[7] = { 0 };
    if (!f)
        return 0;
    int n = fscanf(f, "%lu %lu %lu %lu %lu %lu %lu", &v[0], &v[1], &v[2], &v[3], &v[4],
                   &v[5], &v[6]);
    fclose(f);
    return n > field ? (double)v[field] * (double)sysconf(_SC_PAGESIZE) : 0;
}

/* MemAvailable, in bytes: what can be had without swapping. */
static double machine_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[128];
    unsigned long kb = 0;
    bool found = false;
    while (f && !found && fgets(line, sizeof(line), f))
        found = sscanf(line, "MemAvailable: %lu kB", &kb) == 1;
    if (f)
        fclose(f);
    if (found)
        return (double)kb * 1024;
    return (double)sysconf(_SC_AVPHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
}

/* What the limit `res` leaves over `used` bytes (a huge figure when none). */
static double limit_left(int res, double used)
{
    struct rlimit rl;
    if (getrlimit(res, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
        return 1e300;
    return (double)rl.rlim_cur > used ? (double)rl.rlim_cur - used : 0;
}

double cli_memory_left(const char **what)
{
    double left = machine_available();
    *what = "the machine's available memory";
    double as = limit_left(RLIMIT_AS, statm_bytes(0));        /* the whole address space */
    if (as < left) {
        left = as;
        *what = "ulimit -v";
    }
    double data = limit_left(RLIMIT_DATA, statm_bytes(5));    /* data and stack */
    if (data < left) {
        left = data;
        *what = "ulimit -d";
    }
    return left;
}

static void print_bytes(char *buf, size_t len, double b)
{
    if (b >= 1024.0 * 1024 * 1024)
        snprintf(buf, len, "%.1f GiB", b / (1024.0 * 1024 * 1024));
    else
        snprintf(buf, len, "%.1f MiB", b / (1024.0 * 1024));
}

bool cli_sim_fits(const struct sim_opts *o, char *err, size_t err_len)
{
    struct sim_need need;
    sim_need(o, &need);
    const char *what;
    double left = cli_memory_left(&what);
    if (need.bytes <= left)
        return true;
    char need_s[32], left_s[32];
    print_bytes(need_s, sizeof(need_s), need.bytes);
    print_bytes(left_s, sizeof(left_s), left);
    snprintf(err, err_len, "this run needs %s of memory at its start (%u connections, "
             "%llu events pending, %llu threads), more than the %s this process may "
             "still take (%s): lower --conns", need_s, o->conns,
             (unsigned long long)need.events, (unsigned long long)need.threads, left_s,
             what);
    return false;
}
