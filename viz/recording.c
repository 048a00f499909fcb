/* recording.c -- a recording read back: any frame rebuilt for threadlab
 * replay (recording_load.c checks the file and indexes it first). See record.h for
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
#include "recording_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/* ---- bytes from the file ------------------------------------------------------- */

/* n bytes at offset at. False at a read error (EIO) or past the end. */
bool recording__read_at(const struct recording *rec, uint64_t at, void *dst, size_t n)
{
    if (at > rec->len || n > rec->len - at)
        return false;
    if (rec->fd < 0) {
        if (n > 0)                       /* an empty copy's mem is NULL */
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

const char *recording__step_why(enum step s)
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
        if (!recording__read_at(rec, f->at, rec->stored.data, f->stored_len))
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
            if (loading)
                recording__note_warning(rec, f, p, &ev->ev, now[p], &nnow[p]);
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
enum step recording__step_on(struct recording *rec, int i, bool loading)
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
enum step recording__add_keyframe(struct recording *rec)
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

/* Of a text of len bytes, "EN" or "EN\0ZH" (record.h), the one in lang. */
static const char *text_in(const char *text, size_t len, enum msg_lang lang)
{
    size_t first = strnlen(text, len);
    return lang == LANG_ZH && first + 1 < len ? text + first + 1 : text;
}

const char *recording_caption(struct recording *rec, int frame, enum msg_lang lang)
{
    const struct rec_frame *f = &rec->frames[frame];
    rec->caption[0] = '\0';
    if (f->caption_len > 0 && read_payload(rec, frame) == STEP_OK) {
        memcpy(rec->caption, rec->payload.data + f->caption_at, f->caption_len);
        rec->caption[f->caption_len] = '\0';
    }
    return text_in(rec->caption, f->caption_len, lang);
}

const char *recording_ending(const struct recording *rec, enum msg_lang lang)
{
    return rec->ending ? text_in(rec->ending, rec->ending_len, lang) : NULL;
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
        enum step s = recording__step_on(rec, j, false);
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
        snprintf(rec->trouble, sizeof(rec->trouble), "%s rebuilding frame %d", recording__step_why(s),
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

