/* reply_batch.h -- one read's replies, collected and written together
 * by a blocking thread (models/blocking/conn.c). Each function is called
 * by the thread that serves the connection, and by no other.
 */
#ifndef THREADLAB_REPLY_BATCH_H
#define THREADLAB_REPLY_BATCH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "echo/session.h"
#include "probe/board.h"

/* The replies of one read, collected to leave in one sendmsg(): with
 * pipelined lines a write per line costs a syscall per line, the largest
 * share of a blocking thread's CPU (docs/performance.md). */
#define REPLY_BATCH_MAX 64      /* replies per write; more: write, go on */

/* How a batch's replies reach the peer: all of iov[0..count) in order,
 * or -errno. A blocking thread writes with sendmsg (reply_batch_write_fd);
 * a virtual thread parks while the socket is full (models/vthread). */
typedef int (*reply_write_fn)(void *to, struct iovec *iov, int count);

struct reply_batch {
    struct board *board;        /* where the lines' latency goes */
    reply_write_fn write_all;   /* how the replies go ... */
    void *to;                   /* ... and where (reply_batch_write_fd: an int fd) */
    struct iovec iov[REPLY_BATCH_MAX]; /* the replies, in order */
    int count;                  /* replies collected, not yet written */
    uint64_t lines;             /* the request lines they answer */
    uint64_t bytes;             /* their bytes */
    bool holds_who;             /* one points at the session's !who buffer,
                                   which the next !who overwrites */
};

/* reply_write_fn for a blocking socket: to points at its fd. SO_SNDTIMEO
 * makes a client that stops reading fail it with -EAGAIN. The
 * connection's thread. */
int reply_batch_write_fd(void *to, struct iovec *iov, int count);

/* Write what the batch holds with write_all, in one sendmsg() (more after a partial
 * write); its lines' latency, from read_ns to now, goes on the board.
 * Returns 0 or -errno. The connection's thread. */
int reply_batch_flush(struct reply_batch *rb, uint64_t read_ns);

/* Add a reply to the batch; a full batch (or a second !who) is written
 * first. Returns 0 or -errno from that write. The connection's thread. */
int reply_batch_add(struct reply_batch *rb, const struct echo_reply *r, uint64_t read_ns);

/* Why a connection ends when a batch's write failed with rc (-errno): a
 * peer that stopped reading (stalled), one gone (reset), or another error.
 * Any thread; pure. */
enum echo_end reply_batch_end_of(int rc);

#endif
