static size_t read_input(const struct conn_server *srv, struct conn *c,
                         struct board_thread_ref *me, struct serving *sv,
                         enum echo_end *end)
{
    /* TODO(lab 01): one blocking read. The serving thread.
     *
     * Wait (await_input), then read once into the session's free space.
     * Returns the bytes read, or 0 with *end set when the connection ends:
     * the client's EOF, a reset, another read error, no memory for the
     * session's buffer, or what await_input said. After a stop, never
     * read past the bytes that were held when it began.
     *
     * Board: the thread is blocked in I/O from here until bytes come.
     */
    (void)srv;
    (void)c;
    (void)me;
    (void)sv;
    (void)await_input;
    *end = ECHO_END_EOF;
    return 0;
}
