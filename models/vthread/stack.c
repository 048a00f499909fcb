/* stack.c -- guarded stacks and the overflow report. See stack.h. */
#include "stack.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define VT_VALGRIND 1
#endif
#endif

/* Stacks mapped and not yet unmapped, in the whole process: a leak shows
 * here (lab 09's check reads it). */
static atomic_long stacks_mapped;

long vt_stacks_mapped(void)
{
    return atomic_load_explicit(&stacks_mapped, memory_order_relaxed);
}

static size_t page_bytes(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

int vt_stack_alloc(struct vt_stack *s, size_t bytes)
{
    size_t page = page_bytes();
    s->bytes = (bytes + page - 1) / page * page;
    s->map_bytes = s->bytes + page;
    /* MAP_NORESERVE: a stack's pages cost memory only once touched, and
     * most handlers touch a few of them. */
    s->map = mmap(NULL, s->map_bytes, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (s->map == MAP_FAILED)
        return -errno;
    if (mprotect(s->map, page, PROT_NONE) < 0) {
        int rc = -errno;
        munmap(s->map, s->map_bytes);
        return rc;
    }
    s->lo = (char *)s->map + page;
    atomic_fetch_add_explicit(&stacks_mapped, 1, memory_order_relaxed);
#ifdef VT_VALGRIND
    s->valgrind_id = VALGRIND_STACK_REGISTER(s->lo, (char *)s->lo + s->bytes);
#endif
    return 0;
}

void vt_stack_free(struct vt_stack *s)
{
#ifdef VT_VALGRIND
    VALGRIND_STACK_DEREGISTER(s->valgrind_id);
#endif
    munmap(s->map, s->map_bytes);
    s->map = NULL;
    atomic_fetch_sub_explicit(&stacks_mapped, 1, memory_order_relaxed);
}

/* ---- the overflow report ----------------------------------------------------- */

/* What the calling thread runs now. Set only by the scheduler, on its own
 * thread's stack (never inside a virtual thread, which may move). */
static __thread const struct vt_stack *running_stack;
static __thread const char *running_name;
static __thread void *altstack;

void vt_stack_running(const struct vt_stack *s, const char *name)
{
    running_stack = s;
    running_name = name;
}

/* Append text to buf at *at, without the C library (a signal handler). */
static void put_text(char *buf, size_t cap, size_t *at, const char *text)
{
    while (*text && *at + 1 < cap)
        buf[(*at)++] = *text++;
}

static void put_number(char *buf, size_t cap, size_t *at, size_t n)
{
    char digits[24];
    int len = 0;
    do {
        digits[len++] = (char)('0' + n % 10);
        n /= 10;
    } while (n);
    while (len > 0 && *at + 1 < cap)
        buf[(*at)++] = digits[--len];
}

/* SIGSEGV on the alternate stack. A fault in the running virtual thread's
 * guard page is an overflow: say whose, and exit. Anything else is a real
 * crash: put the default action back and return, so the fault repeats and
 * the process dies as it would have (a core dump, a sanitizer's report). */
static void on_segv(int sig, siginfo_t *info, void *uctx)
{
    (void)uctx;
    const struct vt_stack *s = running_stack;
    uintptr_t addr = (uintptr_t)info->si_addr;
    uintptr_t guard = s ? (uintptr_t)s->map : 0;
    if (!s || addr < guard || addr >= (uintptr_t)s->lo) {
        signal(sig, SIG_DFL);
        return;
    }
    char msg[200];
    size_t at = 0;
    put_text(msg, sizeof(msg), &at, "threadlab: virtual thread ");
    put_text(msg, sizeof(msg), &at, running_name ? running_name : "?");
    put_text(msg, sizeof(msg), &at, " overflowed its stack of ");
    put_number(msg, sizeof(msg), &at, s->bytes);
    put_text(msg, sizeof(msg), &at, " bytes (--stack); exiting\n");
    ssize_t n = write(STDERR_FILENO, msg, at);
    (void)n;                        /* nothing more to do if stderr is gone */
    _exit(VT_STACK_OVERFLOW_EXIT);
}

static int handler_rc = -1;

static void install_handler(void)
{
    struct sigaction sa = { .sa_sigaction = on_segv,
                            .sa_flags = SA_SIGINFO | SA_ONSTACK };
    sigemptyset(&sa.sa_mask);
    handler_rc = sigaction(SIGSEGV, &sa, NULL) == 0 ? 0 : -errno;
}

int vt_stack_thread_begin(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, install_handler);
    if (handler_rc < 0)
        return handler_rc;
    size_t bytes = 64 * 1024;       /* MINSIGSTKSZ grows with AVX-512 state */
    altstack = malloc(bytes);
    if (!altstack)
        return -ENOMEM;
    stack_t ss = { .ss_sp = altstack, .ss_size = bytes };
    if (sigaltstack(&ss, NULL) < 0) {
        int rc = -errno;
        free(altstack);
        altstack = NULL;
        return rc;
    }
    return 0;
}

void vt_stack_thread_end(void)
{
    stack_t ss = { .ss_flags = SS_DISABLE };
    sigaltstack(&ss, NULL);
    free(altstack);
    altstack = NULL;
}
