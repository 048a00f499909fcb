/* runtime.c -- the runtime's interface: carriers started and ended,
 * vthreads spawned, and the calls a vthread makes (read, write, yield, a
 * blocking call, a lingering close). See runtime.h; the scheduler itself
 * is carrier.c, the monitor monitor.c.
 */
#include "carrier.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/clock.h"
#include "net/net.h"

int vt_default_carriers(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores > 0 ? (int)cores : 1;
}

/* ---- carriers ------------------------------------------------------------------ */

static void *carrier_main(void *arg)
{
    struct carrier *c = arg;
    int rc = runner__begin(&c->home, ROLE_CARRIER);
    if (rc < 0)                         /* no alternate stack: an overflow is a
                                           plain SIGSEGV on this carrier */
        fprintf(stderr, "vthread: %s cannot report stack overflows (%s)\n", c->name,
                strerror(-rc));
    carrier__acquire(c, &c->home);
    carrier__run(c, &c->home);
    runner__end(&c->home);
    return NULL;
}

static int carrier_init(struct vt_runtime *rt, struct carrier *c, int index)
{
    c->rt = rt;
    c->index = index;
    snprintf(c->name, sizeof(c->name), "carrier-%d", index);
    c->home = (struct runner){ .carrier = c };
    snprintf(c->home.name, sizeof(c->home.name), "%s", c->name);
    heap_init(&c->deadlines);
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->token_free, NULL);
    c->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    c->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
    if (c->epoll_fd < 0 || c->wake_fd < 0 ||
        epoll_ctl(c->epoll_fd, EPOLL_CTL_ADD, c->wake_fd, &ev) < 0)
        return -errno;
    c->slot = probe_carrier_opened(rt->opts.board, c->name);
    return 0;
}

static void carrier_destroy(struct vt_runtime *rt, struct carrier *c)
{
    probe_carrier_closed(rt->opts.board, c->slot);
    if (c->wake_fd >= 0)
        close(c->wake_fd);
    if (c->epoll_fd >= 0)
        close(c->epoll_fd);
    heap_free(&c->deadlines);
    pthread_cond_destroy(&c->token_free);
    pthread_mutex_destroy(&c->lock);
}

/* Mail for c: set what changed under its lock, then wake its loop. */
static void carrier_mail_end(struct carrier *c)
{
    atomic_store_explicit(&c->mail, true, memory_order_release);
    pthread_mutex_unlock(&c->lock);
    carrier__wake(c);
}

/* ---- the runtime ------------------------------------------------------------------- */

static int start_carriers(struct vt_runtime *rt)
{
    for (int i = 0; i < rt->ncarriers; i++) {
        struct carrier *c = &rt->carriers[i];
        c->epoll_fd = c->wake_fd = -1;
    }
    for (int i = 0; i < rt->ncarriers; i++) {
        int rc = carrier_init(rt, &rt->carriers[i], i);
        if (rc < 0)
            return rc;
    }
    for (int i = 0; i < rt->ncarriers; i++) {
        struct carrier *c = &rt->carriers[i];
        int rc = pthread_create(&c->home.thread, NULL, carrier_main, c);
        if (rc != 0)
            return -rc;
        c->home.spare = false;
        rt->carriers_started++;
    }
    return 0;
}

struct vt_runtime *vt_runtime_start(const struct vt_runtime_opts *o)
{
    struct vt_runtime *rt = calloc(1, sizeof(*rt));
    if (!rt)
        return NULL;
    rt->opts = *o;
    if (rt->opts.carriers <= 0)
        rt->opts.carriers = vt_default_carriers();
    if (rt->opts.stack_bytes == 0)
        rt->opts.stack_bytes = VT_STACK_DEFAULT_BYTES;
    rt->ncarriers = rt->opts.carriers;
    pthread_mutex_init(&rt->live_lock, NULL);
    pthread_cond_init(&rt->live_changed, NULL);
    rt->carriers = calloc((size_t)rt->ncarriers, sizeof(*rt->carriers));
    int rc = rt->carriers ? start_carriers(rt) : -ENOMEM;
    if (rc == 0)
        rc = monitor__start(rt);
    if (rc < 0) {
        vt_runtime_free(rt);
        errno = -rc;
        return NULL;
    }
    return rt;
}

