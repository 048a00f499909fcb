/* decoder.h -- the line decoder of the echo protocol.
 *
 * A request is a line ended by '\n'. Lines arrive split over many reads
 * (半包) or many in one read (粘包); the decoder handles both. The caller
 * reads straight into the decoder's buffer (echo_decoder_space +
 * echo_decoder_commit), so bytes are copied once from the kernel and at most
 * once more when a partial line is moved to the front to make room.
 *
 * Any byte but '\n' may be part of a line, NUL and '\r' included. A line
 * longer than max_line bytes (not counting its '\n') is an error: the
 * decoder stops and the connection is to be closed after an error reply.
 *
 * A decoder belongs to one connection and is used by one thread at a time:
 * every function here, on the connection's thread.
 */
#ifndef THREADLAB_ECHO_DECODER_H
#define THREADLAB_ECHO_DECODER_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define ECHO_MAX_LINE_DEFAULT 65536    /* bytes, '\n' not counted */
#define ECHO_DECODER_INITIAL_BYTES 4096 /* buffer starts small, grows to max */

/* What echo_decoder_next found. */
enum echo_decode_result {
    ECHO_DECODE_LINE,      /* a complete line, '\n' included */
    ECHO_DECODE_NEED_MORE, /* no complete line yet: read more */
    ECHO_DECODE_TOO_LONG,  /* a line passed max_line: stop, reply, close */
};

struct echo_decoder {
    char *buf;         /* bytes read and not yet consumed live in buf[start, end) */
    size_t cap_bytes;  /* allocated size of buf */
    size_t start;      /* first unconsumed byte */
    size_t end;        /* one past the last byte read */
    size_t scan;       /* buf[start, scan) is known to hold no '\n' */
    size_t max_line;   /* longest accepted line, '\n' not counted */
    bool too_long;     /* sticky: once a line is too long the stream is dead */
};

/* ---- lifetime ---- */

/* Prepare an empty decoder. max_line 0 means ECHO_MAX_LINE_DEFAULT. Returns 0
 * or -ENOMEM. Any thread. */
int echo_decoder_init(struct echo_decoder *d, size_t max_line);

/* Free the buffer. The decoder may be initialised again. */
void echo_decoder_free(struct echo_decoder *d);

/* ---- reading ---- */

/* Room to read into: sets *len_out (> 0 unless the decoder is dead) and
 * returns where to write. Moves a partial line to the front or grows the
 * buffer when needed, so lines returned earlier become invalid. Returns NULL
 * (errno ENOMEM) when the buffer cannot grow. */
char *echo_decoder_space(struct echo_decoder *d, size_t *len_out);

/* Record that n bytes were written at the pointer echo_decoder_space gave. */
void echo_decoder_commit(struct echo_decoder *d, size_t n);

/* Internal, for echo_decoder_next: no '\n' among the bytes read (remember
 * how far we looked, so that the next call scans only new bytes and a long
 * line arriving a byte at a time costs O(n), not O(n^2); give up once the
 * line is too long), and a line found too long. */
enum echo_decode_result echo_decoder__need_more(struct echo_decoder *d);
enum echo_decode_result echo_decoder__too_long(struct echo_decoder *d);

/* Take the next complete line. On ECHO_DECODE_LINE, *line and *len describe
 * it, '\n' included; it stays valid until the next echo_decoder_space.
 * Otherwise *line is NULL and *len 0.
 *
 * Inline, the only function here that is: it runs once per line, and a
 * call with its saved registers cost a third of its instructions
 * (docs/performance.md). The scan position is an index into buf, so few
 * values live across memchr. */
static inline enum echo_decode_result echo_decoder_next(struct echo_decoder *d,
                                                        const char **line, size_t *len)
{
    *line = NULL;   /* no line unless one is found; callers' compilers see it */
    *len = 0;
    if (d->too_long)
        return ECHO_DECODE_TOO_LONG;
    const char *nl = memchr(d->buf + d->scan, '\n', d->end - d->scan);
    if (!nl)
        return echo_decoder__need_more(d);
    size_t line_bytes = (size_t)(nl - d->buf) + 1 - d->start;
    if (line_bytes - 1 > d->max_line)
        return echo_decoder__too_long(d);
    *line = d->buf + d->start;
    *len = line_bytes;
    d->start += line_bytes;
    d->scan = d->start;
    return ECHO_DECODE_LINE;
}

/* Bytes received but not yet part of a complete line. */
size_t echo_decoder_pending(const struct echo_decoder *d);

#endif
