/* machine.c -- the queueing machine: cores, threads, run queues, and what
 * a switch costs. A scheduler (sched.h) decides where woken threads go.
 * See machine.h.
 */
#include "machine.h"
#include "machine_waits.h"
#include "switch_cost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The event id of the balancer (the cores' events have ids 0..ncores-1). */
#define BALANCE_ID(m) ((uint32_t)(m)->ncores)

int machine_init(struct machine *m, struct des_engine *eng, const struct profile *prof,
                 int ncores, const struct sched_ops *sched, uint32_t core_event_kind,
                 burst_done_fn done, void *ctx)
{
    memset(m, 0, sizeof(*m));
    m->eng = eng;
    m->prof = prof;
    m->sched = sched;
    m->core_event_kind = core_event_kind;
    m->done = done;
    m->ctx = ctx;
    m->ncores = ncores;
    m->idle_cores = ncores;
    m->waits_apart = VT_NONE;
    m->cores = calloc((size_t)ncores, sizeof(*m->cores));
    m->cap = 1024;
    m->threads = malloc(m->cap * sizeof(*m->threads));
    m->free_ids = malloc(m->cap * sizeof(*m->free_ids));
    if (!m->cores || !m->threads || !m->free_ids) {
        machine_free(m);
        return -1;
    }
    for (int c = 0; c < ncores; c++)
        m->cores[c].thread = VT_NONE;
    m->waker_at = UINT64_MAX;                 /* no waker yet */
    m->waker = VT_NONE;
    m->in_done = VT_NONE;
    if (sched->start)
        sched->start(m);
    return 0;
}

void machine_free(struct machine *m)
{
    for (int c = 0; m->cores && c < m->ncores; c++)
        runq_free(&m->cores[c].rq);
    free(m->cores);
    free(m->threads);
    free(m->free_ids);
    memset(m, 0, sizeof(*m));
}

uint32_t machine_spawn(struct machine *m, uint32_t owner)
{
    uint32_t t;
    if (m->nfree > 0) {
        t = m->free_ids[--m->nfree];
    } else {
        if (m->nthreads == m->cap) {
            uint32_t cap = m->cap * 2;
            struct vthread *th = realloc(m->threads, cap * sizeof(*th));
            if (!th)
                return VT_NONE;
            m->threads = th;
            uint32_t *ids = realloc(m->free_ids, cap * sizeof(*ids));
            if (!ids)
                return VT_NONE;
            m->free_ids = ids;
            m->cap = cap;
        }
        t = m->nthreads++;
    }
    m->threads[t] = (struct vthread){ .state = VT_BLOCKED, .core = -1, .last_core = -1,
                                      .owner = owner };
    if (++m->live > m->peak_live)
        m->peak_live = m->live;
    return t;
}

/* ---- a core's run queue: a ring of thread ids, first come first served ---- */

/* t joins the tail of queue q (or, at_head, its head): on_core is told. */
static void rq_push(struct machine *m, struct runq *q, uint32_t t, bool at_head)
{
    if (!(at_head ? runq_push_front(q, t) : runq_push(q, t))) {
        m->out_of_memory = true;           /* t is lost: the run must stop */
        return;
    }
    if (m->on_core)
        m->on_core(m->ctx, t, false);
}

void machine_rq_push(struct machine *m, int c, uint32_t t)
{
    rq_push(m, &m->cores[c].rq, t, false);
}

void machine_queue_on(struct machine *m, int c, uint32_t t)
{
    rq_push(m, &m->cores[c].rq, t, false);
    if (m->sched->queued)
        m->sched->queued(m, c);
}

void machine_arm_balance(struct machine *m, vtime_t delay_ns)
{
    if (des_schedule(m->eng, delay_ns, m->core_event_kind, BALANCE_ID(m), 0) < 0)
        m->out_of_memory = true;
}

/* ---- running -------------------------------------------------------------------- */

/* Core c's thread has run `ran` more (and core c's stretch restarts now). */
static void account_run(struct machine *m, int c, vtime_t ran)
{
    m->cores[c].busy_ns += ran;
    if (m->sched->ran)
        m->sched->ran(m, c, ran);
    m->cores[c].segment_start = m->eng->now;
}

/* Cores go idle (+) or busy (-). */
static void change_idle_cores(struct machine *m, int by)
{
    if (m->sched->idle_changing)
        m->sched->idle_changing(m);
    m->idle_cores += by;
}

/* The next event of core c: when its thread's burst or slice ends. The
 * thread starts running `delay` from now (an idle core waking up); until
 * then the core is taken but not busy. */
