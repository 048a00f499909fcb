/* testnet.c -- blocking test clients with deadlines. See testnet.h. */
#include "testnet.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int tn_connect(uint16_t port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    struct timeval tv = { .tv_sec = TESTNET_TIMEOUT_MS / 1000 };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    int rc = connect(fd, (struct sockaddr *)&a, sizeof(a));
    ck_assert_msg(rc == 0, "connect to port %u: %s", port, strerror(errno));
    return fd;
}

void tn_send(int fd, const void *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = send(fd, (const char *)buf + done, len - done, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        ck_assert_msg(n > 0, "send: %s", strerror(errno));
        done += (size_t)n;
    }
}

void tn_send_str(int fd, const char *s)
{
    tn_send(fd, s, strlen(s));
}

ssize_t tn_read_line(int fd, char *buf, size_t cap)
{
    size_t len = 0;
    while (len < cap) {
        ssize_t n = recv(fd, buf + len, 1, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            return (ssize_t)len;
        if (buf[len++] == '\n')
            break;
    }
    return (ssize_t)len;
}

bool tn_read_exact(int fd, void *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = recv(fd, (char *)buf + done, len - done, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        done += (size_t)n;
    }
    return true;
}

int tn_read_eof(int fd)
{
    char c;
    ssize_t n = recv(fd, &c, 1, 0);
    if (n == 0)
        return 0;
    return n < 0 ? -errno : 1;
}

bool tn_readable(int fd, int wait_ms)
{
    struct pollfd p = { .fd = fd, .events = POLLIN };
    return poll(&p, 1, wait_ms) == 1;
}

void tn_close_reset(int fd)
{
    struct linger l = { .l_onoff = 1, .l_linger = 0 };
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
    close(fd);
}

void tn_who_thread(int fd, char *out, size_t cap)
{
    char line[160];
    tn_send_str(fd, "!who\n");
    ssize_t n = tn_read_line(fd, line, sizeof(line));
    ck_assert_int_gt(n, 0);
    line[n] = '\0';
    const char *at = strstr(line, "thread=");
    ck_assert_msg(at != NULL, "!who said: %s", line);
    at += strlen("thread=");
    snprintf(out, cap, "%.*s", (int)strcspn(at, " \n"), at);
}

/* Call visit(tid, name, state, arg) for each thread of this process, with
 * its id (N of /proc/self/task/N), its name (.../comm, newline cut) and
 * its state letter (R, S, D, Z... from .../stat). A thread that ends
 * meanwhile is skipped. */
static void each_thread(void (*visit)(const char *tid, const char *name, char state, void *arg),
                        void *arg)
{
    DIR *d = opendir("/proc/self/task");
    ck_assert_ptr_nonnull(d);
    for (struct dirent *e; (e = readdir(d));) {
        char path[300], name[32] = "", stat[256] = "";
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        if (!fgets(name, sizeof(name), f))
            name[0] = '\0';
        fclose(f);
        name[strcspn(name, "\n")] = '\0';
        snprintf(path, sizeof(path), "/proc/self/task/%s/stat", e->d_name);
        f = fopen(path, "r");
        if (f) {
            if (!fgets(stat, sizeof(stat), f))
                stat[0] = '\0';
            fclose(f);
        }
        const char *paren = strrchr(stat, ')');    /* "N (comm) S ..." */
        visit(e->d_name, name, paren && paren[1] && paren[2] ? paren[2] : '?', arg);
    }
    closedir(d);
}

struct thread_tally { const char *prefix; int n; };

static void count_thread(const char *tid, const char *name, char state, void *arg)
{
    (void)tid;
    struct thread_tally *t = arg;
    (void)state;
    if (strncmp(name, t->prefix, strlen(t->prefix)) == 0)
        t->n++;
}

int tn_thread_count(const char *prefix)
{
    struct thread_tally t = { prefix, 0 };
    each_thread(count_thread, &t);
    return t.n;
}

void tn_expect_threads(const char *prefix, int want)
{
    uint64_t deadline = now_ms() + 5000;
    int n;
    while ((n = tn_thread_count(prefix)) != want && now_ms() < deadline)
        usleep(2000);
    ck_assert_msg(n == want, "%d threads named \"%s*\" after 5 s, wanted %d", n, prefix, want);
}

/* The number after "key:" in a /proc status file, or 0. */
static long status_field(const char *path, const char *key)
{
    char line[128];
    long v = 0;
    size_t n = strlen(key);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, key, n) == 0 && line[n] == ':')
            v = strtol(line + n + 1, NULL, 10);
    fclose(f);
    return v;
}

/* utime + stime (fields 14 and 15 of a /proc stat file), or 0. */
static long stat_cpu_ticks(const char *path)
{
    char stat[512] = "";
    unsigned long utime = 0, stime = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    if (!fgets(stat, sizeof(stat), f))
        stat[0] = '\0';
    fclose(f);
    const char *paren = strrchr(stat, ')');    /* "N (comm) S ppid ..." */
    if (!paren || sscanf(paren + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
                         &utime, &stime) != 2)
        return 0;
    return (long)(utime + stime);
}

struct thread_use_sum { const char *prefix; struct tn_thread_use use; };

