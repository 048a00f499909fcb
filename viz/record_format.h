/* record_format.h -- the bytes of a recording, which the recorder
 * (record.c) writes and the reader (recording.c) checks and decodes:
 * growing buffers, little-endian numbers, CRCs, a snapshot field by
 * field, XOR deltas between frames, events. record.h draws the layout.
 * Internal to viz: what other floors use is record.h.
 *
 * Every function here runs on the calling thread and touches only the
 * buffers it is given: there is no state of its own.
 */
#ifndef THREADLAB_RECORD_FORMAT_H
#define THREADLAB_RECORD_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "probe/board_read.h"

#define HEADER_MAGIC "THRDLREC"
#define FRAME_MARK "FRM1"
#define END_MARK "END1"                 /* a recording finished properly */
#define END_HEAD_BYTES 16               /* "END1" frames ending_len crc */
#define HEADER_BYTES 24
#define FRAME_HEAD_BYTES 28
#define KEYFRAME_EVERY 64               /* a full copy of the state this often */
#define MAX_PAYLOAD (64u << 20)

/* A buffer that grows; it fails once (out of memory) and stays failed, so
 * writers check at the end. An empty buffer's data may be NULL. */
struct rec_buf {
    uint8_t *data;
    size_t len, cap;
    bool failed;                        /* out of memory */
};

/* A reader that fails once and stays failed: callers check at the end. */
struct rec_in {
    const uint8_t *p;
    size_t left;
    bool bad;
};

/* ---- writing ---- */

/* Room for n more bytes; false (and failed) when there is no memory. */
bool rec_reserve(struct rec_buf *b, size_t n);
/* Append bytes, or numbers little-endian; nothing once b failed. */
void rec_put(struct rec_buf *b, const void *p, size_t n);
void rec_put_u8(struct rec_buf *b, uint8_t v);
void rec_put_u16(struct rec_buf *b, uint16_t v);
void rec_put_u32(struct rec_buf *b, uint32_t v);
void rec_put_u64(struct rec_buf *b, uint64_t v);
/* Append the CRC-32 of everything b holds (a part's bytes end with it). */
void rec_put_crc(struct rec_buf *b);

/* ---- reading ---- */

/* A number, little-endian; 0 and in->bad once the bytes run out. */
uint8_t rec_get_u8(struct rec_in *in);
uint16_t rec_get_u16(struct rec_in *in);
uint32_t rec_get_u32(struct rec_in *in);
uint64_t rec_get_u64(struct rec_in *in);
/* zlib's CRC-32 of n bytes. */
uint32_t rec_crc_of(const uint8_t *p, size_t n);

/* ---- snapshots, deltas, events ---- */

/* A snapshot, field by field, the event ring left out (events are written
 * once, when they appear); and back: false when the bytes are not one. */
void rec_serialize(const struct board_snapshot *s, struct rec_buf *b);
bool rec_deserialize(const uint8_t *p, size_t n, struct board_snapshot *s);
/* cur XOR prev as (zeros, literal) runs, and back: false when the delta is
 * malformed. */
void rec_delta_encode(const struct rec_buf *prev, const struct rec_buf *cur,
                      struct rec_buf *out);
bool rec_delta_apply(const struct rec_buf *prev, struct rec_in *in, struct rec_buf *cur);
/* One event, and back: false when it is malformed (its text is made
 * printable). */
void rec_put_event(struct rec_buf *b, const struct board_event_snap *e);
bool rec_get_event(struct rec_in *in, struct board_event_snap *ev);

#endif
