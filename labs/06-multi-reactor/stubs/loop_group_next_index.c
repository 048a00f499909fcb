int loop_group_next_index(struct loop_group *g)
{
    /* TODO(lab 06): the turn. Any thread: every boss of the group calls
     * it, for every connection it accepts, at the same time as the others.
     *
     * Return the index into g->loops of the loop that the next connection
     * goes to: the n-th call on this group, counting the calls of every
     * thread together, gets loop_group_choose(n, ...), so that the workers
     * take connections in one turn whichever boss accepted them. No two
     * calls get the same n and none is lost, without a lock (this is on
     * the accept path). The group's fields are in group.h.
     */
    (void)g;
    return 0;
}
