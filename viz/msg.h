/* msg.h -- every string the visualizer shows a class, in English and
 * Chinese, from one table.
 *
 * A string is named by its id; msg() gives it in the language chosen once
 * at start (--lang, else LANG / LC_MESSAGES / LC_ALL starting with "zh").
 * The Chinese uses the course glossary's terms (docs/glossary.md: 值守线程,
 * 事件循环, 任务队列, 阻塞 ...). Strings with printf conversions keep the
 * same conversions, in the same order, in both languages (check_view
 * proves it); the help rows and column headings are drawn as text, where
 * '%' is itself. Layout counts
 * display columns, not bytes (screen.h): a CJK character takes two. */
#ifndef THREADLAB_MSG_H
#define THREADLAB_MSG_H

#include <stdbool.h>
#include <stdio.h>

#include "probe/board_read.h"

enum msg_lang { LANG_EN, LANG_ZH, LANG_COUNT };

enum msg_id {
    /* the bottom row */
    M_KEYS_FULL, M_KEYS_SHORT, M_PAUSED,
    /* a pane's header */
    M_PID_UP, M_GONE, M_STOPPING, M_CONNS, M_RATES_WIDE, M_FAILS_WIDE, M_FAILS_NARROW,
    M_RATES_NARROW, M_THREADS, M_EXITED_WIDE,
    M_WAITING_FIRST, M_SERVER_EXITED, M_UNREADABLE, M_BOARD_UNREADABLE,
    /* the thread list and grid */
    M_COL_THREAD, M_COL_STATE, M_COL_FOR, M_COL_CPU, M_COL_CONN, M_COL_LINES,
    M_BY_ROLE, M_BY_STATE, M_BY_LINES, M_BY_CPU, M_SHOWN_OF, M_GRID_TITLE,
    M_GRID_MORE,
    /* loops, queues, events */
    M_LOOPS_WIDE, M_LOOPS_MID, M_LOOPS_NARROW, M_LOOPS_TIGHT, M_QUEUES, M_BLOCKED, M_TASKS_STARVE, M_EVENTS,
    M_PHASE_START, M_PHASE_WAIT, M_PHASE_IO, M_PHASE_TASKS, M_PHASE_STOP,
    /* thread states, as the legend and the list name them */
    M_STATE_IDLE, M_STATE_WAITING, M_STATE_RUNNING, M_STATE_RUNNABLE, M_STATE_BLOCKED_IO,
    M_STATE_BLOCKED_SLEEP, M_STATE_TERMINATED,
    /* thread roles, as the detail box names them */
    M_ROLE_ACCEPTOR, M_ROLE_CONN, M_ROLE_WATCHDOG, M_ROLE_POOL_WORKER, M_ROLE_BOSS,
    M_ROLE_WORKER_LOOP, M_ROLE_BUSINESS, M_ROLE_CHECKER, M_ROLE_MAIN,
    M_ROLE_CARRIER, M_ROLE_VTHREAD, M_ROLE_MONITOR,
    /* event kinds, as the log names them */
    M_EV_ACCEPT, M_EV_ASSIGN, M_EV_CLOSE, M_EV_SPAWN, M_EV_EXIT, M_EV_GROW,
    M_EV_SHRINK, M_EV_QUEUED, M_EV_RUN, M_EV_TIMER, M_EV_REJECT, M_EV_BLOCKED,
    M_EV_ERROR,
    /* whole-screen messages */
    M_TOO_SMALL, M_NEED_AT_LEAST, M_NO_SERVERS, M_LOOKED_IN, M_START_ONE,
    M_ZOOMED, M_ONE_PANE,
    /* the help box (one id per row) */
    M_HELP_1, M_HELP_2, M_HELP_3, M_HELP_4, M_HELP_5, M_HELP_6, M_HELP_7,
    M_HELP_8, M_HELP_9, M_HELP_10, M_HELP_11, M_HELP_12, M_HELP_13, M_HELP_14,
    M_HELP_15, M_HELP_16, M_HELP_17, M_HELP_18,
    /* the thread detail box (Enter) */
    M_D_TITLE_TID, M_D_TITLE_NOTID, M_D_STATE, M_D_CONN, M_D_NO_CONN, M_D_LINES,
    M_D_BYTES, M_D_CPU, M_D_LOOP, M_D_LOOP2, M_D_PENDING_LOOP, M_D_PENDING_NONE,
    M_D_PENDING_NO_CONN, M_D_CLOSE, M_D_GONE,
    /* the replay's status line */
    M_R_STATUS, M_R_PAUSED, M_R_PLAYING, M_R_NEW_WARNING, M_R_WARNINGS_GO_ON,
    M_R_NO_WARNING_AFTER, M_R_NO_WARNING_BEFORE, M_R_CUT, M_R_END, M_R_KEYS,
    /* sim --viz's status line */
    M_S_STATUS, M_S_FINISHED, M_S_PAUSED, M_S_NEXT, M_S_KEYS_SHORT, M_S_KEYS_LONG,
    M_S_KIND_ANY, M_S_KIND_REPLY,   /* kinds `e` steps to that are no board event */
    /* the demo's and compare's table: headings (text, drawn in columns
     * by display width), then the lines around it (formats) */
    M_T_MODEL, M_T_LINES_S, M_T_MB_S, M_T_THREADS, M_T_RSS, M_T_CPU_S, M_T_VOL_CS,
    M_T_INVOL_CS, M_T_ERRORS, M_T_SERVER, M_T_ROUND_TRIP, M_T_NO_REPORT,
    M_T_SCENARIO, M_T_SCENARIO_PER_MODEL, M_T_CUT_SHORT, M_T_SIDE_BY_SIDE,
    M_T_TOO_FEW_FILES,
    /* the demo's scenarios: a summary and what the narrator says (text,
     * never a format: "1% of lines" is not a conversion) */
    M_SC_STEADY, M_SC_STEADY_SAY, M_SC_BURST, M_SC_BURST_SAY, M_SC_SLOW,
    M_SC_SLOW_SAY, M_SC_CPU, M_SC_CPU_SAY, M_SC_IDLE, M_SC_IDLE_SAY, M_SC_MIXED,
    M_SC_MIXED_SAY,
    MSG_COUNT
};