static void arm_core_after(struct machine *m, int c, vtime_t delay)
{
    struct vcore *core = &m->cores[c];
    struct vthread *th = &m->threads[core->thread];
    vtime_t start = m->eng->now + delay, run = th->burst_left;
    if (!th->burst_started) {            /* its wait for a core ends here */
        th->burst_start = start;
        th->burst_started = true;
    }
    if (m->prof->time_slice_ns > 0 && core->slice_end - start < run)
        run = core->slice_end > start ? core->slice_end - start : 0;
    core->segment_start = start;
    if (des_schedule(m->eng, delay + run, m->core_event_kind, (uint32_t)c, ++core->gen) < 0)
        m->out_of_memory = true;
}

static void charge_waker(struct machine *m);

/* Put t on core c (idle, or just taken from its thread). An idle core
 * woken by an interrupt starts it wakeup_ns later (latency, not CPU);
 * the switch is paid in CPU before its burst. waker_pays: the waker pays
 * its part of the interrupt (charge_waker), t the rest. */
void machine_dispatch(struct machine *m, int c, uint32_t t, enum arrival how, bool remote,
                      bool waker_pays)
{
    struct vcore *core = &m->cores[c];
    struct vthread *th = &m->threads[t];
    struct cost_shape shape = { m->prof->wakeup_sigma, m->prof->wakeup_p99,
                                m->prof->wakeup_p999 };
    double spread = m->costs ? rng_cost_factor(m->costs, shape) : 1;
    double cs = switch_cost(m, c, th, how, remote, waker_pays, spread);
    vtime_t now = m->eng->now;
    vtime_t delay = how == ARRIVE_IDLE ? wakeup_delay(m, c, spread) : 0;
    waits_note_wait(m, t, now + delay);
    if (how == ARRIVE_IDLE && m->sched->core_woken)
        m->sched->core_woken(m, c);
    if (th->last_core >= 0 && th->last_core != c)
        m->migrations++;
    th->last_core = c;
    core->thread = t;
    core->resched = false;
    th->state = VT_RUNNING;
    th->core = c;
    th->burst_left += (vtime_t)cs;
    m->context_switches++;
    core->slice_end = now + delay + (vtime_t)m->prof->time_slice_ns;
    core->on_core_since = now + delay;
    if (how != ARRIVE_PREEMPT)
        change_idle_cores(m, -1);
    if (m->on_core)
        m->on_core(m->ctx, t, true);
    arm_core_after(m, c, delay);
    if (waker_pays)
        charge_waker(m);
}

/* Core c lost its thread: the next thread of its own run queue takes it;
 * with none, the core goes idle, and the scheduler may give it a thread
 * waiting on another core. */
static void core_next(struct machine *m, int c)
{
    struct vcore *core = &m->cores[c];
    core->thread = VT_NONE;
    change_idle_cores(m, +1);
    if (core->rq.len > 0) {
        machine_dispatch(m, c, runq_pop(&core->rq), ARRIVE_QUEUED, false, false);
        return;
    }
    core->idle_since = m->eng->now;
    m->sched->idle(m, c);
}

/* The core of the thread waking t: the one whose burst ended at this same
 * instant (a write that delivers a line, an event its burst set off at
 * once). -1: no thread on a core (the network after a delay, a timer). */
static int waker_core(const struct machine *m)
{
    return m->waker_at == m->eng->now ? m->waker_core : -1;
}

/* The waker pays its part of a wakeup across cores (wakeup_ipi_ns: the
 * interrupt it sends from inside its write, a VM exit on this VM): on the
 * burst it has just begun, or, if it is between bursts (deciding what to
 * do next) or has blocked already, on its next burst. */
static void charge_waker(struct machine *m)
{
    uint32_t w = m->waker;
    double ns = switch_ipi_ns(m);
    if (w == VT_NONE || ns <= 0)
        return;
    struct vthread *wt = &m->threads[w];
    if (wt->state != VT_RUNNING || w == m->in_done) {
        wt->owed_ns += (vtime_t)ns;
        return;
    }
    struct vcore *core = &m->cores[wt->core];
    vtime_t now = m->eng->now;
    vtime_t ran = now > core->segment_start ? now - core->segment_start : 0;
    account_run(m, wt->core, ran);
    wt->burst_left = (ran >= wt->burst_left ? 0 : wt->burst_left - ran) + (vtime_t)ns;
    arm_core_after(m, wt->core, 0);
}

/* ---- preemption ------------------------------------------------------------------ */

/* Core c's thread stops now, mid-burst: what it ran is counted, and the
 * core's pending event goes stale. */
static void stop_running(struct machine *m, int c)
{
    struct vcore *core = &m->cores[c];
    struct vthread *th = &m->threads[core->thread];
    vtime_t now = m->eng->now;
    vtime_t ran = now > core->segment_start ? now - core->segment_start : 0;
    account_run(m, c, ran);
    th->burst_left = ran >= th->burst_left ? 0 : th->burst_left - ran;
    th->core = -1;
    core->gen++;
}

/* Core c's thread leaves the core, still runnable, for the tail of the
 * core's run queue (its slice is used up, or a thread it woke preempts
 * it), and the head of that queue takes the core. */
