/* carrier.h -- inside the runtime: carriers, runners and virtual threads.
 * Not for use outside models/vthread/ (runtime.h is the interface).
 *
 * Words: a carrier is an epoll loop with a run queue (Go would say a P);
 * a runner is a kernel thread running a carrier's loop (an M): the
 * carrier's home thread, or a spare standing in while the home thread is
 * stuck in a blocking call. Exactly one runner holds a carrier's token at
 * a time, and only that runner touches the fields marked "token" below.
 *
 * A virtual thread's life (state, with who moves it):
 *
 *   VT_NEW --first run--> VT_RUNNING --vt__park--> VT_PARKED
 *                          ^   |  |                  | fd ready (carrier__ready),
 *                          |   |  |                  | deadline, a stop (carrier__resume)
 *        carrier__run_one  |   |  v                  v
 *                          +-- VT_RUNNABLE <---------+
 *                              |  ^ vt_yield
 *   VT_RUNNING --vt_blocking_begin--> VT_BLOCKED --vt_blocking_end--> VT_RUNNING
 *   VT_RUNNING --main returns--> VT_DONE (the runner frees it)
 */
#ifndef THREADLAB_VTHREAD_CARRIER_H
#define THREADLAB_VTHREAD_CARRIER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/epoll.h>

#include "loop/timer_heap.h"
#include "probe/probe.h"
#include "probe/probe_vthread.h"
#include "runtime.h"
#include "stack.h"
#include "switch.h"

enum vt_state {
    VT_NEW,                   /* made, on the carrier's inbox or run queue */
    VT_RUNNABLE,              /* on the run queue, waiting for the carrier */
    VT_RUNNING,               /* the carrier's runner is running it */
    VT_PARKED,                /* waiting for its fd, a deadline or a stop */
    VT_BLOCKED,               /* in a blocking call, on its runner's thread */
    VT_DONE,                  /* main returned; the runner frees it */
};

/* Why a parked virtual thread was resumed. */
enum vt_wake {
    VT_WAKE_READY,            /* its fd is ready (or may be: try again) */
    VT_WAKE_DEADLINE,         /* its deadline passed */
    VT_WAKE_STOP,             /* a stop began, and it waited for input */
};

struct carrier;

struct runner {
    struct carrier *carrier;  /* the carrier it runs */
    struct vt_context sched;  /* its scheduler loop, while a vthread runs */
    bool spare;               /* standing in for a stuck home thread */
    pthread_t thread;
    char name[24];            /* "carrier-1", or "spare-1" */
    struct board_thread_ref on_board; /* its own thread's slot */
    struct runner *next_retired;      /* on the monitor's list, to join */
};

struct vthread {
    struct vt_context ctx;    /* where it is, while not running */
    struct vt_stack stack;    /* its own stack */
    struct runner *runner;    /* the runner that resumed it last */
    struct carrier *carrier;  /* its carrier, for life */
    enum vt_state state;      /* token */
    enum vt_wake woke;        /* why it was resumed last (token) */
    uint32_t interest;        /* what its one-shot registration is armed for
                                 (EPOLLIN, EPOLLOUT); 0: disarmed (token) */
    bool stop_cuts;           /* parked where a stop must resume it */
    int fd;                   /* its connection, or -1 */
    uint64_t id;              /* "vt-<id>" */
    vt_main_fn main;          /* what it runs, */
    void *arg;                /* with what */
    struct heap_node deadline;/* on the carrier's deadlines while parked */
    struct vthread *next;     /* run queue, inbox */
    struct vthread *prev_all, *next_all; /* the carrier's list of all */
    char name[24];            /* "vt-17" */
    char where[48];           /* "vt-17@carrier-1" */
    struct board_thread_ref on_board;    /* its slot: a grid cell */
};

struct carrier {
    struct vt_runtime *rt;
    int index;
    char name[24];            /* "carrier-<index>" */
    int epoll_fd;             /* its vthreads' fds, and wake_fd */
    int wake_fd;              /* eventfd: mail, or the token is wanted */
    struct runner home;       /* its own thread */

    /* token: only the runner holding the token */
    struct vthread *runq_head, *runq_tail; /* runnable, in order */
    uint64_t runq_len;
    struct timer_heap deadlines;    /* parked vthreads with a deadline */
    struct vthread *all;            /* every vthread on this carrier */
    uint64_t vthreads;              /* how many */
    bool stop_seen;                 /* the stop's mail was read */
    struct board_loop *slot;        /* the carrier's row on the board */

