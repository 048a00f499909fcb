/* calibrate.c -- measure the simulator's costs on this machine.
 *
 * Each cost is timed call by call, with the clock's own cost taken off,
 * in rounds: syscalls one call at a time, as the servers make them;
 * switches and wakeups by two threads passing a message back and forth
 * over TCP loopback (pinned to one core, every pass is a switch; to two,
 * a wakeup from another core; left to the scheduler, as a server's
 * threads are, whatever Linux makes of it). A round is summed up by its calls' p10, p50
 * and p90, not by their mean: on a shared machine a few calls are
 * stretched by other processes taking the core (a preempted read() looks
 * milliseconds long), and one of them moves a mean more than all the
 * others. A log-normal fitted to the p50 and p90 is the shape the
 * simulator draws each cost from (profile.h); the figure written is that
 * log-normal's mean, the median of the rounds' figures.
 */
#include "calibrate.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "sim/rng.h"
#include "echo/session.h"
#include "net/net.h"
#include "net/clock.h"
#include "vthread/stack.h"
#include "vthread/switch.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* ---- a round's calls, and the log-normal fitted to them ------------------------ */

#define Z90 RNG_Z90
#define Z99 RNG_Z99
#define Z999 RNG_Z999

/* What one round's calls cost: three of their percentiles (a tail is
 * judged on all rounds' calls pooled: struct tail_pool). */
struct dist {
    double p10, p50, p90;
};

/* The percentiles of n calls (n > 0). Sorts v. */
static struct dist dist_of(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return (struct dist){ v[n / 10], v[n / 2], v[n * 9 / 10] };
}

/* A figure measured in one go (a batch, a difference): no spread. */
static struct dist dist_const(double v)
{
    return (struct dist){ v, v, v };
}

/* Each call less a fixed part (what another figure already charges). */
static struct dist dist_less(struct dist d, double ns)
{
    return (struct dist){ d.p10 - ns, d.p50 - ns, d.p90 - ns };
}

/* The shape of the log-normal through p50 and p90: ln(p90 / p50) / z90. */
static double dist_sigma(struct dist d)
{
    return d.p50 > 0 && d.p90 > d.p50 ? log(d.p90 / d.p50) / Z90 : 0;
}

/* That log-normal's mean, p50 exp(sigma^2 / 2): the figure the simulator
 * charges (its draws have mean 1). A p50 at or below 0 stays as it is. */
static double dist_mean(struct dist d)
{
    double s = dist_sigma(d);
    return d.p50 * exp(s * s / 2);
}

/* ---- trusting a figure --------------------------------------------------------- */

enum { ROUNDS = CALIBRATE_ROUNDS, ATTEMPTS = 3, GROUP_MAX = 8 };

#define SPREAD_MAX CALIBRATE_SPREAD_MAX
#define SHAPE_SPREAD_MAX CALIBRATE_SHAPE_SPREAD_MAX

/* One figure measured, not yet taken: a group's figures are measured
 * together and taken together, or measured again together. */
struct pending {
    const char *key;
    double *dst;
    struct calibrate_verdict v;  /* the figure, its spread, trusted or not */
    struct dist calls;           /* the median of the rounds' percentiles */
    bool shape;                  /* a sigma: spread is absolute */
    bool part;                   /* a part of a whole: may be 0 */
    double tail_z;               /* a tail knot (settle_tail): the figure is
                                    exp(value x tail_z), 0 when no tail */
};

struct figures {
    FILE *progress;
    struct profile *p;
    struct pending pending[GROUP_MAX];   /* the group being measured */
    int npending;
    int refused;                 /* figures left at the built-in value */
};

static double median_of(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return v[n / 2];
}

/* ---- the rule (calibrate.h): pure, tested in check_des ------------------------- */

double calibrate_round_figure(double *calls, int n)
{
    return n > 0 ? dist_mean(dist_of(calls, n)) : 0;
}

/* Two kinds of call pooled, each relative to its own kind's median: the
 * percentiles of a call of median 1. Sorts both arrays. */
static struct dist scaled_of_two(double *a, int na, double *b, int nb)
{
    double *scaled = na > 0 && nb > 0 ? malloc((size_t)(na + nb) * sizeof(*scaled)) : NULL;
    if (!scaled)
        return dist_const(1);
    double mid_a = dist_of(a, na).p50, mid_b = dist_of(b, nb).p50;
    for (int i = 0; i < na; i++)
        scaled[i] = mid_a > 0 ? a[i] / mid_a : 0;
    for (int i = 0; i < nb; i++)
        scaled[na + i] = mid_b > 0 ? b[i] / mid_b : 0;
    struct dist d = dist_of(scaled, na + nb);
    free(scaled);
    return d;
}

double calibrate_shape_of_two(double *a, int na, double *b, int nb)
{
    return na < 1 || nb < 1 ? 0 : dist_sigma(scaled_of_two(a, na, b, nb));
}

struct calibrate_verdict calibrate_judge(const double *rounds, int n, bool shape)
{
    double v[CALIBRATE_ROUNDS_MAX];
    if (n < 1 || n > CALIBRATE_ROUNDS_MAX)
        return (struct calibrate_verdict){ .spread = INFINITY };
    memcpy(v, rounds, (size_t)n * sizeof(*v));
    double mid = median_of(v, n), range = v[n - 1] - v[0];
    struct calibrate_verdict out = { .value = mid };
    if (shape) {
        out.spread = range;
        out.beyond_shape_max = mid > PROFILE_SIGMA_MAX;
        out.trusted = range <= SHAPE_SPREAD_MAX && !out.beyond_shape_max;
    } else {
        out.spread = mid > 0 ? range / mid : INFINITY;
        out.trusted = mid > 0 && out.spread <= SPREAD_MAX;
    }
    return out;
}

/* ln(q-quantile) / z of n sorted calls of median 1 (0: no tail). */
static double tail_knot(const double *sorted, int n, int q)
{
    double z = q == 99 ? Z99 : Z999;
    double at = sorted[(long)n * q / (q == 99 ? 100 : 1000)];
    return at > 1 ? log(at) / z : 0;
}

struct calibrate_verdict calibrate_judge_tail(double *even, int ne, double *odd, int no,
                                              int q)
{
    double *all = ne > 0 && no > 0 ? malloc((size_t)(ne + no) * sizeof(*all)) : NULL;
    if (!all)
        return (struct calibrate_verdict){ .spread = INFINITY };
    memcpy(all, even, (size_t)ne * sizeof(*all));
    memcpy(all + ne, odd, (size_t)no * sizeof(*all));
    qsort(all, (size_t)(ne + no), sizeof(*all), cmp_double);
    qsort(even, (size_t)ne, sizeof(*even), cmp_double);
    qsort(odd, (size_t)no, sizeof(*odd), cmp_double);
    struct calibrate_verdict out = {
        .value = tail_knot(all, ne + no, q),
        .spread = fabs(tail_knot(even, ne, q) - tail_knot(odd, no, q)),
    };
    out.beyond_tail_max = exp(out.value * (q == 99 ? Z99 : Z999)) > PROFILE_TAIL_MAX;
    out.trusted = out.spread <= SHAPE_SPREAD_MAX && !out.beyond_tail_max;
    free(all);
    return out;
}

