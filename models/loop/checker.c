/* checker.c -- flag loops stuck in one handler. See checker.h. */
#include "checker.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct watched {
    struct loop *loop;
    uint64_t flagged_since_ns;     /* the busy_since we warned about, or 0 */
};

struct loop_checker {
    struct watched *loops;
    int n;
    uint64_t warn_ns;
    uint64_t interval_ns;
    struct board *board;
    bool quiet;
    pthread_t thread;
    pthread_mutex_t lock;          /* for the stop signal */
    pthread_cond_t wake;
    bool stopping;
    struct board_thread_ref on_board;
    _Atomic uint64_t warnings;
};

static void check_one(struct loop_checker *c, struct watched *w, uint64_t now)
{
    uint64_t since = loop_busy_since_ns(w->loop);
    struct board_loop *slot = loop_board_slot(w->loop);

    if (w->flagged_since_ns && since != w->flagged_since_ns) {
        /* The handler we flagged has returned. */
        if (slot)
            atomic_store(&slot->blocked_since_ns, 0);
        board_event(c->board, EV_BLOCKED, "%s unblocked: it was stuck in one "
                    "handler for at least %.1f s", loop_name(w->loop),
                    (double)(now - w->flagged_since_ns) / 1e9);
        w->flagged_since_ns = 0;
    }
    if (since && !w->flagged_since_ns && now > since && now - since >= c->warn_ns) {
        uint64_t channels = loop_channels(w->loop);
        double secs = (double)(now - since) / 1e9;
        w->flagged_since_ns = since;
        atomic_fetch_add(&c->warnings, 1);
        if (slot)
            atomic_store(&slot->blocked_since_ns, since);
        board_event(c->board, EV_BLOCKED, "%s blocked %.1f s in one handler: "
                    "%llu connection%s on it wait as long", loop_name(w->loop), secs,
                    (unsigned long long)channels, channels == 1 ? "" : "s");
        if (!c->quiet)
            fprintf(stderr, "threadlab: loop %s blocked for %.1f s in one handler "
                    "or task (warn at %.1f s): its %llu connection%s get%s no answer "
                    "meanwhile\n", loop_name(w->loop), secs, (double)c->warn_ns / 1e9,
                    (unsigned long long)channels, channels == 1 ? "" : "s",
                    channels == 1 ? "s" : "");
    }
}

static void *checker_main(void *arg)
{
    struct loop_checker *c = arg;
    board_thread_begin(c->board, &c->on_board, ROLE_CHECKER, "checker", 0);
    pthread_mutex_lock(&c->lock);
    while (!c->stopping) {
        board_thread_state(c->board, &c->on_board, STATE_WAITING);
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        uint64_t ns = (uint64_t)until.tv_nsec + c->interval_ns;
        until.tv_sec += (time_t)(ns / 1000000000u);
        until.tv_nsec = (long)(ns % 1000000000u);
        pthread_cond_timedwait(&c->wake, &c->lock, &until);
        board_thread_state(c->board, &c->on_board, STATE_RUNNING);
        uint64_t now = loop_now_ns();
        for (int i = 0; i < c->n && !c->stopping; i++)
            check_one(c, &c->loops[i], now);
    }
    pthread_mutex_unlock(&c->lock);
    board_thread_end(c->board, &c->on_board);
    return NULL;
}

struct loop_checker *loop_checker_start(struct loop **loops, int n,
                                        int warn_ms, struct board *board,
                                        bool quiet)
{
    struct loop_checker *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->loops = calloc((size_t)n, sizeof(*c->loops));
    if (!c->loops) {
        free(c);
        return NULL;
    }
    for (int i = 0; i < n; i++)
        c->loops[i].loop = loops[i];
    c->n = n;
    c->warn_ns = (uint64_t)warn_ms * 1000000u;
    /* Look four times per warning period (at most every 500 ms), so a
     * block is reported at most a quarter period late. */
    c->interval_ns = c->warn_ns / 4;
    if (c->interval_ns > 500000000u)
        c->interval_ns = 500000000u;
    if (c->interval_ns < 10000000u)
        c->interval_ns = 10000000u;
    c->board = board;
    c->quiet = quiet;
    pthread_mutex_init(&c->lock, NULL);
    pthread_condattr_t mono;
    pthread_condattr_init(&mono);
    pthread_condattr_setclock(&mono, CLOCK_MONOTONIC);
    pthread_cond_init(&c->wake, &mono);
    pthread_condattr_destroy(&mono);
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

uint64_t loop_checker_warnings(struct loop_checker *c)
{
    return atomic_load(&c->warnings);
}
