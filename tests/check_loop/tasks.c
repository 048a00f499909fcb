/* tasks.c -- tasks on a running loop: order from any thread, the wakeup
 * written once per burst, sleeping and the end; groups of loops. */
#include "check_loop.h"

START_TEST(group_spreads_round_robin)
{
    struct loop_opts o = { .io_ratio_pct = 50, .role = ROLE_WORKER_LOOP };
    struct loop_group *g = loop_group_create(3, "w", &o);
    ck_assert_ptr_nonnull(g);
    ck_assert(!g->power_of_two);
    ck_assert_int_eq(loop_group_start(g), 0);
    for (int i = 0; i < 9; i++)
        ck_assert_ptr_eq(loop_group_next(g), g->loops[i % 3]);
    ck_assert_str_eq(loop_name(g->loops[2]), "w-3");
    loop_group_stop_free(g);
}
END_TEST

/* ---- tasks -------------------------------------------------------------------- */

enum { PRODUCERS = 4, PER_PRODUCER = 25000 };

struct record { int producer, seq; };
static struct record *records;
static atomic_int nrecords;
static struct loop *shared_loop;
static _Atomic bool saw_foreign;

struct task_arg { int producer, seq; };

static void record_task(void *arg)
{
    struct task_arg *t = arg;
    if (!loop_in_loop(shared_loop))
        atomic_store(&saw_foreign, true);
    int i = atomic_fetch_add(&nrecords, 1);    /* only the loop writes */
    records[i] = (struct record){ t->producer, t->seq };
    free(t);
}

static void *producer_main(void *arg)
{
    int p = (int)(intptr_t)arg;
    ck_assert(!loop_in_loop(shared_loop));
    for (int i = 0; i < PER_PRODUCER; i++) {
        struct task_arg *t = malloc(sizeof(*t));
        *t = (struct task_arg){ p, i };
        ck_assert_int_eq(loop_execute(shared_loop, record_task, t), 0);
    }
    return NULL;
}

START_TEST(foreign_threads_execute_in_order)
{
    records = calloc(PRODUCERS * PER_PRODUCER, sizeof(*records));
    shared_loop = start_loop(50);
    ck_assert(!loop_in_loop(shared_loop));
    pthread_t th[PRODUCERS];
    for (int p = 0; p < PRODUCERS; p++)
        pthread_create(&th[p], NULL, producer_main, (void *)(intptr_t)p);
    for (int p = 0; p < PRODUCERS; p++)
        pthread_join(th[p], NULL);
    stop_loop(shared_loop);                 /* runs what is still queued */

    ck_assert_int_eq(atomic_load(&nrecords), PRODUCERS * PER_PRODUCER);
    ck_assert(!atomic_load(&saw_foreign));
    int next[PRODUCERS] = { 0 };
    for (int i = 0; i < PRODUCERS * PER_PRODUCER; i++) {
        struct record r = records[i];
        ck_assert_msg(r.seq == next[r.producer], "producer %d: %d after %d",
                      r.producer, r.seq, next[r.producer] - 1);
        next[r.producer]++;
    }
    free(records);
}
END_TEST

static atomic_int nested_ran;

static void nested_task(void *arg)
{
    (void)arg;
    atomic_fetch_add(&nested_ran, 1);
}

/* The first task of the burst holds the loop awake until the whole burst
 * is queued: every other execute then finds it awake, so the wakeup rule
 * allows exactly one write, whatever the scheduler does. */
static atomic_bool burst_queued, burst_held;

static void hold_until_burst_queued(void *arg)
{
    (void)arg;
    atomic_store(&burst_held, true);
    while (!atomic_load(&burst_queued))
        usleep(100);
    atomic_fetch_add(&nested_ran, 1);
}

static void execute_from_inside(void *arg)
{
    struct loop *l = arg;
    for (int i = 0; i < 100; i++)
        loop_execute(l, nested_task, NULL);  /* on the loop: never a wakeup */
}

