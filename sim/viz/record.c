/* record.c -- recordings: write frames, load and check them, rebuild any
 * frame. See record.h for the format. */
#include "record.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define HEADER_MAGIC "THRDLREC"
#define FRAME_MARK "FRM1"
#define END_MARK "END1"                 /* a recording finished properly */
#define END_HEAD_BYTES 16               /* "END1" frames ending_len crc */
#define HEADER_BYTES 24
#define FRAME_HEAD_BYTES 28
#define KEYFRAME_EVERY 64               /* a full copy of the state this often */
#define MAX_PAYLOAD (64u << 20)

/* ---- bytes ------------------------------------------------------------------ */

struct buf {
    uint8_t *data;
    size_t len, cap;
    bool failed;                        /* out of memory */
};

/* Room for n more bytes; false (and failed) when there is no memory. */
static bool reserve(struct buf *b, size_t n)
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

static void put(struct buf *b, const void *p, size_t n)
{
    if (n == 0 || !reserve(b, n))
        return;                          /* (an empty buffer's data is NULL) */
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

static void put_u8(struct buf *b, uint8_t v) { put(b, &v, 1); }

static void put_u16(struct buf *b, uint16_t v)
{
    uint8_t le[2] = { (uint8_t)v, (uint8_t)(v >> 8) };
    put(b, le, 2);
}

static void put_u32(struct buf *b, uint32_t v)
{
    uint8_t x[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };
    put(b, x, 4);
}

static void put_u64(struct buf *b, uint64_t v)
{
    put_u32(b, (uint32_t)v);
    put_u32(b, (uint32_t)(v >> 32));
}

static void put_varint(struct buf *b, uint64_t v)
{
    while (v >= 0x80) {
        put_u8(b, (uint8_t)(v | 0x80));
        v >>= 7;
    }
    put_u8(b, (uint8_t)v);
}

/* A reader that fails once and stays failed: callers check at the end. */
struct in {
    const uint8_t *p;
    size_t left;
    bool bad;
};

static void get(struct in *in, void *out, size_t n)
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

static uint8_t get_u8(struct in *in) { uint8_t v; get(in, &v, 1); return v; }

static uint16_t get_u16(struct in *in)
{
    uint8_t le[2] = { 0, 0 };
    get(in, le, 2);
    return (uint16_t)(le[0] | le[1] << 8);
}

static uint32_t get_u32(struct in *in)
{
    uint8_t x[4];
    get(in, x, 4);
    return (uint32_t)x[0] | (uint32_t)x[1] << 8 | (uint32_t)x[2] << 16 | (uint32_t)x[3] << 24;
}

static uint64_t get_u64(struct in *in)
{
    uint64_t lo = get_u32(in);
    return lo | (uint64_t)get_u32(in) << 32;
}

static uint64_t get_varint(struct in *in)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        uint8_t byte = get_u8(in);
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
static uint32_t crc_of(const uint8_t *p, size_t n)
{
    return (uint32_t)crc32(0L, p, (uInt)n);
}

static void put_crc(struct buf *b)
{
    if (!b->failed)
        put_u32(b, crc_of(b->data, b->len));
}

/* ---- a snapshot, field by field (events apart) ----------------------------- */

static void serialize(const struct board_snapshot *s, struct buf *b)
{
    put_u32(b, (uint32_t)s->pid);
    put(b, s->model, BOARD_MODEL_BYTES);
    put(b, s->options, BOARD_OPTIONS_BYTES);
    put_u64(b, s->start_unix_ns);
    put_u64(b, s->start_mono_ns);
    put_u64(b, s->taken_mono_ns);
    put_u8(b, s->closing);
    put_u8(b, s->simulated);
    for (int i = 0; i < CTR_COUNT; i++)
        put_u64(b, s->counters[i]);
    for (size_t i = 0; i < HIST_BUCKETS; i++)
        put_u64(b, s->hist[i]);
    put_u64(b, s->hist_max);
    for (int i = 0; i < STATE_COUNT; i++)
        put_u64(b, s->threads_by_state[i]);
    put_u64(b, s->threads_unslotted);
    put_u32(b, (uint32_t)s->nthreads);
    for (int i = 0; i < s->nthreads; i++) {
        const struct board_thread_snap *t = &s->threads[i];
        put_u32(b, t->role);
        put_u32(b, t->state);
        put(b, t->name, BOARD_NAME_BYTES);
        put_u64(b, t->since_ns);
        put_u64(b, t->conn);
        put_u64(b, t->lines);
        put_u64(b, t->busy_ns);
        put_u64(b, t->idle_ns);
    }
    put_u32(b, (uint32_t)s->nloops);
    for (int i = 0; i < s->nloops; i++) {
        const struct board_loop_snap *l = &s->loops[i];
        put(b, l->name, BOARD_NAME_BYTES);
        put_u32(b, l->phase);
        uint64_t v[] = { l->channels, l->task_queue_depth, l->timers, l->io_ns, l->task_ns,
                         l->iterations, l->longest_task_ns, l->blocked_since_ns };
        for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++)
            put_u64(b, v[k]);
    }
    put_u32(b, (uint32_t)s->nqueues);
    for (int i = 0; i < s->nqueues; i++) {
        const struct board_queue_snap *q = &s->queues[i];
        put(b, q->name, BOARD_NAME_BYTES);
        put_u64(b, q->depth);
        put_u64(b, q->capacity);
        put_u64(b, q->high_water);
        put_u64(b, q->rejected);
    }
    put_u64(b, s->event_head);
}

