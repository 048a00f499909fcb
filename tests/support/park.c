/* park.c -- hold one thread still. See park.h. */
#include "park.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "testnet.h"

static int park_pipe[2] = { -1, -1 };

static void park_handler(int sig)
{
    int saved = errno;
    char c;
    (void)sig;
    while (read(park_pipe[0], &c, 1) < 0 && errno == EINTR)
        ;
    errno = saved;
}

pid_t park_find_thread(const char *prefix)
{
    pid_t tid = 0;
    DIR *d = opendir("/proc/self/task");
    ck_assert_ptr_nonnull(d);
    for (struct dirent *e; tid == 0 && (e = readdir(d));) {
        char path[300], name[32] = "";
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;                 /* it ended meanwhile */
        if (fgets(name, sizeof(name), f) && strncmp(name, prefix, strlen(prefix)) == 0)
            tid = (pid_t)atoi(e->d_name);
        fclose(f);
    }
    closedir(d);
    ck_assert_msg(tid != 0, "no thread named %s*", prefix);
    return tid;
}

/* The system call thread tid is blocked in (the first field of
 * /proc/self/task/TID/syscall), or -1: running, or not in one. */
static long blocked_in(pid_t tid)
{
    char path[64], line[256] = "";
    snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    if (!fgets(line, sizeof(line), f))
        line[0] = '\0';
    fclose(f);
    char *end;
    long nr = strtol(line, &end, 10);
    return end == line ? -1 : nr;
}

/* Is nr one of the waits an acceptor or a loop sleeps in? */
static bool is_wait(long nr)
{
    static const long waits[] = {
#ifdef SYS_poll
        SYS_poll,
#endif
#ifdef SYS_epoll_wait
        SYS_epoll_wait,
#endif
#ifdef SYS_epoll_pwait2
        SYS_epoll_pwait2,
#endif
        SYS_ppoll, SYS_epoll_pwait,
    };
    for (size_t i = 0; i < sizeof(waits) / sizeof(waits[0]); i++)
        if (nr == waits[i])
            return true;
    return false;
}

/* Wait up to 10 s for thread tid to be blocked in a call that wanted()
 * accepts; returns the call it was last seen in. */
static long await_blocked(pid_t tid, bool (*wanted)(long nr))
{
    uint64_t deadline = now_ms() + 10000;
    long nr;
    while (!wanted(nr = blocked_in(tid)) && now_ms() < deadline)
        usleep(1000);
    return nr;
}

static bool is_read(long nr)
{
    return nr == SYS_read;
}

void park_thread(pid_t tid)
{
    static bool installed;
    if (!installed) {
        ck_assert_int_eq(pipe(park_pipe), 0);
        struct sigaction sa = { .sa_handler = park_handler };   /* no SA_RESTART */
        sigemptyset(&sa.sa_mask);
        ck_assert_int_eq(sigaction(PARK_SIGNAL, &sa, NULL), 0);
        installed = true;
    }
    long nr = await_blocked(tid, is_wait);
    ck_assert_msg(is_wait(nr), "thread %d never waited in poll or epoll_wait "
                  "(last seen in system call %ld)", (int)tid, nr);
    ck_assert_int_eq(syscall(SYS_tgkill, getpid(), tid, PARK_SIGNAL), 0);
    nr = await_blocked(tid, is_read);
    ck_assert_msg(is_read(nr), "thread %d did not park (last seen in system "
                  "call %ld)", (int)tid, nr);
}

bool park_await_sleep(pid_t tid)
{
    return is_wait(await_blocked(tid, is_wait));
}

void park_release(void)
{
    ck_assert_int_eq(write(park_pipe[1], "", 1), 1);
}
