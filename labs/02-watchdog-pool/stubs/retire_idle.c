static uint64_t retire_idle(struct pool *p, uint64_t now)
{
    /* TODO(lab 02): shrink. Thread: the watchdog, p->lock held.
     *
     * End (retire_task_thread, with its reason: enum pool_resize) each task
     * thread that is idle, has no task handed to it, and has been idle
     * for idle_ms or more (it is due at idle_since_ns + idle_ms, in ns:
     * at that very instant, so the watchdog woken then ends it rather than
     * sleeping again), while the pool stays at or above its current
     * minimum: p->min_now, which --adaptive moves; o.min_threads is only
     * its floor. A thread that is running, or has a task waiting for it,
     * is never ended. Return when the next idle thread will be due, so
     * the watchdog can sleep until then; 0 when none will be.
     */
    (void)p;
    (void)now;
    (void)retire_task_thread;
    return 0;
}
