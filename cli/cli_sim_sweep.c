/* cli_sim_sweep.c -- `threadlab sim MODEL|all --sweep VAR=LIST`.
 *
 * The same rows as `compare --sweep`, each one a simulator run: the
 * command line's machine and clients, with the swept variable set to one
 * value and the model to one of the chosen. The simulator has one line in
 * flight per connection and no line sizes, so it sweeps conns, cpu-us and
 * sleep-pct. A real sweep's CSV given to --overlay is read first (a bad
 * one is a usage error: nothing has run yet), and drawn as points over
 * the simulated lines. The runs are independent, so they run side by
 * side, one thread per core.
 */
#include "cli_sim_sweep.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_sim_memory.h"

/* sim all --sweep runs every model at every value: room for all rows. */
_Static_assert(SIM_MODEL_COUNT <= SWEEP_MAX_MODELS && FLEET_MAX <= SWEEP_MAX_MODELS,
               "a sweep's rows do not fit SWEEP_MAX_ROWS");

static _Atomic bool sweep_stop;

static void on_stop_signal(int sig)
{
    (void)sig;
    atomic_store(&sweep_stop, true);
}

/* The options of one point: base with model m and value v. */
static void point_opts(const struct sim_opts *base, const struct sim_sweep *sw,
                       enum sim_model m, double v, struct sim_opts *o)
{
    *o = *base;
    o->model = m;
    if (m == SIM_POOL && !sw->pool_max_given) {
        o->pool_max = SIM_SWEEP_POOL_MAX;
        if (o->pool_min > o->pool_max)
            o->pool_min = o->pool_max;
    }
    switch (sw->spec.var) {
    case SWEEP_CONNS:
        o->conns = (uint32_t)v;
        break;
    case SWEEP_CPU_US:
        o->cpu_us = (uint32_t)v;
        o->cpu_pct = 100;
        o->sleep_pct = 0;
        break;
    case SWEEP_SLEEP_PCT:
        o->sleep_ms = SWEEP_SLEEP_MS;
        o->sleep_pct = v;
        if (o->cpu_pct + v > 100)
            o->cpu_pct = 100 - v;
        break;
    default:
        break;                      /* refused by check_points */
    }
}

/* Every point's options, checked before the first run. */
static bool check_points(const struct sim_opts *base, const struct sim_sweep *sw)
{
    char err[256];
    if (sw->spec.var == SWEEP_DEPTH || sw->spec.var == SWEEP_SIZE) {
        cli_usage_error("sim", "--sweep: the simulator has one line in flight per "
                        "connection and no line sizes; sweep conns, cpu-us or sleep-pct");
        return false;
    }
    for (int k = 0; k < sw->spec.nvalues; k++)
        for (int m = 0; m < SIM_MODEL_COUNT; m++) {
            struct sim_opts o;
            if (!sw->models[m])
                continue;
            point_opts(base, sw, (enum sim_model)m, sw->spec.values[k], &o);
            if (sim_opts_check(&o, err, sizeof(err)) < 0) {
                cli_usage_error("sim", "--sweep: at %s=%g: %s", sweep_var_name(sw->spec.var),
                                sw->spec.values[k], err);
                return false;
            }
            if (!cli_sim_fits(&o, err, sizeof(err))) {
                fprintf(stderr, "threadlab sim: --sweep: at %s=%g: %s\n",
                        sweep_var_name(sw->spec.var), sw->spec.values[k], err);
                return false;
            }
        }
    return true;
}

/* A simulated run as a sweep row. Resident memory is the process's own,
 * plus what the threads and connections hold: the pages a thread touches,
 * not its whole stack (that is reserved), and each connection's buffers.
 * A vthread's stack pages touched count too (0 for the other models).
 * Errors are the connections refused or never served, as the load counts
 * a refused or unanswered connection (their lines are not counted again). */
