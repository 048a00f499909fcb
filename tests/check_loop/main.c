/* main.c -- check_loop: the event loop on its own. The timer heap and the
 * chooser without threads, then tasks, timers, promises, ioRatio and the
 * blocked checker on a running loop; this file holds the helpers every
 * subject uses and the cases they fill. */
#include "check_loop.h"

struct loop *start_loop(int io_ratio)
{
    struct loop_opts o = { .name = "test-loop", .io_ratio_pct = io_ratio,
                           .role = ROLE_WORKER_LOOP };
    struct loop *l = loop_create(&o);
    ck_assert_ptr_nonnull(l);
    ck_assert_int_eq(loop_start(l), 0);
    return l;
}

void stop_loop(struct loop *l)
{
    loop_stop(l);
    loop_join_free(l);
}

int wait_count(atomic_int *n, int want)
{
    uint64_t deadline = now_ms() + 10000;
    while (atomic_load(n) < want && now_ms() < deadline)
        usleep(1000);
    return atomic_load(n);
}

static void mark_ran(void *arg)
{
    atomic_store((atomic_bool *)arg, true);
}

void loop_drain(struct loop *l)
{
    atomic_bool ran = false;
    ck_assert_int_eq(loop_execute(l, mark_ran, &ran), 0);
    WAIT_UNTIL(atomic_load(&ran));
    ck_assert_msg(atomic_load(&ran), "a task queued on the loop never ran");
}

int main(void)
{
    Suite *s = suite_create("loop");
    TCase *pure = tcase_create("pure");
    TCase *phase = tcase_create("phase");
    add_pure_tests(pure, phase);
    suite_add_tcase(s, pure);
    suite_add_tcase(s, phase);
    TCase *run = tcase_create("running");
    tcase_set_timeout(run, 3 * RATIO_HANG_GUARD_S);   /* a hang guard: see io_ratio.c */
    /* The forced races again, on their own: lab 03's teacher notes run
     * this case ten times on the reference and on a mutant. */
    TCase *races = tcase_create("races");
    add_task_tests(run, races);
    add_timer_tests(run);
    add_promise_tests(run);
    add_io_ratio_tests(run);
    add_checker_tests(run);
    add_watch_tests(run);
    add_fault_tests(run);
    suite_add_tcase(s, run);
    suite_add_tcase(s, races);
    return ts_run(s);
}
