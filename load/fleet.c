/* fleet.c -- child servers and loads. See fleet.h. */
#include "fleet.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "net/net.h"
#include "probe/board.h"
#include "net/clock.h"

static void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

int fleet_init(struct fleet *f, char *err, size_t err_len)
{
    memset(f, 0, sizeof(*f));
    ssize_t n = readlink("/proc/self/exe", f->self, sizeof(f->self) - 1);
    if (n <= 0) {
        snprintf(err, err_len, "cannot find this program (/proc/self/exe): %s",
                 strerror(errno));
        return -errno;
    }
    f->self[n] = '\0';
    if (board_dir(f->board_dir, sizeof(f->board_dir)) < 0)
        f->board_dir[0] = '\0';        /* servers will say so in their logs */
    const char *tmp = getenv("TMPDIR");
    snprintf(f->dir, sizeof(f->dir), "%s/threadlab-fleet-XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(f->dir)) {
        snprintf(err, err_len, "cannot make a directory in %s: %s",
                 tmp && *tmp ? tmp : "/tmp", strerror(errno));
        f->dir[0] = '\0';
        return -errno;
    }
    return 0;
}

/* fork + exec self with argv, output to log; the child gets SIGTERM when
 * we die, and a process group of its own. */
static pid_t spawn(const struct fleet *f, char *const argv[], const char *log)
{
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent)           /* the parent died before prctl */
        _exit(127);
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int null = open("/dev/null", O_RDONLY);
    if (fd < 0 || null < 0)
        _exit(127);
    dup2(null, 0);
    dup2(fd, 1);
    dup2(fd, 2);
    signal(SIGPIPE, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execv(f->self, argv);
    dprintf(2, "cannot run %s: %s\n", f->self, strerror(errno));
    _exit(127);
}

/* The last line of a log, for error messages. */
static void log_tail(const char *path, char *out, size_t len)
{
    out[0] = '\0';
    FILE *fp = fopen(path, "r");
    if (!fp)
        return;
    char line[512];
    while (fgets(line, sizeof(line), fp))
        if (line[0] != '\n') {
            size_t n = strnlen(line, len - 1);
            memcpy(out, line, n);
            out[n] = '\0';
        }
    fclose(fp);
    size_t n = strlen(out);
    if (n > 0 && out[n - 1] == '\n')
        out[n - 1] = '\0';
}

/* DIR/NAMEEXT into out (room for sizeof(fleet_server.log)). A copy goes
 * through a local, as out lies inside f too. */
static void path_in(const struct fleet *f, char out[200], const char *name,
                    const char *ext)
{
    char path[200];
    snprintf(path, sizeof(path), "%s/%s%s", f->dir, name, ext);
    memcpy(out, path, sizeof(path));
}

static int add_args(char **argv, int argc, int max, const char *const *args)
{
    for (int i = 0; args && args[i] && argc < max - 1; i++)
        argv[argc++] = (char *)args[i];
    argv[argc] = NULL;
    return argc;
}

int fleet_start_server(struct fleet *f, const char *model, const char *const *args,
                       char *err, size_t err_len)
{
    if (f->n >= FLEET_MAX) {
        snprintf(err, err_len, "at most %d servers", FLEET_MAX);
        return -1;
    }
    int i = f->n;
    struct fleet_server *s = &f->servers[i];
    memset(s, 0, sizeof(*s));
    snprintf(s->model, sizeof(s->model), "%s", model);
    path_in(f, s->log, model, ".log");
    char port_file[200];
    snprintf(port_file, sizeof(port_file), "%s/%s.port", f->dir, model);
    char *argv[64] = { f->self, "serve", (char *)model, "--port", "0",
                       "--port-file", port_file };
    add_args(argv, 7, 64, args);
    s->pid = spawn(f, argv, s->log);
    if (s->pid < 0) {
        snprintf(err, err_len, "cannot start %s: %s", model, strerror(errno));
        s->pid = 0;
        return -1;
    }
    f->n++;
    /* A server that dies is noticed at once (fleet_poll); the deadline is
     * for one that hangs. 30 s, not 5: on a machine loaded by others a
     * server was seen to take more than 5 s to start listening. */
    uint64_t deadline = now_ms() + 30000;
    while (now_ms() < deadline) {
        FILE *fp = fopen(port_file, "r");
        unsigned port = 0;
        if (fp) {
            if (fscanf(fp, "%u", &port) != 1)
                port = 0;
            fclose(fp);
        }
        if (port > 0 && port < 65536) {
            s->port = (uint16_t)port;
            unlink(port_file);
            return i;
        }
        fleet_poll(f);
        if (s->reaped)
            break;
        sleep_ms(20);
    }
    char tail[256];
    log_tail(s->log, tail, sizeof(tail));
    snprintf(err, err_len, "the %s server did not start%s%s", model,
             tail[0] ? ": " : "", tail);
    return -1;
}

