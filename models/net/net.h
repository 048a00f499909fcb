/* net.h -- socket helpers shared by every model and by the load generator.
 *
 * Listening with the channel options of Netty's ServerBootstrap (SO_BACKLOG
 * on the server channel; SO_KEEPALIVE and TCP_NODELAY on each child), an
 * accept that survives running out of file descriptors, and the small
 * retry loops that every blocking or nonblocking socket needs (EINTR,
 * partial writes). Nothing here knows about threads or models: every
 * function may be called from any thread, on the fds it is given.
 */
#ifndef THREADLAB_NET_H
#define THREADLAB_NET_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/types.h>

#define NET_BACKLOG_DEFAULT 511      /* as nginx and Redis; capped by somaxconn */
#define NET_LINGER_MS_DEFAULT 2000   /* how long a lingering close drains */
/* A client that keeps taking our output keeps a lingering close open, but
 * not forever: one that acknowledges a byte now and then could hold a
 * connection (and a graceful stop) for hours. At most this many linger
 * periods in all: 30 s by default, nginx's lingering_time. */
#define NET_LINGER_MAX_PERIODS 15

/* Where to listen and how to treat each accepted connection. */
struct net_listen_opts {
    const char *bind;   /* address to bind; NULL means 127.0.0.1 */
    uint16_t port;      /* 0 asks the kernel for a free port */
    int backlog;        /* accept queue length (SO_BACKLOG); 0: default */
    bool keepalive;     /* SO_KEEPALIVE on accepted sockets */
    bool nodelay;       /* TCP_NODELAY on accepted sockets */
    bool reuseport;     /* SO_REUSEPORT: several listeners share the port */
};

/* A listening socket with a spare descriptor kept for EMFILE. */
struct net_acceptor {
    int listen_fd;      /* the listening socket */
    int spare_fd;       /* /dev/null, closed to make room when fds run out */
    int queue_max;      /* the most connections the accept queue holds */
    bool keepalive;     /* copied from the options, applied per child */
    bool nodelay;
    atomic_uint_fast64_t shed; /* connections closed at once for lack of fds */
};

/* ---- process ---- */

/* Ignore SIGPIPE: a write to a closed peer returns EPIPE instead of killing
 * the whole server. Call once, before starting threads. */
void net_ignore_sigpipe(void);

/* ---- listening and accepting ---- */

/* Bind and listen. nonblocking picks the socket mode (reactors want
 * nonblocking, BIO blocks in poll + accept). Returns 0 or -errno. */
int net_acceptor_open(struct net_acceptor *a, const struct net_listen_opts *o,
                      bool nonblocking);

/* Close the listening socket and the spare. */
void net_acceptor_close(struct net_acceptor *a);

/* The port the acceptor is bound to (useful after asking for port 0). */
uint16_t net_acceptor_port(const struct net_acceptor *a);

/* Accept one connection: returns its fd (close-on-exec, blocking, child
 * options applied), or -errno. -EAGAIN: nothing to accept. -EMFILE/-ENFILE:
 * the process is out of descriptors; the pending connection was accepted
 * with the spare fd and closed at once so that it does not sit in the
 * backlog forever (muduo's idle-fd trick, after libev's EMFILE note), and
 * a->shed counts it. -ECONNABORTED and the like: the peer left early.
 * Any thread, one at a time per acceptor. */
int net_accept(struct net_acceptor *a);

/* True when the accept queue holds a connection the kernel completed: an
 * accept now takes it without blocking. A stop takes these (at most
 * a->queue_max) before it closes the listening socket, because the close
 * resets every connection left in the queue, with the lines its client
 * sent and the kernel acknowledged. Any thread. */
bool net_accept_pending(const struct net_acceptor *a);

/* True when an accept error is fatal for the acceptor (EBADF, EINVAL...),
 * false for the expected ones (EAGAIN, EMFILE, ECONNABORTED, EPROTO...). */
bool net_accept_error_is_fatal(int neg_errno);

/* ---- blocking and nonblocking I/O ---- */

/* Set or clear O_NONBLOCK. Returns 0 or -errno. */
int net_set_nonblocking(int fd, bool on);

/* read(), retried on EINTR. Returns bytes read, 0 at EOF, or -errno. */
ssize_t net_read(int fd, void *buf, size_t len);

/* Write all of buf, retrying EINTR and partial writes; on a nonblocking
 * socket stops at EAGAIN. Returns bytes written (== len on success) or
 * -errno when nothing could be written. Never raises SIGPIPE. */
ssize_t net_write(int fd, const void *buf, size_t len);

/* One sendmsg() of iov[0..count) (MSG_NOSIGNAL), retried on EINTR only:
 * a nonblocking socket may take part of it. Returns bytes written or
 * -errno (-EAGAIN when it took none). */
ssize_t net_writev(int fd, const struct iovec *iov, int count);

/* After a write took n bytes of iov[0..count): step *iov past the vectors
 * it took whole and trim the first one it took part of. Returns how many
 * vectors are left (0: all written). Pure. */
int net_iov_consume(struct iovec **iov, int count, size_t n);

/* Blocking sockets: write everything or fail. Returns 0 or -errno. */
int net_write_all(int fd, const void *buf, size_t len);

/* Bytes received and not yet read on fd (FIONREAD); 0 on error. What a
 * graceful stop still answers. */
size_t net_bytes_held(int fd);

/* Has the peer taken more of our output since *unacked was noted? Reads
 * the bytes we sent that it has not acknowledged yet (SIOCOUTQ), keeps the
 * new count in *unacked, and says whether it shrank. A lingering close
 * waits while the answer is yes: closing with input unread sends a reset,
 * and a reset throws away what the peer has not received yet. */
bool net_peer_took_output(int fd, size_t *unacked);

/* Close so that the last reply reaches the peer instead of being lost to a
 * reset: shutdown(SHUT_WR), read and discard until EOF, or until linger_ms
 * pass without the peer taking any of our output, then close. (nginx's
 * lingering close.) A slow reader that keeps reading gets every byte; one
 * that stops is cut linger_ms after it stopped; none lingers longer than
 * NET_LINGER_MAX_PERIODS * linger_ms. Not after our own
 * shutdown(SHUT_RD): shut both ways, Linux answers the peer's next byte
 * with a reset (RFC 1122), which throws away the replies still queued. */
void net_lingering_close(int fd, int linger_ms);

/* ---- clients ---- */

/* Parse "HOST:PORT" ("[::1]:PORT" for IPv6) into an address. Returns 0 or
 * -EINVAL with a message in err (size err_len). */
int net_parse_hostport(const char *s, struct sockaddr_storage *addr,
                       socklen_t *addr_len, char *err, size_t err_len);

/* Start a connection to addr; nonblocking sockets return at once (connect
 * in progress). Returns the fd or -errno. */
int net_connect(const struct sockaddr_storage *addr, socklen_t addr_len,
                bool nonblocking);


#endif
