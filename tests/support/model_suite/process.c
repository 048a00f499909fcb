/* process.c -- `threadlab serve` as a process: SIGTERM while clients
 * stream, a second SIGTERM, the default bind. */
#include "internal.h"

/* ---- `threadlab serve` as a process: signals and the default bind ------------ */

struct cli_server {
    pid_t pid;
    uint16_t port;
    char dir[64];
    char log[96];
};

/* Start `threadlab serve MODEL EXTRA...` (the binary of this build, from
 * THREADLAB_BIN) on a free port, SIGPIPE at its default as a shell would
 * leave it, and wait for its port file. */
static void cli_server_start(struct cli_server *cs, const char *extra)
{
    const char *bin = getenv("THREADLAB_BIN");
    if (!bin)
        bin = "build/threadlab";
    snprintf(cs->dir, sizeof(cs->dir), "/tmp/threadlab-suite-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(cs->dir));
    char port_file[96];
    snprintf(port_file, sizeof(port_file), "%s/port", cs->dir);
    snprintf(cs->log, sizeof(cs->log), "%s/log", cs->dir);
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "exec %s serve %s --port 0 --port-file %s %s",
             bin, model_under_test, port_file, extra);
    cs->pid = fork();
    ck_assert_int_ge(cs->pid, 0);
    if (cs->pid == 0) {
        int log = open(cs->log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(log, 1);
        dup2(log, 2);
        signal(SIGPIPE, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    uint64_t deadline = now_ms() + 5000;
    cs->port = 0;
    while (cs->port == 0 && now_ms() < deadline) {
        FILE *f = fopen(port_file, "r");
        unsigned p = 0;
        if (f && fscanf(f, "%u", &p) == 1)
            cs->port = (uint16_t)p;
        if (f)
            fclose(f);
        if (cs->port == 0)
            usleep(20000);
    }
    ck_assert_msg(cs->port != 0, "threadlab serve %s did not start: %s", model_under_test,
                  cmd);
}

/* Wait for the server process; returns how long it took, or -1 after
 * limit_ms (then it is killed). */
static long cli_server_wait(struct cli_server *cs, int limit_ms, int *status)
{
    uint64_t start = now_ms();
    while (now_ms() - start < (uint64_t)limit_ms) {
        if (waitpid(cs->pid, status, WNOHANG) == cs->pid)
            return (long)(now_ms() - start);
        usleep(5000);
    }
    kill(cs->pid, SIGKILL);
    waitpid(cs->pid, status, 0);
    return -1;
}

static void cli_server_cleanup(struct cli_server *cs)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/port", cs->dir);
    unlink(path);
    unlink(cs->log);
    rmdir(cs->dir);
}

/* 50 clients, each at most 64 KiB (5000 lines) ahead of its echoes:
 * enough that the server always holds unanswered lines when the stop
 * comes, few enough that answering them takes well under the 10 s bound
 * on a loaded machine (unpaced, each filled a 6 MB receive buffer, and a
 * stop under ASan took 13 s to answer 300 MB; at 256 KiB each, a reactor
 * under ThreadSanitizer beside other tests at load 25 took 10.3 s). Every line is STREAM_LINE_BYTES long. Waits
 * that only the scheduler decides (every stream under way, no silence on
 * a reader) are allowed 30 s: on a machine shared by a load average of 50,
 * a client thread once sat 10 s before its first send. */
enum { STREAMERS = 50, STREAM_LINE_BYTES = 13, STREAM_AHEAD_BYTES = 64 * 1024,
       STREAM_PATIENCE_S = 30 };

struct streamer {
    int fd, id;
    _Atomic bool done;
    _Atomic uint64_t lines_back;  /* the main thread watches it grow */
    _Atomic uint64_t bytes_sent;
    ssize_t end;            /* 0: EOF; < 0: -errno */
    int send_errno;         /* why the writer stopped: EPIPE once we said FIN */
    int late_errno;         /* SO_ERROR at the end: a reset nobody read */
    bool changed, cut_mid_line;
    char tail[16];          /* what came after the last whole line */
};

static void *stream_lines(void *arg)
{
    struct streamer *s = arg;
    char batch[64 * 16];
    for (uint32_t seq = 0; !atomic_load(&s->done); seq += 64) {
        while (atomic_load(&s->bytes_sent) - atomic_load(&s->lines_back) *
               STREAM_LINE_BYTES > STREAM_AHEAD_BYTES && !atomic_load(&s->done))
            usleep(200);
        size_t len = 0;
        for (uint32_t k = 0; k < 64; k++)
            len += (size_t)sprintf(batch + len, "s%02d %08u\n", s->id, seq + k);
        for (size_t off = 0; off < len;) {
            ssize_t n = send(s->fd, batch + off, len - off, MSG_NOSIGNAL);
            if (n <= 0 && errno != EINTR) {
                s->send_errno = errno;  /* we said FIN (EPIPE): fine */
                return NULL;
            }
            if (n > 0) {
                off += (size_t)n;
                atomic_fetch_add(&s->bytes_sent, (uint64_t)n);
            }
        }
    }
    return NULL;
}

/* Reads the echo and checks each line is the next one sent; at the end
 * says FIN, so the writer stops and the server's linger ends. */
static void *check_stream(void *arg)
{
    struct streamer *s = arg;
    char buf[8192], want[32];
    size_t have = 0;
    for (;;) {
        ssize_t n = recv(s->fd, buf + have, sizeof(buf) - have, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            s->end = n < 0 ? -errno : 0;
            s->cut_mid_line = have > 0;
            memcpy(s->tail, buf, have < sizeof(s->tail) - 1 ? have : sizeof(s->tail) - 1);
            break;
        }
        have += (size_t)n;
        char *line = buf, *nl;
        while ((nl = memchr(line, '\n', have - (size_t)(line - buf)))) {
            int len = sprintf(want, "s%02d %08u\n", s->id,
                              (unsigned)atomic_load(&s->lines_back));
            if (nl + 1 - line != len || memcmp(line, want, (size_t)len) != 0)
                s->changed = true;
            atomic_fetch_add(&s->lines_back, 1);
            line = nl + 1;
        }
        have -= (size_t)(line - buf);
        memmove(buf, line, have);
    }
    atomic_store(&s->done, true);
    shutdown(s->fd, SHUT_WR);
    return NULL;
}

/* SIGTERM while 50 clients stream pipelined lines: each gets back exactly
 * what it sent, up to a line boundary, then EOF (not a reset); the server
 * exits 0 well within its stop deadline (10 s). A reset may reach either
 * of a client's threads (whichever calls first takes the error) or come
 * after both are done, so the writer's error and the socket's pending
 * error are checked too: once the server's kernel resets a connection, the
 * replies still in its send queue are gone. */
START_TEST(sigterm_while_fifty_clients_stream)
{
    struct cli_server cs;
    /* The pool needs a thread per streaming client, or 34 of them wait. */
    cli_server_start(&cs, strcmp(model_under_test, "pool") == 0 ? "--max 64" : "");
    struct streamer *s = calloc(STREAMERS, sizeof(*s));
    pthread_t readers[STREAMERS], writers[STREAMERS];
    for (int i = 0; i < STREAMERS; i++) {
        s[i].fd = tn_connect(cs.port);
        s[i].id = i;
        struct timeval patience = { .tv_sec = STREAM_PATIENCE_S };
        setsockopt(s[i].fd, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof(patience));
        ck_assert_int_eq(pthread_create(&readers[i], NULL, check_stream, &s[i]), 0);
        ck_assert_int_eq(pthread_create(&writers[i], NULL, stream_lines, &s[i]), 0);
    }
    uint64_t deadline = now_ms() + STREAM_PATIENCE_S * 1000;
    for (int i = 0; i < STREAMERS; i++)
        while (atomic_load(&s[i].lines_back) < 100 && now_ms() < deadline)
            usleep(5000);
    kill(cs.pid, SIGTERM);
    int status = 0;
    long took_ms = cli_server_wait(&cs, 15000, &status);
    uint64_t total = 0;
    for (int i = 0; i < STREAMERS; i++) {
        pthread_join(readers[i], NULL);
        pthread_join(writers[i], NULL);
        socklen_t len = sizeof(s[i].late_errno);
        getsockopt(s[i].fd, SOL_SOCKET, SO_ERROR, &s[i].late_errno, &len);
        close(s[i].fd);
        total += s[i].lines_back;
    }
    printf("  %-12s SIGTERM with 50 clients streaming: exited in %ld ms, "
           "%llu lines answered\n", model_under_test, took_ms,
           (unsigned long long)total);
    for (int i = 0; i < STREAMERS; i++) {
        ck_assert_msg(s[i].lines_back >= 100, "client %d got %llu lines before the stop "
                      "(%llu in all), then %s; it sent %llu bytes, then %s", i,
                      (unsigned long long)s[i].lines_back, (unsigned long long)total,
                      s[i].end == 0 ? "EOF" : strerror((int)-s[i].end),
                      (unsigned long long)s[i].bytes_sent,
                      s[i].send_errno ? strerror(s[i].send_errno) : "no error");
        ck_assert_msg(!s[i].changed, "client %d got a line it did not send", i);
        ck_assert_msg(s[i].end == 0, "client %d ended with %s, not EOF", i,
                      strerror((int)-s[i].end));
        ck_assert_msg(!s[i].cut_mid_line, "client %d got half a line after %llu whole "
                      "ones: '%s'", i, (unsigned long long)s[i].lines_back, s[i].tail);
        ck_assert_msg(s[i].send_errno != ECONNRESET && s[i].late_errno != ECONNRESET,
                      "client %d was reset (seen by its %s) after %llu lines back: "
                      "replies not yet sent were thrown away", i,
                      s[i].send_errno == ECONNRESET ? "writer" : "socket, later",
                      (unsigned long long)s[i].lines_back);
    }
    if (took_ms < 0 || took_ms >= 10000) {         /* what the server said, to see why */
        FILE *log = fopen(cs.log, "r");
        char said[256];
        while (log && fgets(said, sizeof(said), log))
            printf("  server said: %s", said);
        if (log)
            fclose(log);
        fflush(stdout);
    }
    ck_assert_msg(took_ms >= 0, "the server did not exit within 15 s of SIGTERM");
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "the server exited with status %d", status);
    ck_assert_int_lt(took_ms, 10000);
    free(s);
    cli_server_cleanup(&cs);
}
END_TEST

/* A second SIGTERM while the graceful stop waits on a 30 s !sleep: the
 * server exits at once, with status 1. "At once" is typically a few ms; the
 * bound is 20 s, well short of the sleep a server that ignored the second
 * signal would wait out. */
START_TEST(second_sigterm_exits_at_once)
{
    const long bound_ms = 20000;
    struct cli_server cs;
    char line[64];
    cli_server_start(&cs, "");
    int fd = tn_connect(cs.port);
    tn_send_str(fd, "hi\n!sleep 30000\n");
    ck_assert_int_eq(tn_read_line(fd, line, sizeof(line)), 3);
    await_threads_in(cs.pid, STATE_BLOCKED_SLEEP, 1, "!sleep 30000 in a served process");
    kill(cs.pid, SIGTERM);
    await_closing(cs.pid);
    ck_assert_msg(waitpid(cs.pid, NULL, WNOHANG) == 0,
                  "the server did not wait for the sleeping line");
    kill(cs.pid, SIGTERM);
    int status = 0;
    long took_ms = cli_server_wait(&cs, bound_ms, &status);
    ck_assert_msg(took_ms >= 0, "a second SIGTERM did not end the server within %ld ms",
                  bound_ms);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    close(fd);
    cli_server_cleanup(&cs);
}
END_TEST

/* With no --bind the server listens on 127.0.0.1 only, as /proc/net/tcp
 * shows: a teaching server is not opened to the network by accident. */
START_TEST(default_bind_is_loopback_only)
{
    struct cli_server cs;
    cli_server_start(&cs, "");
    FILE *f = fopen("/proc/net/tcp", "r");
    ck_assert_ptr_nonnull(f);
    char row[512];
    int listening = 0;
    unsigned addr, port, state;
    while (fgets(row, sizeof(row), f))
        if (sscanf(row, " %*d: %8X:%4X %*8X:%*4X %2X", &addr, &port, &state) == 3 &&
            port == cs.port && state == 0x0A) {
            listening++;
            ck_assert_msg(addr == htonl(INADDR_LOOPBACK), "listening on %08X", addr);
        }
    fclose(f);
    ck_assert_int_eq(listening, 1);
    f = fopen("/proc/net/tcp6", "r");          /* and nothing on IPv6 */
    while (f && fgets(row, sizeof(row), f))
        if (sscanf(row, " %*d: %*32s %*s %2X", &state) == 1) {
            char *colon = strchr(row, ':') ? strchr(strchr(row, ':') + 1, ':') : NULL;
            ck_assert_msg(!(colon && strtoul(colon + 1, NULL, 16) == cs.port &&
                            state == 0x0A), "listening on IPv6 too");
        }
    if (f)
        fclose(f);
    kill(cs.pid, SIGTERM);
    int status;
    ck_assert(cli_server_wait(&cs, 10000, &status) >= 0);
    cli_server_cleanup(&cs);
}
END_TEST

void ms_add_process_tests(TCase *process)
{
    tcase_add_test(process, sigterm_while_fifty_clients_stream);
    tcase_add_test(process, second_sigterm_exits_at_once);
    tcase_add_test(process, default_bind_is_loopback_only);
}
