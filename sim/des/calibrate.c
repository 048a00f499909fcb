/* calibrate.c -- measure the simulator's costs on this machine.
 *
 * Each cost is timed directly, many times, with the clock's own cost
 * taken off: syscalls one call at a time, wakeups and context switches by
 * two threads passing a byte through pipes (pinned to one core: every
 * pass is a context switch; on two cores: every pass is a wakeup). The
 * figures are medians of a few rounds, because a shared VM is noisy.
 */
#include "calibrate.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "echo/session.h"
#include "net/net.h"
#include "net/clock.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return v[n / 2];
}

/* The shape of a log-normal fitted to samples by their p50 and p90:
 * ln(p90 / p50) / 1.2816 (z of the 90th percentile). Sorts v. */
static double lognormal_sigma(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    double p50 = v[n / 2], p90 = v[n * 9 / 10];
    return p50 > 0 && p90 > p50 ? log(p90 / p50) / 1.2816 : 0;
}

enum { ROUNDS = 5, ATTEMPTS = 3 };

/* A figure is trusted when its rounds agree: (max - min) / median at most
 * this. On a busy machine one round in five may be off by itself: that
 * is what the median is for; a wider spread means the machine moved
 * under the measurement, and the figure is measured again, then refused. */
#define SPREAD_MAX 0.30

/* One figure measured, not yet taken: a group's figures are measured
 * together and taken together, or measured again together. */
struct pending {
    const char *key;
    double *dst;
    double median, spread;
};

struct figures {
    FILE *progress;
    struct profile *p;
    struct pending pending[4];   /* the group being measured (at most 3) */
    int npending;
    int refused;                 /* figures left at the built-in value */
};

/* Note the median and spread of a figure's rounds. False when the spread
 * is too wide to trust (the group is then measured again). */
static bool settle(struct figures *f, const char *key, double *rounds, double *dst)
{
    double mid = median(rounds, ROUNDS);
    double spread = mid > 0 ? (rounds[ROUNDS - 1] - rounds[0]) / mid : INFINITY;
    if (f->npending < 4)
        f->pending[f->npending++] = (struct pending){ key, dst, mid, spread };
    return spread <= SPREAD_MAX;
}

/* Take the group's figures: each trusted one, and (after the last
 * attempt) say which were refused and keep their built-in value. */
static void take_pending(struct figures *f)
{
    for (int i = 0; i < f->npending; i++) {
        struct pending *pd = &f->pending[i];
        profile_note_spread(f->p, pd->key, pd->spread);
        if (pd->spread <= SPREAD_MAX) {
            *pd->dst = pd->median;
            fprintf(f->progress, "  %-18s %10.*f   spread %6.1f%%\n", pd->key,
                    pd->median < 10 ? 3 : 0, pd->median, 100 * pd->spread);
        } else {
            f->refused++;
            fprintf(f->progress, "  %-18s %10.*f   spread %6.1f%%: too wide to trust, "
                    "keeping the built-in %g\n", pd->key, pd->median < 10 ? 3 : 0,
                    pd->median, 100 * pd->spread, *pd->dst);
        }
    }
    f->npending = 0;
}

