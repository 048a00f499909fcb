/* cli_sim_help.h -- `threadlab sim --help` in Chinese, for a zh screen
 * (--lang zh, or a zh LANG); the English text is sim_usage in cli_sim.c.
 * tests/sim/run.sh checks that both name the same options. */
#ifndef THREADLAB_CLI_SIM_HELP_H
#define THREADLAB_CLI_SIM_HELP_H

#include <stdio.h>

/* Print the Chinese usage to OUT; the figures are the English text's (the
 * sweep's sleep, a thread's resident KiB, the sweep pool's --max). Any
 * thread. */
void cli_sim_usage_zh(FILE *out, int sweep_sleep_ms, double thread_resident_kb,
                      int sweep_pool_max);

#endif
