/* loop.h -- the event loop: one thread for the loop's life (Netty's
 * EventLoop, muduo's EventLoop, Redis's ae).
 *
 * A loop owns an epoll instance (the selector), a task queue that any
 * thread may add to, and a heap of timers. Each iteration:
 *
 *   1. wait for I/O, at most until the next timer (not at all if tasks
 *      wait), and handle the ready fds, timing it          -> io_ns
 *   2. fire the due timers                        \  together, for at most
 *   3. run queued tasks                           /  io_ns * (100 - io_ratio) / io_ratio
 *                                                    (io_ratio 100: run them all)
 *   4. publish the iteration's figures on the board
 *
 * loop.c's loop_iteration reads as exactly these steps, one call each
 * (poll_io, run_io, run_due_timers, run_tasks, and the probe's
 * probe_loop_iterated), as libuv's uv_run does.
 *
 * Everything registered on a loop is touched only by the loop's thread, so
 * handlers need no locks. Other threads talk to it with loop_execute. Every
 * function says which thread may call it.
 */
#ifndef THREADLAB_LOOP_H
#define THREADLAB_LOOP_H

#include <assert.h>
#include <stdbool.h>
#include <stdint.h>

#include "probe/board.h"
#include "probe/probe_loop.h"   /* enum loop_phase, struct loop_probe */

#define LOOP_IO_RATIO_DEFAULT 50     /* Netty 4.1's default: half I/O, half tasks */
#define LOOP_MAX_EVENTS 256          /* ready fds handled per iteration at most */
#define LOOP_IDLE_TASK_BUDGET_US 50  /* tasks' time in an iteration without I/O */
/* ioRatio 100 gives tasks no limit: a task phase this long kept the
 * loop's I/O waiting as long, and is reported (a steady task flood). */
#define LOOP_STARVING_IO_MS 500
/* Tasks a loop holds at most (Netty's maxPendingTasks): past this,
 * loop_execute refuses with -EAGAIN and counts it, so a producer faster
 * than the loop cannot eat the machine's memory 16 bytes at a time. */
#define LOOP_TASK_QUEUE_MAX (1u << 20)
/* After an epoll_wait error other than EINTR (a broken epoll fd), the loop
 * waits this long before trying again, as Netty's select loop does after
 * an unexpected exception, instead of spinning on the same error. */
#define LOOP_WAIT_ERROR_BACKOFF_MS 100
/* Given to a watch's callback instead of epoll's flags when it asked to be
 * called again (loop_watch_resume). Epoll never reports this bit. */
#define LOOP_EV_RESUME (1u << 24)
#define LOOP_NAME_BYTES 16
/* A handler or task that runs this long or longer is remembered (when it
 * began, how long it took: loop__last_long_handler), for the blocked
 * checker, until loop__remember_handlers_over says otherwise. */
#define LOOP_LONG_HANDLER_MS 10

struct loop;
struct loop_group;
struct loop_timer;

/* A task or a timer's work. Loop thread. */
typedef void (*loop_task_cb)(void *arg);

/* An fd is ready: events is EPOLLIN, EPOLLOUT, EPOLLERR, EPOLLHUP... Loop
 * thread. */
typedef void (*loop_io_cb)(void *arg, uint32_t events);

/* A watched fd. The caller owns it (embed it in the connection) and keeps
 * it alive while watched. */
struct loop_watch {
    int fd;
    uint32_t events;              /* EPOLLIN | EPOLLOUT ... as watched now */
    loop_io_cb cb;
    void *arg;
    struct loop_watch *resume_prev, *resume_next; /* on the resume list, or NULL */
};

struct loop_opts {
    const char *name;             /* the thread's and board slot's name */
    int io_ratio_pct;             /* 1..100 */
    struct board *board;          /* may be NULL */
    enum board_role role;         /* ROLE_WORKER_LOOP, ROLE_BOSS */
    size_t max_tasks;             /* task queue bound; 0: LOOP_TASK_QUEUE_MAX */
    struct loop_group *parent;    /* the group it belongs to (loop_parent), or NULL */
};

