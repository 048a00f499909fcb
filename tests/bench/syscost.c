/* syscost.c -- what a system call costs on this machine, for
 * docs/performance.md. Built by `make peers` as build/peers/syscost.
 *
 *   syscost [ROUNDS]
 *
 * Prints the CPU time (this process's, CLOCK_PROCESS_CPUTIME_ID, so time
 * spent waiting for a core on a busy machine is not counted) of:
 *   1. getppid(): a syscall that does nothing, i.e. entry and exit alone;
 *   2. a 64-byte write() into one end of a loopback TCP connection and the
 *      read() of those 64 bytes at the other end, on one thread, so no
 *      wakeup of another thread is counted: the kernel's TCP work itself.
 * Each is the median of 5 runs of ROUNDS (default 200000) calls.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A connected loopback TCP pair: *w writes, *r reads. Returns 0 or -1. */
static int tcp_pair(int *w, int *r)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t alen = sizeof(a);
    int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 1) < 0 ||
        getsockname(l, (struct sockaddr *)&a, &alen) < 0)
        return -1;
    *w = socket(AF_INET, SOCK_STREAM, 0);
    if (*w < 0 || connect(*w, (struct sockaddr *)&a, sizeof(a)) < 0)
        return -1;
    *r = accept(l, NULL, NULL);
    close(l);
    setsockopt(*w, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return *r < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 200000;
    if (rounds < 1000 || rounds > 100000000) {
        fprintf(stderr, "syscost: ROUNDS must be 1000..100000000\n");
        return 2;
    }
    int w, r;
    if (tcp_pair(&w, &r) < 0) {
        perror("syscost: loopback connection");
        return 1;
    }
    char buf[64] = { 0 };
    double nop[5], pair[5];
    for (int run = 0; run < 5; run++) {
        double t0 = cpu_ns();
        for (long i = 0; i < rounds; i++)
            syscall(SYS_getppid);          /* not getppid(): never cached */
        double t1 = cpu_ns();
        for (long i = 0; i < rounds; i++) {
            if (write(w, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
                return perror("syscost: write"), 1;
            for (size_t got = 0; got < sizeof(buf);) {
                ssize_t n = read(r, buf + got, sizeof(buf) - got);
                if (n <= 0)
                    return perror("syscost: read"), 1;
                got += (size_t)n;
            }
        }
        double t2 = cpu_ns();
        nop[run] = (t1 - t0) / (double)rounds;
        pair[run] = (t2 - t1) / (double)rounds;
    }
    qsort(nop, 5, sizeof(double), cmp_double);
    qsort(pair, 5, sizeof(double), cmp_double);
    printf("empty syscall (getppid): %.3f us CPU (median of 5 x %ld)\n", nop[2] / 1000, rounds);
    printf("64-byte loopback TCP write + read: %.3f us CPU (median of 5 x %ld)\n",
           pair[2] / 1000, rounds);
    return 0;
}
