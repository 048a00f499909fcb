/* cli_sim_sweep.h -- `threadlab sim MODEL|all --sweep VAR=LIST`: the
 * curves of `compare --sweep`, from the simulator, past this machine. */
#ifndef THREADLAB_CLI_SIM_SWEEP_H
#define THREADLAB_CLI_SIM_SWEEP_H

#include <stdbool.h>

#include "sim/sim.h"
#include "load/sweep.h"

/* A simulated thread's resident memory: the pages of its stack it
 * touches and its bookkeeping (TLS, descriptor), not the whole reserved
 * stack. Measured here by compare --sweep: bio's RSS less the reactor's at
 * the same 1000 and 10 000 connections, per extra thread (4.5 to 4.7 KiB;
 * docs/curves.md). */
#define SIM_SWEEP_THREAD_RESIDENT_KB 4.6
/* What the server process holds before any thread or connection (code,
 * libraries, heap, board): the real reactor's RSS with one connection. */
#define SIM_SWEEP_PROCESS_RESIDENT_KB 2700
/* The pool's --max in a sweep unless given: what compare's default
 * scenario (steady, load/scenario.c) gives the real pool, so that an
 * --overlay compares like with like. */
#define SIM_SWEEP_POOL_MAX 128
/* Simulations run side by side: at most this many threads (one per core
 * the process may run on). */
#define SIM_SWEEP_MAX_THREADS 16

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