/* Counters, for tests and the board. */
struct loop_stats {
    uint64_t iterations;
    uint64_t io_ns, task_ns;      /* time in handlers vs tasks and timers */
    uint64_t tasks_run, timers_fired;
    uint64_t timers_late;         /* fixed-rate runs that left the timer still
                                   * behind: it catches up one run an iteration */
    uint64_t wakeups_written;     /* eventfd writes: the wakeup rule at work */
    uint64_t longest_task_ns;
    uint64_t queued;              /* tasks waiting now */
    uint64_t timers;              /* timers scheduled, as of the last iteration */
    uint64_t tasks_rejected;      /* loop_execute refused: the queue was full */
    uint64_t wait_errors;         /* epoll_wait failed (not EINTR) */
    uint64_t resumes;             /* callbacks called again by loop_watch_resume */
    uint64_t tasks_starving_io;   /* ioRatio 100 task phases of LOOP_STARVING_IO_MS+ */
    uint64_t task_idle_ns;        /* part of task_ns run when I/O had nothing to do */
    uint64_t task_owed_ns;        /* tasks overran their budgets by this much, to be
                                   * repaid from the next budgets */
};

/* ---- lifetime ---- */

/* A loop, not yet running. NULL + errno on failure. Any thread. */
struct loop *loop_create(const struct loop_opts *o);

/* Start its thread. Returns 0 or -errno. Any thread. */
int loop_start(struct loop *l);

/* Ask the loop to stop: it runs the tasks already queued, drops its timers
 * and its thread returns. Any thread. */
void loop_stop(struct loop *l);

/* Wait for the loop's thread to end, then free. Not the loop's thread. */
void loop_join_free(struct loop *l);

/* ---- which thread ---- */

/* Netty's inEventLoop(): is the caller the loop's thread? Any thread. */
bool loop_in_loop(const struct loop *l);

#define loop_assert_in_loop(l) assert(loop_in_loop(l))

/* The loop's name, as on the board and in its thread's name. Any thread
 * (fixed at loop_create). */
const char *loop_name(const struct loop *l);

/* Netty's EventLoop.parent(): the group this loop belongs to, or NULL for
 * a loop made on its own. Any thread. */
struct loop_group *loop_parent(const struct loop *l);

/* ---- tasks ---- */

/* Queue fn(arg) to run on the loop, after the tasks queued before it (FIFO
 * per producer). Wakes the loop only when it may be asleep. Returns 0,
 * -ESHUTDOWN once the loop has ended (fn will not run), -EAGAIN when the
 * queue holds max_tasks already (counted in tasks_rejected), -ENOMEM. Any
 * thread. */
int loop_execute(struct loop *l, loop_task_cb fn, void *arg);

/* Run fn(arg) now if on the loop, else loop_execute it. Any thread. */
int loop_run_in_loop(struct loop *l, loop_task_cb fn, void *arg);

/* ---- fds (loop thread only) ---- */

int loop_watch_add(struct loop *l, struct loop_watch *w);
int loop_watch_modify(struct loop *l, struct loop_watch *w, uint32_t events);
/* Stop watching (also cancels a pending resume). */
void loop_watch_remove(struct loop *l, struct loop_watch *w);

/* Call w's callback again in the next iteration, with LOOP_EV_RESUME, even
 * if its fd has nothing new: for a handler that stopped at its budget with
 * work still buffered in user space, where epoll cannot see it. The next
 * iteration serves the fds that became ready first, then the resumed
 * watches, in the order they asked; it does not block in epoll_wait while
 * any are waiting. Asking twice before then is asking once. */
void loop_watch_resume(struct loop *l, struct loop_watch *w);

/* ---- timers (any thread) ---- */

/* Run fn(arg) on the loop once, delay_ms from now (never earlier). Returns
 * a handle the caller must give back with loop_timer_cancel or
 * loop_timer_release; NULL + errno if the loop has ended. */
struct loop_timer *loop_schedule(struct loop *l, uint64_t delay_ms,
                                 loop_task_cb fn, void *arg);

/* Run fn(arg) after initial_ms, then every period_ms, measured from the
 * first deadline (fixed rate, not fixed delay: a late run does not push
 * the next ones back). A timer that fell behind runs at most once per
 * iteration, I/O and tasks between, until it catches up (timers_late). */
struct loop_timer *loop_schedule_at_fixed_rate(struct loop *l, uint64_t initial_ms,
                                               uint64_t period_ms,
                                               loop_task_cb fn, void *arg);