/* n bytes of text (the last one is made a NUL). */
static void get_text(struct in *in, char *out, size_t n)
{
    get(in, out, n);
    out[n - 1] = '\0';
    for (size_t i = 0; out[i]; i++)      /* nothing but printable text */
        if ((unsigned char)out[i] < 0x20 || (unsigned char)out[i] == 0x7f)
            out[i] = '?';
}

/* Back into a snapshot (events empty); false when it does not parse. */
static bool deserialize(const uint8_t *p, size_t n, struct board_snapshot *s)
{
    struct in in = { p, n, false };
    memset(s, 0, offsetof(struct board_snapshot, threads));
    s->pid = (int)get_u32(&in);
    get_text(&in, s->model, BOARD_MODEL_BYTES);
    get_text(&in, s->options, BOARD_OPTIONS_BYTES);
    s->start_unix_ns = get_u64(&in);
    s->start_mono_ns = get_u64(&in);
    s->taken_mono_ns = get_u64(&in);
    s->closing = get_u8(&in) != 0;
    s->simulated = get_u8(&in) != 0;
    for (int i = 0; i < CTR_COUNT; i++)
        s->counters[i] = get_u64(&in);
    for (size_t i = 0; i < HIST_BUCKETS; i++)
        s->hist[i] = get_u64(&in);
    s->hist_max = get_u64(&in);
    for (int i = 0; i < STATE_COUNT; i++)
        s->threads_by_state[i] = get_u64(&in);
    s->threads_unslotted = get_u64(&in);
    uint32_t nthreads = get_u32(&in);
    if (nthreads > BOARD_THREAD_SLOTS)
        return false;
    s->nthreads = (int)nthreads;
    for (uint32_t i = 0; i < nthreads && !in.bad; i++) {
        struct board_thread_snap *t = &s->threads[i];
        uint32_t role = get_u32(&in), state = get_u32(&in);
        if (role >= ROLE_COUNT || state >= STATE_COUNT)
            return false;
        t->role = (enum board_role)role;
        t->state = (enum board_state)state;
        get_text(&in, t->name, BOARD_NAME_BYTES);
        t->since_ns = get_u64(&in);
        t->conn = get_u64(&in);
        t->lines = get_u64(&in);
        t->busy_ns = get_u64(&in);
        t->idle_ns = get_u64(&in);
    }
    uint32_t nloops = get_u32(&in);
    if (nloops > BOARD_LOOP_SLOTS)
        return false;
    s->nloops = (int)nloops;
    for (uint32_t i = 0; i < nloops && !in.bad; i++) {
        struct board_loop_snap *l = &s->loops[i];
        get_text(&in, l->name, BOARD_NAME_BYTES);
        l->phase = get_u32(&in);
        l->channels = get_u64(&in);
        l->task_queue_depth = get_u64(&in);
        l->timers = get_u64(&in);
        l->io_ns = get_u64(&in);
        l->task_ns = get_u64(&in);
        l->iterations = get_u64(&in);
        l->longest_task_ns = get_u64(&in);
        l->blocked_since_ns = get_u64(&in);
    }
    uint32_t nqueues = get_u32(&in);
    if (nqueues > BOARD_QUEUE_SLOTS)
        return false;
    s->nqueues = (int)nqueues;
    for (uint32_t i = 0; i < nqueues && !in.bad; i++) {
        struct board_queue_snap *q = &s->queues[i];
        get_text(&in, q->name, BOARD_NAME_BYTES);
        q->depth = get_u64(&in);
        q->capacity = get_u64(&in);
        q->high_water = get_u64(&in);
        q->rejected = get_u64(&in);
    }
    s->event_head = get_u64(&in);
    s->nevents = 0;
    return !in.bad && in.left == 0 && s->pid > 0;
}

/* ---- deltas ---------------------------------------------------------------------- */

/* cur XOR prev (prev read as zeros past its end), as (zeros, literal) runs. */
static void delta_encode(const struct buf *prev, const struct buf *cur, struct buf *out)
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
            put_u8(out, cur->data[at] ^ (at < prev->len ? prev->data[at] : 0));
        }
        i += zeros + lit;
    }
}

/* prev + delta -> cur. False when the delta is malformed. */
static bool delta_apply(const struct buf *prev, struct in *in, struct buf *cur)
{
    uint64_t n = get_varint(in);
    if (in->bad || n > MAX_PAYLOAD)
        return false;
    cur->len = 0;
    if (n > 0 && !reserve(cur, (size_t)n))
        return false;
    uint64_t i = 0;
    while (i < n) {
        uint64_t zeros = get_varint(in), lit = get_varint(in);
        if (in->bad || zeros + lit == 0 || i + zeros + lit > n)
            return false;
        for (uint64_t k = 0; k < zeros + lit; k++) {
            size_t at = (size_t)(i + k);
            uint8_t base = at < prev->len ? prev->data[at] : 0;
            cur->data[at] = k < zeros ? base : (uint8_t)(base ^ get_u8(in));
        }
        i += zeros + lit;
    }
    cur->len = (size_t)n;
    return !in->bad;
}

