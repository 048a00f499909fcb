/* sched-probe.c -- questions put to this machine's scheduler, for
 * docs/simulator.md ("Against the real thing"); `make sched-probe` builds
 * and runs them. Needs two cores. Not part of make check: it measures, it asserts
 * nothing.
 *
 *   sched-probe beside PERIOD_US [BURN_US]
 *       A thread pinned to core 1 beside a thread spinning there, woken
 *       every PERIOD_US from core 0 (a pipe), burning BURN_US after each
 *       wakeup: how long from the write until it runs (percentiles). Does
 *       a woken thread take the core from a busy one at once, or wait?
 *   sched-probe busy-core
 *       A 64-byte TCP ping-pong between threads pinned to cores 0 and 1,
 *       with core 1 idle between passes, then kept busy by a SCHED_IDLE
 *       spinner (which any woken thread preempts): the round trip, and
 *       each side's CPU per round trip. What does a wakeup onto a busy
 *       core cost?
 *   sched-probe gaps [SECONDS]
 *       A thread pinned to each core, reading the clock in a loop for
 *       SECONDS (default 3), nothing else to run: every jump of the clock
 *       between two reads is time its core did something else (an
 *       interrupt, the tick, the host running another vCPU). How often,
 *       how long, and the steal time the kernel counted meanwhile.
 *   sched-probe writes
 *       A 64-byte write on TCP loopback from core 0, timed on the
 *       writer's own CPU clock: to a peer that is awake, waking a reader
 *       blocked on the writer's core, waking one on the other, idle core.
 *       Who pays a wakeup: the waker (docs/simulator.md, "Against the real thing";
 *       calibrate's wakeup_ipi_ns).
 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { WAKES = 2000, ROUND_TRIPS = 20000, MSG = 64 };

static atomic_bool stop;

static double clock_ns(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof(set), &set);
}

static void *spin(void *idle_policy)
{
    pin(1);
    if (idle_policy) {
        struct sched_param none = { 0 };
        pthread_setschedparam(pthread_self(), SCHED_IDLE, &none);
    }
    while (!atomic_load(&stop))
        ;
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* ---- beside: a woken thread next to a spinning one ------------------------- */

struct woken {
    int fd;
    double burn_ns;
    double latency_ns[WAKES];
    int n;
};

static void *woken_main(void *arg)
{
    struct woken *w = arg;
    pin(1);
    double sent;
    while (read(w->fd, &sent, sizeof(sent)) == sizeof(sent) && sent >= 0) {
        double now = clock_ns(CLOCK_MONOTONIC);
        if (w->n < WAKES)
            w->latency_ns[w->n++] = now - sent;
        while (clock_ns(CLOCK_MONOTONIC) < now + w->burn_ns)
            ;
    }
    return NULL;
}

static int beside(double period_us, double burn_us)
{
    static struct woken w;
    int p[2];
    if (pipe(p) < 0)
        return 1;
    w.fd = p[0];
    w.burn_ns = burn_us * 1e3;
    pthread_t spinner, woken;
    pthread_create(&spinner, NULL, spin, NULL);
    pthread_create(&woken, NULL, woken_main, &w);
    pin(0);
    usleep(100000);
    for (int i = 0; i < WAKES; i++) {
        struct timespec gap = { 0, (long)(period_us * 1e3) };
        nanosleep(&gap, NULL);
        double now = clock_ns(CLOCK_MONOTONIC);
        if (write(p[1], &now, sizeof(now)) != sizeof(now))
            break;
    }
    double end = -1;
    (void)!write(p[1], &end, sizeof(end));
    pthread_join(woken, NULL);
    atomic_store(&stop, true);
    pthread_join(spinner, NULL);
    qsort(w.latency_ns, (size_t)w.n, sizeof(w.latency_ns[0]), cmp_double);
    printf("woken every %.0f us beside a spinner, burning %.0f us: from write to running "
           "p50 %.0f us, p90 %.0f, p99 %.0f, longest %.0f (%d wakeups)\n", period_us, burn_us,
           w.latency_ns[w.n / 2] / 1e3, w.latency_ns[w.n * 9 / 10] / 1e3,
           w.latency_ns[w.n * 99 / 100] / 1e3, w.latency_ns[w.n - 1] / 1e3, w.n);
    return 0;
}

/* ---- busy-core: a ping-pong whose server core is idle, then busy ------------ */

