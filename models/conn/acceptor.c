/* acceptor.c -- poll, accept, hand over. See acceptor.h. */
#include "acceptor.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

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

static void accept_failed(struct acceptor *a, int neg_errno)
{
    board_add(a->board, CTR_ERR_ACCEPT, 1);
    if (neg_errno == -EMFILE || neg_errno == -ENFILE)
        board_event(a->board, EV_ERROR, "%s: the spare fd took the connection "
                    "and closed it with !err busy", strerror(-neg_errno));
    else
        board_event(a->board, EV_ERROR, "accept failed: %s", strerror(-neg_errno));
}

static void *acceptor_main(void *arg)
{
    struct acceptor *a = arg;
    struct pollfd fds[2] = {
        { .fd = a->net.listen_fd, .events = POLLIN },
        { .fd = a->wake_fd, .events = POLLIN },
    };

    /* We poll before accept only so that acceptor_stop can wake us; a pure
     * blocking server would sit in accept() itself. */
    board_thread_begin(a->board, &a->on_board, ROLE_ACCEPTOR, "acceptor", 0);
    while (!atomic_load(&a->stopping)) {
        board_thread_state(a->board, &a->on_board, STATE_WAITING);
        int rc = poll(fds, 2, ACCEPTOR_TICK_MS);
        board_thread_state(a->board, &a->on_board, STATE_RUNNING);
        if (a->on_tick)
            a->on_tick(a->owner);
        if (rc <= 0 || !(fds[0].revents & POLLIN))
            continue;
        int fd = net_accept(&a->net);
        if (fd < 0) {
            if (fd != -EAGAIN)
                accept_failed(a, fd);
            if (net_accept_error_is_fatal(fd)) {
                fprintf(stderr, "acceptor: accept: %s\n", strerror(-fd));
                break;
            }
            if (fd == -EMFILE || fd == -ENFILE)
                poll(NULL, 0, 10);        /* let connections close first */
            continue;
        }
        uint64_t id = ++a->next_conn_id;  /* refused ones get a number too */
        board_add(a->board, CTR_ACCEPTED, 1);
        board_event(a->board, EV_ACCEPT, "conn %llu", (unsigned long long)id);
        a->on_accept(a->owner, fd, id);
    }
    board_thread_end(a->board, &a->on_board);
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

bool acceptor_stopping(struct acceptor *a)
{
    return atomic_load(&a->stopping);
}
