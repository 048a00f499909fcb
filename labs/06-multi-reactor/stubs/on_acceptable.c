        /* TODO(lab 06): the hand-off. Thread: the boss's loop.
         *
         * The connection (fd, in h with its worker w, its id and whether
         * it is refused) now belongs to w: from here on only w's loop
         * thread may touch it, so register_task(h) must run on that
         * thread, never on the boss's. When the boss and the worker are
         * one loop (the single reactor) it runs at once. Once w has it,
         * the boss never touches h or the fd again, not even to free them.
         * If w's loop does not take it (its task queue is full, or it has
         * ended), nothing may leak and nothing may stay counted: the fd,
         * h, and the slot added to s->open_channels above are all given
         * back (release_open_slot), and the loss is counted on the board
         * (count_lost_handoff).
         */
        (void)h;
        (void)register_task;
        (void)release_open_slot;