struct calibrate_verdict calibrate_judge_part(const double *parts, const double *wholes,
                                              int n)
{
    double v[CALIBRATE_ROUNDS_MAX], w[CALIBRATE_ROUNDS_MAX];
    if (n < 1 || n > CALIBRATE_ROUNDS_MAX)
        return (struct calibrate_verdict){ .spread = INFINITY };
    memcpy(v, parts, (size_t)n * sizeof(*v));
    memcpy(w, wholes, (size_t)n * sizeof(*w));
    double mid = median_of(v, n), whole = median_of(w, n);
    struct calibrate_verdict out = {
        .value = mid > 0 ? mid : 0,
        .spread = whole > 0 ? (v[n - 1] - v[0]) / whole : INFINITY,
        .below_zero = !(mid >= -SPREAD_MAX * whole),   /* NaN is below too */
    };
    out.trusted = !out.below_zero && out.spread <= SPREAD_MAX;
    return out;
}

/* ---- noting what was measured ------------------------------------------------- */

static void add_pending(struct figures *f, const struct pending *pd)
{
    if (f->npending < GROUP_MAX)
        f->pending[f->npending++] = *pd;
}

/* Note a figure from its rounds: the figure each round gives (the fitted
 * mean, or for a shape the fitted sigma), their median and spread. False
 * when the figure cannot be trusted (the group is then measured again). */
static bool settle_as(struct figures *f, const char *key, const struct dist *rounds,
                      double *dst, bool shape)
{
    double v[ROUNDS], p10[ROUNDS], p50[ROUNDS], p90[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        v[r] = shape ? dist_sigma(rounds[r]) : dist_mean(rounds[r]);
        p10[r] = rounds[r].p10;
        p50[r] = rounds[r].p50;
        p90[r] = rounds[r].p90;
    }
    struct pending pd = {
        .key = key, .dst = dst, .shape = shape, .v = calibrate_judge(v, ROUNDS, shape),
        .calls = { median_of(p10, ROUNDS), median_of(p50, ROUNDS), median_of(p90, ROUNDS) },
    };
    add_pending(f, &pd);
    return pd.v.trusted;
}

/* A part of a measured whole (a wakeup: a pass less the switch): each
 * round's part, and the whole it came from (calibrate_judge_part). */
static bool settle_part(struct figures *f, const char *key, const double *parts,
                        const double *wholes, double *dst)
{
    struct pending pd = { .key = key, .dst = dst, .part = true,
                          .v = calibrate_judge_part(parts, wholes, ROUNDS) };
    pd.calls = dist_const(pd.v.value);
    add_pending(f, &pd);
    return pd.v.trusted;
}

static bool settle(struct figures *f, const char *key, const struct dist *rounds,
                   double *dst)
{
    return settle_as(f, key, rounds, dst, false);
}

static bool settle_shape(struct figures *f, const char *key, const struct dist *rounds,
                         double *dst)
{
    return settle_as(f, key, rounds, dst, true);
}

/* The calls of a figure's rounds for its tail knots, each over its own
 * round's median, the even rounds' apart from the odd ones': what
 * calibrate_judge_tail judges. */
struct tail_pool {
    double *half[2];
    int n[2], cap;                    /* calls in each half, room in each */
};

static void tail_pool_free(struct tail_pool *tp)
{
    free(tp->half[0]);
    free(tp->half[1]);
    tp->half[0] = tp->half[1] = NULL;
}

/* Room for ROUNDS rounds of calls_a_round calls; false (and nothing
 * held) when out of memory. */
static bool tail_pool_init(struct tail_pool *tp, int calls_a_round)
{
    tp->cap = calls_a_round * ((ROUNDS + 1) / 2);
    tp->n[0] = tp->n[1] = 0;
    tp->half[0] = malloc((size_t)tp->cap * sizeof(double));
    tp->half[1] = malloc((size_t)tp->cap * sizeof(double));
    if (tp->half[0] && tp->half[1])
        return true;
    tail_pool_free(tp);
    return false;
}

/* Round r's n calls, each less `less` (what another figure charges) and
 * over `median` (the round's median of what is left). */
static void tail_pool_add(struct tail_pool *tp, int r, const double *calls, int n,
                          double less, double median)
{
    int h = r % 2;
    for (int i = 0; i < n && tp->n[h] < tp->cap && median > 0; i++)
        tp->half[h][tp->n[h]++] = (calls[i] - less) / median;
}

/* A tail knot (rng.h, struct cost_shape) of a cost: its calls' p99 (q 99)
 * or p99.9 (q 999) as a multiple of their median, judged in two halves
 * (calibrate_judge_tail), so that a tail that moves (a few calls in a
 * thousand) is refused like any figure. */
static bool settle_tail(struct figures *f, const char *key, struct tail_pool *tp, int q,
                        double *dst)
{
    struct pending pd = { .key = key, .dst = dst, .shape = true,
                          .tail_z = q == 99 ? Z99 : Z999,
                          .v = calibrate_judge_tail(tp->half[0], tp->n[0], tp->half[1],
                                                    tp->n[1], q) };
    pd.calls = dist_const(0);
    add_pending(f, &pd);
    return pd.v.trusted;
}

/* "read_ns 3100: calls p10 2900 p50 3050 p90 3600; rounds within 4.1%" */
static void describe(const struct pending *pd, char *out, size_t len)
{
    if (pd->tail_z > 0) {              /* "syscall_p999 8.41 x the median: halves within 0.052" */
        snprintf(out, len, "%s %.2f x the median: halves within %.3f", pd->key,
                 exp(pd->v.value * pd->tail_z), pd->v.spread);
        return;
    }
    int digits = pd->shape || fabs(pd->v.value) < 10 ? 3 : 0;
    int n = snprintf(out, len, "%s %.*f: ", pd->key, digits, pd->v.value);
    if (n < 0 || (size_t)n >= len)
        return;
    if (!pd->shape && pd->calls.p90 > pd->calls.p10)
        n += snprintf(out + n, len - (size_t)n, "calls p10 %.0f p50 %.0f p90 %.0f; ",
                      pd->calls.p10, pd->calls.p50, pd->calls.p90);
    if (n >= 0 && (size_t)n < len)
        snprintf(out + n, len - (size_t)n, pd->shape ? "rounds within %.3f"
                                                     : "rounds within %.1f%%",
                 pd->shape ? pd->v.spread : 100 * pd->v.spread);
}

/* Take the group's figures: each trusted one, and (after the last
 * attempt) say which were refused and keep their built-in value. */