/* A connected TCP pair on loopback; both ends nonblocking. */
static int tcp_pair(int fds[2], int *listener_out)
{
    int l = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof(a);
    if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 4096) < 0 ||
        getsockname(l, (struct sockaddr *)&a, &len) < 0)
        return -1;
    fds[0] = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(fds[0], (struct sockaddr *)&a, sizeof(a)) < 0)
        return -1;
    fds[1] = accept(l, NULL, NULL);
    int one = 1;
    setsockopt(fds[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    setsockopt(fds[1], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (listener_out)
        *listener_out = l;
    else
        close(l);
    return fds[1] < 0 ? -1 : 0;
}

/* read_ns and write_ns: one small message at a time, over TCP loopback. */
static bool measure_read_write(struct figures *f, double clock_ns)
{
    int fds[2];
    if (tcp_pair(fds, NULL) < 0)
        return true;                      /* nothing to measure with: keep the defaults */
    char msg[64], buf[64];
    memset(msg, 'x', sizeof(msg));
    double reads[ROUNDS], writes[ROUNDS], sigmas[ROUNDS];
    enum { N = 20000 };
    static double calls[N];               /* one round's write + read, call by call */
    for (int r = 0; r < ROUNDS; r++) {
        double w = 0, rd = 0;
        for (int i = 0; i < N; i++) {
            double t0 = now_ns();
            if (write(fds[0], msg, sizeof(msg)) != sizeof(msg))
                break;
            double t1 = now_ns();
            size_t got = 0;
            double t2 = now_ns();
            while (got < sizeof(buf)) {
                ssize_t n = read(fds[1], buf + got, sizeof(buf) - got);
                if (n <= 0)
                    break;
                got += (size_t)n;
            }
            double t3 = now_ns();
            w += t1 - t0 - clock_ns;
            rd += t3 - t2 - clock_ns;
            calls[i] = t1 - t0 + t3 - t2 - 2 * clock_ns;
        }
        writes[r] = w / N;
        reads[r] = rd / N;
        sigmas[r] = lognormal_sigma(calls, N);
    }
    close(fds[0]);
    close(fds[1]);
    bool ok = settle(f, "write_ns", writes, &f->p->write_ns);
    ok = settle(f, "syscall_sigma", sigmas, &f->p->syscall_sigma) && ok;
    return settle(f, "read_ns", reads, &f->p->read_ns) && ok;
}

/* accept_ns and close_ns: connections made ahead, then accepted and closed. */
static bool measure_accept_close(struct figures *f, double clock_ns)
{
    int fds[2], l;
    if (tcp_pair(fds, &l) < 0)
        return true;
    close(fds[0]);
    close(fds[1]);
    struct sockaddr_in a;
    socklen_t len = sizeof(a);
    getsockname(l, (struct sockaddr *)&a, &len);
    double accepts[ROUNDS], closes[ROUNDS];
    enum { N = 500 };
    int clients[N], served[N];
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < N; i++) {
            clients[i] = socket(AF_INET, SOCK_STREAM, 0);
            connect(clients[i], (struct sockaddr *)&a, sizeof(a));
        }
        double t0 = now_ns();
        for (int i = 0; i < N; i++)
            served[i] = accept(l, NULL, NULL);
        double t1 = now_ns();
        for (int i = 0; i < N; i++)
            close(served[i]);
        double t2 = now_ns();
        for (int i = 0; i < N; i++)
            close(clients[i]);
        accepts[r] = (t1 - t0) / N - clock_ns / N;
        closes[r] = (t2 - t1) / N;
    }
    close(l);
    bool ok = settle(f, "accept_ns", accepts, &f->p->accept_ns);
    return settle(f, "close_ns", closes, &f->p->close_ns) && ok;
}

/* epoll_wait that finds one ready fd, and an eventfd write. */
static bool measure_epoll_eventfd(struct figures *f)
{
    int ep = epoll_create1(0), ev = eventfd(1, EFD_NONBLOCK);
    struct epoll_event e = { .events = EPOLLIN }, out[8];
    epoll_ctl(ep, EPOLL_CTL_ADD, ev, &e);
    double waits[ROUNDS], writes[ROUNDS];
    enum { N = 50000 };
    uint64_t one = 1;
    for (int r = 0; r < ROUNDS; r++) {
        double t0 = now_ns();
        for (int i = 0; i < N; i++)
            epoll_wait(ep, out, 8, 0);
        double t1 = now_ns();
        for (int i = 0; i < N; i++)
            if (write(ev, &one, sizeof(one)) < 0)
                break;
        double t2 = now_ns();
        waits[r] = (t1 - t0) / N;
        writes[r] = (t2 - t1) / N;
    }
    close(ep);
    close(ev);
    bool ok = settle(f, "epoll_wait_ns", waits, &f->p->epoll_wait_ns);
    return settle(f, "eventfd_ns", writes, &f->p->eventfd_ns) && ok;
}

struct pingpong {
    int to_peer[2], from_peer[2];
    int cpu;                          /* -1: not pinned */
    int rounds;
};

