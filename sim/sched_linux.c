/* sched_linux.c -- Linux's scheduler, as the machine's scheduler
 * (sched.h): EEVDF's lag and virtual deadlines decide wakeup preemption;
 * SIS_UTIL decides how far a woken thread looks for an idle core; PELT
 * load averages feed the load balancer and the newidle balance. The
 * profile's figures (calibrate.c) set its knobs.
 *
 * A woken thread goes to the core it ran on last if that core is idle;
 * else to another idle core, but only while the cores are not too busy
 * (SIS_UTIL, idle_search_pct: on 2 cores, none past 60% busy); else to
 * its waker's core if its waker has just blocked there; else it waits on
 * its last core, busy as it is. There it may take the core from the
 * running thread (EEVDF's wakeup preemption: it is owed CPU on that core
 * and the running thread is not, or has used its slice, or its virtual
 * deadline comes first), else it waits at the tail of that core's run
 * queue. A core left with nothing to run takes a waiting thread from
 * another core only if it has been idle long on average (newidle
 * balance); every balance_interval_ns the balancer moves a waiting
 * thread from the core with the highest load average to the lowest.
 */
#include <math.h>

#include "machine.h"

/* How fast a core's load average forgets: Linux's PELT halves a
 * contribution every 32 ms (32 / ln 2 = 46.2 ms to 1/e). */
#define LOAD_TAU_NS 46.2e6

/* ---- EEVDF's bookkeeping, core by core ------------------------------------- */

/* t's vruntime, with what it has run of its current stretch so far. */
static vtime_t vruntime_now(const struct machine *m, uint32_t t)
{
    const struct vthread *th = &m->threads[t];
    vtime_t now = m->eng->now;
    if (th->state != VT_RUNNING || now <= m->cores[th->core].segment_start)
        return th->sched.vruntime_ns;
    return th->sched.vruntime_ns + (now - m->cores[th->core].segment_start);
}

/* Core c's thread has run `ran` more: its vruntime, and the core's sum,
 * move on; past its deadline it asks for another slice. */
static void linux_ran(struct machine *m, int c, vtime_t ran)
{
    struct vcore *core = &m->cores[c];
    struct sched_thread *th = &m->threads[core->thread].sched;
    th->vruntime_ns += ran;
    core->sched.vruntime_sum += ran;
    if (th->vruntime_ns >= th->deadline_ns)
        th->deadline_ns = th->vruntime_ns + (vtime_t)m->prof->wakeup_granularity_ns;
}

/* Core c's V: the average vruntime of its threads (the one on it and
 * those waiting for it), with what the running one has run so far. A
 * thread whose vruntime is at most V has had at most its share: it is
 * owed CPU (eligible). */
static vtime_t core_v(const struct machine *m, int c)
{
    const struct sched_core *sc = &m->cores[c].sched;
    uint32_t cur = m->cores[c].thread;
    if (sc->queued == 0)
        return sc->empty_v;
    vtime_t sum = sc->vruntime_sum;
    if (cur != VT_NONE)
        sum += vruntime_now(m, cur) - m->threads[cur].sched.vruntime_ns;
    return sum / sc->queued;
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
    struct sched_core *sc = &m->cores[c].sched;
    pelt_update(&sc->load_avg, &sc->load_at, sc->queued, m->eng->now);
}

/* The cores' average utilization (util_avg, what SIS_UTIL reads), brought
 * up to now: the share of cores busy. */
static void update_util(struct machine *m)
{
    pelt_update(&m->sched_state.util_avg, &m->sched_state.util_at, 1 - (double)m->idle_cores / m->ncores,
                m->eng->now);
}

/* t joins core c's threads (woken onto it, or moved to it). EEVDF places
 * it by the lag it left with (scaled, as Linux does, by the threads
 * already there, so that it is still owed what it was owed), at most two
 * slices either way; its deadline is a slice on. */
static void eevdf_join(struct machine *m, int c, uint32_t t)
{
    struct sched_core *core = &m->cores[c].sched;
    struct sched_thread *th = &m->threads[t].sched;
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
    struct sched_core *core = &m->cores[c].sched;
    struct sched_thread *th = &m->threads[t].sched;
    vtime_t v = core_v(m, c);
    th->lag_ns = (int64_t)v - (int64_t)th->vruntime_ns;
    update_load(m, c);
    core->queued--;
    core->vruntime_sum -= th->vruntime_ns;
    if (core->queued == 0)
        core->empty_v = v;
}


/* The cores' idle count is about to change: util_avg is brought up to
 * now under the old count. */
static void linux_idle_changing(struct machine *m)
{
    update_util(m);
}

/* Linux starts each core's avg_idle at twice migration_cost_ns. */
static void linux_start(struct machine *m)
{
    for (int c = 0; c < m->ncores; c++)
        m->cores[c].sched.avg_idle_ns = 2 * m->prof->migration_cost_ns;
}

