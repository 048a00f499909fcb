        /* TODO(lab 06): the boss's side of the hand-off. Thread: this
         * boss's loop.
         *
         * The connection (fd, id) goes to worker w, and from the moment
         * w has it only w's loop thread touches it: register_task runs
         * there, queued with loop_run_in_loop, never on this thread (when
         * the boss and the worker are one loop, the single reactor, it
         * runs at once). Before w can see
         * it, it holds a place in s->open_channels (guarded by
         * s->stop_lock): --max-conns reads that count, and a graceful stop
         * waits for it to reach 0. A connection over the limit is handed
         * over all the same, marked to be refused, and the board says why
         * (through the probe, models/probe/probe.h: one call, never
         * board_*). A hand-off that fails (no memory; w's task queue full,
         * or its loop ended) leaves nothing behind, neither the fd nor the
         * memory nor the place, and is counted on the board
         * (count_lost_handoff). Once w has it, the boss never touches it
         * again, not even to free it.
         */
        (void)register_task;
        (void)count_lost_handoff;
        close(fd);                      /* until then: nobody serves it */
