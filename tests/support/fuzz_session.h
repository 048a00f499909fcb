/* fuzz_session.h -- one fuzz input through the decoder and the session.
 *
 * The input's first byte chooses --max-line (1..256), the next two seed
 * the chunk sizes; the rest is the byte stream a client sends. It is fed
 * to an echo session in those chunks, and every invariant is checked with
 * abort() (so libFuzzer and the corpus replay both catch it):
 *   - no line longer than max-line comes out;
 *   - the lines returned, concatenated, are exactly the input up to the
 *     last '\n' (or up to where a too-long line stopped the stream);
 *   - every reply is the line itself, an "!err", or a "!who" reply, and
 *     work amounts stay in range.
 */
#ifndef THREADLAB_FUZZ_SESSION_H
#define THREADLAB_FUZZ_SESSION_H

#include <stddef.h>
#include <stdint.h>

int fuzz_session_one(const uint8_t *data, size_t size);

#endif
