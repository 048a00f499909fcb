/* view_parts.c -- the pieces of the screen that view.c and detail.c both
 * draw with: numbers for people, a loop's phase, a box of text. See
 * view_parts.h. */
#include "view_parts.h"

#include <stdio.h>

#include "msg.h"

void view__fmt_count(char *out, size_t len, double v)
{
    if (v >= 1e6)
        snprintf(out, len, "%.2fM", v / 1e6);
    else if (v >= 1e4)
        snprintf(out, len, "%.1fk", v / 1e3);
    else
        snprintf(out, len, "%.0f", v);
}

void view__fmt_ns(char *out, size_t len, uint64_t ns)
{
    if (ns < 1000)
        snprintf(out, len, "%lluns", (unsigned long long)ns);
    else if (ns < 1000000)
        snprintf(out, len, "%.1fus", (double)ns / 1e3);
    else if (ns < 1000000000)
        snprintf(out, len, "%.1fms", (double)ns / 1e6);
    else
        snprintf(out, len, "%.1fs", (double)ns / 1e9);
}

void view__fmt_age(char *out, size_t len, uint64_t ns)
{
    uint64_t s = ns / 1000000000u;
    if (s < 60)
        snprintf(out, len, "%.1fs", (double)ns / 1e9);
    else if (s < 3600)
        snprintf(out, len, "%llum%02llus", (unsigned long long)(s / 60),
                 (unsigned long long)(s % 60));
    else
        snprintf(out, len, "%lluh%02llum", (unsigned long long)(s / 3600),
                 (unsigned long long)(s / 60 % 60));
}

void view__fmt_bytes(char *out, size_t len, uint64_t bytes)
{
    if (bytes < 10240)
        snprintf(out, len, "%llu B", (unsigned long long)bytes);
    else if (bytes < 10u << 20)
        snprintf(out, len, "%.1f KiB", (double)bytes / 1024);
    else
        snprintf(out, len, "%.1f MiB", (double)bytes / (1 << 20));
}

/* A thread's CPU% for the list: "-" when there is no figure. */
void view__fmt_cpu(char *out, size_t len, const float *cpu, int i)
{
    if (!cpu || cpu[i] < 0)
        snprintf(out, len, "-");
    else
        snprintf(out, len, cpu[i] < 999.5f ? "%.1f" : "%.0f", (double)cpu[i]);
}

const char *view__phase_name(uint32_t phase)
{
    static const enum msg_id phases[] = { M_PHASE_START, M_PHASE_WAIT, M_PHASE_IO,
                                          M_PHASE_TASKS, M_PHASE_STOP };
    return msg(phases[phase < 5 ? phase : 0]);
}

/* A box of text lines in the middle of the screen, over what is there. */
void view__draw_box(struct screen *scr, const char *const *lines, int n, int w)
{
    if (w > scr->w)
        w = scr->w;
    int x = (scr->w - w) / 2, y = (scr->h - n - 2) / 2;
    if (x < 0)
        x = 0;
    if (y < 0)
        y = 0;
    for (int i = -1; i <= n; i++) {
        screen_fill(scr, x, y + 1 + i, w, ' ', ST_FOCUS);
        if (i >= 0 && i < n)
            screen_put(scr, x + 2, y + 1 + i, w - 4, ST_FOCUS, lines[i]);
    }
}