    /* shared: under lock */
    pthread_mutex_t lock;
    pthread_cond_t token_free;      /* owner became NULL */
    struct runner *owner;           /* holds the token; NULL: nobody */
    int token_waiters;              /* runners back from a call, waiting */
    int blocked;                    /* runners in a blocking call */
    uint64_t released_ns;           /* when a blocking call gave the token up */
    struct vthread *inbox;          /* spawned, not yet on the run queue */
    bool stop_input;                /* a stop began */
    bool exit;                      /* the runtime ends: the home thread too */
    atomic_bool mail;               /* inbox, stop_input or exit changed */
    atomic_int wanted;              /* token_waiters, read without the lock */
};

struct vt_runtime {
    struct vt_runtime_opts opts;
    struct carrier *carriers;
    int ncarriers;
    int carriers_started;           /* home threads to join */
    atomic_uint next_carrier;       /* round robin */
    atomic_bool stopping;           /* vt_stopping */
    pthread_mutex_t live_lock;
    pthread_cond_t live_changed;
    uint64_t live;                  /* vthreads not yet freed */

    /* the monitor */
    pthread_t monitor;
    bool monitor_started;
    struct board_thread_ref monitor_on_board;
    pthread_mutex_t monitor_lock;
    pthread_cond_t monitor_wake;
    bool monitor_exit;              /* under monitor_lock */
    struct runner *retired;         /* spares to join (monitor_lock) */
    int spares_running;             /* started, not yet joined (monitor_lock) */
    uint64_t handoffs;              /* spares started, ever (monitor_lock) */
};

/* ---- carrier.c ---- */

/* The carrier's loop, run by runner r until it must stop: returns when
 * the runtime ends (a home runner) or the token is wanted back (a spare).
 * r holds the token when it is called, and has given it up on return.
 * The runner's own thread. */
void carrier__run(struct carrier *c, struct runner *r);
/* Take or give up the token; acquire blocks until it is free. The
 * runner's own thread (or a vthread on it). */
void carrier__acquire(struct carrier *c, struct runner *r);
void carrier__acquire_locked(struct carrier *c, struct runner *r); /* c->lock held */
void carrier__release(struct carrier *c);
/* Wake the carrier's runner out of epoll_wait. Any thread. */
void carrier__wake(struct carrier *c);
/* ---- run_queue.c ---- */

/* Put vt at the tail of the run queue (runnable), or take the head (NULL:
 * empty). The token holder's thread only (as the rest of this part). */
void carrier__runq_push(struct carrier *c, struct vthread *vt);
struct vthread *carrier__runq_pop(struct carrier *c);
/* Make a parked vthread runnable, for why; its deadline is dropped. */
void carrier__resume(struct carrier *c, struct vthread *vt, enum vt_wake why);
/* Empty the carrier's wake eventfd. */
void carrier__drain_wake(struct carrier *c);
/* An ended vthread leaves the carrier: its list, its board slot, its
 * context, its memory, the live count; not its stack (carrier__run_one
 * unmaps that). */
void carrier__forget(struct carrier *c, struct vthread *vt);

/* ---- park.c (lab 09) ---- */

/* Park self until resumed; returns why. events (EPOLLIN or EPOLLOUT; 0:
 * no fd) is what it waits for on its fd. Inside self, on the calling
 * thread (which holds the token). */
enum vt_wake vt__park(struct vthread *self, uint32_t events, uint64_t deadline_ns,
                      bool stop_cuts);
/* After epoll_wait: the n events in ev make their parked vthreads
 * runnable. The token holder's thread only. */
void carrier__ready(struct carrier *c, const struct epoll_event *ev, int n);
/* Switch into vt until it parks, yields, blocks, or ends; an ended one
 * is freed. Runner r's own thread, holding the token. */
void carrier__run_one(struct carrier *c, struct runner *r, struct vthread *vt);
/* Start and end a runner's thread: its name, its board slot, its
 * overflow report (begin returns 0, or -errno when the alternate signal
 * stack could not be set up: the runner works, but an overflow is then a
 * plain SIGSEGV). The runner's own thread. */
int runner__begin(struct runner *r, enum board_role role);
void runner__end(struct runner *r);

/* ---- monitor.c ---- */

/* The monitor thread: start, and end after every spare has retired. */
int monitor__start(struct vt_runtime *rt);
void monitor__stop(struct vt_runtime *rt);
/* A spare gives up: queue it to be joined. Its own thread, last. */
void monitor__retire(struct vt_runtime *rt, struct runner *spare);

#endif
