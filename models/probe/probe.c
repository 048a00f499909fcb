/* probe.c -- the probes that write an event: its text is made here, so
 * that the hearts say what happened, not how the log spells it. See
 * probe.h, probe_loop.h and probe_pool.h. */
#include "probe.h"
#include "probe_loop.h"
#include "probe_pool.h"
#include "probe_vthread.h"

#include <stdio.h>
#include <string.h>

#include "net/clock.h"

/* ---- connections -------------------------------------------------------- */

void probe_accepted(struct board *b, uint64_t id)
{
    board_add(b, CTR_ACCEPTED, 1);
    board_event(b, EV_ACCEPT, "conn %llu", (unsigned long long)id);
}

void probe_assigned(struct board *b, uint64_t id, const char *worker, int index,
                    int workers)
{
    board_add(b, CTR_ACCEPTED, 1);
    board_event(b, EV_ASSIGN, "conn %llu -> %s: round robin (%d of %d)",
                (unsigned long long)id, worker, index, workers);
}

void probe_accept_failed(struct board *b, int err, bool spare_took_it)
{
    board_add(b, CTR_ERR_ACCEPT, 1);
    if (spare_took_it)
        board_event(b, EV_ERROR, "%s: the spare fd took the connection "
                    "and closed it with !err busy", strerror(err));
    else
        board_event(b, EV_ERROR, "accept failed: %s", strerror(err));
}

void probe_rejected(struct board *b, uint64_t id, const char *why)
{
    board_add(b, CTR_REJECTED, 1);
    if (why)
        board_event(b, EV_REJECT, "conn %llu: %s", (unsigned long long)id, why);
}

void probe_over_limit(struct board *b, uint64_t id, int max)
{
    board_event(b, EV_REJECT, "conn %llu: limit of %d connections "
                "open (--max-conns)", (unsigned long long)id, max);
}

void probe_handoff_failed(struct board *b, uint64_t id, const char *worker, int err)
{
    board_add(b, CTR_ERR_ACCEPT, 1);
    board_event(b, EV_ERROR, "conn %llu: hand-off to %s failed: %s",
                (unsigned long long)id, worker, strerror(err));
}

void probe_refusal_cut_short(struct board *b, uint64_t id, int lingering)
{
    board_event(b, EV_REJECT, "conn %llu: %d refusals lingering, the "
                "oldest closed early", (unsigned long long)id, lingering);
}

/* ---- loops ---------------------------------------------------------------- */

void probe_loop_opened(struct loop_probe *lp, struct board *b, const char *name,
                       enum board_role role)
{
    lp->board = b;
    lp->name = name;
    lp->role = role;
    lp->slot = board_loop_claim(b, name);
}

void probe_loop_closed(struct loop_probe *lp)
{
    board_loop_release(lp->board, lp->slot);
    lp->slot = NULL;
}

/* The first of a kind of trouble, and each that doubles the count, is
 * said; every one would flood the log exactly when the loop is behind. */
static bool worth_saying(uint64_t n)
{
    return (n & (n - 1)) == 0;
}

void probe_loop_wait_failed(struct loop_probe *lp, int err)
{
    uint64_t n = atomic_load_explicit(&lp->n.wait_errors, memory_order_relaxed) + 1;
    probe_loop_count(&lp->n.wait_errors, 1);
    if (!worth_saying(n))
        return;
    board_event(lp->board, EV_ERROR, "%s: epoll_wait failed: %s (%llu times)",
                lp->name, strerror(err), (unsigned long long)n);
    fprintf(stderr, "threadlab: %s: epoll_wait failed: %s (%llu times)\n",
            lp->name, strerror(err), (unsigned long long)n);
}

