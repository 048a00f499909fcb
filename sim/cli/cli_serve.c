/* cli_serve.c -- `threadlab serve MODEL`: run one model in the foreground. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "loop/checker.h"
#include "loop/loop.h"
#include "threadpool/pool.h"
#include "probe/board.h"
#include "multireactor/multireactor.h"
#include "registry.h"

#define SERVE_PORT_DEFAULT 7007   /* echo is port 7; 7007 needs no root */

static void serve_usage(FILE *out)
{
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
            "The protocol: docs/protocol.md. Try: nc 127.0.0.1 %d, then type a line,\n"
            "or !who, !cpu 1000, !sleep 500, !quit.\n",
            SERVE_PORT_DEFAULT, NET_BACKLOG_DEFAULT, POOL_MIN_DEFAULT,
            POOL_MAX_DEFAULT, POOL_QUEUE_DEFAULT, POOL_IDLE_MS_DEFAULT,
            POOL_ADAPTIVE_WINDOW_MS_DEFAULT, LOOP_IO_RATIO_DEFAULT,
            CHECKER_WARN_MS_DEFAULT, CHECKER_TRACE_MS_DEFAULT,
            multireactor_default_workers(), SERVE_PORT_DEFAULT);
}

enum {
    OPT_PORT = 256, OPT_BIND, OPT_BACKLOG, OPT_MAX_LINE, OPT_KEEPALIVE,
    OPT_NODELAY, OPT_PORT_FILE, OPT_MAX_THREADS, OPT_STACK_KB, OPT_NO_BOARD,
    OPT_MIN, OPT_MAX, OPT_QUEUE, OPT_IDLE_MS, OPT_REJECT, OPT_ADAPTIVE,
    OPT_ADAPTIVE_WINDOW, OPT_OFFLOAD, OPT_IO_RATIO, OPT_BLOCKED_WARN, OPT_BLOCKED_TRACE, OPT_BOSSES,
    OPT_WORKERS, OPT_MAX_CONNS, OPT_IDLE_TIMEOUT, OPT_LINE_TIMEOUT,
    OPT_STALL_TIMEOUT,
};