int fleet_start_load(struct fleet *f, int i, const char *const *args,
                     char *err, size_t err_len)
{
    struct fleet_server *s = &f->servers[i];
    char target[32];
    snprintf(target, sizeof(target), "127.0.0.1:%u", s->port);
    path_in(f, s->load_out, s->model, ".load.json");
    char *argv[64] = { f->self, "load", target, "--json", "--no-progress" };
    add_args(argv, 5, 64, args);
    s->load_pid = spawn(f, argv, s->load_out);
    s->load_reaped = false;
    if (s->load_pid < 0) {
        snprintf(err, err_len, "cannot start the load for %s: %s", s->model,
                 strerror(errno));
        s->load_pid = 0;
        return -1;
    }
    return 0;
}

void fleet_poll(struct fleet *f)
{
    for (int i = 0; i < f->n; i++) {
        struct fleet_server *s = &f->servers[i];
        int st;
        struct rusage ru;
        if (s->pid > 0 && !s->reaped && wait4(s->pid, &st, WNOHANG, &ru) == s->pid) {
            /* The kernel's totals over every thread the server ever had,
             * exited ones included: better than any sample. */
            s->reaped = true;
            s->exit_status = st;
            s->usage.cpu_s = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
                             (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
            s->usage.voluntary_cs = (uint64_t)ru.ru_nvcsw;
            s->usage.involuntary_cs = (uint64_t)ru.ru_nivcsw;
            if (ru.ru_maxrss > s->usage.peak_rss_kb)
                s->usage.peak_rss_kb = ru.ru_maxrss;
        }
        if (s->load_pid > 0 && !s->load_reaped &&
            waitpid(s->load_pid, &st, WNOHANG) == s->load_pid) {
            s->load_reaped = true;
            s->load_status = st;
        }
    }
}

bool fleet_loads_running(struct fleet *f)
{
    fleet_poll(f);
    for (int i = 0; i < f->n; i++)
        if (f->servers[i].load_pid > 0 && !f->servers[i].load_reaped)
            return true;
    return false;
}

bool proc_usage_read(pid_t pid, struct proc_usage *u)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return false;
    long hwm = 0;
    while (fgets(line, sizeof(line), fp)) {
        unsigned long long v;
        if (sscanf(line, "Threads: %llu", &v) == 1)
            u->threads = (int)v;
        else if (sscanf(line, "VmRSS: %llu", &v) == 1)
            u->rss_kb = (long)v;
        else if (sscanf(line, "VmHWM: %llu", &v) == 1)
            hwm = (long)v;
        else if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1)
            u->voluntary_cs = v;
        else if (sscanf(line, "nonvoluntary_ctxt_switches: %llu", &v) == 1)
            u->involuntary_cs = v;
    }
    fclose(fp);
    /* A zombie has no memory and no threads worth reporting: keep the
     * last live numbers. */
    if (u->threads > u->peak_threads)
        u->peak_threads = u->threads;
    if (hwm > u->peak_rss_kb)
        u->peak_rss_kb = hwm;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    fp = fopen(path, "r");
    if (!fp)
        return false;
    char buf[1024];
    size_t n = fread(buf, 1, sizeof(buf) - 1, fp);
    fclose(fp);
    buf[n] = '\0';
    char *p = strrchr(buf, ')');       /* the name may hold spaces */
    unsigned long utime = 0, stime = 0;
    if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
                    &utime, &stime) == 2)
        u->cpu_s = (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
    return true;
}

bool fleet_sample(struct fleet *f, int i)
{
    struct fleet_server *s = &f->servers[i];
    if (s->pid <= 0 || s->reaped)
        return false;
    return proc_usage_read(s->pid, &s->usage);
}

static bool wait_reaped(struct fleet *f, const bool *reaped, int timeout_ms)
{
    uint64_t deadline = now_ms() + (uint64_t)timeout_ms;
    for (;;) {
        fleet_poll(f);
        if (*reaped)
            return true;
        if (now_ms() >= deadline)
            return false;
        sleep_ms(10);
    }
}

