/* acceptor.h -- the acceptor thread of the blocking models.
 *
 * One thread waits in poll() on the listening socket and on an eventfd that
 * acceptor_stop writes, accepts, numbers each connection and hands it to
 * the model's callback: BIO spawns a thread, the pool server submits a
 * task. Accept errors are sorted into expected ones (EMFILE, ECONNABORTED:
 * counted and logged, the loop goes on) and fatal ones.
 *
 * It also refuses connections ("!err busy": --max-conns, --max-threads, a
 * full pool queue) without waiting for them. A refused socket still needs
 * a lingering close, or a reset could destroy the reply; done on this
 * thread with blocking calls, that took about 0.2 s per refusal, and 300
 * silent clients kept the next one waiting a minute. So the acceptor keeps
 * its refused sockets in a set that the same poll() watches: it drops what
 * they send, and closes each at its FIN or ACCEPTOR_REFUSAL_LINGER_MS
 * after the refusal, whichever is first.
 */
#ifndef THREADLAB_ACCEPTOR_H
#define THREADLAB_ACCEPTOR_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "net/net.h"
#include "probe/board.h"

#define ACCEPTOR_TICK_MS 1000   /* the tick callback runs at least this often */
#define ACCEPTOR_REFUSAL_LINGER_MS 100  /* a refused client gets this long to read */
#define ACCEPTOR_REFUSALS_MAX 1024      /* refused sockets lingering at once */

/* A new connection: fd (blocking, close-on-exec) and its number. The
 * callback owns fd. Acceptor thread. */
typedef void (*acceptor_accept_cb)(void *owner, int fd, uint64_t id);

/* After every wakeup and at least every ACCEPTOR_TICK_MS (BIO joins its
 * ended threads here). Acceptor thread. May be NULL. */
typedef void (*acceptor_tick_cb)(void *owner);

/* A refused connection, lingering until its FIN or its deadline. */
struct acceptor_refusal {
    int fd;                       /* our write side shut, nonblocking */
    uint64_t deadline_ns;         /* closed then, FIN or not */
};

struct acceptor {
    struct net_acceptor net;      /* the listening socket and spare fd */
    int wake_fd;                  /* eventfd: acceptor_stop wakes the poll */
    pthread_t thread;
    atomic_bool stopping;
    struct board *board;          /* may be NULL */
    struct board_thread_ref on_board;
    uint64_t next_conn_id;        /* acceptor thread only */
    acceptor_accept_cb on_accept;
    acceptor_tick_cb on_tick;
    void *owner;
    struct acceptor_refusal refusals[ACCEPTOR_REFUSALS_MAX]; /* oldest first */
    int nrefusals;                /* acceptor thread only */
};

/* Listen (blocking socket). Returns 0 or -errno. Any thread, before
 * acceptor_start. */
int acceptor_open(struct acceptor *a, const struct net_listen_opts *o);

/* Start the thread. Returns 0 or -errno (the socket stays open). Any
 * thread; the callbacks run on the acceptor thread. */
int acceptor_start(struct acceptor *a, struct board *board,
                   acceptor_accept_cb on_accept, acceptor_tick_cb on_tick,
                   void *owner);

/* Refuse a new connection: count it on the board, log why, say "!err
 * busy", and leave the lingering close to the refusal set, so the acceptor
 * goes back to accepting at once. With the set full, the oldest refusal
 * is closed early (logged). Takes fd. Acceptor thread only (the accept
 * callback, or what it calls). */
void acceptor_refuse(struct acceptor *a, int fd, uint64_t id, const char *why);

/* Stop accepting: wake the thread, join it (it first hands over the
 * connections waiting in the accept queue, at most its length, so that
 * the close resets none of them, then lingers out the refusals it holds,
 * at most ACCEPTOR_REFUSAL_LINGER_MS), close the
 * socket. Any thread but the acceptor. Safe after a failed or missing
 * acceptor_start. */
void acceptor_stop(struct acceptor *a);

/* The port it listens on. Any thread. */
uint16_t acceptor_port(const struct acceptor *a);

#endif
