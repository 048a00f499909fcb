/* net.c -- listen, accept (EMFILE-safe), retrying I/O. See net.h. */
#include "net.h"
#include "clock.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

void net_ignore_sigpipe(void)
{
    signal(SIGPIPE, SIG_IGN);
}

/* ---- listening ---------------------------------------------------------- */

static int resolve(const char *host, uint16_t port, bool passive,
                   struct sockaddr_storage *addr, socklen_t *addr_len)
{
    struct addrinfo hints = { .ai_family = AF_UNSPEC,
                              .ai_socktype = SOCK_STREAM,
                              .ai_flags = passive ? AI_PASSIVE : 0 };
    struct addrinfo *res;
    char port_str[8];

    snprintf(port_str, sizeof(port_str), "%u", (unsigned)port);
    errno = 0;
    int rc = getaddrinfo(host, port_str, &hints, &res);
    if (rc == EAI_SYSTEM)              /* errno says why; if it says nothing, */
        return errno > 0 ? -errno : -EIO; /* still an error, never 0 */
    if (rc != 0)
        return -EADDRNOTAVAIL;
    memcpy(addr, res->ai_addr, res->ai_addrlen);
    *addr_len = res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}

int net_acceptor_open(struct net_acceptor *a, const struct net_listen_opts *o,
                      bool nonblocking)
{
    struct sockaddr_storage addr;
    socklen_t addr_len;
    int one = 1, rc;

    memset(a, 0, sizeof(*a));
    a->listen_fd = a->spare_fd = -1;
    a->keepalive = o->keepalive;
    a->nodelay = o->nodelay;

    rc = resolve(o->bind ? o->bind : "127.0.0.1", o->port, true, &addr,
                 &addr_len);
    if (rc < 0)
        return rc;
    int type = SOCK_STREAM | SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0);
    a->listen_fd = socket(addr.ss_family, type, 0);
    if (a->listen_fd < 0)
        return -errno;
    /* A restarted server must not wait out TIME_WAIT to bind again. */
    setsockopt(a->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    /* Several boss loops each listen on the port; the kernel spreads new
     * connections over them. */
    if (o->reuseport)
        setsockopt(a->listen_fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
    if (bind(a->listen_fd, (struct sockaddr *)&addr, addr_len) < 0)
        goto out_errno;
    int backlog = o->backlog > 0 ? o->backlog : NET_BACKLOG_DEFAULT;
    if (listen(a->listen_fd, backlog) < 0)
        goto out_errno;
    /* Linux queues one more than the backlog (capped by somaxconn, which
     * only makes the bound looser). */
    a->queue_max = backlog + 1;
    a->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (a->spare_fd < 0)
        goto out_errno;
    return 0;

out_errno:
    rc = -errno;
    close(a->listen_fd);
    a->listen_fd = -1;
    return rc;
}

void net_acceptor_close(struct net_acceptor *a)
{
    if (a->listen_fd >= 0)
        close(a->listen_fd);
    if (a->spare_fd >= 0)
        close(a->spare_fd);
    a->listen_fd = a->spare_fd = -1;
}

uint16_t net_acceptor_port(const struct net_acceptor *a)
{
    struct sockaddr_storage addr;
    socklen_t len = sizeof(addr);
    if (getsockname(a->listen_fd, (struct sockaddr *)&addr, &len) < 0)
        return 0;
    if (addr.ss_family == AF_INET6)
        return ntohs(((struct sockaddr_in6 *)&addr)->sin6_port);
    return ntohs(((struct sockaddr_in *)&addr)->sin_port);
}

/* ---- accepting ---------------------------------------------------------- */

static void apply_child_options(const struct net_acceptor *a, int fd)
{
    int one = 1;
    if (a->keepalive)
        setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    if (a->nodelay)
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

int net_accept(struct net_acceptor *a)
{
    for (;;) {
        int fd = accept4(a->listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd >= 0) {
            apply_child_options(a, fd);
            return fd;
        }
        int err = errno;
        if (err == EINTR)
            continue;
        if ((err == EMFILE || err == ENFILE) && a->spare_fd >= 0) {
            /* Out of descriptors. Left alone, the connection stays in the
             * backlog and a level-triggered poller wakes for it forever.
             * Free the spare, take the connection, tell it we are busy,
             * close it, and take the spare back. */
            close(a->spare_fd);
            fd = accept4(a->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
            if (fd >= 0) {
                static const char busy[] = "!err busy\n";
                (void)!send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL);
                close(fd);
                atomic_fetch_add(&a->shed, 1);
            }
            a->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        }
        return -err;
    }
}

bool net_accept_pending(const struct net_acceptor *a)
{
    struct pollfd p = { .fd = a->listen_fd, .events = POLLIN };
    int n;
    while ((n = poll(&p, 1, 0)) < 0 && errno == EINTR)
        ;
    return n == 1 && (p.revents & POLLIN);
}

bool net_accept_error_is_fatal(int neg_errno)
{
    switch (-neg_errno) {
    case EAGAIN: case EINTR: case EMFILE: case ENFILE: case ENOBUFS:
    case ENOMEM: case ECONNABORTED: case EPROTO: case EPERM:
    case ENETDOWN: case ENOPROTOOPT: case EHOSTDOWN: case ENONET:
    case EHOSTUNREACH: case EOPNOTSUPP: case ENETUNREACH:
        return false;   /* the Linux accept(2) page's "treat as EAGAIN" list */
    default:
        return true;
    }
}

/* ---- I/O ---------------------------------------------------------------- */

int net_set_nonblocking(int fd, bool on)
{
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0)
        return -errno;
    flags = on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK;
    return fcntl(fd, F_SETFL, flags) < 0 ? -errno : 0;
}

int net_iov_consume(struct iovec **iov, int count, size_t n)
{
    struct iovec *v = *iov;
    while (count > 0 && n >= v->iov_len) {
        n -= v->iov_len;
        v++;
        count--;
    }
    if (count > 0) {
        v->iov_base = (char *)v->iov_base + n;
        v->iov_len -= n;
    }
    *iov = v;
    return count;
}

ssize_t net_read(int fd, void *buf, size_t len)
{
    for (;;) {
        ssize_t n = read(fd, buf, len);
        if (n >= 0)
            return n;
        if (errno != EINTR)
            return -errno;
    }
}

ssize_t net_write(int fd, const void *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = send(fd, (const char *)buf + done, len - done, MSG_NOSIGNAL);
        if (n >= 0) {
            done += (size_t)n;
            continue;
        }
        if (errno == EINTR)
            continue;
        if (done > 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        return -errno;
    }
    return (ssize_t)done;
}

ssize_t net_writev(int fd, const struct iovec *iov, int count)
{
    struct msghdr msg = { .msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)count };
    for (;;) {
        ssize_t n = sendmsg(fd, &msg, MSG_NOSIGNAL);
        if (n >= 0)
            return n;
        if (errno != EINTR)
            return errno == EWOULDBLOCK ? -EAGAIN : -errno;
    }
}

