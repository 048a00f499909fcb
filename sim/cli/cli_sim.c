/* cli_sim.c -- `threadlab sim MODEL`: a model on a simulated machine;
 * with --sweep, many runs as curves (cli_sim_sweep.c). */
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_sim_sweep.h"
#include "des/sim.h"
#include "des/simviz.h"
#include "viz/top.h"

static void sim_usage(FILE *out)
{
    fprintf(out,
            "usage: threadlab sim MODEL [options]\n"
            "       threadlab sim MODEL|all --sweep VAR=LIST [options]   (curves)\n"
            "       threadlab sim quiz --seed N [--answers]   (lab 08)\n"
            "\n"
            "Run a model (bio, pool, reactor, multireactor) on a simulated machine of\n"
            "any size: threads, cores, a scheduler, syscall and wakeup costs from a\n"
            "profile. Deterministic: the same options and seed give the same report.\n"
            "Reports what threadlab load reports, plus CPU, context switches, threads\n"
            "and memory; rates and CPU over the sending window (--duration), the drain\n"
            "after it on its own; each line's wait until it first gets a core, and\n"
            "Little's law (L = lambda x W). See docs/simulator.md for the cost model\n"
            "and its limits.\n"
            "\n"
            "the machine:\n"
            "  --cores N          cores (default 2)\n"
            "  --profile FILE     costs measured by threadlab calibrate (default: the\n"
            "                     built-in profile of this project's machine); 'zero'\n"
            "                     for no costs at all (pure queueing)\n"
            "  --max-threads N    threads the machine allows, like pid_max (default\n"
            "                     32768; 0: no limit)\n"
            "  --stack-kb N       each thread's stack (default 8192)\n"
            "  --seed N           the random seed (default 1)\n"
            "\n"
            "the clients (as threadlab load):\n"
            "  -c, --conns N      connections (default 1)\n"
            "  -t, --duration S   seconds of sending, simulated (default 10)\n"
            "  --lines-per-conn N each connection sends N lines, then closes\n"
            "  -r, --rate R       open loop: R lines/s over all connections\n"
            "  --think-us US      closed loop: mean think time between lines\n"
            "  --mix SPEC         cpu=US:PCT,sleep=MS:PCT, as threadlab load, and\n"
            "                     task=US:PCT: !task lines, US of CPU queued as a task\n"
            "                     on the connection's loop under the io ratio (the\n"
            "                     blocking models burn it on their thread)\n"
            "  --service-exp US   every line burns exponential CPU of mean US\n"
            "  --ramp S           spread the connects over S seconds\n"
            "  --random-connects  connect at uniformly random times in the ramp\n"
            "  --client-cpu       the clients are one thread on the same cores, paying\n"
            "                     read + check + write per reply (as threadlab load on\n"
            "                     this machine); by default clients cost nothing\n"
            "\n"
            "the server (as threadlab serve):\n"
            "  --min N, --max N, --queue N   the pool (default 4, 16, 1024)\n"
            "  --workers N        multireactor worker loops (default 2 x cores)\n"
            "  --offload N        a business pool of N threads for !cpu/!sleep lines\n"
            "  --io-ratio PCT     loops: tasks get io_time x (100 - PCT) / PCT while\n"
            "                     channels are ready (default 50; 100: all tasks)\n"
            "  --backlog N        accept queue; beyond it connections are refused\n"
            "                     (default 0: unbounded)\n"
            "\n"
            "  --viz              play the run in the visualizer: the simulated threads,\n"
            "                     loops and events on a board, as threadlab top shows a\n"
            "                     real server; keys: space pause, s one event on, b one\n"
            "                     event back (exact: the run is made again from the\n"
            "                     seed), + / - speed, ? these keys on the status line,\n"
            "                     q quit (then the report)\n"
            "  --record FILE      with --viz: also record the screen for threadlab replay\n"
            "  --speed X          with --viz: simulated seconds per real second\n"
            "                     (default 0.001: a millisecond takes a second);\n"
            "                     without --viz it is refused (a run without a screen\n"
            "                     goes as fast as it can)\n"
            "  --big              with --viz: projector mode, as top's --big\n"
            "  --lang en|zh       with --viz: the screen in English or Chinese, as\n"
            "                     top's --lang\n"
            "  --json             the report as one JSON object\n"
            "  --engine-stats     also print the engine's wall time, events/s and RSS\n"
            "                     to stderr (the report itself is the same bytes for\n"
            "                     the same seed, so it leaves them out)\n"
            "  -h, --help         this help\n"
            "\n"
            "curves (MODEL may be 'all'; the rows and figure of compare --sweep):\n"
            "  --sweep VAR=LIST   one run per model and value; VAR: conns, cpu-us (every\n"
            "                     line burns N us), sleep-pct (this %% of lines sleeps\n"
            "                     %d ms); LIST: 10,100,1000 or 1e1..1e6 (powers of ten).\n"
            "                     Adds the simulated CPU busy, reserved memory (stacks\n"
            "                     + connections) and resident memory (the process, %g\n"
            "                     KiB a thread, the connections). The pool gets --max\n"
            "                     %d unless given, as compare's steady scenario gives\n"
            "                     the real one\n"
            "  --csv FILE         also write the rows as CSV\n"
            "  --plot FILE        draw the curves into FILE.png or FILE.svg (gnuplot)\n"
            "  --overlay CSV      with --plot: draw a real sweep (compare --sweep --csv)\n"
            "                     as points over the simulated lines\n"
            "\n"
            "Example: threadlab sim bio --cores 16 --conns 100000 --duration 5\n"
            "         threadlab sim all --cores 16 --sweep conns=1e1..1e6 --plot c1m.png\n",
            SWEEP_SLEEP_MS, SIM_SWEEP_THREAD_RESIDENT_KB, SIM_SWEEP_POOL_MAX);
}

