/* sim.h -- `threadlab sim MODEL`: the five models on a simulated machine.
 *
 * The same behaviour as the real servers, at the level of threads, queues
 * and loops: BIO threads blocked in read, the watchdog pool handing
 * connections to task threads, one loop that stalls on !sleep, boss and
 * worker loops with round robin, ioRatio and offload, virtual threads on
 * carriers that park and resume, pinned or handed off. Clients connect,
 * send lines (closed loop with think time, or open loop at a rate), and
 * time each reply. Costs come from a profile (profile.h); the run is
 * deterministic for a seed. docs/simulator.md lists every assumption.
 */
#ifndef THREADLAB_SIM_H
#define THREADLAB_SIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/machine.h"
#include "sim/profile.h"
#include "probe/histogram.h"

struct sim_viz;

#define SIM_REPORT_CORES 64      /* cores shown one by one in a report */
#define SIM_CONNS_MAX 50000000   /* --conns */
#define SIM_LINES_PER_CONN_MAX UINT32_MAX  /* a connection counts its lines in
                                    32 bits (one more would wrap its count) */
#define SIM_WORKERS_MAX 4096     /* --workers */
#define SIM_OFFLOAD_MAX 100000   /* --offload: business threads, made at the start */
#define SIM_POOL_MIN_MAX 100000  /* --min: task threads made at the start, as
                                    --offload's */
#define SIM_POOL_MAX SIM_CONNS_MAX  /* --max: a pool makes a thread only for a
                                    connection, so more than --conns is the same */

#define SIM_CARRIERS_MAX 4096    /* --carriers */

enum sim_model { SIM_BIO, SIM_POOL, SIM_REACTOR, SIM_MULTIREACTOR, SIM_VTHREAD,
                 SIM_MODEL_COUNT };

struct sim_opts {
    enum sim_model model;
    int cores;
    const struct sched_ops *sched;  /* --sched: who places the threads
                                       (sched.h; default sched_linux) */
    struct profile prof;
    uint64_t seed;

    /* the clients (as `threadlab load`) */
    uint32_t conns;
    double ramp_s;               /* connects spread evenly over this long */
    bool random_connects;        /* ... or at uniformly random times in it */
    uint64_t lines_per_conn;     /* 0: until the duration ends */
    double duration_s;           /* no line is sent after this */
    double rate;                 /* open loop: lines/s in all (0: closed loop) */
    double think_us;             /* closed loop: mean think time (exponential) */
    double cpu_pct;              /* --mix cpu=US:PCT */
    uint32_t cpu_us;
    double sleep_pct;            /* --mix sleep=MS:PCT */
    uint32_t sleep_ms;
    double task_pct;             /* --mix task=US:PCT (!task lines) */
    uint32_t task_us;
    double service_exp_us;       /* every line burns exponential CPU of this
                                    mean (for queueing checks; 0: off) */
    bool client_on_machine;      /* the clients are one thread on the same
                                    cores, paying read + verify + write per
                                    reply (as threadlab load does here); off:
                                    clients cost nothing */

    /* the server (as `threadlab serve`) */
    uint32_t max_threads;        /* the machine's limit (pid_max); 0: none */
    uint32_t backlog;            /* accept queue; beyond: refused */
    int pool_min, pool_max, pool_queue;
    int workers, offload, io_ratio;
    int carriers;                /* vthread: carrier threads (0: the cores) */
    bool pin;                    /* vthread: a blocking call holds its carrier */
    int handoff_ms;              /* vthread: a carrier given up by a blocking
                                    call this long gets a spare */
    double vt_stack_kb;          /* vthread: each virtual thread's stack,
                                    reserved (--stack) */

    struct sim_viz *viz;         /* --viz: play the run on this board (NULL: off) */
    bool waits;                  /* --waits: note each thread's waits for a
                                    core (sim_report.core_waits) */
};

