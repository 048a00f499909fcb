/* pane.h -- one watched server's pane: attach it to a board, refresh its
 * snapshots, detach it. top.c keeps up to five; view.c draws them. */
#ifndef THREADLAB_PANE_H
#define THREADLAB_PANE_H

#include <stdbool.h>

#include "view.h"

/* Attach p (zeroed, or showing a server that is gone) to the board at path,
 * written by process pid. The buffers are allocated before p is touched:
 * out of memory, p stays as it was, every pointer in it valid. Returns 0
 * or -ENOMEM. Main thread (as every function here). */
int pane_attach(struct pane *p, const char *path, int pid);

/* Free p's buffers and zero it. A zeroed pane is fine. */
void pane_detach(struct pane *p);

/* Read a new snapshot (the previous one kept for rates). The pid is asked
 * every time, not only when a read fails: a server killed with SIGKILL
 * leaves its board readable and still, forever. A dead server's pane is
 * marked gone, its last state kept; a failed read of a live one's board
 * (removed, not a board) sets p->error, and the next refresh tries again. */
void pane_refresh(struct pane *p);

/* Whether process pid can still write its board: it exists and is not a
 * zombie (dead, not yet reaped: kill() still finds it). */
bool pane_process_alive(int pid);

#endif
