static void offload_done(void *arg)
{
    /* TODO(lab 04): back on the loop's thread with an offloaded line's
     * reply (arg is the struct offload). Loop thread.
     *
     * If the client left meanwhile (the channel is CHANNEL_CLOSED), free
     * the channel and the task. Else the channel leaves CHANNEL_OFFLOADED
     * (input_state), and a new batch begins (batch_begin, from the task's
     * read_ns): the reply goes to the channel's output (append_out; out
     * of memory ends the channel with ECHO_END_NO_MEMORY), is counted
     * (ch->lines, batch_count), the task is freed, and the lines that
     * waited behind it go on (process_lines, then settle): that is what
     * keeps the replies in order.
     */
    (void)arg;
}
