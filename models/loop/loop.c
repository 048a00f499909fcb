/* loop.c -- one thread, a selector, a task queue: the iteration. See
 * loop.h; the timers are in timers.c, the task phase in task_budget.c,
 * the task queue in task_queue.c. This file calls them; they never call
 * back (inside_loop.h).
 *
 * The wakeup rule (Netty's wakenUp, muduo's "not in loop, or draining"):
 * before it blocks in epoll_wait the loop sets `sleeping` and looks at the
 * task queue once more (poll_io); a producer that queues a task writes
 * the eventfd only if it is the one that clears `sleeping` (task_queue.c,
 * loop_execute). Either the producer sees the flag and wakes the loop, or
 * the loop sees the task and does not sleep; a burst of tasks costs one
 * write, and tasks queued by the loop itself cost none.
 */
#include "inside_loop.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "net/clock.h"

const char *loop_name(const struct loop *l)
{
    return l->name;
}

/* ---- fds ---------------------------------------------------------------- */

int loop_watch_add(struct loop *l, struct loop_watch *w)
{
    loop_assert_in_loop(l);
    struct epoll_event ev = { .events = w->events, .data.ptr = w };
    return epoll_ctl(l->epfd, EPOLL_CTL_ADD, w->fd, &ev) < 0 ? -errno : 0;
}

int loop_watch_modify(struct loop *l, struct loop_watch *w, uint32_t events)
{
    loop_assert_in_loop(l);
    if (w->events == events)
        return 0;
    struct epoll_event ev = { .events = events, .data.ptr = w };
    if (epoll_ctl(l->epfd, EPOLL_CTL_MOD, w->fd, &ev) < 0)
        return -errno;
    w->events = events;
    return 0;
}

/* ---- resumed watches ------------------------------------------------------ *
 * A channel that stopped at its budget with lines still in its buffer has
 * nothing new on its fd, so epoll will not report it again: the loop keeps
 * it on this list and calls it next iteration. Netty's epoll transport does
 * the same with a task (epollInReadyRunnable); a list here keeps the work
 * counted as I/O (ioRatio) and lets a closing channel simply unlink. */

static bool resume_pending(const struct loop_watch *w)
{
    return w->resume_next != NULL;
}

static void resume_unlink(struct loop_watch *w)
{
    if (!resume_pending(w))
        return;
    w->resume_prev->resume_next = w->resume_next;
    w->resume_next->resume_prev = w->resume_prev;
    w->resume_prev = w->resume_next = NULL;
}

/* Put w at the tail of the circular list whose sentinel is head. */
static void resume_link(struct loop_watch *head, struct loop_watch *w)
{
    w->resume_prev = head->resume_prev;
    w->resume_next = head;
    head->resume_prev->resume_next = w;
    head->resume_prev = w;
}

void loop_watch_resume(struct loop *l, struct loop_watch *w)
{
    loop_assert_in_loop(l);
    if (!resume_pending(w))
        resume_link(&l->resumes, w);
}

static bool resumes_waiting(const struct loop *l)
{
    return l->resumes.resume_next != &l->resumes;
}

/* Move the watches that asked so far onto `due` (a sentinel), before this
 * iteration's callbacks run: whatever those ask lands on the loop's list,
 * for the next iteration, behind the fds that become ready meanwhile. */
static void take_resumes(struct loop *l, struct loop_watch *due)
{
    due->resume_next = due->resume_prev = due;
    if (!resumes_waiting(l))
        return;
    due->resume_next = l->resumes.resume_next;
    due->resume_prev = l->resumes.resume_prev;
    due->resume_next->resume_prev = due;
    due->resume_prev->resume_next = due;
    l->resumes.resume_next = l->resumes.resume_prev = &l->resumes;
}

/* Call the due watches, once each, in the order they asked. One that was
 * ready on its fd too was served already (and unlinked); one removed
 * meanwhile is gone from the list. */
