/* switch-cost.c -- what one switch costs: between two virtual threads on
 * one kernel thread (the switch this build has: asm or ucontext), and a
 * wakeup between two kernel threads (a futex handed back and forth).
 *
 *   switch-cost switch    ns per vt_switch (built twice by make peers:
 *                         switch-cost with the asm switch, switch-cost-ucontext)
 *   switch-cost threads   ns per wakeup of one kernel thread by another
 *
 * Each figure is the best of five runs of a fixed count, per one-way
 * switch (a round trip is two): the best, because on a shared machine any
 * other run only adds someone else's time. Not a test: make bench prints
 * it. docs/models/vthread.md reads the figures.
 */
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "net/clock.h"
#include "vthread/stack.h"
#include "vthread/switch.h"

#define RUNS 5

/* ---- two contexts on one thread ---------------------------------------------- */

static struct vt_context main_ctx, other_ctx;

static void bounce(void *arg)
{
    (void)arg;
    vt_context_entered();
    for (;;)
        vt_switch(&other_ctx, &main_ctx);
}

static double switch_ns(long rounds)
{
    uint64_t start = now_ns();
    for (long i = 0; i < rounds; i++)
        vt_switch(&main_ctx, &other_ctx);
    return (double)(now_ns() - start) / (2.0 * (double)rounds);
}

/* ---- two kernel threads ----------------------------------------------------------- */

static atomic_int turn;               /* 0: the main thread's, 1: the other's */

static void futex_wait(atomic_int *addr, int value)
{
    syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, value, NULL, NULL, 0);
}

static void futex_wake(atomic_int *addr)
{
    syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Hand the turn to the other side, and sleep until it comes back. */
static void pass_turn(void)
{
    atomic_store(&turn, 1);
    futex_wake(&turn);
    while (atomic_load(&turn) != 0)
        futex_wait(&turn, 1);
}

static long thread_rounds;

/* The other side: wait for the turn, give it straight back. */
static void *other_thread(void *arg)
{
    (void)arg;
    for (long i = 0; i < thread_rounds * RUNS; i++) {
        while (atomic_load(&turn) != 1)
            futex_wait(&turn, 0);
        atomic_store(&turn, 0);
        futex_wake(&turn);
    }
    return NULL;
}

static double wakeup_ns(long rounds)
{
    uint64_t start = now_ns();
    for (long i = 0; i < rounds; i++)
        pass_turn();
    return (double)(now_ns() - start) / (2.0 * (double)rounds);
}

/* ---- the figures ---------------------------------------------------------------------- */

static double best_of(double (*measure)(long), long rounds)
{
    double best = 0;
    for (int r = 0; r < RUNS; r++) {
        double ns = measure(rounds);
        if (r == 0 || ns < best)
            best = ns;
    }
    return best;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "switch") == 0) {
        struct vt_stack st;
        if (vt_stack_alloc(&st, VT_STACK_DEFAULT_BYTES) < 0)
            return 1;
        vt_context_of_thread(&main_ctx);
        vt_context_make(&other_ctx, st.lo, st.bytes, bounce, NULL);
        long rounds = strcmp(vt_switch_kind(), "asm") == 0 ? 5000000 : 200000;
        printf("switch (%s):%*s %7.1f ns per switch\n", vt_switch_kind(),
               (int)(10 - strlen(vt_switch_kind())), "", best_of(switch_ns, rounds));
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "threads") == 0) {
        pthread_t t;
        thread_rounds = 20000;
        if (pthread_create(&t, NULL, other_thread, NULL) != 0)
            return 1;
        printf("kernel thread wakeup: %7.1f ns per wakeup (futex, two threads)\n",
               best_of(wakeup_ns, thread_rounds));
        pthread_join(t, NULL);
        return 0;
    }
    fprintf(stderr, "usage: switch-cost switch|threads\n");
    return 2;
}
