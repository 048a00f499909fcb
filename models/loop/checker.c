/* checker.c -- flag loops stuck in one handler. See checker.h.
 *
 * One pass (check_one, per loop):
 *
 *   the handler we flagged returned?   --> "unblocked", with its exact length
 *   a handler running, a warning due?  --> warn (blocked k * warn_ms)
 *   past trace_ms, no stack yet?       --> print its thread's stack
 *   then: when is the next thing due?  --> the checker sleeps until then
 */
#include "checker.h"
#include "net/clock.h"

#include <errno.h>
#include <execinfo.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct watched {
    struct loop *loop;
    uint64_t flagged_since_ns;     /* the busy_since we warned about, or 0 */
    uint64_t warned;               /* warnings given for it: the next is due at
                                    * flagged_since + (warned + 1) * warn */
    uint64_t seen_ns;              /* how long it had run when we last looked */
    bool traced;                   /* its stack is printed (or was tried) */
    uint64_t last_look_ns;         /* when we last looked at it */
    uint64_t known_since_ns;       /* the busy_since we last saw ... */
    uint64_t unseen_ns;            /* ... and how long it had run before it was
                                    * there to see: the loop thread read the
                                    * clock, then waited for a CPU before it
                                    * published the handler's start (a look
                                    * after the start did not find it) */
};

struct loop_checker {
    struct watched *loops;
    int n;
    uint64_t warn_ns;
    uint64_t trace_ns;             /* 0: no stacks */
    uint64_t interval_ns;          /* longest sleep with nothing due */
    struct board *board;
    bool quiet;
    pthread_t thread;
    pthread_mutex_t lock;          /* for the stop signal */
    pthread_cond_t wake;
    bool stopping;
    struct board_thread_ref on_board;
    _Atomic uint64_t episodes, warnings, traces, traces_missed, unblocks;
    _Atomic uint64_t last_first_warning_ns, last_first_late_ns, last_unblocked_ns;
    _Atomic uint64_t looks;
};

/* ---- the stack of another thread ---------------------------------------------- */

static sem_t trace_printed;        /* posted by the handler: its stack is out */
static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER; /* one trace at a time */
static pthread_once_t trace_once = PTHREAD_ONCE_INIT;
static bool trace_ready;

/* Runs on the stuck thread, inside whatever it was doing. Only
 * async-signal-safe calls: backtrace (libgcc is loaded already),
 * backtrace_symbols_fd (writes, no malloc), sem_post. */
static void print_stack_handler(int sig)
{
    int saved_errno = errno;
    void *frames[CHECKER_TRACE_FRAMES];
    (void)sig;
    int n = backtrace(frames, CHECKER_TRACE_FRAMES);
    backtrace_symbols_fd(frames, n, STDERR_FILENO);
    sem_post(&trace_printed);
    errno = saved_errno;
}

static void install_trace_handler(void)
{
    /* The first backtrace() loads libgcc's unwinder (dlopen, malloc):
     * never inside a signal handler, so do it here, once. */
    void *warm[1];
    backtrace(warm, 1);
    if (sem_init(&trace_printed, 0, 0) < 0)
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = print_stack_handler;
    sa.sa_flags = SA_RESTART;      /* reads and writes resume; !sleep does too */
    sigemptyset(&sa.sa_mask);
    trace_ready = sigaction(CHECKER_TRACE_SIGNAL, &sa, NULL) == 0;
}

/* Ask w's thread for its stack and wait until it is printed. */
static void print_stack(struct loop_checker *c, struct watched *w, double secs)
{
    pthread_mutex_lock(&trace_lock);
    while (sem_trywait(&trace_printed) == 0)
        ;                          /* a late post from a trace we gave up on */
    fprintf(stderr, "threadlab: loop %s still blocked after %.1f s; its stack, "
            "innermost call first:\n", loop_name(w->loop), secs);
    bool printed = false;
    if (loop__signal(w->loop, CHECKER_TRACE_SIGNAL)) {
        struct timespec until = timespec_at_ns(deadline_in_ms(CHECKER_TRACE_WAIT_MS));
        int rc;
        while ((rc = sem_clockwait(&trace_printed, CLOCK_MONOTONIC, &until)) < 0 &&
               errno == EINTR)
            ;
        printed = rc == 0;
    }
    if (printed) {
        atomic_fetch_add(&c->traces, 1);
        fprintf(stderr, "threadlab: (end of %s's stack)\n", loop_name(w->loop));
    } else {
        atomic_fetch_add(&c->traces_missed, 1);
        fprintf(stderr, "threadlab: (no stack: %s did not take the signal within "
                "%d ms)\n", loop_name(w->loop), CHECKER_TRACE_WAIT_MS);
    }
    pthread_mutex_unlock(&trace_lock);
}

/* ---- one loop ----------------------------------------------------------------- */

static unsigned long long ms_of(uint64_t ns) { return (unsigned long long)(ns / 1000000u); }

