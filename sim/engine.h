/* engine.h -- the discrete-event core: a virtual clock in nanoseconds and
 * a queue of future events, earliest first.
 *
 * An event is a small value (when, what kind, for whom), kept in one array
 * arranged as a binary heap: scheduling allocates nothing once the array
 * has grown to the run's working size. Events at the same instant come out
 * in the order they were scheduled (a sequence number breaks ties), so a
 * run does not depend on the heap's internals: same seed, same run.
 */
#ifndef THREADLAB_ENGINE_H
#define THREADLAB_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint64_t vtime_t;            /* virtual nanoseconds since the start */

struct des_event {
    vtime_t at;
    uint64_t seq;                    /* tie-break: scheduling order */
    uint32_t kind;                   /* what happens (the simulation's enum) */
    uint32_t id;                     /* to whom: a thread, a connection, a core */
    uint32_t gen;                    /* a generation, to recognise stale events */
    uint32_t unused;
};

struct des_engine {
    vtime_t now;
    uint64_t next_seq;
    uint64_t processed;              /* events taken so far */
    struct des_event *heap;
    size_t len, cap;
};

int des_init(struct des_engine *e, size_t initial_cap);
void des_free(struct des_engine *e);

/* Schedule kind/id/gen at now + delay. Returns 0, or -1 when out of memory. */
int des_schedule(struct des_engine *e, vtime_t delay, uint32_t kind, uint32_t id,
                 uint32_t gen);

/* Take the earliest event and move the clock to it. False when none. */
bool des_next(struct des_engine *e, struct des_event *out);

#endif
