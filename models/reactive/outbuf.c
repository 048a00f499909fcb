/* outbuf.c -- a channel's output buffer. See outbuf.h. */
#include "outbuf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "net/net.h"

#define OUTBUF_FIRST_BYTES 4096

/* Room for n more bytes: first slide what waits to the front, then grow
 * by doubling. False when out of memory. */
static bool make_room(struct outbuf *b, size_t n)
{
    if (b->len + n <= b->cap)
        return true;
    if (b->off > 0) {
        memmove(b->data, b->data + b->off, b->len - b->off);
        b->len -= b->off;
        b->off = 0;
        if (b->len + n <= b->cap)
            return true;
    }
    size_t cap = b->cap ? b->cap : OUTBUF_FIRST_BYTES;
    while (cap < b->len + n)
        cap *= 2;
    char *grown = realloc(b->data, cap);
    if (!grown)
        return false;
    b->data = grown;
    b->cap = cap;
    return true;
}

bool outbuf_append(struct outbuf *b, const char *bytes, size_t n)
{
    if (!make_room(b, n))
        return false;
    memcpy(b->data + b->len, bytes, n);
    b->len += n;
    return true;
}

ssize_t outbuf_write(struct outbuf *b, int fd)
{
    if (outbuf_pending(b) == 0)
        return 0;
    struct iovec iov = { .iov_base = b->data + b->off, .iov_len = outbuf_pending(b) };
    ssize_t n = net_writev(fd, &iov, 1);
    if (n <= 0)
        return n;
    b->off += (size_t)n;
    if (b->off == b->len)
        b->off = b->len = 0;             /* all out: start again at the front */
    return n;
}

void outbuf_free(struct outbuf *b)
{
    free(b->data);
    *b = (struct outbuf){ 0 };
}
