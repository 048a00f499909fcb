/* promises.c -- promises completed on a loop: listeners run there, once;
 * awaiting on the loop is refused. */
#include "check_loop.h"

/* ---- promises ------------------------------------------------------------------- */

static atomic_int listener_runs, listener_on_loop;
static struct loop *promise_loop;

static void listener_cb(struct promise *p, void *arg)
{
    (void)arg;
    atomic_fetch_add(&listener_runs, 1);
    if (loop_in_loop(promise_loop) && promise_state(p) == PROMISE_SUCCESS &&
        promise_result(p) == (void *)&listener_runs)
        atomic_fetch_add(&listener_on_loop, 1);
}

static void *complete_from_thread(void *arg)
{
    usleep(20000);
    ck_assert(promise_succeed(arg, &listener_runs));
    ck_assert(!promise_fail(arg, EIO));           /* only the first counts */
    return NULL;
}

START_TEST(promise_listeners_run_on_the_loop_once)
{
    promise_loop = start_loop(50);
    struct promise *p = promise_create(promise_loop);
    ck_assert_int_eq(promise_add_listener(p, listener_cb, NULL), 0);
    ck_assert_int_eq(promise_add_listener(p, listener_cb, NULL), 0);
    pthread_t th;
    pthread_create(&th, NULL, complete_from_thread, p);
    ck_assert_int_eq(promise_await(p, 5000), 0);  /* from a foreign thread */
    pthread_join(th, NULL);
    ck_assert_int_eq(promise_add_listener(p, listener_cb, NULL), 0); /* after */
    ck_assert_int_eq(wait_count(&listener_runs, 3), 3);
    loop_drain(promise_loop);                     /* and no fourth run */
    ck_assert_int_eq(atomic_load(&listener_runs), 3);
    ck_assert_int_eq(atomic_load(&listener_on_loop), 3);
    ck_assert_int_eq(promise_state(p), PROMISE_SUCCESS);
    promise_release(p);
    stop_loop(promise_loop);
}
END_TEST

static _Atomic int await_on_loop_rc = 1;

static void await_inside(void *arg)
{
    atomic_store(&await_on_loop_rc, promise_await(arg, 1000));
}

static void *answer(void *arg, int *err)
{
    (void)arg;
    *err = 0;
    return (void *)0x42;
}

static void *fail_it(void *arg, int *err)
{
    (void)arg;
    *err = EPROTO;
    return NULL;
}

START_TEST(await_on_the_loop_is_refused)
{
    struct loop *l = start_loop(50);
    struct promise *pending = promise_create(l);
    loop_execute(l, await_inside, pending);
    uint64_t deadline = now_ms() + 10000;
    while (atomic_load(&await_on_loop_rc) == 1 && now_ms() < deadline)
        usleep(1000);
    ck_assert_int_eq(atomic_load(&await_on_loop_rc), -EDEADLK);
    ck_assert_int_eq(promise_await(pending, 20), -ETIMEDOUT);
    promise_cancel(pending);
    ck_assert_int_eq(promise_state(pending), PROMISE_CANCELLED);
    promise_release(pending);

    struct promise *ok = loop_submit(l, answer, NULL);
    ck_assert_int_eq(promise_await(ok, 5000), 0);
    ck_assert_ptr_eq(promise_result(ok), (void *)0x42);
    promise_release(ok);
    struct promise *bad = loop_submit(l, fail_it, NULL);
    ck_assert_int_eq(promise_await(bad, 5000), 0);
    ck_assert_int_eq(promise_state(bad), PROMISE_FAILURE);
    ck_assert_int_eq(promise_error(bad), EPROTO);
    promise_release(bad);
    stop_loop(l);
}
END_TEST

void add_promise_tests(TCase *running)
{
    tcase_add_test(running, promise_listeners_run_on_the_loop_once);
    tcase_add_test(running, await_on_the_loop_is_refused);
}