void probe_loop_starved_io(struct loop_probe *lp, uint64_t took_ns)
{
    uint64_t n = atomic_load_explicit(&lp->n.tasks_starving_io, memory_order_relaxed) + 1;
    probe_loop_count(&lp->n.tasks_starving_io, 1);
    if (lp->slot)
        atomic_store_explicit(&lp->slot->tasks_starving_io, n, memory_order_relaxed);
    if (!worth_saying(n))
        return;
    board_event(lp->board, EV_BLOCKED, "%s: tasks ran %.0f ms while I/O waited "
                "(ioRatio 100: no limit), %llu times", lp->name, (double)took_ns / 1e6,
                (unsigned long long)n);
    fprintf(stderr, "threadlab: %s: tasks ran %.0f ms while I/O waited (ioRatio 100 "
            "gives tasks no limit: a steady flood starves I/O), %llu times\n",
            lp->name, (double)took_ns / 1e6, (unsigned long long)n);
}

void probe_loop_iterated(struct loop_probe *lp, uint64_t queued, uint64_t timers)
{
    probe_loop_count(&lp->n.iterations, 1);
    atomic_store_explicit(&lp->n.timers_now, timers, memory_order_relaxed);
    struct board_loop *s = lp->slot;
    if (!s)
        return;
    const struct loop_counters *c = &lp->n;
    atomic_store_explicit(&s->channels, atomic_load(&c->channels), memory_order_relaxed);
    atomic_store_explicit(&s->task_queue_depth, queued, memory_order_relaxed);
    atomic_store_explicit(&s->timers, timers, memory_order_relaxed);
    atomic_store_explicit(&s->io_ns, atomic_load(&c->io_ns), memory_order_relaxed);
    atomic_store_explicit(&s->task_ns, atomic_load(&c->task_ns), memory_order_relaxed);
    atomic_store_explicit(&s->task_idle_ns, atomic_load(&c->task_idle_ns), memory_order_relaxed);
    atomic_store_explicit(&s->iterations, atomic_load(&c->iterations), memory_order_relaxed);
    atomic_store_explicit(&s->longest_task_ns, atomic_load(&c->longest_task_ns),
                          memory_order_relaxed);
}

void probe_loop_task_refused(struct loop_probe *lp, size_t max_tasks)
{
    uint64_t n = atomic_fetch_add(&lp->n.tasks_rejected, 1) + 1;
    if (!worth_saying(n))
        return;
    board_event(lp->board, EV_REJECT, "%s: task queue full (%zu tasks), %llu refused",
                lp->name, max_tasks, (unsigned long long)n);
    fprintf(stderr, "threadlab: %s: task queue full (%zu tasks), %llu tasks refused\n",
            lp->name, max_tasks, (unsigned long long)n);
}

/* ---- pools ------------------------------------------------------------------ */

void probe_pool_opened(struct pool_probe *pp, struct board *b, const char *queue_name,
                       int capacity, bool log_tasks)
{
    pp->board = b;
    pp->capacity = capacity;
    pp->log_tasks = log_tasks;
    pp->queue = board_queue_claim(b, queue_name, (uint64_t)capacity);
}

void probe_task_queued(struct pool_probe *pp, uint64_t tag, int depth, int size,
                       bool waits)
{
    pp->n.submitted++;
    if (pp->log_tasks && waits)
        board_event(pp->board, EV_TASK_QUEUED, "conn %llu waits: all %d threads "
                    "busy, %d queued", (unsigned long long)tag, size, depth);
}

void probe_caller_ran(struct pool_probe *pp, uint64_t tag)
{
    pp->n.caller_ran++;
    pp->n.submitted++;
    board_event(pp->board, EV_REJECT, "conn %llu: queue full (%d), the "
                "caller runs it (caller-runs)", (unsigned long long)tag, pp->capacity);
}

void probe_oldest_discarded(struct pool_probe *pp, uint64_t dropped_tag, uint64_t tag)
{
    pp->n.discarded++;
    board_event(pp->board, EV_REJECT, "conn %llu dropped: queue full (%d), "
                "oldest discarded for conn %llu", (unsigned long long)dropped_tag,
                pp->capacity, (unsigned long long)tag);
}