/* Cancel (before or after it fired, from any thread, from inside its own
 * callback too) and give back the handle. Returns true if this stopped a
 * run that would otherwise have happened. */
bool loop_timer_cancel(struct loop_timer *t);

/* Give back the handle and let the timer run (or go on running, at a
 * fixed rate, until the loop stops). Any thread. */
void loop_timer_release(struct loop_timer *t);

/* Timers made and not yet freed, in this process, every loop's together
 * (a process-wide count: the last reference may go after its loop is
 * freed). A timer is freed when its last reference goes: the handle's
 * (cancel or release) and the loop's (when it is done or the loop ends).
 * So once every handle is given back and the loops have ended, this is
 * back where it was before them; a timer whose reference is never dropped
 * keeps it up. For leak checks, without a sanitizer. Any thread. */
uint64_t loop_timers_alive(void);

/* ---- for the models ---- */

/* The loop thread's slot on the board (loop thread only: handlers that
 * block, like an inline !sleep, show it). */
struct board_thread_ref *loop_thread_on_board(struct loop *l);

/* The loop's probe: what its channels report through (probe_loop.h:
 * probe_channel_opened, probe_channel_read). Loop thread only. */
struct loop_probe *loop_probe_of(struct loop *l);

/* Connections registered on the loop, for the board and the checker's
 * blast radius. loop_channels_add: loop thread only; loop_channels: any. */
void loop_channels_add(struct loop *l, int64_t delta);
uint64_t loop_channels(const struct loop *l);

/* Copy the loop's counters into out. Any thread (each counter is read
 * atomically; the set is not one instant). */
void loop_stats(struct loop *l, struct loop_stats *out);

/* The task budget of one iteration: io_ns * (100 - ratio) / ratio, or
 * UINT64_MAX for ratio 100. Pure, any thread; exposed for tests. */
uint64_t loop_task_budget_ns(uint64_t io_ns, int io_ratio_pct);

/* The loop's board slot, or NULL: the checker marks a blocked loop on it,
 * the channels their backlog. Any thread (the slot is fixed from
 * loop_create to loop_join_free); its fields are written by the loop's
 * thread, and by the checker for the blocked mark only. */
struct board_loop *loop_slot_on_board(struct loop *l);

/* ---- hooks for the blocked checker (checker.c) only ----
 * The double underscore says it, as libuv's uv__ does: the loop library's
 * own floor calls these; a model or sim/ never does. */

/* When the handler or task now running began (0: none is). Any thread. */
uint64_t loop__busy_since_ns(const struct loop *l);

/* The last handler or task that ran LOOP_LONG_HANDLER_MS or longer: when
 * it began and how long it took, on now_ns's clock, measured by the
 * loop itself around the call. Returns false if none has yet. Any thread. */
bool loop__last_long_handler(struct loop *l, uint64_t *began_ns, uint64_t *took_ns);

/* ---- a seam for tests ---- */

/* Tests only: call fn(arg) on the loop thread each time the loop
 * has looked at its task queue for the last time, found nothing to do,
 * and may block in epoll_wait next (wait_timeout_ms). A test holds the
 * loop there and queues a task: the lost-wakeup race, forced on every
 * run instead of hoped for. NULL: none. Any thread. */
void loop__set_before_sleep(struct loop *l, loop_task_cb fn, void *arg);

/* Tests only: call fn(arg) on the calling thread each time
 * loop_run_in_loop, called from another thread, has queued a task for l
 * and woken it, just before it returns. From there on the task is l's:
 * a test holds the caller there while l runs the task and what follows
 * (lab 06: the worker serves and closes a connection while its boss has
 * not yet run the line after its hand-off), the hand-off race forced on
 * every run instead of hoped for. NULL: none. Any thread. */
void loop__set_after_queue(struct loop *l, loop_task_cb fn, void *arg);

/* Count a handler as long from ms on (the checker sets its warn_ms). Only
 * a long one replaces the record, so shorter handlers after a stuck one
 * do not erase its length before the checker reads it. Any thread. */
void loop__remember_handlers_over(struct loop *l, int ms);

/* Send signal sig to the loop's thread (pthread_kill), for the checker's
 * stack trace. Returns false if the thread is not running. Any thread. */
bool loop__signal(struct loop *l, int sig);

#endif
