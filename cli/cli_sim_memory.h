/* cli_sim_memory.h -- does a simulation fit in the memory this process
 * may still take? (sim, and each point of sim --sweep) */
#ifndef THREADLAB_CLI_SIM_MEMORY_H
#define THREADLAB_CLI_SIM_MEMORY_H

#include <stdbool.h>
#include <stddef.h>

#include "sim/sim.h"

/* The memory this process may still take: the least of what its address
 * space limit (ulimit -v) and data limit (ulimit -d) leave and of the
 * machine's available memory; *what names which. Main thread. */
double cli_memory_left(const char **what);

/* False, with one line in err saying what the run needs and what there
 * is, when the run's start alone (sim_need) does not fit. Main thread. */
bool cli_sim_fits(const struct sim_opts *o, char *err, size_t err_len);

#endif