static void add_thread_use(const char *tid, const char *name, char state, void *arg)
{
    struct thread_use_sum *sum = arg;
    char path[300];
    (void)state;
    if (strncmp(name, sum->prefix, strlen(sum->prefix)) != 0)
        return;
    sum->use.threads++;
    snprintf(path, sizeof(path), "/proc/self/task/%s/status", tid);
    sum->use.switches += status_field(path, "voluntary_ctxt_switches") +
                         status_field(path, "nonvoluntary_ctxt_switches");
    snprintf(path, sizeof(path), "/proc/self/task/%s/stat", tid);
    sum->use.cpu_ticks += stat_cpu_ticks(path);
}

struct tn_thread_use tn_thread_use(const char *prefix)
{
    struct thread_use_sum sum = { prefix, { 0, 0, 0 } };
    each_thread(add_thread_use, &sum);
    return sum.use;
}

struct tn_thread_use tn_thread_use_over(const char *prefix, int ms)
{
    struct tn_thread_use before = tn_thread_use(prefix);
    usleep((useconds_t)ms * 1000);
    struct tn_thread_use after = tn_thread_use(prefix);
    return (struct tn_thread_use){ before.threads, after.switches - before.switches,
                                   after.cpu_ticks - before.cpu_ticks };
}

uint64_t tn_eventfd_pending(void)
{
    uint64_t sum = 0;
    DIR *d = opendir("/proc/self/fd");
    ck_assert_ptr_nonnull(d);
    for (struct dirent *e; (e = readdir(d));) {
        char path[300], target[64] = "", line[128];
        snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(path, target, sizeof(target) - 1);
        if (n <= 0)
            continue;
        target[n] = '\0';
        if (strcmp(target, "anon_inode:[eventfd]") != 0)
            continue;
        snprintf(path, sizeof(path), "/proc/self/fdinfo/%s", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        while (fgets(line, sizeof(line), f))
            if (strncmp(line, "eventfd-count:", 14) == 0)
                sum += strtoull(line + 14, NULL, 16);    /* the kernel prints hex */
        fclose(f);
    }
    closedir(d);
    return sum;
}

struct state_wait { const char *prefix; char state; int n; };

static void count_in_state(const char *tid, const char *name, char state, void *arg)
{
    (void)tid;
    struct state_wait *w = arg;
    if (state == w->state && strncmp(name, w->prefix, strlen(w->prefix)) == 0)
        w->n++;
}

bool tn_wait_thread_state(const char *prefix, char state, int timeout_ms)
{
    uint64_t deadline = now_ms() + (uint64_t)timeout_ms;
    do {
        struct state_wait w = { prefix, state, 0 };
        each_thread(count_in_state, &w);
        if (w.n > 0)
            return true;
        usleep(1000);
    } while (now_ms() < deadline);
    return false;
}

struct thread_list { char *out; size_t cap, used; };

static void list_thread(const char *tid, const char *name, char state, void *arg)
{
    (void)tid;
    struct thread_list *l = arg;
    if (l->used >= l->cap)
        return;
    int n = snprintf(l->out + l->used, l->cap - l->used, "%s%s (%c)",
                     l->used ? ", " : "", name, state);
    l->used += n > 0 ? (size_t)n : 0;
}

void tn_thread_names(char *out, size_t cap)
{
    struct thread_list l = { out, cap, 0 };
    out[0] = '\0';
    each_thread(list_thread, &l);
}

int tn_fd_count(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    ck_assert_ptr_nonnull(d);
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n - 1;                     /* not the directory's own fd */
}

void tn_fd_names(char *out, size_t cap)
{
    DIR *d = opendir("/proc/self/fd");
    size_t len = 0;
    out[0] = '\0';
    ck_assert_ptr_nonnull(d);
    for (struct dirent *e; (e = readdir(d)) && len < cap;) {
        if (e->d_name[0] == '.' || atoi(e->d_name) == dirfd(d))
            continue;
        char path[300], target[128];
        snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(path, target, sizeof(target) - 1);
        target[n > 0 ? n : 0] = '\0';
        len += (size_t)snprintf(out + len, cap - len, "%s%s=%s", len ? " " : "",
                                e->d_name, target);
    }
    closedir(d);
}

long tn_rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "VmRSS: %ld", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb;
}


void tn_port_states(uint16_t port, char *out, size_t cap)
{
    static const char *names[] = { "?", "ESTABLISHED", "SYN_SENT", "SYN_RECV",
        "FIN_WAIT1", "FIN_WAIT2", "TIME_WAIT", "CLOSE", "CLOSE_WAIT", "LAST_ACK",
        "LISTEN", "CLOSING" };
    int count[12] = { 0 };
    char row[512];
    FILE *f = fopen("/proc/net/tcp", "r");
    while (f && fgets(row, sizeof(row), f)) {
        unsigned lport, rport, state;
        if (sscanf(row, " %*d: %*8X:%4X %*8X:%4X %2X", &lport, &rport, &state) == 3 &&
            (lport == port || rport == port) && state < 12)
            count[state]++;
    }
    if (f)
        fclose(f);
    size_t len = 0;
    out[0] = '\0';
    for (int i = 1; i < 12 && len < cap; i++)
        if (count[i])
            len += (size_t)snprintf(out + len, cap - len, "%s%s %d", len ? ", " : "",
                                    names[i], count[i]);
}
