/* calibrate.h -- `threadlab calibrate`: the simulator's costs, measured
 * on the machine it runs on (a few seconds). */
#ifndef THREADLAB_CALIBRATE_H
#define THREADLAB_CALIBRATE_H

#include <stdio.h>

#include "profile.h"

/* Fill p with this machine's costs (and where and when, in p->measured).
 * time_slice_ns, context_switch_log2_ns and conn_kb are not measured (nor
 * stack_touched_kb and kernel_stack_kb without /proc): they
 * keep the default's values. Progress goes to `progress`. Returns how many
 * figures were refused for a spread too wide to trust (0: all measured). */
int calibrate_measure(struct profile *p, FILE *progress);

#endif
