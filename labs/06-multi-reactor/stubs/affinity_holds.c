bool affinity_holds(uint16_t port, int workers, char *why, size_t why_bytes)
{
    /* TODO(lab 06): the proof of affinity, as code. Thread: the test's.
     *
     * What it must establish, and how it answers, is affinity_proof.h's
     * contract: the i-th connection on worker i mod workers, and every
     * line of a connection answered by that one thread, whatever the
     * other connections do. The grader runs it against a multi-reactor
     * (it must hold) and against servers with a flaw each, flaws that a
     * real server could have (it must find every one, and say what it
     * saw): think of how a chooser, a hand-off or a channel can go wrong
     * and still answer every line. ask_who() and refuted() are yours.
     */
    (void)port;
    (void)workers;
    (void)ask_who;
    return refuted(why, why_bytes, "not written yet (TODO(lab 06))");
}
