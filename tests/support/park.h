/* park.h -- hold one of this process's threads still, to force an
 * interleaving instead of hoping for it.
 *
 * A server runs in the test's own process; its threads are named. The
 * test waits until the thread it wants is blocked in its wait (poll,
 * epoll_wait: a point where it holds no lock), sends it PARK_SIGNAL, and
 * its handler blocks in read() on a pipe until the test lets it go. The
 * interrupted wait then returns EINTR, as for any signal: the code under
 * test goes round its loop, and what happened meanwhile (a connection
 * queued, a stop begun) is what it finds. No hook in the code under test.
 */
#ifndef THREADLAB_PARK_H
#define THREADLAB_PARK_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#define PARK_SIGNAL SIGUSR1  /* not used by the servers (the checker has SIGUSR2) */

/* The kernel id of the first thread whose name starts with prefix; fails
 * the test if there is none. */
pid_t park_find_thread(const char *prefix);

/* Wait (up to 10 s) until thread tid is blocked in poll or epoll_wait,
 * then park it: return once it is blocked in the handler's read. Fails
 * the test otherwise. One thread at a time. */
void park_thread(pid_t tid);

/* Wait (up to 10 s) until thread tid is asleep in poll or epoll_wait,
 * without parking it. False if it never was (it kept running: a spin). */
bool park_await_sleep(pid_t tid);

/* Let the parked thread go on. */
void park_release(void);

#endif
