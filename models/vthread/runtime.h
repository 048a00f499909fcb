/* runtime.h -- virtual threads on carrier threads (M:N), the runtime.
 *
 * A virtual thread is a function with a stack of its own (stack.h) that
 * runs on one of a few real threads, its carrier, until it must wait;
 * then it parks: it saves itself (switch.h) and the carrier runs the next
 * one. Each carrier is an epoll loop with a run queue, as a worker of the
 * multi-reactor is; what differs is what the loop calls. A reactor calls
 * a handler that returns; a carrier switches into a virtual thread that
 * goes on where it parked, in the middle of its function, so the handler
 * is written in blocking style: read, answer, write.
 *
 *    acceptor --spawn, round robin--> carrier-0: epoll + run queue: vt-1 vt-3 ...
 *                                     carrier-1: epoll + run queue: vt-2 vt-4 ...
 *    monitor: a carrier stuck in a blocking call past --handoff-ms
 *             gets a spare thread that takes over its epoll and run queue
 *
 * A virtual thread belongs to one carrier for its life, and a carrier's
 * epoll, run queue and deadlines are touched only by the thread that
 * holds the carrier's token (its home thread, or a spare standing in):
 * no locks on the hot path. A blocking call (!sleep) gives the token up
 * (unless --pin); the monitor hands a token nobody took back within
 * --handoff-ms to a spare thread (Go's sysmon, Loom's compensation), which
 * gives it back, and ends, once the call has returned.
 *
 * Threads: vt_runtime_* from the thread that owns the runtime (the
 * server's), vt_spawn from any thread; vt_read, vt_write_all, vt_yield
 * and vt_blocking_* from inside a virtual thread only, on itself.
 */
#ifndef THREADLAB_VTHREAD_RUNTIME_H
#define THREADLAB_VTHREAD_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "probe/board.h"

#define VT_HANDOFF_MS_DEFAULT 20     /* --handoff-ms */

struct vt_runtime;
struct vthread;

/* What a virtual thread runs; returning ends it. */
typedef void (*vt_main_fn)(struct vthread *self, void *arg);

struct vt_runtime_opts {
    int carriers;             /* carrier threads; 0: one per core */
    size_t stack_bytes;       /* each virtual thread's stack; 0: 64 KiB */
    int handoff_ms;           /* a blocking call this long gets its carrier
                                 handed to a spare thread */
    bool pin;                 /* a blocking call keeps its carrier: no handoff */
    struct board *board;      /* may be NULL */
};

/* The default carrier count: the cores. Any thread. */
int vt_default_carriers(void);

/* ---- the runtime (its owner's thread) ---- */

/* Start the carriers and the monitor. NULL with errno set on failure. */
struct vt_runtime *vt_runtime_start(const struct vt_runtime_opts *o);

/* A new virtual thread named "vt-<id>" running main(self, arg), on the
 * next carrier (round robin). fd, if not -1, is put in nonblocking mode
 * and watched by that carrier's epoll for vt_read and vt_write_all; the
 * virtual thread owns it (closes it before main returns). Returns 0 or
 * -errno (no memory for the stack: nothing was made). Any thread. */
int vt_spawn(struct vt_runtime *rt, int fd, uint64_t id, vt_main_fn main, void *arg);

/* Spare carriers the monitor has started so far. Any thread. */
uint64_t vt_runtime_handoffs(struct vt_runtime *rt);

/* Virtual threads alive now. Any thread. */
uint64_t vt_runtime_live(struct vt_runtime *rt);

/* A stop begins: from now vt_stopping is true, and every virtual thread
 * parked in a vt_read that a stop may cut short is resumed. Once. */
void vt_runtime_stop_input(struct vt_runtime *rt);

/* Block until every virtual thread has returned. */
void vt_runtime_wait_empty(struct vt_runtime *rt);

/* End the carriers, the monitor and any spare, and free. Once no virtual
 * thread is left. */
void vt_runtime_free(struct vt_runtime *rt);

/* ---- inside a virtual thread, on itself (the calling thread runs self) ---- */

/* Its name ("vt-17"), and where it runs ("vt-17@carrier-1", for !who). */
const char *vt_name(const struct vthread *self);
const char *vt_where(const struct vthread *self);
struct board_thread_ref *vt_on_board(struct vthread *self);
struct board *vt_board(const struct vthread *self);

/* Its fd (what vt_spawn was given), and its number. */
int vt_fd(const struct vthread *self);
uint64_t vt_id(const struct vthread *self);

/* Has a stop begun? */
bool vt_stopping(const struct vthread *self);

/* read() from self's fd; on EAGAIN park until the fd is ready, then try
 * again. deadline_ns (0: none) ends the wait with -ETIMEDOUT; with
 * stop_cuts, a stop ends it with -ECANCELED. Returns bytes, 0 at EOF, or
 * -errno. */
ssize_t vt_read(struct vthread *self, void *buf, size_t len,
                uint64_t deadline_ns, bool stop_cuts);

/* Write all of iov[0..count) to self's fd (iov is advanced), parking on
 * EAGAIN; a wait longer than stall_ms (0: no limit) fails with -EAGAIN.
 * Returns 0 or -errno. */
int vt_write_all(struct vthread *self, struct iovec *iov, int count, int stall_ms);

/* Go to the back of the carrier's run queue: the others run first. */
void vt_yield(struct vthread *self);

/* Around a real blocking call (a sleep): without --pin the carrier is
 * given up for the call's length, and handed to a spare after
 * --handoff-ms; with --pin every virtual thread of the carrier waits. */
void vt_blocking_begin(struct vthread *self);
void vt_blocking_end(struct vthread *self);

/* Close self's fd now. */
void vt_close(struct vthread *self);

/* Close self's fd so that the last reply is read, not lost to a reset:
 * shut the write side, drop input until EOF or linger_ms without the peer
 * taking output (as net_lingering_close, parking instead of blocking). */
void vt_lingering_close(struct vthread *self, int linger_ms);

#endif
