static void offload_run(void *arg, struct pool_thread *self)
{
    /* TODO(lab 04): on a business thread (arg is the struct offload; self
     * is NULL if the caller ran it). Business thread only: the channel
     * belongs to its loop's thread, so do not touch it here.
     *
     * The contract: the line's slow work runs here, and while it sleeps
     * the board shows this thread blocked, not the loop; an offloaded !who
     * names this thread (answer_who_here); then the task's promise is
     * completed, so that its listener brings the reply home on the loop,
     * and this thread gives back its reference to the promise.
     */
    (void)arg;
    (void)self;
    (void)answer_who_here;
}
