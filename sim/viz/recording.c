/* recording.c -- a recording read back: every part checked before it is
 * believed, then any frame rebuilt (from the keyframe before it) for
 * threadlab replay. See record.h for the format; the bytes themselves are
 * record_format.c, and the recorder record.c. */
#include "record.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "record_format.h"

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
    struct rec_buf state[VIEW_MAX_PANES];
};

struct recording {
    uint8_t *data;                       /* the file */
    size_t len;
    struct rec_buf raw;                      /* every frame's payload, inflated */
    struct rec_frame *frames;
    int nframes, cap;
    struct keyframe *keys;               /* keys[k]: the state after frame k * KEYFRAME_EVERY */
    int nkeys;
    struct rec_event *events[VIEW_MAX_PANES];
    int nevents[VIEW_MAX_PANES];
    /* The state after frame `at`, kept so stepping on is one frame of work. */
    int at;
    int pids[VIEW_MAX_PANES];
    struct rec_buf state[VIEW_MAX_PANES];
    char cut[400];                       /* where and why the file was cut short, or "" */
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

/* Apply frame i's payload to states; events are appended when collect. */
static bool apply_frame(struct recording *rec, int i, int *pids, struct rec_buf *state,
                        bool collect)
{
    struct rec_frame *f = &rec->frames[i];
    struct rec_in in = { rec->raw.data + f->offset, f->len, false };
    int npanes = rec_get_u8(&in);
    if (npanes > VIEW_MAX_PANES)
        return false;
    f->npanes = npanes;
    char now[VIEW_MAX_PANES][WARN_SOURCES_MAX][WARN_SOURCE_BYTES];
    int nnow[VIEW_MAX_PANES] = { 0 };
    struct rec_buf next = { 0 };
    for (int p = 0; p < npanes && !in.bad; p++) {
        int pid = (int)rec_get_u32(&in);
        if (rec_get_u8(&in))                     /* its server had exited */
            f->gone |= 1u << p;
        if (pid != pids[p]) {
            state[p].len = 0;
            pids[p] = pid;
        }
        uint32_t dlen = rec_get_u32(&in);
        if (in.bad || dlen > in.left) {
            free(next.data);
            return false;
        }
        struct rec_in d = { in.p, dlen, false };
        in.p += dlen;
        in.left -= dlen;
        if (!rec_delta_apply(&state[p], &d, &next) || d.left != 0) {
            free(next.data);
            return false;
        }
        struct rec_buf tmp = state[p];
        state[p] = next;
        next = tmp;
        uint32_t nev = rec_get_u32(&in);
        if (nev > BOARD_EVENT_SLOTS) {
            free(next.data);
            return false;
        }
        for (uint32_t e = 0; e < nev && !in.bad; e++) {
            struct board_event_snap ev;
            if (!rec_get_event(&in, &ev)) {
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
    f->caption_len = rec_get_u16(&in);
    if (in.bad || f->caption_len > in.left || f->caption_len >= RECORD_CAPTION_MAX)
        return false;
    f->caption_offset = (size_t)(in.p - rec->raw.data);
    in.p += f->caption_len;
    in.left -= f->caption_len;
    return !in.bad && in.left == 0;
}

static bool copy_buf(struct rec_buf *dst, const struct rec_buf *src)
{
    dst->len = 0;
    dst->failed = false;
    rec_put(dst, src->data, src->len);
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
    struct rec_in in = { p + 4, left - 4, false };
    if (end) {
        pt->frames = rec_get_u32(&in);
        pt->ending_len = rec_get_u32(&in);
        uint32_t crc = rec_get_u32(&in);
        size_t whole = END_HEAD_BYTES + (size_t)pt->ending_len + 4;
        if (in.bad)
            pt->why = "it ends inside the end mark";
        else if (crc != rec_crc_of(p, END_HEAD_BYTES - 4))
            *pt = (struct part){ .kind = PART_CORRUPT, .why = "its end mark fails its checksum" };
        else if (pt->ending_len >= RECORD_ENDING_MAX)
            *pt = (struct part){ .kind = PART_CORRUPT, .why = "its ending claims too many bytes" };
        else if (left < whole)       /* the head is good: the length is true */
            pt->why = "it ends inside the end mark's text";
        else if (rec_crc_of(p + END_HEAD_BYTES, pt->ending_len) !=
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
    pt->stored_len = rec_get_u32(&in);
    pt->payload_len = rec_get_u32(&in);
    pt->t_ns = rec_get_u64(&in);
    uint32_t stored_crc = rec_get_u32(&in), head_crc = rec_get_u32(&in);
    if (in.bad)
        pt->why = "it ends inside a frame's head";
    else if (head_crc != rec_crc_of(p, FRAME_HEAD_BYTES - 4))
        *pt = (struct part){ .kind = PART_CORRUPT, .why = "a frame's head fails its checksum" };
    else if (pt->stored_len > in.left)   /* the head is good: the length is true */
        pt->why = "it ends inside a frame";
    else if (stored_crc != rec_crc_of(in.p, pt->stored_len))
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
    struct rec_in in = { rec->data + 8, n > 8 ? n - 8 : 0, false };
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
    if (rec_crc_of(rec->data, HEADER_BYTES - 4) !=
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
    struct rec_buf all = { 0 };
    uint8_t chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        rec_put(&all, chunk, n);
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
    bool room = rec_reserve(&rec->raw, pt->payload_len);
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
            !rec_deserialize(rec->state[p].data, rec->state[p].len, rec->scratch)) {
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
        !rec_deserialize(rec->state[p].data, rec->state[p].len, s)) {
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