static void run_resumes(struct loop *l, struct loop_watch *due)
{
    uint64_t began = now_ns();
    while (due->resume_next != due) {
        struct loop_watch *w = due->resume_next;
        resume_unlink(w);
        busy_begin(l, began);
        w->cb(w->arg, LOOP_EV_RESUME);
        began = busy_end(l, began);
        probe_loop_resumed(&l->probe);
    }
}

void loop_watch_remove(struct loop *l, struct loop_watch *w)
{
    loop_assert_in_loop(l);
    resume_unlink(w);
    epoll_ctl(l->epfd, EPOLL_CTL_DEL, w->fd, NULL);
}

static void wake_cb(void *arg, uint32_t events)
{
    struct loop *l = arg;
    uint64_t n;
    (void)events;
    (void)!read(l->wake.fd, &n, sizeof(n));
}

/* ---- one iteration (the heart) ---------------------------------------------- */

/* The test seam (loop__set_before_sleep): the loop has looked at its
 * queue for the last time and may block next. */
static void before_sleep(struct loop *l)
{
    loop_task_cb fn = atomic_load_explicit(&l->before_sleep, memory_order_acquire);
    if (fn)
        fn(atomic_load_explicit(&l->before_sleep_arg, memory_order_relaxed));
}

/* How long epoll_wait may block: 0 with tasks waiting, until the next
 * timer (rounded up, so timers never fire early), or forever. */
static int wait_timeout_ms(struct loop *l)
{
    if (atomic_load(&l->queued) > 0 || resumes_waiting(l))
        return 0;
    struct heap_node *n = heap_peek(&l->timers);
    uint64_t now = now_ns();
    if (n && n->deadline_ns <= now)
        return 0;
    before_sleep(l);
    if (!n)
        return -1;
    uint64_t ms = (n->deadline_ns - now + 999999) / 1000000;
    return ms > 60000 ? 60000 : (int)ms;
}

/* epoll_wait failed. EINTR is a signal: go round. Anything else means the
 * epoll fd itself is broken (EBADF, EINVAL): count it (the probe says so
 * on the first failure and each that doubles the count), and back off, so
 * a broken loop still runs its tasks (a stop among them) without burning
 * a core. */
static void wait_failed(struct loop *l, int err)
{
    if (err == EINTR)
        return;
    probe_loop_wait_failed(&l->probe, err);
    struct timespec nap = { 0, LOOP_WAIT_ERROR_BACKOFF_MS * 1000000L };
    nanosleep(&nap, NULL);
}

/* Step 1a: wait for I/O. The flag first, then one more look at the queue
 * (wait_timeout_ms): see the wakeup rule at the top of this file. Returns
 * how many fds are ready (0 after a timeout or a failed wait). */
static int poll_io(struct loop *l, struct epoll_event *ready)
{
    probe_loop_waiting(&l->probe);
    atomic_store(&l->sleeping, true);
    int n = epoll_wait(l->epfd, ready, LOOP_MAX_EVENTS, wait_timeout_ms(l));
    atomic_store(&l->sleeping, false);
    if (n < 0) {
        wait_failed(l, errno);            /* EINTR: just go round */
        return 0;
    }
    return n;
}

/* Step 1b: call the ready fds' handlers, then the watches resumed before
 * this iteration, each timed for the blocked checker. Returns the time it
 * all took: the io_ns that ioRatio weighs the tasks' budget against;
 * *io_idle: there was nothing to do (no fd ready, no resume). */
static uint64_t run_io(struct loop *l, const struct epoll_event *ready, int n,
                       bool *io_idle)
{
    struct loop_watch due;                /* resumes asked for before now */
    take_resumes(l, &due);
    *io_idle = n == 0 && due.resume_next == &due;     /* nothing wanted I/O */
    uint64_t io_start = now_ns();
    probe_loop_io_began(&l->probe, io_start);
    uint64_t began = io_start;
    for (int i = 0; i < n; i++) {
        struct loop_watch *w = ready[i].data.ptr;
        uint32_t ev = ready[i].events;
        if (resume_pending(w)) {          /* served now: once is enough */
            resume_unlink(w);
            ev |= LOOP_EV_RESUME;
        }
        busy_begin(l, began);
        w->cb(w->arg, ev);
        began = busy_end(l, began);
    }
    run_resumes(l, &due);                 /* after the ready fds: their turn came */
    uint64_t io_ns = now_ns() - io_start;
    probe_loop_io_ended(&l->probe, io_ns);
    return io_ns;
}