enum {
    OPT_CORES = 256, OPT_PROFILE, OPT_MAX_THREADS, OPT_STACK_KB, OPT_SEED,
    OPT_LINES_PER_CONN, OPT_THINK, OPT_MIX, OPT_SERVICE, OPT_RAMP, OPT_RANDOM,
    OPT_MIN, OPT_MAX, OPT_QUEUE, OPT_WORKERS, OPT_OFFLOAD, OPT_BACKLOG, OPT_JSON,
    OPT_CLIENT_CPU, OPT_VIZ, OPT_SPEED, OPT_BIG, OPT_LANG, OPT_RECORD, OPT_ENGINE_STATS, OPT_IO_RATIO,
    OPT_SWEEP, OPT_CSV, OPT_PLOT, OPT_OVERLAY,
};

static const struct option sim_options[] = {
    { "cores", required_argument, NULL, OPT_CORES },
    { "profile", required_argument, NULL, OPT_PROFILE },
    { "max-threads", required_argument, NULL, OPT_MAX_THREADS },
    { "stack-kb", required_argument, NULL, OPT_STACK_KB },
    { "seed", required_argument, NULL, OPT_SEED },
    { "conns", required_argument, NULL, 'c' },
    { "duration", required_argument, NULL, 't' },
    { "lines-per-conn", required_argument, NULL, OPT_LINES_PER_CONN },
    { "rate", required_argument, NULL, 'r' },
    { "think-us", required_argument, NULL, OPT_THINK },
    { "mix", required_argument, NULL, OPT_MIX },
    { "service-exp", required_argument, NULL, OPT_SERVICE },
    { "ramp", required_argument, NULL, OPT_RAMP },
    { "random-connects", no_argument, NULL, OPT_RANDOM },
    { "client-cpu", no_argument, NULL, OPT_CLIENT_CPU },
    { "viz", no_argument, NULL, OPT_VIZ },
    { "speed", required_argument, NULL, OPT_SPEED },
    { "big", no_argument, NULL, OPT_BIG },
    { "lang", required_argument, NULL, OPT_LANG },
    { "record", required_argument, NULL, OPT_RECORD },
    { "min", required_argument, NULL, OPT_MIN },
    { "max", required_argument, NULL, OPT_MAX },
    { "queue", required_argument, NULL, OPT_QUEUE },
    { "workers", required_argument, NULL, OPT_WORKERS },
    { "offload", required_argument, NULL, OPT_OFFLOAD },
    { "backlog", required_argument, NULL, OPT_BACKLOG },
    { "json", no_argument, NULL, OPT_JSON },
    { "engine-stats", no_argument, NULL, OPT_ENGINE_STATS },
    { "io-ratio", required_argument, NULL, OPT_IO_RATIO },
    { "sweep", required_argument, NULL, OPT_SWEEP },
    { "csv", required_argument, NULL, OPT_CSV },
    { "plot", required_argument, NULL, OPT_PLOT },
    { "overlay", required_argument, NULL, OPT_OVERLAY },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

/* ---- --viz: the run on a board, the screen in this thread ------------------ */

struct viz_run {
    const struct sim_opts *o;
    struct sim_report *r;
    struct sim_viz_ctl ctl;
    int rc;
    bool show_keys;              /* '?': the status line lists the sim's keys */
};

/* Runs the simulation, and again from the seed for every step back (it
 * is deterministic: the run up to event N is the same every time). After
 * the end it waits, so that a step back is still possible. */
static void *sim_thread(void *arg)
{
    struct viz_run *vr = arg;
    for (;;) {
        vr->rc = sim_run(vr->o, vr->r);
        while (!atomic_load(&vr->ctl.restart) && !atomic_load(&vr->ctl.quit)) {
            struct timespec nap = { 0, 20 * 1000000L };
            nanosleep(&nap, NULL);
        }
        if (!atomic_load(&vr->ctl.restart) || vr->rc < 0)
            return NULL;
        atomic_store(&vr->ctl.restart, false);
        atomic_store(&vr->ctl.finished, false);
        if (!simviz_reset(vr->o->viz))
            return NULL;
    }
}

static void viz_status(void *arg, char *buf, size_t len)
{
    struct viz_run *vr = arg;
    char last[160];
    pthread_mutex_lock(&vr->ctl.lock);
    snprintf(last, sizeof(last), "%s", vr->ctl.last);
    pthread_mutex_unlock(&vr->ctl.lock);
    bool finished = atomic_load(&vr->ctl.finished);
    if (vr->show_keys) {         /* top's help knows nothing of these */
        snprintf(buf, len, "[sim %s] keys: space pause/resume, s one event on, b one event "
                 "back, + faster, - slower, q quit (the report follows), ? these keys",
                 sim_model_name(vr->o->model));
        return;
    }
    snprintf(buf, len, "[sim %s] t=%.6fs  event %llu  speed %gx  %s  %s%s   "
             "(space pause, s step, b back, +/- speed)", sim_model_name(vr->o->model),
             atomic_load(&vr->ctl.vnow_ns) / 1e9,
             (unsigned long long)atomic_load(&vr->ctl.events),
             atomic_load(&vr->ctl.speed_ppb) / 1e9,
             finished ? "FINISHED" : atomic_load(&vr->ctl.paused) ? "PAUSED" : "",
             finished ? "" : "next: ", finished ? "" : last);
}

static bool viz_key(void *arg, int key)
{
    struct viz_run *vr = arg;
    uint64_t speed = atomic_load(&vr->ctl.speed_ppb);
    switch (key) {
    case '?': case 'h':
        vr->show_keys = !vr->show_keys;
        return true;
    case ' ': case 'p':
        atomic_store(&vr->ctl.paused, !atomic_load(&vr->ctl.paused));
        return true;
    case 's': case '.':
        atomic_store(&vr->ctl.paused, true);
        atomic_fetch_add(&vr->ctl.steps, 1);
        return true;
    case 'b': case ',': {
        /* One event back: the same run again, to just before it. */
        uint64_t done = atomic_load(&vr->ctl.events);
        if (done == 0)
            return true;
        atomic_store(&vr->ctl.paused, true);
        atomic_store(&vr->ctl.steps, 0);
        atomic_store(&vr->ctl.replay_to, done - 1);
        atomic_store(&vr->ctl.restart, true);
        return true;
    }
    case '+': case '=':
        if (speed < (uint64_t)1e15)
            atomic_store(&vr->ctl.speed_ppb, speed * 2);
        return true;
    case '-':
        if (speed > 1)
            atomic_store(&vr->ctl.speed_ppb, speed / 2);
        return true;
    default:
        return false;
    }
}

static bool viz_tick(void *arg)
{
    struct viz_run *vr = arg;
    /* Without a terminal (plain snapshots) the run ends the show. */
    return !(atomic_load(&vr->ctl.finished) && !isatty(STDOUT_FILENO));
}

static int run_with_viz(struct sim_opts *o, struct sim_report *r, double speed,
                        const char *record_path, bool big)
{
    struct viz_run vr = { .o = o, .r = r };
    char err[256], model[16], options[192], pid[16];
    sim_viz_ctl_init(&vr.ctl, speed);
    /* The board's model name has 15 characters. */
    snprintf(model, sizeof(model), "sim:%s",
             o->model == SIM_MULTIREACTOR ? "mreactor" : sim_model_name(o->model));
    snprintf(options, sizeof(options), "simulated: %d cores, %u conns, seed %llu",
             o->cores, o->conns, (unsigned long long)o->seed);
    o->viz = simviz_open(&vr.ctl, model, options, err, sizeof(err));
    if (!o->viz) {
        fprintf(stderr, "threadlab sim: --viz: %s\n", err);
        return -1;
    }
    pthread_t t;
    if (pthread_create(&t, NULL, sim_thread, &vr) != 0) {
        simviz_close(o->viz);
        return -1;
    }
    snprintf(pid, sizeof(pid), "%d", (int)getpid());
    char *targets[1] = { pid };
    struct top_opts view = { .targets = targets, .ntargets = 1, .refresh_ms = 200,
                             .tick = viz_tick, .tick_arg = &vr, .status = viz_status,
                             .key = viz_key, .record_path = record_path, .big = big };
    top_run(&view);
    atomic_store(&vr.ctl.quit, true);          /* q before the end: stop the run */
    pthread_join(t, NULL);
    simviz_close(o->viz);
    o->viz = NULL;
    if (vr.rc < 0)
        fprintf(stderr, "threadlab sim: out of memory\n");
    return vr.rc;
}

/* --sweep and what goes only with it. */
static int sweep_or_usage(const struct sim_opts *o, struct sim_sweep *sw, bool sweep,
                          bool all, bool viz, bool json, int model)
{
    if (!sweep) {
        cli_usage_error("sim", "%s goes with --sweep", all ? "all" : "--csv, --plot or "
                        "--overlay");
        return CLI_EXIT_USAGE;
    }
    if (viz) {
        cli_usage_error("sim", "--viz plays one run, not a sweep");
        return CLI_EXIT_USAGE;
    }
    if (sw->overlay && !sw->plot) {
        cli_usage_error("sim", "--overlay goes with --plot");
        return CLI_EXIT_USAGE;
    }
    for (int m = 0; m < SIM_MODEL_COUNT; m++)
        sw->models[m] = all || m == model;
    sw->json = json;
    return sim_sweep_run(o, sw);
}

int cli_sim(int argc, char **argv)
{
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        sim_usage(stdout);
        return CLI_EXIT_OK;
    }
    if (argc >= 2 && strcmp(argv[1], "quiz") == 0)
        return cli_quiz(argc - 1, argv + 1);
    if (argc < 2 || argv[1][0] == '-') {
        cli_usage_error("sim", "name a model: bio, pool, reactor or multireactor");
        return CLI_EXIT_USAGE;
    }
    bool all = strcmp(argv[1], "all") == 0;
    int model = all ? SIM_BIO : sim_model_by_name(argv[1]);
    if (model < 0) {
        cli_usage_error("sim", "no model called '%s' (bio, pool, reactor, multireactor; "
                        "all with --sweep)", argv[1]);
        return CLI_EXIT_USAGE;
    }
    struct sim_opts o;
    sim_opts_init(&o, (enum sim_model)model);
    static struct sim_sweep sw;
    bool sweep = false;
    char sweep_err[256];
    bool json = false, viz = false, engine_stats = false;
    double speed = 0.001;
    bool speed_given = false, big = false, lang_given = false;
    const char *profile_path = NULL, *record_path = NULL;
    double stack_kb = -1;
    long v;
    double d;
    int c;

    opterr = 0;
    optind = 2;
    while ((c = getopt_long(argc, argv, "c:t:r:h", sim_options, NULL)) != -1) {
        const char *flag = argv[optind - 1];
        switch (c) {
        case OPT_CORES:
            if (!cli_parse_long("sim", "--cores", optarg, 1, 4096, &v))
                return CLI_EXIT_USAGE;
            o.cores = (int)v;
            break;
        case OPT_PROFILE:
            profile_path = optarg;
            break;
        case OPT_MAX_THREADS:
            if (!cli_parse_long("sim", "--max-threads", optarg, 0, 100000000, &v))
                return CLI_EXIT_USAGE;
            o.max_threads = (uint32_t)v;
            break;
        case OPT_STACK_KB:
            if (!cli_parse_double("sim", "--stack-kb", optarg, 4, 1 << 20, &d))
                return CLI_EXIT_USAGE;
            stack_kb = d;
            break;
        case OPT_SEED:
            if (!cli_parse_long("sim", "--seed", optarg, 0, LONG_MAX, &v))
                return CLI_EXIT_USAGE;
            o.seed = (uint64_t)v;
            break;
        case 'c':
            if (!cli_parse_long("sim", "--conns", optarg, 1, 50000000, &v))
                return CLI_EXIT_USAGE;
            o.conns = (uint32_t)v;
            break;
        case 't':
            if (!cli_parse_double("sim", "--duration", optarg, 0.000001, 1e6, &d))
                return CLI_EXIT_USAGE;
            o.duration_s = d;
            break;
        case OPT_LINES_PER_CONN:
            if (!cli_parse_long("sim", "--lines-per-conn", optarg, 1, LONG_MAX, &v))
                return CLI_EXIT_USAGE;
            o.lines_per_conn = (uint64_t)v;
            break;
        case 'r':
            if (!cli_parse_double("sim", "--rate", optarg, 0.001, 1e12, &d))
                return CLI_EXIT_USAGE;
            o.rate = d;
            break;
        case OPT_THINK:
            if (!cli_parse_double("sim", "--think-us", optarg, 0, 1e12, &d))
                return CLI_EXIT_USAGE;
            o.think_us = d;
            break;
        case OPT_MIX:
            if (!cli_parse_mix("sim", optarg, &o.cpu_pct, &o.cpu_us, &o.sleep_pct,
                               &o.sleep_ms, &o.task_pct, &o.task_us))
                return CLI_EXIT_USAGE;
            break;
        case OPT_SERVICE:
            if (!cli_parse_double("sim", "--service-exp", optarg, 0, 1e9, &d))
                return CLI_EXIT_USAGE;
            o.service_exp_us = d;
            break;
        case OPT_RAMP:
            if (!cli_parse_double("sim", "--ramp", optarg, 0, 1e6, &d))
                return CLI_EXIT_USAGE;
            o.ramp_s = d;
            break;
        case OPT_RANDOM:
            o.random_connects = true;
            break;
        case OPT_CLIENT_CPU:
            o.client_on_machine = true;
            break;
        case OPT_VIZ:
            viz = true;
            break;
        case OPT_RECORD:
            record_path = optarg;
            break;
        case OPT_SPEED:
            if (!cli_parse_double("sim", "--speed", optarg, 1e-9, 1e6, &d))
                return CLI_EXIT_USAGE;
            speed = d;
            speed_given = true;
            break;
        case OPT_BIG:
            big = true;
            break;
        case OPT_LANG:
            if (!cli_parse_lang("sim", optarg))
                return CLI_EXIT_USAGE;
            lang_given = true;
            break;
        case OPT_MIN: case OPT_MAX: case OPT_QUEUE: case OPT_WORKERS:
        case OPT_OFFLOAD: case OPT_BACKLOG:
            if (!cli_parse_long("sim", flag, optarg, 0, 100000000, &v))
                return CLI_EXIT_USAGE;
            if (c == OPT_MIN) o.pool_min = (int)v;
            if (c == OPT_MAX) o.pool_max = (int)v, sw.pool_max_given = true;
            if (c == OPT_QUEUE) o.pool_queue = (int)v;
            if (c == OPT_WORKERS) o.workers = (int)v;
            if (c == OPT_OFFLOAD) o.offload = (int)v;
            if (c == OPT_BACKLOG) o.backlog = (uint32_t)v;
            break;
        case OPT_JSON:
            json = true;
            break;
        case OPT_ENGINE_STATS:
            engine_stats = true;
            break;
        case OPT_IO_RATIO:
            if (!cli_parse_long("sim", "--io-ratio", optarg, 1, 100, &v))
                return CLI_EXIT_USAGE;
            o.io_ratio = (int)v;
            break;
        case OPT_SWEEP:
            if (sweep_parse(optarg, 50000000, &sw.spec, sweep_err, sizeof(sweep_err)) < 0) {
                cli_usage_error("sim", "%s", sweep_err);
                return CLI_EXIT_USAGE;
            }
            sweep = true;
            break;
        case OPT_CSV:
            sw.csv = optarg;
            break;
        case OPT_PLOT:
            if (!sweep_plot_path_ok(optarg)) {
                cli_usage_error("sim", "--plot: '%s' must end in .png or .svg, without "
                                "quotes", optarg);
                return CLI_EXIT_USAGE;
            }
            sw.plot = optarg;
            break;
        case OPT_OVERLAY:
            sw.overlay = optarg;
            break;
        case 'h':
            sim_usage(stdout);
            return CLI_EXIT_OK;
        default:
            cli_usage_error("sim", optopt ? "option '%s' needs a value"
                                          : "unknown option '%s'", flag);
            return CLI_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        cli_usage_error("sim", "unexpected argument '%s'", argv[optind]);
        return CLI_EXIT_USAGE;
    }
    char err[512];
    if (profile_path && strcmp(profile_path, "zero") == 0) {
        profile_zero(&o.prof);
    } else if (profile_path && profile_load(&o.prof, profile_path, err, sizeof(err)) < 0) {
        fprintf(stderr, "threadlab sim: %s\n", err);
        return CLI_EXIT_USAGE;
    }
    if (stack_kb > 0)
        o.prof.stack_kb = stack_kb;
    if (o.lines_per_conn > 0 && o.duration_s == 10)
        o.duration_s = 0;            /* lines given, duration not: no time limit */
    if (sweep || all || sw.csv || sw.plot || sw.overlay)
        return sweep_or_usage(&o, &sw, sweep, all, viz, json, model);
    if (sim_opts_check(&o, err, sizeof(err)) < 0) {
        cli_usage_error("sim", "%s", err);
        return CLI_EXIT_USAGE;
    }
    struct sim_report *r = malloc(sizeof(*r));
    if (!r) {
        fprintf(stderr, "threadlab sim: out of memory\n");
        return CLI_EXIT_FAILED;
    }
    const char *needs_viz = record_path ? "--record" : speed_given ? "--speed"
                          : big ? "--big" : lang_given ? "--lang" : NULL;
    if (needs_viz && !viz) {
        cli_usage_error("sim", "%s goes with --viz", needs_viz);
        free(r);
        return CLI_EXIT_USAGE;
    }
    int rc = viz ? run_with_viz(&o, r, speed, record_path, big) : sim_run(&o, r);
    if (rc < 0) {
        free(r);
        return CLI_EXIT_FAILED;
    }
    if (json)
        sim_report_json(&o, r, stdout);
    else
        sim_report_print(&o, r, stdout);
    if (engine_stats) {
        fflush(stdout);              /* the report first, then the engine */
        sim_report_engine(r, stderr);
    }
    free(r);
    return CLI_EXIT_OK;
}
