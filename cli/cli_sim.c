/* cli_sim.c -- `threadlab sim MODEL`: a model on a simulated machine;
 * with --sweep, many runs as curves (cli_sim_sweep.c). */
#include <limits.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_sim_help.h"
#include "cli_sim_memory.h"
#include "cli_sim_sweep.h"
#include "sim/sim.h"
#include "sim/simviz.h"
#include "net/clock.h"
#include "probe/board.h"
#include "viz/msg.h"
#include "viz/pane.h"
#include "viz/reason.h"
#include "viz/record.h"
#include "viz/top.h"

/* Long function: the --help text, printed in one piece so it reads as the
 * user sees it (in Chinese: cli_sim_usage_zh). */
static void sim_usage(FILE *out)
{
    if (msg_lang() == LANG_ZH) {
        cli_sim_usage_zh(out, SWEEP_SLEEP_MS, SIM_SWEEP_THREAD_RESIDENT_KB, SIM_SWEEP_POOL_MAX);
        return;
    }
    fprintf(out,
            "usage: threadlab sim MODEL [options]\n"
            "       threadlab sim MODEL|all --sweep VAR=LIST [options]   (curves)\n"
            "       threadlab sim quiz --seed N [--answers]   (lab 08)\n"
            "\n"
            "Run a model (bio, pool, reactor, multireactor, vthread) on a simulated\n"
            "machine of any size: threads, cores, a scheduler, syscall and wakeup\n"
            "costs from a profile. Deterministic: the same options and seed give the\n"
            "same report.\n"
            "Reports what threadlab load reports, plus CPU, context switches, threads\n"
            "and memory; rates and CPU over the sending window (--duration), the drain\n"
            "after it on its own; each line's wait until it first gets a core, and\n"
            "Little's law (L = lambda x W). See docs/simulator.md for the cost model\n"
            "and its limits.\n"
            "\n"
            "A run that would not end, or would count more than 4294967295 lines on\n"
            "one connection, is refused (exit 2), and so is one whose start needs more\n"
            "memory than this process may take (ulimit -v, ulimit -d, the machine's\n"
            "available memory); one that runs out later says so (exit 1). Open loop\n"
            "sends each line when due, to the nanosecond, and times it from then.\n"
            "\n"
            "the machine:\n"
            "  --cores N          cores (default 2)\n"
            "  --sched NAME       the scheduler: linux (default: EEVDF, SIS_UTIL,\n"
            "                     PELT and the load balancer, as calibrated; make\n"
            "                     bench-sim finds it the closer to real runs) or\n"
            "                     simple (FIFO run queue per core, time slices,\n"
            "                     wake on an idle core, else the shortest queue)\n"
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
            "  -t, --duration S   seconds of sending, simulated (default 10; with\n"
            "                     --lines-per-conn and not given: no time limit)\n"
            "  --lines-per-conn N each connection sends N lines (at most 4294967295),\n"
            "                     then closes\n"
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
            "  --min N, --max N, --queue N   the pool (default 4, 16, 1024; --min up\n"
            "                     to 100000 and --max-threads, --max up to 50000000)\n"
            "  --workers N        multireactor worker loops, 1 to 4096 (default 2 x\n"
            "                     cores)\n"
            "  --offload N        a business pool of N threads for !cpu/!sleep lines\n"
            "                     (up to 100000)\n"
            "  --io-ratio PCT     loops: tasks get io_time x (100 - PCT) / PCT while\n"
            "                     channels are ready (default 50; 100: all tasks)\n"
            "  --backlog N        accept queue; beyond it connections are refused\n"
            "                     (default 0: unbounded)\n"
            "  --carriers N       vthread: carrier threads, 1 to 4096 (default: the\n"
            "                     cores)\n"
            "  --handoff-ms N     vthread: a carrier given up by a blocking call (!sleep)\n"
            "                     this long gets a spare thread (default 20)\n"
            "  --pin              vthread: no handoff; a blocking call holds its carrier\n"
            "  --stack SIZE       vthread: each virtual thread's stack, reserved (default\n"
            "                     64K; 16K to 1024M); resident are the pages it touches,\n"
            "                     the profile's vt_stack_touched_kb\n"
            "\n"
            "  --viz              play the run in the visualizer: the simulated threads,\n"
            "                     loops and events on a board, as threadlab top shows a\n"
            "                     real server, in simulated time; keys: space pause,\n"
            "                     s one event on, e on to the next event of the kind\n"
            "                     that happened last (accept, assign, reply, block...),\n"
            "                     b one event back (exact: the run is made again from\n"
            "                     the seed, so no history is kept and any number of\n"
            "                     presses goes back that many events), + / - speed,\n"
            "                     ? these keys on the status line, q quit (then the\n"
            "                     report)\n"
            "  --start-paused     with --viz: paused before the first event\n"
            "  --record FILE      with --viz: also record the screen for threadlab replay\n"
            "  --speed X          with --viz: simulated seconds per real second\n"
            "                     (default 0.001: a millisecond takes a second);\n"
            "                     without --viz it is refused (a run without a screen\n"
            "                     goes as fast as it can)\n"
            "  --big              with --viz: projector mode, as top's --big\n"
            "  --lang en|zh       with --viz: the screen in English or Chinese, as\n"
            "                     top's --lang\n"
            "  --waits            also report how long threads waited for a core once\n"
            "                     runnable and ran once on one (p50-p99.9), and how\n"
            "                     often a turn ended blocked or preempted, a line: the\n"
            "                     server's threads and (--client-cpu) the load\n"
            "                     generator apart, as bench/switches.sh reads them\n"
            "                     from perf sched for a real run\n"
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

/* ---- --viz: the run on a board, the screen in this thread ------------------ */

/* --viz and what goes with it. */
struct viz_opts {
    double speed;                /* simulated seconds per real second */
    const char *record_path;     /* --record: one frame per event shown */
    bool big;
    bool start_paused;           /* paused before the first event */
};

struct viz_run {
    const struct sim_opts *o;
    struct sim_report *r;
    struct sim_viz_ctl ctl;
    int rc;
    bool show_keys;              /* '?': the status line lists the sim's keys */
    /* --record, written by the simulation's thread only: */
    struct recorder *rec;
    struct pane pane;            /* the board, read back for each frame */
    uint64_t rec_start_ns;
    int rec_failed;              /* the -errno that ended the recording, or 0 */
};

static void status_line(struct viz_run *vr, enum msg_lang lang, char *buf, size_t len,
                        bool keys);

/* --record: every event shown is one frame, with the status line (its
 * "next:") as the frame's caption, so that replay steps the events as this
 * screen does. The screen's refreshes are not recorded: several events
 * may pass in one. Simulation thread. */
static void record_event_cb(void *arg, uint64_t events, const char *desc)
{
    struct viz_run *vr = arg;
    (void)events;
    (void)desc;
    if (!vr->rec || vr->rec_failed)
        return;
    pane_refresh(&vr->pane);
    char caption[LANG_COUNT][RECORD_CAPTION_MAX / 2];   /* a recording keeps both */
    for (int lang = 0; lang < LANG_COUNT; lang++)
        status_line(vr, (enum msg_lang)lang, caption[lang], sizeof(caption[lang]), false);
    recorder_caption(vr->rec, caption[LANG_EN], caption[LANG_ZH]);
    vr->rec_failed = recorder_frame(vr->rec, now_ns() - vr->rec_start_ns,
                                    &vr->pane, 1);
}

/* Runs the simulation, and again from the seed for every step back (it
 * is deterministic: the run up to event N is the same every time). After
 * the end it waits, so that a step back is still possible. */
static void *sim_thread(void *arg)
{
    struct viz_run *vr = arg;
    for (;;) {
        vr->rc = sim_run(vr->o, vr->r);
        if (atomic_load(&vr->ctl.finished))
            record_event_cb(vr, 0, "");          /* the last frame: FINISHED */
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

/* The kind of event `e` steps to, as the screen names it: in English the
 * simulator's own word, in Chinese the event log's (分配, 接受 ...). */
static const char *kind_word(enum viz_kind k)
{
    static const enum msg_id ids[VIZ_KIND_COUNT] = {
        [VIZ_KIND_NONE] = M_S_KIND_ANY, [VIZ_KIND_ACCEPT] = M_EV_ACCEPT,
        [VIZ_KIND_ASSIGN] = M_EV_ASSIGN, [VIZ_KIND_SPAWN] = M_EV_SPAWN,
        [VIZ_KIND_EXIT] = M_EV_EXIT, [VIZ_KIND_REJECT] = M_EV_REJECT,
        [VIZ_KIND_BLOCK] = M_EV_BLOCKED, [VIZ_KIND_CLOSE] = M_EV_CLOSE,
        [VIZ_KIND_QUEUED] = M_EV_QUEUED, [VIZ_KIND_REPLY] = M_S_KIND_REPLY,
    };
    if (msg_lang() == LANG_EN || (unsigned)k >= VIZ_KIND_COUNT)
        return viz_kind_name(k);
    return msg(ids[k]);
}

/* The status line: where the run is and what comes next, in lang (the
 * event's reason too). With keys, the short list of keys follows (the
 * recording leaves it out; it holds the line in both languages). */
static void status_line(struct viz_run *vr, enum msg_lang lang, char *buf, size_t len,
                        bool keys)
{
    char last[160], next[200], keys_text[160] = "";
    pthread_mutex_lock(&vr->ctl.lock);
    snprintf(last, sizeof(last), "%s", vr->ctl.last);
    pthread_mutex_unlock(&vr->ctl.lock);
    bool finished = atomic_load(&vr->ctl.finished);
    if (finished)
        snprintf(next, sizeof(next), "%s", msg_in(lang, M_S_FINISHED));
    else {
        char said[160];
        reason_translate(lang, last, said, sizeof(said));
        snprintf(next, sizeof(next), "%s%s%s",
                 atomic_load(&vr->ctl.paused) ? msg_in(lang, M_S_PAUSED) : "",
                 msg_in(lang, M_S_NEXT), said);
    }
    if (keys)
        snprintf(keys_text, sizeof(keys_text), msg_in(lang, M_S_KEYS_SHORT),
                 kind_word(atomic_load(&vr->ctl.last_kind)));
    size_t used = (size_t)snprintf(buf, len, msg_in(lang, M_S_STATUS),
                                   sim_model_name(vr->o->model),
                                   atomic_load(&vr->ctl.vnow_ns) / 1e9,
                                   (unsigned long long)atomic_load(&vr->ctl.events),
                                   atomic_load(&vr->ctl.speed_ppb) / 1e9);
    if (used < len)
        snprintf(buf + used, len - used, "%s%s", next, keys_text);
}

static void viz_status(void *arg, char *buf, size_t len)
{
    struct viz_run *vr = arg;
    if (vr->show_keys) {         /* top's help knows nothing of these */
        snprintf(buf, len, msg(M_S_KEYS_LONG), sim_model_name(vr->o->model),
                 kind_word(atomic_load(&vr->ctl.last_kind)));
        return;
    }
    status_line(vr, msg_lang(), buf, len, true);
}

/* b: one event back, by running the same run again to just before it. A
 * press while the last one is still being made goes back from where that
 * one goes, so 200 presses in a burst go back 200 events. */
static void step_back(struct sim_viz_ctl *c)
{
    int64_t pending = atomic_load(&c->replay_to);
    uint64_t from = pending >= 0 ? (uint64_t)pending : atomic_load(&c->events);
    if (from == 0)
        return;
    atomic_store(&c->paused, true);
    atomic_store(&c->steps, 0);
    atomic_store(&c->until, 0);
    atomic_store(&c->replay_to, (int64_t)from - 1);
    atomic_store(&c->restart, true);
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
    case 'e':
        sim_viz_step_to_kind(&vr->ctl);
        return true;
    case 'b': case ',':
        step_back(&vr->ctl);
        return true;
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

/* --record: open the file before the run (a bad path fails first) and
 * read the run's board back for each frame. */
static int open_event_recording(struct viz_run *vr, const char *path)
{
    char err[300];
    vr->rec = recorder_open(path, err, sizeof(err));
    if (!vr->rec) {
        fprintf(stderr, "threadlab sim: --record: %s\n", err);
        return -1;
    }
    if (pane_attach(&vr->pane, simviz_board_path(vr->o->viz), (int)getpid()) < 0) {
        fprintf(stderr, "threadlab sim: --record: out of memory\n");
        recorder_close(vr->rec);
        vr->rec = NULL;
        return -1;
    }
    vr->rec_start_ns = now_ns();
    vr->ctl.shown = record_event_cb;
    vr->ctl.shown_arg = vr;
    return 0;
}

/* Returns false if the recording is not whole (sim exits 1). */
static bool close_event_recording(struct viz_run *vr, const char *path)
{
    if (!vr->rec)
        return true;
    pane_detach(&vr->pane);
    bool whole = recorder_finish(vr->rec, path, "threadlab sim", "event");
    vr->rec = NULL;
    return whole;
}

/* sim_run failed: it ran out of memory, as far into the run as r says. */
static void say_out_of_memory(const struct sim_report *r)
{
    const char *what;
    cli_memory_left(&what);
    fprintf(stderr, "threadlab sim: out of memory after %llu events (%.6f s simulated): "
            "the run grew past what this process may take (%s)\n",
            (unsigned long long)r->events, r->virtual_s, what);
}

/* 0; 1 when the run ended well but could not be shown or its recording
 * is not whole (said so); or -1 when memory ran out. */
static int run_with_viz(struct sim_opts *o, struct sim_report *r, const struct viz_opts *vo)
{
    struct viz_run vr = { .o = o, .r = r };
    char err[256], model[16], options[192], pid[16];
    sim_viz_ctl_init(&vr.ctl, vo->speed);
    atomic_store(&vr.ctl.paused, vo->start_paused);
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
    if (vo->record_path && open_event_recording(&vr, vo->record_path) < 0) {
        simviz_close(o->viz);
        o->viz = NULL;
        return -1;
    }
    pthread_t t;
    if (pthread_create(&t, NULL, sim_thread, &vr) != 0) {
        close_event_recording(&vr, vo->record_path);
        simviz_close(o->viz);
        return -1;
    }
    snprintf(pid, sizeof(pid), "%d", (int)getpid());
    char *targets[1] = { pid };
    struct top_opts view = { .targets = targets, .ntargets = 1, .refresh_ms = 200,
                             .tick = viz_tick, .tick_arg = &vr, .status = viz_status,
                             .key = viz_key, .big = vo->big };
    bool shown = top_run(&view) == 0;          /* else it said why */
    atomic_store(&vr.ctl.quit, true);          /* q before the end: stop the run */
    pthread_join(t, NULL);
    bool recorded = close_event_recording(&vr, vo->record_path);
    simviz_close(o->viz);
    o->viz = NULL;
    if (vr.rc < 0)
        say_out_of_memory(r);
    return vr.rc < 0 ? vr.rc : recorded && shown ? 0 : 1;
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

/* What the options set beside sim_opts and sim_sweep. */
struct sim_args {
    bool json, viz, big, engine_stats, start_paused, lang_given;
    double speed;                  /* --speed */
    bool speed_given;
    double stack_kb;               /* --stack-kb */
    bool stack_kb_given;           /* ... or the profile's */
    size_t vt_stack_bytes;         /* --stack: a virtual thread's */
    bool vt_stack_given;
    bool duration_given;           /* --duration: with --lines-per-conn and
                                      without it, no time limit */
    const char *profile_path, *record_path;
};

/* --sched linux|simple (CLI_OPT_CALL). */
static bool parse_sched(const char *cmd, const char *arg, void *sched)
{
    const struct sched_ops *found = sim_sched_by_name(arg);
    if (!found) {
        cli_usage_error(cmd, "--sched: '%s' is not linux or simple", arg);
        return false;
    }
    *(const struct sched_ops **)sched = found;
    return true;
}

/* --mix, with task= (CLI_OPT_CALL). */
static bool parse_mix(const char *cmd, const char *arg, void *sim_opts)
{
    struct sim_opts *o = sim_opts;
    return cli_parse_mix(cmd, arg, &o->cpu_pct, &o->cpu_us, &o->sleep_pct, &o->sleep_ms,
                         &o->task_pct, &o->task_us);
}

static bool parse_sweep(const char *cmd, const char *arg, void *spec)
{
    char err[256];
    if (sweep_parse(arg, 50000000, spec, err, sizeof(err)) < 0) {
        cli_usage_error(cmd, "%s", err);
        return false;
    }
    return true;
}

/* argv[0] is the model. Returns CLI_PARSED, or the exit status. */
static int parse_args(int argc, char **argv, struct sim_opts *o, struct sim_sweep *sw,
                      struct sim_args *a)
{
    *a = (struct sim_args){ .speed = 0.001 };     /* a simulated millisecond a second */
    const struct cli_opt options[] = {
        { CLI_INT("cores", &o->cores, 1, 4096) },
        { CLI_CALL("sched", parse_sched, &o->sched) },
        { CLI_TEXT("profile", &a->profile_path) },
        { CLI_INT("max-threads", &o->max_threads, 0, 100000000) },
        { CLI_REAL("stack-kb", &a->stack_kb, 4, 1 << 20), .given = &a->stack_kb_given },
        { CLI_INT("seed", &o->seed, 0, LONG_MAX) },
        { CLI_INT("conns", &o->conns, 1, 50000000), .short_name = 'c' },
        { CLI_REAL("duration", &o->duration_s, 0.000001, 1e6), .short_name = 't',
          .given = &a->duration_given },
        { CLI_INT("lines-per-conn", &o->lines_per_conn, 1, SIM_LINES_PER_CONN_MAX) },
        { CLI_REAL("rate", &o->rate, 0.001, 1e12), .short_name = 'r' },
        { CLI_REAL("think-us", &o->think_us, 0, 1e12) },
        { CLI_CALL("mix", parse_mix, o) },
        { CLI_REAL("service-exp", &o->service_exp_us, 0, 1e9) },
        { CLI_REAL("ramp", &o->ramp_s, 0, 1e6) },
        { CLI_FLAG("random-connects", &o->random_connects) },
        { CLI_FLAG("client-cpu", &o->client_on_machine) },
        { CLI_FLAG("viz", &a->viz) },
        { CLI_REAL("speed", &a->speed, 1e-9, 1e6), .given = &a->speed_given },
        { CLI_FLAG("big", &a->big) },
        { CLI_TEXT("record", &a->record_path) },
        { CLI_FLAG("start-paused", &a->start_paused) },
        { CLI_CALL("lang", cli_parse_lang, &a->lang_given) },
        { CLI_INT("min", &o->pool_min, 0, SIM_POOL_MIN_MAX) },
        { CLI_INT("max", &o->pool_max, 1, SIM_POOL_MAX), .given = &sw->pool_max_given },
        { CLI_INT("queue", &o->pool_queue, 0, 100000000) },
        { CLI_INT("workers", &o->workers, 1, SIM_WORKERS_MAX) },
        { CLI_INT("offload", &o->offload, 0, SIM_OFFLOAD_MAX) },
        { CLI_INT("backlog", &o->backlog, 0, 100000000) },
        { CLI_FLAG("json", &a->json) },
        { CLI_FLAG("engine-stats", &a->engine_stats) },
        { CLI_FLAG("waits", &o->waits) },
        { CLI_INT("io-ratio", &o->io_ratio, 1, 100) },
        { CLI_INT("carriers", &o->carriers, 1, SIM_CARRIERS_MAX) },
        { CLI_FLAG("pin", &o->pin) },
        { CLI_INT("handoff-ms", &o->handoff_ms, 1, 3600000) },
        { CLI_CALL("stack", cli_parse_stack, &a->vt_stack_bytes), .given = &a->vt_stack_given },
        { CLI_CALL("sweep", parse_sweep, &sw->spec) },
        { CLI_TEXT("csv", &sw->csv) },
        { CLI_CALL("plot", cli_parse_plot_path, &sw->plot) },
        { CLI_TEXT("overlay", &sw->overlay) },
        { 0 },
    };
    return cli_parse_options("sim", argc, argv, options, sim_usage, 0, NULL);
}

/* One run, not a sweep: on the screen with --viz, then its report. */
static int run_once(struct sim_opts *o, const struct sim_args *a)
{
    const char *needs_viz = a->record_path ? "--record" : a->speed_given ? "--speed"
                          : a->big ? "--big" : a->start_paused ? "--start-paused"
                          : a->lang_given ? "--lang" : NULL;
    if (needs_viz && !a->viz) {
        cli_usage_error("sim", "%s goes with --viz", needs_viz);
        return CLI_EXIT_USAGE;
    }
    struct sim_report *r = malloc(sizeof(*r));
    if (!r) {
        fprintf(stderr, "threadlab sim: out of memory\n");
        return CLI_EXIT_FAILED;
    }
    struct viz_opts vo = { .speed = a->speed, .record_path = a->record_path, .big = a->big,
                           .start_paused = a->start_paused };
    int rc = a->viz ? run_with_viz(o, r, &vo) : sim_run(o, r);
    if (rc < 0 && !a->viz)
        say_out_of_memory(r);
    /* rc 1: the run ended well, its recording did not (said already) */
    if (rc >= 0 && a->json)
        sim_report_json(o, r, stdout);
    else if (rc >= 0)
        sim_report_print(o, r, stdout);
    if (rc >= 0 && a->engine_stats) {
        fflush(stdout);              /* the report first, then the engine */
        sim_report_engine(r, stderr);
    }
    free(r);
    return rc == 0 ? CLI_EXIT_OK : CLI_EXIT_FAILED;
}

int cli_sim(int argc, char **argv)
{
    /* No model named, and --help asked (in --lang's language, main.c). */
    if (argc >= 2 && argv[1][0] == '-' && cli_help_asked(argc, argv)) {
        sim_usage(stdout);
        return CLI_EXIT_OK;
    }
    if (argc >= 2 && strcmp(argv[1], "quiz") == 0)
        return cli_quiz(argc - 1, argv + 1);
    if (argc < 2 || argv[1][0] == '-') {
        cli_usage_error("sim", "name a model: bio, pool, reactor, multireactor or vthread");
        return CLI_EXIT_USAGE;
    }
    bool all = strcmp(argv[1], "all") == 0;
    int model = all ? SIM_BIO : sim_model_by_name(argv[1]);
    if (model < 0) {
        cli_usage_error("sim", "no model called '%s' (bio, pool, reactor, multireactor, "
                        "vthread; all with --sweep)", argv[1]);
        return CLI_EXIT_USAGE;
    }
    struct sim_opts o;
    sim_opts_init(&o, (enum sim_model)model);
    static struct sim_sweep sw;
    struct sim_args a;
    int rc = parse_args(argc - 1, argv + 1, &o, &sw, &a);
    if (rc != CLI_PARSED)
        return rc;
    bool sweep = sw.spec.nvalues > 0;          /* --sweep parsed a LIST */
    char err[512];
    if (a.profile_path && strcmp(a.profile_path, "zero") == 0) {
        profile_zero(&o.prof);
    } else if (a.profile_path && profile_load(&o.prof, a.profile_path, err, sizeof(err)) < 0) {
        fprintf(stderr, "threadlab sim: %s\n", err);
        return CLI_EXIT_USAGE;
    }
    if (a.stack_kb_given)
        o.prof.stack_kb = a.stack_kb;
    if (a.vt_stack_given)
        o.vt_stack_kb = (double)a.vt_stack_bytes / 1024;
    if (o.lines_per_conn > 0 && !a.duration_given)
        o.duration_s = 0;            /* lines given, duration not: no time limit */
    if (sweep || all || sw.csv || sw.plot || sw.overlay)
        return sweep_or_usage(&o, &sw, sweep, all, a.viz, a.json, model);
    if (sim_opts_check(&o, err, sizeof(err)) < 0) {
        cli_usage_error("sim", "%s", err);
        return CLI_EXIT_USAGE;
    }
    if (!cli_sim_fits(&o, err, sizeof(err))) {
        fprintf(stderr, "threadlab sim: %s\n", err);
        return CLI_EXIT_USAGE;
    }
    return run_once(&o, &a);
}