/* One iteration, as a list of steps (libuv's uv_run reads the same way). */
static void loop_iteration(struct loop *l)
{
    struct epoll_event ready[LOOP_MAX_EVENTS];

    int n = poll_io(l, ready);                        /* 1. wait for I/O, */
    bool io_idle;
    uint64_t io_ns = run_io(l, ready, n, &io_idle);   /*    handle it, timed */

    probe_loop_tasks_began(&l->probe);                /* 2-3 share ioRatio's budget */
    uint64_t tasks_began = now_ns();
    run_due_timers(l, tasks_began);                   /* 2. fire due timers */
    run_tasks(l, tasks_began,                         /* 3. run queued tasks */
              carried_task_budget_ns(l, io_ns, io_idle), io_idle);

    probe_loop_iterated(&l->probe,                    /* 4. show it on the board */
                        atomic_load(&l->queued), l->timers.len);
}

static void *loop_main(void *arg)
{
    struct loop *l = arg;
    current_loop = l;
    probe_loop_began(&l->probe);

    while (!atomic_load(&l->stopping))
        loop_iteration(l);

    /* Stopping: no new tasks after this; run the ones already queued. */
    pthread_mutex_lock(&l->lock);
    atomic_store(&l->ended, true);
    pthread_mutex_unlock(&l->lock);
    while (atomic_load(&l->queued) > 0) {
        uint64_t now = now_ns();
        run_due_timers(l, now);
        run_tasks(l, now, UINT64_MAX, false);
    }
    drop_timers(l);
    probe_loop_ended(&l->probe);
    current_loop = NULL;
    return NULL;
}

/* ---- lifetime ----------------------------------------------------------- */

struct loop *loop_create(const struct loop_opts *o)
{
    if (o->io_ratio_pct < 1 || o->io_ratio_pct > 100) {
        errno = EINVAL;
        return NULL;
    }
    struct loop *l = calloc(1, sizeof(*l));
    if (!l)
        return NULL;
    snprintf(l->name, sizeof(l->name), "%s", o->name ? o->name : "loop");
    l->io_ratio_pct = o->io_ratio_pct;
    l->max_tasks = o->max_tasks ? o->max_tasks : LOOP_TASK_QUEUE_MAX;
    l->resumes.resume_next = l->resumes.resume_prev = &l->resumes;
    l->parent = o->parent;
    atomic_init(&l->long_handler_ns, LOOP_LONG_HANDLER_MS * 1000000ull);
    heap_init(&l->timers);
    pthread_mutex_init(&l->lock, NULL);
    pthread_mutex_init(&l->long_lock, NULL);
    l->epfd = epoll_create1(EPOLL_CLOEXEC);
    l->wake.fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    l->wake.events = EPOLLIN;
    l->wake.cb = wake_cb;
    l->wake.arg = l;
    struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &l->wake };
    if (l->epfd < 0 || l->wake.fd < 0 ||
        epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->wake.fd, &ev) < 0) {
        int err = errno;
        if (l->epfd >= 0)
            close(l->epfd);
        if (l->wake.fd >= 0)
            close(l->wake.fd);
        pthread_mutex_destroy(&l->lock);
        pthread_mutex_destroy(&l->long_lock);
        free(l);
        errno = err;
        return NULL;
    }
    probe_loop_opened(&l->probe, o->board, l->name, o->role);
    return l;
}

int loop_start(struct loop *l)
{
    int rc = pthread_create(&l->thread, NULL, loop_main, l);
    if (rc != 0)
        return -rc;
    atomic_store(&l->started, true);
    pthread_setname_np(l->thread, l->name);
    return 0;
}