/* Idle core c is woken: avg_idle takes 1/8 of how long it stayed idle. */
static void linux_core_woken(struct machine *m, int c)
{
    struct vcore *core = &m->cores[c];
    double avg = core->sched.avg_idle_ns;
    avg += ((double)(m->eng->now - core->idle_since) - avg) / 8;
    core->sched.avg_idle_ns = fmin(avg, 2 * m->prof->migration_cost_ns);
}

/* ---- balancing the cores ------------------------------------------------------ */

/* The balancer's next turn, at the next multiple of balance_interval_ns
 * (Linux balances at the scheduler's tick, every so many ticks), if none
 * is pending: only while some thread waits, so an idle machine has no
 * events left and the run can end. */
static void arm_balance(struct machine *m)
{
    double every = m->prof->balance_interval_ns;
    if (m->sched_state.balance_armed || every <= 0)
        return;
    m->sched_state.balance_armed = true;
    vtime_t now = m->eng->now, period = (vtime_t)every;
    machine_arm_balance(m, (now / period + 1) * period - now);
}

/* A thread waits on core c: the balancer's turn comes. */
static void linux_queued(struct machine *m, int c)
{
    (void)c;
    arm_balance(m);
}

/* The first thread waiting on core `from` moves to core `to`, its lag
 * with it. */
static uint32_t move_waiting(struct machine *m, int from, int to)
{
    uint32_t t = runq_pop(&m->cores[from].rq);
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
static void linux_balance(struct machine *m)
{
    m->sched_state.balance_armed = false;
    int hi = 0, lo = 0;
    for (int c = 0; c < m->ncores; c++) {
        update_load(m, c);
        if (m->cores[c].sched.load_avg > m->cores[hi].sched.load_avg)
            hi = c;
        if (m->cores[c].sched.load_avg < m->cores[lo].sched.load_avg)
            lo = c;
    }
    if (m->cores[hi].rq.len > 0 &&
        m->cores[hi].sched.load_avg >= m->cores[lo].sched.load_avg + 1) {
        uint32_t t = move_waiting(m, hi, lo);
        if (m->cores[lo].thread == VT_NONE)
            machine_dispatch(m, lo, t, ARRIVE_IDLE, true, false);
        else
            machine_rq_push(m, lo, t);
    }
    for (int c = 0; c < m->ncores; c++)
        if (m->cores[c].rq.len > 0)
            arm_balance(m);
}

/* Core c has nothing to run: it takes a waiting thread from another core
 * at once only if it has been staying idle long on average (Linux's
 * newidle balance: avg_idle at least migration_cost_ns, below which
 * looking is not worth its cost); else that thread waits for its own
 * core or for the balancer. So under load a thread can wait milliseconds
 * on one core while the other goes idle now and then, as perf sched
 * shows of the real multireactor. */
static void linux_idle(struct machine *m, int c)
{
    int from = most_waiting(m, c);
    if (from >= 0 && m->cores[c].sched.avg_idle_ns >= m->prof->migration_cost_ns)
        machine_dispatch(m, c, move_waiting(m, from, c), ARRIVE_QUEUED, false, false);
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
    double x = m->sched_state.util_avg * pct / 100;
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
    const struct sched_thread *cs = &m->threads[cur].sched;
    bool cur_keeps = cur_v <= v && cur_v < cs->deadline_ns &&
                     th->sched.deadline_ns >= cs->deadline_ns;
    if (m->eng->now < m->cores[c].on_core_since + keep_ns || th->sched.vruntime_ns > v ||
        cur_keeps)
        return false;
    machine_preempt(m, c, t, waker);
    return true;
}

/* Woken thread t: an idle core takes it (find_idle_core): an interrupt
 * that costs wakeup_cpu_ns (its waker paying wakeup_ipi_ns of it) and
 * wakeup_ns of latency. Else it goes to its waker's core if its waker has
 * just blocked there (a switch), or waits on the core it ran on last,
 * where it may preempt the running thread (wakeup_preempts), and pays
 * only the switch when its turn comes. */
static void linux_wake(struct machine *m, uint32_t t, int waker)
{
    const struct vthread *th = &m->threads[t];
    int c = m->idle_cores > 0 ? find_idle_core(m, th, waker) : -1;
    if (c >= 0) {
        eevdf_join(m, c, t);
        machine_dispatch(m, c, t, ARRIVE_IDLE, true, waker >= 0);
        return;
    }
    if (waker >= 0 && m->cores[waker].thread == VT_NONE) {
        eevdf_join(m, waker, t);
        machine_dispatch(m, waker, t, ARRIVE_QUEUED, false, false);
        return;
    }
    c = th->last_core >= 0 ? th->last_core : waker >= 0 ? waker : 0;
    eevdf_join(m, c, t);
    if (!wakeup_preempts(m, t, c, waker))
        machine_queue_on(m, c, t);
}

const struct sched_ops sched_linux = {
    .name = "linux",
    .start = linux_start,
    .wake = linux_wake,
    .idle = linux_idle,
    .ran = linux_ran,
    .leave = eevdf_leave,
    .queued = linux_queued,
    .balance = linux_balance,
    .idle_changing = linux_idle_changing,
    .core_woken = linux_core_woken,
};