static void pin(int cpu)
{
    if (cpu < 0)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *peer_main(void *arg)
{
    struct pingpong *pp = arg;
    pin(pp->cpu);
    char b;
    for (int i = 0; i < pp->rounds; i++) {
        if (read(pp->to_peer[0], &b, 1) != 1 || write(pp->from_peer[1], &b, 1) != 1)
            break;
    }
    return NULL;
}

/* One pass of a byte from a thread to another blocked in read(): the
 * write, the other's wakeup, its read. Both on my_cpu/peer_cpu. */
static double pass_ns(int my_cpu, int peer_cpu, double *sigma)
{
    enum { PASSES = 4000 };
    static double passes[PASSES];         /* each round trip, for the spread */
    struct pingpong pp = { .cpu = peer_cpu, .rounds = PASSES };
    if (pipe(pp.to_peer) < 0 || pipe(pp.from_peer) < 0)
        return 0;
    pthread_t t;
    pthread_create(&t, NULL, peer_main, &pp);
    cpu_set_t old;
    pthread_getaffinity_np(pthread_self(), sizeof(old), &old);
    pin(my_cpu);
    char b = 'x';
    double t0 = now_ns(), last = t0;
    int done = 0;
    for (; done < pp.rounds; done++) {
        if (write(pp.to_peer[1], &b, 1) != 1 || read(pp.from_peer[0], &b, 1) != 1)
            break;
        double t = now_ns();
        passes[done] = t - last;
        last = t;
    }
    double t1 = now_ns();
    *sigma = done > 10 ? lognormal_sigma(passes, done) : 0;
    pthread_join(t, NULL);
    pthread_setaffinity_np(pthread_self(), sizeof(old), &old);
    close(pp.to_peer[0]);
    close(pp.to_peer[1]);
    close(pp.from_peer[0]);
    close(pp.from_peer[1]);
    return (t1 - t0) / pp.rounds / 2;
}

static void *nothing(void *arg)
{
    return arg;
}

static bool measure_threads(struct figures *f)
{
    struct profile *p = f->p;
    double creates[ROUNDS];
    enum { N = 1000 };
    for (int r = 0; r < ROUNDS; r++) {
        double t0 = now_ns();
        for (int i = 0; i < N; i++) {
            pthread_t t;
            if (pthread_create(&t, NULL, nothing, NULL) == 0)
                pthread_join(t, NULL);
        }
        creates[r] = (now_ns() - t0) / N;
    }
    struct rlimit st;
    if (getrlimit(RLIMIT_STACK, &st) == 0 && st.rlim_cur != RLIM_INFINITY)
        p->stack_kb = (double)st.rlim_cur / 1024;
    return settle(f, "thread_create_ns", creates, &p->thread_create_ns);
}

/* ---- memory: what a thread and a connection hold resident ------------------- */

enum { MEM_THREADS = 200 };

struct mem_probe {
    int wake[2];                      /* the threads block reading this pipe */
    pthread_barrier_t ready;          /* all have touched their stack */
};

/* What a connection thread does before it blocks: a line through the
 * real session code, and a read buffer on its stack (the blocking models
 * read into one), then a blocking read. */
static void *mem_thread(void *arg)
{
    struct mem_probe *mp = arg;
    volatile char buf[16384];
    for (size_t i = 0; i < sizeof(buf); i += 512)
        buf[i] = 'x';
    struct echo_session s;
    struct echo_reply reply;
    if (echo_session_init(&s, "calibrate", 1, ECHO_MAX_LINE_DEFAULT) == 0) {
        size_t room;
        char *in = echo_session_space(&s, &room);
        if (in && room >= 2) {
            memcpy(in, "a\n", 2);
            echo_session_commit(&s, 2);
            while (echo_session_next(&s, "calibrate", &reply))
                ;
        }
    }
    pthread_barrier_wait(&mp->ready);
    char b;
    (void)!read(mp->wake[0], &b, 1);      /* blocked, as in read() on a socket */
    echo_session_free(&s);
    return NULL;
}

/* A field of /proc: the kB figure after `key` in /proc/meminfo, or this
 * process's resident pages in kB from /proc/self/statm. -1 if unknown. */
static double meminfo_kb(const char *key)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    double kb = -1;
    size_t n = strlen(key);
    while (f && fgets(line, sizeof(line), f))
        if (strncmp(line, key, n) == 0 && line[n] == ':')
            kb = strtod(line + n + 1, NULL);
    if (f)
        fclose(f);
    return kb;
}

