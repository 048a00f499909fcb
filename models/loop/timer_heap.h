/* timer_heap.h -- a binary min-heap of timers ordered by deadline.
 *
 * Why a heap and not a hashed wheel: a loop holds at most thousands of
 * timers (idle timeouts, lingering closes, scheduled tasks), a heap keeps
 * them in exact deadline order with O(log n) insert and remove and no tick
 * to choose, and the loop's wait timeout is simply the root's deadline.
 * A hashed wheel (Netty's HashedWheelTimer, 时间轮) is O(1) per
 * timer but rounds every deadline to a tick; it pays off for millions of
 * coarse timeouts. Netty's own event loop keeps its scheduled tasks in a
 * priority queue too.
 *
 * Pure data structure: no threads, no clock. Each entry remembers its index
 * so that it can be removed from the middle (cancel). Every function here
 * is for the loop's thread only: the heap has no lock.
 */
#ifndef THREADLAB_TIMER_HEAP_H
#define THREADLAB_TIMER_HEAP_H

#include <stddef.h>
#include <stdint.h>

/* Embed this in whatever the heap orders. */
struct heap_node {
    uint64_t deadline_ns;   /* the key */
    uint64_t seq;           /* ties broken by insertion order: FIFO */
    size_t index;           /* where it sits; HEAP_NOT_IN when outside */
};

#define HEAP_NOT_IN ((size_t)-1)

struct timer_heap {
    struct heap_node **nodes;
    size_t len, cap;
    uint64_t next_seq;
};

void heap_init(struct timer_heap *h);
void heap_free(struct timer_heap *h);     /* frees the array, not the nodes */

/* Insert n (deadline set by the caller). Returns 0 or -ENOMEM. */
int heap_push(struct timer_heap *h, struct heap_node *n);

/* The earliest node, or NULL. */
struct heap_node *heap_peek(const struct timer_heap *h);

/* Remove and return the earliest node, or NULL. */
struct heap_node *heap_pop(struct timer_heap *h);

/* Remove n from wherever it is (no-op when not in the heap). */
void heap_remove(struct timer_heap *h, struct heap_node *n);

#endif
