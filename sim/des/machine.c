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

/* Put t on idle core c, `delay` from now; the switch itself costs CPU. */
static void dispatch_after(struct machine *m, int c, uint32_t t, vtime_t delay)
{
    struct vcore *core = &m->cores[c];
    struct vthread *th = &m->threads[t];
    /* One draw for the switch and the wakeup before it: calibrate
     * measures them together (a pass between two threads), and this is
     * their shape (wakeup_sigma; 0: constant, and nothing is drawn). */
    double spread = m->costs ? rng_lognormal_factor(m->costs, m->prof->wakeup_sigma) : 1;
    double cs = m->prof->context_switch_ns +
                m->prof->context_switch_log2_ns * log2(1.0 + m->rq_len);
    /* A thread that ran on another core last: on Linux, mostly a thread
     * woken by one on another core (an inter-processor interrupt, dear in
     * a VM). The machine does not know who woke whom; a thread that stays
     * put (one connection: Linux's wake-affine keeps client and server
     * on one core, as find_idle_core does here) pays nothing more. */
    if (th->last_core >= 0 && th->last_core != c)
        cs += m->prof->cross_core_ns;
    cs *= spread;
    th->last_core = c;
    delay = (vtime_t)((double)delay * spread);
    core->thread = t;
    th->state = VT_RUNNING;
    th->core = c;
    th->burst_left += (vtime_t)cs;
    m->context_switches++;
    core->slice_end = m->eng->now + delay + (vtime_t)m->prof->time_slice_ns;
    m->idle_cores--;
    if (m->on_core)
        m->on_core(m->ctx, t, true);
    arm_core_after(m, c, delay);
}

static void dispatch(struct machine *m, int c, uint32_t t)
{
    dispatch_after(m, c, t, 0);
}

/* Core c lost its thread: take the next runnable one, or go idle. */
static void core_next(struct machine *m, int c)
{
    m->cores[c].thread = VT_NONE;
    m->idle_cores++;
    if (m->rq_len > 0)
        dispatch(m, c, rq_pop(m));
}

static int find_idle_core(const struct machine *m)
{
    for (int c = 0; c < m->ncores; c++)
        if (m->cores[c].thread == VT_NONE)
            return c;
    return -1;
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
                th->state = VT_RUNNABLE;
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
    /* Blocked: woken by an event. An idle core takes wakeup_ns to start
     * it (waking the core is latency, not work); a busy machine queues it,
     * and it pays only the switch when its turn comes. */
    th->burst_left = cpu_ns;
    th->state = VT_RUNNABLE;
    int c = m->idle_cores > 0 ? find_idle_core(m) : -1;
    if (c >= 0)
        dispatch_after(m, c, t, (vtime_t)m->prof->wakeup_ns);
    else
        rq_push(m, t);
}

/* t stops running (blocks or ends); its core takes the next thread. */
static void leave_core(struct machine *m, uint32_t t, enum vthread_state state)
{
    struct vthread *th = &m->threads[t];
    int c = th->core;
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
    th->burst_left = ran >= th->burst_left ? 0 : th->burst_left - ran;
    if (th->burst_left == 0) {
        m->done(m->ctx, t);                      /* run on, block or end */
        return;
    }
    /* The slice ended mid-burst. */
    if (m->rq_len > 0) {
        th->state = VT_RUNNABLE;
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
