/* sim_carrier.c -- model 5's carriers on the simulated machine: a
 * carrier's loop, a blocking call that pins it or gives it up, and the
 * monitor that hands a carrier given up too long to a spare thread, as
 * models/vthread/carrier.c and monitor.c do.
 *
 *   a carrier's loop (carrier__run), run by whoever holds it:
 *     someone back from a call wants it  -> hand it over
 *     vthreads left of this turn          -> switch into the next one
 *     mail, ready fds or yielded vthreads -> epoll_wait (it returns at once)
 *     nothing                             -> wait in epoll_wait
 *   !sleep with --pin: the runner blocks holding its carrier, and every
 *     vthread of the carrier waits (Java's pinning).
 *   !sleep without it: the runner blocks and gives the carrier up. The
 *     monitor looks every quarter of --handoff-ms; a carrier given up
 *     for --handoff-ms gets a spare (pthread_create, paid by the monitor)
 *     that runs its loop. The call over, its runner wants the carrier
 *     back: the spare finishes the vthread step it is in, hands the
 *     carrier over and ends.
 *
 * Only the monitor's looks that find a carrier to hand off are
 * simulated: the first tick (a multiple of --handoff-ms / 4 from the
 * start) at or after a release plus --handoff-ms, when a looking monitor
 * first sees it. The looks that find nothing (a timer wakeup every 5 ms
 * at the default, busy or idle) are left out.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim/sim_internal.h"

const char *sim__carrier_name(int k, char name[static SIM_LOOP_NAME_LEN])
{
    snprintf(name, SIM_LOOP_NAME_LEN, "carrier-%d", k);
    return name;
}

static struct vcarrier *carrier_of(struct sim *s, const struct vrunner *r)
{
    return &s->carriers[r->carrier];
}

/* ---- the loop ------------------------------------------------------------------- */

/* Its owner waits in epoll_wait: a ready fd, mail or a waiter wakes it. */
void sim__carrier_wake(struct sim *s, int k)
{
    struct vcarrier *cr = &s->carriers[k];
    if (!cr->in_epoll)
        return;                  /* running (it polls before it waits), or held by nobody */
    cr->in_epoll = false;
    if (s->viz)
        simviz_loop_waiting(s->viz, k, false);
    sim__runner_run(s, &s->runners[cr->owner], sim__syscall_ns(s, s->o->prof.epoll_wait_ns),
                    VS_POLL);
}

/* epoll_wait has returned: the new vthreads (the mailbox) and those whose
 * fd is ready join the run queue; this turn runs those there now. */
void sim__carrier_poll_done(struct sim *s, struct vrunner *r)
{
    struct vcarrier *cr = carrier_of(s, r);
    while (cr->mail.len > 0) {
        uint32_t c = sim__cq_pop(s, &cr->mail);
        s->conns[c].vt = VTS_RUNNABLE;
        sim__cq_push(s, &cr->runq, c);
    }
    while (cr->ready.len > 0) {
        uint32_t c = sim__cq_pop(s, &cr->ready);
        s->conns[c].vt = VTS_RUNNABLE;
        sim__cq_push(s, &cr->runq, c);
    }
    cr->round_left = cr->runq.len;
    sim__carrier_next(s, r);
}

/* Switch into the run queue's next vthread: into its read(), or (after a
 * !task's yield) into the task's CPU. */
static void run_next(struct sim *s, struct vrunner *r)
{
    struct vcarrier *cr = carrier_of(s, r);
    uint32_t c = sim__cq_pop(s, &cr->runq);
    struct vconn *v = &s->conns[c];
    bool yielded = v->vt == VTS_YIELDED;
    v->vt = VTS_RUNNING;
    r->cur = c;
    if (s->viz)
        simviz_thread_conn(s->viz, r->thread, c + 1);
    if (!yielded) {
        sim__vthread_read(s, r, true);
        return;
    }
    s->r->vt_switches++;
    vtime_t task = sim__line_task(s, c, v->taken - 1);
    sim__runner_run(s, r, (vtime_t)s->o->prof.vt_switch_ns + task, VS_LINE);
}

