/* recording.c -- a recording read back: every part checked before it is
 * believed, then any frame rebuilt for threadlab replay. See record.h for
 * the format; the bytes themselves are record_format.c, and the recorder
 * record.c.
 *
 * In bounded memory, whatever the recording's length: the file is read
 * where a frame is wanted (pread), never held whole, and no frame's
 * inflated payload is kept but the last one read. What stays is an index
 * of the frames (where each is, its time, its warnings: 48 bytes a frame)
 * and keyframes, each the whole state after a frame, deflated,
 * so that any frame is rebuilt from the keyframe before it. Keyframes are
 * taken every KEYFRAME_EVERY frames; when together they pass
 * KEYS_BUDGET_BYTES, every other one is dropped and they are taken half as
 * often, so a long recording costs more work per step back, not more
 * memory. Stepping on is one frame of work; the state before the shown
 * frame is kept too (the view's rates need it).
 */
#include "record.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "record_format.h"

#define KEYS_BUDGET_BYTES (24u << 20)    /* the keyframes, deflated, together */
#define KEPT_EVENTS (3 * BOARD_EVENT_SLOTS) /* a pane's newest events, at most */

/* ---- what is kept --------------------------------------------------------------- */

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

/* A loop's stall ends with its checker's "NAME unblocked: ..." event. */
static bool ends_stall(const struct board_event_snap *ev)
{
    size_t word = strcspn(ev->text, " :");
    return ev->kind == EV_BLOCKED && strncmp(ev->text + word, " unblocked", 10) == 0;
}

struct rec_event {
    int frame;
    struct board_event_snap ev;
};

/* A frame, as the index keeps it (its bytes stay in the file). */
struct rec_frame {
    uint64_t at;                         /* its stored (deflated) bytes in the file */
    uint64_t t_ns;
    uint32_t stored_len, payload_len;
    uint32_t caption_at;                 /* its caption, in the payload */
    uint16_t caption_len;
    uint16_t nev[VIEW_MAX_PANES];        /* events that first appear here, per pane */
    uint8_t npanes;
    uint8_t gone;                        /* bit p: pane p's server had exited */
    bool warning;
    bool new_warning;                    /* a warning starts here */
};
_Static_assert(sizeof(struct rec_frame) <= 48, "the index grows with every frame");

/* The state after one frame: each pane's pid and serialization. */
struct position {
    int frame;                           /* -1: none */
    int pids[VIEW_MAX_PANES];
    struct rec_buf state[VIEW_MAX_PANES];
};

/* The state after frame `frame`, deflated. */
struct keyframe {
    int frame;
    uint8_t *bytes;
    uint32_t len, raw_len;
};

struct recording {
    int fd;                              /* the file, or -1: bytes in mem */
    uint8_t *mem;                        /* recording_parse's copy */
    size_t len;                          /* the file's length */
    struct rec_frame *frames;
    int nframes, cap;
    struct keyframe *keys;               /* by frame, increasing */
    int nkeys, key_every;
    size_t keys_bytes;
    /* The state shown (after `now.frame`) and the one before it; next is
     * where a frame is decoded, then the three turn. */
    struct position now, before, next;
    /* Each pane's newest events up to the frame shown, oldest first:
     * enough for its ring and for the ring of the frame before. */
    struct rec_event *events[VIEW_MAX_PANES];   /* KEPT_EVENTS each */
    int nevents[VIEW_MAX_PANES];
    struct rec_buf stored, payload;      /* the last frame read, deflated and not */
    int stored_frame, payload_frame;     /* which frame each holds, or -1 */
    struct rec_buf packed;               /* a keyframe, being packed or unpacked */
    char cut[400];                       /* where and why the file was cut short, or "" */
    char trouble[200];                   /* why the last frame could not be shown, or "" */
    char *ending;                        /* the end mark's text, or NULL */
    char caption[RECORD_CAPTION_MAX];    /* recording_caption's answer */
    /* Loading: the sources that warned in the frame before, per pane, and
     * the loops stalled now (from "blocked" until "unblocked"). */
    char warned[VIEW_MAX_PANES][WARN_SOURCES_MAX][WARN_SOURCE_BYTES];
    int nwarned[VIEW_MAX_PANES];
    char stalled[VIEW_MAX_PANES][WARN_SOURCES_MAX][WARN_SOURCE_BYTES];
    int nstalled[VIEW_MAX_PANES];
    struct board_snapshot *scratch;      /* loading: each pane is decoded into it */
};

/* ---- bytes from the file ------------------------------------------------------- */