/* The string of id in the current language. Any thread, once the language
 * is chosen. */
const char *msg(enum msg_id id);

/* The string of id in lang, whatever the language chosen: English for
 * what stays English (--help, stderr, a plot's title). Any thread. */
const char *msg_in(enum msg_lang lang, enum msg_id id);

/* Whether id is drawn as text, never used as a printf format (a '%' in it
 * is itself): the help rows, the table's headings, the narrators. */
bool msg_is_text(enum msg_id id);

/* The display width of text: the columns a terminal gives it (a CJK
 * character two), once msg_setup_locale ran. Any thread. */
int msg_width(const char *text);

/* Write text into a column of width display columns, padded with spaces
 * on the right (right_align: on the left); text wider than the column is
 * written whole. "%-10s" pads bytes, and a CJK character is three bytes
 * but two columns. Returns the columns written. Any thread. */
int msg_fput_col(FILE *out, const char *text, int width, bool right_align);

/* A thread state's name in the current language (the board's own English
 * name under LANG_EN). */
const char *msg_state(enum board_state s);

/* A thread role's name in the current language (the board's own English
 * name under LANG_EN). */
const char *msg_role(enum board_role r);

/* An event kind's name in the current language (the board's own English
 * name under LANG_EN). */
const char *msg_event(enum board_event_kind k);

/* Choose the language: "en" or "zh" (a --lang value). Returns 0, or
 * -EINVAL for anything else. Main thread, before anything is drawn. */
int msg_set_lang(const char *name);

/* Switch to lang for a while, and return the language before, to switch
 * back to: for a text made in both languages (a recording keeps both).
 * Main thread, while nothing else draws. */
enum msg_lang msg_use_lang(enum msg_lang lang);

/* The language: the one set, else the environment's (LC_ALL, then
 * LC_MESSAGES, then LANG, starting with "zh": Chinese), else English. */
enum msg_lang msg_lang(void);

/* Make text multibyte-aware before drawing: LC_CTYPE from the
 * environment, and, when the language is Chinese and that is not UTF-8,
 * C.UTF-8 (glibc has it built in). Only LC_CTYPE: a decimal comma from
 * LC_NUMERIC would change every figure. Main thread. */
void msg_setup_locale(void);

#endif
