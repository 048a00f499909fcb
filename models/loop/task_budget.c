/* task_budget.c -- the task phase of an iteration (step 3) and the
 * budget ioRatio gives it: after I/O that took io_ns, tasks may run for
 * io_ns * (100 - ioRatio) / ioRatio, less what earlier tasks overran.
 * See loop.h for ioRatio, and inside_loop.h for how the files of the loop
 * share its struct.
 */
#include <stdatomic.h>
#include <stdio.h>

#include "inside_loop.h"
#include "net/clock.h"

uint64_t loop_task_budget_ns(uint64_t io_ns, int io_ratio_pct)
{
    if (io_ratio_pct >= 100)
        return UINT64_MAX;
    return io_ns * (uint64_t)(100 - io_ratio_pct) / (uint64_t)io_ratio_pct;
}

/* The budget of this iteration's tasks, carried over. A task cannot be
 * stopped halfway, so a phase overruns its budget by up to one task: with
 * tasks longer than the budget (200 us of !task against 20 us of I/O at
 * ioRatio 80), a loop that ran "at least one" each time would give tasks
 * most of its time whatever the ratio. So the overrun is owed, and paid
 * from the next budgets: over many iterations tasks get their share, for
 * long tasks and short alike. An iteration that found no I/O to do runs
 * tasks for LOOP_IDLE_TASK_BUDGET_US, one at least (Netty's
 * runAllTasks(0)): short, because I/O that arrives meanwhile waits for
 * it. Those tasks took nothing from I/O: they neither add to the debt nor
 * pay it (forgiving it there let every long task overrun for free). */
uint64_t carried_task_budget_ns(struct loop *l, uint64_t io_ns, bool io_idle)
{
    uint64_t share = loop_task_budget_ns(io_ns, l->io_ratio_pct);
    uint64_t owed = atomic_load_explicit(&l->task_overrun_ns, memory_order_relaxed);
    if (share == UINT64_MAX)
        return share;                     /* ioRatio 100: every task, now */
    if (io_idle) {
        share = LOOP_IDLE_TASK_BUDGET_US * 1000ull;   /* and the debt stays */
    } else if (share <= owed) {
        owed -= share;                    /* still owing: no tasks this time */
        share = 0;
    } else {
        share -= owed;
        owed = 0;
    }
    atomic_store_explicit(&l->task_overrun_ns, owed, memory_order_relaxed);
    return share;
}

/* Step 3's heart: run queued tasks while the budget lasts, and say how
 * many ran. The budget counts from began_ns, when the timers' turn began,
 * so timers and tasks share it. The deadline is looked at before every
 * task: the clock is read around each task anyway (run_timed, for the
 * blocked checker), so the look is free, and a phase overruns by one task
 * at most, not by a batch (Netty reads the clock every 64 tasks only:
 * with 200 us tasks that is 12.8 ms past a budget of 20 us). After an I/O
 * step that found nothing to do (io_idle), one task runs whatever the
 * budget: I/O did not want the thread. A budget of UINT64_MAX has no end. */
size_t run_tasks_in_budget(struct loop *l, uint64_t began_ns, uint64_t budget_ns, bool io_idle)
{
    struct task t;
    uint64_t deadline = budget_ns >= UINT64_MAX - began_ns ? UINT64_MAX : began_ns + budget_ns;
    uint64_t now = now_ns();
    size_t ran = 0;

    while ((now < deadline || (io_idle && ran == 0)) && ring_take(l, &t, 1) == 1) {
        now = run_timed(l, t.fn, t.arg);
        ran++;
    }
    return ran;
}

/* Step 3: the tasks' phase, and what it leaves on the loop's counters.
 * What it overran is owed (carried_task_budget_ns); after an idle I/O
 * step its time is counted apart (task_idle_ns: ioRatio had nothing to
 * share) and not owed. */
void run_tasks(struct loop *l, uint64_t began_ns, uint64_t budget_ns, bool io_idle)
{
    size_t ran = run_tasks_in_budget(l, began_ns, budget_ns, io_idle);
    uint64_t took = now_ns() - began_ns;
    probe_loop_tasks_ran(&l->probe, ran, took, io_idle);
    if (!io_idle && budget_ns != UINT64_MAX && took > budget_ns)
        bump(&l->task_overrun_ns, took - budget_ns);   /* owed */
    /* ioRatio 100 gives tasks no limit: a steady flood starves I/O. */
    if (budget_ns == UINT64_MAX && took >= LOOP_STARVING_IO_MS * 1000000ull &&
        !atomic_load_explicit(&l->stopping, memory_order_relaxed))
        probe_loop_starved_io(&l->probe, took);
}
