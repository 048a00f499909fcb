/* reply_batch.c -- one read's replies, written together. See reply_batch.h. */
#include "reply_batch.h"

#include <errno.h>

#include "net/clock.h"
#include "net/net.h"

/* Write iov[0..count) in order, all of it: net_writev (one sendmsg, EINTR
 * retried, MSG_NOSIGNAL: a peer gone is -EPIPE, not a signal) again after
 * each partial write, iov advanced past what went. A blocking socket with
 * SO_SNDTIMEO fails with -EAGAIN when the client stops reading. Returns 0
 * or -errno. */
int reply_batch_write_fd(void *to, struct iovec *iov, int count)
{
    int fd = *(const int *)to;
    while (count > 0) {
        ssize_t n = net_writev(fd, iov, count);
        if (n < 0)
            return (int)n;
        count = net_iov_consume(&iov, count, (size_t)n);
    }
    return 0;
}

/* Write what the batch holds; its lines took from the read at read_ns to
 * now. The clock is read once per write, and the latency recorded for all
 * the batch's lines at once: the same measure in every model. */
int reply_batch_flush(struct reply_batch *rb, uint64_t read_ns)
{
    if (rb->count == 0)
        return 0;
    int rc = rb->write_all(rb->to, rb->iov, rb->count);
    if (rc == 0)
        board_record_latency_n(rb->board, now_ns() - read_ns, rb->lines);
    rb->count = 0;
    rb->lines = 0;
    rb->holds_who = false;
    return rc;
}

/* Add a reply to the batch; a full batch, or a second !who (its bytes live
 * in the session, in a buffer the next !who writes over), is written
 * first. Returns 0 or -errno from that write. */
int reply_batch_add(struct reply_batch *rb, const struct echo_reply *r, uint64_t read_ns)
{
    bool is_who = r->who;
    if (rb->count == REPLY_BATCH_MAX || (is_who && rb->holds_who)) {
        int rc = reply_batch_flush(rb, read_ns);
        if (rc < 0)
            return rc;
    }
    rb->iov[rb->count++] = (struct iovec){ .iov_base = (void *)r->data,
                                           .iov_len = r->len };
    rb->lines += r->lines;
    rb->bytes += r->len;
    rb->holds_who |= is_who;
    return 0;
}

enum echo_end reply_batch_end_of(int rc)
{
    return rc == -EAGAIN ? ECHO_END_STALLED
         : rc == -ECONNRESET || rc == -EPIPE ? ECHO_END_RESET
         : ECHO_END_IO_ERROR;
}