START_TEST(wakeup_written_only_when_needed)
{
    struct loop *l = start_loop(50);
    struct loop_stats st, before_burst;
    ck_assert(tn_wait_thread_state("test-loop", 'S', 10000));   /* asleep */
    loop_stats(l, &before_burst);
    loop_execute(l, hold_until_burst_queued, NULL);
    /* Once the loop runs the first task it has read its wake eventfd: the
     * 999 executes that follow find it awake, and write nothing to it. The
     * eventfd's own counter says so, whatever wakeups_written claims. */
    WAIT_UNTIL(atomic_load(&burst_held));
    ck_assert_msg(atomic_load(&burst_held), "the woken loop never ran its first task");
    for (int i = 1; i < 1000; i++)
        loop_execute(l, nested_task, NULL);
    uint64_t unread = tn_eventfd_pending();
    atomic_store(&burst_queued, true);
    ck_assert_msg(unread == 0, "%" PRIu64 " eventfd writes for tasks queued while the loop "
                  "was awake (it was running the first): only a sleeping loop needs one", unread);
    ck_assert_int_eq(wait_count(&nested_ran, 1000), 1000);
    loop_stats(l, &st);
    /* One write woke the sleeping loop; the other 999 found it awake. */
    ck_assert_uint_eq(st.wakeups_written - before_burst.wakeups_written, 1);
    uint64_t before = st.wakeups_written;
    loop_execute(l, execute_from_inside, l);
    ck_assert_int_eq(wait_count(&nested_ran, 1100), 1100);
    loop_stats(l, &st);
    ck_assert_uint_le(st.wakeups_written, before + 1);   /* the outer one only */
    stop_loop(l);
}
END_TEST

/* The lost wakeup, forced on every run: the loop is held (the test seam,
 * loop__set_before_sleep) right after its last look at the task queue,
 * before epoll_wait, and a task is queued from another thread there.
 * Then it is let go. With the wakeup rule kept (`sleeping` set before that
 * last look) the producer saw the flag and wrote the eventfd, and the task
 * runs at once. A loop that set the flag only after its look sleeps with
 * the task queued, in epoll_wait with no timeout: the test sees its thread
 * asleep there, past the seam, with the task not run. No timed guess
 * decides anything: the order is forced, and the outcome is a state. */
static pthread_mutex_t seam_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t seam_moved = PTHREAD_COND_INITIALIZER;
enum seam_stage { SEAM_ARMED, SEAM_HELD, SEAM_GO, SEAM_PASSED };
static enum seam_stage seam_stage;           /* seam_lock */
static atomic_bool seam_passed;
static atomic_int late_task_ran;

static void hold_before_sleep(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&seam_lock);
    if (seam_stage == SEAM_ARMED) {          /* once: later iterations go by */
        seam_stage = SEAM_HELD;
        pthread_cond_broadcast(&seam_moved);
        while (seam_stage != SEAM_GO)
            pthread_cond_wait(&seam_moved, &seam_lock);
        seam_stage = SEAM_PASSED;
    }
    pthread_mutex_unlock(&seam_lock);
    atomic_store(&seam_passed, true);        /* next stop: epoll_wait */
}

static void late_wakeup_task(void *arg)
{
    (void)arg;
    atomic_store(&late_task_ran, 1);
}

START_TEST(a_task_queued_as_the_loop_goes_to_sleep_wakes_it)
{
    struct loop *l = start_loop(50);
    loop__set_before_sleep(l, hold_before_sleep, NULL);
    ck_assert_int_eq(loop_execute(l, nested_task, NULL), 0);   /* to the seam */
    /* The seam signals when it holds the loop; the deadline is a hang guard. */
    struct timespec guard;
    clock_gettime(CLOCK_REALTIME, &guard);
    guard.tv_sec += 20;
    pthread_mutex_lock(&seam_lock);
    while (seam_stage != SEAM_HELD &&
           pthread_cond_timedwait(&seam_moved, &seam_lock, &guard) == 0)
        ;
    bool held = seam_stage == SEAM_HELD;
    pthread_mutex_unlock(&seam_lock);
    ck_assert_msg(held, "the loop never came to sleep through wait_timeout_ms: it should look "
                  "at its task queue there last, just before epoll_wait");
    ck_assert_int_eq(loop_execute(l, late_wakeup_task, NULL), 0);
    pthread_mutex_lock(&seam_lock);
    seam_stage = SEAM_GO;
    pthread_cond_broadcast(&seam_moved);
    pthread_mutex_unlock(&seam_lock);
    /* Await one of two states: the task ran, or the loop sleeps past the
     * seam without it (20 s: a hang guard, not a bound). */
    uint64_t until = now_ms() + 20000;
    while (!atomic_load(&late_task_ran) && now_ms() < until &&
           !(atomic_load(&seam_passed) && tn_wait_thread_state("test-loop", 'S', 0) &&
             !atomic_load(&late_task_ran)))
        usleep(1000);
    bool ran = atomic_load(&late_task_ran);
    loop__set_before_sleep(l, NULL, NULL);
    stop_loop(l);
    ck_assert_msg(ran, "a task queued just after the loop's last look at its queue, before "
                  "epoll_wait, was left waiting: the loop went to sleep and nobody woke it (a "
                  "lost wakeup). The loop should say it sleeps before that last look, so that "
                  "the task's producer sees it and writes the eventfd");
}
END_TEST