/* The flagged handler returned: clear the flag, say how long it ran. The
 * loop remembers its last long handler; if that is a later one (the
 * checker was kept from a CPU through two of them), only a lower bound is
 * known. */
static void report_unblocked(struct loop_checker *c, struct watched *w)
{
    struct board_loop *slot = loop_slot_on_board(w->loop);
    uint64_t began, took;
    bool exact = loop__last_long_handler(w->loop, &began, &took) &&
                 began == w->flagged_since_ns;
    uint64_t ran = exact ? took : w->seen_ns;
    if (slot)
        atomic_store(&slot->blocked_since_ns, 0);
    atomic_store(&c->last_unblocked_ns, exact ? took : 0);
    atomic_fetch_add(&c->unblocks, 1);
    board_event(c->board, EV_BLOCKED, "%s unblocked: its handler ran %s%.1f s",
                loop_name(w->loop), exact ? "" : "at least ", (double)ran / 1e9);
    if (!c->quiet)
        fprintf(stderr, "threadlab: loop %s unblocked: its handler ran %s%.1f s "
                "(%llu ms)\n", loop_name(w->loop), exact ? "" : "at least ",
                (double)ran / 1e9, ms_of(ran));
    w->flagged_since_ns = 0;
}

/* A warning is due: say how long the handler has run. late_ns: how much
 * later than it asked the checker woke (the scheduler's doing, not ours);
 * on the first warning, also how long the handler ran before the loop
 * made it known (w->unseen_ns: the loop thread's wait for a CPU). */
static void warn(struct loop_checker *c, struct watched *w, uint64_t ran_ns,
                 uint64_t late_ns)
{
    uint64_t channels = loop_channels(w->loop);
    double secs = (double)ran_ns / 1e9;
    char late[160] = "";
    int n = 0;
    if (late_ns >= 1000000u)
        n = snprintf(late, sizeof(late), " [the checker woke %llu ms late: it "
                     "waited for a CPU]", (unsigned long long)(late_ns / 1000000u));
    if (w->warned == 0 && w->unseen_ns >= 1000000u && n >= 0 && (size_t)n < sizeof(late))
        snprintf(late + n, sizeof(late) - (size_t)n, " [the loop published the "
                 "handler's start %llu ms late: it waited for a CPU]",
                 (unsigned long long)(w->unseen_ns / 1000000u));
    atomic_fetch_add(&c->warnings, 1);
    board_event(c->board, EV_BLOCKED, "%s blocked %.1f s in one handler: "
                "%llu connection%s on it wait as long", loop_name(w->loop), secs,
                (unsigned long long)channels, channels == 1 ? "" : "s");
    if (!c->quiet)
        fprintf(stderr, "threadlab: loop %s blocked for %.1f s in one handler or task "
                "(%llu ms; a warning every %llu ms): its %llu connection%s get%s no "
                "answer meanwhile%s\n", loop_name(w->loop), secs, ms_of(ran_ns),
                ms_of(c->warn_ns), (unsigned long long)channels,
                channels == 1 ? "" : "s", channels == 1 ? "s" : "", late);
}

/* Look at one loop at `now`; asked_ns is when the checker meant to wake
 * (it may be later: the scheduler's delay, not ours). Returns when the
 * loop next needs a look (0: no handler of it is due for anything). */
static uint64_t check_one(struct loop_checker *c, struct watched *w, uint64_t now,
                          uint64_t asked_ns)
{
    uint64_t since = loop__busy_since_ns(w->loop), prev_look = w->last_look_ns;
    w->last_look_ns = now;
    if (since && since != w->known_since_ns) {        /* a handler we had not seen */
        w->known_since_ns = since;
        w->unseen_ns = prev_look > since ? prev_look - since : 0;
    }

    if (w->flagged_since_ns && since != w->flagged_since_ns)
        report_unblocked(c, w);
    if (!since)
        return 0;
    if (now < since || now - since < c->warn_ns)
        return since + c->warn_ns;               /* its first warning */
    uint64_t ran = now - since;
    if (!w->flagged_since_ns) {
        w->flagged_since_ns = since;
        w->warned = 0;
        w->traced = false;
    }
    uint64_t due = since + (w->warned + 1) * c->warn_ns;
    uint64_t late_ns = now - asked_ns;   /* the scheduler's delay, not ours */
    if (w->warned == 0) {               /* the first warning: a new episode */
        struct board_loop *slot = loop_slot_on_board(w->loop);
        atomic_fetch_add(&c->episodes, 1);
        atomic_store(&c->last_first_warning_ns, ran);
        /* Not ours either: the time the handler ran before the loop made
         * it known (a loop thread preempted between its clock read and
         * the store: beside two CPU hogs, a first warning 580 ms after
         * the start for a 200 ms threshold). */
        atomic_store(&c->last_first_late_ns, late_ns + w->unseen_ns);
        if (slot)
            atomic_store(&slot->blocked_since_ns, since);
    }
    w->seen_ns = ran;
    if (now >= due) {
        warn(c, w, ran, late_ns);
        w->warned = ran / c->warn_ns;            /* a late look skips, not repeats */
    }
    if (c->trace_ns && !w->traced && ran >= c->trace_ns) {
        w->traced = true;
        if (!c->quiet && trace_ready)
            print_stack(c, w, (double)ran / 1e9);
    }
    uint64_t next = since + (w->warned + 1) * c->warn_ns;
    if (c->trace_ns && !w->traced && since + c->trace_ns < next)
        next = since + c->trace_ns;
    return next;
}

