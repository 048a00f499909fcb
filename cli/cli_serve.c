/* cli_serve.c -- `threadlab serve MODEL`: run one model in the foreground. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_help_zh.h"
#include "loop/checker.h"
#include "loop/loop.h"
#include "threadpool/pool.h"
#include "probe/board.h"
#include "multireactor/multireactor.h"
#include "vthread/runtime.h"
#include "vthread/stack.h"
#include "registry.h"

#define SERVE_PORT_DEFAULT 7007   /* echo is port 7; 7007 needs no root */

/* The defaults the help states, in its order (both languages). */
#define SERVE_HELP_DEFAULTS                                                   \
    SERVE_PORT_DEFAULT, NET_BACKLOG_DEFAULT, POOL_MIN_DEFAULT,                 \
    POOL_MAX_DEFAULT, POOL_QUEUE_DEFAULT, POOL_IDLE_MS_DEFAULT,                \
    POOL_ADAPTIVE_WINDOW_MS_DEFAULT, LOOP_IO_RATIO_DEFAULT,                    \
    CHECKER_WARN_MS_DEFAULT, CHECKER_TRACE_MS_DEFAULT,                         \
    multireactor_default_workers(), vt_default_carriers(),                     \
    VT_STACK_OVERFLOW_EXIT, VT_HANDOFF_MS_DEFAULT, SERVE_PORT_DEFAULT

/* The --help text in Chinese (cli_help_zh.c): the same options. */
static void serve_usage_zh(FILE *out)
{
    fputs(cli_serve_head_zh, out);
    for (int i = 0; model_at(i); i++) {
        const char *summary = cli_model_summary_zh(model_at(i)->name);
        fprintf(out, "  %-14s %s\n", model_at(i)->name,
                summary ? summary : model_at(i)->summary);
    }
    fputc('\n', out);
    fprintf(out, cli_serve_options_zh, SERVE_HELP_DEFAULTS);
}

/* Long function: the --help text, printed in one piece so it reads as the
 * user sees it (in Chinese: serve_usage_zh). */
static void serve_usage(FILE *out)
{
    if (msg_lang() == LANG_ZH) {
        serve_usage_zh(out);
        return;
    }
    fprintf(out,
            "usage: threadlab serve MODEL [options]\n"
            "\n"
            "Run one model's echo server until SIGINT (Ctrl-C) or SIGTERM, then\n"
            "stop gracefully: stop accepting, answer the lines already received,\n"
            "flush, close, join every thread.\n"
            "\n"
            "models:\n");
    for (int i = 0; model_at(i); i++)
        fprintf(out, "  %-14s %s\n", model_at(i)->name, model_at(i)->summary);
    fprintf(out,
            "\n"
            "options (every model):\n"
            "  --port N         TCP port (default %d; 0 picks a free one)\n"
            "  --bind ADDR      address to listen on (default 127.0.0.1)\n"
            "  --backlog N      accept queue length, SO_BACKLOG (default %d)\n"
            "  --max-line N     longest line in bytes, '\\n' not counted (default 65536);\n"
            "                   a longer line gets \"!err line-too-long\" and a close\n"
            "  --keepalive      set SO_KEEPALIVE on every connection\n"
            "  --nodelay        set TCP_NODELAY on every connection\n"
            "  --port-file F    write the port to F once listening (for scripts)\n"
            "  --no-board       do not publish live state (threadlab top will not\n"
            "                   see this server); for measuring the board's cost\n"
            "  --max-conns N    at most N open connections; beyond, \"!err busy\"\n"
            "                   and close (default 0: no limit)\n"
            "  --idle-timeout MS  close a connection that sends nothing this long\n"
            "  --line-timeout MS  close a connection whose line is still incomplete\n"
            "                   after this long (slowloris)\n"
            "  --stall-timeout MS close a connection that reads none of its replies\n"
            "                   for this long (default for all three: 0, never)\n"
            "\n"
            "bio:\n"
            "  --max-threads N  at most N connection threads; beyond, \"!err busy\"\n"
            "                   and close (default 0: no limit)\n"
            "  --stack-kb N     stack size of each connection thread in KiB\n"
            "                   (default: the system's, usually 8192; minimum 16)\n"
            "\n"
            "pool:\n"
            "  --min N          task threads kept even when idle (default %d)\n"
            "  --max N          task threads at most (default %d); connection max+1\n"
            "                   waits in the queue until a thread is free\n"
            "  --queue N        connections that may wait (default %d)\n"
            "  --idle-ms N      end threads above min idle this long (default %d)\n"
            "  --reject P       a full queue: abort (\"!err busy\"), caller-runs (the\n"
            "                   acceptor serves it), discard-oldest, block (default abort)\n"
            "  --adaptive       min follows the average queue length over a window\n"
            "  --adaptive-window-ms N  that window (default %d)\n"
            "\n"
            "reactor:\n"
            "  --offload N      run !cpu, !sleep and !who lines on a business pool of N\n"
            "                   threads; replies come back in order (default 0: on\n"
            "                   the loop, stalling every connection); an offloaded\n"
            "                   !who names the business thread that ran it\n"
            "  --io-ratio P     percent of loop time for I/O vs tasks, 1..100 (default %d)\n"
            "  --blocked-warn-ms N  flag a loop stuck in one handler this long, and\n"
            "                   again every N ms while it stays stuck (default %d)\n"
            "  --blocked-trace-ms N print the stuck loop thread's stack once it has been\n"
            "                   stuck this long (default %d; 0: never)\n"
            "\n"
            "multireactor (and --offload, --io-ratio, --blocked-warn-ms,\n"
            "--blocked-trace-ms as above):\n"
            "  --bosses N       boss loops that accept (default 1)\n"
            "  --workers N      worker loops that serve (default 2 x cores = %d)\n"
            "\n"
            "vthread:\n"
            "  --carriers N     carrier threads running the virtual threads (default:\n"
            "                   the cores = %d)\n"
            "  --stack SIZE     each virtual thread's stack: bytes, or with K or M\n"
            "                   (default 64K, minimum 16K); an overflow is reported\n"
            "                   by name and the server exits with status %d\n"
            "  --handoff-ms N   a carrier stuck this long in a blocking call (!sleep)\n"
            "                   gets a spare thread that takes its run queue (default %d)\n"
            "  --pin            no handoff: a blocking call holds its carrier, and every\n"
            "                   virtual thread on it waits (Java's pinning)\n"
            "\n"
            "The protocol: docs/protocol.md. Try: nc 127.0.0.1 %d, then type a line,\n"
            "or !who, !cpu 1000, !sleep 500, !quit.\n",
            SERVE_HELP_DEFAULTS);
}

