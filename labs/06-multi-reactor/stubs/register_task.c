static void register_task(void *arg)
{
    /* TODO(lab 06): the worker's side of the hand-off. Thread: the loop of
     * the worker the connection was handed to, and no other (a task that
     * the boss queued there).
     *
     * arg is the boss's struct handoff, now this worker's to free. When
     * this returns, the connection is either a channel of this loop, in
     * this worker's list of channels (the one the stop walks), or gone
     * without a trace: its fd closed, its place in open_channels given
     * back, and the loss counted on the board. Nothing of the hand-off
     * outlives this call. A connection marked refuse is a channel too:
     * the client is told "!err busy" and the connection closes without
     * ever blocking this loop. channel.h gives what you need.
     */
    (void)arg;
}
