static bool answer_read(const struct conn_server *srv, struct serving *sv, size_t n,
                        enum echo_end *end)
{
    /* TODO(lab 01): what one read's n bytes lead to. The serving thread.
     *
     * The session takes the bytes, and every line they complete is
     * answered (answer_lines: replies written together, !cpu and !sleep
     * done on this thread). Returns true when the connection ends (*end
     * says why). sv->lines grows by the lines answered (answer_lines counts
     * them in sv->read_lines, from whatever that held). The idle clock
     * restarts at this read. The line clock runs from the first byte of
     * a line not yet complete: it stops when no partial line is left, and
     * a partial line begun after a complete one starts it afresh.
     *
     * Board (through its probe, models/probe/probe.h, one call per event,
     * never board_*): running from this read on; the read's bytes in and
     * out and its lines counted once, after its replies were written.
     */
    (void)srv;
    (void)sv;
    (void)n;
    (void)answer_lines;
    *end = ECHO_END_EOF;
    return true;
}
