/* board.h -- the live state board: a server's state in shared memory.
 *
 * Every server publishes its threads, loops, queues, counters, latency
 * histogram and recent events into a fixed-layout block of memory mapped
 * into its address space, the way a JVM publishes hsperfdata for jstat.
 * `threadlab top` reads it from another process and draws it.
 *
 *   server threads --atomic stores--> [sealed memfd, mapped] --pread--> top
 *                                      found through <pid>.board, a symlink
 *                                      to /proc/<pid>/fd/<fd>
 *
 * Writers: plain atomic stores and adds (relaxed), no locks, no syscalls on
 * the hot path (the clock is read through the vDSO). The board is output
 * only: another process of the same user can write anything into it, so
 * every index the writer depends on (the event ticket, which slots are
 * taken, a thread's running totals) lives in the writer's private memory
 * and is never read back from the mapping. The memory is a memfd sealed
 * against shrinking and growing (F_SEAL_SHRINK | F_SEAL_GROW): a truncate
 * is refused by the kernel, so a store can never fault with SIGBUS.
 *
 * Readers: copy the board with pread and validate every field before use
 * (board_read), so a torn, scribbled, truncated or hostile board is an
 * error message, never a crash.
 *
 * Where: $XDG_RUNTIME_DIR/threadlab/ or /tmp/threadlab-$UID/ (directory
 * 0700, ours, not a symlink). The entry <pid>.board (<pid>.<n>.board for a
 * second board in the same process) is a symlink to /proc/<pid>/fd/<fd>,
 * the memfd the server keeps open; it is removed by board_close, and the
 * memory goes with the process. Links of dead processes are removed by
 * readers. docs/board.md says why this design.
 */
#ifndef THREADLAB_BOARD_H
#define THREADLAB_BOARD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "echo/session.h"
#include "histogram.h"

#define BOARD_MAGIC 0x3144524f424c5454ull /* "TTLBORD1" */
#define BOARD_VERSION 5          /* 3: runnable threads; a simulator's clock;
                                     4: a thread's tid and bytes in/out;
                                     5: loops carry backpressure and starvation */
#define BOARD_THREAD_SLOTS 4096   /* threads shown by name; more are counted */
#define BOARD_LOOP_SLOTS 64
#define BOARD_QUEUE_SLOTS 8
#define BOARD_EVENT_SLOTS 512     /* the event ring */
#define BOARD_NAME_BYTES 16       /* thread, loop and queue names */
#define BOARD_TEXT_BYTES 96       /* an event's reason */
#define BOARD_MODEL_BYTES 16
#define BOARD_OPTIONS_BYTES 192
#define BOARD_MEMFD_NAME "threadlab-board" /* the memfd's name: its
                                     /proc/PID/fd/N reads "/memfd:" this */

/* What a thread is for. ROLE_MAIN is the process's main thread (in
 * `threadlab serve` it waits for SIGINT/SIGTERM, then stops the server), so
 * the board counts every thread /proc/PID/task lists. New roles go last:
 * recordings store the number. */
enum board_role {
    ROLE_ACCEPTOR, ROLE_CONN, ROLE_WATCHDOG, ROLE_POOL_WORKER, ROLE_BOSS,
    ROLE_WORKER_LOOP, ROLE_BUSINESS, ROLE_CHECKER, ROLE_MAIN,
    ROLE_CARRIER,        /* a kernel thread running virtual threads (vthread) */
    ROLE_VTHREAD,        /* a virtual thread: no kernel thread of its own (tid 0) */
    ROLE_MONITOR,        /* vthread's monitor: hands stuck carriers to spares */
    ROLE_COUNT
};

