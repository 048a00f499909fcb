static void offload_done(struct promise *done, void *arg)
{
    /* TODO(lab 04): the listener of an offloaded line's promise (Netty's
     * listener on a business executor's future). Loop thread: it runs on
     * the channel's own loop, so it may touch the channel.
     *
     * The contract: if the client left meanwhile, nothing is written and
     * nothing leaks. Otherwise the channel is no longer waiting for a
     * business thread, the offloaded line's reply goes out before any
     * reply to the lines that waited behind it, and those lines are then
     * answered as if they had just been read (they are counted on the
     * board like any other line). Out of memory ends the channel, counted.
     */
    (void)done;
    (void)arg;
}
