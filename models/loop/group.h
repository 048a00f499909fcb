/* group.h -- a group of loops and the chooser that picks the next one
 * (Netty's EventLoopGroup and DefaultEventExecutorChooserFactory).
 *
 * Round robin: the n-th call gets loop n mod size. When size is a power of
 * two the modulo is a mask (counter & (size - 1)), as Netty's
 * PowerOfTwoEventExecutorChooser does; otherwise a plain modulo.
 */
#ifndef THREADLAB_GROUP_H
#define THREADLAB_GROUP_H

#include <stdatomic.h>
#include <stdbool.h>

#include "loop.h"

struct loop_group {
    int size;
    struct loop **loops;
    _Atomic unsigned next;        /* how many times a loop was chosen */
    bool power_of_two;            /* choose with a mask */
};

/* size loops named "<prefix>-1" ... ("<prefix>" alone for a group of
 * one), not started. NULL + errno. Any thread. */
struct loop_group *loop_group_create(int size, const char *prefix,
                                     const struct loop_opts *each);

/* Start every loop. Returns 0 or -errno. Any thread but the group's own. */
int loop_group_start(struct loop_group *g);

/* The next loop, round robin. Any thread. */
struct loop *loop_group_next(struct loop_group *g);

/* The same choice, as an index into g->loops. Any thread. */
int loop_group_next_index(struct loop_group *g);

/* Stop every loop, join, free. Any thread but the group's own loops' (a
 * loop cannot join itself). */
void loop_group_stop_free(struct loop_group *g);

/* The chooser's arithmetic, pure, for tests: the index for the counter-th
 * choice among size loops. Any thread. */
int loop_group_choose(unsigned counter, int size, bool power_of_two);

#endif
