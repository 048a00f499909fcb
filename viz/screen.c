/* screen.c -- a grid of styled cells. See screen.h. */
#include "screen.h"

#include <errno.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <wchar.h>

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

/* ---- text as characters and columns ------------------------------------- */

#define TEXT_MAX 1024           /* characters handled per call */

/* One character of text and the columns it takes. */
struct glyph {
    wchar_t ch;
    int cols;                   /* 1 or 2 */
};

/* Decode text (multibyte, LC_CTYPE) into glyphs; what cannot be shown as
 * itself becomes '?'. Returns how many (at most max). */
static int decode(const char *text, struct glyph *out, int max)
{
    mbstate_t st;
    memset(&st, 0, sizeof(st));
    size_t left = strlen(text);
    int n = 0;
    while (left > 0 && n < max) {
        wchar_t wc;
        size_t used = mbrtowc(&wc, text, left, &st);
        if (used == (size_t)-1 || used == (size_t)-2 || used == 0) {
            memset(&st, 0, sizeof(st));  /* not a character: one byte, shown '?' */
            used = 1;
            wc = L'?';
        }
        int cols = wcwidth(wc);
        if (cols < 1 || cols > 2 || (wc < 0x80 && (wc < 32 || wc == 127))) {
            wc = L'?';                    /* control, zero-width, unprintable */
            cols = 1;
        }
        out[n++] = (struct glyph){ wc, cols };
        text += used;
        left -= used;
    }
    return n;
}

/* Set one cell, keeping wide characters whole: a wide character half
 * overwritten would paint its other half over a neighbour, so that half
 * becomes a blank. */
static void set_cell(struct screen *s, int x, int y, uint32_t ch, enum style st)
{
    struct cell *row = &s->cells[y * s->w];
    if (row[x].ch == SCREEN_WIDE_RIGHT && x > 0 && ch != SCREEN_WIDE_RIGHT)
        row[x - 1].ch = ' ';          /* we overwrite a right half */
    if (x + 1 < s->w && row[x + 1].ch == SCREEN_WIDE_RIGHT)
        row[x + 1].ch = ' ';          /* we overwrite a left half */
    row[x] = (struct cell){ ch, (uint8_t)st };
}

/* Write glyphs at (x, y), at most limit columns; a wide glyph goes whole
 * or not at all. Returns columns written. */
static int put_glyphs(struct screen *s, int x, int y, int limit, enum style st,
                      const struct glyph *g, int n)
{
    int col = 0;
    for (int i = 0; i < n && col + g[i].cols <= limit; i++) {
        int cx = x + col;
        if (cx >= s->w || (g[i].cols == 2 && cx + 1 >= s->w))
            break;
        if (cx >= 0) {
            set_cell(s, cx, y, (uint32_t)g[i].ch, st);
            if (g[i].cols == 2)
                set_cell(s, cx + 1, y, SCREEN_WIDE_RIGHT, st);
        }
        col += g[i].cols;
    }
    return col;
}

int screen_put(struct screen *s, int x, int y, int max_w, enum style st,
               const char *text)
{
    if (y < 0 || y >= s->h)
        return 0;
    struct glyph g[TEXT_MAX];
    int n = decode(text, g, TEXT_MAX);
    return put_glyphs(s, x, y, max_w < 0 ? s->w - x : max_w, st, g, n);
}

int screen_text_width(const char *text)
{
    struct glyph g[TEXT_MAX];
    int n = decode(text, g, TEXT_MAX), w = 0;
    for (int i = 0; i < n; i++)
        w += g[i].cols;
    return w;
}

int screen_put_col(struct screen *s, int x, int y, int w, enum style st,
                   const char *text, bool right_align)
{
    int tw = screen_text_width(text);
    int pad = tw < w ? w - tw : 0;
    screen_fill(s, x, y, w, ' ', st);
    screen_put(s, right_align ? x + pad : x, y, w, st, text);
    return w;
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

/* Chinese punctuation that closes (a row must not start with it) and
 * that opens (a row must not end with it): the rule CJK typesetting calls
 * kinsoku, in its smallest form. */
static bool cjk_closing(wchar_t c) { return c && wcschr(L"，。、：；！？）」』》】", c); }
static bool cjk_opening(wchar_t c) { return c && wcschr(L"（「『《【", c); }

/* How many glyphs (no newline, from g) go on a row of cols columns: all if
 * they fit; else up to the last space that fits (the space is left for the
 * next row to skip) or the last place between two wide characters (CJK is
 * written without spaces) that leaves no closing mark at a row's start nor
 * an opening one at its end, whichever is later; else a hard cut (one
 * word longer than the row). */
static int wrap_break(const struct glyph *g, int n, int cols)
{
    int fit = 0, used = 0;
    while (fit < n && used + g[fit].cols <= cols)
        used += g[fit++].cols;
    if (fit == n)
        return n;
    for (int i = fit; i > 0; i--) {
        if (g[i].ch == L' ')
            return i;
        if ((g[i - 1].cols == 2 || g[i].cols == 2) && !cjk_closing(g[i].ch) &&
            !cjk_opening(g[i - 1].ch))
            return i;
    }
    return fit > 0 ? fit : 1;
}

int screen_put_wrapped(struct screen *s, int x, int y, int w, int max_rows,
                       int indent, enum style st, const char *text)
{
    if (w < 1)
        return 0;
    if (indent >= w)
        indent = 0;
    static const struct glyph dots[3] = { { L'.', 1 }, { L'.', 1 }, { L'.', 1 } };
    struct glyph g[TEXT_MAX];
    int len = decode(text, g, TEXT_MAX), pos = 0, rows = 0;
    while (pos < len) {
        if (rows > 0)
            while (pos < len && g[pos].ch == L' ')
                pos++;
        if (pos >= len)
            break;
        int left = rows > 0 ? indent : 0, cols = w - left;
        int n = wrap_break(g + pos, len - pos, cols);
        bool last = rows == max_rows - 1 && pos + n < len;
        if (s && rows < max_rows && y + rows >= 0 && y + rows < s->h) {
            /* The last row allowed, with more to come: room for "...". */
            int shown = last && cols > 3 ? wrap_break(g + pos, len - pos, cols - 3) : n;
            int done = put_glyphs(s, x + left, y + rows, cols, st, g + pos, shown);
            if (last)
                put_glyphs(s, x + left + done, y + rows, cols - done, st, dots, 3);
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
            set_cell(s, x + i, y, (uint32_t)(unsigned char)ch, st);
}

void screen_row_text(const struct screen *s, int y, char *out, size_t out_len)
{
    size_t n = 0;
    if (out_len == 0)
        return;
    mbstate_t st;
    memset(&st, 0, sizeof(st));
    for (int x = 0; y >= 0 && y < s->h && x < s->w; x++) {
        uint32_t ch = s->cells[y * s->w + x].ch;
        char mb[MB_LEN_MAX];
        if (ch == SCREEN_WIDE_RIGHT)
            continue;                     /* the right half of a wide character */
        size_t k = wcrtomb(mb, (wchar_t)ch, &st);
        if (k == (size_t)-1) {
            mb[0] = '?';
            k = 1;
        }
        if (n + k + 1 > out_len)
            break;
        memcpy(out + n, mb, k);
        n += k;
    }
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