static bool parse_reject(const char *cmd, const char *arg, void *reject)
{
    if (pool_reject_parse(arg, reject) < 0) {
        cli_usage_error(cmd, "--reject: '%s' is not abort, caller-runs, discard-oldest "
                        "or block", arg);
        return false;
    }
    return true;
}

/* --stack SIZE: bytes, or a number of K or M (KiB, MiB). */
/* Fill opts from argv (argv[0] is the model); returns CLI_PARSED, or the
 * exit status after --help or an error. */
static int parse_serve_options(int argc, char **argv, struct server_opts *o,
                               const char **port_file)
{
    const struct cli_opt options[] = {
        { CLI_INT("port", &o->listen.port, 0, 65535) },
        { CLI_TEXT("bind", &o->listen.bind) },
        { CLI_INT("backlog", &o->listen.backlog, 1, 1 << 20) },
        { CLI_INT("max-line", &o->max_line, 1, 1 << 30) },
        { CLI_FLAG("keepalive", &o->listen.keepalive) },
        { CLI_FLAG("nodelay", &o->listen.nodelay) },
        { CLI_TEXT("port-file", port_file) },
        { CLI_INT("max-threads", &o->max_threads, 0, 1000000) },
        { CLI_INT("stack-kb", &o->stack_kb, 16, 1 << 20) },
        { CLI_FLAG("no-board", &o->no_board) },
        { CLI_INT("min", &o->pool.min_threads, 0, 10000) },
        { CLI_INT("max", &o->pool.max_threads, 1, 10000) },
        { CLI_INT("queue", &o->pool.queue_capacity, 1, 1000000) },
        { CLI_INT("idle-ms", &o->pool.idle_ms, 0, 86400000) },
        { CLI_CALL("reject", parse_reject, &o->pool.reject) },
        { CLI_FLAG("adaptive", &o->pool.adaptive) },
        { CLI_INT("adaptive-window-ms", &o->pool.adaptive_window_ms, 100, 86400000) },
        { CLI_INT("offload", &o->offload_threads, 0, 10000) },
        { CLI_INT("io-ratio", &o->io_ratio_pct, 1, 100) },
        { CLI_INT("blocked-warn-ms", &o->blocked_warn_ms, 10, 3600000) },
        { CLI_INT("blocked-trace-ms", &o->blocked_trace_ms, 0, 3600000) },
        { CLI_INT("bosses", &o->bosses, 1, 64) },
        { CLI_INT("workers", &o->workers, 1, BOARD_LOOP_SLOTS - 8) },
        { CLI_INT("carriers", &o->carriers, 1, BOARD_LOOP_SLOTS - 8) },
        { CLI_CALL("stack", cli_parse_stack, &o->stack_bytes) },
        { CLI_INT("handoff-ms", &o->handoff_ms, 1, 3600000) },
        { CLI_FLAG("pin", &o->pin) },
        { CLI_INT("max-conns", &o->max_conns, 0, 1000000) },
        { CLI_INT("idle-timeout", &o->idle_timeout_ms, 0, 86400000) },
        { CLI_INT("line-timeout", &o->line_timeout_ms, 0, 86400000) },
        { CLI_INT("stall-timeout", &o->stall_timeout_ms, 0, 86400000) },
        { 0 },
    };
    return cli_parse_options("serve", argc, argv, options, serve_usage, 0, NULL);
}

