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
 * The registry counts the open connections and holds the stop signal: an
 * eventfd that every serving thread polls beside its socket. A graceful
 * stop makes it readable, and each thread answers what the kernel holds
 * for it, then closes with a linger, and the stop waits for the count to
 * reach 0.
 *
 * Why not shutdown(SHUT_RD) to wake a thread blocked in read()? Once a
 * socket is shut both ways (our read side, then the linger's SHUT_WR),
 * Linux answers any byte the client still sends with a reset (RFC 1122's
 * "MUST send a reset"; the TCPAbortOnData counter), and the reset throws
 * away every reply still in our send queue: a client streaming lines got
 * half a line and then EOF. So the read side stays open, and the linger
 * drains it until the client's own FIN.
 */
#ifndef THREADLAB_CONN_H
#define THREADLAB_CONN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "acceptor.h"
#include "echo/session.h"
#include "probe/board.h"
#include "server.h"

/* One client connection of a blocking model. */
struct conn {
    int fd;                   /* owned by whoever serves it */
    uint64_t id;              /* 1, 2, ... in accept order */
    void *owner;              /* the server it belongs to */
};

/* The open connections, and the stop signal they all watch. */
struct conn_registry {
    pthread_mutex_t lock;     /* guards count */
    pthread_cond_t emptied;   /* signalled when count drops to 0 */
    uint64_t count;
    int stop_fd;              /* eventfd: readable once a stop began */
};

/* Who serves a connection, for !who and the board. */
struct conn_server {
    const char *model;                 /* "bio", "pool" */
    const struct server_opts *opts;    /* --max-line, linger */
    struct board *board;               /* may be NULL */
    int stop_fd;                       /* the registry's: polled beside
                                          each socket */
};

/* ---- the registry (any thread) ---- */

/* Returns 0 or -errno (no eventfd to spare). Init and destroy: once,
 * before the first and after the last of the other calls. */
int conn_registry_init(struct conn_registry *r);
void conn_registry_destroy(struct conn_registry *r);
/* One more connection, or one fewer (returns how many remain). */
void conn_registry_add(struct conn_registry *r);
uint64_t conn_registry_remove(struct conn_registry *r);
uint64_t conn_registry_count(struct conn_registry *r);
/* Tell every connection, served or still queued, that a stop began: each
 * answers the complete lines among the bytes the kernel holds for it when
 * it notices, and ends. Their sockets are not touched. Call once the
 * acceptor has stopped. */
void conn_registry_stop_input(struct conn_registry *r);
/* Block until no connection is left. */
void conn_registry_wait_empty(struct conn_registry *r);

/* ---- serving (the serving thread) ---- */

/* Answer lines on c until it ends, on the calling thread, whose name and
 * board slot are thread_name and on_board (may be a ref with no board).
 * Returns why it ended and the lines answered in *lines. Does not close. */
enum echo_end conn_serve(const struct conn_server *srv, struct conn *c,
                         const char *thread_name,
                         struct board_thread_ref *on_board, uint64_t *lines);

/* Take c off r's count, close its fd (lingering after an error reply), count
 * and log the close with its reason. c itself is not freed. The serving
 * thread, after conn_serve returned. */
void conn_finish(const struct conn_server *srv, struct conn_registry *r,
                 struct conn *c, enum echo_end end, uint64_t lines,
                 bool stopping);

/* --max-conns: if r already holds that many connections, refuse fd
 * (acceptor_refuse) and return true. Acceptor thread. */
bool conn_refuse_over_limit(const struct server_opts *o, struct conn_registry *r,
                            struct acceptor *a, int fd, uint64_t id);

#endif
