static void loop_iteration(struct loop *l)
{
    /* TODO(lab 03): one iteration of the loop, its heart. Loop thread.
     *
     * Wait for I/O, no longer than until the next timer and not at all
     * while tasks wait (wait_timeout_ms); then serve every ready watch
     * and every watch resumed before this iteration (take_resumes,
     * run_resumes; a watch served both ways is called once, with
     * LOOP_EV_RESUME); then run due timers and queued tasks for as long
     * as ioRatio allows after the time the I/O took (run_tasks,
     * loop_task_budget_ns). A failed wait is handled by wait_failed.
     *
     * The wakeup rule's other half: `sleeping` is true exactly while the
     * loop may block in epoll_wait, set before it looks at the queue, so
     * no task queued meanwhile is left waiting a whole timeout.
     *
     * Board: the loop's phase (set_phase) and thread state (waiting,
     * running) as it goes; io_ns and iterations counted; busy_since_ns
     * set around each callback (the blocked-thread checker reads it);
     * the loop slot's counters published once per iteration.
     */
    (void)wait_timeout_ms(l);
    (void)set_phase;
    (void)run_tasks;
    (void)wait_failed;
    (void)take_resumes;
    (void)run_resumes;
    (void)resume_pending;
    (void)resume_unlink;
    struct timespec nap = { 0, 1000000 };
    nanosleep(&nap, NULL);
}
