/* outbuf.h -- a channel's output: one plain buffer. Replies are copied in
 * behind what waits, and written from the front as the socket takes them:
 * data[off, len) is what the socket has not taken yet.
 *
 * Every reply is copied, the echoes too. Sending an echo from the input
 * buffer it lies in saves that copy: 8 user instructions of 140 per line
 * (bench/profile.sh, the reactor at 64 connections x depth 16: memcpy),
 * next to a line's system calls about 1% of its CPU, which make bench's
 * reactor and multireactor cells do not resolve (docs/performance.md).
 * It took a second buffer, two write paths and a rule about when the
 * input may be reused: not worth it.
 *
 * Every function: the channel's loop thread only.
 */
#ifndef THREADLAB_OUTBUF_H
#define THREADLAB_OUTBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct outbuf {
    char *data;
    size_t off, len, cap;        /* data[off, len) waits for the socket */
};

/* Bytes waiting for the socket. */
static inline size_t outbuf_pending(const struct outbuf *b)
{
    return b->len - b->off;
}

/* Copy n bytes behind what waits. Returns false when out of memory
 * (nothing copied). */
bool outbuf_append(struct outbuf *b, const char *bytes, size_t n);

/* One write of what waits to fd (nonblocking). Returns the bytes the
 * socket took (they leave the buffer), 0 if nothing waited, or -errno
 * (-EAGAIN: the socket took none). */
ssize_t outbuf_write(struct outbuf *b, int fd);

void outbuf_free(struct outbuf *b);

#endif
