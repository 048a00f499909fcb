/* recording_internal.h -- what recording_load.c (checking a file and
 * indexing it), recording.c (rebuilding frames) and recording_warnings.c
 * (noting a frame's warnings) share: the recording's parts and the steps
 * they take, each file calling only the ones after it in that list. Internal to viz: other
 * files use record.h. Everything here runs on the thread that owns the
 * recording (replay's main thread). */
#ifndef THREADLAB_RECORDING_INTERNAL_H
#define THREADLAB_RECORDING_INTERNAL_H

#include "record.h"
#include "record_format.h"

#define KEYS_BUDGET_BYTES (24u << 20)    /* the keyframes, deflated, together */
#define KEPT_EVENTS (3 * BOARD_EVENT_SLOTS) /* a pane's newest events, at most */
#define WARN_SOURCES_MAX 16              /* sources remembered per pane and frame */
#define WARN_SOURCE_BYTES 24

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
    size_t ending_len;                   /* its bytes (its texts and the NUL between) */
    char caption[RECORD_CAPTION_MAX];    /* recording_caption's answer */
    /* Loading: the sources that warned in the frame before, per pane, and
     * the loops stalled now (from "blocked" until "unblocked"). */
    char warned[VIEW_MAX_PANES][WARN_SOURCES_MAX][WARN_SOURCE_BYTES];
    int nwarned[VIEW_MAX_PANES];
    char stalled[VIEW_MAX_PANES][WARN_SOURCES_MAX][WARN_SOURCE_BYTES];
    int nstalled[VIEW_MAX_PANES];
    struct board_snapshot *scratch;      /* loading: each pane is decoded into it */
};

/* Why a step failed, for a message: memory, or the bytes. */
enum step {
    STEP_OK,
    STEP_NO_MEMORY,                      /* malloc or zlib ran out */
    STEP_UNREADABLE,                     /* a read failed (the disk) */
    STEP_BAD,                            /* the bytes do not decode */
};

/* ---- the steps ---- */

/* n bytes at offset at of the file (or of recording_parse's copy). False
 * at a read error (EIO) or past the end. */
bool recording__read_at(const struct recording *rec, uint64_t at, void *dst, size_t n);

/* A step's failure in words: "out of memory", "a read error", ... */
const char *recording__step_why(enum step s);

/* Read frame i and apply it onto the state shown (the state after frame
 * i - 1): that becomes the state before, and frame i's the state shown.
 * Loading, it fills frame i's index entry (recording__note_warning for
 * its warnings). */
enum step recording__step_on(struct recording *rec, int i, bool loading);

/* Keep the state shown as a keyframe (thinned when over budget). */
enum step recording__add_keyframe(struct recording *rec);

/* Loading: event ev of pane p in frame f; a warning marks the frame (and
 * whether one starts there); now and nnow gather the frame's sources.
 * recording_warnings.c. */
void recording__note_warning(struct recording *rec, struct rec_frame *f, int p,
                             const struct board_event_snap *ev,
                             char now[][WARN_SOURCE_BYTES], int *nnow);

#endif
