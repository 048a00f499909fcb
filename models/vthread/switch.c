/* switch.c -- the context switch, written out. See switch.h.
 *
 * Why the stack pointer is the whole trick: a function that calls
 * vt_switch expects, when the call returns, its callee-saved registers
 * intact and its stack as it left it. Everything else (the caller-saved
 * registers, the return value) the compiler already assumes lost across
 * any call. So a switch pushes the callee-saved registers onto the
 * current stack, stores the stack pointer, loads another context's stack
 * pointer, pops that context's registers and returns: the return address
 * on the new stack sends it back into the flow that saved it. A new
 * context is a stack prepared to look as if it had called vt_switch once:
 * zeros for the registers, and a return address that is a trampoline
 * calling the entry function.
 *
 * No signal mask, no floating-point environment, no system call: that is
 * why this switch costs nanoseconds and swapcontext, which saves and
 * restores the signal mask with rt_sigprocmask each time, costs a system
 * call (Boost.Context's figures: 19 cycles against about 550 ns).
 */
#include "switch.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define VT_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#define VT_TSAN 1
#endif

#ifndef VTHREAD_UCONTEXT
/* vt__switch(&from->sp, to->sp) and the first frame of a new context. */
void vt__switch(void **save_sp, void *load_sp);
void vt__trampoline(void);

#if defined(__x86_64__)
/* System V AMD64 ABI: a called function must preserve rbx, rbp, r12-r15
 * and rsp (and the x87/SSE control words, which threadlab never
 * changes). Arguments: rdi = where to save our sp, rsi = the sp to load. */
__asm__(
    ".text\n"
    ".globl vt__switch\n"
    ".type vt__switch,@function\n"
    "vt__switch:\n"
    "    pushq %rbp\n"              /* our callee-saved registers, */
    "    pushq %rbx\n"
    "    pushq %r12\n"
    "    pushq %r13\n"
    "    pushq %r14\n"
    "    pushq %r15\n"              /* above our return address */
    "    movq  %rsp, (%rdi)\n"      /* from->sp = here */
    "    movq  %rsi, %rsp\n"        /* the other stack: now we are it */
    "    popq  %r15\n"
    "    popq  %r14\n"
    "    popq  %r13\n"
    "    popq  %r12\n"
    "    popq  %rbx\n"
    "    popq  %rbp\n"
    "    ret\n"                     /* into whatever called vt__switch there */
    ".size vt__switch,.-vt__switch\n"
    /* A new context's first return lands here: rbx holds arg, r12 entry. */
    ".globl vt__trampoline\n"
    ".type vt__trampoline,@function\n"
    "vt__trampoline:\n"
    "    movq  %rbx, %rdi\n"
    "    callq *%r12\n"
    "    ud2\n"                     /* entry never returns */
    ".size vt__trampoline,.-vt__trampoline\n");

enum { FRAME_WORDS = 7 };           /* r15 r14 r13 r12 rbx rbp, return */

static uintptr_t *first_frame(uintptr_t top, vt_entry_fn entry, void *arg)
{
    /* After the pops and the ret, rsp = top, 16-byte aligned: the
     * trampoline's call then leaves entry the alignment the ABI promises. */
    uintptr_t *sp = (uintptr_t *)top - FRAME_WORDS;
    memset(sp, 0, FRAME_WORDS * sizeof(*sp));
    sp[3] = (uintptr_t)entry;          /* r12 */
    sp[4] = (uintptr_t)arg;            /* rbx */
    sp[6] = (uintptr_t)vt__trampoline; /* the return address */
    return sp;
}

#elif defined(__aarch64__)
/* AAPCS64: a called function must preserve x19-x28, the frame pointer
 * x29, the link register x30 (our return address: there is no push on a
 * call) and the low halves of v8-v15 (d8-d15), and sp. Arguments: x0 =
 * where to save our sp, x1 = the sp to load. 20 registers: 160 bytes,
 * rounded to 176 because sp must stay 16-byte aligned. */
__asm__(
    ".text\n"
    ".globl vt__switch\n"
    ".type vt__switch,%function\n"
    "vt__switch:\n"
    "    sub  sp, sp, #176\n"
    "    stp  x19, x20, [sp, #0]\n"
    "    stp  x21, x22, [sp, #16]\n"
    "    stp  x23, x24, [sp, #32]\n"
    "    stp  x25, x26, [sp, #48]\n"
    "    stp  x27, x28, [sp, #64]\n"
    "    stp  x29, x30, [sp, #80]\n"
    "    stp  d8,  d9,  [sp, #96]\n"
    "    stp  d10, d11, [sp, #112]\n"
    "    stp  d12, d13, [sp, #128]\n"
    "    stp  d14, d15, [sp, #144]\n"
    "    mov  x2, sp\n"
    "    str  x2, [x0]\n"           /* from->sp = here */
    "    mov  sp, x1\n"             /* the other stack: now we are it */
    "    ldp  x19, x20, [sp, #0]\n"
    "    ldp  x21, x22, [sp, #16]\n"
    "    ldp  x23, x24, [sp, #32]\n"
    "    ldp  x25, x26, [sp, #48]\n"
    "    ldp  x27, x28, [sp, #64]\n"
    "    ldp  x29, x30, [sp, #80]\n"
    "    ldp  d8,  d9,  [sp, #96]\n"
    "    ldp  d10, d11, [sp, #112]\n"
    "    ldp  d12, d13, [sp, #128]\n"
    "    ldp  d14, d15, [sp, #144]\n"
    "    add  sp, sp, #176\n"
    "    ret\n"                     /* to x30: whoever called vt__switch there */
    ".size vt__switch,.-vt__switch\n"
    /* A new context's first return lands here: x19 holds arg, x20 entry. */
    ".globl vt__trampoline\n"
    ".type vt__trampoline,%function\n"
    "vt__trampoline:\n"
    "    mov  x0, x19\n"
    "    blr  x20\n"
    "    brk  #0\n"                 /* entry never returns */
    ".size vt__trampoline,.-vt__trampoline\n");

