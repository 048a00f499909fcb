/* runner.c -- the full-screen loop of top and replay. See runner.h.
 *
 *   draw hook -> screen model -> term_paint -> term_key (the hook's timeout)
 *        ^                                        |
 *        +---- resize: a new screen model  <------+---- a key: the key hook
 */
#include "runner.h"

#include <errno.h>

#include "stop.h"
#include "term.h"

int runner_run(struct view *v, const struct runner_hooks *h)
{
    struct screen scr;
    int w, h_rows;
    int rc = term_open(v->big);
    if (rc < 0)
        return rc;
    term_size(&w, &h_rows);
    view_resize(v, w, h_rows);
    if (screen_init(&scr, w, h_rows) < 0) {
        term_close();
        return -ENOMEM;
    }
    rc = 0;
    bool running = true;
    while (running && !stop_signal()) {
        int wait_ms = h->draw(h->arg, v, &scr);
        if (wait_ms < 0)
            break;
        term_paint(&scr);
        int key = term_key(wait_ms);
        if (key == TERM_KEY_RESIZE) {
            term_size(&w, &h_rows);
            screen_free(&scr);
            view_resize(v, w, h_rows);
            if (screen_init(&scr, w, h_rows) < 0) {
                rc = -ENOMEM;
                break;
            }
        } else if (key != TERM_KEY_NONE) {
            running = h->key(h->arg, v, key);
        }
    }
    screen_free(&scr);
    term_close();
    return rc;
}
