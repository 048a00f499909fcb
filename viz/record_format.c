/* record_format.c -- the bytes of a recording (record_format.h): what the
 * recorder writes and the reader decodes, with nothing of either. */
#include "record_format.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* ---- bytes ------------------------------------------------------------------ */

/* Room for n more bytes; false (and failed) when there is no memory. */
bool rec_reserve(struct rec_buf *b, size_t n)
{
    if (b->failed)
        return false;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n)
            cap *= 2;
        uint8_t *d = realloc(b->data, cap);
        if (!d) {
            b->failed = true;
            return false;
        }
        b->data = d;
        b->cap = cap;
    }
    return true;
}

void rec_put(struct rec_buf *b, const void *p, size_t n)
{
    if (n == 0 || !rec_reserve(b, n))
        return;                          /* (an empty buffer's data is NULL) */
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

void rec_put_u8(struct rec_buf *b, uint8_t v) { rec_put(b, &v, 1); }

void rec_put_u16(struct rec_buf *b, uint16_t v)
{
    uint8_t le[2] = { (uint8_t)v, (uint8_t)(v >> 8) };
    rec_put(b, le, 2);
}

void rec_put_u32(struct rec_buf *b, uint32_t v)
{
    uint8_t x[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };
    rec_put(b, x, 4);
}

void rec_put_u64(struct rec_buf *b, uint64_t v)
{
    rec_put_u32(b, (uint32_t)v);
    rec_put_u32(b, (uint32_t)(v >> 32));
}

static void put_varint(struct rec_buf *b, uint64_t v)
{
    while (v >= 0x80) {
        rec_put_u8(b, (uint8_t)(v | 0x80));
        v >>= 7;
    }
    rec_put_u8(b, (uint8_t)v);
}

static void get(struct rec_in *in, void *out, size_t n)
{
    if (n == 0)
        return;
    if (in->bad || in->left < n) {
        in->bad = true;
        memset(out, 0, n);
        return;
    }
    memcpy(out, in->p, n);
    in->p += n;
    in->left -= n;
}

uint8_t rec_get_u8(struct rec_in *in) { uint8_t v; get(in, &v, 1); return v; }

uint16_t rec_get_u16(struct rec_in *in)
{
    uint8_t le[2] = { 0, 0 };
    get(in, le, 2);
    return (uint16_t)(le[0] | le[1] << 8);
}

uint32_t rec_get_u32(struct rec_in *in)
{
    uint8_t x[4];
    get(in, x, 4);
    return (uint32_t)x[0] | (uint32_t)x[1] << 8 | (uint32_t)x[2] << 16 | (uint32_t)x[3] << 24;
}

uint64_t rec_get_u64(struct rec_in *in)
{
    uint64_t lo = rec_get_u32(in);
    return lo | (uint64_t)rec_get_u32(in) << 32;
}

static uint64_t get_varint(struct rec_in *in)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        uint8_t byte = rec_get_u8(in);
        v |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80))
            return v;
    }
    in->bad = true;
    return 0;
}

/* zlib's CRC-32. Every part of a recording ends with the CRC of its bytes
 * (a frame's head also carries the CRC of its stored payload), so that no
 * byte goes unchecked, and a length is trusted only once its CRC is good. */
uint32_t rec_crc_of(const uint8_t *p, size_t n)
{
    return (uint32_t)crc32(0L, p, (uInt)n);
}

void rec_put_crc(struct rec_buf *b)
{
    if (!b->failed)
        rec_put_u32(b, rec_crc_of(b->data, b->len));
}

/* ---- a snapshot, field by field (events apart) ----------------------------- */

