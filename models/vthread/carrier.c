/* carrier.c -- the scheduler: a carrier's loop, its token and its run
 * queue. The park and the resume themselves are park.c (lab 09). See
 * carrier.h for the words, and runtime.h for the picture. The run queue
 * and the resume that both this file and park.c use are run_queue.c.
 *
 * One turn of a carrier's loop (carrier__run) is four named steps:
 *
 *   read_mail       new vthreads from the acceptor; a stop; the end
 *   poll            epoll_wait, then carrier__ready: each ready fd resumes
 *                   its parked vthread (0 ms if some are runnable already,
 *                   else until the next deadline)
 *   expire          deadlines passed: resume those vthreads too
 *   run_queue       switch into each runnable vthread, in order, until it
 *                   parks, yields, blocks or returns (carrier__run_one)
 *
 * The fds are registered one-shot (as Java's virtual threads register
 * theirs): added disarmed when the carrier adopts the vthread, armed by
 * the park for what the vthread waits for (reading or writing), and
 * disarmed by the kernel when that event fires. An event reaches a
 * vthread only after it asked for one, so a writable socket does not wake
 * a reader, and a vthread that is not waiting is not woken at all.
 */
#include "carrier.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/clock.h"

#define POLL_EVENTS_MAX 64

/* ---- the token ------------------------------------------------------------- */

void carrier__wake(struct carrier *c)
{
    uint64_t one = 1;
    ssize_t n = write(c->wake_fd, &one, sizeof(one));
    (void)n;                        /* a full counter wakes the loop anyway */
}

void carrier__acquire_locked(struct carrier *c, struct runner *r)
{
    if (c->owner) {
        c->token_waiters++;
        atomic_fetch_add(&c->wanted, 1);
        carrier__wake(c);           /* the holder may sleep in epoll_wait */
        while (c->owner)
            pthread_cond_wait(&c->token_free, &c->lock);
        c->token_waiters--;
        atomic_fetch_sub(&c->wanted, 1);
        c->owner = r;
        pthread_cond_broadcast(&c->token_free);   /* a yielder waits for this */
        return;
    }
    c->owner = r;
}

void carrier__acquire(struct carrier *c, struct runner *r)
{
    pthread_mutex_lock(&c->lock);
    carrier__acquire_locked(c, r);
    pthread_mutex_unlock(&c->lock);
}

/* The home runner lets the runners back from a call go first: it gives
 * the token up, waits until one of them has it, then queues for it like
 * them. Taking it straight back (release, then acquire) could win the
 * lock before any waiter woke: they slept on while the home runner went
 * back into epoll_wait, and nobody woke them again. */
static void carrier_yield_token(struct carrier *c, struct runner *r)
{
    pthread_mutex_lock(&c->lock);
    c->owner = NULL;
    pthread_cond_broadcast(&c->token_free);
    while (!c->owner && c->token_waiters > 0)
        pthread_cond_wait(&c->token_free, &c->lock);
    carrier__acquire_locked(c, r);
    pthread_mutex_unlock(&c->lock);
}

void carrier__release(struct carrier *c)
{
    pthread_mutex_lock(&c->lock);
    c->owner = NULL;
    pthread_cond_broadcast(&c->token_free);
    pthread_mutex_unlock(&c->lock);
}

/* Take vt onto this carrier: its list, its epoll (registered one-shot
 * and disarmed: no event until a park arms it), its run queue. A failed
 * registration shuts the socket, so the vthread's first read sees the end
 * instead of waiting for ever. */
static void carrier_adopt(struct carrier *c, struct vthread *vt)
{
    vt->next_all = c->all;
    vt->prev_all = NULL;
    if (c->all)
        c->all->prev_all = vt;
    c->all = vt;
    c->vthreads++;
    if (vt->fd >= 0) {
        struct epoll_event ev = { .events = EPOLLONESHOT, .data.ptr = vt };
        if (epoll_ctl(c->epoll_fd, EPOLL_CTL_ADD, vt->fd, &ev) < 0) {
            probe_vthread_unwatched(c->rt->opts.board, c->name, vt->name);
            shutdown(vt->fd, SHUT_RDWR);
        }
    }
    carrier__runq_push(c, vt);
}

/* ---- the loop's steps ---------------------------------------------------------- */

/* The mailbox: adopt new vthreads (oldest first), resume every vthread
 * waiting for input once a stop began. Returns true when the carrier
 * ends: the runtime is ending, and no vthread is left. */