/* What a thread is doing now. */
enum board_state {
    STATE_IDLE,          /* alive, nothing to do (a pool thread between tasks) */
    STATE_WAITING,       /* waiting for events: accept, select, a task queue */
    STATE_RUNNING,       /* on the CPU: decoding, handling, !cpu */
    STATE_RUNNABLE,      /* ready, waiting for a core (the simulator shows it;
                            a real server cannot see the kernel's run queue),
                            or a vthread on its carrier's run queue */
    STATE_BLOCKED_IO,    /* blocked in read() or write() on one connection */
    STATE_BLOCKED_SLEEP, /* blocked in !sleep */
    STATE_TERMINATED,    /* ended; the slot is kept until reused */
    STATE_COUNT
};

/* Counters, each a running total unless said. */
enum board_counter {
    CTR_ACCEPTED,        /* connections accepted */
    CTR_ACTIVE,          /* connections open now (goes up and down) */
    CTR_CLOSED,          /* connections closed */
    CTR_BYTES_IN, CTR_BYTES_OUT,
    CTR_LINES,           /* lines answered */
    CTR_REJECTED,        /* connections refused ("!err busy") */
    CTR_OFFLOADED,       /* lines handed to a business pool */
    CTR_ERR_LINE_TOO_LONG, CTR_ERR_BAD_ARGUMENT, CTR_ERR_RESET,
    CTR_ERR_ACCEPT,      /* accept failures, EMFILE included */
    CTR_THREADS_SPAWNED, CTR_THREADS_EXITED,
    CTR_CLOSED_IDLE,     /* closed by --idle-timeout */
    CTR_CLOSED_SLOW_LINE,/* closed by --line-timeout (slowloris) */
    CTR_CLOSED_STALLED,  /* closed by --stall-timeout (never reads) */
    CTR_COUNT
};

/* What happened, for the event log. */
enum board_event_kind {
    EV_ACCEPT, EV_ASSIGN, EV_CLOSE, EV_SPAWN, EV_EXIT, EV_GROW, EV_SHRINK,
    EV_TASK_QUEUED, EV_TASK_RUN, EV_TIMER, EV_REJECT, EV_BLOCKED, EV_ERROR,
    EV_COUNT
};

/* ---- the file layout (shared between processes; fixed sizes) ---- */

struct board_header {
    _Atomic uint64_t magic;    /* BOARD_MAGIC, stored last at creation */
    uint32_t version;              /* BOARD_VERSION */
    uint32_t header_bytes;         /* sizeof(struct board_header) */
    uint64_t total_bytes;          /* the file's size */
    uint32_t thread_slots, loop_slots, queue_slots, event_slots;
    uint64_t counters_off, hist_off, threads_off, loops_off, queues_off,
             events_off;           /* byte offsets of each section */
    int32_t pid;
    uint32_t reserved;
    uint64_t start_unix_ns;        /* wall clock at start, for display */
    uint64_t start_mono_ns;        /* CLOCK_MONOTONIC at start; times below
                                      are monotonic ns */
    char model[BOARD_MODEL_BYTES]; /* "bio", ... */
    char options[BOARD_OPTIONS_BYTES]; /* the options, as text */
    _Atomic uint64_t unslotted_by_state[STATE_COUNT]; /* threads with no
                                      slot, by state (slotted ones are
                                      counted by the reader, from slots) */
    _Atomic uint64_t threads_unslotted; /* threads with no slot */
    _Atomic uint32_t closing;  /* 1 once the server began to stop */
    _Atomic uint32_t simulated; /* 1: a simulator writes this board, and its
                                   times run on sim_now_ns, not the wall */
    _Atomic uint64_t sim_now_ns; /* simulated: the run's time now; every time
                                   on the board is start_mono_ns + a run time */
};

