void carrier__ready(struct carrier *c, const struct epoll_event *ev, int n)
{
    /* TODO(lab 09): the resume, after epoll_wait. The runner holding c's
     * token, in c's loop (carrier.c's carrier_poll), with the n events
     * epoll_wait gave it in ev (n may be -1: the wait was interrupted).
     *
     * An event whose data is NULL is c's wake eventfd: it says the mail
     * or the token wants the loop, and only needs emptying
     * (carrier__drain_wake). Any other event's data is a vthread of c
     * whose one-shot registration has just fired, and is now disarmed.
     * Each vthread parked waiting for its fd becomes runnable, on its
     * own carrier, with VT_WAKE_READY (carrier__resume does the run
     * queue, the deadline and the board). A vthread that is not parked
     * any more (a deadline or a stop resumed it first) is not resumed
     * twice.
     *
     * The stub only empties the eventfd: it makes nothing runnable.
     */
    for (int i = 0; i < n; i++)
        if (!ev[i].data.ptr)
            carrier__drain_wake(c);
}
