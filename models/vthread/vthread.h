/* vthread.h -- model 5: virtual threads, blocking-style code on a few
 * carrier threads (M:N), as Go's goroutines and Java 21's virtual threads.
 *
 * Usable as a library (the tests run it in-process) and as `threadlab
 * serve vthread`. See docs/models/vthread.md.
 */
#ifndef THREADLAB_VTHREAD_H
#define THREADLAB_VTHREAD_H

#include <stdint.h>

#include "server.h"

struct vthread_server;

/* Listen, start the carriers, the monitor and the acceptor. Returns the
 * server, or NULL with errno set. Any thread. */
struct vthread_server *vthread_start(const struct server_opts *opts);

/* The port it listens on. Any thread. */
uint16_t vthread_port(const struct vthread_server *s);

/* Spare carriers the monitor has started so far (handoffs). Any thread. */
uint64_t vthread_handoffs(struct vthread_server *s);

/* Graceful stop: stop accepting, let every virtual thread answer the
 * lines already received, flush, close, end every thread, free. Any
 * thread but the server's own. */
void vthread_stop(struct vthread_server *s);

#endif
