/* cpu.c -- per-thread CPU% from /proc/PID/task/TID/stat. See cpu.h. */
#include "cpu.h"

#include "net/clock.h"
#include "probe/board.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cpu_parse_stat(const char *text, uint64_t *ticks)
{
    const char *p = strrchr(text, ')');
    if (!p || p[1] != ' ')
        return -EINVAL;
    p += 2;                               /* at field 3, the state */
    for (int f = 3; f < 14; f++) {         /* skip 3..13 (some may be -1) */
        while (*p && *p != ' ')
            p++;
        if (*p++ != ' ')
            return -EINVAL;
    }
    uint64_t sum = 0;
    for (int f = 14; f <= 15; f++) {       /* utime, stime: unsigned numbers */
        char *end;
        if (*p < '0' || *p > '9')
            return -EINVAL;
        errno = 0;
        unsigned long long v = strtoull(p, &end, 10);
        if (errno || *end != ' ')          /* field 16 follows */
            return -EINVAL;
        sum += v;
        p = end + 1;
    }
    *ticks = sum;
    return 0;
}

int cpu_task_ticks(int pid, uint32_t tid, uint64_t *ticks)
{
    char path[64], text[1024];
    if (pid <= 0 || tid == 0 || tid > INT_MAX)
        return -ENOENT;
    snprintf(path, sizeof(path), "/proc/%d/task/%u/stat", pid, (unsigned)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = read(fd, text, sizeof(text) - 1);
    int err = errno;
    close(fd);
    if (n < 0)
        return err == ESRCH ? -ENOENT : -err;   /* ESRCH: it ended after the open */
    text[n] = '\0';
    return cpu_parse_stat(text, ticks);
}

static int by_tid(const void *a, const void *b)
{
    uint32_t x = ((const struct cpu_sample *)a)->tid, y = ((const struct cpu_sample *)b)->tid;
    return x < y ? -1 : x > y;
}

void cpu_sample(struct cpu_sampler *c, int pid, const struct board_snapshot *s,
                float *pct)
{
    int n = 0;
    uint64_t taken_ns = now_ns();
    double ticks_per_s = (double)sysconf(_SC_CLK_TCK);
    double dt_s = c->taken_ns ? (double)(taken_ns - c->taken_ns) / 1e9 : 0;
    for (int i = 0; i < s->nthreads && i < BOARD_THREAD_SLOTS; i++) {
        const struct board_thread_snap *t = &s->threads[i];
        uint64_t ticks;
        pct[i] = CPU_NONE;
        if (t->state == STATE_TERMINATED || cpu_task_ticks(pid, t->tid, &ticks) < 0)
            continue;
        c->next[n++] = (struct cpu_sample){ t->tid, ticks };
        struct cpu_sample key = { t->tid, 0 };
        const struct cpu_sample *was = bsearch(&key, c->last, (size_t)c->n,
                                               sizeof(key), by_tid);
        /* Fewer ticks than before: the tid was reused by a new thread. */
        if (was && ticks >= was->ticks && dt_s > 0 && ticks_per_s > 0)
            pct[i] = (float)((double)(ticks - was->ticks) / ticks_per_s / dt_s * 100.0);
    }
    qsort(c->next, (size_t)n, sizeof(c->next[0]), by_tid);
    memcpy(c->last, c->next, (size_t)n * sizeof(c->next[0]));
    c->n = n;
    c->taken_ns = taken_ns;
}
