/* cli_sim_sweep.h -- `threadlab sim MODEL|all --sweep VAR=LIST`: the
 * curves of `compare --sweep`, from the simulator, past this machine. */
#ifndef THREADLAB_CLI_SIM_SWEEP_H
#define THREADLAB_CLI_SIM_SWEEP_H

#include <stdbool.h>

#include "des/sim.h"
#include "fleet/sweep.h"

/* Pages of its stack a thread touches, and what it costs besides (TLS,
 * the guard's page tables): a simulated thread's resident memory, measured
 * on this machine from the real bio server (docs/curves.md). */
#define SIM_SWEEP_THREAD_RESIDENT_KB 12
/* What the server process holds before any thread or connection (code,
 * libraries, heap, board), measured the same way: the reactor's RSS with
 * one connection. */
#define SIM_SWEEP_PROCESS_RESIDENT_KB 2800
/* The pool's --max in a sweep unless given: what compare's default
 * scenario (steady, sim/fleet/scenario.c) gives the real pool, so that an
 * --overlay compares like with like. */
#define SIM_SWEEP_POOL_MAX 128

struct sim_sweep {
    struct sweep_spec spec;
    bool models[SIM_MODEL_COUNT];   /* which models run */
    bool pool_max_given;            /* --max was on the command line */
    const char *csv, *plot, *overlay;
    bool json;
};

/* Check every point's options before running any (a bad one is a usage
 * error), read the overlay, run the points (values outer, models inner),
 * print and draw. base is the command line's options. Returns an exit
 * status: CLI_EXIT_OK, _FAILED or _USAGE. */
int sim_sweep_run(const struct sim_opts *base, const struct sim_sweep *sw);

#endif
