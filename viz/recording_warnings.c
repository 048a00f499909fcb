/* recording_warnings.c -- a recording's warnings, noted as it loads:
 * which frames hold one, and where one starts (the replay's jump to the
 * next warning). recording.c calls it for each event of a frame it
 * decodes while loading (recording_load.c). See recording_internal.h.
 */
#include "recording_internal.h"

#include <stdio.h>
#include <string.h>

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

/* An event of pane p in frame f: when it is a warning, the frame has one,
 * and it starts one if it is a loop's stall (note_stall), or a rejection
 * or a shrink whose source gave none in the frame before. The sources of
 * this frame go into now. */
void recording__note_warning(struct recording *rec, struct rec_frame *f, int p,
                         const struct board_event_snap *ev,
                         char now[][WARN_SOURCE_BYTES], int *nnow)
{
    if (!is_warning(ev))
        return;
    f->warning = true;
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
