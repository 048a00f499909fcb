/* term.c -- ncurses paints the screen model; nothing else here draws.
 * See term.h. */
#include "term.h"

#include "msg.h"

#include <curses.h>
#include <errno.h>
#include <locale.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

static volatile sig_atomic_t term_active;
static bool term_bold_all;
static attr_t style_attr[ST_COUNT];

/* What a crash handler needs to give the terminal back, prepared while it
 * is safe to prepare it: the modes before ncurses changed them, and the
 * bytes that leave the full screen (rmcup), show the cursor (cnorm) and
 * reset the colours (sgr0). */
static struct termios saved_modes;
static char leave_bytes[128];
static size_t leave_len;

/* A crash (or Ctrl-\) must not leave the terminal in raw mode. endwin()
 * is not async-signal-safe (it takes ncurses' locks and writes through
 * stdio, which the crash may have broken), so the handler uses only
 * write(2) and tcsetattr(3), which are; then it dies of the same signal,
 * so that the exit status (and a core dump) tell the truth. */
static void on_crash_signal(int sig)
{
    if (term_active) {
        ssize_t ignored = write(STDOUT_FILENO, leave_bytes, leave_len);
        (void)ignored;
        tcsetattr(STDOUT_FILENO, TCSANOW, &saved_modes);
    }
    struct sigaction dfl = { .sa_handler = SIG_DFL };
    sigaction(sig, &dfl, NULL);
    raise(sig);               /* delivered when the handler returns */
}

/* Append terminfo capability cap to the crash handler's bytes. */
static void add_leave_bytes(const char *cap)
{
    const char *s = tigetstr(cap);
    if (!s || s == (const char *)-1)
        return;
    size_t n = strlen(s);
    if (leave_len + n <= sizeof(leave_bytes)) {
        memcpy(leave_bytes + leave_len, s, n);
        leave_len += n;
    }
}

static void setup_styles(bool color)
{
    /* Monochrome: the letters carry the state; attributes help a little. */
    attr_t mono[ST_COUNT] = {
        [ST_NORMAL] = A_NORMAL, [ST_DIM] = A_DIM, [ST_TITLE] = A_BOLD,
        [ST_FOCUS] = A_REVERSE | A_BOLD, [ST_WARN] = A_BOLD | A_UNDERLINE,
        [ST_GOOD] = A_NORMAL, [ST_BAR] = A_BOLD, [ST_IDLE] = A_DIM,
        [ST_WAITING] = A_NORMAL, [ST_RUNNING] = A_REVERSE | A_BOLD,
        [ST_BLOCKED_IO] = A_NORMAL, [ST_BLOCKED_SLEEP] = A_REVERSE,
        [ST_TERMINATED] = A_DIM,
    };
    memcpy(style_attr, mono, sizeof(mono));
    if (!color)
        return;
    static const struct { enum style st; short fg, bg; attr_t extra; } pairs[] = {
        { ST_TITLE, COLOR_CYAN, -1, A_BOLD },
        { ST_FOCUS, COLOR_BLACK, COLOR_CYAN, A_BOLD },
        { ST_WARN, COLOR_RED, -1, A_BOLD },
        { ST_GOOD, COLOR_GREEN, -1, 0 },
        { ST_BAR, COLOR_YELLOW, -1, A_BOLD },
        { ST_IDLE, COLOR_WHITE, COLOR_BLUE, 0 },
        { ST_WAITING, COLOR_BLACK, COLOR_CYAN, 0 },
        { ST_RUNNING, COLOR_BLACK, COLOR_GREEN, A_BOLD },
        { ST_BLOCKED_IO, COLOR_BLACK, COLOR_YELLOW, 0 },
        { ST_BLOCKED_SLEEP, COLOR_WHITE, COLOR_RED, A_BOLD },
        { ST_TERMINATED, COLOR_WHITE, COLOR_BLACK, A_DIM },
    };
    start_color();
    use_default_colors();
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        init_pair((short)(i + 1), pairs[i].fg, pairs[i].bg);
        style_attr[pairs[i].st] = COLOR_PAIR(i + 1) | pairs[i].extra;
    }
}

