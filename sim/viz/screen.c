/* screen.c -- a grid of styled cells. See screen.h. */
#include "screen.h"

#include <errno.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int screen_init(struct screen *s, int w, int h)
{
    s->w = w > 0 ? w : 1;
    s->h = h > 0 ? h : 1;
    s->cells = calloc((size_t)s->w * (size_t)s->h, sizeof(*s->cells));
    if (!s->cells)
        return -ENOMEM;
    screen_clear(s);
    return 0;
}

void screen_free(struct screen *s)
{
    free(s->cells);
    s->cells = NULL;
}

void screen_clear(struct screen *s)
{
    for (int i = 0; i < s->w * s->h; i++)
        s->cells[i] = (struct cell){ ' ', ST_NORMAL };
}

int screen_put(struct screen *s, int x, int y, int max_w, enum style st,
               const char *text)
{
    if (y < 0 || y >= s->h)
        return 0;
    int limit = max_w < 0 ? s->w - x : max_w;
    int n = 0;
    for (; text[n] && n < limit; n++) {
        int cx = x + n;
        if (cx < 0 || cx >= s->w)
            continue;
        unsigned char c = (unsigned char)text[n];
        s->cells[y * s->w + cx] = (struct cell){ c >= 32 && c < 127 ? (char)c : '?',
                                                 (uint8_t)st };
    }
    return n;
}

int screen_printf(struct screen *s, int x, int y, int max_w, enum style st,
                  const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    return screen_put(s, x, y, max_w, st, buf);
}

/* How many bytes of text (no newline, from its start) go on a row of width
 * cols: all of it if it fits, else up to the last space that fits (the
 * space itself is left for the next row to skip), else a hard cut at cols
 * (one word longer than the row). */
static int wrap_break(const char *text, int len, int cols)
{
    if (len <= cols)
        return len;
    for (int i = cols; i > 0; i--)
        if (text[i] == ' ')
            return i;
    return cols;
}

int screen_put_wrapped(struct screen *s, int x, int y, int w, int max_rows,
                       int indent, enum style st, const char *text)
{
    if (w < 1)
        return 0;
    if (indent >= w)
        indent = 0;
    int len = (int)strlen(text), pos = 0, rows = 0;
    while (pos < len) {
        if (rows > 0)
            while (text[pos] == ' ')
                pos++;
        if (pos >= len)
            break;
        int left = rows > 0 ? indent : 0, cols = w - left;
        int n = wrap_break(text + pos, len - pos, cols);
        bool last = rows == max_rows - 1 && pos + n < len;
        if (s && rows < max_rows) {
            /* The last row allowed, with more to come: room for "...". */
            int shown = last && cols > 3 ? wrap_break(text + pos, len - pos, cols - 3) : n;
            char row[1024];
            snprintf(row, sizeof(row), "%.*s%s", shown, text + pos, last ? "..." : "");
            screen_put(s, x + left, y + rows, cols, st, row);
        }
        pos += n;
        rows++;
    }
    return rows;
}

void screen_fill(struct screen *s, int x, int y, int n, char ch, enum style st)
{
    for (int i = 0; i < n; i++)
        if (y >= 0 && y < s->h && x + i >= 0 && x + i < s->w)
            s->cells[y * s->w + x + i] = (struct cell){ ch, (uint8_t)st };
}

void screen_row_text(const struct screen *s, int y, char *out, size_t out_len)
{
    size_t n = 0;
    if (out_len == 0)
        return;
    if (y >= 0 && y < s->h)
        for (int x = 0; x < s->w && n + 1 < out_len; x++)
            out[n++] = s->cells[y * s->w + x].ch;
    while (n > 0 && out[n - 1] == ' ')
        n--;
    out[n] = '\0';
}

int screen_print(const struct screen *s, int rows, FILE *out)
{
    char row[1024];
    int last = rows < s->h ? rows : s->h;
    while (last > 0) {                /* no trailing blank rows */
        screen_row_text(s, last - 1, row, sizeof(row));
        if (row[0])
            break;
        last--;
    }
    for (int y = 0; y < last; y++) {
        screen_row_text(s, y, row, sizeof(row));
        if (fprintf(out, "%s\n", row) < 0)
            return -EIO;
    }
    return 0;
}

const struct cell *screen_at(const struct screen *s, int x, int y)
{
    if (x < 0 || y < 0 || x >= s->w || y >= s->h)
        return NULL;
    return &s->cells[y * s->w + x];
}

int screen_find(const struct screen *s, const char *needle)
{
    char row[1024];
    for (int y = 0; y < s->h; y++) {
        screen_row_text(s, y, row, sizeof(row));
        if (strstr(row, needle))
            return y;
    }
    return -1;
}
