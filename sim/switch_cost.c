/* switch_cost.c -- what it costs a thread to come onto a core, what its
 * waker pays of it, and how long an idle core takes to wake. See
 * switch_cost.h.
 */
#include "switch_cost.h"

#include <math.h>

/* Of an idle core's wakeup (wakeup_cpu_ns), the part its waker pays on
 * its own core: the interrupt it sends from inside its write()
 * (wakeup_ipi_ns, at most the whole). */
double switch_ipi_ns(const struct machine *m)
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
double switch_cost(const struct machine *m, int c, const struct vthread *th,
                   enum arrival how, bool remote, bool waker_pays, double spread)
{
    const struct profile *p = m->prof;
    double cs = p->context_switch_ns +
                p->context_switch_log2_ns * log2(1.0 + m->cores[c].rq.len);
    double wakeup = p->wakeup_cpu_ns - (waker_pays ? switch_ipi_ns(m) : 0);
    if (how == ARRIVE_IDLE)
        cs = wakeup;
    else if (how == ARRIVE_PREEMPT && remote)
        cs += wakeup;
    if (th->last_core >= 0 && th->last_core != c)
        cs += p->cross_core_ns;
    return cs * spread;
}

/* An idle core's wakeup: wakeup_ns, as calibrate's ping-pong measures it
 * (its cores idle a few us). A core that idled wakeup_deep_after_ns or
 * more wakes later by a draw of wakeup_deep_*: on a VM its halted vCPU
 * is a host thread the host must wake, behind its other work. That draw
 * stops at its p99.9 (rng_stall_factor): in 6 runs of 7 here, the
 * longest of a few thousand such wakeups was within 1.5 x their p99.9. */
vtime_t wakeup_delay(struct machine *m, int c, double spread)
{
    const struct profile *p = m->prof;
    vtime_t delay = (vtime_t)(p->wakeup_ns * spread);
    if (p->wakeup_deep_ns <= 0 || m->eng->now - m->cores[c].idle_since < p->wakeup_deep_after_ns)
        return delay;
    struct cost_shape shape = { p->wakeup_deep_sigma, p->wakeup_deep_p99, p->wakeup_deep_p999 };
    return delay + (vtime_t)(p->wakeup_deep_ns *
                             (m->costs ? rng_stall_factor(m->costs, shape) : 1));
}
