static void check_deadlines(void *arg)
{
    /* TODO(lab 05): the channel's one timer (arg is the channel). Loop
     * thread: the channel's own loop, so nothing here needs a lock.
     *
     * Netty's IdleStateHandler, for three timeouts at once: a channel that
     * has read nothing for --idle-timeout ends with ECHO_END_IDLE; one
     * whose partial line is older than --line-timeout (a slowloris) with
     * ECHO_END_LINE_TIMEOUT; one whose output has not drained for
     * --stall-timeout (a client that never reads) with ECHO_END_STALLED.
     * A timeout that is off (0) never ends anything.
     *
     * What must hold: reads and writes only note the time (last_read_ns,
     * partial_since_ns, last_drain_ns); this timer, the only one a channel
     * has, decides. It never ends a channel before its deadline, and a
     * channel that lives on always has its timer armed again for the
     * earliest deadline still ahead (rearm_deadline), also while it
     * lingers or is offloaded, which no timeout may end. The handle it
     * fired through is its own to give back (loop_timer_release), once.
     *
     * Board: each end is counted by its kind (channel_end does that), so
     * a timeout ends a channel with its own reason: a slow line or a
     * stall is no idle channel. A lingering channel ends when its linger
     * does (linger_expired), not at a timeout.
     */
    (void)arg;
    (void)rearm_deadline;
}