int term_open(bool big)
{
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
        return -ENOTTY;
    msg_setup_locale();       /* before newterm: ncursesw reads LC_CTYPE */
    if (tcgetattr(STDOUT_FILENO, &saved_modes) < 0)
        return -ENOTTY;
    /* newterm, not initscr: initscr exits the process on an unknown TERM. */
    SCREEN *scr = newterm(NULL, stdout, stdin);
    if (!scr)
        return -EINVAL;
    /* A terminal that cannot move its cursor (TERM=dumb) would get every
     * row printed after the last: the caller prints text instead. */
    const char *cup = tigetstr("cup");
    if (!cup || cup == (const char *)-1) {
        endwin();
        delscreen(scr);
        tcsetattr(STDOUT_FILENO, TCSANOW, &saved_modes);
        return -EINVAL;
    }
    leave_len = 0;
    add_leave_bytes("sgr0");
    add_leave_bytes("cnorm");
    add_leave_bytes("rmcup");
    term_active = true;
    static bool close_at_exit;
    if (!close_at_exit)
        atexit(term_close);
    close_at_exit = true;
    cbreak();
    noecho();
    keypad(stdscr, TRUE);
    curs_set(0);
    const char *no_color = getenv("NO_COLOR");
    setup_styles(has_colors() && !(no_color && *no_color));
    term_bold_all = big;

    /* Stop signals (Ctrl-C, SIGTERM, SIGHUP) are the caller's (stop.h):
     * they end its loop, which calls term_close. These end the process. */
    int crash[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGQUIT };
    struct sigaction crash_action = { .sa_handler = on_crash_signal };
    sigemptyset(&crash_action.sa_mask);
    for (size_t i = 0; i < sizeof(crash) / sizeof(crash[0]); i++)
        sigaction(crash[i], &crash_action, NULL);
    return 0;
}

void term_close(void)
{
    if (!term_active)
        return;
    term_active = false;
    curs_set(1);
    endwin();
}

void term_size(int *w, int *h)
{
    getmaxyx(stdscr, *h, *w);
}

static attr_t cell_attr(const struct cell *c)
{
    attr_t a = style_attr[c->style < ST_COUNT ? c->style : ST_NORMAL];
    return term_bold_all ? a | A_BOLD : a;
}

/* Paint one cell at the cursor (insert: before it, the cursor staying).
 * A wide character (CJK) goes through the wide-character calls, which
 * ncurses lays out over two columns; its right half is never painted. */
static void paint_cell(const struct cell *c, bool insert)
{
    if (c->ch < 0x80) {
        chtype ch = (chtype)(c->ch ? c->ch : ' ') | cell_attr(c);
        if (insert)
            insch(ch);
        else
            addch(ch);
        return;
    }
    wchar_t wc[2] = { (wchar_t)c->ch, L'\0' };
    cchar_t cc;
    setcchar(&cc, wc, cell_attr(c), 0, NULL);
    if (insert)
        ins_wch(&cc);
    else
        add_wch(&cc);
}

/* The bottom-right cell (the "s" of "500ms"), drawn without scrolling: put
 * it one cell to the left, then insert the cell that belongs there before
 * it; insch shifts the row right and does not move the cursor. */
static void paint_last_cell(const struct screen *s, int x, int y)
{
    move(y, x - 1);
    paint_cell(&s->cells[y * s->w + x], false);
    move(y, x - 1);
    paint_cell(&s->cells[y * s->w + x - 1], true);
}

void term_paint(const struct screen *s)
{
    int w, h;
    getmaxyx(stdscr, h, w);
    for (int y = 0; y < s->h && y < h; y++) {
        move(y, 0);
        for (int x = 0; x < s->w && x < w; x++) {
            const struct cell *c = &s->cells[y * s->w + x];
            if (c->ch == SCREEN_WIDE_RIGHT)
                continue;              /* painted with its left half */
            /* The last cell of the last row: addch there would move the
             * cursor past the end and scroll the screen. */
            if (y == h - 1 && x == w - 1 && x > 0) {
                paint_last_cell(s, x, y);
                break;
            }
            paint_cell(c, false);
        }
    }
    refresh();
}

int term_key(int timeout_ms)
{
    timeout(timeout_ms);
    int c = getch();
    if (c == KEY_RESIZE)
        return TERM_KEY_RESIZE;
    static const struct { int curses, ours; } keys[] = {
        { KEY_LEFT, TERM_KEY_LEFT }, { KEY_RIGHT, TERM_KEY_RIGHT },
        { KEY_UP, TERM_KEY_UP },     { KEY_DOWN, TERM_KEY_DOWN },
        { KEY_PPAGE, TERM_KEY_PGUP }, { KEY_NPAGE, TERM_KEY_PGDN },
        { KEY_HOME, TERM_KEY_HOME }, { KEY_END, TERM_KEY_END },
        { KEY_ENTER, TERM_KEY_ENTER }, { '\n', TERM_KEY_ENTER },
        { '\r', TERM_KEY_ENTER },
    };
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (c == keys[i].curses)
            return keys[i].ours;
    return c == ERR ? TERM_KEY_NONE : c;
}