static void hand_over(struct sim *s, struct vrunner *r);

void sim__carrier_next(struct sim *s, struct vrunner *r)
{
    struct vcarrier *cr = carrier_of(s, r);
    if (cr->waiters != VT_NONE) {
        hand_over(s, r);
    } else if (cr->round_left > 0 && cr->runq.len > 0) {
        cr->round_left--;
        run_next(s, r);
    } else if (cr->mail.len + cr->ready.len + cr->runq.len > 0) {
        sim__runner_run(s, r, sim__syscall_ns(s, s->o->prof.epoll_wait_ns), VS_POLL);
    } else {
        cr->in_epoll = true;                        /* nothing to do: wait */
        cr->round_left = 0;
        if (s->viz)
            simviz_loop_waiting(s->viz, (int)r->carrier, true);
        sim__block(s, r->thread, VIZ_WAITING);
    }
}

/* ---- holding the carrier: the token of carrier.c ------------------------------------ */

static void waiter_push(struct sim *s, struct vcarrier *cr, uint32_t w)
{
    s->runners[w].next_waiter = VT_NONE;
    if (cr->waiters == VT_NONE)
        cr->waiters = w;
    else
        s->runners[cr->waiters_tail].next_waiter = w;
    cr->waiters_tail = w;
}

static uint32_t waiter_pop(struct sim *s, struct vcarrier *cr)
{
    uint32_t w = cr->waiters;
    cr->waiters = s->runners[w].next_waiter;
    return w;
}

/* w holds the carrier again: back in its vthread after the call (whose
 * reply is queued), or, a carrier's own thread that let a spare finish,
 * back in the loop (its epoll_wait). */
static void resume(struct sim *s, struct vrunner *w)
{
    if (s->viz)
        simviz_loop_blocked(s->viz, (int)w->carrier, false);
    if (w->cur == VT_NONE) {
        sim__runner_run(s, w, sim__syscall_ns(s, s->o->prof.epoll_wait_ns), VS_POLL);
        return;
    }
    s->conns[w->cur].vt = VTS_RUNNING;
    w->queued++;
    sim__vthread_serve(s, w);
}

/* A spare nobody needs any more ends (the monitor joins it). */
static void retire(struct sim *s, struct vrunner *r)
{
    if (s->viz) {
        char name[SIM_LOOP_NAME_LEN];
        simviz_event(s->viz, VIZ_EV_EXIT, "spare-%u: the blocking call on %s returned; the "
                     "spare retired", r->number, sim__carrier_name((int)r->carrier, name));
    }
    sim__thread_exit(s, r->thread);
    r->thread = VT_NONE;                            /* a free slot */
    s->spares_live--;
}

/* r holds the carrier between two vthreads, and a runner back from a call
 * wants it: a spare gives it up and ends; the carrier's own thread gives
 * it up and queues for it (carrier_yield_token). */
static void hand_over(struct sim *s, struct vrunner *r)
{
    struct vcarrier *cr = carrier_of(s, r);
    uint32_t w = waiter_pop(s, cr);
    cr->owner = w;
    if (r->spare) {
        retire(s, r);
    } else {
        waiter_push(s, cr, (uint32_t)(r - s->runners));
        sim__block(s, r->thread, VIZ_WAITING);
    }
    resume(s, &s->runners[w]);
}

/* ---- a blocking call ------------------------------------------------------------- */

/* The monitor's ticks: every quarter of --handoff-ms (1 ms at least). */
static double tick_ns(const struct sim *s)
{
    int tick_ms = s->o->handoff_ms / 4 > 0 ? s->o->handoff_ms / 4 : 1;
    return tick_ms * 1e6;
}

/* The first look at carrier k that can find it given up long enough. */
static void schedule_look(struct sim *s, int k)
{
    double due = (double)s->carriers[k].released_at + s->o->handoff_ms * 1e6;
    double at = ceil(due / tick_ns(s)) * tick_ns(s);
    sim__at(s, at - (double)s->eng.now, EV_LOOK, (uint32_t)k, 0);
}