static int fds[2];
static double server_cpu_ns;

static int read_msg(int fd, char *buf)
{
    struct pollfd p = { .fd = fd, .events = POLLIN };
    if (poll(&p, 1, -1) != 1)
        return -1;
    for (int got = 0; got < MSG;) {
        ssize_t n = read(fd, buf + got, (size_t)(MSG - got));
        if (n <= 0)
            return -1;
        got += (int)n;
    }
    return 0;
}

static void *server_main(void *arg)
{
    (void)arg;
    pin(1);
    char buf[MSG];
    double cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    for (int i = 0; i < ROUND_TRIPS; i++)
        if (read_msg(fds[1], buf) < 0 || write(fds[1], buf, MSG) != MSG)
            break;
    server_cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
    return NULL;
}

/* A TCP loopback connection, both ends in fds[] (no delay on either), its
 * listener in *l. 0, or 1 when it cannot be made. */
static int tcp_pair(int *l)
{
    int one = 1;
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof(a);
    *l = socket(AF_INET, SOCK_STREAM, 0);
    if (*l < 0 || bind(*l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(*l, 1) < 0 ||
        getsockname(*l, (struct sockaddr *)&a, &len) < 0)
        return 1;
    fds[0] = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(fds[0], (struct sockaddr *)&a, sizeof(a)) < 0 ||
        (fds[1] = accept(*l, NULL, NULL)) < 0)
        return 1;
    setsockopt(fds[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    setsockopt(fds[1], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return 0;
}

static int ping_pong(bool core_busy)
{
    int l, one = 1;
    if (tcp_pair(&l))
        return 1;
    atomic_store(&stop, false);
    pthread_t spinner, server;
    if (core_busy)
        pthread_create(&spinner, NULL, spin, &one);
    pthread_create(&server, NULL, server_main, NULL);
    pin(0);
    char buf[MSG];
    memset(buf, 'x', sizeof(buf));
    double t0 = clock_ns(CLOCK_MONOTONIC), cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    for (int i = 0; i < ROUND_TRIPS; i++)
        if (write(fds[0], buf, MSG) != MSG || read_msg(fds[0], buf) < 0)
            break;
    double cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0, wall = clock_ns(CLOCK_MONOTONIC) - t0;
    pthread_join(server, NULL);
    atomic_store(&stop, true);
    if (core_busy)
        pthread_join(spinner, NULL);
    close(fds[0]);
    close(fds[1]);
    close(l);
    printf("server's core %s: round trip %.1f us; CPU a round trip: client %.1f us, "
           "server %.1f us\n", core_busy ? "busy (a SCHED_IDLE spinner)" : "idle",
           wall / ROUND_TRIPS / 1e3, cpu / ROUND_TRIPS / 1e3,
           server_cpu_ns / ROUND_TRIPS / 1e3);
    return 0;
}

/* ---- writes: what a write costs its writer when it wakes a thread ---------------- */

static atomic_int reads_done;
static int reader_cpu;

static void *blocked_reader(void *arg)
{
    (void)arg;
    pin(reader_cpu);
    char buf[MSG];
    while (read_msg(fds[1], buf) == 0)
        atomic_fetch_add(&reads_done, 1);
    return NULL;
}

/* The median CPU, on the writer's own clock, of WAKES writes of MSG bytes
 * from core 0: to_cpu < 0, to a peer that is awake (the writer reads each
 * back itself); else to a reader pinned to core to_cpu and blocked in
 * read() (200 us after its last read, so that it is asleep). */
static double write_cpu_ns(int to_cpu)
{
    static double each[WAKES];
    int l;
    if (tcp_pair(&l))
        return -1;
    pthread_t reader;
    reader_cpu = to_cpu;
    atomic_store(&reads_done, 0);
    if (to_cpu >= 0)
        pthread_create(&reader, NULL, blocked_reader, NULL);
    pin(0);
    char buf[MSG];
    memset(buf, 'x', sizeof(buf));
    int n = 0;
    for (; n < WAKES; n++) {
        if (to_cpu >= 0)
            usleep(200);
        double c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
        if (write(fds[0], buf, MSG) != MSG)
            break;
        each[n] = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
        if (to_cpu < 0 && read_msg(fds[1], buf) < 0)
            break;
        while (to_cpu >= 0 && atomic_load(&reads_done) <= n)
            usleep(10);
    }
    shutdown(fds[0], SHUT_RDWR);
    if (to_cpu >= 0)
        pthread_join(reader, NULL);
    close(fds[0]);
    close(fds[1]);
    close(l);
    qsort(each, (size_t)n, sizeof(each[0]), cmp_double);
    return n > 0 ? each[n / 2] : -1;
}

static int writes(void)
{
    printf("a 64-byte write's CPU to its writer (median of %d, its own clock):\n", WAKES);
    printf("  to a peer that is awake: %.1f us\n", write_cpu_ns(-1) / 1e3);
    printf("  waking a reader on the writer's own core: %.1f us\n", write_cpu_ns(0) / 1e3);
    printf("  waking a reader on the other, idle core: %.1f us\n", write_cpu_ns(1) / 1e3);
    return 0;
}

/* ---- gaps: what a core does besides its one thread --------------------------- */

enum { GAP_BINS = 7 };
static const double gap_upper_us[GAP_BINS] = { 20, 50, 100, 500, 1000, 4000, 1e12 };

struct gap_tally {
    int cpu;
    double seconds;
    long n[GAP_BINS];
    double lost_ns, longest_ns;
};

static void *gap_main(void *arg)
{
    struct gap_tally *g = arg;
    pin(g->cpu);
    double start = clock_ns(CLOCK_MONOTONIC), last = start, end = start + g->seconds * 1e9;
    while (last < end) {
        double now = clock_ns(CLOCK_MONOTONIC), gap = now - last;
        last = now;
        if (gap < 5e3)                   /* two clock reads, or a cache miss */
            continue;
        int b = 0;
        while (gap > gap_upper_us[b] * 1e3)
            b++;
        g->n[b]++;
        g->lost_ns += gap;
        if (gap > g->longest_ns)
            g->longest_ns = gap;
    }
    return NULL;
}

/* The machine's steal time so far, in clock ticks (/proc/stat, "cpu"). */
static long long steal_ticks(void)
{
    long long v[8] = { 0 };
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return 0;
    int got = fscanf(f, "cpu %lld %lld %lld %lld %lld %lld %lld %lld", &v[0], &v[1], &v[2],
                     &v[3], &v[4], &v[5], &v[6], &v[7]);
    fclose(f);
    return got == 8 ? v[7] : 0;
}

static int gaps(double seconds)
{
    static struct gap_tally g[2];
    pthread_t t[2];
    long long steal0 = steal_ticks();
    for (int i = 0; i < 2; i++) {
        g[i] = (struct gap_tally){ .cpu = i, .seconds = seconds };
        pthread_create(&t[i], NULL, gap_main, &g[i]);
    }
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    double steal_s = (double)(steal_ticks() - steal0) / (double)sysconf(_SC_CLK_TCK);
    for (int i = 0; i < 2; i++) {
        printf("core %d, %.0f s alone: gaps over 5 us a second:", i, seconds);
        for (int b = 0; b < GAP_BINS; b++)
            printf(" %s%.0f us %.1f", b + 1 < GAP_BINS ? "<" : ">",
                   gap_upper_us[b + 1 < GAP_BINS ? b : b - 1], (double)g[i].n[b] / seconds);
        printf("; %.2f%% of the core lost, longest %.0f us\n",
               100 * g[i].lost_ns / (seconds * 1e9), g[i].longest_ns / 1e3);
    }
    printf("steal time the kernel counted meanwhile: %.2f%% of both cores\n",
           100 * steal_s / (2 * seconds));
    return 0;
}

int main(int argc, char **argv)
{
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
        fprintf(stderr, "sched-probe: needs two cores\n");
        return 1;
    }
    if (argc >= 3 && strcmp(argv[1], "beside") == 0 && atof(argv[2]) > 0)
        return beside(atof(argv[2]), argc > 3 ? atof(argv[3]) : 0);
    if (argc == 2 && strcmp(argv[1], "busy-core") == 0)
        return ping_pong(false) || ping_pong(true);
    if (argc >= 2 && strcmp(argv[1], "gaps") == 0 && (argc == 2 || atof(argv[2]) > 0))
        return gaps(argc > 2 ? atof(argv[2]) : 3);
    if (argc == 2 && strcmp(argv[1], "writes") == 0)
        return writes();
    fprintf(stderr, "usage: sched-probe beside PERIOD_US [BURN_US] | sched-probe busy-core | "
            "sched-probe gaps [SECONDS] | sched-probe writes\n");
    return 2;
}