int net_write_all(int fd, const void *buf, size_t len)
{
    ssize_t n = net_write(fd, buf, len);
    if (n < 0)
        return (int)n;
    return (size_t)n == len ? 0 : -EAGAIN;
}

size_t net_bytes_held(int fd)
{
    int held = 0;
    return ioctl(fd, FIONREAD, &held) == 0 && held > 0 ? (size_t)held : 0;
}

/* Has the peer closed its side? After our own shutdown(SHUT_RD) a read
 * returns 0 whether or not it has, so ask TCP: while we wait in FIN_WAIT1
 * or FIN_WAIT2 the peer has not sent its FIN yet. */
static bool peer_has_closed(int fd)
{
    struct tcp_info info;
    socklen_t len = sizeof(info);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) < 0)
        return true;                      /* not TCP: nothing to wait for */
    return info.tcpi_state != TCP_FIN_WAIT1 && info.tcpi_state != TCP_FIN_WAIT2;
}

bool net_peer_took_output(int fd, size_t *unacked)
{
    int left = 0;
    if (ioctl(fd, SIOCOUTQ, &left) < 0 || left < 0)
        left = 0;
    bool took = (size_t)left < *unacked;
    *unacked = (size_t)left;
    return took;
}

void net_lingering_close(int fd, int linger_ms)
{
    char sink[4096];
    uint64_t linger_ns = (uint64_t)linger_ms * 1000000u, start = now_ns();
    uint64_t deadline = start + linger_ns;
    uint64_t give_up = start + linger_ns * NET_LINGER_MAX_PERIODS;
    size_t unacked = SIZE_MAX;

    /* Our FIN goes out after the reply; whatever the peer still sends is
     * read and dropped, because closing with unread input makes the kernel
     * send a reset, and a reset can destroy the reply before the peer has
     * read it. */
    shutdown(fd, SHUT_WR);
    for (;;) {
        ssize_t n = recv(fd, sink, sizeof(sink), MSG_DONTWAIT);
        if (n > 0 || (n < 0 && errno == EINTR))
            continue;                     /* dropped */
        if (n < 0 && errno != EAGAIN)
            break;                        /* a reset: nothing left to save */
        if (n == 0 && peer_has_closed(fd))
            break;                        /* its FIN, with nothing unread */
        uint64_t now = now_ns();
        if (net_peer_took_output(fd, &unacked))     /* still reading our replies */
            deadline = now + linger_ns < give_up ? now + linger_ns : give_up;
        if (now >= deadline)
            break;
        int left_ms = (int)((deadline - now) / 1000000u) + 1;
        if (n == 0) {
            /* A stop shut our read side: poll would not wait, so sleep a
             * little and look again. Only during a graceful stop. */
            struct timespec nap = { 0, 5 * 1000000L };
            nanosleep(&nap, NULL);
        } else {
            struct pollfd p = { .fd = fd, .events = POLLIN };
            poll(&p, 1, left_ms);
        }
    }
    close(fd);
}

