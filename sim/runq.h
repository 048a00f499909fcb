/* runq.h -- a core's run queue: a ring of thread ids, first come first
 * served, that doubles when full. */
#ifndef THREADLAB_RUNQ_H
#define THREADLAB_RUNQ_H

#include <stdbool.h>
#include <stdint.h>

struct runq {
    uint32_t *ids;
    uint32_t head, len, cap;
};

/* t at the tail (runq_push) or the head (runq_push_front). False when out
 * of memory: t is not queued. */
bool runq_push(struct runq *q, uint32_t t);
bool runq_push_front(struct runq *q, uint32_t t);

/* The head, taken off (the queue must not be empty). */
uint32_t runq_pop(struct runq *q);

void runq_free(struct runq *q);

#endif