struct board_thread {
    _Atomic uint32_t in_use;   /* 0 free, 1 claimed; published last */
    _Atomic uint32_t role;     /* enum board_role */
    _Atomic uint32_t state;    /* enum board_state */
    _Atomic uint32_t tid;      /* its kernel thread id (gettid), so a reader
                                  can find /proc/PID/task/TID/stat; 0 for
                                  none (a simulated thread) */
    _Atomic uint64_t name[BOARD_NAME_BYTES / 8];
    _Atomic uint64_t since_ns; /* when it entered its state */
    _Atomic uint64_t conn;     /* connection it serves, 0 for none */
    _Atomic uint64_t lines;    /* lines it answered */
    _Atomic uint64_t busy_ns;  /* time running */
    _Atomic uint64_t idle_ns;  /* time waiting or blocked */
    _Atomic uint64_t bytes_in; /* bytes it read from its connections */
    _Atomic uint64_t bytes_out;/* bytes it wrote to them */
};

struct board_loop {
    _Atomic uint32_t in_use;
    _Atomic uint32_t phase;              /* starting, waiting, io, tasks, stopped */
    _Atomic uint64_t name[BOARD_NAME_BYTES / 8];
    _Atomic uint64_t channels;       /* connections registered */
    _Atomic uint64_t task_queue_depth;
    _Atomic uint64_t timers;
    _Atomic uint64_t io_ns, task_ns; /* the ioRatio split */
    _Atomic uint64_t task_idle_ns;   /* part of task_ns run when I/O had nothing
                                      * to do (ioRatio shares only contended time) */
    _Atomic uint64_t iterations;
    _Atomic uint64_t longest_task_ns;
    _Atomic uint64_t blocked_since_ns; /* 0, or when a handler got stuck */
    _Atomic uint64_t out_pending_bytes;/* replies its channels have not yet written */
    _Atomic uint64_t channels_paused;  /* channels not reading: output above high water */
    _Atomic uint64_t tasks_starving_io;/* iterations whose tasks ran past the time
                                        * their I/O had waited (ioRatio 100) */
};

struct board_queue {
    _Atomic uint32_t in_use;
    uint32_t reserved;
    _Atomic uint64_t name[BOARD_NAME_BYTES / 8];
    _Atomic uint64_t depth, capacity, high_water, rejected;
};

struct board_event {
    _Atomic uint64_t seq;      /* ticket + 1 once written; 0 while writing.
                                  The ticket says the slot (ticket % slots)
                                  and the order; readers find the newest
                                  event from these, there is no head */
    _Atomic uint64_t time_ns;  /* monotonic */
    _Atomic uint32_t kind;     /* enum board_event_kind */
    uint32_t reserved;
    _Atomic uint64_t text[BOARD_TEXT_BYTES / 8];
};

/* ---- writing (the server) ---- */

struct board;                      /* the writer's handle */

/* A thread's place on the board. Owned by that thread, in its private
 * memory: the running totals are kept here and only stored to the slot, so
 * a scribbled slot never feeds back into them. slot is -1 when all slots
 * were taken (the thread is then counted by state only). */
struct board_thread_ref {
    int slot;                  /* index into the thread slots, or -1 */
    enum board_state state;    /* what it is doing now */
    uint64_t since_ns;         /* since when */
    uint64_t busy_ns;          /* time running so far */
    uint64_t idle_ns;          /* time waiting or blocked so far */
    uint64_t lines;            /* lines answered so far */
    uint64_t bytes_in;         /* bytes read so far */
    uint64_t bytes_out;        /* bytes written so far */
};

/* Create this process's board: a sealed memfd, mapped, then the link that
 * lets readers find it. Returns NULL and sets errno when it cannot (the
 * server then runs without a board, after a warning). Any thread, once,
 * before the server's threads start. */
struct board *board_create(const char *model, const char *options);

/* Remove the link (if it is still ours), unmap and close the memfd. NULL
 * is ignored. Any thread, once, after every writer has ended. */
void board_close(struct board *b);

/* The path of the board's link, what board_read takes ("" for NULL). Any
 * thread. */
const char *board_path(const struct board *b);

/* Counters. Any thread; b may be NULL (publishing off). */
void board_add(struct board *b, enum board_counter c, uint64_t n);
void board_sub(struct board *b, enum board_counter c, uint64_t n);

