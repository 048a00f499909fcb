/* watches.c -- watches that ask to be resumed: called once an iteration
 * without input, and once when they are ready too. */
#include "check_loop.h"

/* ---- resumed watches ---------------------------------------------------------- */

enum { RESUMES = 5 };

struct resumer {
    struct loop *l;
    struct loop_watch w;
    atomic_int calls;
    _Atomic uint32_t other_events;     /* anything but LOOP_EV_RESUME seen */
    uint64_t iteration[RESUMES];       /* the loop's iteration count at each call */
};

/* Called first for its fd (readable once: it reads it), then for the
 * resumes it asks for. */
static void resumer_cb(void *arg, uint32_t events)
{
    struct resumer *r = arg;
    struct loop_stats st;
    loop_stats(r->l, &st);
    int k = atomic_fetch_add(&r->calls, 1);
    if (k < RESUMES)
        r->iteration[k] = st.iterations;
    if (k == 0) {
        uint64_t v;
        ck_assert(events & EPOLLIN);
        ck_assert_int_eq(read(r->w.fd, &v, sizeof(v)), sizeof(v));
    } else {
        atomic_fetch_or(&r->other_events, events & ~LOOP_EV_RESUME);
    }
    if (k + 1 < RESUMES) {
        loop_watch_resume(r->l, &r->w);        /* more to do, nothing new on the fd */
        loop_watch_resume(r->l, &r->w);        /* twice is once */
    }
}

static void start_resuming_task(void *arg)
{
    struct resumer *r = arg;                   /* r[0] resumes; r[1] is removed */
    ck_assert_int_eq(loop_watch_add(r[0].l, &r[0].w), 0);
    ck_assert_int_eq(loop_watch_add(r[1].l, &r[1].w), 0);
    loop_watch_resume(r[1].l, &r[1].w);
    loop_watch_remove(r[1].l, &r[1].w);        /* removed: never called */
}

static void remove_watch_task(void *arg)
{
    struct resumer *r = arg;
    loop_watch_remove(r->l, &r->w);
}

/* A watch whose fd is no longer ready is called again, once per
 * iteration, for as long as it asks -- never in the iteration that asked,
 * which would let it run again before the other ready fds -- and the loop
 * does not sleep meanwhile (a loop that blocked in epoll_wait would never
 * call it: no timer, no task, no fd would wake it). A removed watch's
 * resume is dropped. */
START_TEST(a_resumed_watch_is_called_once_per_iteration_without_input)
{
    struct loop *l = start_loop(50);
    struct resumer r[2] = { { .l = l }, { .l = l } };
    /* r[0]'s fd is ready once, r[1]'s never. */
    int fds[2] = { eventfd(1, EFD_NONBLOCK), eventfd(0, EFD_NONBLOCK) };
    for (int i = 0; i < 2; i++)
        r[i].w = (struct loop_watch){ .fd = fds[i], .events = EPOLLIN, .cb = resumer_cb,
                                      .arg = &r[i] };
    ck_assert_int_eq(loop_execute(l, start_resuming_task, r), 0);
    uint64_t deadline = now_ms() + 5000;
    while (atomic_load(&r[0].calls) < RESUMES && now_ms() < deadline)
        usleep(1000);
    usleep(50000);                             /* a sixth call would come now */
    int calls = atomic_load(&r[0].calls), removed_calls = atomic_load(&r[1].calls);
    ck_assert_int_eq(calls, RESUMES);
    ck_assert_int_eq(removed_calls, 0);
    ck_assert_uint_eq(atomic_load(&r[0].other_events), 0);  /* resumes only */
    for (int k = 1; k < RESUMES; k++)
        ck_assert_uint_gt(r[0].iteration[k], r[0].iteration[k - 1]);
    struct loop_stats st;
    loop_stats(l, &st);
    ck_assert_uint_eq(st.resumes, RESUMES - 1);
    ck_assert_int_eq(loop_execute(l, remove_watch_task, &r[0]), 0);
    stop_loop(l);
    close(fds[0]);
    close(fds[1]);
}
END_TEST

/* A watch whose fd stays ready (an eventfd never read: level-triggered)
 * and that asks for a resume at every call is still called once per
 * iteration, its resume folded into the ready call (LOOP_EV_RESUME with
 * EPOLLIN). A loop that served it as ready and again as resumed would
 * call it twice in one iteration: it would run ahead of every other fd. */
enum { READY_RESUMES = 6 };

struct ready_resumer {
    struct loop *l;
    struct loop_watch w;
    atomic_int calls;
    uint64_t iteration[READY_RESUMES];
    uint32_t events[READY_RESUMES];
};

static void ready_resumer_cb(void *arg, uint32_t events)
{
    struct ready_resumer *r = arg;
    struct loop_stats st;
    loop_stats(r->l, &st);
    int k = atomic_load(&r->calls);             /* only the loop writes it */
    r->iteration[k] = st.iterations;
    r->events[k] = events;
    if (k + 1 < READY_RESUMES)
        loop_watch_resume(r->l, &r->w);
    else
        loop_watch_remove(r->l, &r->w);
    atomic_store(&r->calls, k + 1);             /* publishes the record */
}

static void add_ready_resumer_task(void *arg)
{
    struct ready_resumer *r = arg;
    ck_assert_int_eq(loop_watch_add(r->l, &r->w), 0);
}

START_TEST(a_ready_watch_that_asked_to_resume_is_called_once)
{
    struct ready_resumer r = { .l = start_loop(50) };
    r.w = (struct loop_watch){ .fd = eventfd(1, EFD_NONBLOCK), .events = EPOLLIN,
                               .cb = ready_resumer_cb, .arg = &r };
    ck_assert_int_ge(r.w.fd, 0);
    ck_assert_int_eq(loop_execute(r.l, add_ready_resumer_task, &r), 0);
    ck_assert_int_eq(wait_count(&r.calls, READY_RESUMES), READY_RESUMES);
    stop_loop(r.l);
    for (int k = 1; k < READY_RESUMES; k++) {
        ck_assert_msg(r.iteration[k] > r.iteration[k - 1], "call %d came in the same "
                      "iteration as call %d: a ready watch that asked to resume was "
                      "called twice", k + 1, k);
        ck_assert_msg((r.events[k] & LOOP_EV_RESUME) && (r.events[k] & EPOLLIN),
                      "call %d: events 0x%x, not EPOLLIN with LOOP_EV_RESUME", k + 1,
                      r.events[k]);
    }
    close(r.w.fd);
}
END_TEST

void add_watch_tests(TCase *running)
{
    tcase_add_test(running, a_resumed_watch_is_called_once_per_iteration_without_input);
    tcase_add_test(running, a_ready_watch_that_asked_to_resume_is_called_once);
}