/* The board's link, for the second signal's handler to remove. */
static char board_link[256];

/* A second SIGINT or SIGTERM during a graceful stop: the person means it.
 * No graceful stop, but no stale board either: `threadlab top` would list
 * it until a reader cleaned it up. A handler, not a thread that waits for
 * the signal: a thread made at the stop would be one /proc/PID/task lists
 * and the board does not. Only async-signal-safe calls here. */
static void second_signal_cb(int sig)
{
    const char *again = sig == SIGINT
        ? "threadlab serve: Interrupt again, exiting at once\n"
        : "threadlab serve: Terminated again, exiting at once\n";
    if (board_link[0])
        unlink(board_link);
    ssize_t n = write(STDERR_FILENO, again, strlen(again));
    (void)n;                    /* nothing to do if stderr is gone */
    _exit(CLI_EXIT_FAILED);
}

/* From now on a stop signal runs second_signal_cb, in this thread: every
 * other thread inherited the blocked mask, so the kernel delivers it here. */
static void exit_on_second_signal(const sigset_t *stop_signals)
{
    char dir[200];
    if (board_dir(dir, sizeof(dir)) == 0)
        snprintf(board_link, sizeof(board_link), "%s/%d.board", dir, (int)getpid());
    struct sigaction sa = { .sa_handler = second_signal_cb };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    pthread_sigmask(SIG_UNBLOCK, stop_signals, NULL);
}

static bool write_port_file(const char *path, uint16_t port)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "threadlab serve: --port-file %s: %s\n", path,
                strerror(errno));
        return false;
    }
    fprintf(f, "%u\n", (unsigned)port);
    return fclose(f) == 0;
}

int cli_serve(int argc, char **argv)
{
    struct server_opts opts;
    const char *port_file = NULL;

    server_opts_init(&opts);
    opts.listen.port = SERVE_PORT_DEFAULT;
    /* No model named, and --help asked (in --lang's language, main.c). */
    if (argc >= 2 && argv[1][0] == '-' && cli_help_asked(argc, argv)) {
        serve_usage(stdout);
        return CLI_EXIT_OK;
    }
    if (argc < 2 || argv[1][0] == '-') {
        cli_usage_error("serve", "name a model first, as in: threadlab serve bio");
        return CLI_EXIT_USAGE;
    }
    const struct model_desc *m = model_find(argv[1]);
    if (!m) {
        char names[128];
        cli_usage_error("serve", "unknown model '%s'; the models are: %s", argv[1],
                        model_names(names, sizeof(names)));
        return CLI_EXIT_USAGE;
    }
    int rc = parse_serve_options(argc - 1, argv + 1, &opts, &port_file);
    if (rc != CLI_PARSED)
        return rc;
    if (opts.pool.min_threads > opts.pool.max_threads) {
        cli_usage_error("serve", "--min %d is more than --max %d",
                        opts.pool.min_threads, opts.pool.max_threads);
        return CLI_EXIT_USAGE;
    }

    /* Block the stop signals before any server thread exists: threads
     * inherit the mask, so only sigwait() below ever receives them. */
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);

    /* This thread goes on the board too ("main"): it waits in sigwait,
     * then joins the others, so the board counts what /proc/PID/task
     * lists. */
    struct board_thread_ref main_on_board;
    opts.main_thread = &main_on_board;
    void *server = m->start(&opts);
    if (!server) {
        fprintf(stderr, "threadlab serve %s: cannot listen on %s:%u: %s\n",
                m->name, opts.listen.bind, (unsigned)opts.listen.port,
                strerror(errno));
        return CLI_EXIT_FAILED;
    }
    uint16_t port = m->port(server);
    printf("threadlab serve %s: listening on %s:%u (pid %d); Ctrl-C stops\n",
           m->name, opts.listen.bind, (unsigned)port, (int)getpid());
    fflush(stdout);
    rc = CLI_EXIT_OK;
    if (port_file && !write_port_file(port_file, port))
        rc = CLI_EXIT_FAILED;

    int sig = 0;
    if (rc == CLI_EXIT_OK)
        sigwait(&stop_signals, &sig);
    fprintf(stderr, "threadlab serve %s: %s, stopping gracefully (again to exit "
            "at once)\n", m->name, sig ? strsignal(sig) : "error");
    exit_on_second_signal(&stop_signals);
    m->stop(server);
    fprintf(stderr, "threadlab serve %s: stopped\n", m->name);
    return rc;
}
