static void offload_run(void *arg, struct pool_thread *self)
{
    /* TODO(lab 04): on a business thread (arg is the struct offload).
     *
     * Do the line's slow work (echo_do_work), the thread shown blocked in
     * !sleep on the board while it sleeps (pool_thread_board(self),
     * board_thread_state). Then send the reply home: the channel belongs
     * to its loop's thread, so do not touch it here; queue offload_done
     * on the channel's loop (loop_execute). A full queue (-EAGAIN) is
     * waited out, not dropped: the channel waits for this reply. If the
     * loop no longer takes tasks, free the task.
     */
    (void)arg;
    (void)self;
    (void)offload_done;
}
