/* cpu.h -- each thread's CPU%, from the kernel's own accounting.
 *
 * The board says what a thread is doing; /proc/PID/task/TID/stat says how
 * much CPU it used (utime + stime, in clock ticks). The difference between
 * two refreshes, over the time between them, is the thread's CPU%. The tid
 * comes from the board, which another process may scribble on: it is only
 * a name to look up under /proc/PID/task/, which holds the threads of that
 * one process and no other, and whatever cannot be read is "no figure". */
#ifndef THREADLAB_CPU_H
#define THREADLAB_CPU_H

#include <stdint.h>

#include "probe/board_read.h"

#define CPU_NONE (-1.0f)       /* no figure (shown "-"): a simulated or ended
                                  thread, a vanished task, an unparsable
                                  stat, or the first sample of a thread */

/* The ticks a thread has run (utime + stime, fields 14 and 15) from the
 * text of its stat file. The name in parentheses may hold anything, ')'
 * and spaces included, so the fields are counted from the last ')'.
 * Returns 0, or -EINVAL for text that is not a stat line. Pure. */
int cpu_parse_stat(const char *text, uint64_t *ticks);

/* Read the ticks of thread tid of process pid. Returns 0, -ENOENT (no such
 * thread in that process: ended, or a tid that was never its), -EINVAL
 * (unparsable), or another -errno. */
int cpu_task_ticks(int pid, uint32_t tid, uint64_t *ticks);

struct cpu_sample {
    uint32_t tid;
    uint64_t ticks;
};

/* The last sample of every thread of one server. */
struct cpu_sampler {
    int n;                                 /* samples in last[] */
    uint64_t taken_ns;                     /* when (monotonic), 0: never */
    struct cpu_sample last[BOARD_THREAD_SLOTS]; /* sorted by tid */
    struct cpu_sample next[BOARD_THREAD_SLOTS]; /* the sample being taken */
};

/* Sample the threads of snapshot s, written by process pid: pct[i] is the
 * CPU% of s->threads[i] since the last sample (100 = one core), or
 * CPU_NONE. Opens one file per live thread with a tid. Main thread. */
void cpu_sample(struct cpu_sampler *c, int pid, const struct board_snapshot *s,
                float *pct);

#endif
