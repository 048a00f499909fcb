/* screen.h -- the screen model: what the visualizer shows, as cells.
 *
 * Rendering is a pure function from board snapshots to a screen model
 * (view.c); ncurses only paints the model (term.c), and --plain prints it
 * as text. Tests read the model without a terminal.
 */
#ifndef THREADLAB_SCREEN_H
#define THREADLAB_SCREEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

/* How a cell looks. The painter maps each to a colour pair, or to plain
 * text attributes when there is no colour (NO_COLOR). */
enum style {
    ST_NORMAL, ST_DIM, ST_TITLE, ST_FOCUS, ST_WARN, ST_GOOD, ST_BAR,
    ST_IDLE, ST_WAITING, ST_RUNNING, ST_BLOCKED_IO, ST_BLOCKED_SLEEP,
    ST_TERMINATED, ST_COUNT
};

/* One column. A wide character (CJK: two columns under ncursesw) takes
 * its cell and the next, which holds SCREEN_WIDE_RIGHT. */
#define SCREEN_WIDE_RIGHT 0u

struct cell {
    uint32_t ch;      /* a printable character (a wchar_t value), or
                         SCREEN_WIDE_RIGHT */
    uint8_t style;    /* enum style */
};

struct screen {
    int w, h;
    struct cell *cells;  /* h rows of w cells */
};

/* Allocate a w x h screen of blanks. Returns 0 or -ENOMEM. */
int screen_init(struct screen *s, int w, int h);
void screen_free(struct screen *s);

/* Blank every cell. */
void screen_clear(struct screen *s);

/* Write text at (x, y) in a style, clipped to the screen and to max_w
 * columns (max_w < 0: to the screen's edge). Text is multibyte in the
 * LC_CTYPE locale (UTF-8 once msg_setup_locale ran): each character takes
 * its display width (wcwidth), a wide one that does not fit whole is left
 * out; control characters, bytes that are not a character and zero-width
 * ones become '?', so text from another process cannot move the cursor.
 * Returns columns written. */
int screen_put(struct screen *s, int x, int y, int max_w, enum style st,
               const char *text);

/* printf into the screen. */
int screen_printf(struct screen *s, int x, int y, int max_w, enum style st,
                  const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* Write text in exactly w columns: cut, or padded with blanks on the right
 * (right_align: on the left). Display width, not bytes: "%-15s" pads CJK
 * text short. Returns w. */
int screen_put_col(struct screen *s, int x, int y, int w, enum style st,
                   const char *text, bool right_align);

/* The display width of text (columns, as screen_put counts them). */
int screen_text_width(const char *text);

/* Write text at (x, y) wrapped at word boundaries into rows of w columns,
 * (a row may also end between two wide characters: CJK has no spaces),
 * at most max_rows of them; rows after the first start indent columns in.
 * Text that needs more rows ends in "..." after the last word that fits.
 * Returns the rows the whole text needs (more than max_rows when it was
 * cut). s may be NULL: then nothing is drawn, and the rows are counted. */
int screen_put_wrapped(struct screen *s, int x, int y, int w, int max_rows,
                       int indent, enum style st, const char *text);

/* Fill n cells from (x, y) with ch. */
void screen_fill(struct screen *s, int x, int y, int n, char ch, enum style st);

/* The text of row y, trailing blanks cut, into out (size out_len). */
void screen_row_text(const struct screen *s, int y, char *out, size_t out_len);

/* Print rows 0 .. rows-1 as text lines to out, without the blank rows at
 * the end (--plain). Returns 0, or -EIO when out failed (the reader went
 * away). */
int screen_print(const struct screen *s, int rows, FILE *out);

/* The cell at (x, y), or NULL off screen. */
const struct cell *screen_at(const struct screen *s, int x, int y);

/* Does any row contain needle? Returns its row, or -1. For tests. */
int screen_find(const struct screen *s, const char *needle);

#endif