/* An idle loop sleeps in epoll_wait until a task, a timer or I/O comes:
 * over 0.4 s with none it wakes a handful of times and runs for no
 * measurable time. One that caps its wait at 1 ms wakes hundreds of times
 * (and may forge wakeups_written: its thread's switches say otherwise).
 * Counted, not timed. */
START_TEST(an_idle_loop_sleeps)
{
    struct loop *l = start_loop(50);
    ck_assert(tn_wait_thread_state("test-loop", 'S', 10000));   /* asleep */
    usleep(50000);
    struct tn_thread_use idle = tn_thread_use_over("test-loop", 400);
    stop_loop(l);
    ck_assert_int_eq(idle.threads, 1);
    long woke = idle.switches, ran = idle.cpu_ticks;
    ck_assert_msg(woke <= 20 && ran <= 5,
                  "an idle loop woke %ld times and ran %ld ms in 0.4 s: it polls or spins; it "
                  "should sleep in epoll_wait until a task, a timer or I/O comes (at most 20 "
                  "wakeups, 50 ms)", woke, ran * 1000 / sysconf(_SC_CLK_TCK));
}
END_TEST

START_TEST(execute_after_end_is_refused)
{
    struct loop *l = start_loop(50);
    loop_stop(l);
    /* Tasks queued before the loop's thread returns still run; after, the
     * loop refuses them. Wait for the thread to get there. */
    int rc;
    uint64_t deadline = now_ms() + 10000;
    while ((rc = loop_execute(l, nested_task, NULL)) == 0 && now_ms() < deadline)
        usleep(1000);
    ck_assert_int_eq(rc, -ESHUTDOWN);
    ck_assert_ptr_null(loop_schedule(l, 1, nested_task, NULL));
    loop_join_free(l);
}
END_TEST

START_TEST(a_group_is_its_loops_parent)
{
    struct loop_opts o = { .io_ratio_pct = 50, .role = ROLE_WORKER_LOOP };
    struct loop_group *g = loop_group_create(2, "p", &o);
    ck_assert_ptr_nonnull(g);
    ck_assert_ptr_eq(loop_parent(g->loops[0]), g);
    ck_assert_ptr_eq(loop_parent(g->loops[1]), g);
    struct loop *alone = loop_create(&o);
    ck_assert_ptr_nonnull(alone);
    ck_assert_ptr_null(loop_parent(alone));
    loop_join_free(alone);
    loop_group_stop_free(g);
}
END_TEST

void add_task_tests(TCase *running, TCase *races)
{
    tcase_add_test(running, group_spreads_round_robin);
    tcase_add_test(running, foreign_threads_execute_in_order);
    tcase_add_test(running, wakeup_written_only_when_needed);
    tcase_add_test(running, an_idle_loop_sleeps);
    tcase_add_test(running, a_task_queued_as_the_loop_goes_to_sleep_wakes_it);
    tcase_add_test(running, execute_after_end_is_refused);
    tcase_add_test(running, a_group_is_its_loops_parent);
    tcase_add_test(races, a_task_queued_as_the_loop_goes_to_sleep_wakes_it);
}
