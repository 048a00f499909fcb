/* machine.c -- cores, threads, the scheduler. See machine.h. */
#include "machine.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int machine_init(struct machine *m, struct des_engine *eng, const struct profile *prof,
                 int ncores, uint32_t core_event_kind, burst_done_fn done, void *ctx)
{
    memset(m, 0, sizeof(*m));
    m->eng = eng;
    m->prof = prof;
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
    m->rq_cap = 1024;
    m->runq = malloc(m->rq_cap * sizeof(*m->runq));
    if (!m->cores || !m->threads || !m->free_ids || !m->runq) {
        machine_free(m);
        return -1;
    }
    for (int c = 0; c < ncores; c++)
        m->cores[c].thread = VT_NONE;
    m->waker_at = UINT64_MAX;                 /* no waker yet */
    m->in_done = VT_NONE;
    return 0;
}

void machine_free(struct machine *m)
{
    free(m->cores);
    free(m->threads);
    free(m->free_ids);
    free(m->runq);
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

static void rq_push(struct machine *m, uint32_t t)
{
    if (m->rq_len == m->rq_cap) {
        uint32_t cap = m->rq_cap * 2;
        uint32_t *q = malloc(cap * sizeof(*q));
        if (!q)
            abort();                       /* the run queue cannot drop threads */
        for (uint32_t i = 0; i < m->rq_len; i++)
            q[i] = m->runq[(m->rq_head + i) % m->rq_cap];
        free(m->runq);
        m->runq = q;
        m->rq_head = 0;
        m->rq_cap = cap;
    }
    m->runq[(m->rq_head + m->rq_len++) % m->rq_cap] = t;
    if (m->on_core)
        m->on_core(m->ctx, t, false);
}

/* t at the head of the run queue: the next one a core takes. */
static void rq_push_front(struct machine *m, uint32_t t)
{
    rq_push(m, t);                             /* makes room, tells on_core */
    m->rq_len--;                               /* ... then move it to the head */
    m->rq_head = (m->rq_head + m->rq_cap - 1) % m->rq_cap;
    m->runq[m->rq_head] = t;
    m->rq_len++;
}

static uint32_t rq_pop(struct machine *m)
{
    uint32_t t = m->runq[m->rq_head];
    m->rq_head = (m->rq_head + 1) % m->rq_cap;
    m->rq_len--;
    return t;
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
    des_schedule(m->eng, delay + run, m->core_event_kind, (uint32_t)c, ++core->gen);
}

static void arm_core(struct machine *m, int c)
{
    arm_core_after(m, c, 0);
}

/* How a thread comes onto a core, which decides what the switch costs. */
enum arrival {
    ARRIVE_QUEUED,               /* from the run queue, onto a core whose
                                    thread just left: a switch */
    ARRIVE_IDLE,                 /* woken onto an idle core: an interrupt
                                    wakes the core (from the waker's core,
                                    or its own timer's) */
    ARRIVE_PREEMPT,              /* woken, it takes a busy core from the
                                    thread running there (wakeup preemption) */
};

/* The CPU a thread pays to come onto core c, before its burst:
 * - context_switch_ns (+ context_switch_log2_ns per doubling of the run
 *   queue): one thread's state for another's;
 * - wakeup_cpu_ns instead when an idle core is woken (the interrupt and
 *   the core's way out of idle, as calibrate's ping-pong between two
 *   threads measures them), and on top of the switch when a
 *   wakeup preempts the thread of another core (its reschedule
 *   interrupt, taken to cost the same: not measured apart);
 * - cross_core_ns more when the thread ran on another core last;
 * all of it times one draw of wakeup_sigma (calibrate measures the
 * switch and the wakeup together, a pass at a time). */
static double switch_cost(const struct machine *m, int c, const struct vthread *th,
                          enum arrival how, bool remote, double spread)
{
    const struct profile *p = m->prof;
    double cs = p->context_switch_ns + p->context_switch_log2_ns * log2(1.0 + m->rq_len);
    if (how == ARRIVE_IDLE)
        cs = p->wakeup_cpu_ns;
    else if (how == ARRIVE_PREEMPT && remote)
        cs += p->wakeup_cpu_ns;
    if (th->last_core >= 0 && th->last_core != c)
        cs += p->cross_core_ns;
    return cs * spread;
}

/* sim --waits: which of the two kinds thread t's figures go to. */
static int waits_kind(const struct machine *m, uint32_t t)
{
    return t == m->waits_apart;
}

/* Core c's thread leaves it: the stretch it ran there, and whether it
 * was preempted. */
static void note_off_core(struct machine *m, int c, bool preempted)
{
    if (!m->waits)
        return;
    int k = waits_kind(m, m->cores[c].thread);
    vtime_t now = m->eng->now, on = m->cores[c].on_core_since;
    hist_record(&m->waits->run_ns[k], now > on ? now - on : 0);
    if (preempted)
        m->waits->preempted[k]++;
    else
        m->waits->blocked[k]++;
}

/* Put t on core c (idle, or just taken from its thread). An idle core
 * woken by an interrupt starts it wakeup_ns later (latency, not CPU);
 * the switch is paid in CPU before its burst. */
static void dispatch_as(struct machine *m, int c, uint32_t t, enum arrival how, bool remote)
{
    struct vcore *core = &m->cores[c];
    struct vthread *th = &m->threads[t];
    struct cost_shape shape = { m->prof->wakeup_sigma, m->prof->wakeup_p99,
                                m->prof->wakeup_p999 };
    double spread = m->costs ? rng_cost_factor(m->costs, shape) : 1;
    double cs = switch_cost(m, c, th, how, remote, spread);
    vtime_t delay = how == ARRIVE_IDLE ? (vtime_t)(m->prof->wakeup_ns * spread) : 0;
    if (m->waits)
        hist_record(&m->waits->wait_ns[waits_kind(m, t)],
                    m->eng->now + delay - th->runnable_at);
    th->last_core = c;
    core->thread = t;
    th->state = VT_RUNNING;
    th->core = c;
    th->burst_left += (vtime_t)cs;
    m->context_switches++;
    core->slice_end = m->eng->now + delay + (vtime_t)m->prof->time_slice_ns;
    core->on_core_since = m->eng->now + delay;
    if (how != ARRIVE_PREEMPT)
        m->idle_cores--;
    if (m->on_core)
        m->on_core(m->ctx, t, true);
    arm_core_after(m, c, delay);
}

static void dispatch(struct machine *m, int c, uint32_t t)
{
    dispatch_as(m, c, t, ARRIVE_QUEUED, false);
}

/* Core c lost its thread: take the next runnable one, or go idle. */
static void core_next(struct machine *m, int c)
{
    m->cores[c].thread = VT_NONE;
    m->idle_cores++;
    if (m->rq_len > 0)
        dispatch(m, c, rq_pop(m));
}

/* Where a woken thread goes when a core is idle: the core it ran on last
 * if that one is idle (its cache is there: Linux's select_idle_sibling
 * tries the previous CPU first), else the lowest idle core. Not the
 * waker's core: its thread is still on it, in the write() that wakes t
 * (the simulation has it block or run on only after its burst, at the
 * same instant). -1: none. */
static int find_idle_core(const struct machine *m, const struct vthread *th, int waker)
{
    if (th->last_core >= 0 && th->last_core != waker &&
        m->cores[th->last_core].thread == VT_NONE)
        return th->last_core;
    for (int c = 0; c < m->ncores; c++)
        if (c != waker && m->cores[c].thread == VT_NONE)
            return c;
    return -1;
}

/* The core of the thread waking t: the one whose burst ended at this same
 * instant (a write that delivers a line, an event its burst set off at
 * once). -1: no thread on a core (the network after a delay, a timer). */
static int waker_core(const struct machine *m)
{
    return m->waker_at == m->eng->now ? m->waker_core : -1;
}

/* t's vruntime, with what it has run of its current stretch so far. */
static vtime_t vruntime_now(const struct machine *m, uint32_t t)
{
    const struct vthread *th = &m->threads[t];
    vtime_t now = m->eng->now;
    if (th->state != VT_RUNNING || now <= m->cores[th->core].segment_start)
        return th->vruntime_ns;
    return th->vruntime_ns + (now - m->cores[th->core].segment_start);
}

/* CFS's min_vruntime: it never goes back, and follows the least vruntime
 * of the threads on cores and at the head of the run queue. */
static void update_min_vruntime(struct machine *m)
{
    vtime_t least = UINT64_MAX;
    for (int c = 0; c < m->ncores; c++) {
        uint32_t t = m->cores[c].thread;
        if (t != VT_NONE && vruntime_now(m, t) < least)
            least = vruntime_now(m, t);
    }
    if (m->rq_len > 0 && m->threads[m->runq[m->rq_head]].vruntime_ns < least)
        least = m->threads[m->runq[m->rq_head]].vruntime_ns;
    if (least != UINT64_MAX && least > m->min_vruntime)
        m->min_vruntime = least;
}

/* Core c's thread stops now, mid-burst: what it ran is counted, and the
 * core's pending event goes stale. */
static void stop_running(struct machine *m, int c)
{
    struct vcore *core = &m->cores[c];
    struct vthread *th = &m->threads[core->thread];
    vtime_t now = m->eng->now;
    vtime_t ran = now > core->segment_start ? now - core->segment_start : 0;
    core->busy_ns += ran;
    th->vruntime_ns += ran;
    th->burst_left = ran >= th->burst_left ? 0 : th->burst_left - ran;
    th->core = -1;
    core->gen++;
}

/* The core a woken thread t would preempt: Linux picks one of two, the
 * core t ran on last or its waker's (wake_affine), and checks the thread
 * running there; of the two, the one whose thread is further ahead (by
 * vruntime). Not the thread whose burst_done is running (it decides for
 * itself whether it blocks or runs on). -1: neither has a thread. */
static int preempt_target(const struct machine *m, const struct vthread *th, int waker)
{
    int cand[2] = { th->last_core >= 0 ? th->last_core : 0, waker }, best = -1;
    for (int i = 0; i < 2; i++) {
        int c = cand[i];
        if (c < 0 || m->cores[c].thread == VT_NONE || m->cores[c].thread == m->in_done)
            continue;
        if (best < 0 || vruntime_now(m, m->cores[c].thread) >
                        vruntime_now(m, m->cores[best].thread))
            best = c;
    }
    return best;
}

/* Wakeup preemption (CFS's check_preempt_wakeup): no core is idle, so the
 * woken thread t may take a core (preempt_target's) if the thread running
 * there is ahead of it by more than wakeup_granularity_ns of CPU
 * (vruntime: all threads weigh the same here). The preempted thread goes
 * to the head of the run queue: CFS marks it the "last buddy", to run
 * again as soon as the woken one is done, its cache still warm. A thread
 * that slept comes back at most 3 x the granularity behind min_vruntime
 * (CFS's sleeper credit, sched_latency / 2: 3 ms against a granularity of
 * 1 ms by default), so a sleeper takes the core from a busy thread at
 * once but cannot bank a long sleep.
 * True when t took a core. */
static bool wakeup_preempts(struct machine *m, uint32_t t, int waker)
{
    double gran = m->prof->wakeup_granularity_ns;
    struct vthread *th = &m->threads[t];
    if (gran <= 0)
        return false;                       /* off: a woken thread waits its turn */
    update_min_vruntime(m);
    vtime_t credit = (vtime_t)(3 * gran);
    vtime_t floor = m->min_vruntime > credit ? m->min_vruntime - credit : 0;
    if (th->vruntime_ns < floor)
        th->vruntime_ns = floor;
    int c = preempt_target(m, th, waker);
    uint32_t cur = c >= 0 ? m->cores[c].thread : VT_NONE;
    /* The running thread keeps its core until it has run twice what its
     * switch onto it cost: preempted sooner, a thread that is always
     * runnable (BIO's acceptor under 100 000 connections, with every
     * wakeup on its core taking the core from it) would pay switch after
     * switch and never get on. Twice: so that each turn on a core gets
     * at least a switch's worth of work done. */
    vtime_t keep_ns = (vtime_t)(2 * m->prof->context_switch_ns);
    if (cur == VT_NONE || m->eng->now < m->cores[c].on_core_since + keep_ns ||
        (double)vruntime_now(m, cur) - (double)th->vruntime_ns <= gran)
        return false;
    stop_running(m, c);
    note_off_core(m, c, true);
    m->threads[cur].state = VT_RUNNABLE;
    m->threads[cur].runnable_at = m->eng->now;
    m->preemptions++;
    m->wakeup_preemptions++;
    rq_push_front(m, cur);                  /* CFS's last buddy: it runs next */
    dispatch_as(m, c, t, ARRIVE_PREEMPT, waker != c);
    return true;
}

void machine_run(struct machine *m, uint32_t t, vtime_t cpu_ns, uint32_t cont)
{
    struct vthread *th = &m->threads[t];
    th->cont = cont;
    th->burst_started = false;
    if (th->state == VT_RUNNING) {          /* from its own burst_done */
        th->burst_left = cpu_ns;
        struct vcore *core = &m->cores[th->core];
        if (m->prof->time_slice_ns > 0 && m->eng->now >= core->slice_end) {
            if (m->rq_len > 0) {            /* its slice is used up: next! */
                int c = th->core;
                note_off_core(m, c, true);
                th->state = VT_RUNNABLE;
                th->runnable_at = m->eng->now;
                th->core = -1;
                m->preemptions++;
                rq_push(m, t);
                core_next(m, c);
                return;
            }
            core->slice_end = m->eng->now + (vtime_t)m->prof->time_slice_ns;
        }
        arm_core(m, th->core);
        return;
    }
    /* Blocked: woken by an event. An idle core takes it: an interrupt
     * that costs wakeup_cpu_ns and wakeup_ns of latency. No core idle: it
     * may preempt a running thread (wakeup_preempts), or it waits in the
     * run queue and pays only the switch when its turn comes. */
    th->burst_left = cpu_ns;
    th->state = VT_RUNNABLE;
    th->runnable_at = m->eng->now;
    int waker = waker_core(m);
    int c = m->idle_cores > 0 ? find_idle_core(m, th, waker) : -1;
    if (c >= 0)
        dispatch_as(m, c, t, ARRIVE_IDLE, true);
    else if (waker >= 0 && m->cores[waker].thread == VT_NONE)
        dispatch(m, waker, t);              /* its waker has blocked: a switch */
    else if (!wakeup_preempts(m, t, waker))
        rq_push(m, t);
}

/* t stops running (blocks or ends); its core takes the next thread. */
static void leave_core(struct machine *m, uint32_t t, enum vthread_state state)
{
    struct vthread *th = &m->threads[t];
    int c = th->core;
    if (c >= 0)
        note_off_core(m, c, false);
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
    struct vcore *core = &m->cores[c];
    if (gen != core->gen || core->thread == VT_NONE)
        return;                                  /* stale */
    vtime_t now = m->eng->now, ran = now - core->segment_start;
    uint32_t t = core->thread;
    struct vthread *th = &m->threads[t];
    core->busy_ns += ran;
    th->vruntime_ns += ran;
    th->burst_left = ran >= th->burst_left ? 0 : th->burst_left - ran;
    if (th->burst_left == 0) {
        m->waker_core = (int)c;                  /* what it wakes, it wakes from here */
        m->waker_at = now;
        m->in_done = t;
        m->done(m->ctx, t);                      /* run on, block or end */
        m->in_done = VT_NONE;
        return;
    }
    /* The slice ended mid-burst. */
    if (m->rq_len > 0) {
        note_off_core(m, (int)c, true);
        th->state = VT_RUNNABLE;
        th->runnable_at = now;
        th->core = -1;
        m->preemptions++;
        rq_push(m, t);
        core_next(m, (int)c);
    } else {
        core->slice_end = now + (vtime_t)m->prof->time_slice_ns;
        arm_core(m, (int)c);
    }
}

vtime_t machine_busy_ns(const struct machine *m)
{
    vtime_t sum = 0;
    for (int c = 0; c < m->ncores; c++)
        sum += m->cores[c].busy_ns;
    return sum;
}
