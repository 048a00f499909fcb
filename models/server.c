/* server.c -- option defaults shared by every model. See server.h. */
#include "server.h"

#include <string.h>

#include "echo/decoder.h"

void server_opts_init(struct server_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->listen.bind = "127.0.0.1";
    o->listen.backlog = NET_BACKLOG_DEFAULT;
    o->max_line = ECHO_MAX_LINE_DEFAULT;
    o->linger_ms = NET_LINGER_MS_DEFAULT;
}
