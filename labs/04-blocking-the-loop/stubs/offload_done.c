static void offload_done(struct promise *done, void *arg)
{
    /* TODO(lab 04): the listener of an offloaded line's promise (Netty's
     * listener on a business executor's future).
     *
     * Thread: the channel's own loop (the promise was made there), so this
     * is the one place an offloaded line may touch its channel again. arg
     * is the struct offload; from now on it is this function's to free.
     *
     * What must hold afterwards:
     *   - The client left while the line was away (the channel is
     *     CLOSED): nothing is written, the channel and the offload are
     *     freed, nothing else is touched.
     *   - Otherwise the channel no longer waits for a business thread: it
     *     goes where its input says (a stop that came meanwhile ended the
     *     input, and must stay ended: the channel then answers what it
     *     holds and closes, it never reads again).
     *   - Per-connection order: the offloaded line's reply goes out before
     *     the reply to any line that waited behind it; those lines are then
     *     answered as in a wakeup, under the same budget.
     *   - The board counts the offloaded line like any other answered
     *     line (lines, handling time from its read). Out of memory ends the
     *     channel, counted as such.
     */
    (void)done;
    (void)arg;
}
