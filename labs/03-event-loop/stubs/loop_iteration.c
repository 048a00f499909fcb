static void loop_iteration(struct loop *l)
{
    /* TODO(lab 03): one iteration of the loop, its heart. Loop thread.
     *
     * Write it as a list of steps, one static function each, so that a
     * reader can say them aloud (libuv's uv_run reads this way): wait for
     * I/O and handle what is ready (poll_io, run_io: yours too), fire the
     * due timers (run_due_timers), run queued tasks (run_tasks), show the
     * iteration on the board. Given: run_due_timers, run_tasks,
     * carried_task_budget_ns.
     *
     * What must hold:
     *   - The loop never sleeps while it has work: not while a task is
     *     queued or a watch asked to be resumed, and not past the next
     *     timer's deadline. A task queued by another thread while the loop
     *     sleeps wakes it; the eventfd is written only for a loop that may
     *     be asleep (the wakeup rule: see the top of this file, and
     *     loop_execute, which you also write).
     *   - ioRatio: timers and tasks together get about
     *     io_ns * (100 - ratio) / ratio after I/O took io_ns (ratio 100:
     *     all of them); what a phase overran is owed and paid from the next
     *     budgets (carried_task_budget_ns keeps that account). After an I/O
     *     step with nothing to do, tasks still run (one at least), so a
     *     task queued to an idle loop never waits for I/O.
     *   - Every handler and task is timed for the blocked-thread checker
     *     (busy_since_ns marks it while it runs).
     *
     * Board: the loop tells its probe (l->probe, models/probe/probe_loop.h)
     * what it does as it goes, one call per event, never the board itself:
     * the board then shows its phase (waiting, io, tasks) and its thread
     * state (waiting while it may block, running otherwise), counts io_ns,
     * task_ns and iterations, and publishes the loop slot once per
     * iteration.
     */
    (void)poll_io;
    (void)run_io;
    (void)run_due_timers;
    (void)run_tasks;
    (void)l;
    (void)carried_task_budget_ns;
    struct timespec nap = { 0, 1000000 };
    nanosleep(&nap, NULL);
}
