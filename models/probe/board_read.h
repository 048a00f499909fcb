/* board_read.h -- the reader's side of the live state board.
 *
 * A board entry is a symlink <pid>.board -> /proc/<pid>/fd/<n>, the
 * server's sealed memfd (a plain file is read too: a copy kept for later).
 * A reader checks that the link leads to a board memfd of that pid, never
 * maps it, copies it with pread and checks every field of the copy (magic,
 * version, sizes, offsets, every enum and index) before using it. Another
 * process may have scribbled on the board: a bad copy is an error message,
 * never a crash.
 */
#ifndef THREADLAB_BOARD_READ_H
#define THREADLAB_BOARD_READ_H

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>

#include "board.h"

#define BOARD_MAX_FILE_BYTES (16u << 20) /* bigger files are refused */
#define BOARD_LIST_MAX 64

struct board_thread_snap {
    enum board_role role;
    enum board_state state;
    char name[BOARD_NAME_BYTES];
    uint32_t tid;                 /* kernel thread id, 0 for none; another
                                     process wrote it: a hint, never trusted */
    uint64_t since_ns, conn, lines, busy_ns, idle_ns, bytes_in, bytes_out;
};

struct board_loop_snap {
    char name[BOARD_NAME_BYTES];
    uint32_t phase;               /* 0 starting, 1 waiting, 2 io, 3 tasks, 4 stopped */
    uint64_t channels, task_queue_depth, timers, io_ns, task_ns, iterations,
             longest_task_ns, blocked_since_ns;
    uint64_t task_idle_ns;        /* part of task_ns when I/O had nothing to do */
    uint64_t out_pending_bytes;   /* backpressure: replies not yet written */
    uint64_t channels_paused;     /* channels not reading (above high water) */
    uint64_t tasks_starving_io;   /* see struct board_loop */
};

struct board_queue_snap {
    char name[BOARD_NAME_BYTES];
    uint64_t depth, capacity, high_water, rejected;
};

struct board_event_snap {
    uint64_t seq;                 /* 1, 2, ...: gaps mean events were missed */
    uint64_t time_ns;             /* monotonic */
    enum board_event_kind kind;
    char text[BOARD_TEXT_BYTES];
};

/* Everything a board said at one moment, validated. Large: allocate it. */
struct board_snapshot {
    int pid;
    char model[BOARD_MODEL_BYTES];
    char options[BOARD_OPTIONS_BYTES];
    uint64_t start_unix_ns, start_mono_ns;
    uint64_t taken_mono_ns;       /* when the reader copied it (a simulated
                                     board: start_mono_ns + the run's time) */
    bool simulated;               /* a simulator writes it (sim --viz) */
    uint64_t sim_now_ns;          /* simulated: the run's time */
    bool closing;                 /* the server began to stop */
    uint64_t counters[CTR_COUNT];
    uint64_t hist[HIST_BUCKETS];  /* handling-time counts per bucket */
    uint64_t hist_max;
    uint64_t threads_by_state[STATE_COUNT]; /* every thread, slot or not */
    uint64_t threads_unslotted;   /* threads counted but not in threads[] */
    int nthreads;                 /* slots in use, terminated ones included */
    struct board_thread_snap threads[BOARD_THREAD_SLOTS];
    int nloops;
    struct board_loop_snap loops[BOARD_LOOP_SLOTS];
    int nqueues;
    struct board_queue_snap queues[BOARD_QUEUE_SLOTS];
    uint64_t event_head;          /* events written in all */
    int nevents;                  /* oldest first */
    struct board_event_snap events[BOARD_EVENT_SLOTS];
};

/* A board found in the directory. */
struct board_entry {
    int pid;
    bool alive;                   /* its process exists */
    char path[256];
};

/* Read and validate the board at path (a board link or a plain file).
 * Returns 0, or -ENOENT (gone: no entry, or its server's board is closed),
 * -EACCES (not ours), -EINVAL (corrupt, or a link that leads elsewhere: err
 * says what), -EPROTO (another layout version), -errno for I/O errors. err
 * (err_len bytes) gets a sentence for a person in every error case. Any
 * thread (it reads a private copy; the mapping is never trusted). */
int board_read(const char *path, struct board_snapshot *s, char *err,
               size_t err_len);

/* Validate a copy of a board file (the core of board_read; tests feed it
 * corrupted bytes directly). Pure, any thread. */
int board_parse(const void *bytes, size_t len, struct board_snapshot *s,
                char *err, size_t err_len);

/* List the boards in the board directory, newest pid last. A board is
 * stale when its process no longer exists or, for a link, no longer holds a
 * board memfd at that fd (a reused pid). With clean_stale, stale entries
 * are removed (the entry only: a link is never followed) and not listed.
 * Returns how many were stored (at most max), or -errno. Any thread. */
int board_list(struct board_entry *out, int max, bool clean_stale);

/* One line of JSON for scripts (`threadlab top --json`, the soak): pid,
 * model, closing, every counter by name, live threads by state, and the
 * handling-time handle_p50_us/handle_p99_us/handle_max_us since the server
 * started (before issue 17: p50_us, p99_us, max_us). Any thread. */
void board_snapshot_json(const struct board_snapshot *s, FILE *out);

/* Names for display (static strings). Pure, any thread. */
const char *board_role_name(enum board_role r);
const char *board_state_name(enum board_state s);
const char *board_event_name(enum board_event_kind k);
const char *board_counter_name(enum board_counter c);

#endif
