/* server.c -- a model's live board, opened as every model opens it. See
 * server.h. */
#include "server.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The options every model shares, then the model's own. */
static void describe(const struct server_opts *o, const char *own_options, char *out,
                     size_t len)
{
    snprintf(out, len, "bind=%s port=%u backlog=%d max-line=%zu%s%s%s",
             o->listen.bind ? o->listen.bind : "127.0.0.1",
             (unsigned)o->listen.port, o->listen.backlog, o->max_line,
             o->listen.keepalive ? " keepalive" : "",
             o->listen.nodelay ? " nodelay" : "", own_options);
}

struct board *server_open_board(const char *model, const struct server_opts *opts,
                                const char *own_options)
{
    char described[BOARD_OPTIONS_BYTES];
    if (opts->no_board)
        return NULL;
    describe(opts, own_options, described, sizeof(described));
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