struct sim_report {
    uint64_t lines_sent, lines_ok;
    uint64_t lines_lost;         /* sent, never answered: the three below */
    uint64_t lines_refused;      /* ... their connection was refused */
    uint64_t lines_unserved;     /* ... their connection was never served
                                    (in the backlog or the pool's queue at
                                    the end) */
    uint64_t lines_cut;          /* ... in flight when the run was stopped
                                    before its events ran out (--viz's q,
                                    out of memory) */
    uint64_t conns_opened, conns_refused, conns_unserved;
    double virtual_s;            /* simulated time of the run, drain included */
    double window_s;             /* the sending window: --duration, or the
                                    whole run with --lines-per-conn */
    double drain_s;              /* after the window, until the last reply */
    uint64_t window_lines;       /* replies received in the window */
    double lines_per_s;          /* window_lines / window_s */
    struct hist latency_ns;      /* client send -> reply received */
    double mean_latency_ns;      /* exactly (not from the histogram) */
    double mean_wait_ns;         /* line at the server -> it first gets a core */
    uint64_t waits;              /* lines whose wait was measured */
    double p_wait;               /* the share of them that waited at all */
    double mean_in_system;       /* L: lines sent and not yet answered, on average */
    double arrival_per_s;        /* lambda: lines sent per second of the run */
    double sojourn_ns;           /* W: a line's mean time in the system, lost
                                    lines until their loss; L = lambda x W */
    double cpu_busy_pct;         /* all cores, average over the window */
    double core_busy_pct[SIM_REPORT_CORES];  /* the first cores, one by one */
    double core_busy_min_pct, core_busy_max_pct;
    uint64_t context_switches, preemptions;
    uint64_t wakeup_preemptions; /* of the preemptions: a woken thread took a busy core */
    uint64_t migrations;         /* a thread came onto another core than the
                                    one it ran on last */
    uint32_t peak_threads;
    double peak_stack_bytes;     /* peak threads x stack size (reserved) */
    double peak_resident_bytes;  /* peak threads x (stack pages touched +
                                    kernel stack) + connections x conn_kb */
    double peak_conn_bytes;      /* peak open connections x conn_kb */
    /* vthread only (0 for the other models) */
    uint64_t peak_vthreads;      /* virtual threads alive at once, at most */
    double peak_vthread_bytes;   /* of peak_resident_bytes: their stacks'
                                    pages touched (vt_stack_touched_kb each) */
    uint64_t vt_switches;        /* switches between a carrier and a vthread */
    uint64_t vt_parks;           /* reads that said EAGAIN and parked */
    uint64_t handoffs;           /* spares the monitor started */
    uint32_t peak_spares;        /* spares alive at once, at most */
    struct machine_waits core_waits; /* with --waits: the server's threads [0]
                                    and the load generator [1] */
    uint64_t events;
    double wall_s, events_per_s;
    long peak_rss_kb;            /* of this process */
};

/* Defaults mirror serve and load: 1 conn, closed loop, 10 s, 2 cores. */
void sim_opts_init(struct sim_opts *o, enum sim_model model);

/* --sched: the scheduler by name ("linux", "simple"), or NULL. */
const struct sched_ops *sim_sched_by_name(const char *name);

/* The model by name ("bio", ...), or -1. */
int sim_model_by_name(const char *name);
const char *sim_model_name(enum sim_model m);

/* Check the options; a message into err and -1 when they make no sense. */
int sim_opts_check(const struct sim_opts *o, char *err, size_t err_len);

/* What a run needs of the machine before its first event, at the least:
 * its connections, the threads it starts with, the events then pending.
 * It grows from there (BIO's threads, lines in flight). */
struct sim_need {
    double bytes;                /* memory */
    uint64_t events;             /* events pending at once at the start */
    uint64_t threads;            /* threads made at the start */
};
void sim_need(const struct sim_opts *o, struct sim_need *n);

/* Run it. Returns 0, or -1 when out of memory (r->events and
 * r->virtual_s then say how far it got). */
int sim_run(const struct sim_opts *o, struct sim_report *r);

/* The simulated report: the same bytes for the same options and seed. */
void sim_report_print(const struct sim_opts *o, const struct sim_report *r, FILE *out);
/* The engine's own cost (wall time, events/s, RSS): differs run to run,
 * so it is kept out of the report (--engine-stats prints it to stderr). */
void sim_report_engine(const struct sim_report *r, FILE *out);
void sim_report_json(const struct sim_opts *o, const struct sim_report *r, FILE *out);

#endif
