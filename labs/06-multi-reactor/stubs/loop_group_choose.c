int loop_group_choose(unsigned counter, int size, bool power_of_two)
{
    /* TODO(lab 06): the chooser. Any thread; pure (no state of its own).
     *
     * Return the loop, 0 to size - 1, that the counter-th connection goes
     * to, so that the loops take connections in turn (round robin, as
     * Netty's EventExecutorChooser). The result is always in range, even
     * for a counter past UINT_MAX's wrap; for a power-of-two size the turn
     * also goes on unbroken across the wrap (for other sizes it cannot:
     * 2^32 is not a multiple of them). power_of_two says size is a power
     * of two: then do it without a division (Netty's
     * PowerOfTwoEventExecutorChooser). Any other size must still reach
     * every loop.
     */
    (void)counter;
    (void)size;
    (void)power_of_two;
    return 0;
}
