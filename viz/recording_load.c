/* recording_load.c -- a recording checked part by part before it is
 * believed, and indexed: each frame's place, time and warnings, and the
 * keyframes that recording.c rebuilds frames from. See record.h for the
 * format. */
#include "recording_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
        if (!recording__read_at(rec, at, chunk, n)) {
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
            !recording__read_at(rec, at + END_HEAD_BYTES, b->data, pt->ending_len + 4))
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
    if (!recording__read_at(rec, at, head, n)) {
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
            !recording__read_at(rec, at + FRAME_HEAD_BYTES, b->data, pt->stored_len))
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
    if (!recording__read_at(rec, 0, head, n)) {
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
    enum step s = recording__step_on(rec, i, true);
    if (s == STEP_BAD) {
        snprintf(err, err_len, "frame %d does not %s", i + 1,
                 rec->payload_frame == i ? "decode" : "inflate");
        return false;
    }
    if (s == STEP_OK && !rec->scratch && !(rec->scratch = malloc(sizeof(*rec->scratch))))
        s = STEP_NO_MEMORY;
    if (s != STEP_OK) {
        snprintf(err, err_len, "%s at frame %d (it inflates to %u bytes)", recording__step_why(s), i + 1,
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
    if (i % rec->key_every == 0 && (s = recording__add_keyframe(rec)) != STEP_OK) {
        snprintf(err, err_len, "%s at frame %d (a keyframe)", recording__step_why(s), i + 1);
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
            if (pt.ending_len > 0 && !(rec->ending = malloc(pt.ending_len + 1))) {
                snprintf(err, err_len, "%s: out of memory (its ending)", path);
                return refuse(rec);
            }
            if (rec->ending) {            /* both texts, when it holds two */
                memcpy(rec->ending, rec->packed.data, pt.ending_len);
                rec->ending[pt.ending_len] = '\0';
                rec->ending_len = pt.ending_len;
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