void loop_stop(struct loop *l)
{
    atomic_store(&l->stopping, true);
    if (!loop_in_loop(l)) {
        uint64_t one = 1;
        (void)!write(l->wake.fd, &one, sizeof(one));
    }
}

void loop_join_free(struct loop *l)
{
    if (atomic_load(&l->started))
        pthread_join(l->thread, NULL);
    probe_loop_closed(&l->probe);
    close(l->wake.fd);
    close(l->epfd);
    heap_free(&l->timers);
    free(l->ring);
    pthread_mutex_destroy(&l->lock);
    pthread_mutex_destroy(&l->long_lock);
    free(l);
}

/* ---- for the models and the checker ---------------------------------------- */

struct board_thread_ref *loop_thread_on_board(struct loop *l)
{
    return &l->probe.on_board;
}

struct loop_probe *loop_probe_of(struct loop *l)
{
    return &l->probe;
}

void loop_channels_add(struct loop *l, int64_t delta)
{
    probe_loop_count(&l->probe.n.channels, (uint64_t)delta);
}

uint64_t loop_channels(const struct loop *l)
{
    return atomic_load_explicit(&l->probe.n.channels, memory_order_relaxed);
}

uint64_t loop__busy_since_ns(const struct loop *l)
{
    return atomic_load_explicit(&l->busy_since_ns, memory_order_acquire);
}

bool loop__last_long_handler(struct loop *l, uint64_t *began_ns, uint64_t *took_ns)
{
    pthread_mutex_lock(&l->long_lock);
    *began_ns = l->long_began_ns;
    *took_ns = l->long_took_ns;
    pthread_mutex_unlock(&l->long_lock);
    return *began_ns != 0;
}

void loop__set_before_sleep(struct loop *l, loop_task_cb fn, void *arg)
{
    atomic_store_explicit(&l->before_sleep_arg, arg, memory_order_relaxed);
    atomic_store_explicit(&l->before_sleep, fn, memory_order_release);
}

void loop__set_after_queue(struct loop *l, loop_task_cb fn, void *arg)
{
    atomic_store_explicit(&l->after_queue_arg, arg, memory_order_relaxed);
    atomic_store_explicit(&l->after_queue, fn, memory_order_release);
}

void loop__remember_handlers_over(struct loop *l, int ms)
{
    atomic_store_explicit(&l->long_handler_ns, (uint64_t)ms * 1000000u,
                          memory_order_relaxed);
}

bool loop__signal(struct loop *l, int sig)
{
    return atomic_load(&l->started) && !atomic_load(&l->ended) &&
           pthread_kill(l->thread, sig) == 0;
}

struct loop_group *loop_parent(const struct loop *l)
{
    return l->parent;
}

struct board_loop *loop_slot_on_board(struct loop *l)
{
    return l->probe.slot;
}

void loop_stats(struct loop *l, struct loop_stats *out)
{
    const struct loop_counters *c = &l->probe.n;
    out->iterations = atomic_load(&c->iterations);
    out->io_ns = atomic_load(&c->io_ns);
    out->task_ns = atomic_load(&c->task_ns);
    out->tasks_run = atomic_load(&c->tasks_run);
    out->timers_fired = atomic_load(&c->timers_fired);
    out->timers_late = atomic_load(&c->timers_late);
    out->wakeups_written = atomic_load(&c->wakeups_written);
    out->longest_task_ns = atomic_load(&c->longest_task_ns);
    out->queued = atomic_load(&l->queued);
    out->timers = atomic_load(&c->timers_now);
    out->tasks_rejected = atomic_load(&c->tasks_rejected);
    out->wait_errors = atomic_load(&c->wait_errors);
    out->resumes = atomic_load(&c->resumes_run);
    out->tasks_starving_io = atomic_load(&c->tasks_starving_io);
    out->task_owed_ns = atomic_load(&l->task_overrun_ns);
    out->task_idle_ns = atomic_load(&c->task_idle_ns);
}
