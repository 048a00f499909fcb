enum vt_wake vt__park(struct vthread *self, uint32_t events, uint64_t deadline_ns,
                      bool stop_cuts)
{
    /* TODO(lab 09): the park. Inside self, on its carrier (self holds the
     * carrier's token while it runs: the "token" fields of carrier.h are
     * yours to touch).
     *
     * self stops running here and its carrier's loop goes on; self goes
     * on from here, later, when the loop has made it runnable again and
     * switched back into it, and the return value says why it was
     * resumed (self->woke, set by whoever resumed it):
     *   - VT_WAKE_READY: events (EPOLLIN or EPOLLOUT) came on its fd.
     *     The carrier's epoll has self->fd registered one-shot, with
     *     self as its data, and disarmed: it reports nothing until asked,
     *     and after reporting once it is disarmed again by the kernel.
     *     self->interest says what it is armed for now (0: nothing). If
     *     the registration cannot be armed, no event will ever come:
     *     shut the socket and return at once, so the caller sees the end.
     *   - VT_WAKE_DEADLINE: deadline_ns (0: none) passed. The carrier
     *     keeps its parked vthreads' deadlines in c->deadlines (a heap of
     *     self->deadline nodes) and resumes those that pass.
     *   - VT_WAKE_STOP: a stop began, and stop_cuts says it may end this
     *     wait. The carrier resumes, once, those parked with stop_cuts
     *     when it reads the stop (c->stop_seen); one that parks after
     *     that would wait for ever.
     * events may be 0 (a wait with no fd): then only the other two end it.
     *
     * While parked, self's state is VT_PARKED (the carrier resumes only
     * those), stop_cuts is remembered in self, and the probe hears that
     * it is blocked on I/O (models/probe/probe.h, one call, never
     * board_*). Leaving: switch.h's vt_switch,
     * from self's context to the scheduler context of the runner that
     * switched into it (self->runner->sched).
     *
     * The stub returns at once: its caller tries again, and again.
     */
    (void)self;
    (void)events;
    (void)deadline_ns;
    (void)stop_cuts;
    return VT_WAKE_READY;
}