static void take_pending(struct figures *f)
{
    for (int i = 0; i < f->npending; i++) {
        struct pending *pd = &f->pending[i];
        char note[160];
        describe(pd, note, sizeof(note));
        profile_note_spread(f->p, note);
        if (pd->v.trusted) {
            *pd->dst = pd->tail_z > 0 ? (pd->v.value > 0 ? exp(pd->v.value * pd->tail_z) : 0)
                                      : pd->v.value;
            fprintf(f->progress, "  %s\n", note);
            continue;
        }
        f->refused++;
        fprintf(f->progress, "  %s: %s, keeping the value it had, %g\n", note,
                pd->v.below_zero ? "its parts do not add up (it came out below 0)"
                : pd->v.beyond_tail_max ? "past the " PROFILE_TAIL_MAX_TEXT
                                          " x the median a profile takes"
                : pd->v.beyond_shape_max ? "past the shape of " PROFILE_SIGMA_MAX_TEXT
                                           " a profile takes"
                : !pd->shape && !pd->part && pd->v.value <= 0 ? "not above 0"
                : "too wide to trust", *pd->dst);
    }
    f->npending = 0;
}

/* ---- syscalls --------------------------------------------------------------------- */

/* A connected TCP pair on loopback (blocking, TCP_NODELAY both ways). */
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

/* Read everything that was sent: a 64-byte message may come in parts. */
static bool read_all(int fd, char *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = read(fd, buf + got, len - got);
        if (n <= 0)
            return false;
        got += (size_t)n;
    }
    return true;
}

/* Pin the calling thread to cpu (-1: leave it to the scheduler). */
static void pin(int cpu)
{
    if (cpu < 0)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* read_ns and write_ns (and syscall_sigma, the shape of their calls), as
 * a server and its clients pay them under load: 64-byte messages echoed
 * over XCHG_CONNS TCP loopback connections between two threads pinned to
 * two cores (one core: both on it), each reading what the other wrote on
 * its core. Neither blocks: a read that finds nothing is not timed (it
 * is read_empty_ns), and a thread that found nothing on any connection
 * yields. Timing the calls of one thread that wrote and read both ends
 * gave figures 15% below these (read 0.78 against 0.93 us, write 3.72
 * against 4.2 on this VM): the other core's caches hold what a reader
 * needs, and the loop models at 16 connections came out 1.4 times as
 * fast simulated as real. Each reply carries the ACK of its message, as
 * an echo's does. */
enum { XCHG_CONNS = 16, XCHG_CALLS = 5000 };

struct exchange_side {
    int fd[XCHG_CONNS];
    int cpu;
    bool client;                      /* sends first, and says when it is done */
    atomic_bool *done;
    double clock_ns;
    int n;                            /* messages read and answered */
    double rd[XCHG_CALLS], wr[XCHG_CALLS];
};

static void *exchange_side(void *arg)
{
    struct exchange_side *sd = arg;
    pin(sd->cpu);
    char buf[64];
    memset(buf, 'x', sizeof(buf));
    if (sd->client)
        for (int i = 0; i < XCHG_CONNS; i++)
            if (write(sd->fd[i], buf, sizeof(buf)) != sizeof(buf))
                goto out;
    while (sd->n < XCHG_CALLS && !atomic_load(sd->done)) {
        bool found = false;
        for (int i = 0; i < XCHG_CONNS && sd->n < XCHG_CALLS; i++) {
            double t0 = now_ns();
            ssize_t got = read(sd->fd[i], buf, sizeof(buf));
            double t1 = now_ns();
            if (got <= 0)
                continue;
            while (got < (ssize_t)sizeof(buf)) {        /* the rest of a split one */
                ssize_t more = read(sd->fd[i], buf + got, sizeof(buf) - (size_t)got);
                if (more == 0 || (more < 0 && errno != EAGAIN))
                    goto out;
                got += more > 0 ? more : 0;
            }
            double t2 = now_ns();
            if (write(sd->fd[i], buf, sizeof(buf)) != sizeof(buf))
                goto out;
            sd->rd[sd->n] = t1 - t0 - sd->clock_ns;
            sd->wr[sd->n++] = now_ns() - t2 - sd->clock_ns;
            found = true;
        }
        if (!found)
            sched_yield();
    }
out:
    if (sd->client)
        atomic_store(sd->done, true);
    return NULL;
}

static bool measure_read_write(struct figures *f, double clock_ns, long ncpu)
{
    static struct exchange_side sides[2];
    int listener = -1, made = 0;
    for (; made < XCHG_CONNS; made++) {
        int fds[2];
        if (tcp_pair(fds, made == 0 ? &listener : NULL) < 0)
            break;
        sides[0].fd[made] = fds[0];
        sides[1].fd[made] = fds[1];
        fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
        fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK);
    }
    if (listener >= 0)
        close(listener);
    struct dist reads[ROUNDS], writes[ROUNDS], calls[ROUNDS];
    static double rd[2 * XCHG_CALLS], wr[2 * XCHG_CALLS];
    struct tail_pool tails = { { NULL, NULL }, { 0, 0 }, 0 };
    bool failed = made < XCHG_CONNS || !tail_pool_init(&tails, 4 * XCHG_CALLS);
    for (int r = 0; r < ROUNDS && !failed; r++) {
        atomic_bool done = false;
        pthread_t t[2];
        int started = 0;
        for (int i = 0; i < 2; i++) {
            sides[i].cpu = ncpu >= 2 ? i : 0;
            sides[i].client = i == 0;
            sides[i].done = &done;
            sides[i].clock_ns = clock_ns;
            sides[i].n = 0;
            if (pthread_create(&t[i], NULL, exchange_side, &sides[i]) == 0)
                started++;
        }
        for (int i = 0; i < started; i++)
            pthread_join(t[i], NULL);
        int n = 0;
        for (int i = 0; i < 2; i++) {
            memcpy(rd + n, sides[i].rd, (size_t)sides[i].n * sizeof(*rd));
            memcpy(wr + n, sides[i].wr, (size_t)sides[i].n * sizeof(*wr));
            n += sides[i].n;
        }
        failed = started < 2 || n == 0;
        if (failed)
            break;
        /* Drain what is still in flight, so that the next round starts
         * with every connection empty. */
        for (int i = 0; i < made; i++) {
            char buf[64 * 4];
            while (read(sides[0].fd[i], buf, sizeof(buf)) > 0 ||
                   read(sides[1].fd[i], buf, sizeof(buf)) > 0)
                ;
        }
        writes[r] = dist_of(wr, n);
        reads[r] = dist_of(rd, n);
        tail_pool_add(&tails, r, wr, n, 0, writes[r].p50);
        tail_pool_add(&tails, r, rd, n, 0, reads[r].p50);
        /* The shape of both kinds, each call against its own kind's
         * median (a read is a fifth of a write: pooled as they are, the
         * two sizes hid the spread), as the percentiles of a call of
         * median 1. */
        calls[r] = scaled_of_two(wr, n, rd, n);
    }
    for (int i = 0; i < made; i++) {
        close(sides[0].fd[i]);
        close(sides[1].fd[i]);
    }
    bool ok = true;
    if (!failed) {                        /* else nothing to measure with: keep the defaults */
        ok = settle(f, "write_ns", writes, &f->p->write_ns);
        ok = settle(f, "read_ns", reads, &f->p->read_ns) && ok;
        ok = settle_tail(f, "syscall_p99", &tails, 99, &f->p->syscall_p99) && ok;
        ok = settle_tail(f, "syscall_p999", &tails, 999, &f->p->syscall_p999) && ok;
        ok = settle_shape(f, "syscall_sigma", calls, &f->p->syscall_sigma) && ok;
    }
    tail_pool_free(&tails);
    return ok;
}

