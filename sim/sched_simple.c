/* sched_simple.c -- a scheduler a student can follow by hand (sched.h).
 *
 * - A woken thread whose waker has just blocked takes the waker's core
 *   (a switch: context_switch_ns). Else it takes the lowest-numbered idle
 *   core, woken by an interrupt (wakeup_cpu_ns of CPU, wakeup_ns of
 *   latency). Else it waits at the tail of the shortest run queue (the
 *   lowest-numbered core of those as short).
 * - Nothing preempts a running thread but its own time slice
 *   (time_slice_ns): then it goes to the tail of its core's queue.
 * - A core left with an empty run queue takes the head of the longest
 *   other queue (a switch, plus cross_core_ns for the move).
 * No load averages, no balancer, no virtual time: with one core this is
 * round robin over one FIFO queue.
 */
#include "machine.h"

/* The lowest-numbered idle core, or -1. */
static int first_idle_core(const struct machine *m)
{
    for (int c = 0; c < m->ncores; c++)
        if (m->cores[c].thread == VT_NONE)
            return c;
    return -1;
}

/* The core, other than `except`, whose run queue is longest (`longest`)
 * or shortest; the lowest-numbered of a tie. */
static int queue_by_length(const struct machine *m, int except, bool longest)
{
    int best = -1;
    for (int c = 0; c < m->ncores; c++) {
        if (c == except)
            continue;
        uint32_t len = m->cores[c].rq.len;
        if (best < 0 || (longest ? len > m->cores[best].rq.len : len < m->cores[best].rq.len))
            best = c;
    }
    return best;
}

static void simple_wake(struct machine *m, uint32_t t, int waker)
{
    if (waker >= 0 && m->cores[waker].thread == VT_NONE) {
        machine_dispatch(m, waker, t, ARRIVE_QUEUED, false, false);
        return;
    }
    int c = first_idle_core(m);
    if (c >= 0) {
        machine_dispatch(m, c, t, ARRIVE_IDLE, true, waker >= 0);
        return;
    }
    machine_queue_on(m, queue_by_length(m, -1, false), t);
}

static void simple_idle(struct machine *m, int c)
{
    int from = queue_by_length(m, c, true);
    if (from >= 0 && m->cores[from].rq.len > 0)
        machine_dispatch(m, c, runq_pop(&m->cores[from].rq), ARRIVE_QUEUED, false, false);
}

const struct sched_ops sched_simple = {
    .name = "simple",
    .wake = simple_wake,
    .idle = simple_idle,
};