void rec_serialize(const struct board_snapshot *s, struct rec_buf *b)
{
    rec_put_u32(b, (uint32_t)s->pid);
    rec_put(b, s->model, BOARD_MODEL_BYTES);
    rec_put(b, s->options, BOARD_OPTIONS_BYTES);
    rec_put_u64(b, s->start_unix_ns);
    rec_put_u64(b, s->start_mono_ns);
    rec_put_u64(b, s->taken_mono_ns);
    rec_put_u8(b, s->closing);
    rec_put_u8(b, s->simulated);
    for (int i = 0; i < CTR_COUNT; i++)
        rec_put_u64(b, s->counters[i]);
    for (size_t i = 0; i < HIST_BUCKETS; i++)
        rec_put_u64(b, s->hist[i]);
    rec_put_u64(b, s->hist_max);
    for (int i = 0; i < STATE_COUNT; i++)
        rec_put_u64(b, s->threads_by_state[i]);
    rec_put_u64(b, s->threads_unslotted);
    rec_put_u32(b, (uint32_t)s->nthreads);
    for (int i = 0; i < s->nthreads; i++) {
        const struct board_thread_snap *t = &s->threads[i];
        rec_put_u32(b, t->role);
        rec_put_u32(b, t->state);
        rec_put(b, t->name, BOARD_NAME_BYTES);
        rec_put_u64(b, t->since_ns);
        rec_put_u64(b, t->conn);
        rec_put_u64(b, t->lines);
        rec_put_u64(b, t->busy_ns);
        rec_put_u64(b, t->idle_ns);
    }
    rec_put_u32(b, (uint32_t)s->nloops);
    for (int i = 0; i < s->nloops; i++) {
        const struct board_loop_snap *l = &s->loops[i];
        rec_put(b, l->name, BOARD_NAME_BYTES);
        rec_put_u32(b, l->phase);
        uint64_t v[] = { l->channels, l->task_queue_depth, l->timers, l->io_ns, l->task_ns,
                         l->iterations, l->longest_task_ns, l->blocked_since_ns };
        for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++)
            rec_put_u64(b, v[k]);
    }
    rec_put_u32(b, (uint32_t)s->nqueues);
    for (int i = 0; i < s->nqueues; i++) {
        const struct board_queue_snap *q = &s->queues[i];
        rec_put(b, q->name, BOARD_NAME_BYTES);
        rec_put_u64(b, q->depth);
        rec_put_u64(b, q->capacity);
        rec_put_u64(b, q->high_water);
        rec_put_u64(b, q->rejected);
    }
    rec_put_u64(b, s->event_head);
}

/* n bytes of text (the last one is made a NUL). */
static void get_text(struct rec_in *in, char *out, size_t n)
{
    get(in, out, n);
    out[n - 1] = '\0';
    for (size_t i = 0; out[i]; i++)      /* nothing but printable text */
        if ((unsigned char)out[i] < 0x20 || (unsigned char)out[i] == 0x7f)
            out[i] = '?';
}

/* Back into a snapshot (events empty); false when it does not parse. */
bool rec_deserialize(const uint8_t *p, size_t n, struct board_snapshot *s)
{
    struct rec_in in = { p, n, false };
    memset(s, 0, offsetof(struct board_snapshot, threads));
    s->pid = (int)rec_get_u32(&in);
    get_text(&in, s->model, BOARD_MODEL_BYTES);
    get_text(&in, s->options, BOARD_OPTIONS_BYTES);
    s->start_unix_ns = rec_get_u64(&in);
    s->start_mono_ns = rec_get_u64(&in);
    s->taken_mono_ns = rec_get_u64(&in);
    s->closing = rec_get_u8(&in) != 0;
    s->simulated = rec_get_u8(&in) != 0;
    for (int i = 0; i < CTR_COUNT; i++)
        s->counters[i] = rec_get_u64(&in);
    for (size_t i = 0; i < HIST_BUCKETS; i++)
        s->hist[i] = rec_get_u64(&in);
    s->hist_max = rec_get_u64(&in);
    for (int i = 0; i < STATE_COUNT; i++)
        s->threads_by_state[i] = rec_get_u64(&in);
    s->threads_unslotted = rec_get_u64(&in);
    uint32_t nthreads = rec_get_u32(&in);
    if (nthreads > BOARD_THREAD_SLOTS)
        return false;
    s->nthreads = (int)nthreads;
    for (uint32_t i = 0; i < nthreads && !in.bad; i++) {
        struct board_thread_snap *t = &s->threads[i];
        uint32_t role = rec_get_u32(&in), state = rec_get_u32(&in);
        if (role >= ROLE_COUNT || state >= STATE_COUNT)
            return false;
        t->role = (enum board_role)role;
        t->state = (enum board_state)state;
        get_text(&in, t->name, BOARD_NAME_BYTES);
        t->since_ns = rec_get_u64(&in);
        t->conn = rec_get_u64(&in);
        t->lines = rec_get_u64(&in);
        t->busy_ns = rec_get_u64(&in);
        t->idle_ns = rec_get_u64(&in);
    }
    uint32_t nloops = rec_get_u32(&in);
    if (nloops > BOARD_LOOP_SLOTS)
        return false;
    s->nloops = (int)nloops;
    for (uint32_t i = 0; i < nloops && !in.bad; i++) {
        struct board_loop_snap *l = &s->loops[i];
        get_text(&in, l->name, BOARD_NAME_BYTES);
        l->phase = rec_get_u32(&in);
        l->channels = rec_get_u64(&in);
        l->task_queue_depth = rec_get_u64(&in);
        l->timers = rec_get_u64(&in);
        l->io_ns = rec_get_u64(&in);
        l->task_ns = rec_get_u64(&in);
        l->iterations = rec_get_u64(&in);
        l->longest_task_ns = rec_get_u64(&in);
        l->blocked_since_ns = rec_get_u64(&in);
    }
    uint32_t nqueues = rec_get_u32(&in);
    if (nqueues > BOARD_QUEUE_SLOTS)
        return false;
    s->nqueues = (int)nqueues;
    for (uint32_t i = 0; i < nqueues && !in.bad; i++) {
        struct board_queue_snap *q = &s->queues[i];
        get_text(&in, q->name, BOARD_NAME_BYTES);
        q->depth = rec_get_u64(&in);
        q->capacity = rec_get_u64(&in);
        q->high_water = rec_get_u64(&in);
        q->rejected = rec_get_u64(&in);
    }
    s->event_head = rec_get_u64(&in);
    s->nevents = 0;
    return !in.bad && in.left == 0 && s->pid > 0;
}

