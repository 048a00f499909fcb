static void *watchdog_main(void *arg)
{
    /* TODO(lab 02): the watchdog's loop: the pool's one scheduler.
     *
     * Thread: the watchdog, for the pool's whole life (pool_create starts
     * it, pool_shutdown joins it). It holds p->lock except while it waits
     * (watchdog_wait) or joins ended threads (join_ended).
     *
     * What must hold:
     *   - Every queued task reaches a task thread: an idle one first; none
     *     idle and size below max, a new one; at max the task waits and
     *     the watchdog sleeps until a thread frees up. A thread holds at
     *     most one task; the watchdog never runs a task itself.
     *   - The watchdog never sleeps while a task could be handed out, and
     *     never spins: it sleeps until it is signalled or until its next
     *     duty is due (the next adaptive sample, the next idle thread to
     *     end). The check counts the watchdog thread's wakeups and CPU
     *     time while the pool is idle: polling, even every millisecond,
     *     fails it.
     *   - Nothing queued: idle threads above the current minimum end after
     *     idle_ms (retire_idle). With --adaptive the minimum moves with the
     *     queue (sample_queue), sampled on time even while all are busy.
     *   - Shutdown (p->shutting_down): with p->drain the queued tasks still
     *     run, without it they are left; then every task thread gets a
     *     NULL task once idle, and all are joined before this returns.
     *
     * Board: through the pool's probe (p->probe, models/probe/probe_pool.h,
     * one call per event, never board_*), the watchdog is a thread on the
     * board (ROLE_WATCHDOG, "watchdog"), waiting while it sleeps, ended
     * when it returns; every grow and shrink is an event with its reason
     * (enum pool_resize, probe/probe_pool.h: the helpers pass it on).
     */
    struct pool *p = arg;
    (void)p;
    (void)join_ended;
    (void)sample_queue;
    (void)find_idle;
    (void)dispatch;
    (void)spawn_task_thread;
    (void)watchdog_wait;
    (void)retire_idle;
    return NULL;
}
