/* runner.h -- the terminal loop that `top` and `replay` share: take the
 * terminal, then draw, paint, wait for a key and follow resizes until told
 * to stop. What is drawn and what a key does are the caller's hooks. */
#ifndef THREADLAB_RUNNER_H
#define THREADLAB_RUNNER_H

#include <stdbool.h>

#include "screen.h"
#include "view.h"

struct runner_hooks {
    /* Bring the view up to date (read boards, advance a frame) and render
     * it into scr. Returns how long to wait for a key, in ms, or -1 to
     * stop. */
    int (*draw)(void *arg, struct view *v, struct screen *scr);
    /* A key pressed (never TERM_KEY_NONE or TERM_KEY_RESIZE, which the
     * runner handles). Returns false to stop. */
    bool (*key)(void *arg, struct view *v, int key);
    void *arg;
};

/* Run the full screen until a hook says stop or a stop signal comes
 * (stop.h: the caller catches them). Returns 0; term_open's -ENOTTY or
 * -EINVAL when the terminal cannot be used (it is left as it was: the
 * caller prints text instead); -ENOMEM when no screen model could be
 * allocated. Main thread. */
int runner_run(struct view *v, const struct runner_hooks *h);

#endif
