static void offload_run(void *arg, struct pool_thread *self)
{
    /* TODO(lab 04): the business task of an offloaded line.
     *
     * Thread: a business thread (self; NULL if the pool made the caller
     * run it). arg is the struct offload: it holds everything this thread
     * may read. The channel belongs to its loop's thread: never touch it
     * here, not even to read its state.
     *
     * What must hold:
     *   - The line's slow work (!cpu, !sleep) runs here, on this thread.
     *   - The board shows it: while the line sleeps, this business thread
     *     is blocked in its sleep and the loop is not; afterwards it is
     *     running again.
     *   - An offloaded !who names this thread, in the session's own words
     *     (answer_who_here).
     *   - The reply reaches the channel only through the promise: its
     *     listener (offload_done) runs on the loop once the promise is
     *     complete. Completing it is the last touch of the offload: the
     *     listener may free it at that very moment. This thread holds one
     *     reference to the promise, and gives it back.
     */
    (void)arg;
    (void)self;
    (void)answer_who_here;
}