/* ---- clients ------------------------------------------------------------ */

int net_parse_hostport(const char *s, struct sockaddr_storage *addr,
                       socklen_t *addr_len, char *err, size_t err_len)
{
    char host[256];
    const char *colon = strrchr(s, ':');
    if (!colon || colon == s || colon[1] == '\0') {
        snprintf(err, err_len, "'%s' is not HOST:PORT", s);
        return -EINVAL;
    }
    size_t hlen = (size_t)(colon - s);
    if (s[0] == '[' && colon[-1] == ']') {  /* [::1]:8080 */
        s++;
        hlen -= 2;
    }
    if (hlen >= sizeof(host)) {
        snprintf(err, err_len, "host name too long");
        return -EINVAL;
    }
    memcpy(host, s, hlen);
    host[hlen] = '\0';
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (*end != '\0' || port < 1 || port > 65535) {
        snprintf(err, err_len, "port '%s' is not a number from 1 to 65535",
                 colon + 1);
        return -EINVAL;
    }
    if (resolve(host, (uint16_t)port, false, addr, addr_len) < 0) {
        snprintf(err, err_len, "cannot resolve host '%s'", host);
        return -EINVAL;
    }
    return 0;
}

int net_connect(const struct sockaddr_storage *addr, socklen_t addr_len,
                bool nonblocking)
{
    int type = SOCK_STREAM | SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0);
    int fd = socket(addr->ss_family, type, 0);
    if (fd < 0)
        return -errno;
    if (connect(fd, (const struct sockaddr *)addr, addr_len) < 0 &&
        errno != EINPROGRESS) {
        int err = errno;
        close(fd);
        return -err;
    }
    return fd;
}
