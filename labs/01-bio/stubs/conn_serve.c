enum echo_end conn_serve(const struct conn_server *srv, struct conn *c,
                         const char *thread_name,
                         struct board_thread_ref *me, uint64_t *lines)
{
    /* TODO(lab 01): the connection thread's life. Thread: this
     * connection's own (BIO), or the pool task thread serving it; it may
     * block, since no other connection waits for it.
     *
     * Serve c until it ends and return why (an echo_end); *lines is how
     * many lines were answered in all. Every complete line is answered,
     * byte for byte and in order, however its bytes were split over reads
     * (the session, echo_session_*, cuts the lines). The connection ends
     * on EOF, a reset, a failed or stalled write (--stall-timeout),
     * !quit, a line too long, the idle timeout (nothing read for
     * --idle-timeout) and the line timeout (a partial line older than
     * --line-timeout). When a stop begins, the lines among the bytes the
     * kernel held at that moment are still answered; nothing after them.
     * Every end leaves the session freed (conn_finish closes the fd).
     *
     * Written beside it, also yours: await_input (the stop and the
     * timeouts), read_input (one blocking read), answer_read (what one
     * read's bytes lead to); struct serving is what they share (the thread's
     * name and board row, the lines answered, the session, the clocks, and
     * the reply batch, which writes to c's fd and times on srv's board).
     * Given: answer_lines, set_stall_timeout, and
     * conn_registry_enter / conn_registry_leave: c must be on the registry's serving list while this
     * thread serves it (a stop signals the threads on it), and off it
     * before conn_serve returns.
     *
     * Board (through the probe, models/probe/probe.h): the thread is
     * blocked in I/O while it waits for input, running while it answers;
     * bytes and lines are counted once per read.
     */
    (void)srv;
    (void)c;
    (void)thread_name;
    (void)me;
    (void)read_input;
    (void)answer_read;
    (void)set_stall_timeout;
    (void)conn_registry_enter;
    (void)conn_registry_leave;
    *lines = 0;
    return ECHO_END_EOF;
}