static void requeue_running(struct machine *m, int c)
{
    struct vcore *core = &m->cores[c];
    uint32_t t = core->thread, next = runq_pop(&core->rq);
    struct vthread *th = &m->threads[t];
    waits_note_run(m, c, true);
    th->state = VT_RUNNABLE;
    th->runnable_at = m->eng->now;
    th->core = -1;
    m->preemptions++;
    rq_push(m, &core->rq, t, false);
    core->thread = VT_NONE;
    change_idle_cores(m, +1);
    machine_dispatch(m, c, next, ARRIVE_QUEUED, false, false);
}

void machine_preempt(struct machine *m, int c, uint32_t t, int waker)
{
    uint32_t cur = m->cores[c].thread;
    m->wakeup_preemptions++;
    if (cur == m->in_done) {                /* on its way back from the write */
        rq_push(m, &m->cores[c].rq, t, true);
        m->cores[c].resched = true;
        return;
    }
    stop_running(m, c);
    waits_note_run(m, c, true);
    m->threads[cur].state = VT_RUNNABLE;
    m->threads[cur].runnable_at = m->eng->now;
    m->preemptions++;
    machine_queue_on(m, c, cur);
    machine_dispatch(m, c, t, ARRIVE_PREEMPT, waker != c, waker >= 0 && waker != c);
}

/* ---- the owner's calls ---------------------------------------------------------- */

void machine_run(struct machine *m, uint32_t t, vtime_t cpu_ns, uint32_t cont)
{
    struct vthread *th = &m->threads[t];
    th->cont = cont;
    th->burst_started = false;
    cpu_ns += th->owed_ns;                  /* a wakeup's interrupt it sent */
    th->owed_ns = 0;
    th->burst_left = cpu_ns;
    if (th->state == VT_RUNNING) {          /* from its own burst_done */
        int c = th->core;
        struct vcore *core = &m->cores[c];
        if (core->resched && core->rq.len > 0) {   /* a thread it woke preempts it */
            requeue_running(m, c);
            return;
        }
        core->resched = false;
        if (m->prof->time_slice_ns > 0 && m->eng->now >= core->slice_end) {
            if (core->rq.len > 0) {         /* its slice is used up: next! */
                requeue_running(m, c);
                return;
            }
            core->slice_end = m->eng->now + (vtime_t)m->prof->time_slice_ns;
        }
        arm_core_after(m, c, 0);
        return;
    }
    /* Blocked: woken by an event. The scheduler places it. */
    th->state = VT_RUNNABLE;
    th->runnable_at = m->eng->now;
    m->sched->wake(m, t, waker_core(m));
}

/* t stops running (blocks or ends); its core takes the next thread. */
static void leave_core(struct machine *m, uint32_t t, enum vthread_state state)
{
    struct vthread *th = &m->threads[t];
    int c = th->core;
    if (c >= 0) {
        waits_note_run(m, c, false);
        if (m->sched->leave)
            m->sched->leave(m, c, t);
    }
    th->state = (uint8_t)state;
    th->core = -1;
    if (c >= 0)
        core_next(m, c);
}

void machine_block(struct machine *m, uint32_t t)
{
    leave_core(m, t, VT_BLOCKED);
}

void machine_exit(struct machine *m, uint32_t t)
{
    m->free_ids[m->nfree++] = t;
    m->live--;
    leave_core(m, t, VT_FREE);
}

void machine_core_event(struct machine *m, uint32_t c, uint32_t gen)
{
    if (c == BALANCE_ID(m)) {               /* only a scheduler with one arms it */
        m->sched->balance(m);
        return;
    }
    struct vcore *core = &m->cores[c];
    if (gen != core->gen || core->thread == VT_NONE)
        return;                                  /* stale */
    vtime_t now = m->eng->now, ran = now - core->segment_start;
    uint32_t t = core->thread;
    struct vthread *th = &m->threads[t];
    account_run(m, (int)c, ran);
    th->burst_left = ran >= th->burst_left ? 0 : th->burst_left - ran;
    if (th->burst_left == 0) {
        m->waker_core = (int)c;                  /* what it wakes, it wakes from here */
        m->waker = t;
        m->waker_at = now;
        m->in_done = t;
        m->done(m->ctx, t);                      /* run on, block or end */
        m->in_done = VT_NONE;
        return;
    }
    /* The slice ended mid-burst. */
    if (core->rq.len > 0) {
        requeue_running(m, (int)c);
    } else {
        core->slice_end = now + (vtime_t)m->prof->time_slice_ns;
        arm_core_after(m, (int)c, 0);
    }
}

vtime_t machine_busy_ns(const struct machine *m)
{
    vtime_t sum = 0;
    for (int c = 0; c < m->ncores; c++)
        sum += m->cores[c].busy_ns;
    return sum;
}
