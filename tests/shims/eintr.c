/* eintr.c -- an LD_PRELOAD fault shim: every thread of the process is
 * interrupted by a handled signal about 1000 times a second, so every
 * blocking call (read, accept, epoll_wait, connect, nanosleep...) returns
 * EINTR now and then, wherever the code makes it. libuv's
 * test-eintr-handling does this for one call; this does it for all.
 *
 *   LD_PRELOAD=build/shims/eintr.so build/tests/check_reactor
 *
 * How: a ticker thread sends SHIM_SIGNAL to each thread in
 * /proc/self/task every millisecond (tgkill). The handler does nothing
 * and is installed without SA_RESTART, so the kernel does not restart the
 * interrupted call: it fails with EINTR. A thread that blocks signals
 * (servers block SIGINT and SIGTERM in their workers) would never see it,
 * so pthread_sigmask and sigprocmask are wrapped to keep SHIM_SIGNAL
 * unblocked. Check runs each case in a fork, which keeps only the forking
 * thread: pthread_atfork starts a new ticker in the child. At exit the
 * shim says on stderr how many signals it delivered, so a run can prove
 * the fault was there. Not for the sanitizer builds (their runtimes wrap
 * the same calls). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SHIM_PERIOD_NS 1000000L     /* 1 kHz per thread */

static int shim_signal;             /* SIGRTMIN + 4: no one else's */
static atomic_ullong delivered;     /* handler runs, all threads */
static atomic_ullong sent;          /* tgkill calls that succeeded */

static void on_shim_signal(int sig)
{
    (void)sig;
    atomic_fetch_add_explicit(&delivered, 1, memory_order_relaxed);
}

/* The ticker's view of this process's threads, opened once per process
 * and read again from the top each tick: opening it every tick would show
 * a test that counts its fds one that comes and goes. /proc/self is
 * resolved when it is opened, so a forked child opens its own. */
static DIR *task_dir;

/* Interrupt every thread but this one, once. */
static void interrupt_all(pid_t self_tid)
{
    if (!task_dir)
        return;
    rewinddir(task_dir);
    for (struct dirent *e; (e = readdir(task_dir));) {
        pid_t tid = (pid_t)atoi(e->d_name);
        if (tid <= 0 || tid == self_tid)
            continue;
        if (syscall(SYS_tgkill, getpid(), tid, shim_signal) == 0)
            atomic_fetch_add_explicit(&sent, 1, memory_order_relaxed);
    }
}

static void *ticker_main(void *arg)
{
    (void)arg;
    /* The ticker itself must not be interrupted mid-readdir, and must not
     * take the process's stop signals: block everything here. */
    sigset_t all;
    sigfillset(&all);
    __typeof__(&pthread_sigmask) real_mask;
    *(void **)&real_mask = dlsym(RTLD_NEXT, "pthread_sigmask");
    real_mask(SIG_BLOCK, &all, NULL);
    pthread_setname_np(pthread_self(), "eintr-shim");
    pid_t self_tid = (pid_t)syscall(SYS_gettid);
    struct timespec period = { 0, SHIM_PERIOD_NS };
    for (;;) {
        nanosleep(&period, NULL);
        interrupt_all(self_tid);
    }
    return NULL;
}

static void start_ticker(void)
{
    if (task_dir)
        closedir(task_dir);         /* a forked child's copy of the parent's */
    task_dir = opendir("/proc/self/task");
    if (!task_dir)
        fprintf(stderr, "eintr shim: no /proc/self/task: no faults injected\n");
    pthread_t th;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&th, &attr, ticker_main, NULL) != 0)
        fprintf(stderr, "eintr shim: no ticker thread: no faults injected\n");
    pthread_attr_destroy(&attr);
}

static void after_fork_in_child(void)
{
    atomic_store(&delivered, 0);
    atomic_store(&sent, 0);
    start_ticker();
}

static void report(void)
{
    fprintf(stderr, "eintr shim: pid %d: %llu signals sent, %llu delivered\n",
            (int)getpid(), (unsigned long long)atomic_load(&sent),
            (unsigned long long)atomic_load(&delivered));
}

__attribute__((constructor)) static void shim_init(void)
{
    shim_signal = SIGRTMIN + 4;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_shim_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;                /* no SA_RESTART: that is the point */
    sigaction(shim_signal, &sa, NULL);
    pthread_atfork(NULL, NULL, after_fork_in_child);
    atexit(report);
    start_ticker();
}

/* ---- keep the signal deliverable ------------------------------------------ */

static const sigset_t *without_shim_signal(int how, const sigset_t *set, sigset_t *copy)
{
    if (!set || how == SIG_UNBLOCK)
        return set;
    *copy = *set;
    sigdelset(copy, shim_signal);
    return copy;
}

int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
    static __typeof__(&pthread_sigmask) real;
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "pthread_sigmask");
    sigset_t copy;
    return real(how, without_shim_signal(how, set, &copy), old);
}

int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
    static __typeof__(&sigprocmask) real;
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "sigprocmask");
    sigset_t copy;
    return real(how, without_shim_signal(how, set, &copy), old);
}
