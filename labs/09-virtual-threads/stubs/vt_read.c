ssize_t vt_read(struct vthread *self, void *buf, size_t len,
                uint64_t deadline_ns, bool stop_cuts)
{
    /* TODO(lab 09): the read that parks. Inside self, on its carrier.
     *
     * Read up to len bytes of self's fd (nonblocking) into buf, and return
     * what the read said: bytes, 0 at the end of input, or -errno. When
     * there is nothing to read yet, self waits without holding its carrier
     * (every other vthread of that carrier goes on running meanwhile), and
     * tries again once epoll says the fd is readable. The wait may end for
     * two other reasons, said to the caller as -ETIMEDOUT (deadline_ns
     * passed; 0 is no deadline) and -ECANCELED (a stop began, and
     * stop_cuts says a stop may end this wait).
     *
     * errno is per kernel thread, and self may come back on another one
     * than it left on: take errors as return values (net/net.h's net_read
     * returns -errno).
     *
     * The stub says every connection has ended at once.
     */
    (void)self;
    (void)buf;
    (void)len;
    (void)deadline_ns;
    (void)stop_cuts;
    return 0;
}
