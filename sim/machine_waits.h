/* machine_waits.h -- sim --waits (struct machine_waits, machine.h): what
 * the machine notes when a thread comes onto a core and leaves it.
 * Nothing when m->waits is NULL. */
#ifndef THREADLAB_MACHINE_WAITS_H
#define THREADLAB_MACHINE_WAITS_H

#include "machine.h"

/* Core c's thread leaves it: the stretch it ran there, and whether it
 * was preempted. */
void waits_note_run(struct machine *m, int c, bool preempted);

/* Thread t starts on a core at `start`: its wait since it was runnable. */
void waits_note_wait(struct machine *m, uint32_t t, vtime_t start);

#endif
