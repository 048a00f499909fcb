enum echo_end conn_serve(const struct conn_server *srv, struct conn *c,
                         const char *thread_name,
                         struct board_thread_ref *me, uint64_t *lines)
{
    /* TODO(lab 01): the connection thread's life. Thread: this
     * connection's own (BIO), or the pool task thread serving it.
     *
     * Serve c until the client leaves, and return why it ended (an
     * echo_end): every complete line answered, byte for byte and in
     * order, however the bytes were split over reads (the session does
     * the decoding: echo_session_*); !cpu and !sleep done here, blocking
     * (echo_do_work: a thread of our own may block). It ends on EOF, a
     * reset, a failed or stalled write (--stall-timeout, SO_SNDTIMEO),
     * !quit, a line too long, and the idle and line timeouts
     * (input_deadline, wait_readable). When wait_readable says a stop
     * began, answer only what the kernel held then (net_bytes_held), and
     * end. *lines is how many lines were answered. Given: answer_lines
     * answers a read's complete lines, their replies written together;
     * set_stall_timeout and publish_read.
     *
     * Board: the thread is blocked in I/O while it waits for input,
     * blocked in sleep during !sleep, running otherwise; lines and bytes
     * are counted once per read (board_add, board_thread_lines), each
     * reply's latency recorded, each error reply counted by kind.
     */
    (void)srv;
    (void)c;
    (void)thread_name;
    (void)me;
    (void)wait_readable;
    (void)input_deadline;
    (void)answer_lines;
    (void)set_stall_timeout;
    (void)publish_read;
    *lines = 0;
    return ECHO_END_EOF;
}
