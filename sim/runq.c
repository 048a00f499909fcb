/* runq.c -- a core's run queue. See runq.h. */
#include "runq.h"

#include <stdlib.h>

/* Room for one more: twice the ring, its ids in order from 0. */
static bool runq_grow(struct runq *q)
{
    uint32_t cap = q->cap ? q->cap * 2 : 64;
    uint32_t *ids = malloc(cap * sizeof(*ids));
    if (!ids)
        return false;
    for (uint32_t i = 0; i < q->len; i++)
        ids[i] = q->ids[(q->head + i) % q->cap];
    free(q->ids);
    q->ids = ids;
    q->head = 0;
    q->cap = cap;
    return true;
}

bool runq_push(struct runq *q, uint32_t t)
{
    if (q->len == q->cap && !runq_grow(q))
        return false;
    q->ids[(q->head + q->len++) % q->cap] = t;
    return true;
}

bool runq_push_front(struct runq *q, uint32_t t)
{
    if (q->len == q->cap && !runq_grow(q))
        return false;
    q->head = (q->head + q->cap - 1) % q->cap;
    q->ids[q->head] = t;
    q->len++;
    return true;
}

uint32_t runq_pop(struct runq *q)
{
    uint32_t t = q->ids[q->head];
    q->head = (q->head + 1) % q->cap;
    q->len--;
    return t;
}

void runq_free(struct runq *q)
{
    free(q->ids);
    *q = (struct runq){ 0 };
}
