/* record.h -- what the panes showed, over time, in a file; and back.
 *
 * `threadlab top --record FILE` (and demo --record, sim --viz --record)
 * appends one frame per refresh; `threadlab replay FILE` plays it in the
 * same visualizer, forward and back. The format (docs/visualizer.md,
 * "Record and replay"), all little-endian:
 *
 *   file    = header frame* end
 *   end     = u32 "END1" u32 frames u32 crc32(the 8 bytes before)
 *   header  = "THRDLREC" u32 version(1) u32 reserved u64 start_unix_ns
 *   frame   = u32 "FRM1" u32 stored_len u32 payload_len u32 crc u64 t_ns
 *             stored (the payload, zlib-deflated; crc = CRC-32 of stored,
 *             then payload_len and t_ns)
 *   payload = u8 npanes (u32 pid u8 gone u32 delta_len delta u32 nevents event*)*
 *   delta   = the pane's snapshot, serialized field by field, XOR the
 *             previous frame's serialization of the same pane, as runs of
 *             (varint zeros, varint literal_len, literal bytes)
 *   event   = u64 seq u64 time_ns u32 kind u8 len char text[len]  (only new ones)
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

#include "view.h"

#define RECORD_VERSION 1

struct recorder;

/* Create FILE (replacing it). NULL with a message when it cannot. */
struct recorder *recorder_open(const char *path, char *err, size_t err_len);

/* Append what the panes show now (panes without a snapshot are written as
 * empty). Returns 0, or -errno (the disk is full...). */
int recorder_frame(struct recorder *r, uint64_t t_ns, const struct pane *panes,
                   int npanes);

/* Bytes written so far. */
uint64_t recorder_bytes(const struct recorder *r);

/* Flush and close. Returns 0 or -errno. NULL is ignored. */
int recorder_close(struct recorder *r);

struct recording;

/* Read and check a whole recording: every frame's length, checksum and
 * contents. NULL with a message for a file that is not a recording, of
 * another version, truncated or corrupt. */
struct recording *recording_load(const char *path, char *err, size_t err_len);
void recording_free(struct recording *rec);

int recording_frames(const struct recording *rec);
uint64_t recording_time_ns(const struct recording *rec, int frame);
int recording_panes(const struct recording *rec, int frame);

/* Fill panes[0..n) for frame i: now = frame i, before = frame i - 1 (for
 * rates). The panes own buffers the recording allocated: call with the
 * same panes each time; recording_release_panes frees them. Returns n. */
int recording_show(struct recording *rec, int frame, struct pane *panes);
void recording_release_panes(struct pane *panes);

/* Events that first appear in frame i (all panes), and whether one of
 * them is a warning: a blocked loop, a rejection, a pool shrinking. */
int recording_new_events(const struct recording *rec, int frame);
bool recording_has_warning(const struct recording *rec, int frame);

#endif
