void run_due_timers(struct loop *l, uint64_t now)
{
    /* TODO(lab 05): fire the timers that are due. Loop thread: the heap
     * is the loop's alone (struct loop_timer, timer_heap.h).
     *
     * What must hold when it returns:
     *   - Every pending timer whose deadline is at or before now has run
     *     once, earliest deadline first (run_timed, so the blocked-thread
     *     checker sees it), and is told to the loop's probe (l->probe,
     *     models/probe/probe_loop.h: it counts timers_fired). None ran
     *     early.
     *   - It returns, whatever the callbacks do, and no timer runs twice
     *     in one call: a timer that falls due while they run waits for the
     *     next iteration, and so does a fixed-rate timer whose next
     *     deadline is already past when it is re-armed (it fell behind).
     *     Such a timer catches up one run per iteration, with the loop's
     *     I/O and tasks between its runs; the probe hears of each of
     *     those runs (timers_late). (A loop held here runs no I/O and no task.)
     *     struct loop_timer has a field, `again`, that is yours to use.
     *   - A cancelled timer (its state is not TIMER_PENDING) never runs.
     *   - A fixed-rate timer still pending is back in the heap, due one
     *     period after the deadline it just had (not after now: no drift).
     *   - A one-shot that ran is TIMER_FIRED, so a later cancel reports
     *     that it stopped nothing; one cancelled meanwhile (by its own
     *     callback, or another thread: loop_timer_cancel) stays cancelled.
     *   - References (timer_unref): a timer holds one for its handle and
     *     one for the loop. Each is dropped exactly once, the loop's when
     *     the timer is done, and the memory is never touched after the
     *     last one: a callback, or another thread, may cancel the timer
     *     and drop the handle while it runs. The last one frees the timer
     *     (loop_timers_alive counts those not freed yet: a reference never
     *     dropped shows there, and the check reads it). A cancel's removal task
     *     (timer_remove_task) drops only its own reference when it finds
     *     the timer out of the heap.
     */
    (void)l;
    (void)now;
    (void)from_node;
    (void)timer_unref;
}