/* accept_ns and close_ns: connections made ahead, then accepted and
 * closed, each call timed. */
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
    struct dist accepts[ROUNDS], closes[ROUNDS];
    enum { N = 500 };
    int clients[N], served[N];
    double acc[N], cls[N];
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < N; i++) {
            clients[i] = socket(AF_INET, SOCK_STREAM, 0);
            connect(clients[i], (struct sockaddr *)&a, sizeof(a));
        }
        for (int i = 0; i < N; i++) {
            double t0 = now_ns();
            served[i] = accept(l, NULL, NULL);
            acc[i] = now_ns() - t0 - clock_ns;
        }
        for (int i = 0; i < N; i++) {
            double t0 = now_ns();
            close(served[i]);
            cls[i] = now_ns() - t0 - clock_ns;
        }
        for (int i = 0; i < N; i++)
            close(clients[i]);
        accepts[r] = dist_of(acc, N);
        closes[r] = dist_of(cls, N);
    }
    close(l);
    bool ok = settle(f, "accept_ns", accepts, &f->p->accept_ns);
    return settle(f, "close_ns", closes, &f->p->close_ns) && ok;
}

/* epoll_wait that finds one ready fd, and an eventfd write. */
static bool measure_epoll_eventfd(struct figures *f, double clock_ns)
{
    int ep = epoll_create1(0), ev = eventfd(1, EFD_NONBLOCK);
    struct epoll_event e = { .events = EPOLLIN }, out[8];
    epoll_ctl(ep, EPOLL_CTL_ADD, ev, &e);
    struct dist waits[ROUNDS], writes[ROUNDS];
    enum { N = 20000 };
    static double wt[N], wr[N];
    uint64_t one = 1;
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < N; i++) {
            double t0 = now_ns();
            epoll_wait(ep, out, 8, 0);
            double t1 = now_ns();
            (void)!write(ev, &one, sizeof(one));
            double t2 = now_ns();
            wt[i] = t1 - t0 - clock_ns;
            wr[i] = t2 - t1 - clock_ns;
        }
        waits[r] = dist_of(wt, N);
        writes[r] = dist_of(wr, N);
    }
    close(ep);
    close(ev);
    bool ok = settle(f, "epoll_wait_ns", waits, &f->p->epoll_wait_ns);
    return settle(f, "eventfd_ns", writes, &f->p->eventfd_ns) && ok;
}

/* poll_ns, as a blocking model's thread polls before each read (the
 * socket, with a byte waiting, and an eventfd), and read_empty_ns, a
 * nonblocking read of an empty socket (EAGAIN), as a loop's last read of
 * a channel. */
static bool measure_poll_read_empty(struct figures *f, double clock_ns)
{
    int fds[2];
    if (tcp_pair(fds, NULL) < 0)
        return true;
    int ev = eventfd(0, EFD_NONBLOCK);
    fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK);
    struct dist polls[ROUNDS], empties[ROUNDS];
    enum { N = 10000 };
    static double pl[N], em[N];
    char b = 'x';
    bool failed = false;
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < N; i++) {
            double t0 = now_ns();
            (void)!read(fds[1], &b, 1);       /* EAGAIN: the socket is empty */
            em[i] = now_ns() - t0 - clock_ns;
        }
        b = 'x';
        failed = write(fds[0], &b, 1) != 1;   /* a byte for poll to find */
        if (failed)
            break;
        for (int i = 0; i < N; i++) {
            struct pollfd p[2] = { { .fd = fds[1], .events = POLLIN },
                                   { .fd = ev, .events = POLLIN } };
            double t0 = now_ns();
            poll(p, 2, -1);
            pl[i] = now_ns() - t0 - clock_ns;
        }
        (void)!read(fds[1], &b, 1);
        polls[r] = dist_of(pl, N);
        empties[r] = dist_of(em, N);
    }
    close(ev);
    close(fds[0]);
    close(fds[1]);
    if (failed)
        return true;                          /* nothing measured: keep the defaults */
    bool ok = settle(f, "poll_ns", polls, &f->p->poll_ns);
    return settle(f, "read_empty_ns", empties, &f->p->read_empty_ns) && ok;
}

static void *nothing(void *arg)
{
    return arg;
}

/* thread_create_ns: pthread_create and join of a thread that returns. */
static bool measure_threads(struct figures *f, double clock_ns)
{
    struct profile *p = f->p;
    struct dist creates[ROUNDS];
    enum { N = 500 };
    double ns[N];
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < N; i++) {
            pthread_t t;
            double t0 = now_ns();
            if (pthread_create(&t, NULL, nothing, NULL) == 0)
                pthread_join(t, NULL);
            ns[i] = now_ns() - t0 - clock_ns;
        }
        creates[r] = dist_of(ns, N);
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
            while (echo_session_next(&s, "calibrate", SIZE_MAX, &reply))
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
    struct dist user[ROUNDS], kernel[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        double user_kb, kernel_kb;
        if (mem_round(&user_kb, &kernel_kb) < 0)
            return true;
        user[r] = dist_const(user_kb);
        kernel[r] = dist_const(kernel_kb);
    }
    bool ok = settle(f, "stack_touched_kb", user, &f->p->stack_touched_kb);
    return settle(f, "kernel_stack_kb", kernel, &f->p->kernel_stack_kb) && ok;
}

/* Decode a 64-byte line and make its reply: the real session code. A
 * line takes tens of nanoseconds, less than the clock's own cost: lines
 * are timed in batches, and a round is the batches' percentiles. */
static bool measure_handle(struct figures *f, double clock_ns)
{
    struct echo_session s;
    if (echo_session_init(&s, "calibrate", 1, ECHO_MAX_LINE_DEFAULT) < 0)
        return true;
    struct dist handles[ROUNDS];
    enum { BATCHES = 200, LINES = 1000 };
    double per_line[BATCHES];
    struct echo_reply reply;
    for (int r = 0; r < ROUNDS; r++) {
        for (int b = 0; b < BATCHES; b++) {
            double t0 = now_ns();
            for (int i = 0; i < LINES; i++) {
                size_t room;
                char *buf = echo_session_space(&s, &room);
                if (!buf || room < 64)
                    break;
                memset(buf, 'a', 63);
                buf[63] = '\n';
                echo_session_commit(&s, 64);
                while (echo_session_next(&s, "calibrate", SIZE_MAX, &reply))
                    ;
            }
            per_line[b] = (now_ns() - t0 - clock_ns) / LINES;
        }
        handles[r] = dist_of(per_line, BATCHES);
    }
    echo_session_free(&s);
    return settle(f, "handle_ns", handles, &f->p->handle_ns);
}

