static void check_deadlines(void *arg)
{
    /* TODO(lab 05): the channel's one timer (arg is the channel). Loop
     * thread.
     *
     * Netty's IdleStateHandler, for three timeouts: a channel that has
     * read nothing for --idle-timeout ends with ECHO_END_IDLE; one with a
     * partial line older than --line-timeout (a slowloris) with
     * ECHO_END_LINE_TIMEOUT; one whose output has not drained for
     * --stall-timeout with ECHO_END_STALLED. Reads and writes only note
     * the time (last_read_ns, partial_since_ns, last_drain_ns); this timer
     * does the rest, and is re-armed (rearm_deadline) for the earliest
     * deadline still ahead, also while the channel lingers or is
     * offloaded. It releases its own handle (loop_timer_release) first.
     */
    (void)arg;
    (void)rearm_deadline;
}