/* ---- the thread ---------------------------------------------------------------- */

static void *checker_main(void *arg)
{
    struct loop_checker *c = arg;
    board_thread_begin(c->board, &c->on_board, ROLE_CHECKER, "checker", 0);
    uint64_t asked = now_ns();     /* when we asked to wake up */
    pthread_mutex_lock(&c->lock);
    while (!c->stopping) {
        board_thread_state(c->board, &c->on_board, STATE_RUNNING);
        uint64_t now = now_ns();
        if (asked > now)
            asked = now;                /* woken early: a stop, or spurious */
        /* A handler that begins after now is due no earlier than now +
         * warn, so looking again within interval (< warn) never misses
         * one; one already running is looked at exactly when due. */
        uint64_t next = now + c->interval_ns;
        for (int i = 0; i < c->n && !c->stopping; i++) {
            uint64_t due = check_one(c, &c->loops[i], now, asked);
            if (due && due < next)
                next = due;
        }
        atomic_fetch_add(&c->looks, 1);
        board_thread_state(c->board, &c->on_board, STATE_WAITING);
        struct timespec until = timespec_at_ns(next);
        asked = next;
        if (!c->stopping)
            pthread_cond_timedwait(&c->wake, &c->lock, &until);
    }
    /* A flagged handler that ended since the last look is still reported:
     * a stop right after it (a Ctrl-C, a test) must not swallow its
     * length. The loops outlive the checker (it is stopped first). */
    for (int i = 0; i < c->n; i++) {
        struct watched *w = &c->loops[i];
        if (w->flagged_since_ns && loop__busy_since_ns(w->loop) != w->flagged_since_ns)
            report_unblocked(c, w);
    }
    pthread_mutex_unlock(&c->lock);
    board_thread_end(c->board, &c->on_board);
    return NULL;
}

struct loop_checker *loop_checker_start(struct loop **loops, int n, int warn_ms,
                                        int trace_ms, struct board *board, bool quiet)
{
    if (warn_ms < 1 || trace_ms < 0) {
        errno = EINVAL;
        return NULL;
    }
    struct loop_checker *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->loops = calloc((size_t)n, sizeof(*c->loops));
    if (!c->loops) {
        free(c);
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        c->loops[i].loop = loops[i];
        /* Two handlers of warn_ms cannot both end between two looks
         * (interval < warn_ms), so the record is the flagged one's. */
        loop__remember_handlers_over(loops[i], warn_ms);
    }
    c->n = n;
    c->warn_ns = (uint64_t)warn_ms * 1000000u;
    c->trace_ns = (uint64_t)trace_ms * 1000000u;
    /* With nothing due, look twice per warning period (at most every
     * 500 ms): enough to see every new handler before it is due. */
    c->interval_ns = c->warn_ns / 2 < 500000000u ? c->warn_ns / 2 : 500000000u;
    c->board = board;
    c->quiet = quiet;
    if (trace_ms > 0 && !quiet)
        pthread_once(&trace_once, install_trace_handler);
    pthread_mutex_init(&c->lock, NULL);
    clock_cond_init(&c->wake);
    int rc = pthread_create(&c->thread, NULL, checker_main, c);
    if (rc != 0) {
        pthread_cond_destroy(&c->wake);
        pthread_mutex_destroy(&c->lock);
        free(c->loops);
        free(c);
        errno = rc;
        return NULL;
    }
    pthread_setname_np(c->thread, "checker");
    return c;
}

void loop_checker_stop(struct loop_checker *c)
{
    pthread_mutex_lock(&c->lock);
    c->stopping = true;
    pthread_cond_signal(&c->wake);
    pthread_mutex_unlock(&c->lock);
    pthread_join(c->thread, NULL);
    pthread_cond_destroy(&c->wake);
    pthread_mutex_destroy(&c->lock);
    free(c->loops);
    free(c);
}

void loop_checker_stats(struct loop_checker *c, struct loop_checker_stats *out)
{
    out->episodes = atomic_load(&c->episodes);
    out->warnings = atomic_load(&c->warnings);
    out->traces = atomic_load(&c->traces);
    out->traces_missed = atomic_load(&c->traces_missed);
    out->unblocks = atomic_load(&c->unblocks);
    out->last_first_warning_ns = atomic_load(&c->last_first_warning_ns);
    out->last_first_late_ns = atomic_load(&c->last_first_late_ns);
    out->last_unblocked_ns = atomic_load(&c->last_unblocked_ns);
    out->looks = atomic_load(&c->looks);
}
