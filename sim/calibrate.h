/* calibrate.h -- `threadlab calibrate`: the simulator's costs, measured
 * on the machine it runs on (a few seconds). */
#ifndef THREADLAB_CALIBRATE_H
#define THREADLAB_CALIBRATE_H

#include <stdbool.h>
#include <stdio.h>

#include "profile.h"

/* Fill p with this machine's costs (and where and when, in p->measured).
 * time_slice_ns, context_switch_log2_ns, idle_search_pct,
 * balance_interval_ns and conn_kb are not measured (nor
 * stack_touched_kb and kernel_stack_kb without /proc): they
 * keep the default's values. Progress goes to `progress`. Returns how many
 * figures were refused for a spread too wide to trust (0: all measured). */
int calibrate_measure(struct profile *p, FILE *progress);

/* The groups of figures measured together, by name: "syscalls" (read_ns,
 * write_ns, syscall_sigma, syscall_p99, syscall_p999), "accept" (accept_ns, close_ns), "epoll"
 * (epoll_wait_ns, eventfd_ns), "poll" (poll_ns, read_empty_ns), "threads"
 * (thread_create_ns, stack_kb), "memory" (stack_touched_kb,
 * kernel_stack_kb), "handle" (handle_ns), "switches" (context_switch_ns,
 * the wakeups and the waker's share of one, wakeup_sigma, wakeup_p99,
 * wakeup_p999; and the scheduler's own wakeup_granularity_ns and
 * migration_cost_ns, read where the kernel shows them), "vthread"
 * (vt_switch_ns, vt_stack_map_ns, vt_stack_unmap_ns, vt_stack_touched_kb),
 * "idle" (the wakeup_deep_* of a core that idled long, the timer_late_*
 * of a timer's wakeup). */
#define CALIBRATE_NGROUPS 10
#define CALIBRATE_ALL ((1u << CALIBRATE_NGROUPS) - 1)
/* A group's bit, or 0 for a name that is not one. */
unsigned calibrate_group(const char *name);
/* Group g's name (bit 1 << g), or NULL past the last. */
const char *calibrate_group_name(int g);
/* Measure only the groups set in `groups`, over what p holds (a profile
 * loaded from a file: the rest stays as it is). Returns as
 * calibrate_measure. */
int calibrate_measure_groups(struct profile *p, unsigned groups, FILE *progress);

/* The Linux scheduler's own figures (calibrate_linux.c), which only
 * --sched linux uses: wakeup_granularity_ns and migration_cost_ns, read
 * where the kernel shows them, else Linux's defaults for ncpu cores; each
 * noted in p's comments and on `progress`. */
void calibrate_read_linux_sched(struct profile *p, long ncpu, FILE *progress);

/* ---- the rule a figure is trusted by (pure: measures nothing) -------------- */

#define CALIBRATE_ROUNDS 5          /* rounds per figure */
#define CALIBRATE_ROUNDS_MAX 64     /* the most the judges below take */
#define CALIBRATE_SPREAD_MAX 0.30   /* (max - min) / median of the rounds */
#define CALIBRATE_SHAPE_SPREAD_MAX 0.15 /* a sigma's rounds: max - min */

/* What calibrate makes of a figure's rounds. */
struct calibrate_verdict {
    double value;                /* the figure: the rounds' median (a part:
                                    0 if that is below 0) */
    double spread;               /* how far the rounds disagree */
    bool below_zero;             /* a part below 0 by more than the noise */
    bool beyond_tail_max;        /* a tail knot past PROFILE_TAIL_MAX x the
                                    median, which no profile takes */
    bool beyond_shape_max;       /* a shape past PROFILE_SIGMA_MAX, which no
                                    profile takes either */
    bool trusted;                /* false: refused, the built-in value stays */
};

/* A round's figure from its calls' costs: the mean of the log-normal
 * through their p50 and p90, so that a few calls stretched by other
 * processes do not move it. Sorts calls. Any thread. */
double calibrate_round_figure(double *calls, int n);

/* The shape (sigma) of two kinds of call measured together (reads and
 * writes), each call taken relative to its own kind's median so that
 * their different sizes are not read as spread: ln(p90 / p50) / z90 of
 * the calls so scaled. Sorts both arrays. Any thread. */
double calibrate_shape_of_two(double *a, int na, double *b, int nb);

/* n rounds' figures of a cost (shape: of a sigma, judged in absolute
 * terms): the median, trusted when the rounds agree within
 * CALIBRATE_SPREAD_MAX of it (a shape: within CALIBRATE_SHAPE_SPREAD_MAX)
 * and, for a cost, above 0. Any thread. */
struct calibrate_verdict calibrate_judge(const double *rounds, int n, bool shape);

/* A tail knot (p99: q 99, p99.9: q 999) of calls pooled over all rounds,
 * each call already divided by its own round's median (so that a median
 * that moves between rounds does not pass for a tail): the pooled calls'
 * q-quantile as ln(it) / z, the shape that knot alone gives. A round has
 * too few calls beyond its p99.9 to judge that knot round by round (two
 * in 2000 wakeups), so the rounds are judged in two halves instead, the
 * even rounds' calls against the odd ones' (interleaved: a machine that
 * drifts moves both): trusted when the halves agree within
 * CALIBRATE_SHAPE_SPREAD_MAX, and when the knot is within the
 * PROFILE_TAIL_MAX x the median that a profile takes (a busy machine can
 * stall one call in a thousand for 6000 medians; written, that figure
 * would make every sim run refuse the profile). Sorts both arrays. Any
 * thread. */
struct calibrate_verdict calibrate_judge_tail(double *even, int ne, double *odd, int no,
                                              int q);

/* A part of a measured whole (a wakeup: a pass less its switch), round by
 * round with the whole it came from: the noise is judged against the
 * whole. A part a little below 0 is lost in that noise and is 0; below
 * by more than CALIBRATE_SPREAD_MAX of the whole, the parts do not add up
 * and it is refused. Any thread. */
struct calibrate_verdict calibrate_judge_part(const double *parts, const double *wholes,
                                              int n);

#endif