/* A counter's value as the board shows it (0 for NULL): for tests and
 * reports only. Another process may have scribbled on it, so no server
 * decision may depend on it. Any thread. */
uint64_t board_counter(const struct board *b, enum board_counter c);

/* Record a line's handling time. Any thread. */
void board_record_latency(struct board *b, uint64_t ns);

/* Record n lines that took the same time (one batch of replies written
 * together): one histogram update, not n. Any thread. */
void board_record_latency_n(struct board *b, uint64_t ns, uint64_t n);

/* Times on the board are on now_ns's clock (net/clock.h). Pass one reading
 * to the _at functions to read the clock once for several uses. */

/* Threads: register the calling thread, change its state, count its lines,
 * and mark it terminated. A state change of a thread with a slot is two
 * plain stores into its own slot: no shared cache line is touched. Any
 * thread, for its own ref. */
void board_thread_begin(struct board *b, struct board_thread_ref *t,
                        enum board_role role, const char *name, uint64_t conn);
void board_thread_begin_at(struct board *b, struct board_thread_ref *t,
                           enum board_role role, const char *name, uint64_t conn,
                           uint64_t at_ns);
void board_thread_state(struct board *b, struct board_thread_ref *t,
                        enum board_state state);
void board_thread_state_at(struct board *b, struct board_thread_ref *t,
                           enum board_state state, uint64_t at_ns);
void board_thread_lines(struct board *b, struct board_thread_ref *t, uint64_t n);
void board_thread_bytes(struct board *b, struct board_thread_ref *t,
                        uint64_t bytes_in, uint64_t bytes_out);
/* board_thread_begin records the calling thread's tid; a simulator that
 * registers threads it only pretends to run stores 0 ("no kernel thread"). */
void board_thread_tid(struct board *b, struct board_thread_ref *t, uint32_t tid);
void board_thread_conn(struct board *b, struct board_thread_ref *t, uint64_t conn);
void board_thread_end(struct board *b, struct board_thread_ref *t);
void board_thread_end_at(struct board *b, struct board_thread_ref *t, uint64_t at_ns);

/* Loops and queues: claim a slot (NULL when full or b is NULL), then store
 * into its fields with atomic_store_explicit(..., memory_order_relaxed);
 * never load from them to decide anything (keep the value privately and
 * store it). Which slots are taken is private to the writer: give a loop's
 * slot back with board_loop_release, not by storing into in_use. Any
 * thread. */
struct board_loop *board_loop_claim(struct board *b, const char *name);
void board_loop_release(struct board *b, struct board_loop *slot);
struct board_queue *board_queue_claim(struct board *b, const char *name,
                                      uint64_t capacity);

/* Append an event with its reason, printf-style. Any thread. Events are
 * rare (accept, spawn, exit...), never per line. */
void board_event(struct board *b, enum board_event_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void board_event_at(struct board *b, enum board_event_kind kind, uint64_t at_ns,
                    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* A simulated run (sim --viz) owns this board: its clock is the run's, at
 * run_ns now. Marks the board simulated, so readers take their snapshot's
 * time from it, and returns the board time of run_ns (start_mono_ns +
 * run_ns) for the _at functions. One thread (the simulation's). */
uint64_t board_sim_clock(struct board *b, uint64_t run_ns);

/* A connection ended: active - 1, closed + 1, the reason's own counter
 * (resets, timeouts), and an event saying why. Any thread. */
void board_conn_ended(struct board *b, uint64_t conn, enum echo_end end,
                      bool stopping, uint64_t lines);

/* Mark the board as stopping (the server began a graceful stop). Any
 * thread. */
void board_mark_closing(struct board *b);

/* ---- where boards live ---- */

/* The directory of this user's boards, created 0700 if missing. Returns 0
 * or -errno (-EPERM if it exists but is not ours, not private, or a
 * symlink). Any thread. */
int board_dir(char *out, size_t out_len);

#endif