static double self_rss_kb(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long size, resident;
    int got = f ? fscanf(f, "%ld %ld", &size, &resident) : 0;
    if (f)
        fclose(f);
    return got == 2 ? (double)resident * (double)sysconf(_SC_PAGESIZE) / 1024 : -1;
}

/* One round: MEM_THREADS threads that each did a line and now block.
 * Per thread: this process's RSS growth, and the system's KernelStack
 * growth (other processes move it too: the median of rounds copes). */
static int mem_round(double *user_kb, double *kernel_kb)
{
    struct mem_probe mp;
    pthread_t t[MEM_THREADS];
    int n = 0;
    if (pipe(mp.wake) < 0)
        return -1;
    pthread_barrier_init(&mp.ready, NULL, MEM_THREADS + 1);
    double rss0 = self_rss_kb(), ks0 = meminfo_kb("KernelStack");
    for (; n < MEM_THREADS; n++)
        if (pthread_create(&t[n], NULL, mem_thread, &mp) != 0)
            break;
    if (n == MEM_THREADS)
        pthread_barrier_wait(&mp.ready);
    double rss1 = self_rss_kb(), ks1 = meminfo_kb("KernelStack");
    close(mp.wake[1]);                    /* EOF: every thread returns */
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    close(mp.wake[0]);
    pthread_barrier_destroy(&mp.ready);
    if (n < MEM_THREADS || rss0 < 0 || rss1 < 0)
        return -1;
    *user_kb = (rss1 - rss0) / MEM_THREADS;
    *kernel_kb = ks0 >= 0 && ks1 >= 0 ? (ks1 - ks0) / MEM_THREADS : -1;
    return 0;
}

/* stack_touched_kb and kernel_stack_kb. A figure that cannot be had
 * (no /proc, a failed round) keeps the built-in default. */
static bool measure_memory(struct figures *f)
{
    double user[ROUNDS], kernel[ROUNDS];
    for (int r = 0; r < ROUNDS; r++)
        if (mem_round(&user[r], &kernel[r]) < 0)
            return true;
    bool ok = settle(f, "stack_touched_kb", user, &f->p->stack_touched_kb);
    return settle(f, "kernel_stack_kb", kernel, &f->p->kernel_stack_kb) && ok;
}

/* Decode a 64-byte line and make its reply: the real session code. */
static bool measure_handle(struct figures *f)
{
    struct echo_session s;
    if (echo_session_init(&s, "calibrate", 1, ECHO_MAX_LINE_DEFAULT) < 0)
        return true;
    double handles[ROUNDS];
    enum { N = 200000 };
    struct echo_reply reply;
    for (int r = 0; r < ROUNDS; r++) {
        double t0 = now_ns();
        for (int i = 0; i < N; i++) {
            size_t room;
            char *buf = echo_session_space(&s, &room);
            if (!buf || room < 64)
                break;
            memset(buf, 'a', 63);
            buf[63] = '\n';
            echo_session_commit(&s, 64);
            while (echo_session_next(&s, "calibrate", &reply))
                ;
        }
        handles[r] = (now_ns() - t0) / N;
    }
    echo_session_free(&s);
    return settle(f, "handle_ns", handles, &f->p->handle_ns);
}

/* A TCP round trip between two threads on two cores, less what the
 * simulator charges separately: what is left is the network's share. */
static double tcp_round_trip_ns(void)
{
    int fds[2];
    if (tcp_pair(fds, NULL) < 0)
        return 0;
    struct pingpong pp = { .cpu = 1, .rounds = 4000 };
    pp.to_peer[0] = fds[1];
    pp.from_peer[1] = fds[1];
    pthread_t t;
    pthread_create(&t, NULL, peer_main, &pp);
    char b = 'x';
    double t0 = now_ns();
    for (int i = 0; i < pp.rounds; i++)
        if (write(fds[0], &b, 1) != 1 || read(fds[0], &b, 1) != 1)
            break;
    double rtt = (now_ns() - t0) / pp.rounds;
    pthread_join(t, NULL);
    close(fds[0]);
    close(fds[1]);
    return rtt;
}

