/* blocking.h -- what a blocking server is, in bio and in pool alike: its
 * options, the listening socket with its acceptor thread, the registry of
 * open connections and the board. Each model adds only how a connection
 * gets a thread: bio starts one (models/bio/bio.c), pool queues it as a
 * task for the watchdog pool (models/pool/poolserver.c). Either way the
 * thread runs conn_serve (conn.h) until the connection ends.
 *
 * A model's server struct begins with a struct blocking_server (its first
 * member, as a libuv handle begins with uv_handle_t's fields), so that
 * blocking_new can make the whole of it. Lifetime: blocking_new, then
 * acceptor_start with the model's callback; to stop,
 * blocking_stop_accepting, the model waits for its threads, then
 * blocking_free.
 */
#ifndef THREADLAB_BLOCKING_BLOCKING_H
#define THREADLAB_BLOCKING_BLOCKING_H

#include <stddef.h>

#include "blocking/acceptor.h"
#include "blocking/conn.h"
#include "server.h"

struct blocking_server {
    struct server_opts opts;        /* the model's options (a copy) */
    struct conn_server serving;     /* what conn_serve needs */
    struct acceptor acceptor;       /* the listening socket and its thread */
    struct conn_registry conns;     /* accepted and not yet closed */
    struct board *board;            /* live state; NULL with --no-board */
};

/* Allocate size bytes (zeroed) for a model's server that begins with a
 * struct blocking_server; copy opts, make the registry, listen, create
 * model's board. Does not accept yet: the model starts its acceptor with
 * its own callback. Returns the server, or NULL with errno set and nothing
 * left open. Any thread. */
void *blocking_new(size_t size, const char *model, const struct server_opts *opts,
                   const char *own_options);

/* Admit connection fd (acceptor thread): refuse it over --max-conns, or
 * for want of memory, and return NULL; else return size bytes of zeroed
 * memory for the model's record of it (free() it). */
void *blocking_admit(struct blocking_server *b, int fd, uint64_t id, size_t size);

/* The first steps of a graceful stop: mark the board closing, tell every
 * connection to answer what it holds and leave, then stop the acceptor
 * (no connection arrives after this returns; those it takes meanwhile see
 * the stop before their first read). Any thread but the acceptor's. */
void blocking_stop_accepting(struct blocking_server *b);

/* Stop the acceptor if it still runs (or was never started), close the
 * board and the registry, free the model's server. Once no connection is
 * left. Any thread but the acceptor's. */
void blocking_free(struct blocking_server *b);

#endif
