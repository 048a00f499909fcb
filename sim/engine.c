/* engine.c -- the event heap. See engine.h. */
#include "engine.h"

#include <stdlib.h>

int des_init(struct des_engine *e, size_t initial_cap)
{
    e->now = 0;
    e->next_seq = 0;
    e->processed = 0;
    e->len = 0;
    e->cap = initial_cap < 16 ? 16 : initial_cap;
    e->heap = malloc(e->cap * sizeof(*e->heap));
    return e->heap ? 0 : -1;
}

void des_free(struct des_engine *e)
{
    free(e->heap);
    e->heap = NULL;
    e->len = e->cap = 0;
}

static bool before(const struct des_event *a, const struct des_event *b)
{
    return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

int des_schedule(struct des_engine *e, vtime_t delay, uint32_t kind, uint32_t id,
                 uint32_t gen)
{
    if (e->len == e->cap) {
        struct des_event *grown = realloc(e->heap, 2 * e->cap * sizeof(*grown));
        if (!grown)
            return -1;
        e->heap = grown;
        e->cap *= 2;
    }
    struct des_event ev = { e->now + delay, e->next_seq++, kind, id, gen, 0 };
    size_t i = e->len++;
    while (i > 0) {                          /* sift up */
        size_t parent = (i - 1) / 2;
        if (!before(&ev, &e->heap[parent]))
            break;
        e->heap[i] = e->heap[parent];
        i = parent;
    }
    e->heap[i] = ev;
    return 0;
}

bool des_next(struct des_engine *e, struct des_event *out)
{
    if (e->len == 0)
        return false;
    *out = e->heap[0];
    struct des_event last = e->heap[--e->len];
    size_t i = 0, n = e->len;
    for (;;) {                               /* sift down */
        size_t child = 2 * i + 1;
        if (child >= n)
            break;
        if (child + 1 < n && before(&e->heap[child + 1], &e->heap[child]))
            child++;
        if (!before(&e->heap[child], &last))
            break;
        e->heap[i] = e->heap[child];
        i = child;
    }
    if (n > 0)
        e->heap[i] = last;
    e->now = out->at;
    e->processed++;
    return true;
}