/* A pipe's write + read, no waiting: subtracted from the passes. */
static double pipe_rw_ns(void)
{
    int fd[2];
    if (pipe(fd) < 0)
        return 0;
    char b = 'x';
    double a = now_ns();
    for (int i = 0; i < 4000; i++)
        if (write(fd[1], &b, 1) != 1 || read(fd[0], &b, 1) != 1)
            break;
    double ns = (now_ns() - a) / 4000;
    close(fd[0]);
    close(fd[1]);
    return ns;
}

/* context_switch_ns and wakeup_ns: a pass on one core, and across two,
 * less the pipe's own cost, round by round. */
static bool measure_switches(struct figures *f, long ncpu)
{
    double same[ROUNDS], woken[ROUNDS], sigmas[ROUNDS], unused;
    for (int r = 0; r < ROUNDS; r++) {
        double pipe_rw = pipe_rw_ns();
        double one_core = pass_ns(0, 0, &unused);
        double two_cores = ncpu > 1 ? pass_ns(0, 1, &sigmas[r]) : one_core;
        same[r] = one_core - pipe_rw;
        woken[r] = two_cores - pipe_rw;
        if (ncpu < 2)
            sigmas[r] = 0;
    }
    bool ok = settle(f, "context_switch_ns", same, &f->p->context_switch_ns);
    ok = settle(f, "wakeup_sigma", sigmas, &f->p->wakeup_sigma) && ok;
    return settle(f, "wakeup_ns", woken, &f->p->wakeup_ns) && ok;
}

/* net_one_way_ns: what is left of half a TCP round trip once read, write
 * and the wakeup are taken off. A small difference of large noisy
 * figures: the one most likely to be refused on a busy machine. */
static bool measure_network(struct figures *f, long ncpu)
{
    if (ncpu < 2)
        return true;
    double one_way[ROUNDS];
    const struct profile *p = f->p;
    for (int r = 0; r < ROUNDS; r++)
        one_way[r] = tcp_round_trip_ns() / 2 - p->write_ns - p->read_ns - p->wakeup_ns;
    return settle(f, "net_one_way_ns", one_way, &f->p->net_one_way_ns);
}

/* Up to ATTEMPTS tries for a group of figures measured together, then
 * take what the last try found. */
#define MEASURE(f, call)                                                   \
    do {                                                                   \
        for (int attempt_ = 1; attempt_ <= ATTEMPTS; attempt_++) {         \
            (f)->npending = 0;                                             \
            if (call)                                                      \
                break;                                                     \
        }                                                                  \
        take_pending(f);                                                   \
    } while (0)

int calibrate_measure(struct profile *p, FILE *progress)
{
    profile_default(p);
    double t0 = now_ns();
    for (int i = 0; i < 1000; i++)
        now_ns();
    double clock_ns = (now_ns() - t0) / 1000;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    struct figures f = { .progress = progress, .p = p };

    fprintf(progress, "calibrate: each figure is the median of %d rounds; a spread "
            "(max - min) / median over %.0f%% is measured again, up to %d times, then "
            "refused\n", ROUNDS, 100 * SPREAD_MAX, ATTEMPTS);
    MEASURE(&f, measure_read_write(&f, clock_ns));
    MEASURE(&f, measure_accept_close(&f, clock_ns));
    MEASURE(&f, measure_epoll_eventfd(&f));
    MEASURE(&f, measure_threads(&f));
    MEASURE(&f, measure_memory(&f));
    MEASURE(&f, measure_switches(&f, ncpu));
    MEASURE(&f, measure_handle(&f));
    MEASURE(&f, measure_network(&f, ncpu));
    if (f.refused)
        fprintf(progress, "calibrate: %d figure(s) refused (the machine is too busy to "
                "trust them): they keep the built-in values\n", f.refused);

    time_t now = time(NULL);
    char date[32];
    strftime(date, sizeof(date), "%Y-%m-%d", gmtime(&now));
    struct utsname u;
    uname(&u);
    char host[64];
    if (gethostname(host, sizeof(host)) < 0)
        snprintf(host, sizeof(host), "?");
    snprintf(p->measured, sizeof(p->measured), "%s, threadlab calibrate on %.40s "
             "(%ld cores, %.20s %.24s)", date, host, ncpu, u.sysname, u.release);
    return f.refused;
}