/* ---- switches, wakeups and the network: an echo between two threads -------- */

/* A client thread and a server thread passing a 64-byte message back and
 * forth over TCP loopback, each polling before it reads, as the blocking
 * models' threads do: every pass blocks one thread and wakes the other. */
struct pingpong {
    int client_fd, server_fd;
    int client_cpu, server_cpu;       /* where each is pinned; -1: the scheduler's choice */
    double server_cpu_ns;             /* the CPU the server thread used (its own clock) */
};

/* What a round of passes gave: each pass's time, and the CPU both threads
 * used, per pass. */
struct passes_out {
    struct dist wall;                 /* a pass, start to end (half a round trip) */
    double cpu_ns;                    /* both threads' CPU over the passes, per pass */
    const double *each;               /* each pass (until the next round), n of them */
    int n;
};

/* This thread's CPU time so far (CLOCK_THREAD_CPUTIME_ID), in ns. */
static double thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* What two reads of this thread's CPU clock cost (the median of 1000
 * pairs), to take off a call timed between them. */
static double thread_clock_pair_ns(void)
{
    enum { N = 1000 };
    static double pair[N];
    for (int i = 0; i < N; i++) {
        double a = thread_cpu_ns();
        pair[i] = thread_cpu_ns() - a;
    }
    qsort(pair, N, sizeof(pair[0]), cmp_double);
    return pair[N / 2];
}

enum { PASSES = 2000, MSG = 64 };


/* poll() until fd is readable, then read a whole message. */
static bool poll_read(int fd, char *buf)
{
    struct pollfd p = { .fd = fd, .events = POLLIN };
    return poll(&p, 1, -1) == 1 && read_all(fd, buf, MSG);
}

static void *server_main(void *arg)
{
    struct pingpong *pp = arg;
    pin(pp->server_cpu);
    char buf[MSG];
    double cpu0 = thread_cpu_ns();
    for (int i = 0; i < PASSES; i++)
        if (!poll_read(pp->server_fd, buf) || write(pp->server_fd, buf, MSG) != MSG)
            break;
    pp->server_cpu_ns = thread_cpu_ns() - cpu0;
    return NULL;
}

/* One pass, half a round trip, timed round trip by round trip: a write,
 * the other thread's wakeup (and switch), its poll and read; and the CPU
 * the two threads used for them, each on its own clock. With write_cpu,
 * each of the client's writes (each wakes the server, blocked in poll) is
 * timed on the client's own CPU clock as well, and *write_cpu is their
 * mean, the clock's own reads included. With idle_ns > 0 the client
 * spins that long before each round trip, so that the server's core has
 * idled that long when the write wakes it. */
static struct passes_out passes(int client_cpu, int server_cpu, double *write_cpu,
                                double idle_ns)
{
    static double half[PASSES];
    int fds[2];
    struct passes_out none = { dist_const(0), 0, NULL, 0 };
    if (tcp_pair(fds, NULL) < 0)
        return none;
    struct pingpong pp = { fds[0], fds[1], client_cpu, server_cpu, 0 };
    pthread_t t;
    if (pthread_create(&t, NULL, server_main, &pp) != 0) {
        close(fds[0]);
        close(fds[1]);
        return none;
    }
    cpu_set_t old;
    pthread_getaffinity_np(pthread_self(), sizeof(old), &old);
    pin(client_cpu);
    char buf[MSG];
    memset(buf, 'x', sizeof(buf));
    int done = 0;
    double cpu0 = thread_cpu_ns();
    double write_sum = 0;
    for (; done < PASSES; done++) {
        for (double until = now_ns() + idle_ns; idle_ns > 0 && now_ns() < until;)
            ;
        double t0 = now_ns(), w0 = write_cpu ? thread_cpu_ns() : 0;
        if (write(fds[0], buf, MSG) != MSG)
            break;
        if (write_cpu)
            write_sum += thread_cpu_ns() - w0;
        if (!poll_read(fds[0], buf))
            break;
        half[done] = (now_ns() - t0) / 2;
    }
    if (write_cpu)
        *write_cpu = done > 0 ? write_sum / done : 0;
    double client_cpu_ns = thread_cpu_ns() - cpu0;
    shutdown(fds[0], SHUT_RDWR);          /* the server, if it is still waiting, returns */
    pthread_join(t, NULL);
    pthread_setaffinity_np(pthread_self(), sizeof(old), &old);
    close(fds[0]);
    close(fds[1]);
    if (done == 0)
        return none;
    return (struct passes_out){ dist_of(half, done),
                                (client_cpu_ns + pp.server_cpu_ns) / (2.0 * done), half, done };
}

/* context_switch_ns, wakeup_cpu_ns, wakeup_ns and wakeup_sigma, each
 * round measured together so that one state of the machine gives all.
 * A pass's calls are write_ns, poll_ns and read_ns across two cores
 * (the syscalls group: a peer on the other core that is awake; the CPU a
 * write pays to wake a sleeping one is the wakeup's), and on one core
 * same_core_calls_ns's; what a pass costs beyond them is:
 * - both threads pinned to one core: a switch, in CPU;
 * - pinned to two cores: each core idle while its thread waits, so every
 *   pass wakes an idle core from the other. The threads' own CPU clocks
 *   say what of that is CPU (the interrupt, the way out of idle:
 *   wakeup_cpu_ns, which the simulator charges instead of a switch) and
 *   what is latency, no thread on a core (wakeup_ns); its passes' shape
 *   is wakeup_sigma. Of that CPU, what the waker pays inside its write
 *   (the interrupt it sends the other core: a VM exit here) is
 *   wakeup_ipi_ns: the client's waking writes, each on its own CPU
 *   clock, less write_ns (a write to a peer that is awake) and the
 *   clock's two reads, in passes of their own (the clock's reads would
 *   stretch the others).
 * Where Linux puts two such threads itself is not measured: on this VM it
 * was two cores on a quiet machine and one beside other work, and that
 * choice is the simulated scheduler's to make (sched.h), not a cost.
 * cross_core_ns is not measured either: the interrupt a wakeup across
 * cores costs is wakeup_cpu_ns's, and what is left (colder caches) is too
 * small to see here. net_one_way_ns: on loopback the kernel delivers
 * inside write(); the network's share left beyond these is 0. */
/* A write and the read of it, by one thread on one core (what a pass
 * between two threads pinned to one core pays for its calls: timed in
 * the pass, a write would hold the other thread's whole turn, which
 * preempts it inside the call). The mean of the log-normal through p50
 * and p90 of 2000 such pairs. */
