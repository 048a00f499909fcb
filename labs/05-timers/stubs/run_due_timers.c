static void run_due_timers(struct loop *l, uint64_t now)
{
    /* TODO(lab 05): fire the timers that are due. Loop thread.
     *
     * Every timer whose deadline has passed leaves the heap (heap_peek,
     * heap_pop), earliest first, and runs once (run_timed), counted in
     * timers_fired; a cancelled one (its state is not TIMER_PENDING) does
     * not run. Every reference is released exactly once (timer_unref):
     * the loop's hold when the timer is done, and an extra one held while
     * its callback runs, since the callback or another thread may cancel
     * it meanwhile (a one-shot becomes TIMER_FIRED by compare-and-swap).
     * A fixed-rate timer still pending goes back on the heap one period
     * after its deadline (not after now: no drift). Timers due while a
     * callback ran fire too (read the clock again).
     */
    (void)l;
    (void)now;
    (void)from_node;
    (void)timer_unref;
}