static bool carrier_read_mail(struct carrier *c)
{
    pthread_mutex_lock(&c->lock);
    atomic_store(&c->mail, c->exit);   /* the end stays in the mail */
    struct vthread *inbox = c->inbox, *ordered = NULL;
    c->inbox = NULL;
    bool stop = c->stop_input && !c->stop_seen, exit = c->exit;
    pthread_mutex_unlock(&c->lock);

    while (inbox) {                    /* the inbox is newest first */
        struct vthread *next = inbox->next;
        inbox->next = ordered;
        ordered = inbox;
        inbox = next;
    }
    while (ordered) {
        struct vthread *next = ordered->next;
        carrier_adopt(c, ordered);
        ordered = next;
    }
    if (stop) {
        c->stop_seen = true;
        for (struct vthread *vt = c->all; vt; vt = vt->next_all)
            if (vt->state == VT_PARKED && vt->stop_cuts)
                carrier__resume(c, vt, VT_WAKE_STOP);
    }
    return exit && c->vthreads == 0;
}

/* How long epoll_wait may sleep: not at all with vthreads runnable or a
 * runner waiting for the token, until the next deadline with one, else
 * until an event (-1). */
static int carrier_poll_timeout_ms(struct carrier *c)
{
    if (c->runq_head || atomic_load_explicit(&c->wanted, memory_order_relaxed) > 0)
        return 0;
    struct heap_node *first = heap_peek(&c->deadlines);
    if (!first)
        return -1;
    uint64_t now = now_ns();
    if (first->deadline_ns <= now)
        return 0;
    return (int)((first->deadline_ns - now + 999999) / 1000000);
}

/* Show where the carrier's runner is: in epoll_wait, or running. */
static void carrier_publish(struct carrier *c, struct runner *r, bool waiting)
{
    struct probe_carrier_load load = { .ready = c->runq_len, .vthreads = c->vthreads,
                                       .deadlines = c->deadlines.len };
    probe_carrier_turned(c->rt->opts.board, &r->on_board, c->slot, waiting, &load);
}

static void carrier_poll(struct carrier *c, struct runner *r)
{
    struct epoll_event ev[POLL_EVENTS_MAX];
    int timeout_ms = carrier_poll_timeout_ms(c);
    if (timeout_ms != 0)
        carrier_publish(c, r, true);
    int n = epoll_wait(c->epoll_fd, ev, POLL_EVENTS_MAX, timeout_ms);
    if (timeout_ms != 0)
        carrier_publish(c, r, false);
    carrier__ready(c, ev, n);           /* n < 0 (EINTR): nothing is ready */
}

static void carrier_expire(struct carrier *c)
{
    if (!heap_peek(&c->deadlines))
        return;
    uint64_t now = now_ns();
    struct heap_node *first;
    while ((first = heap_peek(&c->deadlines)) && first->deadline_ns <= now) {
        struct vthread *vt = (struct vthread *)((char *)first -
                                                offsetof(struct vthread, deadline));
        carrier__resume(c, vt, VT_WAKE_DEADLINE);
    }
}

/* Run those runnable now, in order; one that yields waits for the next
 * turn. Stops early when a runner back from a blocking call wants the
 * token, so it does not wait behind a whole queue. */
static void carrier_run_queue(struct carrier *c, struct runner *r)
{
    for (uint64_t n = c->runq_len; n > 0; n--) {
        struct vthread *vt = carrier__runq_pop(c);
        if (!vt)
            break;
        carrier__run_one(c, r, vt);
        if (atomic_load_explicit(&c->wanted, memory_order_relaxed) > 0)
            break;
    }
}

void carrier__run(struct carrier *c, struct runner *r)
{
    for (;;) {
        if (atomic_load_explicit(&c->mail, memory_order_acquire) && carrier_read_mail(c))
            break;
        carrier_poll(c, r);
        carrier_expire(c);
        carrier_run_queue(c, r);
        if (atomic_load_explicit(&c->wanted, memory_order_relaxed) > 0) {
            if (r->spare)
                break;                  /* the home thread is back: retire */
            carrier_yield_token(c, r);  /* a spare is back: let it finish
                                           its vthread's step, then go on */
        }
    }
    carrier__release(c);
}

/* ---- a runner's thread ---------------------------------------------------------- */

int runner__begin(struct runner *r, enum board_role role)
{
    pthread_setname_np(pthread_self(), r->name);
    vt_context_of_thread(&r->sched);
    probe_thread_began(r->carrier->rt->opts.board, &r->on_board, role, r->name);
    return vt_stack_thread_begin();
}

void runner__end(struct runner *r)
{
    probe_thread_ended(r->carrier->rt->opts.board, &r->on_board);
    vt_context_free(&r->sched);
    vt_stack_thread_end();
}