/* n bytes at offset at. False at a read error (EIO) or past the end. */
static bool read_at(const struct recording *rec, uint64_t at, void *dst, size_t n)
{
    if (at > rec->len || n > rec->len - at)
        return false;
    if (rec->fd < 0) {
        memcpy(dst, rec->mem + at, n);
        return true;
    }
    for (size_t got = 0; got < n;) {
        ssize_t r = pread(rec->fd, (uint8_t *)dst + got, n - got, (off_t)(at + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        got += (size_t)r;
    }
    return true;
}

/* Why a step failed, for a message: memory, or the bytes. */
enum step {
    STEP_OK,
    STEP_NO_MEMORY,                      /* malloc or zlib ran out */
    STEP_UNREADABLE,                     /* a read failed (the disk) */
    STEP_BAD,                            /* the bytes do not decode */
};

static const char *step_why(enum step s)
{
    return s == STEP_NO_MEMORY ? "out of memory" : s == STEP_UNREADABLE ? "a read error"
           : "it does not decode";
}

/* Frame i's payload, read and inflated into rec->payload (the last one is
 * kept: a caption asked after the frame costs nothing). */
static enum step read_payload(struct recording *rec, int i)
{
    const struct rec_frame *f = &rec->frames[i];
    if (rec->payload_frame == i)
        return STEP_OK;
    rec->payload_frame = -1;
    rec->payload.len = 0;
    rec->payload.failed = false;
    if (!rec_reserve(&rec->payload, f->payload_len))
        return STEP_NO_MEMORY;
    if (rec->stored_frame != i) {        /* loading, classify has just read them */
        rec->stored_frame = -1;
        rec->stored.len = 0;
        rec->stored.failed = false;
        if (!rec_reserve(&rec->stored, f->stored_len))
            return STEP_NO_MEMORY;
        if (!read_at(rec, f->at, rec->stored.data, f->stored_len))
            return STEP_UNREADABLE;
        rec->stored_frame = i;
    }
    uLongf got = f->payload_len;
    int z = uncompress(rec->payload.data, &got, rec->stored.data, f->stored_len);
    if (z == Z_MEM_ERROR)
        return STEP_NO_MEMORY;
    if (z != Z_OK || got != f->payload_len)
        return STEP_BAD;
    rec->payload.len = f->payload_len;
    rec->payload_frame = i;
    return STEP_OK;
}

/* ---- positions ------------------------------------------------------------------ */

static void position_free(struct position *pos)
{
    for (int p = 0; p < VIEW_MAX_PANES; p++)
        free(pos->state[p].data);
}

/* Room for m more events in pane p: the oldest go, but the newest
 * BOARD_EVENT_SLOTS stay (the ring of the frame before the next). */
static void make_room(struct recording *rec, int p, uint32_t m)
{
    int n = rec->nevents[p];
    if (n + (int)m <= KEPT_EVENTS)
        return;
    int keep = n < BOARD_EVENT_SLOTS ? n : BOARD_EVENT_SLOTS;
    memmove(rec->events[p], rec->events[p] + (n - keep), (size_t)keep * sizeof(struct rec_event));
    rec->nevents[p] = keep;
}

/* Where source is in list (of n), or -1. */
static int source_at(char list[][WARN_SOURCE_BYTES], int n, const char *source)
{
    for (int k = 0; k < n; k++)
        if (strcmp(list[k], source) == 0)
            return k;
    return -1;
}

/* A loop's stall starts with its first "blocked" event and ends with
 * "unblocked": each stall is a warning of its own, even when the next
 * begins in the frame after (a slow-handler reactor stalls on every
 * !sleep). True when ev starts one. */
static bool note_stall(struct recording *rec, int p, const struct board_event_snap *ev,
                       const char *source)
{
    int at = source_at(rec->stalled[p], rec->nstalled[p], source);
    if (ends_stall(ev)) {
        if (at >= 0)                                 /* the last takes its place */
            memcpy(rec->stalled[p][at], rec->stalled[p][--rec->nstalled[p]],
                   WARN_SOURCE_BYTES);
        return false;
    }
    if (at >= 0)
        return false;
    if (rec->nstalled[p] < WARN_SOURCES_MAX)
        memcpy(rec->stalled[p][rec->nstalled[p]++], source, WARN_SOURCE_BYTES);
    return true;
}

/* A warning of pane p in frame f: a loop's stall starts one (note_stall);
 * a rejection or a shrink starts one when its source gave none in the
 * frame before. The sources of this frame go into now. */
static void note_warning(struct recording *rec, struct rec_frame *f, int p,
                         const struct board_event_snap *ev,
                         char now[][WARN_SOURCE_BYTES], int *nnow)
{
    char source[WARN_SOURCE_BYTES] = "";
    warn_source(ev, source, sizeof(source));
    if (ev->kind == EV_BLOCKED ? note_stall(rec, p, ev, source)
                               : source_at(rec->warned[p], rec->nwarned[p], source) < 0)
        f->new_warning = true;
    if (source_at(now, *nnow, source) >= 0)
        return;
    if (*nnow < WARN_SOURCES_MAX)
        memcpy(now[(*nnow)++], source, sizeof(source));
}

/* Decode frame i (rec->payload) onto `from`, the state after frame i - 1,
 * into `to`, its events onto the kept ones. Loading (loading), it fills
 * the frame's index entry and notes its warnings; the frame was checked
 * then, so later only memory can fail. */
static enum step decode_frame(struct recording *rec, int i, const struct position *from,
                              struct position *to, bool loading)
{
    struct rec_frame *f = &rec->frames[i];
    struct rec_in in = { rec->payload.data, rec->payload.len, false };
    int npanes = rec_get_u8(&in);
    if (npanes > VIEW_MAX_PANES)
        return STEP_BAD;
    char now[VIEW_MAX_PANES][WARN_SOURCES_MAX][WARN_SOURCE_BYTES];
    int nnow[VIEW_MAX_PANES] = { 0 };
    to->frame = i;
    for (int p = npanes; p < VIEW_MAX_PANES; p++) {  /* panes this frame lacks stay */
        to->pids[p] = from->pids[p];
        to->state[p].len = 0;
        to->state[p].failed = false;
        rec_put(&to->state[p], from->state[p].data, from->state[p].len);
        if (to->state[p].failed)
            return STEP_NO_MEMORY;
    }
    for (int p = 0; p < npanes && !in.bad; p++) {
        int pid = (int)rec_get_u32(&in);
        uint8_t gone = rec_get_u8(&in);
        uint32_t dlen = rec_get_u32(&in);
        if (in.bad || dlen > in.left)
            return STEP_BAD;
        static const struct rec_buf none = { 0 };
        struct rec_in d = { in.p, dlen, false };
        in.p += dlen;
        in.left -= dlen;
        to->state[p].failed = false;
        if (!rec_delta_apply(pid == from->pids[p] ? &from->state[p] : &none, &d, &to->state[p]))
            return to->state[p].failed ? STEP_NO_MEMORY : STEP_BAD;
        if (d.left != 0)
            return STEP_BAD;
        to->pids[p] = pid;
        uint32_t nev = rec_get_u32(&in);
        if (nev > BOARD_EVENT_SLOTS)
            return STEP_BAD;
        make_room(rec, p, nev);
        for (uint32_t e = 0; e < nev && !in.bad; e++) {
            struct rec_event *ev = &rec->events[p][rec->nevents[p]];
            if (!rec_get_event(&in, &ev->ev))
                return STEP_BAD;
            ev->frame = i;
            rec->nevents[p]++;
            if (loading && is_warning(&ev->ev)) {
                f->warning = true;
                note_warning(rec, f, p, &ev->ev, now[p], &nnow[p]);
            }
        }
        if (loading) {
            f->gone |= (uint8_t)(gone ? 1u << p : 0);
            f->nev[p] = (uint16_t)nev;
        }
    }
    uint16_t caption_len = rec_get_u16(&in);
    if (in.bad || caption_len > in.left || caption_len >= RECORD_CAPTION_MAX ||
        in.left != caption_len)
        return STEP_BAD;
    if (loading) {
        f->npanes = (uint8_t)npanes;
        f->caption_len = caption_len;
        f->caption_at = (uint32_t)(in.p - rec->payload.data);
        for (int p = 0; p < VIEW_MAX_PANES; p++) {   /* this frame's sources, for the next */
            memcpy(rec->warned[p], now[p], sizeof(now[p]));
            rec->nwarned[p] = p < npanes ? nnow[p] : 0;
        }
    }
    return STEP_OK;
}

/* Read frame i and apply it: before becomes the state shown, and the
 * state shown frame i's. now must be the state after frame i - 1. */
static enum step step_on(struct recording *rec, int i, bool loading)
{
    enum step s = read_payload(rec, i);
    if (s == STEP_OK)
        s = decode_frame(rec, i, &rec->now, &rec->next, loading);
    if (s != STEP_OK) {
        rec->now.frame = rec->before.frame = -1;    /* half applied: rebuild */
        return s;
    }
    struct position old_before = rec->before;
    rec->before = rec->now;
    rec->now = rec->next;
    rec->next = old_before;
    return STEP_OK;
}

/* ---- keyframes ------------------------------------------------------------------ */

/* The state shown, deflated, as the keyframe of its frame. */
static enum step add_keyframe(struct recording *rec)
{
    struct rec_buf *b = &rec->packed;
    b->len = 0;
    b->failed = false;
    for (int p = 0; p < VIEW_MAX_PANES; p++) {
        rec_put_u32(b, (uint32_t)rec->now.pids[p]);
        rec_put_u32(b, (uint32_t)rec->now.state[p].len);
        rec_put(b, rec->now.state[p].data, rec->now.state[p].len);
        rec_put_u32(b, (uint32_t)rec->nevents[p]);
        for (int e = 0; e < rec->nevents[p]; e++) {
            rec_put_u32(b, (uint32_t)rec->events[p][e].frame);
            rec_put_event(b, &rec->events[p][e].ev);
        }
    }
    uLongf len = compressBound(b->len);
    uint8_t *bytes = malloc(len);
    struct keyframe *g = realloc(rec->keys, (size_t)(rec->nkeys + 1) * sizeof(*g));
    if (g)
        rec->keys = g;
    if (b->failed || !bytes || !g || compress2(bytes, &len, b->data, b->len, 1) != Z_OK) {
        free(bytes);
        return STEP_NO_MEMORY;
    }
    uint8_t *fit = realloc(bytes, len);        /* compressBound is generous */
    rec->keys[rec->nkeys++] = (struct keyframe){ rec->now.frame, fit ? fit : bytes,
                                                 (uint32_t)len, (uint32_t)b->len };
    rec->keys_bytes += len;
    /* Over budget: every other keyframe goes, and they come half as often. */
    while (rec->keys_bytes > KEYS_BUDGET_BYTES && rec->nkeys > 1) {
        int kept = 0;
        rec->key_every *= 2;
        for (int k = 0; k < rec->nkeys; k++) {
            if (rec->keys[k].frame % rec->key_every == 0) {
                rec->keys[kept++] = rec->keys[k];
            } else {
                rec->keys_bytes -= rec->keys[k].len;
                free(rec->keys[k].bytes);
            }
        }
        rec->nkeys = kept;
    }
    return STEP_OK;
}

/* The state shown becomes keyframe k's (the state before it unknown). */
static enum step restore_keyframe(struct recording *rec, const struct keyframe *k)
{
    struct rec_buf *b = &rec->packed;
    b->len = 0;
    b->failed = false;
    if (!rec_reserve(b, k->raw_len))
        return STEP_NO_MEMORY;
    uLongf got = k->raw_len;
    int z = uncompress(b->data, &got, k->bytes, k->len);
    rec->now.frame = rec->before.frame = -1;     /* until it is whole */
    if (z != Z_OK || got != k->raw_len)
        return z == Z_MEM_ERROR ? STEP_NO_MEMORY : STEP_BAD;
    struct rec_in in = { b->data, k->raw_len, false };
    for (int p = 0; p < VIEW_MAX_PANES && !in.bad; p++) {
        rec->now.pids[p] = (int)rec_get_u32(&in);
        uint32_t len = rec_get_u32(&in);
        if (in.bad || len > in.left)
            return STEP_BAD;
        rec->now.state[p].len = 0;
        rec->now.state[p].failed = false;
        rec_put(&rec->now.state[p], in.p, len);
        if (rec->now.state[p].failed)
            return STEP_NO_MEMORY;
        in.p += len;
        in.left -= len;
        uint32_t n = rec_get_u32(&in);
        if (n > KEPT_EVENTS)
            return STEP_BAD;
        for (uint32_t e = 0; e < n && !in.bad; e++) {
            rec->events[p][e].frame = (int)rec_get_u32(&in);
            if (!rec_get_event(&in, &rec->events[p][e].ev))
                return STEP_BAD;
        }
        rec->nevents[p] = (int)n;
    }
    rec->now.frame = k->frame;
    rec->before.frame = -1;
    return in.bad ? STEP_BAD : STEP_OK;
}

/* ---- loading: every part checked before it is believed ------------------------ */

/* What the bytes at one place in a recording are. */
enum part_kind {
    PART_FRAME,                          /* a whole frame, head and stored bytes checked */
    PART_END,                            /* the end mark, checked: the file is whole */
    PART_CUT,                            /* the bytes end here or inside this part */
    PART_CORRUPT,                        /* bytes that no recorder wrote */
    PART_FAILED,                         /* memory or a read failed: nothing is known */
};

struct part {
    enum part_kind kind;
    uint32_t stored_len, payload_len;    /* PART_FRAME */
    uint64_t t_ns;                       /* PART_FRAME */
    uint32_t frames;                     /* PART_END: the count it carries */
    uint32_t ending_len;                 /* PART_END: its text's length */
    const char *why;                     /* PART_CUT, PART_CORRUPT, PART_FAILED: in words */
};

static uint32_t u32_at(const uint8_t *p)
{
    return (uint32_t)(p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24);
}

/* The file from at to its end is zeros (the lengths reached the disk, the
 * data did not). Read in pieces: the rest may be long. */
static bool rest_is_zero(const struct recording *rec, uint64_t at, bool *failed)
{
    uint8_t chunk[4096];
    *failed = false;
    while (at < rec->len) {
        size_t n = rec->len - at < sizeof(chunk) ? (size_t)(rec->len - at) : sizeof(chunk);
        if (!read_at(rec, at, chunk, n)) {
            *failed = true;
            return false;
        }
        for (size_t i = 0; i < n; i++)
            if (chunk[i])
                return false;
        at += n;
    }
    return true;
}

/* The n first bytes of p are the first bytes of mark. */
static bool starts_like(const uint8_t *p, size_t n, const char *mark)
{
    return memcmp(p, mark, n < 4 ? n : 4) == 0;
}

/* The end mark at `at` (head_n of its bytes in head, `left` to the file's
 * end). */
static void classify_end(struct recording *rec, uint64_t at, const uint8_t *head,
                         size_t head_n, size_t left, struct part *pt)
{
    struct rec_in in = { head + 4, head_n - 4, false };
    pt->frames = rec_get_u32(&in);
    pt->ending_len = rec_get_u32(&in);
    uint32_t crc = rec_get_u32(&in);
    size_t whole = END_HEAD_BYTES + (size_t)pt->ending_len + 4;
    if (in.bad) {
        pt->why = "it ends inside the end mark";
    } else if (crc != rec_crc_of(head, END_HEAD_BYTES - 4)) {
        *pt = (struct part){ .kind = PART_CORRUPT, .why = "its end mark fails its checksum" };
    } else if (pt->ending_len >= RECORD_ENDING_MAX) {
        *pt = (struct part){ .kind = PART_CORRUPT, .why = "its ending claims too many bytes" };
    } else if (left < whole) {          /* the head is good: the length is true */
        pt->why = "it ends inside the end mark's text";
    } else {
        struct rec_buf *b = &rec->packed;
        b->len = 0;
        b->failed = false;
        if (!rec_reserve(b, pt->ending_len + 4) ||
            !read_at(rec, at + END_HEAD_BYTES, b->data, pt->ending_len + 4))
            *pt = (struct part){ .kind = PART_FAILED,
                                 .why = b->failed ? "out of memory" : "a read error" };
        else if (rec_crc_of(b->data, pt->ending_len) != u32_at(b->data + pt->ending_len))
            *pt = (struct part){ .kind = PART_CORRUPT, .why = "its ending fails its checksum" };
        else if (left > whole)
            *pt = (struct part){ .kind = PART_CORRUPT, .why = "bytes follow its end mark" };
        else
            pt->kind = PART_END;
    }
}

/* Classify the bytes at `at`. A cut is told from damage by the checksums:
 * the recorder writes each part whole, so bytes that end early were cut,
 * while whole bytes that fail a CRC were changed. A frame's stored bytes
 * are left in rec->stored. */
static void classify(struct recording *rec, uint64_t at, struct part *pt)
{
    uint8_t head[FRAME_HEAD_BYTES];
    size_t left = (size_t)(rec->len - at);
    size_t n = left < sizeof(head) ? left : sizeof(head);
    bool failed = false;
    memset(pt, 0, sizeof(*pt));
    pt->kind = PART_CUT;
    if (left == 0) {
        pt->why = "it ends after a whole frame, with no end mark";
        return;
    }
    if (!read_at(rec, at, head, n)) {
        *pt = (struct part){ .kind = PART_FAILED, .why = "a read error" };
        return;
    }
    if (head[0] == 0 && rest_is_zero(rec, at, &failed)) {
        pt->why = "the rest of it is zeros, writes that never reached the disk";
        return;
    }
    if (failed) {
        *pt = (struct part){ .kind = PART_FAILED, .why = "a read error" };
        return;
    }
    bool end = starts_like(head, n, END_MARK);
    if (left < 4 && (end || starts_like(head, n, FRAME_MARK))) {
        pt->why = "it ends inside the next part's mark";
        return;
    }
    if (end) {
        classify_end(rec, at, head, n, left, pt);
        return;
    }
    if (!starts_like(head, n, FRAME_MARK)) {
        *pt = (struct part){ .kind = PART_CORRUPT, .why = "a frame has no frame mark" };
        return;
    }
    struct rec_in in = { head + 4, n - 4, false };
    pt->stored_len = rec_get_u32(&in);
    pt->payload_len = rec_get_u32(&in);
    pt->t_ns = rec_get_u64(&in);
    uint32_t stored_crc = rec_get_u32(&in), head_crc = rec_get_u32(&in);
    if (in.bad) {
        pt->why = "it ends inside a frame's head";
    } else if (head_crc != rec_crc_of(head, FRAME_HEAD_BYTES - 4)) {
        *pt = (struct part){ .kind = PART_CORRUPT, .why = "a frame's head fails its checksum" };
    } else if (pt->stored_len > left - FRAME_HEAD_BYTES) {  /* the head is good: the length is true */
        pt->why = "it ends inside a frame";
    } else {
        struct rec_buf *b = &rec->stored;
        b->len = 0;
        b->failed = false;
        rec->stored_frame = -1;
        if (!rec_reserve(b, pt->stored_len) ||
            !read_at(rec, at + FRAME_HEAD_BYTES, b->data, pt->stored_len))
            *pt = (struct part){ .kind = PART_FAILED,
                                 .why = b->failed ? "out of memory" : "a read error" };
        else if (stored_crc != rec_crc_of(b->data, pt->stored_len))
            *pt = (struct part){ .kind = PART_CORRUPT, .why = "a frame fails its checksum" };
        else if (pt->payload_len > MAX_PAYLOAD)
            *pt = (struct part){ .kind = PART_CORRUPT, .why = "a frame claims too many bytes" };
        else
            pt->kind = PART_FRAME;
    }
}

/* The header; false (err set) for a file that is not a whole header of
 * our version. A header cut short holds no frame: nothing to play. */
static bool check_header(const struct recording *rec, const char *path, char *err,
                         size_t err_len)
{
    uint8_t head[HEADER_BYTES];
    size_t n = rec->len < HEADER_BYTES ? (size_t)rec->len : HEADER_BYTES;
    if (!read_at(rec, 0, head, n)) {
        snprintf(err, err_len, "%s: a read error", path);
        return false;
    }
    if (n == 0 || memcmp(head, HEADER_MAGIC, n < 8 ? n : 8) != 0) {
        snprintf(err, err_len, "%s: not a threadlab recording", path);
        return false;
    }
    struct rec_in in = { head + 8, n > 8 ? n - 8 : 0, false };
    uint32_t version = rec_get_u32(&in);
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
    if (rec_crc_of(head, HEADER_BYTES - 4) != u32_at(head + 20)) {
        snprintf(err, err_len, "%s: corrupt: its header fails its checksum", path);
        return false;
    }
    return true;
}

/* Inflate a checked frame (its stored bytes in rec->stored), decode it
 * onto the state shown, check that every pane is a snapshot we can show,
 * and keep a keyframe when it is time. False with err set; *memory when
 * what failed was memory (or a read), not the bytes. */
static bool load_frame(struct recording *rec, const struct part *pt, uint64_t stored_at,
                       char *err, size_t err_len, bool *memory)
{
    int i = rec->nframes;
    *memory = false;
    if (i > 0 && pt->t_ns < rec->frames[i - 1].t_ns) {
        snprintf(err, err_len, "frame %d goes back in time", i + 1);
        return false;
    }
    if (i == rec->cap) {
        int cap = rec->cap ? 2 * rec->cap : 256;
        struct rec_frame *g = realloc(rec->frames, (size_t)cap * sizeof(*g));
        if (!g) {
            snprintf(err, err_len, "out of memory at frame %d (its index)", i + 1);
            *memory = true;
            return false;
        }
        rec->frames = g;
        rec->cap = cap;
    }
    rec->frames[i] = (struct rec_frame){ .at = stored_at, .t_ns = pt->t_ns,
                                         .stored_len = pt->stored_len,
                                         .payload_len = pt->payload_len };
    rec->nframes++;
    rec->stored_frame = i;                /* classify read them */
    enum step s = step_on(rec, i, true);
    if (s == STEP_BAD) {
        snprintf(err, err_len, "frame %d does not %s", i + 1,
                 rec->payload_frame == i ? "decode" : "inflate");
        return false;
    }
    if (s == STEP_OK && !rec->scratch && !(rec->scratch = malloc(sizeof(*rec->scratch))))
        s = STEP_NO_MEMORY;
    if (s != STEP_OK) {
        snprintf(err, err_len, "%s at frame %d (it inflates to %u bytes)", step_why(s), i + 1,
                 pt->payload_len);
        *memory = true;
        return false;
    }
    /* One scratch snapshot for the whole load: it is large (every thread
     * slot), and allocating it per frame cost more than the decoding. */
    for (int p = 0; p < rec->frames[i].npanes; p++)
        if (rec->now.state[p].len > 0 &&
            !rec_deserialize(rec->now.state[p].data, rec->now.state[p].len, rec->scratch)) {
            snprintf(err, err_len, "frame %d, pane %d is not a snapshot", i + 1, p + 1);
            return false;
        }
    if (i % rec->key_every == 0 && (s = add_keyframe(rec)) != STEP_OK) {
        snprintf(err, err_len, "%s at frame %d (a keyframe)", step_why(s), i + 1);
        *memory = true;
        return false;
    }
    return true;
}

static struct recording *refuse(struct recording *rec)
{
    recording_free(rec);
    return NULL;
}

/* Check the file part by part and load its frames. */
static struct recording *parse(struct recording *rec, const char *path, char *err,
                               size_t err_len)
{
    char why[200];
    if (!check_header(rec, path, err, err_len))
        return refuse(rec);
    uint64_t at = HEADER_BYTES;
    for (;;) {
        struct part pt;
        bool memory;
        classify(rec, at, &pt);
        if (pt.kind == PART_FRAME) {
            if (!load_frame(rec, &pt, at + FRAME_HEAD_BYTES, why, sizeof(why), &memory)) {
                if (memory)             /* the file may be fine: say what ran out */
                    snprintf(err, err_len, "%s: %s (byte %llu)", path, why,
                             (unsigned long long)at);
                else
                    snprintf(err, err_len, "%s: corrupt: %s (byte %llu)", path, why,
                             (unsigned long long)at);
                return refuse(rec);
            }
            at += FRAME_HEAD_BYTES + pt.stored_len;
        } else if (pt.kind == PART_END) {
            if (pt.frames != (uint32_t)rec->nframes) {
                snprintf(err, err_len, "%s: corrupt: its end mark counts %u frames, the "
                         "file holds %d", path, pt.frames, rec->nframes);
                return refuse(rec);
            }
            if (pt.ending_len > 0 &&
                !(rec->ending = strndup((const char *)rec->packed.data, pt.ending_len))) {
                snprintf(err, err_len, "%s: out of memory (its ending)", path);
                return refuse(rec);
            }
            break;
        } else if (pt.kind == PART_CORRUPT) {
            snprintf(err, err_len, "%s: corrupt: %s (byte %llu, after frame %d)", path,
                     pt.why, (unsigned long long)at, rec->nframes);
            return refuse(rec);
        } else if (pt.kind == PART_FAILED) {
            snprintf(err, err_len, "%s: %s at byte %llu, after frame %d", path, pt.why,
                     (unsigned long long)at, rec->nframes);
            return refuse(rec);
        } else {
            snprintf(rec->cut, sizeof(rec->cut), "%s: cut short at byte %llu of %llu, after "
                     "frame %d (%s): the recorder did not finish the file (killed, a full "
                     "disk, a power loss?); its %d whole frames play", path,
                     (unsigned long long)at, (unsigned long long)rec->len, rec->nframes,
                     pt.why, rec->nframes);
            break;
        }
    }
    if (rec->nframes == 0) {
        if (rec->cut[0])
            snprintf(err, err_len, "%s: cut short at byte %llu, before its first whole "
                     "frame: nothing to play", path, (unsigned long long)rec->len);
        else
            snprintf(err, err_len, "%s: a recording with no frames", path);
        return refuse(rec);
    }
    free(rec->scratch);                  /* loading is done with it */
    rec->scratch = NULL;
    return rec;
}

/* An empty recording: nothing read yet, its buffers ready. */
static struct recording *recording_new(char *err, size_t err_len)
{
    struct recording *rec = calloc(1, sizeof(*rec));
    if (!rec) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    rec->fd = -1;
    rec->stored_frame = rec->payload_frame = -1;
    rec->key_every = KEYFRAME_EVERY;
    rec->now.frame = rec->before.frame = rec->next.frame = -1;
    for (int p = 0; p < VIEW_MAX_PANES; p++)
        if (!(rec->events[p] = malloc(KEPT_EVENTS * sizeof(struct rec_event)))) {
            snprintf(err, err_len, "out of memory");
            recording_free(rec);
            return NULL;
        }
    return rec;
}

void recording_free(struct recording *rec)
{
    if (!rec)
        return;
    for (int k = 0; k < rec->nkeys; k++)
        free(rec->keys[k].bytes);
    free(rec->keys);
    position_free(&rec->now);
    position_free(&rec->before);
    position_free(&rec->next);
    for (int p = 0; p < VIEW_MAX_PANES; p++)
        free(rec->events[p]);
    free(rec->stored.data);
    free(rec->payload.data);
    free(rec->packed.data);
    free(rec->scratch);
    free(rec->frames);
    free(rec->mem);
    free(rec->ending);
    if (rec->fd >= 0)
        close(rec->fd);
    free(rec);
}

struct recording *recording_load(const char *path, char *err, size_t err_len)
{
    struct recording *rec = recording_new(err, err_len);
    if (!rec)
        return NULL;
    struct stat st;
    rec->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (rec->fd < 0 || fstat(rec->fd, &st) < 0) {
        snprintf(err, err_len, "%s: %s", path, strerror(errno));
        return refuse(rec);
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, err_len, "%s: not a regular file", path);
        return refuse(rec);
    }
    rec->len = (size_t)st.st_size;
    return parse(rec, path, err, err_len);
}

struct recording *recording_parse(const void *bytes, size_t len, const char *name,
                                  char *err, size_t err_len)
{
    struct recording *rec = recording_new(err, err_len);
    if (!rec)
        return NULL;
    if (len > 0 && !(rec->mem = malloc(len))) {
        snprintf(err, err_len, "out of memory");
        return refuse(rec);
    }
    if (len > 0)
        memcpy(rec->mem, bytes, len);
    rec->len = len;
    return parse(rec, name, err, err_len);
}

/* ---- replaying ------------------------------------------------------------------ */

const char *recording_cut(const struct recording *rec)
{
    return rec->cut[0] ? rec->cut : NULL;
}

const char *recording_trouble(const struct recording *rec)
{
    return rec->trouble[0] ? rec->trouble : NULL;
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
    int n = 0;
    for (int p = 0; p < VIEW_MAX_PANES; p++)
        n += rec->frames[frame].nev[p];
    return n;
}

bool recording_new_warning(const struct recording *rec, int frame)
{
    return rec->frames[frame].new_warning;
}

bool recording_has_warning(const struct recording *rec, int frame)
{
    return rec->frames[frame].warning;
}

const char *recording_caption(struct recording *rec, int frame)
{
    const struct rec_frame *f = &rec->frames[frame];
    rec->caption[0] = '\0';
    if (f->caption_len > 0 && read_payload(rec, frame) == STEP_OK) {
        memcpy(rec->caption, rec->payload.data + f->caption_at, f->caption_len);
        rec->caption[f->caption_len] = '\0';
    }
    return rec->caption;
}

const char *recording_ending(const struct recording *rec)
{
    return rec->ending;
}

/* Make the state shown the one after frame i, and the state before it
 * the one after frame i - 1: on from the state shown when i is a little
 * ahead, else from the last keyframe before i. */
static enum step seek(struct recording *rec, int i)
{
    if (rec->now.frame == i && (i == 0 || rec->before.frame == i - 1))
        return STEP_OK;
    bool ahead = rec->now.frame >= 0 && rec->now.frame < i &&
                 i - rec->now.frame <= rec->key_every;
    if (!ahead) {
        int k = rec->nkeys - 1;
        while (k > 0 && rec->keys[k].frame > (i > 0 ? i - 1 : 0))
            k--;
        enum step s = restore_keyframe(rec, &rec->keys[k]);
        if (s != STEP_OK)
            return s;
        rec->now.frame = rec->keys[k].frame;
    }
    for (int j = rec->now.frame + 1; j <= i; j++) {
        enum step s = step_on(rec, j, false);
        if (s != STEP_OK)
            return s;
    }
    return STEP_OK;
}

/* Pane p's snapshot from a state (the one after frame i), its event ring
 * the pane's last BOARD_EVENT_SLOTS events up to frame i. */
static void build(struct recording *rec, const struct position *pos, int i, int p,
                  struct board_snapshot *s)
{
    if (pos->state[p].len == 0 ||
        !rec_deserialize(pos->state[p].data, pos->state[p].len, s)) {
        s->pid = 0;
        return;
    }
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
        if (!panes[p].now || !panes[p].before) {
            snprintf(rec->trouble, sizeof(rec->trouble), "out of memory showing frame %d",
                     frame + 1);
            return 0;
        }
    }
    enum step s = seek(rec, frame);
    if (s != STEP_OK) {
        snprintf(rec->trouble, sizeof(rec->trouble), "%s rebuilding frame %d", step_why(s),
                 frame + 1);
        return 0;
    }
    rec->trouble[0] = '\0';
    for (int p = 0; p < n; p++) {
        if (frame > 0)
            build(rec, &rec->before, frame - 1, p, panes[p].before);
        build(rec, &rec->now, frame, p, panes[p].now);
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