/* ---- deltas ---------------------------------------------------------------------- */

/* cur XOR prev (prev read as zeros past its end), as (zeros, literal) runs. */
void rec_delta_encode(const struct rec_buf *prev, const struct rec_buf *cur,
                      struct rec_buf *out)
{
    size_t i = 0, n = cur->len;
    put_varint(out, n);
    while (i < n) {
        size_t zeros = 0;
        while (i + zeros < n &&
               (i + zeros < prev->len ? prev->data[i + zeros] : 0) == cur->data[i + zeros])
            zeros++;
        size_t lit = 0;
        while (i + zeros + lit < n &&
               (i + zeros + lit < prev->len ? prev->data[i + zeros + lit] : 0) !=
                   cur->data[i + zeros + lit])
            lit++;
        put_varint(out, zeros);
        put_varint(out, lit);
        for (size_t k = 0; k < lit; k++) {
            size_t at = i + zeros + k;
            rec_put_u8(out, cur->data[at] ^ (at < prev->len ? prev->data[at] : 0));
        }
        i += zeros + lit;
    }
}

/* prev + delta -> cur. False when the delta is malformed. */
bool rec_delta_apply(const struct rec_buf *prev, struct rec_in *in, struct rec_buf *cur)
{
    uint64_t n = get_varint(in);
    if (in->bad || n > MAX_PAYLOAD)
        return false;
    cur->len = 0;
    if (n > 0 && !rec_reserve(cur, (size_t)n))
        return false;
    uint64_t i = 0;
    while (i < n) {
        uint64_t zeros = get_varint(in), lit = get_varint(in);
        if (in->bad || zeros + lit == 0 || i + zeros + lit > n)
            return false;
        for (uint64_t k = 0; k < zeros + lit; k++) {
            size_t at = (size_t)(i + k);
            uint8_t base = at < prev->len ? prev->data[at] : 0;
            cur->data[at] = k < zeros ? base : (uint8_t)(base ^ rec_get_u8(in));
        }
        i += zeros + lit;
    }
    cur->len = (size_t)n;
    return !in->bad;
}

void rec_put_event(struct rec_buf *b, const struct board_event_snap *e)
{
    size_t len = strnlen(e->text, BOARD_TEXT_BYTES - 1);
    rec_put_u64(b, e->seq);
    rec_put_u64(b, e->time_ns);
    rec_put_u32(b, e->kind);
    rec_put_u8(b, (uint8_t)len);
    rec_put(b, e->text, len);
}

/* One event; false when it is malformed. */
bool rec_get_event(struct rec_in *in, struct board_event_snap *ev)
{
    ev->seq = rec_get_u64(in);
    ev->time_ns = rec_get_u64(in);
    uint32_t kind = rec_get_u32(in);
    size_t len = rec_get_u8(in);
    if (kind >= EV_COUNT || len >= BOARD_TEXT_BYTES)
        return false;
    ev->kind = (enum board_event_kind)kind;
    memset(ev->text, 0, BOARD_TEXT_BYTES);
    get(in, ev->text, len);
    for (size_t i = 0; i < len; i++)     /* nothing but printable text */
        if ((unsigned char)ev->text[i] < 0x20 || (unsigned char)ev->text[i] == 0x7f)
            ev->text[i] = '?';
    return !in->bad;
}
