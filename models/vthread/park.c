/* park.c -- the park and the resume (lab 09): how blocking-style code
 * runs on a carrier without blocking it.
 *
 * A vthread that meets EAGAIN parks: it asks its carrier's epoll for the
 * one event it waits for, saves itself, and switches back to the
 * carrier's loop. The loop, after epoll_wait, makes each vthread whose
 * event came runnable, and later switches into it: the vthread goes on
 * inside vt__park, as if its read had simply taken a while.
 *
 * Registrations are one-shot (EPOLLONESHOT): once its event fires, the
 * kernel disarms the fd until it is armed again. vt->interest remembers
 * what the registration is armed for, so that a vthread resumed for
 * another reason (a deadline, a stop) and parking again for the same
 * event does not pay a system call to ask twice.
 *
 * Everything here runs on the thread that holds the vthread's carrier's
 * token: the fields it touches are the "token" ones of carrier.h.
 */
#include "carrier.h"

#include <errno.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "net/net.h"

/* net_read returns -errno itself: errno is thread-local, and a vthread
 * may wake on another thread than it parked on (a spare standing in), so
 * no errno is read here across a park. */
ssize_t vt_read(struct vthread *self, void *buf, size_t len,
                uint64_t deadline_ns, bool stop_cuts)
{
    for (;;) {
        ssize_t n = net_read(self->fd, buf, len);
        if (n != -EAGAIN)
            return n;
        enum vt_wake why = vt__park(self, EPOLLIN, deadline_ns, stop_cuts);
        if (why == VT_WAKE_DEADLINE)
            return -ETIMEDOUT;
        if (why == VT_WAKE_STOP)
            return -ECANCELED;
    }
}

enum vt_wake vt__park(struct vthread *self, uint32_t events, uint64_t deadline_ns,
                      bool stop_cuts)
{
    struct carrier *c = self->carrier;
    if (stop_cuts && c->stop_seen)
        return VT_WAKE_STOP;            /* the carrier resumes the parked once */
    if (events && self->interest != events) {
        struct epoll_event ev = { .events = events | EPOLLONESHOT, .data.ptr = self };
        if (epoll_ctl(c->epoll_fd, EPOLL_CTL_MOD, self->fd, &ev) < 0) {
            shutdown(self->fd, SHUT_RDWR);  /* no event could come: let the */
            return VT_WAKE_READY;           /* caller's retry see the end  */
        }
        self->interest = events;
    }
    if (deadline_ns) {
        self->deadline.deadline_ns = deadline_ns;
        if (heap_push(&c->deadlines, &self->deadline) < 0)
            return VT_WAKE_DEADLINE;    /* no memory for the timer: give up waiting */
    }
    self->state = VT_PARKED;
    self->stop_cuts = stop_cuts;
    probe_blocked(c->rt->opts.board, &self->on_board);
    vt_switch(&self->ctx, &self->runner->sched);
    return self->woke;
}

void carrier__ready(struct carrier *c, const struct epoll_event *ev, int n)
{
    for (int i = 0; i < n; i++) {
        struct vthread *vt = ev[i].data.ptr;
        if (!vt) {
            carrier__drain_wake(c);     /* mail, or a runner wants the token */
            continue;
        }
        vt->interest = 0;               /* fired: the kernel disarmed it */
        if (vt->state == VT_PARKED)     /* else resumed already: a deadline */
            carrier__resume(c, vt, VT_WAKE_READY);
    }
}

void carrier__run_one(struct carrier *c, struct runner *r, struct vthread *vt)
{
    vt->state = VT_RUNNING;
    vt->runner = r;
    probe_woke(c->rt->opts.board, &vt->on_board);
    vt_stack_running(&vt->stack, vt->name);
    vt_switch(&r->sched, &vt->ctx);
    vt_stack_running(NULL, NULL);
    if (vt->state == VT_DONE) {
        vt_stack_free(&vt->stack);      /* only now: it ran on it until the switch */
        carrier__forget(c, vt);
    }
}
