/* switch.h -- the context switch of the virtual threads.
 *
 * A context is what a suspended flow of control needs to go on: where its
 * stack is, and the registers the C calling convention says a called
 * function must give back unchanged. Switching contexts is a function
 * call that returns on another stack: vt_switch(from, to) saves the
 * caller's registers on its own stack, stores the stack pointer in from,
 * loads to's stack pointer, pops to's registers and returns -- into
 * whatever to was doing when it last called vt_switch.
 *
 * Two implementations, chosen at build time (make VTHREAD_SWITCH=ucontext
 * forces the second; an architecture other than x86-64 and aarch64 gets it
 * anyway):
 *   asm       a dozen instructions per architecture, in switch.c
 *   ucontext  glibc's swapcontext: portable, and a system call per switch
 *             (it saves and restores the signal mask)
 *
 * Under AddressSanitizer and ThreadSanitizer every switch is announced to
 * the sanitizer (its fiber API), so both builds understand the stacks.
 */
#ifndef THREADLAB_VTHREAD_SWITCH_H
#define THREADLAB_VTHREAD_SWITCH_H

#include <stdbool.h>
#include <stddef.h>

#if !defined(VTHREAD_UCONTEXT) && !defined(__x86_64__) && !defined(__aarch64__)
#define VTHREAD_UCONTEXT 1        /* no hand-written switch for this CPU */
#endif

#ifdef VTHREAD_UCONTEXT
#include <ucontext.h>
#endif

/* A suspended flow of control. */
struct vt_context {
#ifdef VTHREAD_UCONTEXT
    ucontext_t uc;                /* glibc's saved registers and signal mask */
#else
    void *sp;                     /* its stack pointer: the registers are on
                                     the stack it points to */
#endif
    void *stack_lo;               /* its stack's lowest usable byte, and */
    size_t stack_bytes;           /* size (for the sanitizers) */
    bool made;                    /* by vt_context_make, not a thread's own */
    void *asan_fake_stack;        /* AddressSanitizer's bookkeeping */
    void *tsan_fiber;             /* ThreadSanitizer's fiber, or NULL */
};

/* Entry point of a new context. It must never return: it ends by switching
 * away for the last time (vt_switch_final). */
typedef void (*vt_entry_fn)(void *arg);

/* Make c a context that, when first switched to, calls entry(arg) on the
 * stack [stack_lo, stack_lo + stack_bytes). Any thread. */
void vt_context_make(struct vt_context *c, void *stack_lo, size_t stack_bytes,
                     vt_entry_fn entry, void *arg);

/* Make c the context of the calling thread as it runs now, to be saved
 * into by a first vt_switch (a carrier's scheduler). The calling thread. */
void vt_context_of_thread(struct vt_context *c);

/* Forget c (the sanitizer's fiber). Not while c runs. Any thread. */
void vt_context_free(struct vt_context *c);

/* Save the running context into from, run to. Returns when someone
 * switches back to from. The calling thread (which runs from). */
void vt_switch(struct vt_context *from, struct vt_context *to);

/* The last switch of a context whose stack is about to be freed: from
 * will never run again. The calling thread. */
void vt_switch_final(struct vt_context *from, struct vt_context *to)
    __attribute__((noreturn));

/* "asm" or "ucontext": which switch this build has. Pure. */
const char *vt_switch_kind(void);

/* A new context must call this first, on its own stack (the sanitizers
 * learn that the switch into it is complete). The calling thread. */
void vt_context_entered(void);

#endif
