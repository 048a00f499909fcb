/* conn.h -- serving one connection with blocking I/O, shared by the two
 * blocking models (bio: a thread per connection; pool: a pool thread per
 * connection). The models differ in which thread runs conn_serve, not in
 * what it does.
 *
 *   conn_serve:  read() -> session decides -> work (!cpu, !sleep) -> write()
 *                ... until EOF, reset, !quit or a line too long
 *   conn_finish: unlink from the registry, close (lingering after an error
 *                reply), count and log why
 *
 * The registry lists the open connections so that a graceful stop can end
 * every connection's input (shutdown(SHUT_RD)) and wait for them to finish.
 */
#ifndef THREADLAB_CONN_H
#define THREADLAB_CONN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "echo/session.h"
#include "probe/board.h"
#include "server.h"

#define CONN_REJECT_LINGER_MS 100   /* a refused client gets this long to read */

/* One client connection of a blocking model. */
struct conn {
    int fd;                   /* owned by whoever serves it */
    uint64_t id;              /* 1, 2, ... in accept order */
    struct conn *prev, *next; /* in the registry */
    void *owner;              /* the server it belongs to */
    _Atomic bool input_ended; /* a stop shut its read side */
};

/* The open connections. */
struct conn_registry {
    pthread_mutex_t lock;     /* guards the list and count */
    pthread_cond_t emptied;   /* signalled when count drops to 0 */
    struct conn *head;
    uint64_t count;
};

/* Who serves a connection, for !who and the board. */
struct conn_server {
    const char *model;                 /* "bio", "pool" */
    const struct server_opts *opts;    /* --max-line, linger */
    struct board *board;               /* may be NULL */
};

/* ---- the registry (any thread) ---- */

void conn_registry_init(struct conn_registry *r);
void conn_registry_destroy(struct conn_registry *r);
void conn_registry_add(struct conn_registry *r, struct conn *c);
/* Returns how many remain. */
uint64_t conn_registry_remove(struct conn_registry *r, struct conn *c);
uint64_t conn_registry_count(struct conn_registry *r);
/* End every connection's input: a thread blocked in read() first gets what
 * the kernel already holds, then EOF. Call once the acceptor has stopped. */
void conn_registry_shutdown_reads(struct conn_registry *r);
/* Block until no connection is left. */
void conn_registry_wait_empty(struct conn_registry *r);

/* ---- serving (the serving thread) ---- */

/* Answer lines on c until it ends, on the calling thread, whose name and
 * board slot are thread_name and on_board (may be a ref with no board).
 * Returns why it ended and the lines answered in *lines. Does not close. */
enum echo_end conn_serve(const struct conn_server *srv, struct conn *c,
                         const char *thread_name,
                         struct board_thread_ref *on_board, uint64_t *lines);

/* Remove c from r, close its fd (lingering after an error reply), count
 * and log the close with its reason. c itself is not freed. */
void conn_finish(const struct conn_server *srv, struct conn_registry *r,
                 struct conn *c, enum echo_end end, uint64_t lines,
                 bool stopping);

/* --max-conns: if r already holds that many connections, refuse fd (as
 * conn_reject_busy) and return true. Acceptor thread. */
bool conn_refuse_over_limit(const struct server_opts *o, struct conn_registry *r,
                            struct board *board, int fd, uint64_t id);

/* Refuse a new connection: "!err busy", a short lingering close, counted
 * and logged with why. */
void conn_reject_busy(struct board *board, int fd, uint64_t id, const char *why);

#endif
