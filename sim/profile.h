/* profile.h -- what things cost on the simulated machine.
 *
 * Every cost the simulator charges comes from here, in nanoseconds of CPU
 * (or of waiting, for the network). `threadlab calibrate` measures them on
 * the machine it runs on and writes a profile file; sim/profiles/
 * default.profile was measured on this project's machine and says when and
 * where. A profile file is "key = value" lines; '#' starts a comment.
 */
#ifndef THREADLAB_PROFILE_H
#define THREADLAB_PROFILE_H

#include <stddef.h>
#include <stdint.h>

/* The file format's version, written as "version = 7". Versions 1 (no
 * version line: files before calibrate measured call by call) to 6 load:
 * their keys mean what they meant (before 3, wakeup_ns was an idle
 * core's whole wakeup, charged as latency, and no woken thread preempted
 * another: a file without wakeup_cpu_ns and wakeup_granularity_ns gets
 * its context_switch_ns and 0; before 4, costs had no tail of their own:
 * the *_p99 and *_p999 keys are 0; before 5, wakeup_ipi_ns,
 * idle_search_pct, balance_interval_ns and migration_cost_ns were not
 * there; before 6, the virtual threads' vt_switch_ns,
 * vt_stack_map_ns, vt_stack_unmap_ns and vt_stack_touched_kb; before 7,
 * the wakeup_deep_* keys of a core that idled long and the timer_late_*
 * keys of a timer's wakeup: like any key a file
 * leaves out, they keep the values they had, the built-in's or --base's).
 * A newer version is refused. */
#define PROFILE_VERSION 7
#define PROFILE_VERSION_TEXT "7"
#define PROFILE_FILE_MAX_BYTES 65536   /* a profile is ~2 KiB: more is not one */
#define PROFILE_TAIL_MAX 1000          /* a *_p99 or *_p999 knot: at most this many
                                          times the median */
#define PROFILE_TAIL_MAX_TEXT "1000"
#define PROFILE_SIGMA_MAX 3            /* a *_sigma, a log-normal's shape: at most this */
#define PROFILE_SIGMA_MAX_TEXT "3"