static void row_from_report(const struct sim_opts *o, const struct sim_report *r, double v,
                            struct sweep_row *row)
{
    memset(row, 0, sizeof(*row));
    snprintf(row->model, sizeof(row->model), "%s", sim_model_name(o->model));
    row->value = v;
    row->simulated = true;
    row->have_load = true;
    row->lines_per_s = r->lines_per_s;
    row->p50_us = (double)hist_percentile(&r->latency_ns, 50) / 1e3;
    row->p99_us = (double)hist_percentile(&r->latency_ns, 99) / 1e3;
    row->p999_us = (double)hist_percentile(&r->latency_ns, 99.9) / 1e3;
    row->peak_threads = r->peak_threads;
    row->resident_kb = SIM_SWEEP_PROCESS_RESIDENT_KB +
                       (double)r->peak_threads * SIM_SWEEP_THREAD_RESIDENT_KB +
                       r->peak_conn_bytes / 1024 + r->peak_vthread_bytes / 1024;
    row->cpu_s = r->cpu_busy_pct / 100 * o->cores * r->virtual_s;
    row->context_switches = (double)r->context_switches;
    row->errors = (double)(r->conns_refused + r->conns_unserved);
    row->cpu_busy_pct = r->cpu_busy_pct;
    row->reserved_kb = (r->peak_stack_bytes + r->peak_conn_bytes) / 1024;
    snprintf(row->server, sizeof(row->server), "sim");
}

