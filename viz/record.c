/* record.c -- the recorder: one frame per refresh, appended whole, and the
 * end mark. See record.h for the format; the bytes themselves are
 * record_format.c, and loading and replaying recording.c. */
#include "record.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "record_format.h"

/* ---- recording ---------------------------------------------------------------- */

struct rec_pane {
    int pid;
    struct rec_buf last;                     /* its previous serialization */
    uint64_t last_seq;                   /* the newest event written */
};

struct recorder {
    int fd;
    uint64_t bytes;                      /* the file's length after the last whole frame */
    uint32_t frames;
    int failed;                          /* 0, or the -errno that ended the recording */
    struct rec_pane panes[VIEW_MAX_PANES];
    struct rec_buf payload, cur, packed;
    char caption[RECORD_CAPTION_MAX];    /* what the next frames carry */
    size_t caption_len;                  /* its bytes (its texts and the NUL between) */
    char ending[RECORD_ENDING_MAX];      /* what the end mark carries */
    size_t ending_len;
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
static int append(struct recorder *r, const struct rec_buf *part)
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
    struct rec_buf h = { 0 };
    rec_put(&h, HEADER_MAGIC, 8);
    rec_put_u32(&h, RECORD_VERSION);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    rec_put_u64(&h, (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
    rec_put_crc(&h);
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
    rec_put_u32(&r->payload, have ? (uint32_t)s->pid : 0);
    rec_put_u8(&r->payload, pane->gone);
    r->cur.len = 0;
    if (have)
        rec_serialize(s, &r->cur);
    struct rec_buf delta = { 0 };
    rec_delta_encode(&rp->last, &r->cur, &delta);
    rec_put_u32(&r->payload, (uint32_t)delta.len);
    rec_put(&r->payload, delta.data, delta.len);
    r->payload.failed |= delta.failed;
    free(delta.data);
    struct rec_buf tmp = rp->last;              /* cur becomes last */
    rp->last = r->cur;
    r->cur = tmp;
    uint32_t fresh = 0;
    for (int e = 0; have && e < s->nevents; e++)
        fresh += s->events[e].seq > rp->last_seq;
    rec_put_u32(&r->payload, fresh);
    for (int e = 0; have && e < s->nevents; e++)
        if (s->events[e].seq > rp->last_seq)
            rec_put_event(&r->payload, &s->events[e]);
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
    rec_put_u8(&r->payload, (uint8_t)npanes);
    for (int i = 0; i < npanes; i++)
        payload_add_pane(r, &r->panes[i], &panes[i]);
    rec_put_u16(&r->payload, (uint16_t)r->caption_len);
    rec_put(&r->payload, r->caption, r->caption_len);
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
    struct rec_buf head = { 0 };
    rec_put(&head, FRAME_MARK, 4);
    rec_put_u32(&head, (uint32_t)stored);
    rec_put_u32(&head, (uint32_t)r->payload.len);
    rec_put_u64(&head, t_ns);
    rec_put_u32(&head, rec_crc_of(body, stored));
    rec_put_crc(&head);
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

/* Into buf (size bytes): text, cut to fit; then a NUL and text_zh, when
 * both are given and text_zh fits whole (cut, a Chinese text could end
 * inside a character). Returns the bytes used, the last NUL not counted. */
static size_t put_both(char *buf, size_t size, const char *text, const char *text_zh)
{
    int n = snprintf(buf, size, "%s", text ? text : "");
    size_t used = n < 0 ? 0 : (size_t)n < size ? (size_t)n : size - 1;
    size_t zh_len = text_zh ? strlen(text_zh) : 0;
    if (used > 0 && zh_len > 0 && used + 1 + zh_len < size) {
        memcpy(buf + used + 1, text_zh, zh_len + 1);
        used += 1 + zh_len;
    }
    return used;
}

void recorder_caption(struct recorder *r, const char *caption, const char *caption_zh)
{
    r->caption_len = put_both(r->caption, sizeof(r->caption), caption, caption_zh);
}

void recorder_ending(struct recorder *r, const char *text, const char *text_zh)
{
    r->ending_len = put_both(r->ending, sizeof(r->ending), text, text_zh);
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
    struct rec_buf end = { 0 }, ending = { 0 };
    size_t ending_len = r->ending_len;
    rec_put(&end, END_MARK, 4);
    rec_put_u32(&end, r->frames);
    rec_put_u32(&end, (uint32_t)ending_len);
    rec_put_crc(&end);
    rec_put(&ending, r->ending, ending_len);
    rec_put_crc(&ending);
    rec_put(&end, ending.data, ending.len);
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

bool recorder_finish(struct recorder *r, const char *path, const char *who,
                     const char *what)
{
    if (!r)
        return true;
    uint32_t frames = recorder_frames(r);
    uint64_t bytes = recorder_bytes(r);
    bool has_table = r->ending_len > 0;   /* only the demo ends on a table */
    const char *plural = frames == 1 ? "" : "s";
    int rc = recorder_close(r);
    if (frames == 0) {
        unlink(path);
        fprintf(stderr, "%s: --record: nothing was recorded (%s), so %s is removed\n",
                who, rc < 0 ? strerror(-rc) : "it ended before its first frame", path);
        return false;
    }
    if (rc < 0) {
        fprintf(stderr, "%s: --record: writing %s failed (%s): it plays its first %u %s%s\n",
                who, path, strerror(-rc), frames, what, plural);
        return false;
    }
    fprintf(stderr, "%s: recorded %s (%u %s%s%s, %.1f KiB)\n", who, path, frames, what,
            plural, has_table ? " and the table" : "", bytes / 1024.0);
    return true;
}
