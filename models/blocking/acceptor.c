/* acceptor.c -- poll, accept, hand over. See acceptor.h. */
#include "acceptor.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "echo/session.h"
#include "net/clock.h"
#include "probe/probe.h"

int acceptor_open(struct acceptor *a, const struct net_listen_opts *o)
{
    memset(a, 0, sizeof(*a));
    a->wake_fd = -1;
    int rc = net_acceptor_open(&a->net, o, false);
    if (rc < 0)
        return rc;
    a->wake_fd = eventfd(0, EFD_CLOEXEC);
    if (a->wake_fd < 0) {
        rc = -errno;
        net_acceptor_close(&a->net);
        return rc;
    }
    return 0;
}

/* EMFILE and ENFILE are not lost connections: net_accept's spare fd took
 * the connection and said "!err busy" (the event says so). */
static void accept_failed(struct acceptor *a, int neg_errno)
{
    probe_accept_failed(a->board, -neg_errno,
                        neg_errno == -EMFILE || neg_errno == -ENFILE);
}

/* ---- refusals: lingering closes on the acceptor's own poll ------------- */

/* Close refusal i and close the gap, keeping the oldest first. */
static void refusal_close(struct acceptor *a, int i)
{
    close(a->refusals[i].fd);
    memmove(&a->refusals[i], &a->refusals[i + 1],
            sizeof(a->refusals[0]) * (size_t)(a->nrefusals - i - 1));
    a->nrefusals--;
}

/* Drop what a refused client sent, a bounded amount per wakeup (a client
 * that floods must not keep the acceptor here). True once the client is
 * done with us: its FIN, or a reset. */
