/* server.c -- option defaults shared by every model. See server.h. */
#include "server.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "echo/decoder.h"
#include "loop/checker.h"
#include "loop/loop.h"
#include "vthread/runtime.h"
#include "vthread/stack.h"

void server_opts_init(struct server_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->listen.bind = "127.0.0.1";
    o->listen.backlog = NET_BACKLOG_DEFAULT;
    o->max_line = ECHO_MAX_LINE_DEFAULT;
    o->linger_ms = NET_LINGER_MS_DEFAULT;
    pool_opts_init(&o->pool);
    o->io_ratio_pct = LOOP_IO_RATIO_DEFAULT;
    o->blocked_warn_ms = CHECKER_WARN_MS_DEFAULT;
    o->blocked_trace_ms = CHECKER_TRACE_MS_DEFAULT;
    o->stop_timeout_ms = 10000;
    o->handoff_ms = VT_HANDOFF_MS_DEFAULT;
}

void server_opts_describe(const char *model, const struct server_opts *o,
                          char *out, size_t len)
{
    int n = snprintf(out, len, "bind=%s port=%u backlog=%d max-line=%zu%s%s",
                     o->listen.bind ? o->listen.bind : "127.0.0.1",
                     (unsigned)o->listen.port, o->listen.backlog, o->max_line,
                     o->listen.keepalive ? " keepalive" : "",
                     o->listen.nodelay ? " nodelay" : "");
    if (n < 0 || (size_t)n >= len)
        return;
    if (!strcmp(model, "bio"))
        snprintf(out + n, len - (size_t)n, " max-threads=%d stack-kb=%d",
                 o->max_threads, o->stack_kb);
    else if (!strcmp(model, "pool"))
        snprintf(out + n, len - (size_t)n, " min=%d max=%d queue=%d idle-ms=%d "
                 "reject=%s%s", o->pool.min_threads, o->pool.max_threads,
                 o->pool.queue_capacity, o->pool.idle_ms,
                 pool_reject_name(o->pool.reject), o->pool.adaptive ? " adaptive" : "");
    else if (!strcmp(model, "multireactor"))
        snprintf(out + n, len - (size_t)n, " bosses=%d workers=%d offload=%d "
                 "io-ratio=%d blocked-warn-ms=%d blocked-trace-ms=%d", o->bosses,
                 o->workers, o->offload_threads, o->io_ratio_pct, o->blocked_warn_ms,
                 o->blocked_trace_ms);
    else if (!strcmp(model, "vthread"))
        snprintf(out + n, len - (size_t)n, " carriers=%d stack=%zu handoff-ms=%d%s",
                 o->carriers > 0 ? o->carriers : vt_default_carriers(),
                 o->stack_bytes ? o->stack_bytes : (size_t)VT_STACK_DEFAULT_BYTES, o->handoff_ms,
                 o->pin ? " pin" : "");
    else
        snprintf(out + n, len - (size_t)n, " offload=%d io-ratio=%d blocked-warn-ms=%d "
                 "blocked-trace-ms=%d", o->offload_threads, o->io_ratio_pct,
                 o->blocked_warn_ms, o->blocked_trace_ms);
}

struct board *server_open_board(const char *model, const struct server_opts *opts)
{
    char described[BOARD_OPTIONS_BYTES];
    if (opts->no_board)
        return NULL;
    server_opts_describe(model, opts, described, sizeof(described));
    struct board *b = board_create(model, described);
    if (!b) {
        fprintf(stderr, "%s: no live board (%s); threadlab top will not see "
                "this server\n", model, strerror(errno));
        return NULL;
    }
    /* First, before the model starts any thread: from the port being
     * printed on, the board shows every thread /proc/PID/task lists. */
    if (opts->main_thread) {
        board_thread_begin(b, opts->main_thread, ROLE_MAIN, "main", 0);
        board_thread_state(b, opts->main_thread, STATE_WAITING);
    }
    return b;
}