static void say_call(struct sim *s, const struct vrunner *r, vtime_t sleep_ns)
{
    char name[SIM_LOOP_NAME_LEN];
    const struct vcarrier *cr = &s->carriers[r->carrier];
    simviz_loop_blocked(s->viz, (int)r->carrier, true);
    simviz_event(s->viz, VIZ_EV_BLOCKED, s->o->pin
                 ? "%s: vt-%u blocks %.0f ms in a call, pinned: its %llu vthreads wait"
                 : "%s: vt-%u blocks %.0f ms in a call: the carrier is given up",
                 sim__carrier_name((int)r->carrier, name), r->cur + 1, (double)sleep_ns / 1e6,
                 (unsigned long long)cr->vthreads);
}

/* r's vthread has decoded a !sleep: the call blocks r's thread. */
void sim__vthread_call_begin(struct sim *s, struct vrunner *r)
{
    struct vcarrier *cr = carrier_of(s, r);
    struct vconn *v = &s->conns[r->cur];
    v->vt = VTS_CALL;
    vtime_t sleep = sim__line_sleep(s, r->cur, v->taken - 1);
    if (s->viz)
        say_call(s, r, sleep);
    sim__block(s, r->thread, VIZ_SLEEPING);
    sim__at(s, (double)sleep, EV_WAKE, r->thread, C_VT_CALLED);
    if (s->o->pin)
        return;                                     /* the carrier waits with it */
    cr->owner = VT_NONE;                            /* vt_blocking_begin */
    cr->blocked++;
    cr->released_at = s->eng.now;
    if (cr->waiters != VT_NONE) {                   /* one back from a call takes it */
        cr->owner = waiter_pop(s, cr);
        resume(s, &s->runners[cr->owner]);
        return;
    }
    schedule_look(s, (int)r->carrier);
}

/* Thread t's call is over: with the carrier (pinned, or nobody took it)
 * its vthread goes on; else it waits for the carrier, waking the holder
 * if it waits in epoll_wait (vt_blocking_end). */
void sim__vthread_call_end(struct sim *s, uint32_t t)
{
    uint32_t i = s->m.threads[t].owner;
    struct vrunner *r = &s->runners[i];
    struct vcarrier *cr = carrier_of(s, r);
    if (!s->o->pin) {
        cr->blocked--;
        if (cr->owner != VT_NONE) {
            waiter_push(s, cr, i);
            if (s->viz)
                simviz_state(s->viz, t, VIZ_WAITING);
            sim__carrier_wake(s, (int)r->carrier);
            return;
        }
        cr->owner = i;
    }
    resume(s, r);
}

/* ---- the monitor -------------------------------------------------------------------- */

/* A runner slot for carrier k, its thread made (blocked): the carriers'
 * own first (slot k), then spares in the free slots. VT_NONE when out
 * of memory. */
static uint32_t new_runner(struct sim *s, int k, bool spare, uint32_t number)
{
    uint32_t i = 0;
    while (i < s->nrunners && s->runners[i].thread != VT_NONE)
        i++;
    if (i == s->runners_cap) {
        struct vrunner *more = realloc(s->runners, 2 * s->runners_cap * sizeof(*more));
        if (!more) {
            s->out_of_memory = true;
            return VT_NONE;
        }
        s->runners = more;
        s->runners_cap *= 2;
    }
    char name[SIM_LOOP_NAME_LEN];
    if (spare)
        snprintf(name, sizeof(name), "spare-%u", number);
    else
        sim__carrier_name(k, name);
    uint32_t t = sim__spawn(s, i, VIZ_CARRIER, name, 0);
    if (t == VT_NONE)
        return VT_NONE;
    if (i == s->nrunners)
        s->nrunners++;
    s->runners[i] = (struct vrunner){ .thread = t, .carrier = (uint32_t)k, .spare = spare,
                                      .number = number, .cur = VT_NONE,
                                      .wait_line = VT_NONE, .next_waiter = VT_NONE };
    return i;
}

