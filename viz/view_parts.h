/* view_parts.h -- internal to the renderer (view.c, view_parts.c,
 * detail.c): what more than one of its files draws with. Not for other
 * floors; everything here is pure, main thread. */
#ifndef THREADLAB_VIEW_PARTS_H
#define THREADLAB_VIEW_PARTS_H

#include <stddef.h>
#include <stdint.h>

#include "screen.h"
#include "view.h"

/* Numbers for people: 12.3k, 1.2ms, 1m02s, 97.7 KiB; a CPU% of cpu[i]
 * ("-" for CPU_NONE or no figures at all). */
void view__fmt_count(char *out, size_t len, double v);
void view__fmt_ns(char *out, size_t len, uint64_t ns);
void view__fmt_age(char *out, size_t len, uint64_t ns);
void view__fmt_bytes(char *out, size_t len, uint64_t bytes);
void view__fmt_cpu(char *out, size_t len, const float *cpu, int i);

/* A loop's phase (the board's 0..4) in the current language. */
const char *view__phase_name(uint32_t phase);

/* A box of n text lines, w columns wide (at most the screen's), in the
 * middle of the screen, over what is there. */
void view__draw_box(struct screen *scr, const char *const *lines, int n, int w);

/* The detail box of the thread v->detail_name in the focused pane. */
void view__draw_detail(const struct view *v, struct screen *scr);

#endif
