/* fleet.h -- servers and load generators as child processes, for
 * `threadlab demo` and `threadlab compare`.
 *
 * Each model runs as `threadlab serve MODEL --port 0` in a process of its
 * own (so a crash, a blocked loop or 2000 threads stay in it), and each
 * load as `threadlab load ... --json`. The fleet remembers every child and
 * every file it made; fleet_stop_all ends the children (gracefully, then
 * by force) and removes the files, the children's boards included, so
 * nothing is left behind, also when a child crashed. Children get SIGTERM
 * if the parent dies (PR_SET_PDEATHSIG), and live in their own process
 * group, so a Ctrl-C at the terminal reaches the parent only and the
 * parent stops them in order.
 */
#ifndef THREADLAB_FLEET_H
#define THREADLAB_FLEET_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define FLEET_MAX 5                 /* servers (and loads) at once: every model */
#define FLEET_STOP_TIMEOUT_MS 12000 /* a server's stop deadline (10 s) + slack */

/* What /proc says about a process while it runs (peaks kept by
 * fleet_sample); once it is reaped, CPU time, context switches and peak
 * RSS are the kernel's totals from wait4 (all threads, exited ones too). */
struct proc_usage {
    int threads;                    /* now */
    long rss_kb;                    /* now */
    int peak_threads;               /* the most seen by a sample */
    long peak_rss_kb;               /* VmHWM, then ru_maxrss */
    double cpu_s;                   /* user + system */
    uint64_t voluntary_cs, involuntary_cs;  /* main thread while running */
};

struct fleet_server {
    char model[16];
    pid_t pid;                      /* 0 when not running */
    uint16_t port;
    char log[200];                  /* its stdout and stderr */
    int exit_status;                /* once reaped: as waitpid says */
    bool reaped;
    bool term_sent;                 /* SIGTERM sent (a second one would
                                       make it exit at once) */
    bool kill_sent;                 /* SIGKILL sent: the stop timed out */
    char last_words[256];           /* its log's last line, if it failed */
    struct proc_usage usage;        /* the last sample */
    pid_t load_pid;                 /* its load generator, or 0 */
    char load_out[200];             /* the load's JSON report */
    int load_status;
    bool load_reaped;
};

struct fleet {
    char dir[128];                  /* our temporary directory */
    char self[512];                 /* this threadlab binary */
    char board_dir[200];            /* where the servers publish */
    struct fleet_server servers[FLEET_MAX];
    int n;
};

/* Make the temporary directory and find our own binary. Returns 0 or
 * -errno (message in err). */
int fleet_init(struct fleet *f, char *err, size_t err_len);

/* Start `threadlab serve MODEL --port 0 ... ARGS` and wait (up to 5 s) for
 * its port. args is a NULL-terminated list (may be NULL). Returns the
 * index, or -1 with a message (including the end of the server's log). */
int fleet_start_server(struct fleet *f, const char *model, const char *const *args,
                       char *err, size_t err_len);

/* Start `threadlab load 127.0.0.1:PORT --json --no-progress ARGS` against
 * server i, its report going to servers[i].load_out. Returns 0 or -1. */
int fleet_start_load(struct fleet *f, int i, const char *const *args,
                     char *err, size_t err_len);

/* Reap children that ended, without waiting. */
void fleet_poll(struct fleet *f);

/* True while any load generator still runs. */
bool fleet_loads_running(struct fleet *f);

/* Read /proc for server i (threads, RSS, CPU, context switches) and keep
 * the peaks. Returns false once the process is gone. */
bool fleet_sample(struct fleet *f, int i);

/* Ask the loads still running to stop (SIGINT: they report what they
 * did) and wait for them, up to timeout_ms; then kill what is left. */
void fleet_stop_loads(struct fleet *f, int timeout_ms);

/* Stop server i: SIGTERM, wait up to FLEET_STOP_TIMEOUT_MS, then
 * SIGKILL; remove its board if it left one. */
void fleet_stop_server(struct fleet *f, int i);

/* Stop every load, then every server (side by side). Reports and logs
 * stay for reading. Safe to call twice. */
void fleet_stop_all(struct fleet *f);

/* Stop everything, then remove every file: reports, logs, boards, the
 * temporary directory. Safe to call twice. */
void fleet_cleanup(struct fleet *f);

/* How server s ended, for the table: "ok", "exit N", "crashed: SIGSEGV"
 * (killed by a signal we did not send), "stop timed out: SIGKILL" (the
 * fleet's own kill, FLEET_STOP_TIMEOUT_MS after its SIGTERM), or
 * "running" before it is reaped. */
const char *fleet_server_fate(const struct fleet_server *s, char *buf, size_t len);

/* If server s did not end "ok", say so on stderr, with its fate and the
 * last line of its log: "threadlab COMMAND: the reactor server crashed:
 * SIGSEGV; its last words: ...". Returns true if it did not (the command
 * then exits 1). After fleet_stop_server. */
bool fleet_report_failure(const struct fleet_server *s, const char *command);

/* Read /proc/PID for one process into u (peaks updated). */
bool proc_usage_read(pid_t pid, struct proc_usage *u);

#endif
