/* acceptor.h -- the acceptor thread of the blocking models.
 *
 * One thread waits in poll() on the listening socket and on an eventfd that
 * acceptor_stop writes, accepts, numbers each connection and hands it to
 * the model's callback: BIO spawns a thread, the pool server submits a
 * task. Accept errors are sorted into expected ones (EMFILE, ECONNABORTED:
 * counted and logged, the loop goes on) and fatal ones.
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

/* A new connection: fd (blocking, close-on-exec) and its number. The
 * callback owns fd. Acceptor thread. */
typedef void (*acceptor_accept_cb)(void *owner, int fd, uint64_t id);

/* After every wakeup and at least every ACCEPTOR_TICK_MS (BIO joins its
 * ended threads here). Acceptor thread. May be NULL. */
typedef void (*acceptor_tick_cb)(void *owner);

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
};

/* Listen (blocking socket). Returns 0 or -errno. */
int acceptor_open(struct acceptor *a, const struct net_listen_opts *o);

/* Start the thread. Returns 0 or -errno (the socket stays open). */
int acceptor_start(struct acceptor *a, struct board *board,
                   acceptor_accept_cb on_accept, acceptor_tick_cb on_tick,
                   void *owner);

/* Stop accepting: wake the thread, join it, close the socket. Any thread
 * but the acceptor. Safe after a failed or missing acceptor_start. */
void acceptor_stop(struct acceptor *a);

uint16_t acceptor_port(const struct acceptor *a);

/* True once acceptor_stop began. Any thread. */
bool acceptor_stopping(struct acceptor *a);

#endif
