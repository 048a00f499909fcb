/* who_fake.c -- fake multi-reactors that answer !who with a flaw. See
 * who_fake.h. One thread polls the listener, a stop pipe and every
 * connection; lines are short (a proof's), so each reply is written at
 * once with a blocking send. */
#include "who_fake.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define FAKE_MAX_CONNS 64               /* more than any proof opens */
#define FAKE_LINE_BYTES 256             /* a longer line is echoed in pieces */

struct fake_conn {
    int fd;                             /* -1: a free place */
    int index;                          /* accept order, from 0 */
    int lines;                          /* lines answered so far */
    size_t len;                         /* bytes of the line so far */
    char line[FAKE_LINE_BYTES];
};

struct who_fake {
    enum who_fake_flaw flaw;
    int workers;
    int listen_fd;
    int stop_pipe[2];                   /* a byte on [1] ends the thread */
    uint16_t port;
    int accepted;                       /* connections so far */
    int last_chosen;                    /* the worker the last one went to */
    struct fake_conn conns[FAKE_MAX_CONNS];
    pthread_t thread;
};

const char *who_fake_flaw_name(enum who_fake_flaw flaw)
{
    switch (flaw) {
    case WHO_FAKE_FAITHFUL: return "is faithful (round robin, a connection on one worker for life)";
    case WHO_FAKE_ALWAYS_MASKS: return "chooser always masks: with 3 workers it never picks worker-2";
    case WHO_FAKE_STARTS_ONE_LATE: return "chooser starts one late: connection 0 goes to worker-2";
    case WHO_FAKE_CHANNEL_MOVES: return "channels move to the next worker at their third line";
    case WHO_FAKE_LAST_CHOSEN: return "lines are all served by the worker chosen last, not by their own";
    case WHO_FAKE_BOSS_ANSWERS: return "boss serves every line itself (nothing is handed off)";
    case WHO_FAKE_FLAWS: break;
    }
    return "?";
}

/* The worker (from 0) that the connection's chooser picked, by the flaw. */
static int chosen_worker(const struct who_fake *f, int index)
{
    if (f->flaw == WHO_FAKE_ALWAYS_MASKS)
        return index & (f->workers - 1);
    if (f->flaw == WHO_FAKE_STARTS_ONE_LATE)
        return (index + 1) % f->workers;
    return index % f->workers;
}

/* The thread that answers this line of c, as !who names it. */
static void answering_thread(const struct who_fake *f, const struct fake_conn *c,
                             char *name, size_t cap)
{
    int w = chosen_worker(f, c->index);
    if (f->flaw == WHO_FAKE_BOSS_ANSWERS) {
        snprintf(name, cap, "boss");
        return;
    }
    if (f->flaw == WHO_FAKE_CHANNEL_MOVES && c->lines >= 2)
        w = (w + 1) % f->workers;
    else if (f->flaw == WHO_FAKE_LAST_CHOSEN)
        w = f->last_chosen;
    snprintf(name, cap, "worker-%d", w + 1);
}

static void close_conn(struct fake_conn *c)
{
    close(c->fd);
    c->fd = -1;
}

/* Answer c's complete line: !who as the flaw says, anything else echoed. */
static void answer_line(struct who_fake *f, struct fake_conn *c)
{
    char reply[FAKE_LINE_BYTES + 64];
    size_t n = c->len;
    if (n == 5 && memcmp(c->line, "!who\n", 5) == 0) {
        char thread[32];
        answering_thread(f, c, thread, sizeof(thread));
        n = (size_t)snprintf(reply, sizeof(reply), "!who model=multireactor thread=%s "
                             "conn=%d\n", thread, c->index + 1);
    } else {
        memcpy(reply, c->line, n);
    }
    c->lines++;
    c->len = 0;
    if (send(c->fd, reply, n, MSG_NOSIGNAL) != (ssize_t)n)
        close_conn(c);
}