static double same_core_calls_ns(double clock_ns)
{
    int fds[2];
    if (tcp_pair(fds, NULL) < 0)
        return 0;
    enum { N = 2000 };
    static double pair[N];
    char msg[MSG];
    memset(msg, 'x', sizeof(msg));
    int n = 0;
    for (; n < N; n++) {
        double t0 = now_ns();
        if (write(fds[n % 2], msg, MSG) != MSG || !read_all(fds[1 - n % 2], msg, MSG))
            break;
        pair[n] = now_ns() - t0 - clock_ns;
    }
    close(fds[0]);
    close(fds[1]);
    return n > 0 ? calibrate_round_figure(pair, n) : 0;
}

static bool measure_switches(struct figures *f, long ncpu, double clock_ns)
{
    struct profile *p = f->p;
    struct dist idle_wake[ROUNDS];
    double same[ROUNDS], one_pass[ROUNDS];
    double across[ROUNDS], wake[ROUNDS], wake_cpu[ROUNDS];
    struct tail_pool tails;
    if (ncpu < 2 || !tail_pool_init(&tails, PASSES)) /* no other core to wake: keep the defaults */
        return true;
    double ipi[ROUNDS], clock_pair = thread_clock_pair_ns();
    for (int r = 0; r < ROUNDS; r++) {
        double waking_write;
        struct passes_out one = passes(0, 0, NULL, 0), two = passes(0, 1, NULL, 0);
        passes(0, 1, &waking_write, 0);
        one_pass[r] = dist_mean(one.wall);
        same[r] = one_pass[r] - same_core_calls_ns(clock_ns) - p->poll_ns;
        double calls = p->write_ns + p->poll_ns + p->read_ns;
        across[r] = dist_mean(two.wall);
        idle_wake[r] = dist_less(two.wall, calls);
        tail_pool_add(&tails, r, two.each, two.n, calls, idle_wake[r].p50);
        wake_cpu[r] = two.cpu_ns - calls;
        wake[r] = across[r] - two.cpu_ns;
        ipi[r] = waking_write - clock_pair - p->write_ns;
    }
    if (!strstr(p->spreads, "net_one_way_ns")) {    /* once, whatever the attempts */
        profile_note_spread(p, "net_one_way_ns 0: on loopback the kernel delivers inside "
                            "write(), and write_ns has it");
        profile_note_spread(p, "cross_core_ns: not measured (a wakeup across cores is "
                            "wakeup_cpu_ns and wakeup_ns)");
    }
    p->net_one_way_ns = 0;
    /* The switch is what is left of the one-core pass (2-3 us of 7-8):
     * judged against the pass, as the wakeups are against theirs. Judged
     * on its own, the noise of the calls taken off spread its rounds by
     * 50-170% and it was refused in most calibrations. */
    bool ok = settle_part(f, "context_switch_ns", same, one_pass, &p->context_switch_ns);
    ok = settle_part(f, "wakeup_cpu_ns", wake_cpu, across, &p->wakeup_cpu_ns) && ok;
    ok = settle_part(f, "wakeup_ns", wake, across, &p->wakeup_ns) && ok;
    ok = settle_part(f, "wakeup_ipi_ns", ipi, across, &p->wakeup_ipi_ns) && ok;
    ok = settle_tail(f, "wakeup_p99", &tails, 99, &p->wakeup_p99) && ok;
    ok = settle_tail(f, "wakeup_p999", &tails, 999, &p->wakeup_p999) && ok;
    ok = settle_shape(f, "wakeup_sigma", idle_wake, &p->wakeup_sigma) && ok;
    tail_pool_free(&tails);
    return ok;
}

/* ---- a core that idled long ------------------------------------------------------ */

enum { DEEP_IDLE_NS = 100000, DEEP_PASSES = 2 * PASSES };

/* A figure from calls pooled over all rounds in a tail_pool (absolute,
 * not over a median), for a cost whose rounds are too short to agree on
 * their own: the figure (shape: sigma, else the log-normal's mean)
 * through the p50 and p90 of all the calls, judged by how far the even
 * rounds' and the odd rounds' figures agree, as a tail knot is. *median:
 * the calls' median (0 when there are none in a half). */
static bool settle_pooled(struct figures *f, const char *key, struct tail_pool *tp,
                          bool shape, double *dst, double *median)
{
    *median = 0;
    double *all = malloc((size_t)(tp->n[0] + tp->n[1]) * sizeof(*all));
    if (!all || tp->n[0] == 0 || tp->n[1] == 0) {
        free(all);
        return false;
    }
    memcpy(all, tp->half[0], (size_t)tp->n[0] * sizeof(*all));
    memcpy(all + tp->n[0], tp->half[1], (size_t)tp->n[1] * sizeof(*all));
    struct dist d[3] = { dist_of(tp->half[0], tp->n[0]), dist_of(tp->half[1], tp->n[1]),
                         dist_of(all, tp->n[0] + tp->n[1]) };
    free(all);
    *median = d[2].p50;
    double v[3];
    for (int i = 0; i < 3; i++)
        v[i] = shape ? dist_sigma(d[i]) : dist_mean(d[i]);
    double gap = fabs(v[0] - v[1]);
    struct pending pd = { .key = key, .dst = dst, .shape = shape, .calls = d[2],
                          .v = { .value = v[2], .spread = shape ? gap : gap / v[2] } };
    pd.v.beyond_shape_max = shape && v[2] > PROFILE_SIGMA_MAX;
    pd.v.trusted = shape ? gap <= SHAPE_SPREAD_MAX && !pd.v.beyond_shape_max
                         : v[2] > 0 && gap <= SPREAD_MAX * v[2];
    add_pending(f, &pd);
    return pd.v.trusted;
}

/* wakeup_deep_ns and its shape (profile.h): what a wakeup across cores
 * takes beyond calibrate's ping-pong when the woken core has idled
 * DEEP_IDLE_NS first. Each round times passes of both kinds: the
 * ping-pong's, whose cores idle for a few microseconds, and passes after
 * which the client spins DEEP_IDLE_NS. In a deep pass one wakeup is deep
 * (the server's) and one is not (the client's, as in a ping-pong), so
 * what one deep wakeup adds is the round trip less the ping-pong's
 * median round trip: 2 x (deep half - ping-pong half). A round's median
 * of that (about 10 us) moved by half from round to round here, so the
 * figures are taken from all rounds' calls pooled, judged by whether
 * the even and the odd rounds agree. The tail is what matters: one deep
 * wakeup in a hundred added 10-40 times the median here, one in a
 * thousand 70-180 times; it comes in episodes, when the host is busy, and
 * waits the longest there. wakeup_deep_after_ns is DEEP_IDLE_NS, the
 * idle these passes measure: a core that idled less is charged the
 * ping-pong's wakeup, whose cores idle for a few us. The cost grows
 * with the idle in between (a wakeup across cores here took 27 us at
 * its median after 35 us of idle, 30 us after 130 and 33 us after 230,
 * in a quiet minute), and a 1-connection closed loop, whose cores idle
 * 30-60 us a line, ran at half its real rate in the simulator when it
 * was charged from 50 us on. */
