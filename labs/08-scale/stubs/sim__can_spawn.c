bool sim__can_spawn(const struct sim *s)
{
    /* TODO(lab 08): the machine's thread limit. Simulator thread; pure.
     *
     * May a new thread be made now? Not when --max-threads is set (not 0)
     * and that many threads are alive already (s->m.live): then
     * pthread_create fails, and BIO must refuse the connection. This is
     * what breaks BIO at 100 000 connections.
     */
    (void)s;
    return true;
}