struct profile {
    char measured[160];          /* when and where it was measured */
    char spreads[2048];          /* calibrate: a line per figure, its calls'
                                    p10/p50/p90 and how far its rounds
                                    agree (comments in the file; not read
                                    back) */
    double read_ns;              /* read() of one small message */
    double write_ns;             /* write() of one small reply */
    double accept_ns;            /* accept() of one connection */
    double close_ns;             /* close() of a connection */
    double epoll_wait_ns;        /* one epoll_wait that returns events */
    double poll_ns;              /* poll() of a socket and an eventfd: part
                                    of calibrate's ping-pong pass, taken out
                                    of it to leave the switch (no model
                                    polls before a read: a blocking thread
                                    blocks in read itself) */
    double read_empty_ns;        /* a read that finds nothing (EAGAIN).
                                    Measured, not charged: a loop stops on
                                    a short read, as models/reactive does */
    double eventfd_ns;           /* a write to an eventfd (a loop's wakeup) */
    double wakeup_ns;            /* an idle core woken by an interrupt from
                                    another core: until its thread runs
                                    (latency, not CPU) */
    double wakeup_cpu_ns;        /* the CPU that wakeup costs, in place of a
                                    switch (the interrupt, the way out of
                                    idle: dear in a VM); a wakeup preemption
                                    on another core pays it on top */
    double wakeup_ipi_ns;        /* of wakeup_cpu_ns, what the waker pays:
                                    the interrupt its write() sends to the
                                    woken thread's core (a VM exit here);
                                    also paid on a wakeup that preempts a
                                    thread of another core */
    double wakeup_granularity_ns; /* the scheduler's slice (EEVDF's
                                     base_slice): a thread's virtual
                                     deadline is this far past its
                                     vruntime, which decides wakeup
                                     preemption (0: no woken thread
                                     preempts another) */
    double idle_search_pct;      /* Linux's SIS_UTIL: a woken thread whose
                                    last core is busy looks for an idle
                                    core only while the cores' average
                                    utilization u leaves
                                    n = cores x (1 - (u x this / 100)^2)
                                    at 1 or more, and then looks at n
                                    cores; 117 is Linux's (the domain's
                                    imbalance_pct: on 2 cores, no search
                                    above u = 0.6); 0: it always looks at
                                    every core */
    double balance_interval_ns;  /* how often the balancer moves a waiting
                                    thread to a less loaded core (0: never) */
    double migration_cost_ns;    /* Linux's sched_migration_cost: a core
                                    that goes idle takes a thread waiting
                                    on another at once only if it has been
                                    staying idle this long on average (0:
                                    always) */
    double context_switch_ns;    /* one switch between threads on a core */
    double context_switch_log2_ns; /* more per doubling of runnable threads
                                      (caches and run queues get colder) */
    double cross_core_ns;        /* more when the thread last ran on another
                                    core (a wakeup from another core: an
                                    inter-processor interrupt) */
    double thread_create_ns;     /* pthread_create, paid by the creator */
    double handle_ns;            /* decode a line and make its reply */
    double net_one_way_ns;       /* loopback, client to server */
    double time_slice_ns;        /* the scheduler's slice (0: no preemption) */
    double syscall_sigma;        /* each syscall's cost is the figure above
                                    times a log-normal factor of mean 1 and
                                    this shape (0: a constant) */
    double wakeup_sigma;         /* the same, for each wakeup */
    double syscall_p99;          /* the calls' tail, beyond their p90: a call
                                    at its p99 costs this many times its
                                    median (0: the log-normal's own), */
    double syscall_p999;         /* ... and at its p99.9. Measured, a
                                    write's p99.9 was 7-10 times its median
                                    on this VM, where the log-normal through
                                    p50 and p90 says 1.5: the rare long call
                                    that makes tail latency (rng.h) */
    double wakeup_p99, wakeup_p999; /* the same, for each wakeup */
    /* A core idle for a while wakes later than one that idled for a
     * moment: on a VM a halted virtual CPU is a host thread that went to
     * sleep, and waking it is a wakeup on the host, behind the host's
     * other work (on bare metal: a deeper C-state). Measured by
     * calibrate's "idle" group; 0: no such cost. */
    double wakeup_deep_after_ns; /* how long a core must have been idle */
    double wakeup_deep_ns;       /* the latency that adds to its wakeup
                                    (the log-normal's mean, as above) */
    double wakeup_deep_sigma, wakeup_deep_p99, wakeup_deep_p999; /* its shape
                                    and tail, as the wakeup's: its p99.9
                                    was 50-150 times its median here */
    double timer_late_ns;        /* how late a timer wakes a thread that
                                    sleeps until it (an open loop's client
                                    between lines): 30-40 us at the median
                                    on this VM, whose host must wake the
                                    halted vCPU; 0: on time */
    double timer_late_sigma, timer_late_p99, timer_late_p999; /* its shape
                                    and tail */
    double stack_kb;             /* each thread's stack, reserved (virtual) */
    double stack_touched_kb;     /* of it, resident: the pages a connection
                                    thread touches (measured by calibrate) */
    double kernel_stack_kb;      /* each thread's kernel stack (resident) */
    double conn_kb;              /* memory per connection (socket + buffers) */
    /* the virtual threads (model 5), measured by calibrate's "vthread" */
    double vt_switch_ns;         /* one switch between two virtual threads on
                                    one kernel thread (models/vthread/switch.c,
                                    the build's kind: asm or ucontext) */
    double vt_stack_map_ns;      /* a vthread's stack mapped with its guard
                                    page (mmap + mprotect): the acceptor pays
                                    it for each connection */
    double vt_stack_unmap_ns;    /* ... and unmapped (munmap): the carrier
                                    pays it when the vthread ends */
    double vt_stack_touched_kb;  /* of a vthread's stack, resident: the pages
                                    its handler touches (not the whole
                                    --stack, which is reserved) */
};

/* The built-in default (this machine, see profiles/default.profile). */
void profile_default(struct profile *p);

/* All costs zero, no preemption: the pure queueing model (for checking
 * the simulator against M/M/c). */
void profile_zero(struct profile *p);

/* Read a profile file over p (keys not in the file keep their value).
 * Returns 0, or -1 with a message ("line 3: unknown key 'x'"); only a
 * regular file of at most PROFILE_FILE_MAX_BYTES is read (a FIFO or
 * /dev/zero would never end). */
int profile_load(struct profile *p, const char *path, char *err, size_t err_len);

/* Add a line to p->spreads ("read_ns 3100: calls p10 ... ; rounds within
 * 4.1%"); profile_save writes each as a "# spread" comment. */
void profile_note_spread(struct profile *p, const char *note);

/* Write p as a profile file. Returns 0 or -errno. */
int profile_save(const struct profile *p, const char *path);

#endif