void fleet_stop_loads(struct fleet *f, int timeout_ms)
{
    fleet_poll(f);
    for (int i = 0; i < f->n; i++) {
        struct fleet_server *s = &f->servers[i];
        if (s->load_pid > 0 && !s->load_reaped)
            kill(s->load_pid, SIGINT);
    }
    for (int i = 0; i < f->n; i++) {
        struct fleet_server *s = &f->servers[i];
        if (s->load_pid <= 0 || s->load_reaped)
            continue;
        if (!wait_reaped(f, &s->load_reaped, timeout_ms)) {
            kill(s->load_pid, SIGKILL);
            wait_reaped(f, &s->load_reaped, 1000);
        }
    }
}

/* A server that crashed or was killed leaves its board's link: remove it
 * (or a regular file of ours named for its pid; a link is never followed). */
static void remove_board(const struct fleet *f, pid_t pid)
{
    if (!f->board_dir[0])
        return;
    char path[300];
    for (int n = 0; n < 8; n++) {
        if (n == 0)
            snprintf(path, sizeof(path), "%s/%d.board", f->board_dir, (int)pid);
        else
            snprintf(path, sizeof(path), "%s/%d.%d.board", f->board_dir, (int)pid, n);
        struct stat st;
        if (lstat(path, &st) == 0 && (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) &&
            st.st_uid == getuid())
            unlink(path);
    }
}

void fleet_stop_server(struct fleet *f, int i)
{
    struct fleet_server *s = &f->servers[i];
    if (s->pid <= 0)
        return;
    fleet_poll(f);
    if (!s->reaped) {
        if (!s->term_sent) {
            fleet_sample(f, i);        /* the last numbers before it goes; not
                                          after the stop began, when the table
                                          would count a stopping server */
            kill(s->pid, SIGTERM);
        }
        s->term_sent = true;
        if (!wait_reaped(f, &s->reaped, FLEET_STOP_TIMEOUT_MS)) {
            kill(s->pid, SIGKILL);
            s->kill_sent = true;
            wait_reaped(f, &s->reaped, 2000);
        }
    }
    remove_board(f, s->pid);
    char fate[64];
    if (strcmp(fleet_server_fate(s, fate, sizeof(fate)), "ok") != 0)
        log_tail(s->log, s->last_words, sizeof(s->last_words));
}

void fleet_stop_all(struct fleet *f)
{
    fleet_stop_loads(f, 10000);
    /* SIGTERM to every server first, so they stop side by side. */
    fleet_poll(f);
    for (int i = 0; i < f->n; i++)
        if (f->servers[i].pid > 0 && !f->servers[i].reaped) {
            fleet_sample(f, i);
            kill(f->servers[i].pid, SIGTERM);
            f->servers[i].term_sent = true;
        }
    for (int i = 0; i < f->n; i++)
        fleet_stop_server(f, i);
}

void fleet_cleanup(struct fleet *f)
{
    fleet_stop_all(f);
    if (f->dir[0]) {
        char path[300];
        for (int i = 0; i < f->n; i++) {
            unlink(f->servers[i].log);
            unlink(f->servers[i].load_out);
            snprintf(path, sizeof(path), "%s/%s.port", f->dir, f->servers[i].model);
            unlink(path);
        }
        rmdir(f->dir);
        f->dir[0] = '\0';
    }
}

const char *fleet_server_fate(const struct fleet_server *s, char *buf, size_t len)
{
    if (!s->reaped) {
        snprintf(buf, len, "running");
    } else if (WIFSIGNALED(s->exit_status)) {
        /* The signal's name, not strsignal's description: "SIGSEGV" is
         * what a reader looks up, in any language. */
        int sig = WTERMSIG(s->exit_status);
        const char *abbrev = sigabbrev_np(sig);
        char name[32];
        if (abbrev)
            snprintf(name, sizeof(name), "SIG%s", abbrev);
        else
            snprintf(name, sizeof(name), "signal %d", sig);
        snprintf(buf, len, "%s: %s", s->kill_sent && sig == SIGKILL ? "stop timed out"
                                                                    : "crashed", name);
    } else if (WEXITSTATUS(s->exit_status) != 0) {
        snprintf(buf, len, "exit %d", WEXITSTATUS(s->exit_status));
    } else {
        snprintf(buf, len, "ok");
    }
    return buf;
}

bool fleet_report_failure(const struct fleet_server *s, const char *command)
{
    char fate[64];
    if (strcmp(fleet_server_fate(s, fate, sizeof(fate)), "ok") == 0)
        return false;
    fprintf(stderr, "threadlab %s: the %s server %s%s%s\n", command, s->model, fate,
            s->last_words[0] ? "; its last words: " : "", s->last_words);
    return true;
}
