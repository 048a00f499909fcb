/* tinyio.c -- an LD_PRELOAD fault shim: every read and write on a socket
 * moves 1 to 7 bytes, however many were asked for, as a congested network
 * or a tiny socket buffer can make it do. Code that takes a short read for
 * "drained", a short write for "sent", or a line for one read's worth (the
 * 半包 case, on every line) shows it at once.
 *
 *   LD_PRELOAD=build/shims/tinyio.so build/tests/check_pool
 *
 * Wrapped: read, write, recv, send, recvfrom, sendto, readv, writev,
 * recvmsg, sendmsg. Only sockets are capped (fstat on each call): an
 * eventfd read must stay 8 bytes, a file write whole. The size is drawn
 * per thread from a fixed-seed generator, so a run is reproducible up to
 * the scheduling. At exit the shim says on stderr how many calls it capped,
 * so a run can prove the fault was there. Not for the sanitizer builds
 * (their runtimes wrap the same calls). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define TINY_MAX_BYTES 7
#define TINY_MAX_IOV 8              /* a capped vector needs few entries */

static atomic_ullong capped;        /* calls made smaller, all threads */
static __thread uint32_t rng_state;

/* 1..TINY_MAX_BYTES, xorshift32 per thread (seeded from the thread's
 * first use). */
static size_t tiny_len(void)
{
    if (rng_state == 0)
        rng_state = 2463534242u ^ (uint32_t)(uintptr_t)&rng_state;
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return 1 + rng_state % TINY_MAX_BYTES;
}

static int is_socket(int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

/* The length to pass on: len, or fewer bytes for a socket. */
static size_t cap(int fd, size_t len)
{
    if (len <= 1 || !is_socket(fd))
        return len;
    size_t tiny = tiny_len();
    if (tiny >= len)
        return len;
    atomic_fetch_add_explicit(&capped, 1, memory_order_relaxed);
    return tiny;
}

/* Cut an iovec down to at most limit bytes, into out (TINY_MAX_IOV). */
static int cap_iov(const struct iovec *iov, int n, size_t limit, struct iovec *out)
{
    int k = 0;
    for (int i = 0; i < n && limit > 0 && k < TINY_MAX_IOV; i++) {
        if (iov[i].iov_len == 0)
            continue;
        out[k] = iov[i];
        if (out[k].iov_len > limit)
            out[k].iov_len = limit;
        limit -= out[k].iov_len;
        k++;
    }
    return k;
}

static size_t iov_total(const struct iovec *iov, size_t n)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += iov[i].iov_len;
    return total;
}

/* The libc function this one wraps, looked up on first use. (The
 * *(void **) store is POSIX's way to keep a dlsym result a function.) */
#define REAL(name) \
    static __typeof__(&name) real_##name; \
    if (!real_##name) \
        *(void **)&real_##name = dlsym(RTLD_NEXT, #name)

ssize_t read(int fd, void *buf, size_t len)
{
    REAL(read);
    return real_read(fd, buf, cap(fd, len));
}

ssize_t write(int fd, const void *buf, size_t len)
{
    REAL(write);
    return real_write(fd, buf, cap(fd, len));
}

ssize_t recv(int fd, void *buf, size_t len, int flags)
{
    REAL(recv);
    return real_recv(fd, buf, cap(fd, len), flags);
}

ssize_t send(int fd, const void *buf, size_t len, int flags)
{
    REAL(send);
    return real_send(fd, buf, cap(fd, len), flags);
}

/* glibc's own argument types (a transparent union for the address). */
ssize_t recvfrom(int fd, void *buf, size_t len, int flags, __SOCKADDR_ARG addr,
                 socklen_t *addr_len)
{
    REAL(recvfrom);
    return real_recvfrom(fd, buf, cap(fd, len), flags, addr, addr_len);
}

ssize_t sendto(int fd, const void *buf, size_t len, int flags,
               __CONST_SOCKADDR_ARG addr, socklen_t addr_len)
{
    REAL(sendto);
    return real_sendto(fd, buf, cap(fd, len), flags, addr, addr_len);
}

ssize_t readv(int fd, const struct iovec *iov, int n)
{
    REAL(readv);
    struct iovec small[TINY_MAX_IOV];
    size_t total = iov_total(iov, n > 0 ? (size_t)n : 0), limit = cap(fd, total);
    if (limit == total)
        return real_readv(fd, iov, n);
    return real_readv(fd, small, cap_iov(iov, n, limit, small));
}

ssize_t writev(int fd, const struct iovec *iov, int n)
{
    REAL(writev);
    struct iovec small[TINY_MAX_IOV];
    size_t total = iov_total(iov, n > 0 ? (size_t)n : 0), limit = cap(fd, total);
    if (limit == total)
        return real_writev(fd, iov, n);
    return real_writev(fd, small, cap_iov(iov, n, limit, small));
}

ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
    REAL(recvmsg);
    struct iovec small[TINY_MAX_IOV];
    size_t total = iov_total(msg->msg_iov, msg->msg_iovlen), limit = cap(fd, total);
    if (limit == total)
        return real_recvmsg(fd, msg, flags);
    struct msghdr copy = *msg;
    copy.msg_iov = small;
    copy.msg_iovlen = (size_t)cap_iov(msg->msg_iov, (int)msg->msg_iovlen, limit, small);
    ssize_t n = real_recvmsg(fd, &copy, flags);
    msg->msg_flags = copy.msg_flags;
    msg->msg_namelen = copy.msg_namelen;
    msg->msg_controllen = copy.msg_controllen;
    return n;
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
    REAL(sendmsg);
    struct iovec small[TINY_MAX_IOV];
    size_t total = iov_total(msg->msg_iov, msg->msg_iovlen), limit = cap(fd, total);
    if (limit == total)
        return real_sendmsg(fd, msg, flags);
    struct msghdr copy = *msg;
    copy.msg_iov = small;
    copy.msg_iovlen = (size_t)cap_iov(msg->msg_iov, (int)msg->msg_iovlen, limit, small);
    return real_sendmsg(fd, &copy, flags);
}

static void report(void)
{
    fprintf(stderr, "tinyio shim: pid %d: %llu socket calls capped to 1-%d bytes\n",
            (int)getpid(), (unsigned long long)atomic_load(&capped), TINY_MAX_BYTES);
}

__attribute__((constructor)) static void shim_init(void)
{
    atomic_store(&capped, 0);
    atexit(report);
}
