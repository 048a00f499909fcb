/* term.h -- paint a screen model on a real terminal with ncurses. */
#ifndef THREADLAB_TERM_H
#define THREADLAB_TERM_H

#include <stdbool.h>

#include "screen.h"

#define TERM_KEY_NONE (-1)     /* no key before the timeout */
#define TERM_KEY_RESIZE (-2)   /* the terminal changed size */
#define TERM_KEY_LEFT (-3)     /* the arrow keys */
#define TERM_KEY_RIGHT (-4)
#define TERM_KEY_UP (-5)
#define TERM_KEY_DOWN (-6)
#define TERM_KEY_PGUP (-7)
#define TERM_KEY_PGDN (-8)
#define TERM_KEY_HOME (-9)
#define TERM_KEY_END (-10)
#define TERM_KEY_ENTER (-11)   /* Return, Enter, keypad Enter */

/* Take over the terminal. Colour unless NO_COLOR is set or the terminal
 * has none; big makes everything bold (projector mode). The terminal is
 * restored by term_close, at exit, and on crash signals (SIGSEGV, SIGABRT,
 * SIGQUIT...: its saved modes, with tcsetattr, then the signal kills).
 * Returns 0, -ENOTTY when stdin or stdout is not a terminal, -EINVAL for a
 * terminal that cannot draw a full screen (TERM unknown, or dumb: no
 * cursor addressing), which is left as it was. Main thread. */
int term_open(bool big);
void term_close(void);

/* The terminal's size now. */
void term_size(int *w, int *h);

/* Show the screen model. */
void term_paint(const struct screen *s);

/* Wait up to timeout_ms for a key. */
int term_key(int timeout_ms);

#endif
