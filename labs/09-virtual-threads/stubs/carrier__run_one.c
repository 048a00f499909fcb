void carrier__run_one(struct carrier *c, struct runner *r, struct vthread *vt)
{
    /* TODO(lab 09): run one vthread of the run queue. Runner r's own
     * thread, holding c's token; vt was just taken off c's run queue.
     *
     * Switch into vt (switch.h's vt_switch, from r->sched to vt's
     * context) and come back when it parks, yields, blocks or ends. While
     * it runs, vt->state is VT_RUNNING, vt->runner is r (that is where
     * vt switches back to), the probe hears that it runs, and stack.h's
     * overflow report knows which stack is running (vt_stack_running;
     * NULL, NULL once back).
     *
     * A vthread whose main returned comes back VT_DONE, for good: its
     * stack is unmapped and the rest of it forgotten (carrier__forget:
     * its list, its board slot, its context, its memory, the live count).
     * It could not free them itself.
     *
     * The stub never runs anything.
     */
    (void)c;
    (void)r;
    (void)vt;
}
