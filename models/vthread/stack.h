/* stack.h -- the stacks of the virtual threads: mmap'ed, with a guard
 * page, and an overflow that is reported, not a mystery.
 *
 *   high  +------------------------+  <- the first frame starts here
 *         |  bytes (--stack)       |     pages are touched as the stack
 *         |  grows down            |     grows: RSS counts those only
 *   lo    +------------------------+
 *         |  guard page: no access |  <- one frame too many faults here
 *   map   +------------------------+
 *
 * C cannot grow a stack as Go does (moving it means fixing every pointer
 * into it, and C code keeps those anywhere), so each virtual thread gets
 * a fixed size, and a write past it hits the guard page. The fault
 * arrives as SIGSEGV on the overflowing stack itself, which has no room
 * left: the handler runs on an alternate signal stack (sigaltstack, one
 * per carrier thread), names the virtual thread and the stack size, and
 * exits with VT_STACK_OVERFLOW_EXIT.
 */
#ifndef THREADLAB_VTHREAD_STACK_H
#define THREADLAB_VTHREAD_STACK_H

#include <stdbool.h>
#include <stddef.h>

#define VT_STACK_DEFAULT_BYTES (64 * 1024)  /* --stack: 64 KiB */
#define VT_STACK_MIN_BYTES (16 * 1024)      /* below, the handler's own frames
                                               (snprintf for the board) may not fit */
#define VT_STACK_OVERFLOW_EXIT 70           /* the exit status after an overflow */

struct vt_stack {
    void *map;                /* the mapping, guard page first */
    size_t map_bytes;         /* its length */
    void *lo;                 /* the lowest usable byte, just above the guard */
    size_t bytes;             /* usable bytes (a whole number of pages) */
    unsigned valgrind_id;     /* the stack as valgrind knows it */
};

/* Map a stack of at least bytes (rounded up to pages) above a guard page.
 * Returns 0 or -errno. Any thread. */
int vt_stack_alloc(struct vt_stack *s, size_t bytes);

/* Unmap it. Not while a context runs on it. Any thread. */
void vt_stack_free(struct vt_stack *s);

/* Stacks mapped now, by the whole process (allocated, not yet freed).
 * Any thread. */
long vt_stacks_mapped(void);

/* Install the overflow report for the calling thread: an alternate signal
 * stack, and (once per process) the SIGSEGV handler that uses it. Returns
 * 0 or -errno. A thread that runs virtual threads, before the first. */
int vt_stack_thread_begin(void);

/* Remove the calling thread's alternate signal stack. Before it ends. */
void vt_stack_thread_end(void);

/* The calling thread now runs on s, the stack of the virtual thread called
 * name (NULL, NULL: on its own stack again): what the overflow report
 * names. The thread that switches. */
void vt_stack_running(const struct vt_stack *s, const char *name);

#endif