static const struct option serve_options[] = {
    { "port", required_argument, NULL, OPT_PORT },
    { "bind", required_argument, NULL, OPT_BIND },
    { "backlog", required_argument, NULL, OPT_BACKLOG },
    { "max-line", required_argument, NULL, OPT_MAX_LINE },
    { "keepalive", no_argument, NULL, OPT_KEEPALIVE },
    { "nodelay", no_argument, NULL, OPT_NODELAY },
    { "port-file", required_argument, NULL, OPT_PORT_FILE },
    { "max-threads", required_argument, NULL, OPT_MAX_THREADS },
    { "stack-kb", required_argument, NULL, OPT_STACK_KB },
    { "no-board", no_argument, NULL, OPT_NO_BOARD },
    { "min", required_argument, NULL, OPT_MIN },
    { "max", required_argument, NULL, OPT_MAX },
    { "queue", required_argument, NULL, OPT_QUEUE },
    { "idle-ms", required_argument, NULL, OPT_IDLE_MS },
    { "reject", required_argument, NULL, OPT_REJECT },
    { "adaptive", no_argument, NULL, OPT_ADAPTIVE },
    { "adaptive-window-ms", required_argument, NULL, OPT_ADAPTIVE_WINDOW },
    { "offload", required_argument, NULL, OPT_OFFLOAD },
    { "io-ratio", required_argument, NULL, OPT_IO_RATIO },
    { "blocked-warn-ms", required_argument, NULL, OPT_BLOCKED_WARN },
    { "blocked-trace-ms", required_argument, NULL, OPT_BLOCKED_TRACE },
    { "bosses", required_argument, NULL, OPT_BOSSES },
    { "workers", required_argument, NULL, OPT_WORKERS },
    { "max-conns", required_argument, NULL, OPT_MAX_CONNS },
    { "idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT },
    { "line-timeout", required_argument, NULL, OPT_LINE_TIMEOUT },
    { "stall-timeout", required_argument, NULL, OPT_STALL_TIMEOUT },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

/* Fill opts from argv; returns false after printing what is wrong. */
static bool parse_serve_options(int argc, char **argv, struct server_opts *o,
                                const char **port_file)
{
    long v;
    int c;

    opterr = 0;
    while ((c = getopt_long(argc, argv, "+h", serve_options, NULL)) != -1) {
        const char *flag = argv[optind - 1];
        switch (c) {
        case OPT_PORT:
            if (!cli_parse_long("serve", "--port", optarg, 0, 65535, &v))
                return false;
            o->listen.port = (uint16_t)v;
            break;
        case OPT_BIND:
            o->listen.bind = optarg;
            break;
        case OPT_BACKLOG:
            if (!cli_parse_long("serve", "--backlog", optarg, 1, 1 << 20, &v))
                return false;
            o->listen.backlog = (int)v;
            break;
        case OPT_MAX_LINE:
            if (!cli_parse_long("serve", "--max-line", optarg, 1, 1 << 30, &v))
                return false;
            o->max_line = (size_t)v;
            break;
        case OPT_KEEPALIVE:
            o->listen.keepalive = true;
            break;
        case OPT_NODELAY:
            o->listen.nodelay = true;
            break;
        case OPT_PORT_FILE:
            *port_file = optarg;
            break;
        case OPT_MAX_THREADS:
            if (!cli_parse_long("serve", "--max-threads", optarg, 0, 1000000, &v))
                return false;
            o->max_threads = (int)v;
            break;
        case OPT_STACK_KB:
            if (!cli_parse_long("serve", "--stack-kb", optarg, 16, 1 << 20, &v))
                return false;
            o->stack_kb = (int)v;
            break;
        case OPT_NO_BOARD:
            o->no_board = true;
            break;
        case OPT_MIN:
            if (!cli_parse_long("serve", "--min", optarg, 0, 10000, &v))
                return false;
            o->pool.min_threads = (int)v;
            break;
        case OPT_MAX:
            if (!cli_parse_long("serve", "--max", optarg, 1, 10000, &v))
                return false;
            o->pool.max_threads = (int)v;
            break;
        case OPT_QUEUE:
            if (!cli_parse_long("serve", "--queue", optarg, 1, 1000000, &v))
                return false;
            o->pool.queue_capacity = (int)v;
            break;
        case OPT_IDLE_MS:
            if (!cli_parse_long("serve", "--idle-ms", optarg, 0, 86400000, &v))
                return false;
            o->pool.idle_ms = (int)v;
            break;
        case OPT_REJECT:
            if (pool_reject_parse(optarg, &o->pool.reject) < 0) {
                cli_usage_error("serve", "--reject: '%s' is not abort, caller-runs, "
                                "discard-oldest or block", optarg);
                return false;
            }
            break;
        case OPT_ADAPTIVE:
            o->pool.adaptive = true;
            break;
        case OPT_ADAPTIVE_WINDOW:
            if (!cli_parse_long("serve", "--adaptive-window-ms", optarg, 100,
                                86400000, &v))
                return false;
            o->pool.adaptive_window_ms = (int)v;
            break;
        case OPT_OFFLOAD:
            if (!cli_parse_long("serve", "--offload", optarg, 0, 10000, &v))
                return false;
            o->offload_threads = (int)v;
            break;
        case OPT_IO_RATIO:
            if (!cli_parse_long("serve", "--io-ratio", optarg, 1, 100, &v))
                return false;
            o->io_ratio_pct = (int)v;
            break;
        case OPT_BLOCKED_WARN:
            if (!cli_parse_long("serve", "--blocked-warn-ms", optarg, 10, 3600000, &v))
                return false;
            o->blocked_warn_ms = (int)v;
            break;
        case OPT_BLOCKED_TRACE:
            if (!cli_parse_long("serve", "--blocked-trace-ms", optarg, 0, 3600000, &v))
                return false;
            o->blocked_trace_ms = (int)v;
            break;
        case OPT_BOSSES:
            if (!cli_parse_long("serve", "--bosses", optarg, 1, 64, &v))
                return false;
            o->bosses = (int)v;
            break;
        case OPT_MAX_CONNS:
            if (!cli_parse_long("serve", "--max-conns", optarg, 0, 1000000, &v))
                return false;
            o->max_conns = (int)v;
            break;
        case OPT_IDLE_TIMEOUT:
            if (!cli_parse_long("serve", "--idle-timeout", optarg, 0, 86400000, &v))
                return false;
            o->idle_timeout_ms = (int)v;
            break;
        case OPT_LINE_TIMEOUT:
            if (!cli_parse_long("serve", "--line-timeout", optarg, 0, 86400000, &v))
                return false;
            o->line_timeout_ms = (int)v;
            break;
        case OPT_STALL_TIMEOUT:
            if (!cli_parse_long("serve", "--stall-timeout", optarg, 0, 86400000, &v))
                return false;
            o->stall_timeout_ms = (int)v;
            break;
        case OPT_WORKERS:
            if (!cli_parse_long("serve", "--workers", optarg, 1, BOARD_LOOP_SLOTS - 8, &v))
                return false;
            o->workers = (int)v;
            break;
        case 'h':
            serve_usage(stdout);
            exit(CLI_EXIT_OK);
        default:
            cli_usage_error("serve", optopt ? "option '%s' needs a value"
                                            : "unknown option '%s'", flag);
            return false;
        }
    }
    return true;
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
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        serve_usage(stdout);
        return CLI_EXIT_OK;
    }
    if (argc < 2 || argv[1][0] == '-') {
        cli_usage_error("serve", "name a model first, as in: threadlab serve bio");
        return CLI_EXIT_USAGE;
    }
    const struct model_desc *m = model_find(argv[1]);
    if (!m) {
        cli_usage_error("serve", "unknown model '%s'", argv[1]);
        return CLI_EXIT_USAGE;
    }
    if (!parse_serve_options(argc - 1, argv + 1, &opts, &port_file))
        return CLI_EXIT_USAGE;
    if (optind < argc - 1) {
        cli_usage_error("serve", "unexpected argument '%s'", argv[optind + 1]);
        return CLI_EXIT_USAGE;
    }
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
    int rc = CLI_EXIT_OK;
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