/* The reason an event gives for a resize, in words: what top and the
 * event log show after the thread's name (viz/reason.c translates each
 * wording, and the outer text around it, on its own). */
static void word_resize(char *why, size_t len, enum pool_resize rule,
                        uint64_t idle_since_ns, struct pool_shape now)
{
    switch (rule) {
    case POOL_UP_TO_MIN:
        snprintf(why, len, "pre-created up to min");
        break;
    case POOL_NO_IDLE_THREAD:
        snprintf(why, len, "no idle thread, %d queued", now.queued);
        break;
    case POOL_IDLE_TOO_LONG:
        snprintf(why, len, "idle %.1f s > %.1f s",
                 (double)(now_ns() - idle_since_ns) / 1e9, now.idle_ms / 1e3);
        break;
    case POOL_SHUTTING_DOWN:
        why[0] = '\0';
        break;
    }
}

void probe_grew(struct pool_probe *pp, const char *name, enum pool_resize why,
                struct pool_shape now)
{
    char words[64];
    pp->n.spawned++;
    word_resize(words, sizeof(words), why, 0, now);
    board_event(pp->board, EV_GROW, "%s: %s, size %d of max %d", name, words, now.size,
                now.max);
}

void probe_shrank(struct pool_probe *pp, const char *name, enum pool_resize why,
                  uint64_t idle_since_ns, struct pool_shape now)
{
    char words[64];
    pp->n.retired++;
    if (why == POOL_SHUTTING_DOWN)
        return;                        /* the pool's end: no event */
    word_resize(words, sizeof(words), why, idle_since_ns, now);
    board_event(pp->board, EV_SHRINK, "%s: %s, size %d, min %d", name, words, now.size,
                now.min);
}

void probe_spawn_failed(struct pool_probe *pp, int err, int queued, int retry_ms)
{
    pp->n.spawn_failed++;
    board_event(pp->board, EV_ERROR, "no task thread: %s; %d queued, trying "
                "again in %d ms", strerror(err), queued, retry_ms);
}

void probe_min_moved(struct pool_probe *pp, int from, int to, double average,
                     int window_ms)
{
    board_event(pp->board, to > from ? EV_GROW : EV_SHRINK,
                "min %d -> %d: average queue %.1f over the last %.1f s",
                from, to, average, window_ms / 1e3);
}

void probe_task_ran(struct pool_probe *pp, uint64_t tag, const char *name,
                    uint64_t queued_ns)
{
    if (pp->log_tasks)
        board_event(pp->board, EV_TASK_RUN, "conn %llu -> %s after %.3f s queued",
                    (unsigned long long)tag, name, (double)(now_ns() - queued_ns) / 1e9);
}

/* ---- virtual threads ---------------------------------------------------------- */

void probe_vthread_unwatched(struct board *b, const char *carrier, const char *vthread)
{
    board_event(b, EV_ERROR, "%s: epoll_ctl failed; closing %s", carrier, vthread);
}

void probe_handed_off(struct board *b, const char *carrier, struct board_loop *slot,
                      uint64_t stuck_ms, const char *spare)
{
    board_add(b, CTR_THREADS_SPAWNED, 1);
    board_event(b, EV_SPAWN, "%s blocked in a call for %llu ms: handoff to "
                "%s, which takes its run queue", carrier, (unsigned long long)stuck_ms,
                spare);
    if (slot)                           /* served again, by the spare */
        atomic_store_explicit(&slot->blocked_since_ns, 0, memory_order_relaxed);
}

void probe_spare_failed(struct board *b, const char *spare, const char *carrier)
{
    board_event(b, EV_ERROR, "%s: no thread for a spare; %s waits "
                "for its blocking call", spare, carrier);
}

void probe_spare_retired(struct board *b, const char *spare, const char *carrier)
{
    board_event(b, EV_EXIT, "%s: the blocking call on %s returned; "
                "the spare retired", spare, carrier);
}
