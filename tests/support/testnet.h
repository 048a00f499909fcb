/* testnet.h -- small blocking-socket helpers for tests: every read has a
 * deadline, so a broken server fails a test instead of hanging it. */
#ifndef THREADLAB_TESTNET_H
#define THREADLAB_TESTNET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "net/clock.h"   /* tests time things with now_ms(), as the code does */

#define TESTNET_TIMEOUT_MS 10000   /* longest a test waits for one read */

/* Connect to 127.0.0.1:port, blocking, with read/write timeouts. Aborts the
 * test (ck_assert) on failure. */
int tn_connect(uint16_t port);

/* Send all bytes (asserts). */
void tn_send(int fd, const void *buf, size_t len);
void tn_send_str(int fd, const char *s);

/* Read until '\n' (included) or EOF into buf (size cap). Returns the length,
 * 0 at EOF, -errno on error (ECONNRESET, EAGAIN after the timeout). */
ssize_t tn_read_line(int fd, char *buf, size_t cap);

/* Read exactly len bytes; returns false at EOF, error or timeout. */
bool tn_read_exact(int fd, void *buf, size_t len);

/* 0 when the next read is a clean EOF, -errno for a reset, 1 for data. */
int tn_read_eof(int fd);

/* True if fd has bytes to read within wait_ms. */
bool tn_readable(int fd, int wait_ms);

/* Close with a reset (SO_LINGER 0) instead of a FIN. */
void tn_close_reset(int fd);

/* Ask "!who" on fd and copy the thread its reply names ("!who model=M
 * thread=NAME conn=C") into out; fails the test if the reply has none. */
void tn_who_thread(int fd, char *out, size_t cap);

/* Threads of this process whose name starts with prefix ("" for all), from
 * /proc/self/task/N/comm. Naming keeps sanitizer helper threads out. */
int tn_thread_count(const char *prefix);

/* Wait up to 5 s for tn_thread_count(prefix) to be want, then assert it.
 * A thread that pthread_join has returned for can still be listed for a
 * moment: the kernel wakes the joiner when it clears the thread's id, a
 * step before it takes the thread out of /proc (a loaded machine can stop
 * the thread between the two). A thread its creator names after
 * pthread_create can answer before it has its name: counting new
 * threads needs the wait too. */
void tn_expect_threads(const char *prefix, int want);

/* Wait up to timeout_ms for a thread whose name starts with prefix to be
 * in this state ('S': asleep in a wait, such as epoll_wait). */
bool tn_wait_thread_state(const char *prefix, char state, int timeout_ms);

/* How much the threads whose name starts with prefix woke and ran: their
 * context switches, voluntary and not (/proc/self/task/N/status), and
 * their CPU time in clock ticks (utime + stime, .../stat), summed. A
 * thread asleep on a condition or in epoll_wait adds neither, however
 * busy the machine is: a bound on them is a bound on what the thread's
 * code does, not on the scheduler (a thread that polls adds switches, one
 * that spins adds CPU time or, preempted, switches). */
struct tn_thread_use { int threads; long switches; long cpu_ticks; };
struct tn_thread_use tn_thread_use(const char *prefix);

/* The same over the next ms milliseconds: what the threads did meanwhile
 * (threads: how many there were at the start). Sleeps ms. */
struct tn_thread_use tn_thread_use_over(const char *prefix, int ms);

/* The sum of the counters of this process's eventfds (the "eventfd-count"
 * of /proc/self/fdinfo/N, read without draining them): the writes that
 * no one has read yet, which the code writing them cannot misreport. */
uint64_t tn_eventfd_pending(void);

/* Every thread as "name (state)", comma-separated: what a failed thread
 * check prints, to say which thread stayed and what it was doing. */
void tn_thread_names(char *out, size_t cap);

/* This process's open fds and resident memory (KiB), from /proc. */
int tn_fd_count(void);
/* Each open fd and what it is, as "3=socket:[123] 4=anon_inode:[eventfd]":
 * what a failed fd check prints, beside the list from before. */
void tn_fd_names(char *out, size_t cap);
long tn_rss_kb(void);

/* The TCP states of sockets to or from this port, as "ESTABLISHED 3,
 * TIME_WAIT 40": what a failed fd check prints. */
void tn_port_states(uint16_t port, char *out, size_t cap);


#endif
