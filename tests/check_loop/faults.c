/* faults.c -- a loop under faults: a broken epoll fd, a full task queue. */
#include "check_loop.h"

/* ---- faults ------------------------------------------------------------------- */

/* The fd numbered like the loop's epoll instance: the one eventpoll fd
 * this process opened since `since` (a bitmap of fds open before). */
static int find_new_epoll_fd(const bool *since, int n)
{
    for (int fd = 0; fd < n; fd++) {
        char path[64], target[64];
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        ssize_t len = readlink(path, target, sizeof(target) - 1);
        if (len <= 0 || since[fd])
            continue;
        target[len] = '\0';
        if (strcmp(target, "anon_inode:[eventpoll]") == 0)
            return fd;
    }
    return -1;
}

static atomic_int counted;

static void count_task(void *arg)
{
    (void)arg;
    atomic_fetch_add(&counted, 1);
}

/* Break the loop's epoll fd under it (dup2 /dev/null over it): every
 * epoll_wait now fails with EINVAL. The loop counts it and backs off
 * instead of spinning, still runs its tasks, and still stops. */
START_TEST(a_broken_epoll_fd_is_counted_and_does_not_spin)
{
    enum { FDS = 256 };
    bool before[FDS] = { false };
    for (int fd = 0; fd < FDS; fd++) {
        char path[64], target[8];
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        before[fd] = readlink(path, target, sizeof(target)) > 0;
    }
    struct loop *l = start_loop(50);
    int epfd = find_new_epoll_fd(before, FDS);
    ck_assert_int_ge(epfd, 0);
    int null_fd = open("/dev/null", O_RDONLY);
    ck_assert_int_eq(dup2(null_fd, epfd), epfd);
    close(null_fd);
    /* The loop may be asleep in the epoll it had: a task wakes it (its
     * eventfd is registered there), and the task runs, broken fd or not. */
    ck_assert_int_eq(loop_execute(l, count_task, NULL), 0);
    uint64_t deadline = now_ms() + 5000;
    while (atomic_load(&counted) == 0 && now_ms() < deadline)
        usleep(1000);
    ck_assert_int_eq(atomic_load(&counted), 1);
    struct loop_stats a, b;
    loop_stats(l, &a);
    usleep(500000);
    loop_stats(l, &b);
    uint64_t iterations = b.iterations - a.iterations;
    printf("broken epoll fd: %llu iterations and %llu wait errors in 0.5 s\n",
           (unsigned long long)iterations, (unsigned long long)b.wait_errors);
    ck_assert_uint_gt(b.wait_errors, 0);
    /* One per back-off (100 ms) at most: 5, and a spare. A spinning loop
     * goes round hundreds of thousands of times. */
    ck_assert_uint_le(iterations, 500 / LOOP_WAIT_ERROR_BACKOFF_MS + 1);
    stop_loop(l);
}
END_TEST

static _Atomic bool gate_open, gate_entered;

static void gate_task(void *arg)
{
    (void)arg;
    atomic_store(&gate_entered, true);
    while (!atomic_load(&gate_open))
        usleep(1000);
}

/* A loop's task queue holds max_tasks at most: the next is refused with
 * -EAGAIN and counted, and the ones taken all run. */
START_TEST(a_full_task_queue_refuses_and_counts)
{
    enum { MAX = 8 };
    struct loop_opts o = { .name = "small-queue", .io_ratio_pct = 50,
                           .role = ROLE_WORKER_LOOP, .max_tasks = MAX };
    struct loop *l = loop_create(&o);
    ck_assert_ptr_nonnull(l);
    ck_assert_int_eq(loop_start(l), 0);
    ck_assert_int_eq(loop_execute(l, gate_task, NULL), 0);
    while (!atomic_load(&gate_entered))        /* the loop holds it: queue empty */
        usleep(1000);
    for (int i = 0; i < MAX; i++)
        ck_assert_int_eq(loop_execute(l, count_task, NULL), 0);
    ck_assert_int_eq(loop_execute(l, count_task, NULL), -EAGAIN);
    ck_assert_int_eq(loop_execute(l, count_task, NULL), -EAGAIN);
    struct loop_stats st;
    loop_stats(l, &st);
    ck_assert_uint_eq(st.tasks_rejected, 2);
    ck_assert_uint_eq(st.queued, MAX);
    atomic_store(&gate_open, true);
    uint64_t deadline = now_ms() + 5000;
    while (atomic_load(&counted) < MAX && now_ms() < deadline)
        usleep(1000);
    ck_assert_int_eq(atomic_load(&counted), MAX);
    ck_assert_int_eq(loop_execute(l, count_task, NULL), 0);   /* room again */
    stop_loop(l);
    ck_assert_int_eq(atomic_load(&counted), MAX + 1);
}
END_TEST

void add_fault_tests(TCase *running)
{
    tcase_add_test(running, a_broken_epoll_fd_is_counted_and_does_not_spin);
    tcase_add_test(running, a_full_task_queue_refuses_and_counts);
}
