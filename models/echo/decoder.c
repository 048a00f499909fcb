/* decoder.c -- split and merged lines, one copy. See decoder.h. */
#include "decoder.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int echo_decoder_init(struct echo_decoder *d, size_t max_line)
{
    memset(d, 0, sizeof(*d));
    d->max_line = max_line ? max_line : ECHO_MAX_LINE_DEFAULT;
    /* A whole line plus its '\n' must fit; start small because a BIO
     * server may hold thousands of these and most lines are short. */
    d->cap_bytes = ECHO_DECODER_INITIAL_BYTES;
    if (d->cap_bytes > d->max_line + 1)
        d->cap_bytes = d->max_line + 1;
    d->buf = malloc(d->cap_bytes);
    return d->buf ? 0 : -ENOMEM;
}

void echo_decoder_free(struct echo_decoder *d)
{
    free(d->buf);
    d->buf = NULL;
    d->cap_bytes = d->start = d->end = d->scan = 0;
}

char *echo_decoder_space(struct echo_decoder *d, size_t *len_out)
{
    *len_out = 0;
    if (d->too_long)
        return d->buf + d->end;
    if (d->start == d->end) {
        d->start = d->end = d->scan = 0;        /* empty: rewind, no copy */
    } else if (d->end == d->cap_bytes && d->start > 0) {
        /* The one extra copy: the partial line moves to the front, once. */
        size_t pending = d->end - d->start;
        memmove(d->buf, d->buf + d->start, pending);
        d->scan -= d->start;
        d->start = 0;
        d->end = pending;
    }
    if (d->end == d->cap_bytes && d->cap_bytes < d->max_line + 1) {
        size_t cap = d->cap_bytes * 2;
        if (cap > d->max_line + 1)
            cap = d->max_line + 1;
        char *grown = realloc(d->buf, cap);
        if (!grown) {
            errno = ENOMEM;
            return NULL;
        }
        d->buf = grown;
        d->cap_bytes = cap;
    }
    *len_out = d->cap_bytes - d->end;
    return d->buf + d->end;
}

void echo_decoder_commit(struct echo_decoder *d, size_t n)
{
    d->end += n;
}

enum echo_decode_result echo_decoder__need_more(struct echo_decoder *d)
{
    d->scan = d->end;
    if (d->end - d->start > d->max_line) {
        d->too_long = true;
        return ECHO_DECODE_TOO_LONG;
    }
    return ECHO_DECODE_NEED_MORE;
}

enum echo_decode_result echo_decoder__too_long(struct echo_decoder *d)
{
    d->too_long = true;
    return ECHO_DECODE_TOO_LONG;
}

size_t echo_decoder_pending(const struct echo_decoder *d)
{
    return d->end - d->start;
}