static void put_event(struct buf *b, const struct board_event_snap *e)
{
    size_t len = strnlen(e->text, BOARD_TEXT_BYTES - 1);
    put_u64(b, e->seq);
    put_u64(b, e->time_ns);
    put_u32(b, e->kind);
    put_u8(b, (uint8_t)len);
    put(b, e->text, len);
}

/* One event; false when it is malformed. */
static bool get_event(struct in *in, struct board_event_snap *ev)
{
    ev->seq = get_u64(in);
    ev->time_ns = get_u64(in);
    uint32_t kind = get_u32(in);
    size_t len = get_u8(in);
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

/* ---- recording ---------------------------------------------------------------- */

struct rec_pane {
    int pid;
    struct buf last;                     /* its previous serialization */
    uint64_t last_seq;                   /* the newest event written */
};

struct recorder {
    int fd;
    uint64_t bytes;                      /* the file's length after the last whole frame */
    uint32_t frames;
    int failed;                          /* 0, or the -errno that ended the recording */
    struct rec_pane panes[VIEW_MAX_PANES];
    struct buf payload, cur, packed;
    char caption[RECORD_CAPTION_MAX];    /* what the next frames carry */
    char ending[RECORD_ENDING_MAX];      /* what the end mark carries */
};

/* All of it, or -errno. EINTR is retried: a stop signal (caught without
 * SA_RESTART, so that it interrupts a wait) must not cut a frame. */
static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -errno;
        if (w == 0)
            return -EIO;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Write one part of the file in one write(2), so that a recorder killed
 * between two parts leaves whole parts behind; if it fails, cut the file
 * back to its last whole part (a full disk leaves a readable recording). */
static int append(struct recorder *r, const struct buf *part)
{
    if (part->failed)
        return -ENOMEM;
    int rc = write_all(r->fd, part->data, part->len);
    if (rc < 0) {
        if (ftruncate(r->fd, (off_t)r->bytes) == 0)
            (void)lseek(r->fd, (off_t)r->bytes, SEEK_SET);
        return rc;
    }
    r->bytes += part->len;
    return 0;
}

struct recorder *recorder_open(const char *path, char *err, size_t err_len)
{
    struct recorder *r = calloc(1, sizeof(*r));
    if (!r) {
        snprintf(err, err_len, "%s: %s", path, strerror(ENOMEM));
        return NULL;
    }
    r->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (r->fd < 0) {
        snprintf(err, err_len, "%s: %s", path, strerror(errno));
        free(r);
        return NULL;
    }
    struct buf h = { 0 };
    put(&h, HEADER_MAGIC, 8);
    put_u32(&h, RECORD_VERSION);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    put_u64(&h, (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
    put_crc(&h);
    /* Written now, not with the first frame: a path that cannot be written
     * (a full disk, /dev/full) is refused before anything starts. */
    int rc = append(r, &h);
    free(h.data);
    if (rc < 0) {
        snprintf(err, err_len, "%s: cannot write: %s", path, strerror(-rc));
        close(r->fd);
        free(r);
        return NULL;
    }
    return r;
}

/* Pane i of a frame: its pid, whether it exited, its snapshot as a delta
 * against its previous one, and the events that are new since then. */
static void payload_add_pane(struct recorder *r, struct rec_pane *rp, const struct pane *pane)
{
    const struct board_snapshot *s = pane->now;
    bool have = s && s->pid > 0;
    if (!have || s->pid != rp->pid) {       /* a new server here: start over */
        rp->last.len = 0;
        rp->last_seq = 0;
        rp->pid = have ? s->pid : 0;
    }
    put_u32(&r->payload, have ? (uint32_t)s->pid : 0);
    put_u8(&r->payload, pane->gone);
    r->cur.len = 0;
    if (have)
        serialize(s, &r->cur);
    struct buf delta = { 0 };
    delta_encode(&rp->last, &r->cur, &delta);
    put_u32(&r->payload, (uint32_t)delta.len);
    put(&r->payload, delta.data, delta.len);
    r->payload.failed |= delta.failed;
    free(delta.data);
    struct buf tmp = rp->last;              /* cur becomes last */
    rp->last = r->cur;
    r->cur = tmp;
    uint32_t fresh = 0;
    for (int e = 0; have && e < s->nevents; e++)
        fresh += s->events[e].seq > rp->last_seq;
    put_u32(&r->payload, fresh);
    for (int e = 0; have && e < s->nevents; e++)
        if (s->events[e].seq > rp->last_seq)
            put_event(&r->payload, &s->events[e]);
    if (have && s->nevents > 0 && s->events[s->nevents - 1].seq > rp->last_seq)
        rp->last_seq = s->events[s->nevents - 1].seq;
}

int recorder_frame(struct recorder *r, uint64_t t_ns, const struct pane *panes, int npanes)
{
    if (r->failed)
        return r->failed;
    if (npanes > VIEW_MAX_PANES)
        npanes = VIEW_MAX_PANES;
    r->payload.len = 0;
    r->payload.failed = false;
    put_u8(&r->payload, (uint8_t)npanes);
    for (int i = 0; i < npanes; i++)
        payload_add_pane(r, &r->panes[i], &panes[i]);
    size_t caption_len = strlen(r->caption);
    put_u16(&r->payload, (uint16_t)caption_len);
    put(&r->payload, r->caption, caption_len);
    if (r->payload.failed)
        return r->failed = -ENOMEM;
    /* Deflated: event texts and thread names repeat from frame to frame. */
    uLongf stored = compressBound(r->payload.len);
    if (r->packed.cap < FRAME_HEAD_BYTES + stored) {
        uint8_t *d = realloc(r->packed.data, FRAME_HEAD_BYTES + stored);
        if (!d)
            return r->failed = -ENOMEM;
        r->packed.data = d;
        r->packed.cap = FRAME_HEAD_BYTES + stored;
    }
    /* The head and the payload go out in one write: packed is the frame. */
    uint8_t *body = r->packed.data + FRAME_HEAD_BYTES;
    if (compress2(body, &stored, r->payload.data, r->payload.len, 6) != Z_OK)
        return r->failed = -ENOMEM;
    struct buf head = { 0 };
    put(&head, FRAME_MARK, 4);
    put_u32(&head, (uint32_t)stored);
    put_u32(&head, (uint32_t)r->payload.len);
    put_u64(&head, t_ns);
    put_u32(&head, crc_of(body, stored));
    put_crc(&head);
    if (head.failed) {
        free(head.data);
        return r->failed = -ENOMEM;
    }
    memcpy(r->packed.data, head.data, FRAME_HEAD_BYTES);
    free(head.data);
    r->packed.len = FRAME_HEAD_BYTES + stored;
    int rc = append(r, &r->packed);
    if (rc < 0)
        return r->failed = rc;
    r->frames++;
    return 0;
}

void recorder_caption(struct recorder *r, const char *caption)
{
    snprintf(r->caption, sizeof(r->caption), "%s", caption ? caption : "");
}

void recorder_ending(struct recorder *r, const char *text)
{
    snprintf(r->ending, sizeof(r->ending), "%s", text ? text : "");
}

uint64_t recorder_bytes(const struct recorder *r)
{
    return r->bytes;
}

uint32_t recorder_frames(const struct recorder *r)
{
    return r->frames;
}

int recorder_close(struct recorder *r)
{
    if (!r)
        return 0;
    /* The end mark says the file is whole, even after a failed frame: the
     * file was cut back to its last whole frame, which is all it holds. */
    struct buf end = { 0 }, ending = { 0 };
    size_t ending_len = strlen(r->ending);
    put(&end, END_MARK, 4);
    put_u32(&end, r->frames);
    put_u32(&end, (uint32_t)ending_len);
    put_crc(&end);
    put(&ending, r->ending, ending_len);
    put_crc(&ending);
    put(&end, ending.data, ending.len);
    end.failed |= ending.failed;
    free(ending.data);
    int rc = append(r, &end);
    free(end.data);
    if (close(r->fd) < 0 && rc == 0)
        rc = -errno;
    if (rc == 0)
        rc = r->failed;
    for (int i = 0; i < VIEW_MAX_PANES; i++)
        free(r->panes[i].last.data);
    free(r->payload.data);
    free(r->cur.data);
    free(r->packed.data);
    free(r);
    return rc;
}

/* ---- replaying ------------------------------------------------------------------ */

#define WARN_SOURCES_MAX 16              /* sources remembered per pane and frame */
#define WARN_SOURCE_BYTES 24

/* Who a warning is about: its kind and the first word of its text (the
 * loop's name, or "conn" for a refused connection). */
static void warn_source(const struct board_event_snap *ev, char *out, size_t len)
{
    size_t word = strcspn(ev->text, " :");
    snprintf(out, len, "%s:%.*s", board_event_name(ev->kind), (int)word, ev->text);
}

static bool is_warning(const struct board_event_snap *ev)
{
    return ev->kind == EV_BLOCKED || ev->kind == EV_REJECT || ev->kind == EV_SHRINK;
}

struct rec_event {
    int frame;
    struct board_event_snap ev;
};

struct rec_frame {
    size_t offset;                       /* of its payload in the file */
    uint32_t len;
    uint64_t t_ns;
    int npanes;
    int new_events;
    bool warning;
    bool new_warning;                    /* a warning starts here */
    size_t caption_offset;               /* its caption, in raw */
    uint16_t caption_len;
    uint8_t gone;                        /* bit p: pane p's server had exited */
};

struct keyframe {
    int npanes;
    int pids[VIEW_MAX_PANES];
    struct buf state[VIEW_MAX_PANES];
};

struct recording {
    uint8_t *data;                       /* the file */
    size_t len;
    struct buf raw;                      /* every frame's payload, inflated */
    struct rec_frame *frames;
    int nframes, cap;
    struct keyframe *keys;               /* keys[k]: the state after frame k * KEYFRAME_EVERY */
    int nkeys;
    struct rec_event *events[VIEW_MAX_PANES];
    int nevents[VIEW_MAX_PANES];
    /* The state after frame `at`, kept so stepping on is one frame of work. */
    int at;
    int pids[VIEW_MAX_PANES];
    struct buf state[VIEW_MAX_PANES];
    char cut[400];                       /* where and why the file was cut short, or "" */
    char *ending;                        /* the end mark's text, or NULL */
    char caption[RECORD_CAPTION_MAX];    /* recording_caption's answer */
    /* Loading: the sources that warned in the frame before, per pane. */
    char warned[VIEW_MAX_PANES][WARN_SOURCES_MAX][WARN_SOURCE_BYTES];
    int nwarned[VIEW_MAX_PANES];
    struct board_snapshot *scratch;      /* loading: each pane is decoded into it */
};

/* A warning of pane p in frame f: it starts a warning when its source gave
 * none in the frame before. The sources of this frame go into now. */
static void note_warning(const struct recording *rec, struct rec_frame *f, int p,
                         const struct board_event_snap *ev,
                         char now[][WARN_SOURCE_BYTES], int *nnow)
{
    char source[WARN_SOURCE_BYTES];
    warn_source(ev, source, sizeof(source));
    bool before = false;
    for (int k = 0; k < rec->nwarned[p] && !before; k++)
        before = strcmp(rec->warned[p][k], source) == 0;
    if (!before)
        f->new_warning = true;
    for (int k = 0; k < *nnow; k++)
        if (strcmp(now[k], source) == 0)
            return;
    if (*nnow < WARN_SOURCES_MAX)
        memcpy(now[(*nnow)++], source, sizeof(source));
}

/* Apply frame i's payload to states; events are appended when collect. */
static bool apply_frame(struct recording *rec, int i, int *pids, struct buf *state,
                        bool collect)
{
    struct rec_frame *f = &rec->frames[i];
    struct in in = { rec->raw.data + f->offset, f->len, false };
    int npanes = get_u8(&in);
    if (npanes > VIEW_MAX_PANES)
        return false;
    f->npanes = npanes;
    char now[VIEW_MAX_PANES][WARN_SOURCES_MAX][WARN_SOURCE_BYTES];
    int nnow[VIEW_MAX_PANES] = { 0 };
    struct buf next = { 0 };
    for (int p = 0; p < npanes && !in.bad; p++) {
        int pid = (int)get_u32(&in);
        if (get_u8(&in))                     /* its server had exited */
            f->gone |= 1u << p;
        if (pid != pids[p]) {
            state[p].len = 0;
            pids[p] = pid;
        }
        uint32_t dlen = get_u32(&in);
        if (in.bad || dlen > in.left) {
            free(next.data);
            return false;
        }
        struct in d = { in.p, dlen, false };
        in.p += dlen;
        in.left -= dlen;
        if (!delta_apply(&state[p], &d, &next) || d.left != 0) {
            free(next.data);
            return false;
        }
        struct buf tmp = state[p];
        state[p] = next;
        next = tmp;
        uint32_t nev = get_u32(&in);
        if (nev > BOARD_EVENT_SLOTS) {
            free(next.data);
            return false;
        }
        for (uint32_t e = 0; e < nev && !in.bad; e++) {
            struct board_event_snap ev;
            if (!get_event(&in, &ev)) {
                free(next.data);
                return false;
            }
            if (!collect)
                continue;
            struct rec_event **list = &rec->events[p];
            if ((rec->nevents[p] & (rec->nevents[p] - 1)) == 0) {   /* 0, 1, 2, 4... */
                struct rec_event *g = realloc(*list, (size_t)(rec->nevents[p] ? 2 * rec->nevents[p] : 1) * sizeof(**list));
                if (!g) {
                    free(next.data);
                    return false;
                }
                *list = g;
            }
            (*list)[rec->nevents[p]++] = (struct rec_event){ i, ev };
            f->new_events++;
            if (is_warning(&ev)) {
                f->warning = true;
                note_warning(rec, f, p, &ev, now[p], &nnow[p]);
            }
        }
    }
    free(next.data);
    if (collect)                             /* this frame's sources, for the next */
        for (int p = 0; p < VIEW_MAX_PANES; p++) {
            memcpy(rec->warned[p], now[p], sizeof(now[p]));
            rec->nwarned[p] = p < npanes ? nnow[p] : 0;
        }
    f->caption_len = get_u16(&in);
    if (in.bad || f->caption_len > in.left || f->caption_len >= RECORD_CAPTION_MAX)
        return false;
    f->caption_offset = (size_t)(in.p - rec->raw.data);
    in.p += f->caption_len;
    in.left -= f->caption_len;
    return !in.bad && in.left == 0;
}

static bool copy_buf(struct buf *dst, const struct buf *src)
{
    dst->len = 0;
    dst->failed = false;
    put(dst, src->data, src->len);
    return !dst->failed;
}

void recording_free(struct recording *rec)
{
    if (!rec)
        return;
    for (int k = 0; k < rec->nkeys; k++)
        for (int p = 0; p < VIEW_MAX_PANES; p++)
            free(rec->keys[k].state[p].data);
    for (int p = 0; p < VIEW_MAX_PANES; p++) {
        free(rec->events[p]);
        free(rec->state[p].data);
    }
    free(rec->keys);
    free(rec->scratch);
    free(rec->frames);
    free(rec->data);
    free(rec->raw.data);
    free(rec->ending);
    free(rec);
}

/* ---- loading: every part checked before it is believed ------------------------ */

/* What the bytes at one place in a recording are. */
enum part_kind {
    PART_FRAME,                          /* a whole frame, head and payload checked */
    PART_END,                            /* the end mark, checked: the file is whole */
    PART_CUT,                            /* the bytes end here or inside this part */
    PART_CORRUPT,                        /* bytes that no recorder wrote */
};

struct part {
    enum part_kind kind;
    uint32_t stored_len, payload_len;    /* PART_FRAME */
    uint64_t t_ns;                       /* PART_FRAME */
    uint32_t frames;                     /* PART_END: the count it carries */
    uint32_t ending_len;                 /* PART_END: its text's length */
    const char *why;                     /* PART_CUT, PART_CORRUPT: in words */
};

static bool all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

/* The n first bytes of p are the first bytes of mark. */
static bool starts_like(const uint8_t *p, size_t n, const char *mark)
{
    return memcmp(p, mark, n < 4 ? n : 4) == 0;
}

/* Classify the `left` bytes at p. A cut is told from damage by the
 * checksums: the recorder writes each part whole, so bytes that end early
 * were cut, while whole bytes that fail a CRC were changed. */
static void classify(const uint8_t *p, size_t left, struct part *pt)
{
    memset(pt, 0, sizeof(*pt));
    pt->kind = PART_CUT;
    if (left == 0) {
        pt->why = "it ends after a whole frame, with no end mark";
        return;
    }
    if (all_zero(p, left)) {             /* the length reached the disk, the data did not */
        pt->why = "the rest of it is zeros, writes that never reached the disk";
        return;
    }
    bool end = starts_like(p, left, END_MARK);
    if (left < 4 && (end || starts_like(p, left, FRAME_MARK))) {
        pt->why = "it ends inside the next part's mark";
        return;
    }
    struct in in = { p + 4, left - 4, false };
    if (end) {
        pt->frames = get_u32(&in);
        pt->ending_len = get_u32(&in);
        uint32_t crc = get_u32(&in);
        size_t whole = END_HEAD_BYTES + (size_t)pt->ending_len + 4;
        if (in.bad)
            pt->why = "it ends inside the end mark";
        else if (crc != crc_of(p, END_HEAD_BYTES - 4))
            *pt = (struct part){ .kind = PART_CORRUPT, .why = "its end mark fails its checksum" };
        else if (pt->ending_len >= RECORD_ENDING_MAX)
            *pt = (struct part){ .kind = PART_CORRUPT, .why = "its ending claims too many bytes" };
        else if (left < whole)       /* the head is good: the length is true */
            pt->why = "it ends inside the end mark's text";
        else if (crc_of(p + END_HEAD_BYTES, pt->ending_len) !=
                 (uint32_t)(p[whole - 4] | p[whole - 3] << 8 | p[whole - 2] << 16 |
                            (uint32_t)p[whole - 1] << 24))
            *pt = (struct part){ .kind = PART_CORRUPT, .why = "its ending fails its checksum" };
        else if (left > whole)
            *pt = (struct part){ .kind = PART_CORRUPT, .why = "bytes follow its end mark" };
        else
            pt->kind = PART_END;
        return;
    }
    if (!starts_like(p, left, FRAME_MARK)) {
        *pt = (struct part){ .kind = PART_CORRUPT, .why = "a frame has no frame mark" };
        return;
    }
    pt->stored_len = get_u32(&in);
    pt->payload_len = get_u32(&in);
    pt->t_ns = get_u64(&in);
    uint32_t stored_crc = get_u32(&in), head_crc = get_u32(&in);
    if (in.bad)
        pt->why = "it ends inside a frame's head";
    else if (head_crc != crc_of(p, FRAME_HEAD_BYTES - 4))
        *pt = (struct part){ .kind = PART_CORRUPT, .why = "a frame's head fails its checksum" };
    else if (pt->stored_len > in.left)   /* the head is good: the length is true */
        pt->why = "it ends inside a frame";
    else if (stored_crc != crc_of(in.p, pt->stored_len))
        *pt = (struct part){ .kind = PART_CORRUPT, .why = "a frame fails its checksum" };
    else if (pt->payload_len > MAX_PAYLOAD)
        *pt = (struct part){ .kind = PART_CORRUPT, .why = "a frame claims too many bytes" };
    else
        pt->kind = PART_FRAME;
}

/* The header; false (err set) for a file that is not a whole header of
 * our version. A header cut short holds no frame: nothing to play. */
static bool check_header(const struct recording *rec, const char *path, char *err,
                         size_t err_len)
{
    size_t n = rec->len;
    if (n == 0 || memcmp(rec->data, HEADER_MAGIC, n < 8 ? n : 8) != 0) {
        snprintf(err, err_len, "%s: not a threadlab recording", path);
        return false;
    }
    struct in in = { rec->data + 8, n > 8 ? n - 8 : 0, false };
    uint32_t version = get_u32(&in);
    if (!in.bad && version != RECORD_VERSION) {
        snprintf(err, err_len, "%s: a recording of version %u; this threadlab reads "
                 "version %d", path, version, RECORD_VERSION);
        return false;
    }
    if (n < HEADER_BYTES) {
        snprintf(err, err_len, "%s: cut short at byte %zu, inside its header: no frame "
                 "to play", path, n);
        return false;
    }
    if (crc_of(rec->data, HEADER_BYTES - 4) !=
        (uint32_t)(rec->data[20] | rec->data[21] << 8 | rec->data[22] << 16 |
                   (uint32_t)rec->data[23] << 24)) {
        snprintf(err, err_len, "%s: corrupt: its header fails its checksum", path);
        return false;
    }
    return true;
}

static bool read_file(struct recording *rec, const char *path, char *err, size_t err_len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, err_len, "%s: %s", path, strerror(errno));
        return false;
    }
    struct buf all = { 0 };
    uint8_t chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        put(&all, chunk, n);
    bool failed = ferror(f);
    fclose(f);
    rec->data = all.data;
    rec->len = all.len;
    if (all.failed || failed)
        snprintf(err, err_len, "%s: %s", path, all.failed ? "out of memory" : "read error");
    return !all.failed && !failed;
}

/* Keep the state after frame i as a keyframe. */
static bool add_keyframe(struct recording *rec, int i, const int *pids)
{
    struct keyframe *g = realloc(rec->keys, (size_t)(rec->nkeys + 1) * sizeof(*g));
    if (!g)
        return false;
    rec->keys = g;
    struct keyframe *k = &rec->keys[rec->nkeys++];
    memset(k, 0, sizeof(*k));
    k->npanes = rec->frames[i].npanes;
    for (int p = 0; p < VIEW_MAX_PANES; p++) {
        k->pids[p] = pids[p];
        if (!copy_buf(&k->state[p], &rec->state[p]))
            return false;
    }
    return true;
}

/* Inflate a checked frame, decode it onto the running state, and check that
 * every pane is a snapshot we can show. False with err set. */
static bool load_frame(struct recording *rec, const struct part *pt, const uint8_t *stored,
                       int *pids, char *err, size_t err_len)
{
    int i = rec->nframes;
    if (i > 0 && pt->t_ns < rec->frames[i - 1].t_ns) {
        snprintf(err, err_len, "frame %d goes back in time", i + 1);
        return false;
    }
    size_t raw_at = rec->raw.len;
    bool room = reserve(&rec->raw, pt->payload_len);
    if (room)
        rec->raw.len += pt->payload_len;
    uLongf got = pt->payload_len;
    if (!room || uncompress(rec->raw.data + raw_at, &got, stored,
                                      pt->stored_len) != Z_OK || got != pt->payload_len) {
        snprintf(err, err_len, "frame %d does not inflate", i + 1);
        return false;
    }
    if (i == rec->cap) {
        rec->cap = rec->cap ? 2 * rec->cap : 256;
        struct rec_frame *g = realloc(rec->frames, (size_t)rec->cap * sizeof(*g));
        if (!g) {
            snprintf(err, err_len, "out of memory");
            return false;
        }
        rec->frames = g;
    }
    rec->frames[i] = (struct rec_frame){ .offset = raw_at, .len = pt->payload_len,
                                         .t_ns = pt->t_ns };
    rec->nframes++;
    if (!apply_frame(rec, i, pids, rec->state, true)) {
        snprintf(err, err_len, "frame %d does not decode", i + 1);
        return false;
    }
    /* One scratch snapshot for the whole load: it is large (every thread
     * slot), and allocating it per frame cost more than the decoding. */
    if (!rec->scratch && !(rec->scratch = malloc(sizeof(*rec->scratch)))) {
        snprintf(err, err_len, "out of memory");
        return false;
    }
    for (int p = 0; p < rec->frames[i].npanes; p++)
        if (rec->state[p].len > 0 &&
            !deserialize(rec->state[p].data, rec->state[p].len, rec->scratch)) {
            snprintf(err, err_len, "frame %d, pane %d is not a snapshot", i + 1, p + 1);
            return false;
        }
    bool ok = true;
    if (i % KEYFRAME_EVERY == 0)
        ok = add_keyframe(rec, i, pids);
    if (!ok)
        snprintf(err, err_len, "out of memory");
    return ok;
}

static struct recording *refuse(struct recording *rec)
{
    recording_free(rec);
    return NULL;
}

/* Check the file's bytes (rec->data) part by part and load its frames. */
static struct recording *parse(struct recording *rec, const char *path, char *err,
                               size_t err_len)
{
    char why[200];
    if (!check_header(rec, path, err, err_len))
        return refuse(rec);
    int pids[VIEW_MAX_PANES] = { 0 };
    size_t at = HEADER_BYTES;
    for (;;) {
        struct part pt;
        classify(rec->data + at, rec->len - at, &pt);
        if (pt.kind == PART_FRAME) {
            if (!load_frame(rec, &pt, rec->data + at + FRAME_HEAD_BYTES, pids, why,
                            sizeof(why))) {
                snprintf(err, err_len, "%s: corrupt: %s (byte %zu)", path, why, at);
                return refuse(rec);
            }
            at += FRAME_HEAD_BYTES + pt.stored_len;
        } else if (pt.kind == PART_END) {
            if (pt.frames != (uint32_t)rec->nframes) {
                snprintf(err, err_len, "%s: corrupt: its end mark counts %u frames, the "
                         "file holds %d", path, pt.frames, rec->nframes);
                return refuse(rec);
            }
            if (pt.ending_len > 0 && !(rec->ending = strndup(
                    (const char *)rec->data + at + END_HEAD_BYTES, pt.ending_len))) {
                snprintf(err, err_len, "out of memory");
                return refuse(rec);
            }
            break;
        } else if (pt.kind == PART_CORRUPT) {
            snprintf(err, err_len, "%s: corrupt: %s (byte %zu, after frame %d)", path,
                     pt.why, at, rec->nframes);
            return refuse(rec);
        } else {
            snprintf(rec->cut, sizeof(rec->cut), "%s: cut short at byte %zu of %zu, after "
                     "frame %d (%s): the recorder did not finish the file (killed, a full "
                     "disk, a power loss?); its %d whole frames play", path, at, rec->len,
                     rec->nframes, pt.why, rec->nframes);
            break;
        }
    }
    if (rec->nframes == 0) {
        if (rec->cut[0])
            snprintf(err, err_len, "%s: cut short at byte %zu, before its first whole "
                     "frame: nothing to play", path, rec->len);
        else
            snprintf(err, err_len, "%s: a recording with no frames", path);
        return refuse(rec);
    }
    rec->at = rec->nframes - 1;
    memcpy(rec->pids, pids, sizeof(pids));
    return rec;
}

struct recording *recording_load(const char *path, char *err, size_t err_len)
{
    struct recording *rec = calloc(1, sizeof(*rec));
    if (!rec) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    if (!read_file(rec, path, err, err_len))
        return refuse(rec);
    return parse(rec, path, err, err_len);
}

struct recording *recording_parse(const void *bytes, size_t len, const char *name,
                                  char *err, size_t err_len)
{
    struct recording *rec = calloc(1, sizeof(*rec));
    if (!rec || (len > 0 && !(rec->data = malloc(len)))) {
        snprintf(err, err_len, "out of memory");
        free(rec);
        return NULL;
    }
    if (len > 0)
        memcpy(rec->data, bytes, len);
    rec->len = len;
    return parse(rec, name, err, err_len);
}

const char *recording_cut(const struct recording *rec)
{
    return rec->cut[0] ? rec->cut : NULL;
}

int recording_frames(const struct recording *rec) { return rec->nframes; }

uint64_t recording_time_ns(const struct recording *rec, int frame)
{
    return rec->frames[frame].t_ns;
}

int recording_panes(const struct recording *rec, int frame)
{
    return rec->frames[frame].npanes;
}

int recording_new_events(const struct recording *rec, int frame)
{
    return rec->frames[frame].new_events;
}

bool recording_new_warning(const struct recording *rec, int frame)
{
    return rec->frames[frame].new_warning;
}

const char *recording_caption(struct recording *rec, int frame)
{
    const struct rec_frame *f = &rec->frames[frame];
    memcpy(rec->caption, rec->raw.data + f->caption_offset, f->caption_len);
    rec->caption[f->caption_len] = '\0';
    return rec->caption;
}

const char *recording_ending(const struct recording *rec)
{
    return rec->ending;
}

bool recording_has_warning(const struct recording *rec, int frame)
{
    return rec->frames[frame].warning;
}

/* Make rec->state the state after frame i: from the cache if it is just
 * behind, else from the keyframe at or before i. */
static void seek_state(struct recording *rec, int i)
{
    int from;
    if (rec->at <= i && rec->at >= i - KEYFRAME_EVERY) {
        from = rec->at + 1;
    } else {
        struct keyframe *k = &rec->keys[i / KEYFRAME_EVERY];
        for (int p = 0; p < VIEW_MAX_PANES; p++) {
            rec->pids[p] = k->pids[p];
            copy_buf(&rec->state[p], &k->state[p]);
        }
        from = (i / KEYFRAME_EVERY) * KEYFRAME_EVERY + 1;
    }
    for (int j = from; j <= i; j++)
        apply_frame(rec, j, rec->pids, rec->state, false);   /* checked at load */
    rec->at = i;
}

/* Rebuild pane p's snapshot of frame i (state must be after frame i). */
static void build(struct recording *rec, int i, int p, struct board_snapshot *s)
{
    if (rec->state[p].len == 0 ||
        !deserialize(rec->state[p].data, rec->state[p].len, s)) {
        s->pid = 0;
        return;
    }
    /* The event ring: this pane's last BOARD_EVENT_SLOTS events so far. */
    int last = rec->nevents[p];
    while (last > 0 && rec->events[p][last - 1].frame > i)
        last--;
    int first = last > BOARD_EVENT_SLOTS ? last - BOARD_EVENT_SLOTS : 0;
    int n = 0;
    for (int e = first; e < last; e++)
        s->events[n++] = rec->events[p][e].ev;
    s->nevents = n;
}

int recording_show(struct recording *rec, int frame, struct pane *panes)
{
    if (frame < 0)
        frame = 0;
    if (frame >= rec->nframes)
        frame = rec->nframes - 1;
    int n = rec->frames[frame].npanes;
    for (int p = 0; p < VIEW_MAX_PANES; p++) {
        if (!panes[p].now)
            panes[p].now = calloc(1, sizeof(struct board_snapshot));
        if (!panes[p].before)
            panes[p].before = calloc(1, sizeof(struct board_snapshot));
        if (!panes[p].now || !panes[p].before)
            return 0;
    }
    if (frame > 0) {
        seek_state(rec, frame - 1);
        for (int p = 0; p < n; p++)
            build(rec, frame - 1, p, panes[p].before);
    }
    seek_state(rec, frame);
    for (int p = 0; p < n; p++) {
        build(rec, frame, p, panes[p].now);
        if (frame == 0 || panes[p].before->pid != panes[p].now->pid)
            panes[p].before->pid = 0;
        panes[p].pid = panes[p].now->pid;
        panes[p].gone = rec->frames[frame].gone & (1u << p);
        snprintf(panes[p].error, sizeof(panes[p].error), "%s",
                 panes[p].gone ? "the server exited" : "");
    }
    return n;
}

void recording_release_panes(struct pane *panes)
{
    for (int p = 0; p < VIEW_MAX_PANES; p++) {
        free(panes[p].now);
        free(panes[p].before);
        panes[p].now = panes[p].before = NULL;
    }
}
