/* machine.c -- cores, threads, the scheduler. See machine.h. */
#include "machine.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* How fast a core's load average forgets: Linux's PELT halves a
 * contribution every 32 ms (32 / ln 2 = 46.2 ms to 1/e). */
#define LOAD_TAU_NS 46.2e6
/* The event id of the balancer (the cores' events have ids 0..ncores-1). */
#define BALANCE_ID(m) ((uint32_t)(m)->ncores)

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
    if (!m->cores || !m->threads || !m->free_ids) {
        machine_free(m);
        return -1;
    }
    for (int c = 0; c < ncores; c++) {
        m->cores[c].thread = VT_NONE;
        m->cores[c].avg_idle_ns = 2 * prof->migration_cost_ns;   /* Linux starts it there */
    }
    m->waker_at = UINT64_MAX;                 /* no waker yet */
    m->waker = VT_NONE;
    m->in_done = VT_NONE;
    return 0;
}

void machine_free(struct machine *m)
{
    for (int c = 0; m->cores && c < m->ncores; c++)
        free(m->cores[c].rq.ids);
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

static void rq_push(struct machine *m, struct runq *q, uint32_t t)
{
    if (q->len == q->cap) {
        uint32_t cap = q->cap ? q->cap * 2 : 64;
        uint32_t *ids = malloc(cap * sizeof(*ids));
        if (!ids) {
            m->out_of_memory = true;       /* t is lost: the run must stop */
            return;
        }
        for (uint32_t i = 0; i < q->len; i++)
            ids[i] = q->ids[(q->head + i) % q->cap];
        free(q->ids);
        q->ids = ids;
        q->head = 0;
        q->cap = cap;
    }
    q->ids[(q->head + q->len++) % q->cap] = t;
    if (m->on_core)
        m->on_core(m->ctx, t, false);
}

/* t at the head of the run queue: the next one its core takes. */
static void rq_push_front(struct machine *m, struct runq *q, uint32_t t)
{
    rq_push(m, q, t);                          /* makes room, tells on_core */
    q->len--;                                  /* ... then move it to the head */
    q->head = (q->head + q->cap - 1) % q->cap;
    q->ids[q->head] = t;
    q->len++;
}

static uint32_t rq_pop(struct runq *q)
{
    uint32_t t = q->ids[q->head];
    q->head = (q->head + 1) % q->cap;
    q->len--;
    return t;
}

/* ---- EEVDF's bookkeeping, core by core ------------------------------------- */

/* t's vruntime, with what it has run of its current stretch so far. */
static vtime_t vruntime_now(const struct machine *m, uint32_t t)
{
    const struct vthread *th = &m->threads[t];
    vtime_t now = m->eng->now;
    if (th->state != VT_RUNNING || now <= m->cores[th->core].segment_start)
        return th->vruntime_ns;
    return th->vruntime_ns + (now - m->cores[th->core].segment_start);
}

/* Core c's thread has run `ran` more (and core c's stretch restarts now):
 * its vruntime, and the core's sum, move on; past its deadline it asks
 * for another slice. */
static void account_run(struct machine *m, int c, vtime_t ran)
{
    struct vcore *core = &m->cores[c];
    struct vthread *th = &m->threads[core->thread];
    core->busy_ns += ran;
    th->vruntime_ns += ran;
    core->vruntime_sum += ran;
    core->segment_start = m->eng->now;
    if (th->vruntime_ns >= th->deadline_ns)
        th->deadline_ns = th->vruntime_ns + (vtime_t)m->prof->wakeup_granularity_ns;
}

/* Core c's V: the average vruntime of its threads (the one on it and
 * those waiting for it), with what the running one has run so far. A
 * thread whose vruntime is at most V has had at most its share: it is
 * owed CPU (eligible). */
static vtime_t core_v(const struct machine *m, int c)
{
    const struct vcore *core = &m->cores[c];
    if (core->queued == 0)
        return core->empty_v;
    vtime_t sum = core->vruntime_sum;
    if (core->thread != VT_NONE)
        sum += vruntime_now(m, core->thread) - m->threads[core->thread].vruntime_ns;
    return sum / core->queued;
}

/* An average over time, as Linux's PELT keeps them: what it was, forgotten
 * by e^(-dt / LOAD_TAU_NS), plus `now_value` for the time since `*at`. */
static void pelt_update(double *avg, vtime_t *at, double now_value, vtime_t now)
{
    double keep = exp(-(double)(now - *at) / LOAD_TAU_NS);
    *avg = *avg * keep + now_value * (1 - keep);
    *at = now;
}

/* Core c's load average: how many threads it has had (running or
 * waiting), averaged over the last tens of milliseconds (what the
 * balancer compares). Brought up to now. */
static void update_load(struct machine *m, int c)
{
    struct vcore *core = &m->cores[c];
    pelt_update(&core->load_avg, &core->load_at, core->queued, m->eng->now);
}

/* The cores' average utilization (util_avg, what SIS_UTIL reads), brought
 * up to now: the share of cores busy. */
static void update_util(struct machine *m)
{
    pelt_update(&m->util_avg, &m->util_at, 1 - (double)m->idle_cores / m->ncores,
                m->eng->now);
}

/* Cores go idle (+) or busy (-). */
static void change_idle_cores(struct machine *m, int by)
{
    update_util(m);
    m->idle_cores += by;
}

/* t joins core c's threads (woken onto it, or moved to it). EEVDF places
 * it by the lag it left with (scaled, as Linux does, by the threads
 * already there, so that it is still owed what it was owed), at most two
 * slices either way; its deadline is a slice on. */
static void eevdf_join(struct machine *m, int c, uint32_t t)
{
    struct vcore *core = &m->cores[c];
    struct vthread *th = &m->threads[t];
    int64_t limit = (int64_t)(2 * m->prof->wakeup_granularity_ns), lag = th->lag_ns;
    lag = lag > limit ? limit : lag < -limit ? -limit : lag;
    if (core->queued > 0)
        lag = lag * (int64_t)(core->queued + 1) / (int64_t)core->queued;
    int64_t v = (int64_t)core_v(m, c) - lag;
    th->vruntime_ns = v > 0 ? (vtime_t)v : 0;
    th->deadline_ns = th->vruntime_ns + (vtime_t)m->prof->wakeup_granularity_ns;
    update_load(m, c);
    core->queued++;
    core->vruntime_sum += th->vruntime_ns;
}

/* t leaves core c's threads (blocks, ends, or moves): its lag, V less its
 * vruntime, goes with it. */
static void eevdf_leave(struct machine *m, int c, uint32_t t)
{
    struct vcore *core = &m->cores[c];
    struct vthread *th = &m->threads[t];
    vtime_t v = core_v(m, c);
    th->lag_ns = (int64_t)v - (int64_t)th->vruntime_ns;
    update_load(m, c);
    core->queued--;
    core->vruntime_sum -= th->vruntime_ns;
    if (core->queued == 0)
        core->empty_v = v;
}

/* ---- coming onto a core ------------------------------------------------------ */

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

/* Of an idle core's wakeup (wakeup_cpu_ns), the part its waker pays on
 * its own core: the interrupt it sends from inside its write()
 * (wakeup_ipi_ns, at most the whole). */
static double ipi_ns(const struct machine *m)
{
    return fmin(m->prof->wakeup_ipi_ns, m->prof->wakeup_cpu_ns);
}

/* The CPU a thread pays to come onto core c, before its burst:
 * - context_switch_ns (+ context_switch_log2_ns per doubling of the
 *   core's run queue): one thread's state for another's;
 * - wakeup_cpu_ns instead when an idle core is woken (the interrupt and
 *   the core's way out of idle, as calibrate's ping-pong between two
 *   threads measures them), less what its waker pays for the interrupt
 *   (wakeup_ipi_ns; a wakeup from no thread, a timer's, pays it all
 *   here); and on top of the switch when a wakeup preempts the thread of
 *   another core, less the waker's part likewise;
 * - cross_core_ns more when the thread ran on another core last;
 * all of it times one draw of wakeup_sigma (calibrate measures the
 * switch and the wakeup together, a pass at a time). */
static double switch_cost(const struct machine *m, int c, const struct vthread *th,
                          enum arrival how, bool remote, bool waker_pays, double spread)
{
    const struct profile *p = m->prof;
    double cs = p->context_switch_ns +
                p->context_switch_log2_ns * log2(1.0 + m->cores[c].rq.len);
    double wakeup = p->wakeup_cpu_ns - (waker_pays ? ipi_ns(m) : 0);
    if (how == ARRIVE_IDLE)
        cs = wakeup;
    else if (how == ARRIVE_PREEMPT && remote)
        cs += wakeup;
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

static void charge_waker(struct machine *m);

/* Put t on core c (idle, or just taken from its thread). An idle core
 * woken by an interrupt starts it wakeup_ns later (latency, not CPU);
 * the switch is paid in CPU before its burst. waker_pays: the waker pays
 * its part of the interrupt (charge_waker), t the rest. */
static void dispatch_as(struct machine *m, int c, uint32_t t, enum arrival how, bool remote,
                        bool waker_pays)
{
    struct vcore *core = &m->cores[c];
    struct vthread *th = &m->threads[t];
    struct cost_shape shape = { m->prof->wakeup_sigma, m->prof->wakeup_p99,
                                m->prof->wakeup_p999 };
    double spread = m->costs ? rng_cost_factor(m->costs, shape) : 1;
    double cs = switch_cost(m, c, th, how, remote, waker_pays, spread);
    vtime_t now = m->eng->now;
    vtime_t delay = how == ARRIVE_IDLE ? (vtime_t)(m->prof->wakeup_ns * spread) : 0;
    if (m->waits)
        hist_record(&m->waits->wait_ns[waits_kind(m, t)], now + delay - th->runnable_at);
    if (how == ARRIVE_IDLE) {            /* Linux's avg_idle: 1/8 of each sample */
        double avg = core->avg_idle_ns;
        avg += ((double)(now - core->idle_since) - avg) / 8;
        core->avg_idle_ns = fmin(avg, 2 * m->prof->migration_cost_ns);
    }
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

static void dispatch(struct machine *m, int c, uint32_t t)
{
    dispatch_as(m, c, t, ARRIVE_QUEUED, false, false);
}

/* ---- balancing the cores ------------------------------------------------------ */

/* The balancer's next turn, at the next multiple of balance_interval_ns
 * (Linux balances at the scheduler's tick, every so many ticks), if none
 * is pending: only while some thread waits, so an idle machine has no
 * events left and the run can end. */
static void arm_balance(struct machine *m)
{
    double every = m->prof->balance_interval_ns;
    if (m->balance_armed || every <= 0)
        return;
    m->balance_armed = true;
    vtime_t now = m->eng->now, period = (vtime_t)every;
    if (des_schedule(m->eng, (now / period + 1) * period - now, m->core_event_kind,
                     BALANCE_ID(m), 0) < 0)
        m->out_of_memory = true;
}

/* t waits for core c. */
static void queue_on(struct machine *m, int c, uint32_t t)
{
    rq_push(m, &m->cores[c].rq, t);
    arm_balance(m);
}

/* The first thread waiting on core `from` moves to core `to`, its lag
 * with it. */
static uint32_t move_waiting(struct machine *m, int from, int to)
{
    uint32_t t = rq_pop(&m->cores[from].rq);
    eevdf_leave(m, from, t);
    eevdf_join(m, to, t);
    return t;
}

/* The core, other than c, with the most threads waiting; -1: none wait. */
static int most_waiting(const struct machine *m, int c)
{
    int best = -1;
    for (int o = 0; o < m->ncores; o++)
        if (o != c && m->cores[o].rq.len > 0 &&
            (best < 0 || m->cores[o].rq.len > m->cores[best].rq.len))
            best = o;
    return best;
}

/* The balancer's turn: the core with the highest load average gives a
 * waiting thread to the one with the lowest, if their loads differ by a
 * thread or more (moving one then evens them); an idle core is woken by
 * the balancer's interrupt to take it. */
static void balance(struct machine *m)
{
    m->balance_armed = false;
    int hi = 0, lo = 0;
    for (int c = 0; c < m->ncores; c++) {
        update_load(m, c);
        if (m->cores[c].load_avg > m->cores[hi].load_avg)
            hi = c;
        if (m->cores[c].load_avg < m->cores[lo].load_avg)
            lo = c;
    }
    if (m->cores[hi].rq.len > 0 && m->cores[hi].load_avg >= m->cores[lo].load_avg + 1) {
        uint32_t t = move_waiting(m, hi, lo);
        if (m->cores[lo].thread == VT_NONE)
            dispatch_as(m, lo, t, ARRIVE_IDLE, true, false);
        else
            rq_push(m, &m->cores[lo].rq, t);
    }
    for (int c = 0; c < m->ncores; c++)
        if (m->cores[c].rq.len > 0)
            arm_balance(m);
}

/* Core c lost its thread: the next thread of its own run queue takes it;
 * with none, the core goes idle. An idle core takes a waiting thread from
 * another core at once only if it has been staying idle long on average
 * (Linux's newidle balance: avg_idle at least migration_cost_ns, below
 * which looking is not worth its cost); else
 * that thread waits for its own core or for the balancer. So under load
 * a thread can wait milliseconds on one core while the other goes idle
 * now and then, as perf sched shows of the real multireactor. */
static void core_next(struct machine *m, int c)
{
    struct vcore *core = &m->cores[c];
    core->thread = VT_NONE;
    change_idle_cores(m, +1);
    if (core->rq.len > 0) {
        dispatch(m, c, rq_pop(&core->rq));
        return;
    }
    core->idle_since = m->eng->now;
    int from = most_waiting(m, c);
    if (from >= 0 && core->avg_idle_ns >= m->prof->migration_cost_ns)
        dispatch(m, c, move_waiting(m, from, c));
}

/* ---- where a woken thread goes ------------------------------------------------ */

/* How many cores a woken thread whose last core is busy looks at for an
 * idle one (Linux's SIS_UTIL): n = cores x (1 - (u x idle_search_pct /
 * 100)^2), u the cores' average utilization; the busier the machine, the
 * fewer, and none once n is below 1 (on 2 cores, past u = 0.6: a woken
 * thread then waits on its busy last core though the other is idle,
 * until that core, or the balancer, gives it a turn). idle_search_pct 0:
 * every core. */
static int cores_to_search(struct machine *m)
{
    double pct = m->prof->idle_search_pct;
    if (pct <= 0)
        return m->ncores;
    update_util(m);
    double x = m->util_avg * pct / 100;
    return x >= 1 ? 0 : (int)(m->ncores * (1 - x * x));
}

/* An idle core for woken thread t, or -1: the core it ran on last if
 * that one is idle (its cache is there: Linux's select_idle_sibling tries
 * the previous CPU first); else the first idle one of the cores after it
 * that cores_to_search allows (a thread that never ran: the lowest idle
 * core). Never the waker's core: its thread is still on it, in the
 * write() that wakes t (the simulation has it block or run on only after
 * its burst, at the same instant). */
static int find_idle_core(struct machine *m, const struct vthread *th, int waker)
{
    int last = th->last_core;
    if (last >= 0 && last != waker && m->cores[last].thread == VT_NONE)
        return last;
    int n = last >= 0 ? cores_to_search(m) : m->ncores;
    for (int i = 0; i < n && i < m->ncores; i++) {
        int c = last >= 0 ? (last + 1 + i) % m->ncores : i;
        if (c != waker && m->cores[c].thread == VT_NONE)
            return c;
    }
    return -1;
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
    double ns = ipi_ns(m);
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
    arm_core(m, wt->core);
}

/* ---- wakeup preemption --------------------------------------------------------- */

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
    uint32_t t = core->thread, next = rq_pop(&core->rq);
    struct vthread *th = &m->threads[t];
    note_off_core(m, c, true);
    th->state = VT_RUNNABLE;
    th->runnable_at = m->eng->now;
    th->core = -1;
    m->preemptions++;
    rq_push(m, &core->rq, t);
    core->thread = VT_NONE;
    change_idle_cores(m, +1);
    dispatch(m, c, next);
}

/* Wakeup preemption (EEVDF's): woken thread t, placed on busy core c,
 * takes it if it is owed CPU there (eligible: its vruntime at most the
 * core's V) and the running thread is not (it has had more than its
 * share), or has used its slice (run past its deadline: Linux would
 * have rescheduled it at the tick), or t's deadline comes first. The preempted thread waits at the
 * tail of that core's queue. A thread that has just got the core keeps it
 * until it has run twice its switch onto it. The thread whose burst has
 * just ended (the waker, in the write() that woke t) is preempted on its
 * way back from that call, before its next burst (resched: Linux's
 * need_resched, honoured on the way out of a system call). True when t
 * is on c, or at the head of its queue to take it then. */
static bool wakeup_preempts(struct machine *m, uint32_t t, int c, int waker)
{
    struct vthread *th = &m->threads[t];
    uint32_t cur = m->cores[c].thread;
    if (m->prof->wakeup_granularity_ns <= 0 || cur == VT_NONE)
        return false;                       /* off: a woken thread waits its turn */
    /* Preempted sooner, a thread that is always runnable (BIO's acceptor
     * under 100 000 connections, with every wakeup on its core taking
     * the core from it) would pay switch after switch and never get on.
     * Twice: so that each turn on a core gets at least a switch's worth
     * of work done. */
    vtime_t keep_ns = (vtime_t)(2 * m->prof->context_switch_ns);
    vtime_t v = core_v(m, c), cur_v = vruntime_now(m, cur);
    bool cur_keeps = cur_v <= v && cur_v < m->threads[cur].deadline_ns &&
                     th->deadline_ns >= m->threads[cur].deadline_ns;
    if (m->eng->now < m->cores[c].on_core_since + keep_ns || th->vruntime_ns > v || cur_keeps)
        return false;
    m->wakeup_preemptions++;
    if (cur == m->in_done) {
        rq_push_front(m, &m->cores[c].rq, t);
        m->cores[c].resched = true;
        return true;
    }
    stop_running(m, c);
    note_off_core(m, c, true);
    m->threads[cur].state = VT_RUNNABLE;
    m->threads[cur].runnable_at = m->eng->now;
    m->preemptions++;
    queue_on(m, c, cur);
    dispatch_as(m, c, t, ARRIVE_PREEMPT, waker != c, waker >= 0 && waker != c);
    return true;
}

/* ---- the owner's calls ---------------------------------------------------------- */

void machine_run(struct machine *m, uint32_t t, vtime_t cpu_ns, uint32_t cont)
{
    struct vthread *th = &m->threads[t];
    th->cont = cont;
    th->burst_started = false;
    cpu_ns += th->owed_ns;                  /* a wakeup's interrupt it sent */
    th->owed_ns = 0;
    if (th->state == VT_RUNNING) {          /* from its own burst_done */
        th->burst_left = cpu_ns;
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
        arm_core(m, c);
        return;
    }
    /* Blocked: woken by an event. An idle core takes it (find_idle_core):
     * an interrupt that costs wakeup_cpu_ns (its waker paying
     * wakeup_ipi_ns of it) and wakeup_ns of latency. Else it goes to its
     * waker's core if its waker has just blocked there (a switch), or
     * waits on the core it ran on last, where it may preempt the running
     * thread (wakeup_preempts), and pays only the switch when its turn
     * comes. */
    th->burst_left = cpu_ns;
    th->state = VT_RUNNABLE;
    th->runnable_at = m->eng->now;
    int waker = waker_core(m);
    int c = m->idle_cores > 0 ? find_idle_core(m, th, waker) : -1;
    if (c >= 0) {
        eevdf_join(m, c, t);
        dispatch_as(m, c, t, ARRIVE_IDLE, true, waker >= 0);
        return;
    }
    if (waker >= 0 && m->cores[waker].thread == VT_NONE) {
        eevdf_join(m, waker, t);
        dispatch(m, waker, t);              /* its waker has blocked: a switch */
        return;
    }
    c = th->last_core >= 0 ? th->last_core : waker >= 0 ? waker : 0;
    eevdf_join(m, c, t);
    if (!wakeup_preempts(m, t, c, waker))
        queue_on(m, c, t);
}

/* t stops running (blocks or ends); its core takes the next thread. */
static void leave_core(struct machine *m, uint32_t t, enum vthread_state state)
{
    struct vthread *th = &m->threads[t];
    int c = th->core;
    if (c >= 0) {
        note_off_core(m, c, false);
        eevdf_leave(m, c, t);
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
    if (c == BALANCE_ID(m)) {
        balance(m);
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
