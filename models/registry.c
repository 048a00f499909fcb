/* registry.c -- every model by name. See registry.h. */
#include "registry.h"

#include <stdio.h>
#include <string.h>

#include "bio/bio.h"
#include "echo/decoder.h"
#include "loop/checker.h"
#include "loop/loop.h"
#include "pool/poolserver.h"
#include "multireactor/multireactor.h"
#include "reactor/reactor.h"
#include "vthread/runtime.h"
#include "vthread/vthread.h"

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

static void *bio_start_any(const struct server_opts *o) { return bio_start(o); }
static uint16_t bio_port_any(const void *s) { return bio_port(s); }
static void bio_stop_any(void *s) { bio_stop(s); }

static void *pool_start_any(const struct server_opts *o) { return pool_server_start(o); }
static uint16_t pool_port_any(const void *s) { return pool_server_port(s); }
static void pool_stop_any(void *s) { pool_server_stop(s); }

static void *reactor_start_any(const struct server_opts *o) { return reactor_start(o); }
static uint16_t reactor_port_any(const void *s) { return reactor_port(s); }
static void reactor_stop_any(void *s) { reactor_stop(s); }

static void *multi_start_any(const struct server_opts *o) { return multireactor_start(o); }
static uint16_t multi_port_any(const void *s) { return multireactor_port(s); }
static void multi_stop_any(void *s) { multireactor_stop(s); }

static void *vthread_start_any(const struct server_opts *o) { return vthread_start(o); }
static uint16_t vthread_port_any(const void *s) { return vthread_port(s); }
static void vthread_stop_any(void *s) { vthread_stop(s); }

static const struct model_desc models[] = {
    { "bio", "thread per connection, blocking I/O",
      bio_start_any, bio_port_any, bio_stop_any },
    { "pool", "acceptor + watchdog thread pool, a task per connection",
      pool_start_any, pool_port_any, pool_stop_any },
    { "reactor", "one event loop does accept, I/O and handlers",
      reactor_start_any, reactor_port_any, reactor_stop_any },
    { "multireactor", "boss loops accept, worker loops serve (Netty)",
      multi_start_any, multi_port_any, multi_stop_any },
    { "vthread", "virtual threads: blocking-style code on carrier threads (M:N)",
      vthread_start_any, vthread_port_any, vthread_stop_any },
};

const struct model_desc *model_at(int i)
{
    if (i < 0 || i >= (int)(sizeof(models) / sizeof(models[0])))
        return NULL;
    return &models[i];
}

const struct model_desc *model_find(const char *name)
{
    for (int i = 0; model_at(i); i++)
        if (strcmp(models[i].name, name) == 0)
            return &models[i];
    return NULL;
}

const char *model_names(char *buf, size_t len)
{
    size_t at = 0;
    if (len > 0)
        buf[0] = '\0';
    for (int i = 0; model_at(i) && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? ", " : "", model_at(i)->name);
    return buf;
}