enum { FRAME_WORDS = 22 };          /* 176 bytes */

static uintptr_t *first_frame(uintptr_t top, vt_entry_fn entry, void *arg)
{
    uintptr_t *sp = (uintptr_t *)top - FRAME_WORDS;
    memset(sp, 0, FRAME_WORDS * sizeof(*sp));
    sp[0] = (uintptr_t)arg;             /* x19 */
    sp[1] = (uintptr_t)entry;           /* x20 */
    sp[11] = (uintptr_t)vt__trampoline; /* x30, where ret goes */
    return sp;
}
#endif
#endif /* !VTHREAD_UCONTEXT */

/* ---- what the sanitizers must be told ------------------------------------ */

/* Before leaving from for to (finishing: from never runs again). */
static void announce_switch(struct vt_context *from, struct vt_context *to,
                            int finishing)
{
#ifdef VT_ASAN
    __sanitizer_start_switch_fiber(finishing ? NULL : &from->asan_fake_stack,
                                   to->stack_lo, to->stack_bytes);
#endif
#ifdef VT_TSAN
    if (!to->tsan_fiber)
        to->tsan_fiber = __tsan_get_current_fiber();
    __tsan_switch_to_fiber(to->tsan_fiber, 0);
#endif
    (void)from, (void)to, (void)finishing;
}

/* Back in c, after a switch into it completed. */
static void announce_arrival(struct vt_context *c)
{
#ifdef VT_ASAN
    const void *lo;
    size_t bytes;
    __sanitizer_finish_switch_fiber(c->asan_fake_stack, &lo, &bytes);
#endif
    (void)c;
}

void vt_context_entered(void)
{
#ifdef VT_ASAN
    __sanitizer_finish_switch_fiber(NULL, NULL, NULL);
#endif
}

/* ---- the interface ----------------------------------------------------------- */

#ifdef VTHREAD_UCONTEXT
/* makecontext passes int arguments only: the pointer goes in two halves. */
static void uc_entry(unsigned int fn_hi, unsigned int fn_lo, unsigned int arg_hi,
                     unsigned int arg_lo)
{
    vt_entry_fn fn = (vt_entry_fn)(((uintptr_t)fn_hi << 32) | fn_lo);
    void *arg = (void *)(((uintptr_t)arg_hi << 32) | arg_lo);
    fn(arg);
    abort();                        /* entry never returns */
}
#endif

void vt_context_make(struct vt_context *c, void *stack_lo, size_t stack_bytes,
                     vt_entry_fn entry, void *arg)
{
    memset(c, 0, sizeof(*c));
    c->stack_lo = stack_lo;
    c->stack_bytes = stack_bytes;
    c->made = true;
#ifdef VTHREAD_UCONTEXT
    getcontext(&c->uc);
    c->uc.uc_stack.ss_sp = stack_lo;
    c->uc.uc_stack.ss_size = stack_bytes;
    c->uc.uc_link = NULL;
    uintptr_t f = (uintptr_t)entry, a = (uintptr_t)arg;
    makecontext(&c->uc, (void (*)(void))uc_entry, 4, (unsigned)(f >> 32),
                (unsigned)f, (unsigned)(a >> 32), (unsigned)a);
#else
    uintptr_t top = ((uintptr_t)stack_lo + stack_bytes) & ~(uintptr_t)15;
    c->sp = first_frame(top, entry, arg);
#endif
#ifdef VT_TSAN
    c->tsan_fiber = __tsan_create_fiber(0);
#endif
}

void vt_context_of_thread(struct vt_context *c)
{
    memset(c, 0, sizeof(*c));
#ifdef VT_ASAN
    /* AddressSanitizer must be told which stack it comes back to, or it
     * stops scanning the thread's own stack for pointers. */
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        pthread_attr_getstack(&attr, &c->stack_lo, &c->stack_bytes);
        pthread_attr_destroy(&attr);
    }
#endif
#ifdef VT_TSAN
    c->tsan_fiber = __tsan_get_current_fiber();
#endif
}

void vt_context_free(struct vt_context *c)
{
#ifdef VT_TSAN
    if (c->tsan_fiber && c->made)
        __tsan_destroy_fiber(c->tsan_fiber);
#endif
    c->tsan_fiber = NULL;
}

void vt_switch(struct vt_context *from, struct vt_context *to)
{
    announce_switch(from, to, 0);
#ifdef VTHREAD_UCONTEXT
    swapcontext(&from->uc, &to->uc);
#else
    vt__switch(&from->sp, to->sp);
#endif
    announce_arrival(from);
}

void vt_switch_final(struct vt_context *from, struct vt_context *to)
{
    announce_switch(from, to, 1);
#ifdef VTHREAD_UCONTEXT
    swapcontext(&from->uc, &to->uc);
#else
    vt__switch(&from->sp, to->sp);
#endif
    abort();                        /* nobody switches back to a finished context */
}

const char *vt_switch_kind(void)
{
#ifdef VTHREAD_UCONTEXT
    return "ucontext";
#else
    return "asm";
#endif
}