static bool measure_deep_idle(struct figures *f, long ncpu)
{
    struct profile *p = f->p;
    struct tail_pool added;
    if (ncpu < 2 || !tail_pool_init(&added, DEEP_PASSES)) /* no other core to wake */
        return true;
    for (int r = 0; r < ROUNDS; r++) {
        for (int part = 0; part < DEEP_PASSES / PASSES; part++) {
            double pingpong_half = passes(0, 1, NULL, 0).wall.p50;
            struct passes_out deep = passes(0, 1, NULL, DEEP_IDLE_NS);
            double each[PASSES];
            for (int i = 0; i < deep.n; i++)
                each[i] = 2 * (deep.each[i] - pingpong_half);
            tail_pool_add(&added, r, each, deep.n, 0, 1);
        }
    }
    if (!strstr(p->spreads, "wakeup_deep_after_ns"))
        profile_note_spread(p, "wakeup_deep_after_ns 100000: the idle the passes of "
                            "wakeup_deep_ns measure");
    p->wakeup_deep_after_ns = DEEP_IDLE_NS;
    double median;
    bool ok = settle_pooled(f, "wakeup_deep_ns", &added, false, &p->wakeup_deep_ns, &median);
    ok = settle_pooled(f, "wakeup_deep_sigma", &added, true, &p->wakeup_deep_sigma,
                       &median) && ok;
    /* The tail knots are multiples of the median of all the calls. */
    for (int h = 0; h < 2; h++)
        for (int i = 0; i < added.n[h]; i++)
            added.half[h][i] = median > 0 ? added.half[h][i] / median : 0;
    ok = settle_tail(f, "wakeup_deep_p99", &added, 99, &p->wakeup_deep_p99) && ok;
    ok = settle_tail(f, "wakeup_deep_p999", &added, 999, &p->wakeup_deep_p999) && ok;
    tail_pool_free(&added);
    return ok;
}

enum { TIMER_PASSES = 1000, TIMER_SLEEP_NS = 50000 };

/* timer_late_ns and its shape (profile.h): how late a timer wakes the
 * thread that sleeps until it, as `threadlab load`'s open loop sleeps
 * between lines (a timerfd, no timer slack, the thread not pinned). Each
 * round sleeps TIMER_PASSES times for TIMER_SLEEP_NS; a call is how long
 * after its deadline the thread ran, less the clock's read. Here that
 * was 28-41 us at the median and 80-210 us at p99: the timer must wake a
 * halted vCPU through the host. */
static bool measure_timer_late(struct figures *f, double clock_ns)
{
    struct profile *p = f->p;
    struct dist late[ROUNDS];
    struct tail_pool tails;
    int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
    if (fd < 0 || !tail_pool_init(&tails, TIMER_PASSES)) {
        if (fd >= 0)
            close(fd);
        return true;                         /* no timer to be had: keep the values */
    }
    unsigned long slack = (unsigned long)prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    static double each[TIMER_PASSES];
    for (int r = 0; r < ROUNDS; r++) {
        int n = 0;
        for (; n < TIMER_PASSES; n++) {
            uint64_t due = now_ns() + TIMER_SLEEP_NS;
            struct itimerspec its = { .it_value = { .tv_sec = (time_t)(due / 1000000000u),
                                                    .tv_nsec = (long)(due % 1000000000u) } };
            uint64_t fired;
            if (timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL) < 0 ||
                read(fd, &fired, sizeof(fired)) != sizeof(fired))
                break;
            each[n] = (double)(now_ns() - due) - clock_ns;
        }
        late[r] = n > 0 ? dist_of(each, n) : dist_const(0);
        tail_pool_add(&tails, r, each, n, 0, late[r].p50);
    }
    prctl(PR_SET_TIMERSLACK, slack, 0, 0, 0);
    close(fd);
    bool ok = settle(f, "timer_late_ns", late, &p->timer_late_ns);
    ok = settle_shape(f, "timer_late_sigma", late, &p->timer_late_sigma) && ok;
    ok = settle_tail(f, "timer_late_p99", &tails, 99, &p->timer_late_p99) && ok;
    ok = settle_tail(f, "timer_late_p999", &tails, 999, &p->timer_late_p999) && ok;
    tail_pool_free(&tails);
    return ok;
}

/* The idle group: a core that idled long, and a timer's wakeup. */
static bool measure_idle(struct figures *f, long ncpu, double clock_ns)
{
    bool ok = measure_deep_idle(f, ncpu);
    return measure_timer_late(f, clock_ns) && ok;
}

/* ---- virtual threads: the switch, the stack and its pages -------------------- */

/* Two contexts on this thread, as bench/switch-cost.c has them: vt_bounce
 * switches straight back to the caller's context, every time. */
static struct vt_context vt_main_ctx, vt_other_ctx;

static void vt_bounce(void *arg)
{
    (void)arg;
    vt_context_entered();
    for (;;)
        vt_switch(&vt_other_ctx, &vt_main_ctx);
}

/* vt_switch_ns: a switch takes nanoseconds, less than the clock's own
 * cost, so switches are timed in batches of round trips (two switches
 * each), and a round is the batches' percentiles. */
static bool measure_vt_switch(struct figures *f, double clock_ns, struct dist *rounds)
{
    struct vt_stack st;
    if (vt_stack_alloc(&st, VT_STACK_DEFAULT_BYTES) < 0)
        return false;
    vt_context_of_thread(&vt_main_ctx);
    vt_context_make(&vt_other_ctx, st.lo, st.bytes, vt_bounce, NULL);
    enum { BATCHES = 200, TRIPS = 1000 };
    double per_switch[BATCHES];
    for (int r = 0; r < ROUNDS; r++) {
        for (int b = 0; b < BATCHES; b++) {
            double t0 = now_ns();
            for (int i = 0; i < TRIPS; i++)
                vt_switch(&vt_main_ctx, &vt_other_ctx);
            per_switch[b] = (now_ns() - t0 - clock_ns) / (2.0 * TRIPS);
        }
        rounds[r] = dist_of(per_switch, BATCHES);
    }
    /* The bouncing context is left switched out for good: its stack goes. */
    vt_context_free(&vt_other_ctx);
    vt_context_free(&vt_main_ctx);
    vt_stack_free(&st);
    (void)f;
    return true;
}

/* What a connection's handler holds on its stack when it parks
 * (models/vthread/vthread.c, conn_main): its session, the replies it
 * collects for one writev, and the frames of a line through the session
 * code; then it switches out, as a park does. */
static void vt_handler_standin(void *arg)
{
    struct vt_context *back = arg;
    vt_context_entered();
    struct {
        struct echo_session session;
        struct iovec out[64];
        char who[96];
    } sv;
    memset(&sv, 0, sizeof(sv));
    struct echo_reply reply;
    if (echo_session_init(&sv.session, "calibrate", 1, ECHO_MAX_LINE_DEFAULT) == 0) {
        size_t room;
        char *in = echo_session_space(&sv.session, &room);
        if (in && room >= 2) {
            memcpy(in, "a\n", 2);
            echo_session_commit(&sv.session, 2);
            while (echo_session_next(&sv.session, "vt-1@carrier-0", SIZE_MAX, &reply))
                sv.out[0] = (struct iovec){ (void *)reply.data, reply.len };
        }
        snprintf(sv.who, sizeof(sv.who), "vt-%d@carrier-%d", 1, 0);
        /* Its buffers are the heap's: freed before the park, which never
         * returns (LeakSanitizer counted 7500 of them at exit). */
        echo_session_free(&sv.session);
    }
    for (;;)
        vt_switch(&vt_other_ctx, back);       /* parked for good */
}