/* The overlay's rows: a real sweep of the same variable. */
static int read_overlay(const struct sim_sweep *sw, struct sweep_row *rows)
{
    char err[512];
    enum sweep_var v;
    int n = sweep_read_csv(sw->overlay, &v, rows, SWEEP_MAX_ROWS, err, sizeof(err));
    if (n < 0) {
        cli_usage_error("sim", "--overlay: %s", err);
        return -1;
    }
    if (v != sw->spec.var) {
        cli_usage_error("sim", "--overlay: %s is a sweep of %s, this one of %s",
                        sw->overlay, sweep_var_name(v), sweep_var_name(sw->spec.var));
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (rows[i].simulated) {
            cli_usage_error("sim", "--overlay: %s: line %d is a simulated row; overlay a "
                            "real sweep (compare --sweep --csv)", sw->overlay, i + 2);
            return -1;
        }
    return n;
}

static void sweep_title(const struct sim_opts *o, const struct sim_sweep *sw, char *buf,
                        size_t len)
{
    char machine[256] = "";
    if (sw->overlay) {
        char here[200];
        sweep_machine(here, sizeof(here));
        snprintf(machine, sizeof(machine), "; circles: real, %s", here);
    }
    char clients[64];
    if (o->rate > 0)
        snprintf(clients, sizeof(clients), "open loop at %g lines/s", o->rate);
    else
        snprintf(clients, sizeof(clients), "closed loop, think %g us", o->think_us);
    snprintf(buf, len, "threadlab sim --sweep %s: %d simulated cores, %s, %g s per point, "
             "seed %llu\nprofile: %s%s", sweep_var_name(sw->spec.var), o->cores, clients,
             o->duration_s, (unsigned long long)o->seed, o->prof.measured, machine);
}

/* ---- running the points, one thread per core ---------------------------- */

/* The points are independent runs of a deterministic simulator, so they
 * may run side by side: each thread takes the next point and writes its
 * row into that point's own slot, and the rows come out in the same order
 * whatever thread ran which. */
struct point_runner {
    const struct sim_opts *base;
    const struct sim_sweep *sw;
    enum sim_model order[SIM_MODEL_COUNT];   /* the chosen models */
    int nmodels, npoints;
    _Atomic int next;                /* the next point to take */
    _Atomic int finished;            /* points done, for the progress line */
    _Atomic bool out_of_memory;
    struct sweep_row *rows;          /* npoints slots */
    bool *done;                      /* slot filled */
    bool show;                       /* progress on stderr (a terminal) */
    pthread_mutex_t progress_lock;   /* one progress line at a time */
};

static void *point_thread(void *arg)
{
    struct point_runner *pr = arg;
    struct sim_report *r = malloc(sizeof(*r));
    if (!r) {
        atomic_store(&pr->out_of_memory, true);
        return NULL;
    }
    for (;;) {
        if (atomic_load(&sweep_stop) || atomic_load(&pr->out_of_memory))
            break;
        int i = atomic_fetch_add(&pr->next, 1);
        if (i >= pr->npoints)
            break;
        double v = pr->sw->spec.values[i / pr->nmodels];
        struct sim_opts o;
        point_opts(pr->base, pr->sw, pr->order[i % pr->nmodels], v, &o);
        if (sim_run(&o, r) < 0) {
            atomic_store(&pr->out_of_memory, true);
            break;
        }
        row_from_report(&o, r, v, &pr->rows[i]);
        pr->done[i] = true;
        int finished = atomic_fetch_add(&pr->finished, 1) + 1;
        if (pr->show) {
            pthread_mutex_lock(&pr->progress_lock);
            fprintf(stderr, "\r  sim --sweep: %d of %d runs done (last: %s=%g, %s)      ",
                    finished, pr->npoints, sweep_var_name(pr->sw->spec.var), v,
                    sim_model_name(o.model));
            pthread_mutex_unlock(&pr->progress_lock);
        }
    }
    free(r);
    return NULL;
}

/* Run every point on up to one thread per core; the rows done, in order,
 * into rows. Returns false when out of memory. */
static bool run_points(const struct sim_opts *base, const struct sim_sweep *sw,
                       struct sweep_row *rows, int *n)
{
    static bool done[SWEEP_MAX_ROWS];
    static struct sweep_row slots[SWEEP_MAX_ROWS];
    struct point_runner pr = { .base = base, .sw = sw, .rows = slots, .done = done,
                               .show = isatty(STDERR_FILENO) };
    for (int m = 0; m < SIM_MODEL_COUNT; m++)
        if (sw->models[m])
            pr.order[pr.nmodels++] = (enum sim_model)m;
    pr.npoints = sw->spec.nvalues * pr.nmodels;
    memset(done, 0, sizeof(done));
    pthread_mutex_init(&pr.progress_lock, NULL);

    /* The cores this process may run on (taskset and cpusets count). */
    cpu_set_t cpus;
    int cores = sched_getaffinity(0, sizeof(cpus), &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
    int nthreads = cores < 1 ? 1 : cores > SIM_SWEEP_MAX_THREADS ? SIM_SWEEP_MAX_THREADS
                                                                 : cores;
    pthread_t threads[SIM_SWEEP_MAX_THREADS];
    int started = 0;
    while (started < nthreads &&
           pthread_create(&threads[started], NULL, point_thread, &pr) == 0)
        started++;
    if (started == 0)
        point_thread(&pr);          /* no thread to be had: run them here */
    for (int t = 0; t < started; t++)
        pthread_join(threads[t], NULL);
    pthread_mutex_destroy(&pr.progress_lock);
    if (pr.show)
        fprintf(stderr, "\r%78s\r", "");

    /* After a Ctrl-C, the points done, in order (a later one may be done
     * while an earlier one was not yet taken). */
    for (int i = 0; i < pr.npoints; i++)
        if (done[i])
            rows[(*n)++] = slots[i];
    if (atomic_load(&pr.out_of_memory))
        fprintf(stderr, "threadlab sim: out of memory\n");
    return !atomic_load(&pr.out_of_memory);
}

int sim_sweep_run(const struct sim_opts *base, const struct sim_sweep *sw)
{
    static struct sweep_row rows[SWEEP_MAX_ROWS], overlay[SWEEP_MAX_ROWS];
    int n = 0, noverlay = 0;
    if (!check_points(base, sw))
        return CLI_EXIT_USAGE;
    if (sw->overlay && (noverlay = read_overlay(sw, overlay)) < 0)
        return CLI_EXIT_USAGE;
    FILE *csv_out = NULL;
    if (sw->csv && !(csv_out = fopen(sw->csv, "w"))) {
        perror(sw->csv);
        return CLI_EXIT_FAILED;
    }
    struct sigaction stop = { .sa_handler = on_stop_signal };
    sigaction(SIGINT, &stop, NULL);
    sigaction(SIGTERM, &stop, NULL);

    int rc = run_points(base, sw, rows, &n) ? CLI_EXIT_OK : CLI_EXIT_FAILED;
    if (atomic_load(&sweep_stop))
        fprintf(stderr, "threadlab sim: stopped; %d rows so far\n", n);
    char title[512];
    sweep_title(base, sw, title, sizeof(title));
    if (sweep_report("sim", sw->spec.var, rows, n, overlay, noverlay, title, sw->json,
                     csv_out, sw->plot) < 0)
        rc = CLI_EXIT_FAILED;
    if (csv_out && fclose(csv_out) != 0) {
        perror(sw->csv);
        rc = CLI_EXIT_FAILED;
    }
    return rc;
}
