/* reason.h -- an event's reason in the viewer's language.
 *
 * Servers write their events' reasons into the board in English, as free
 * text ("conn 7 -> worker-2: round robin (2 of 4)"), and the board stays
 * that way: several viewers in different languages read one board, and a
 * recording plays in any of them. The viewer translates when it draws,
 * with one table of templates, each an event's English format as the
 * server writes it and its Chinese, where %1, %2 ... put back what the
 * English's conversions matched:
 *
 *   "conn %llu -> %s: round robin (%d of %d)"  ->  "连接 %1 -> %2：轮转（第 %3 个，共 %4 个）"
 *
 * Numbers and names are kept as written. A %s that is itself a known
 * reason ("no idle thread, 3 queued", "client closed") is translated in
 * turn; anything else (a thread's name, strerror's text) stays. A text no
 * template fits (an older server's, one cut at the board's 95 bytes) is
 * shown as it is. check_view scans every event format in models/ and
 * sim/ and fails when the table has no template for one.
 */
#ifndef THREADLAB_REASON_H
#define THREADLAB_REASON_H

#include <stdbool.h>
#include <stddef.h>

#include "msg.h"

/* Room for a translation of a board text: Chinese takes three bytes a
 * character where English took one, plus the names carried over. */
#define REASON_TEXT_BYTES 512

/* Put text in lang into out (out_len bytes, cut at a character, never
 * inside one). Returns the index of the template that fits text, or -1
 * when none does: then out is text as it was. Under LANG_EN out is always
 * text as it was. Any thread; pure (reads the table only). */
int reason_translate(enum msg_lang lang, const char *text, char *out, size_t out_len);

/* The table, for the test that holds it to the sources: how many
 * templates, and template i's text in lang (NULL past the end). Pure. */
int reason_count(void);
const char *reason_template(int i, enum msg_lang lang);

#endif