static bool refusal_drained(int fd)
{
    char sink[4096];
    for (int reads = 0; reads < 16; reads++) {
        ssize_t n = recv(fd, sink, sizeof(sink), MSG_DONTWAIT);
        if (n > 0 || (n < 0 && errno == EINTR))
            continue;
        return !(n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
    }
    return false;
}

/* Fill fds with one entry per refusal, in the set's order; returns how many. */
static int refusals_watch(const struct acceptor *a, struct pollfd *fds)
{
    for (int i = 0; i < a->nrefusals; i++)
        fds[i] = (struct pollfd){ .fd = a->refusals[i].fd, .events = POLLIN };
    return a->nrefusals;
}

/* After a poll over refusals_watch's fds: drain those that spoke, close
 * those that are done or due. From the newest down, so that closing one
 * does not move those still to be looked at. */
static void refusals_service(struct acceptor *a, const struct pollfd *fds)
{
    uint64_t now = now_ns();
    for (int i = a->nrefusals - 1; i >= 0; i--) {
        bool done = fds[i].revents && refusal_drained(a->refusals[i].fd);
        if (done || now >= a->refusals[i].deadline_ns)
            refusal_close(a, i);
    }
}

/* How long poll may sleep: until the oldest refusal is due, at most a tick.
 * Every refusal lingers equally long, so the oldest is due first. */
static int poll_timeout_ms(const struct acceptor *a)
{
    if (a->nrefusals == 0)
        return ACCEPTOR_TICK_MS;
    uint64_t now = now_ns(), due = a->refusals[0].deadline_ns;
    if (due <= now)
        return 0;
    uint64_t ms = (due - now + 999999) / 1000000;
    return ms < ACCEPTOR_TICK_MS ? (int)ms : ACCEPTOR_TICK_MS;
}

void acceptor_refuse(struct acceptor *a, int fd, uint64_t id, const char *why)
{
    probe_rejected(a->board, id, why);
    /* Said on a fresh socket: the send buffer is empty, so this never
     * blocks. Then our FIN; the set drops what the client sends until its
     * own FIN, because closing with input unread would send a reset. */
    (void)!send(fd, ECHO_ERR_BUSY, sizeof(ECHO_ERR_BUSY) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    shutdown(fd, SHUT_WR);
    if (a->nrefusals == ACCEPTOR_REFUSALS_MAX) {
        probe_refusal_cut_short(a->board, id, a->nrefusals);
        refusal_close(a, 0);
    }
    uint64_t linger_ns = (uint64_t)ACCEPTOR_REFUSAL_LINGER_MS * 1000000u;
    a->refusals[a->nrefusals++] = (struct acceptor_refusal){
        .fd = fd, .deadline_ns = now_ns() + linger_ns };
}

/* ---- the acceptor thread ------------------------------------------------ */

/* Accept one connection and hand it over, or count why not. Returns false
 * on a fatal accept error. */
static bool accept_one(struct acceptor *a)
{
    int fd = net_accept(&a->net);
    if (fd < 0) {
        if (fd != -EAGAIN)
            accept_failed(a, fd);
        if (net_accept_error_is_fatal(fd)) {
            fprintf(stderr, "acceptor: accept: %s\n", strerror(-fd));
            return false;
        }
        if (fd == -EMFILE || fd == -ENFILE)
            poll(NULL, 0, 10);            /* let connections close first */
        return true;
    }
    uint64_t id = ++a->next_conn_id;      /* refused ones get a number too */
    probe_accepted(a->board, id);
    a->on_accept(a->owner, fd, id);
    return true;
}

static void *acceptor_main(void *arg)
{
    struct acceptor *a = arg;
    struct pollfd fds[2 + ACCEPTOR_REFUSALS_MAX] = {
        { .fd = a->net.listen_fd, .events = POLLIN },
        { .fd = a->wake_fd, .events = POLLIN },
    };

    /* We poll before accept so that acceptor_stop can wake us and so that
     * refused sockets linger on the same wait; a pure blocking server
     * would sit in accept() itself. */
    probe_thread_began(a->board, &a->on_board, ROLE_ACCEPTOR, "acceptor");
    bool broken = false;
    while (!broken && !atomic_load(&a->stopping)) {
        int n = 2 + refusals_watch(a, fds + 2);
        probe_waiting(a->board, &a->on_board);
        int rc = poll(fds, (nfds_t)n, poll_timeout_ms(a));
        probe_woke(a->board, &a->on_board);
        if (a->on_tick)
            a->on_tick(a->owner);
        if (rc > 0 || a->nrefusals > 0)
            refusals_service(a, fds + 2);
        if (rc > 0 && (fds[0].revents & POLLIN) && !accept_one(a))
            broken = true;
    }
    /* Stopping: connections the kernel completed before the stop are
     * still in the accept queue. Taken and served like the rest (their
     * threads see the stop and answer what their clients sent), they get
     * their replies; left there, acceptor_stop's close resets them. At
     * most the queue's length: a client connecting all through the stop
     * cannot hold it. */
    for (int left = a->net.queue_max; !broken && left > 0 && net_accept_pending(&a->net);
         left--)
        broken = !accept_one(a);
    /* Stopping: the refusals still lingering get the rest of their time. */
    while (a->nrefusals > 0) {
        int n = refusals_watch(a, fds);
        poll(fds, (nfds_t)n, poll_timeout_ms(a));
        refusals_service(a, fds);
    }
    probe_thread_ended(a->board, &a->on_board);
    return NULL;
}

int acceptor_start(struct acceptor *a, struct board *board,
                   acceptor_accept_cb on_accept, acceptor_tick_cb on_tick,
                   void *owner)
{
    a->board = board;
    a->on_accept = on_accept;
    a->on_tick = on_tick;
    a->owner = owner;
    int rc = pthread_create(&a->thread, NULL, acceptor_main, a);
    if (rc != 0) {
        a->on_accept = NULL;          /* nothing for acceptor_stop to join */
        return -rc;
    }
    pthread_setname_np(a->thread, "acceptor");
    return 0;
}

void acceptor_stop(struct acceptor *a)
{
    uint64_t one = 1;
    bool was_running = a->on_accept != NULL;
    atomic_store(&a->stopping, true);
    if (was_running) {
        (void)!write(a->wake_fd, &one, sizeof(one));
        pthread_join(a->thread, NULL);
        a->on_accept = NULL;
    }
    if (a->wake_fd >= 0)
        close(a->wake_fd);
    a->wake_fd = -1;
    net_acceptor_close(&a->net);
}

uint16_t acceptor_port(const struct acceptor *a)
{
    return net_acceptor_port(&a->net);
}