/* The pages of [lo, lo + bytes) resident now (mincore), in KiB. */
static double resident_kb(void *lo, size_t bytes)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), n = bytes / page, pages = 0;
    unsigned char *v = malloc(n);
    if (!v || mincore(lo, bytes, v) < 0) {
        free(v);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        pages += v[i] & 1;
    free(v);
    return (double)(pages * page) / 1024;
}

/* vt_stack_map_ns, vt_stack_unmap_ns: a stack made (mmap + mprotect of
 * its guard page) and, after its handler touched it, unmade (munmap);
 * vt_stack_touched_kb: the pages the stand-in handler touched, counted
 * by mincore (the handler's own: every other page of the stack is only
 * reserved). */
static bool measure_vt_stacks(struct figures *f, double clock_ns, struct dist *maps,
                              struct dist *unmaps, struct dist *touched)
{
    enum { N = 500 };
    static struct vt_stack st[N];
    double map_ns[N], unmap_ns[N], kb[N];
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < N; i++) {
            double t0 = now_ns();
            if (vt_stack_alloc(&st[i], VT_STACK_DEFAULT_BYTES) < 0)
                return false;
            map_ns[i] = now_ns() - t0 - clock_ns;
            vt_context_of_thread(&vt_main_ctx);
            vt_context_make(&vt_other_ctx, st[i].lo, st[i].bytes, vt_handler_standin,
                            &vt_main_ctx);
            vt_switch(&vt_main_ctx, &vt_other_ctx);
            kb[i] = resident_kb(st[i].lo, st[i].bytes);
            vt_context_free(&vt_other_ctx);
            vt_context_free(&vt_main_ctx);
        }
        for (int i = 0; i < N; i++) {
            double t0 = now_ns();
            vt_stack_free(&st[i]);
            unmap_ns[i] = now_ns() - t0 - clock_ns;
        }
        maps[r] = dist_of(map_ns, N);
        unmaps[r] = dist_of(unmap_ns, N);
        touched[r] = dist_const(median_of(kb, N));
    }
    (void)f;
    return true;
}

static bool measure_vthreads(struct figures *f, double clock_ns)
{
    struct dist switches[ROUNDS], maps[ROUNDS], unmaps[ROUNDS], touched[ROUNDS];
    if (!measure_vt_switch(f, clock_ns, switches) ||
        !measure_vt_stacks(f, clock_ns, maps, unmaps, touched))
        return true;                          /* no stack to be had: keep the defaults */
    struct profile *p = f->p;
    bool ok = settle(f, "vt_switch_ns", switches, &p->vt_switch_ns);
    ok = settle(f, "vt_stack_map_ns", maps, &p->vt_stack_map_ns) && ok;
    ok = settle(f, "vt_stack_unmap_ns", unmaps, &p->vt_stack_unmap_ns) && ok;
    return settle(f, "vt_stack_touched_kb", touched, &p->vt_stack_touched_kb) && ok;
}

/* ---- all of it ---------------------------------------------------------------------- */

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

static const char *const group_names[CALIBRATE_NGROUPS] = {
    "syscalls", "accept", "epoll", "poll", "threads", "memory", "handle", "switches",
    "vthread", "idle",
};

const char *calibrate_group_name(int g)
{
    return g >= 0 && g < CALIBRATE_NGROUPS ? group_names[g] : NULL;
}

unsigned calibrate_group(const char *name)
{
    for (int g = 0; g < CALIBRATE_NGROUPS; g++)
        if (strcmp(name, group_names[g]) == 0)
            return 1u << g;
    return 0;
}

int calibrate_measure(struct profile *p, FILE *progress)
{
    profile_default(p);
    return calibrate_measure_groups(p, CALIBRATE_ALL, progress);
}

int calibrate_measure_groups(struct profile *p, unsigned groups, FILE *progress)
{
    double t0 = now_ns();
    for (int i = 0; i < 1000; i++)
        now_ns();
    double clock_ns = (now_ns() - t0) / 1000;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    struct figures f = { .progress = progress, .p = p };

    fprintf(progress, "calibrate: each figure is timed call by call in %d rounds; a "
            "round's figure is the mean of the log-normal through its calls' p50 and "
            "p90; rounds that disagree by more than %.0f%% (a shape: by %.2f) are "
            "measured again, up to %d times, then refused\n", ROUNDS, 100 * SPREAD_MAX,
            SHAPE_SPREAD_MAX, ATTEMPTS);
    /* In this order: switches takes what a pass's syscalls cost from
     * syscalls and poll (measured now, or the profile's). */
    if (groups & calibrate_group("syscalls"))
        MEASURE(&f, measure_read_write(&f, clock_ns, ncpu));
    if (groups & calibrate_group("accept"))
        MEASURE(&f, measure_accept_close(&f, clock_ns));
    if (groups & calibrate_group("epoll"))
        MEASURE(&f, measure_epoll_eventfd(&f, clock_ns));
    if (groups & calibrate_group("poll"))
        MEASURE(&f, measure_poll_read_empty(&f, clock_ns));
    if (groups & calibrate_group("threads"))
        MEASURE(&f, measure_threads(&f, clock_ns));
    if (groups & calibrate_group("memory"))
        MEASURE(&f, measure_memory(&f));
    if (groups & calibrate_group("handle"))
        MEASURE(&f, measure_handle(&f, clock_ns));
    if (groups & calibrate_group("switches")) {
        MEASURE(&f, measure_switches(&f, ncpu, clock_ns));
        calibrate_read_linux_sched(p, ncpu, progress);
    }
    if (groups & calibrate_group("vthread"))
        MEASURE(&f, measure_vthreads(&f, clock_ns));
    if (groups & calibrate_group("idle"))
        MEASURE(&f, measure_idle(&f, ncpu, clock_ns));
    if (f.refused)
        fprintf(progress, "calibrate: %d figure(s) refused (the machine is too busy to "
                "trust them): they keep the values they had\n", f.refused);

    time_t now = time(NULL);
    char date[32];
    strftime(date, sizeof(date), "%Y-%m-%d", gmtime(&now));
    struct utsname u;
    uname(&u);
    char host[64];
    if (gethostname(host, sizeof(host)) < 0)
        snprintf(host, sizeof(host), "?");
    snprintf(p->measured, sizeof(p->measured), "%s, threadlab calibrate%s on %.32s "
             "(%ld cores, %.20s %.24s)", date, groups == CALIBRATE_ALL ? "" : " --only",
             host, ncpu, u.sysname, u.release);
    return f.refused;
}
