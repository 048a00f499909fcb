/* monitor.c -- the monitor: a carrier stuck in a blocking call gets a
 * spare thread.
 *
 * The watchdog of the course's thread pool, born again: a thread that
 * watches the work waiting and adds threads. Go's sysmon does this for a
 * goroutine stuck in a system call (it hands the P to another M), and
 * Loom compensates a virtual thread pinned in a blocking call with an
 * extra carrier in its ForkJoinPool.
 *
 * Every quarter of --handoff-ms the monitor looks at each carrier: a
 * token given up by a blocking call, taken by nobody since, for
 * --handoff-ms, means every vthread of that carrier waits. The monitor
 * starts a spare runner holding that token; it runs the carrier's loop
 * until the call returns and its thread asks for the token back, then
 * gives it back and ends. The monitor joins the spares that ended.
 */
#include "carrier.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/clock.h"

static void *spare_main(void *arg)
{
    struct runner *r = arg;
    struct carrier *c = r->carrier;
    (void)runner__begin(r, ROLE_CARRIER);   /* without the report, as a carrier */
    carrier__run(c, r);                 /* holds the token from the start */
    runner__end(r);
    monitor__retire(c->rt, r);
    return NULL;
}

void monitor__retire(struct vt_runtime *rt, struct runner *spare)
{
    pthread_mutex_lock(&rt->monitor_lock);
    spare->next_retired = rt->retired;
    rt->retired = spare;
    pthread_cond_signal(&rt->monitor_wake);
    pthread_mutex_unlock(&rt->monitor_lock);
}

static void join_retired(struct vt_runtime *rt)
{
    pthread_mutex_lock(&rt->monitor_lock);
    struct runner *r = rt->retired;
    rt->retired = NULL;
    pthread_mutex_unlock(&rt->monitor_lock);
    while (r) {
        struct runner *next = r->next_retired;
        pthread_join(r->thread, NULL);
        probe_spare_retired(rt->opts.board, r->name, r->carrier->name);
        free(r);
        pthread_mutex_lock(&rt->monitor_lock);
        rt->spares_running--;
        pthread_cond_broadcast(&rt->monitor_wake);
        pthread_mutex_unlock(&rt->monitor_lock);
        r = next;
    }
}

/* Count a spare as started (before it runs: what it serves may be seen
 * at once), or, with -1, as never started. Returns the count so far. */
static uint64_t count_spare(struct vt_runtime *rt, int n)
{
    pthread_mutex_lock(&rt->monitor_lock);
    rt->spares_running += n;
    rt->handoffs += (uint64_t)n;
    uint64_t handoffs = rt->handoffs;
    pthread_mutex_unlock(&rt->monitor_lock);
    return handoffs;
}

/* Start a spare holding c's token. Under c->lock, the token free. The
 * handoff is counted and told before the spare runs. */
static void hand_off(struct vt_runtime *rt, struct carrier *c, uint64_t stuck_ms)
{
    struct runner *r = calloc(1, sizeof(*r));
    if (!r)
        return;                         /* the next look tries again */
    r->carrier = c;
    r->spare = true;
    snprintf(r->name, sizeof(r->name), "spare-%llu",
             (unsigned long long)count_spare(rt, 1));
    probe_handed_off(rt->opts.board, c->name, c->slot, stuck_ms, r->name);
    c->owner = r;
    if (pthread_create(&r->thread, NULL, spare_main, r) != 0) {
        c->owner = NULL;
        count_spare(rt, -1);
        probe_spare_failed(rt->opts.board, r->name, c->name);
        free(r);
    }
}

/* Is c's token left by a blocking call, and untaken for --handoff-ms? */
static void look_at(struct vt_runtime *rt, struct carrier *c, uint64_t now)
{
    uint64_t handoff_ns = (uint64_t)rt->opts.handoff_ms * 1000000u;
    pthread_mutex_lock(&c->lock);
    if (!c->owner && c->blocked > 0 && c->token_waiters == 0 &&
        now - c->released_ns >= handoff_ns)
        hand_off(rt, c, (now - c->released_ns) / 1000000u);
    pthread_mutex_unlock(&c->lock);
}

static void *monitor_main(void *arg)
{
    struct vt_runtime *rt = arg;
    probe_thread_began(rt->opts.board, &rt->monitor_on_board, ROLE_MONITOR, "monitor");
    uint64_t tick_ms = rt->opts.handoff_ms / 4 > 0 ? (uint64_t)rt->opts.handoff_ms / 4 : 1;
    pthread_mutex_lock(&rt->monitor_lock);
    while (!rt->monitor_exit || rt->spares_running > 0) {
        struct timespec at = timespec_at_ns(deadline_in_ms(tick_ms));
        probe_waiting(rt->opts.board, &rt->monitor_on_board);
        pthread_cond_timedwait(&rt->monitor_wake, &rt->monitor_lock, &at);
        probe_woke(rt->opts.board, &rt->monitor_on_board);
        pthread_mutex_unlock(&rt->monitor_lock);
        if (!rt->opts.pin)
            for (int i = 0; i < rt->ncarriers; i++)
                look_at(rt, &rt->carriers[i], now_ns());
        join_retired(rt);
        pthread_mutex_lock(&rt->monitor_lock);
    }
    pthread_mutex_unlock(&rt->monitor_lock);
    probe_thread_ended(rt->opts.board, &rt->monitor_on_board);
    return NULL;
}

int monitor__start(struct vt_runtime *rt)
{
    pthread_mutex_init(&rt->monitor_lock, NULL);
    int rc = clock_cond_init(&rt->monitor_wake);
    if (rc < 0)
        return rc;
    rc = pthread_create(&rt->monitor, NULL, monitor_main, rt);
    if (rc != 0) {
        pthread_cond_destroy(&rt->monitor_wake);
        return -rc;
    }
    pthread_setname_np(rt->monitor, "monitor");
    rt->monitor_started = true;
    return 0;
}

void monitor__stop(struct vt_runtime *rt)
{
    if (!rt->monitor_started)
        return;
    pthread_mutex_lock(&rt->monitor_lock);
    rt->monitor_exit = true;
    pthread_cond_signal(&rt->monitor_wake);
    pthread_mutex_unlock(&rt->monitor_lock);
    pthread_join(rt->monitor, NULL);
    join_retired(rt);
    pthread_cond_destroy(&rt->monitor_wake);
    pthread_mutex_destroy(&rt->monitor_lock);
}