/* The monitor makes the next spare's thread: pthread_create, its CPU. */
static void monitor_create(struct sim *s)
{
    s->monitor_busy = true;
    sim__run(s, s->monitor, (vtime_t)s->o->prof.thread_create_ns, C_VT_MONITOR);
}

/* The monitor's look at carrier k (look_at, monitor.c): given up by a
 * blocking call, taken by nobody, for --handoff-ms? Then a spare holds
 * it from now, and runs once the monitor has made its thread. */
void sim__monitor_look(struct sim *s, int k)
{
    struct vcarrier *cr = &s->carriers[k];
    vtime_t stuck = s->eng.now - cr->released_at;
    if (cr->owner != VT_NONE || cr->blocked == 0 || cr->waiters != VT_NONE ||
        (double)stuck < s->o->handoff_ms * 1e6)
        return;                  /* taken back, or given up since: that has its own look */
    char name[SIM_LOOP_NAME_LEN];
    if (!sim__can_spawn(s)) {                       /* the next look tries again */
        if (s->viz)
            simviz_event(s->viz, VIZ_EV_REJECT, "no thread for a spare (--max-threads); "
                         "%s waits for its blocking call", sim__carrier_name(k, name));
        sim__at(s, tick_ns(s), EV_LOOK, (uint32_t)k, 0);
        return;
    }
    uint32_t w = new_runner(s, k, true, (uint32_t)s->r->handoffs + 1);
    if (w == VT_NONE)
        return;
    cr->owner = w;
    s->r->handoffs++;
    if (++s->spares_live > s->r->peak_spares)
        s->r->peak_spares = s->spares_live;
    if (s->viz) {
        simviz_loop_blocked(s->viz, k, false);
        simviz_event(s->viz, VIZ_EV_SPAWN, "%s blocked in a call for %.0f ms: handoff to "
                     "spare-%u, which takes its run queue", sim__carrier_name(k, name),
                     (double)stuck / 1e6, s->runners[w].number);
    }
    s->spares_due[(s->due_head + s->due_len++) % (uint32_t)s->ncarriers] = w;
    if (!s->monitor_busy)
        monitor_create(s);
}

/* A spare's thread is made: it starts in its carrier's loop (a poll). */
void sim__monitor_burst_done(struct sim *s)
{
    uint32_t w = s->spares_due[s->due_head];
    s->due_head = (s->due_head + 1) % (uint32_t)s->ncarriers;
    s->due_len--;
    sim__runner_run(s, &s->runners[w], sim__syscall_ns(s, s->o->prof.epoll_wait_ns), VS_POLL);
    if (s->due_len > 0) {
        monitor_create(s);
    } else {
        s->monitor_busy = false;
        sim__block(s, s->monitor, VIZ_WAITING);
    }
}

/* ---- set up ---------------------------------------------------------------------------- */

/* The carriers (their threads' ids in carrier order, each a loop on the
 * board), then the monitor. */
int sim__carriers_setup(struct sim *s)
{
    s->ncarriers = s->o->carriers > 0 ? s->o->carriers : s->o->cores;
    s->runners_cap = (uint32_t)s->ncarriers + 8;
    s->carriers = calloc((size_t)s->ncarriers, sizeof(*s->carriers));
    s->runners = malloc(s->runners_cap * sizeof(*s->runners));
    s->spares_due = malloc((size_t)s->ncarriers * sizeof(*s->spares_due));
    if (!s->carriers || !s->runners || !s->spares_due)
        return -1;
    for (int k = 0; k < s->ncarriers; k++) {
        struct vcarrier *cr = &s->carriers[k];
        cr->owner = new_runner(s, k, false, 0);
        if (cr->owner == VT_NONE)
            return -1;
        cr->in_epoll = true;
        cr->waiters = cr->waiters_tail = VT_NONE;
        if (s->viz) {
            char name[SIM_LOOP_NAME_LEN];
            simviz_loop(s->viz, sim__carrier_name(k, name));
            simviz_loop_waiting(s->viz, k, true);
        }
    }
    s->monitor = sim__spawn(s, VT_NONE, VIZ_MONITOR, "monitor", 0);
    return s->monitor == VT_NONE ? -1 : 0;
}
