size_t run_tasks_in_budget(struct loop *l, uint64_t began_ns, uint64_t budget_ns, bool io_idle)
{
    /* TODO(lab 07): the tasks' phase. Loop thread.
     *
     * Run queued tasks while the budget lasts, and return how many ran.
     * You decide what to measure and when: where does this iteration's
     * budget begin (the timers ran before the tasks, out of the same
     * budget), and how often must the phase look at the clock so that it
     * never runs more than one task past its budget? Three more rules:
     * after an I/O step that found nothing to do (io_idle) one task runs
     * whatever the budget, because I/O did not want the thread; a budget
     * of UINT64_MAX never ends (ioRatio 100); and a phase with no budget
     * left after busy I/O runs nothing.
     *
     * ring_take(l, &task, 1) takes the oldest queued task (it returns 1,
     * or 0 when the queue is empty); run_timed(l, task.fn, task.arg) runs
     * it and returns the clock as the task ended; now_ns() reads the
     * clock. The stub runs every queued task, with no budget at all.
     */
    struct task next;
    size_t done = 0;
    (void)began_ns;
    (void)budget_ns;
    (void)io_idle;
    while (ring_take(l, &next, 1) == 1) {
        run_timed(l, next.fn, next.arg);
        done++;
    }
    return done;
}
