static bool await_input(const struct conn_server *srv, struct conn *c,
                        struct serving *sv, enum echo_end *end)
{
    /* TODO(lab 01): may the thread read now? The serving thread, before
     * each read() and again after each EINTR or EAGAIN of it.
     *
     * Returns true when the thread may block in read() (or an EOF or an
     * error is there to report), false with *end set when the connection
     * ends here: a timeout passed (the idle one, or the line one while a
     * partial line waits: input_deadline says which is next, and which
     * end), or a stop began and every byte held at that moment has been
     * read (then *end = ECHO_END_EOF: the stop ends input as a client's
     * EOF would; ECHO_END_STOPPED is the server giving up at its stop
     * timeout, not this). Bytes that come after that moment are never
     * read: the check sends one line after the stop and expects no reply.
     *
     * The stop: until the thread has seen it, it first says it may block
     * in read() (c->phase = CONN_READING, a sequentially consistent store),
     * then loads the registry's flag (srv->conns->stopping); the order is
     * what lets a stop either be seen here or signal the read (see
     * conn_registry_stop_input). The first time the flag is seen, tell the
     * registry (conn_registry_saw_stop), and what the kernel held for c then is
     * what is left to read. The timeouts: a read blocks at most as long as
     * SO_RCVTIMEO says, so arm what is left of the deadline
     * (arm_read_timeout; it costs a syscall only when the value changes).
     * No syscall otherwise: this runs before every read.
     */
    (void)srv;
    (void)c;
    (void)sv;
    (void)input_deadline;
    (void)arm_read_timeout;
    (void)conn_registry_saw_stop;
    *end = ECHO_END_EOF;
    return false;
}
