/* switch_cost.h -- what a switch onto a core costs, and how long an idle
 * core takes to wake (machine.h tells the rules; the profile's figures,
 * calibrate.c measures). */
#ifndef THREADLAB_SWITCH_COST_H
#define THREADLAB_SWITCH_COST_H

#include "machine.h"

/* Of an idle core's wakeup, the part its waker pays (wakeup_ipi_ns). */
double switch_ipi_ns(const struct machine *m);

/* The CPU thread th pays to come onto core c, arriving `how`, times
 * `spread` (one draw of wakeup_sigma). */
double switch_cost(const struct machine *m, int c, const struct vthread *th,
                   enum arrival how, bool remote, bool waker_pays, double spread);

/* How long idle core c, woken, takes to run its thread (latency, not
 * CPU): wakeup_ns times `spread` (the same draw), and more after a long
 * idle (wakeup_deep_*). */
vtime_t wakeup_delay(struct machine *m, int c, double spread);

#endif