/* A vthread's first frame: run main, then leave for good. The stack is
 * freed by the runner it returns to (carrier__run_one), not here: nobody
 * can free the stack they stand on. */
static void vthread_entry(void *arg)
{
    struct vthread *vt = arg;
    vt_context_entered();
    vt->main(vt, vt->arg);
    vt->state = VT_DONE;
    vt_switch_final(&vt->ctx, &vt->runner->sched);
}

int vt_spawn(struct vt_runtime *rt, int fd, uint64_t id, vt_main_fn main, void *arg)
{
    struct vthread *vt = calloc(1, sizeof(*vt));
    if (!vt)
        return -ENOMEM;
    int rc = vt_stack_alloc(&vt->stack, rt->opts.stack_bytes);
    if (rc < 0) {
        free(vt);
        return rc;
    }
    unsigned turn = atomic_fetch_add(&rt->next_carrier, 1);
    struct carrier *c = &rt->carriers[turn % (unsigned)rt->ncarriers];
    *vt = (struct vthread){ .stack = vt->stack, .carrier = c, .state = VT_NEW, .fd = fd,
                            .id = id, .main = main, .arg = arg,
                            .deadline.index = HEAP_NOT_IN };
    snprintf(vt->name, sizeof(vt->name), "vt-%llu", (unsigned long long)id);
    snprintf(vt->where, sizeof(vt->where), "%s@%s", vt->name, c->name);
    vt_context_make(&vt->ctx, vt->stack.lo, vt->stack.bytes, vthread_entry, vt);
    if (fd >= 0)
        net_set_nonblocking(fd, true);
    probe_vthread_born(rt->opts.board, &vt->on_board, vt->name, id);

    pthread_mutex_lock(&rt->live_lock);
    rt->live++;
    pthread_mutex_unlock(&rt->live_lock);
    pthread_mutex_lock(&c->lock);
    vt->next = c->inbox;
    c->inbox = vt;
    carrier_mail_end(c);
    return 0;
}

uint64_t vt_runtime_live(struct vt_runtime *rt)
{
    pthread_mutex_lock(&rt->live_lock);
    uint64_t n = rt->live;
    pthread_mutex_unlock(&rt->live_lock);
    return n;
}

uint64_t vt_runtime_handoffs(struct vt_runtime *rt)
{
    pthread_mutex_lock(&rt->monitor_lock);
    uint64_t n = rt->handoffs;
    pthread_mutex_unlock(&rt->monitor_lock);
    return n;
}

void vt_runtime_stop_input(struct vt_runtime *rt)
{
    atomic_store(&rt->stopping, true);
    for (int i = 0; i < rt->ncarriers; i++) {
        struct carrier *c = &rt->carriers[i];
        pthread_mutex_lock(&c->lock);
        c->stop_input = true;
        carrier_mail_end(c);
    }
}

void vt_runtime_wait_empty(struct vt_runtime *rt)
{
    pthread_mutex_lock(&rt->live_lock);
    while (rt->live > 0)
        pthread_cond_wait(&rt->live_changed, &rt->live_lock);
    pthread_mutex_unlock(&rt->live_lock);
}

void vt_runtime_free(struct vt_runtime *rt)
{
    for (int i = 0; i < rt->carriers_started; i++) {
        struct carrier *c = &rt->carriers[i];
        pthread_mutex_lock(&c->lock);
        c->exit = true;
        carrier_mail_end(c);
    }
    for (int i = 0; i < rt->carriers_started; i++)
        pthread_join(rt->carriers[i].home.thread, NULL);
    monitor__stop(rt);
    for (int i = 0; rt->carriers && i < rt->ncarriers; i++)
        carrier_destroy(rt, &rt->carriers[i]);
    free(rt->carriers);
    pthread_cond_destroy(&rt->live_changed);
    pthread_mutex_destroy(&rt->live_lock);
    free(rt);
}

