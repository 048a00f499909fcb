/* check_view.h -- what the files of check_view share: what `threadlab
 * top` shows for given snapshots, read from the screen model without a
 * terminal; and its panes. Each file holds one subject and adds its tests
 * to the case main.c creates. */
#ifndef CHECK_VIEW_H
#define CHECK_VIEW_H

#include <check.h>
#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model_suite.h"
#include "load/results.h"
#include "load/scenario.h"
#include "echo/session.h"
#include "probe/board.h"
#include "viz/cpu.h"
#include "viz/msg.h"
#include "viz/pane.h"
#include "viz/reason.h"
#include "viz/record.h"
#include "viz/term.h"
#include "viz/view.h"

#define SEC 1000000000ull

/* A snapshot of model's server pid, taken taken_s after it started. */
struct board_snapshot *make_snapshot(const char *model, int pid, uint64_t taken_s);
/* One more thread on the snapshot, in state st for a second. */
void add_thread(struct board_snapshot *s, enum board_role role,
                const char *name, enum board_state st, uint64_t conn);
/* v, with one pane showing now (rates from before). */
void one_pane(struct view *v, struct board_snapshot *now,
              struct board_snapshot *before);
/* How many cells show ch in style st. */
int count_cells(const struct screen *scr, char ch, enum style st);
/* The printf conversions of a format, in order ("%s%llu" -> "sllu"). */
void conversions(const char *fmt, char *out, size_t len);

/* Each subject's tests, added to the one case. */
void add_screen_tests(TCase *tc);
void add_layout_tests(TCase *tc);
void add_cpu_tests(TCase *tc);
void add_width_tests(TCase *tc);
void add_reason_tests(TCase *tc);
void add_word_tests(TCase *tc);
void add_pane_tests(TCase *tc);

#endif
