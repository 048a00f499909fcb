/* switch_cost.c -- what it costs a thread to come onto a core, and what
 * its waker pays of it. See switch_cost.h.
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
