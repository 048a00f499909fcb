/* term.c -- ncurses paints the screen model; nothing else here draws.
 * See term.h. */
#include "term.h"

#include <curses.h>
#include <locale.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool term_active;
static bool term_bold_all;
static volatile sig_atomic_t interrupted;
static attr_t style_attr[ST_COUNT];

static void on_stop_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

/* A crash must not leave the terminal in raw mode: restore it, then die
 * of the same signal so the exit status tells the truth. */
static void on_crash_signal(int sig)
{
    if (term_active)
        endwin();
    signal(sig, SIG_DFL);
    raise(sig);
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
        return -1;
    setlocale(LC_ALL, "");
    if (!initscr())
        return -1;
    term_active = true;
    atexit(term_close);
    cbreak();
    noecho();
    keypad(stdscr, TRUE);
    curs_set(0);
    const char *no_color = getenv("NO_COLOR");
    setup_styles(has_colors() && !(no_color && *no_color));
    term_bold_all = big;

    struct sigaction stop = { .sa_handler = on_stop_signal };
    sigaction(SIGINT, &stop, NULL);
    sigaction(SIGTERM, &stop, NULL);
    sigaction(SIGHUP, &stop, NULL);
    int crash[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL };
    for (size_t i = 0; i < sizeof(crash) / sizeof(crash[0]); i++)
        signal(crash[i], on_crash_signal);
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

void term_paint(const struct screen *s)
{
    int w, h;
    getmaxyx(stdscr, h, w);
    for (int y = 0; y < s->h && y < h; y++) {
        move(y, 0);
        for (int x = 0; x < s->w && x < w; x++) {
            const struct cell *c = &s->cells[y * s->w + x];
            attr_t a = style_attr[c->style < ST_COUNT ? c->style : ST_NORMAL];
            if (term_bold_all)
                a |= A_BOLD;
            /* The last cell of the last row would scroll the screen. */
            if (y == h - 1 && x == w - 1)
                break;
            addch((chtype)(unsigned char)c->ch | a);
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
    if (c == KEY_LEFT)
        return TERM_KEY_LEFT;
    if (c == KEY_RIGHT)
        return TERM_KEY_RIGHT;
    return c == ERR ? TERM_KEY_NONE : c;
}

bool term_interrupted(void)
{
    return interrupted != 0;
}