/* ---- inside a vthread ---------------------------------------------------------------- */

const char *vt_name(const struct vthread *self) { return self->name; }
const char *vt_where(const struct vthread *self) { return self->where; }
struct board_thread_ref *vt_on_board(struct vthread *self) { return &self->on_board; }
struct board *vt_board(const struct vthread *self) { return self->carrier->rt->opts.board; }

int vt_fd(const struct vthread *self) { return self->fd; }
uint64_t vt_id(const struct vthread *self) { return self->id; }

void vt_close(struct vthread *self)
{
    close(self->fd);
    self->fd = -1;
}

bool vt_stopping(const struct vthread *self)
{
    return atomic_load(&self->carrier->rt->stopping);
}

/* net_writev returns -errno itself, from another file: errno is
 * thread-local, and a vthread may wake on another thread than it parked
 * on, so no errno is read here across a park. (vt_read is park.c's.) */
int vt_write_all(struct vthread *self, struct iovec *iov, int count, int stall_ms)
{
    while (count > 0) {
        ssize_t n = net_writev(self->fd, iov, count);
        if (n == -EAGAIN) {
            uint64_t deadline = stall_ms > 0 ? deadline_in_ms((uint64_t)stall_ms) : 0;
            if (vt__park(self, EPOLLOUT, deadline, false) == VT_WAKE_DEADLINE)
                return -EAGAIN;
            continue;
        }
        if (n < 0)
            return (int)n;
        count = net_iov_consume(&iov, count, (size_t)n);
    }
    return 0;
}

void vt_blocking_begin(struct vthread *self)
{
    struct carrier *c = self->carrier;
    uint64_t now = now_ns();
    self->state = VT_BLOCKED;
    probe_vthread_blocked(vt_board(self), &self->on_board, &self->runner->on_board,
                          c->slot, now);
    if (c->rt->opts.pin)
        return;                         /* pinned: the carrier waits with us */
    pthread_mutex_lock(&c->lock);
    c->blocked++;
    c->released_ns = now;
    c->owner = NULL;                    /* the monitor may hand it to a spare */
    pthread_cond_broadcast(&c->token_free);
    pthread_mutex_unlock(&c->lock);
}

void vt_blocking_end(struct vthread *self)
{
    struct carrier *c = self->carrier;
    if (!c->rt->opts.pin) {
        pthread_mutex_lock(&c->lock);
        c->blocked--;
        carrier__acquire_locked(c, self->runner);   /* a spare gives it back */
        pthread_mutex_unlock(&c->lock);
    }
    uint64_t now = now_ns();
    self->state = VT_RUNNING;
    probe_vthread_unblocked(vt_board(self), &self->on_board, &self->runner->on_board,
                            c->slot, now);
}

void vt_lingering_close(struct vthread *self, int linger_ms)
{
    char sink[4096];
    uint64_t linger_ns = (uint64_t)linger_ms * 1000000u, start = now_ns();
    uint64_t deadline = start + linger_ns;
    uint64_t give_up = start + linger_ns * NET_LINGER_MAX_PERIODS;
    size_t unacked = SIZE_MAX;

    /* As net_lingering_close: our FIN after the reply, and whatever the
     * peer still sends read and dropped, so that no reset destroys the
     * reply. Waiting parks this vthread, not its carrier. */
    shutdown(self->fd, SHUT_WR);
    for (;;) {
        ssize_t n = net_read(self->fd, sink, sizeof(sink));
        if (n > 0)
            continue;                   /* dropped */
        if (n != -EAGAIN)
            break;                      /* its FIN, or a reset: done */
        uint64_t now = now_ns();
        if (net_peer_took_output(self->fd, &unacked))
            deadline = now + linger_ns < give_up ? now + linger_ns : give_up;
        if (now >= deadline)
            break;
        vt__park(self, EPOLLIN, deadline, false);
    }
    vt_close(self);
}