/* Read what c has; answer each line it completes. */
static void serve_conn(struct who_fake *f, struct fake_conn *c)
{
    char buf[FAKE_LINE_BYTES];
    ssize_t n = recv(c->fd, buf, sizeof(buf), 0);
    if (n <= 0) {
        close_conn(c);
        return;
    }
    for (ssize_t i = 0; i < n && c->fd >= 0; i++) {
        c->line[c->len++] = buf[i];
        if (buf[i] == '\n' || c->len == sizeof(c->line))
            answer_line(f, c);
    }
}

static void accept_conn(struct who_fake *f)
{
    int fd = accept4(f->listen_fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0)
        return;
    for (int i = 0; i < FAKE_MAX_CONNS; i++) {
        struct fake_conn *c = &f->conns[i];
        if (c->fd < 0) {
            *c = (struct fake_conn){ .fd = fd, .index = f->accepted++ };
            f->last_chosen = chosen_worker(f, c->index);
            return;
        }
    }
    close(fd);                          /* full: the proof sees a closed connection */
}

static void *fake_main(void *arg)
{
    struct who_fake *f = arg;
    for (;;) {
        struct pollfd p[FAKE_MAX_CONNS + 2];
        int at[FAKE_MAX_CONNS + 2], n = 0;
        p[n++] = (struct pollfd){ .fd = f->stop_pipe[0], .events = POLLIN };
        p[n++] = (struct pollfd){ .fd = f->listen_fd, .events = POLLIN };
        for (int i = 0; i < FAKE_MAX_CONNS; i++)
            if (f->conns[i].fd >= 0) {
                at[n] = i;
                p[n++] = (struct pollfd){ .fd = f->conns[i].fd, .events = POLLIN };
            }
        if (poll(p, (nfds_t)n, -1) < 0 && errno != EINTR)
            break;
        if (p[0].revents)
            break;
        if (p[1].revents)
            accept_conn(f);
        for (int k = 2; k < n; k++)
            if (p[k].revents && f->conns[at[k]].fd >= 0)
                serve_conn(f, &f->conns[at[k]]);
    }
    return NULL;
}

static int listen_on_loopback(uint16_t *port)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, FAKE_MAX_CONNS) < 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
        int err = errno;
        close(fd);
        return -err;
    }
    *port = ntohs(a.sin_port);
    return fd;
}

struct who_fake *who_fake_start(enum who_fake_flaw flaw, int workers)
{
    struct who_fake *f = calloc(1, sizeof(*f));
    if (!f)
        return NULL;
    f->flaw = flaw;
    f->workers = workers;
    for (int i = 0; i < FAKE_MAX_CONNS; i++)
        f->conns[i].fd = -1;
    int rc = listen_on_loopback(&f->port);
    if (rc < 0)
        goto out_free;
    f->listen_fd = rc;
    if (pipe2(f->stop_pipe, O_CLOEXEC) < 0) {
        rc = -errno;
        goto out_close_listener;
    }
    rc = -pthread_create(&f->thread, NULL, fake_main, f);
    if (rc == 0)
        return f;
    close(f->stop_pipe[0]);
    close(f->stop_pipe[1]);
out_close_listener:
    close(f->listen_fd);
out_free:
    free(f);
    errno = -rc;
    return NULL;
}

uint16_t who_fake_port(const struct who_fake *f)
{
    return f->port;
}

void who_fake_stop(struct who_fake *f)
{
    char stop = 1;
    while (write(f->stop_pipe[1], &stop, 1) < 0 && errno == EINTR)
        ;
    pthread_join(f->thread, NULL);
    for (int i = 0; i < FAKE_MAX_CONNS; i++)
        if (f->conns[i].fd >= 0)
            close_conn(&f->conns[i]);
    close(f->listen_fd);
    close(f->stop_pipe[0]);
    close(f->stop_pipe[1]);
    free(f);
}
