/* group.c -- N loops and a round-robin chooser. See group.h. */
#include "group.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

int loop_group_choose(unsigned counter, int size, bool power_of_two)
{
    if (power_of_two)
        return (int)(counter & (unsigned)(size - 1));
    return (int)(counter % (unsigned)size);
}

struct loop_group *loop_group_create(int size, const char *prefix,
                                     const struct loop_opts *each)
{
    if (size < 1) {
        errno = EINVAL;
        return NULL;
    }
    struct loop_group *g = calloc(1, sizeof(*g));
    if (!g)
        return NULL;
    g->loops = calloc((size_t)size, sizeof(*g->loops));
    if (!g->loops) {
        free(g);
        return NULL;
    }
    g->power_of_two = (size & (size - 1)) == 0;
    for (int i = 0; i < size; i++) {
        char name[LOOP_NAME_BYTES];
        struct loop_opts o = *each;
        if (size == 1)            /* a group of one: the loop is the prefix */
            snprintf(name, sizeof(name), "%s", prefix);
        else
            snprintf(name, sizeof(name), "%s-%d", prefix, i + 1);
        o.name = name;
        o.parent = g;               /* loop_parent(), Netty's EventLoop.parent() */
        g->loops[i] = loop_create(&o);
        if (!g->loops[i]) {
            int err = errno;
            loop_group_stop_free(g);
            errno = err;
            return NULL;
        }
        g->size++;
    }
    return g;
}

int loop_group_start(struct loop_group *g)
{
    for (int i = 0; i < g->size; i++) {
        int rc = loop_start(g->loops[i]);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int loop_group_next_index(struct loop_group *g)
{
    unsigned n = atomic_fetch_add_explicit(&g->next, 1, memory_order_relaxed);
    return loop_group_choose(n, g->size, g->power_of_two);
}

struct loop *loop_group_next(struct loop_group *g)
{
    return g->loops[loop_group_next_index(g)];
}

void loop_group_stop_free(struct loop_group *g)
{
    for (int i = 0; i < g->size; i++)
        loop_stop(g->loops[i]);
    for (int i = 0; i < g->size; i++)
        loop_join_free(g->loops[i]);
    free(g->loops);
    free(g);
}
