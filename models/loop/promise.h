/* promise.h -- Netty's Future-Listener model on our loop.
 *
 * A promise is completed once — success with a result, failure with an
 * error, or cancel — by whatever thread finishes the work. Listeners run on
 * the promise's loop, in the order they were added, exactly once each,
 * whether they were added before or after completion (completed on the
 * loop's own thread, they run at once; elsewhere they are queued, and a
 * full queue is waited out, not dropped). Other threads may
 * wait for it with promise_await; the loop's own thread may not, because a
 * loop that waits for a task it has not run yet waits forever (Netty throws
 * BlockingOperationException; we return -EDEADLK).
 */
#ifndef THREADLAB_PROMISE_H
#define THREADLAB_PROMISE_H

#include <stdbool.h>

#include "loop.h"

enum promise_state {
    PROMISE_PENDING, PROMISE_SUCCESS, PROMISE_FAILURE, PROMISE_CANCELLED,
};

struct promise;

/* Runs on the loop once the promise is complete. */
typedef void (*promise_listener_cb)(struct promise *p, void *arg);

/* Work for loop_submit: return a result, or set *err (an errno) to fail. */
typedef void *(*loop_call_cb)(void *arg, int *err);

/* A pending promise whose listeners run on l. The caller holds one
 * reference (promise_release). NULL on ENOMEM. Any thread. */
struct promise *promise_create(struct loop *l);

/* Run fn(arg) on the loop and complete the returned promise with its
 * outcome. NULL + errno if the loop has ended (ESHUTDOWN) or its task
 * queue is full (EAGAIN). Any thread. */
struct promise *loop_submit(struct loop *l, loop_call_cb fn, void *arg);

/* Complete it. Returns false if it was already complete (the first
 * completion wins). Any thread. */
bool promise_succeed(struct promise *p, void *result);
bool promise_fail(struct promise *p, int err);
bool promise_cancel(struct promise *p);

/* Run cb(p, arg) on the loop once p is complete. Returns 0 or -ENOMEM,
 * -ESHUTDOWN (the loop ended before it could run). Any thread. */
int promise_add_listener(struct promise *p, promise_listener_cb cb, void *arg);

/* Wait until complete: 0, -ETIMEDOUT after timeout_ms (< 0: no limit),
 * -EDEADLK on the promise's own loop thread while still pending. Any
 * other thread. */
int promise_await(struct promise *p, int timeout_ms);

/* Its state, and once complete its result or error (errno). Any thread. */
enum promise_state promise_state(struct promise *p);
void *promise_result(struct promise *p);     /* after success */
int promise_error(struct promise *p);        /* after failure (errno) */

/* Drop the caller's reference. Any thread; the last reference frees it. */
void promise_release(struct promise *p);

#endif
