/* record.h -- what the panes showed, over time, in a file; and back.
 *
 * `threadlab top --record FILE` (and demo --record, sim --viz --record)
 * appends one frame per refresh; `threadlab replay FILE` plays it in the
 * same visualizer, forward and back. The format (docs/visualizer.md,
 * "Record and replay"), all little-endian:
 *
 *   file    = header frame* end
 *   header  = "THRDLREC" u32 version(3) u64 start_unix_ns u32 crc
 *   frame   = "FRM1" u32 stored_len u32 payload_len u64 t_ns u32 stored_crc u32 crc
 *             stored (the payload, zlib-deflated)
 *   end     = "END1" u32 frames u32 ending_len u32 crc ending u32 ending_crc
 *   crc     = CRC-32 of the part's bytes before it; stored_crc that of stored
 *   payload = u8 npanes (u32 pid u8 gone u32 delta_len delta u32 nevents event*)*
 *             u16 caption_len caption
 *   caption = the line under the panes then (sim --viz's "next:", the
 *             demo's narrator), up to RECORD_CAPTION_MAX - 1 bytes
 *   ending  = text shown after the last frame (the demo's table), up to
 *             RECORD_ENDING_MAX - 1 bytes
 *   A caption or an ending is a text in English, or in both languages:
 *   the English, a NUL byte, the Chinese. Replay shows the one of its
 *   viewer's language (a reader that knows only one text shows the first).
 *   delta   = the pane's snapshot, serialized field by field, XOR the
 *             previous frame's serialization of the same pane, as runs of
 *             (varint zeros, varint literal_len, literal bytes)
 *   event   = u64 seq u64 time_ns u32 kind u8 len char text[len]  (only new ones)
 *
 * The recorder writes each part with one write(2), so a recorder that dies
 * leaves whole parts and at most one part cut short. A reader trusts a
 * length only once the CRC of the head holding it is good; so bytes that
 * end early (no end mark, a part cut short, trailing zeros) are a cut, and
 * whole bytes that fail a CRC are damage. A cut recording plays its whole
 * frames; a damaged one is refused.
 *
 * A snapshot's serialization holds everything but the event ring: the
 * events are written once, when they first appear, and the ring is
 * rebuilt on replay. Frames repeat the panes in the same order.
 */
#ifndef THREADLAB_RECORD_H
#define THREADLAB_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "msg.h"
#include "view.h"

#define RECORD_VERSION 3   /* 3: captions, an ending, runnable threads (board 3);
                              2: every part ends with a CRC (1 had none on heads) */
#define RECORD_CAPTION_MAX 1024  /* a frame's caption, both texts and NULs included */
#define RECORD_ENDING_MAX 16384  /* the ending, both texts and NULs included */

struct recorder;

/* Create FILE (replacing it) and write its header, so that a path that
 * cannot be written is refused here. NULL with a message when it cannot. */
struct recorder *recorder_open(const char *path, char *err, size_t err_len);

/* Append what the panes show now (panes without a snapshot are written as
 * empty). Returns 0, or -errno (the disk is full...): then the file is cut
 * back to its last whole frame, and every later call returns that error. */
int recorder_frame(struct recorder *r, uint64_t t_ns, const struct pane *panes,
                   int npanes);

/* The caption the next frames carry, in English and in Chinese (copied;
 * the English cut to fit RECORD_CAPTION_MAX; the Chinese kept only if it
 * fits whole; NULL or "": none). */
void recorder_caption(struct recorder *r, const char *caption, const char *caption_zh);

/* The text the end mark carries, what replay shows after the last frame
 * in English and in Chinese (copied, as recorder_caption's texts). */
void recorder_ending(struct recorder *r, const char *text, const char *text_zh);

/* Bytes and whole frames written so far. */
uint64_t recorder_bytes(const struct recorder *r);
uint32_t recorder_frames(const struct recorder *r);

/* Write the end mark and close. Returns 0, or -errno (also the error that
 * ended the recording early, if one did). NULL is ignored. */
int recorder_close(struct recorder *r);

/* recorder_close, then say on stderr how it went, as who ("threadlab
 * demo"), counting the frames as what ("frame", "event": one of each). A recording
 * without a frame plays nothing, so its file is removed. Returns true
 * only for a whole recording of at least one frame: a command asked to
 * record exits nonzero otherwise, so a script never keeps a file that
 * is not what it asked for. NULL is ignored (true). */
bool recorder_finish(struct recorder *r, const char *path, const char *who,
                     const char *what);

struct recording;

/* Read and check a whole recording: every frame's length, checksum and
 * contents. NULL with a message for a file that is not a recording, of
 * another version, corrupt (a byte changed), or cut before its first
 * whole frame, or when memory ran out (said so: "out of memory at frame
 * N"). A recording cut short later loads its whole frames: recording_cut
 * says where it was cut. The file stays open and is read again where a
 * frame is shown: memory stays bounded whatever its length. */
struct recording *recording_load(const char *path, char *err, size_t err_len);
void recording_free(struct recording *rec);

/* The same for a recording's bytes (copied), named name in messages (the
 * core of recording_load; tests feed it cut and changed bytes directly). */
struct recording *recording_parse(const void *bytes, size_t len, const char *name,
                                  char *err, size_t err_len);

/* NULL for a whole recording; for one cut short, a sentence saying where
 * (the byte, the last whole frame) and what it means. */
const char *recording_cut(const struct recording *rec);

int recording_frames(const struct recording *rec);
uint64_t recording_time_ns(const struct recording *rec, int frame);
int recording_panes(const struct recording *rec, int frame);

/* Fill panes[0..n) for frame i: now = frame i, before = frame i - 1 (for
 * rates). The panes own buffers the recording allocated: call with the
 * same panes each time; recording_release_panes frees them. Returns n, or
 * 0 when the frame could not be rebuilt (memory ran out, the file could
 * not be read again): recording_trouble says why. */
int recording_show(struct recording *rec, int frame, struct pane *panes);
const char *recording_trouble(const struct recording *rec);
void recording_release_panes(struct pane *panes);

/* Events that first appear in frame i (all panes), and whether one of
 * them is a warning: a blocked loop, a rejection, a pool shrinking. */
int recording_new_events(const struct recording *rec, int frame);
bool recording_has_warning(const struct recording *rec, int frame);

/* Whether a warning starts in frame i: a loop's stall (from its first
 * blocked event to its unblocked one: each stall is one), or a rejection
 * or a shrink from a source ("conn" for rejections) that gave none in the
 * frame before. */
bool recording_new_warning(const struct recording *rec, int frame);

/* Frame i's caption ("" when it has none), and the ending (NULL when the
 * recording has none), in lang when the recording holds that language's
 * text, else in the one it holds. */
const char *recording_caption(struct recording *rec, int frame, enum msg_lang lang);
const char *recording_ending(const struct recording *rec, enum msg_lang lang);

#endif
