uint64_t loop_task_budget_ns(uint64_t io_ns, int io_ratio_pct)
{
    /* TODO(lab 07): Netty's ioRatio. Any thread; pure.
     *
     * The loop just spent io_ns on I/O; io_ratio_pct percent of its busy
     * time should be I/O, the rest tasks. Return how long tasks may run
     * now, in nanoseconds: the time that, added to io_ns, makes io_ns
     * exactly io_ratio_pct percent of the sum, rounded down to a whole
     * nanosecond (1000 ns at 33 gives 2030, not 2031). Whole-number
     * arithmetic loses what it divides away first; io_ns stays below
     * 2^40 ns. The check draws ratios from 1 to 99 and I/O times at
     * random (its seed is in its message). At 100, without limit
     * (UINT64_MAX), as in Netty 4.1. (The stub gives tasks no time: while
     * I/O is busy they never run; only iterations without I/O run a few.)
     */
    (void)io_ns;
    (void)io_ratio_pct;
    return 0;
}
