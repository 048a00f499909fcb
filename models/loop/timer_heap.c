/* timer_heap.c -- sift up, sift down. See timer_heap.h. */
#include "timer_heap.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

void heap_init(struct timer_heap *h)
{
    h->nodes = NULL;
    h->len = h->cap = 0;
    h->next_seq = 0;
}

void heap_free(struct timer_heap *h)
{
    free(h->nodes);
    heap_init(h);
}

static bool earlier(const struct heap_node *a, const struct heap_node *b)
{
    if (a->deadline_ns != b->deadline_ns)
        return a->deadline_ns < b->deadline_ns;
    return a->seq < b->seq;
}

static void place(struct timer_heap *h, size_t i, struct heap_node *n)
{
    h->nodes[i] = n;
    n->index = i;
}

static void sift_up(struct timer_heap *h, size_t i)
{
    struct heap_node *n = h->nodes[i];
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!earlier(n, h->nodes[parent]))
            break;
        place(h, i, h->nodes[parent]);
        i = parent;
    }
    place(h, i, n);
}

static void sift_down(struct timer_heap *h, size_t i)
{
    struct heap_node *n = h->nodes[i];
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= h->len)
            break;
        if (child + 1 < h->len && earlier(h->nodes[child + 1], h->nodes[child]))
            child++;
        if (!earlier(h->nodes[child], n))
            break;
        place(h, i, h->nodes[child]);
        i = child;
    }
    place(h, i, n);
}

int heap_push(struct timer_heap *h, struct heap_node *n)
{
    if (h->len == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 16;
        struct heap_node **grown = realloc(h->nodes, cap * sizeof(*grown));
        if (!grown)
            return -ENOMEM;
        h->nodes = grown;
        h->cap = cap;
    }
    n->seq = h->next_seq++;
    place(h, h->len++, n);
    sift_up(h, n->index);
    return 0;
}

struct heap_node *heap_peek(const struct timer_heap *h)
{
    return h->len ? h->nodes[0] : NULL;
}

void heap_remove(struct timer_heap *h, struct heap_node *n)
{
    size_t i = n->index;
    if (i == HEAP_NOT_IN || i >= h->len || h->nodes[i] != n)
        return;
    struct heap_node *last = h->nodes[--h->len];
    n->index = HEAP_NOT_IN;
    if (last == n)
        return;
    place(h, i, last);
    /* The moved node may belong above or below its new place. */
    if (i > 0 && earlier(last, h->nodes[(i - 1) / 2]))
        sift_up(h, i);
    else
        sift_down(h, i);
}

struct heap_node *heap_pop(struct timer_heap *h)
{
    struct heap_node *n = heap_peek(h);
    if (n)
        heap_remove(h, n);
    return n;
}
