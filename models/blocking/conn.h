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
 * The registry counts the open connections and keeps a list of those
 * being served, with the thread serving each. The serving thread blocks in
 * read() itself, as the naive thread-per-connection server does: one
 * read() and one write per batch of lines, no poll() before each read. A
 * graceful stop sets the registry's flag, which a thread loads (no
 * syscall) before each read, and sends CONN_WAKE_SIGNAL to every thread
 * that may be blocked in read(); its handler does nothing and is installed
 * without SA_RESTART, so the read fails with EINTR and the thread sees the
 * flag. It then answers what the kernel held for it at that moment, and
 * closes with a linger; the stop waits for the count to reach 0.
 *
 * Why a signal, and not shutdown(SHUT_RD), which also wakes a blocked
 * read()? Once a socket is shut both ways (our read side, then the
 * linger's SHUT_WR), Linux answers any byte the client still sends with a
 * reset (RFC 1122's "MUST send a reset"; the TCPAbortOnData counter), and
 * the reset throws away every reply still in our send queue: a client
 * streaming lines got half a line and then EOF. So the read side stays
 * open, and the linger drains it until the client's own FIN. (The JDK
 * interrupts a thread blocked in a channel's read the same way:
 * NativeThread.signal, a real-time signal with an empty handler.)
 *
 * The timeouts (--idle-timeout, --line-timeout) are SO_RCVTIMEO on the
 * socket: a read() blocked past it fails with EAGAIN, and the thread
 * compares the clock with its own deadline. setsockopt runs only when the
 * armed value must change (idle: once per connection; a partial line: its
 * remaining time), and an EINTR or EAGAIN re-arms what is left, so a read
 * retried after each of many signals still ends at the deadline.
 */
#ifndef THREADLAB_CONN_H
#define THREADLAB_CONN_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "acceptor.h"
#include "echo/session.h"
#include "probe/board.h"
#include "server.h"

/* The signal a stop sends to a thread blocked in read(): a real-time
 * signal nobody else uses (the EINTR fault shim takes SIGRTMIN + 4). Its
 * handler does nothing; its whole point is the EINTR. Serving threads must
 * not block it (conn_serve unblocks it). */
#define CONN_WAKE_SIGNAL (SIGRTMIN + 3)
/* A signal can reach a thread just after it looked at the stop flag and
 * just before it entered read(): then it blocks anyway. The stop signals
 * again every this many ms any thread that has not yet seen it. */
#define CONN_WAKE_RETRY_MS 10

/* Where a serving thread is, as a stop sees it. ANSWERING -> READING
 * before each read, READING -> ANSWERING after it brought bytes, READING
 * -> DRAINING once it saw the stop (for good). */
enum conn_phase {
    CONN_ANSWERING,           /* answering, writing or at work (!sleep):
                                 looks at the stop flag before it reads */
    CONN_READING,             /* may be blocked in read(): a stop signals
                                 it, and waits until it saw the stop */
    CONN_DRAINING,            /* saw the stop: reads only what was held */
};

/* One client connection of a blocking model. */
struct conn {
    int fd;                   /* owned by whoever serves it */
    uint64_t id;              /* 1, 2, ... in accept order */
    void *owner;              /* the server it belongs to */
    pthread_t thread;         /* serving it, while on the serving list */
    _Atomic int phase;        /* enum conn_phase, set by that thread */
    struct conn *prev, *next; /* the registry's serving list (its lock) */
};

/* The open connections, those being served, and the stop flag. */
struct conn_registry {
    pthread_mutex_t lock;     /* guards count and serving */
    pthread_cond_t changed;   /* count dropped to 0, or a thread saw the
                                 stop or left the serving list */
    uint64_t count;           /* accepted, not closed (queued ones too) */
    struct conn *serving;     /* whose thread is in conn_serve, newest first */
    atomic_bool stopping;     /* a stop began; never cleared */
};

/* Who serves a connection, for !who and the board. */
struct conn_server {
    const char *model;                 /* "bio", "pool" */
    const struct server_opts *opts;    /* --max-line, linger */
    struct board *board;               /* may be NULL */
    struct conn_registry *conns;       /* the stop flag, and the serving
                                          list conn_serve joins */
};

/* ---- the registry (any thread) ---- */

/* Returns 0 or -errno (the wake signal's handler or the condition
 * variable could not be set up).
 * Init and destroy: once, before the first and after the last of the
 * other calls. */
int conn_registry_init(struct conn_registry *r);
void conn_registry_destroy(struct conn_registry *r);
/* One more connection, or one fewer (returns how many remain). */
void conn_registry_add(struct conn_registry *r);
uint64_t conn_registry_remove(struct conn_registry *r);
uint64_t conn_registry_count(struct conn_registry *r);
/* Tell every connection, served or still queued, that a stop began: each
 * answers the complete lines among the bytes the kernel holds for it when
 * it notices, and ends. Sets the flag, signals every thread that may be
 * blocked in read() (CONN_WAKE_SIGNAL), and returns once each of those
 * has seen the stop, signalling again every CONN_WAKE_RETRY_MS. A thread
 * at work (!sleep, a blocked write) is not waited for: it sees the flag
 * before its next read. Their sockets are not touched. Call once the
 * acceptor has stopped. */
void conn_registry_stop_input(struct conn_registry *r);
/* Block until no connection is left. */
void conn_registry_wait_empty(struct conn_registry *r);
/* c's thread begins serving it (on the list a stop signals; the wake
 * signal unblocked), is done with it (off the list, before its fd is
 * closed), or saw a stop. Each called by c's serving thread. */
void conn_registry_enter(struct conn_registry *r, struct conn *c);
void conn_registry_leave(struct conn_registry *r, struct conn *c);
void conn_registry_saw_stop(struct conn_registry *r, struct conn *c);

/* ---- serving (the serving thread) ---- */

/* Answer lines on c until it ends, on the calling thread, whose name and
 * board slot are thread_name and on_board (may be a ref with no board).
 * Meanwhile c is on srv->conns's serving list, so a stop can signal this
 * thread; it leaves the list before it returns, so a stop never signals
 * a thread that has moved on (or ended). Returns why it ended and
 * the lines answered in *lines. Does not close. */
enum echo_end conn_serve(const struct conn_server *srv, struct conn *c,
                         const char *thread_name,
                         struct board_thread_ref *on_board, uint64_t *lines);

/* Take c off srv->conns's count, close its fd (lingering after an error
 * reply, or once the stop began: the client may be mid-stream; the thread, on_board,
 * is shown blocked in read meanwhile), count and log the close with its
 * reason. c itself is not freed. The serving thread, after conn_serve
 * returned. */
void conn_finish(const struct conn_server *srv, struct conn *c,
                 struct board_thread_ref *on_board, enum echo_end end, uint64_t lines);

/* --max-conns: if r already holds that many connections, refuse fd
 * (acceptor_refuse) and return true. Acceptor thread. */
bool conn_refuse_over_limit(const struct server_opts *o, struct conn_registry *r,
                            struct acceptor *a, int fd, uint64_t id);

#endif
