/* pane.c -- one watched server's pane: its board, its two snapshots, and
 * whether its process still lives. See pane.h. */
#include "pane.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "msg.h"
#include "probe/board_read.h"

void pane_detach(struct pane *p)
{
    free(p->now);
    free(p->before);
    free(p->cpu);
    free(p->cpu_pct);
    memset(p, 0, sizeof(*p));
}

/* Attach p (empty, or showing a server that is gone) to a board. Its
 * buffers are allocated before p is touched: out of memory, p stays as it
 * was, every pointer in it valid. Returns 0 or -ENOMEM. */
int pane_attach(struct pane *p, const char *path, int pid)
{
    struct board_snapshot *now = malloc(sizeof(*now));
    struct board_snapshot *before = malloc(sizeof(*before));
    struct cpu_sampler *cpu = calloc(1, sizeof(*cpu));
    float *cpu_pct = malloc(BOARD_THREAD_SLOTS * sizeof(*cpu_pct));
    if (!now || !before || !cpu || !cpu_pct) {
        free(now);
        free(before);
        free(cpu);
        free(cpu_pct);
        return -ENOMEM;
    }
    pane_detach(p);
    snprintf(p->path, sizeof(p->path), "%s", path);
    p->pid = pid;
    /* A pane starts with no snapshots; now/before hold buffers, marked
     * empty by pid 0 until filled. */
    p->now = now;
    p->before = before;
    p->now->pid = p->before->pid = 0;
    p->cpu = cpu;
    p->cpu_pct = cpu_pct;
    return 0;
}

/* Whether the process that owns a board can still write to it. A zombie
 * (dead, not yet reaped by its parent) cannot, though kill() finds it. */
bool pane_process_alive(int pid)
{
    if (kill(pid, 0) < 0 && errno == ESRCH)
        return false;
    char path[64], stat[256];
    snprintf(path, sizeof(path), "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return true;                 /* no /proc: kill's word is all we have */
    size_t n = fread(stat, 1, sizeof(stat) - 1, f);
    fclose(f);
    stat[n] = '\0';
    const char *paren = strrchr(stat, ')');   /* "pid (name) S ...": the name may hold ')' */
    return !(paren && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X'));
}

/* Read a new snapshot into the older buffer, then swap. The pid is asked
 * every time, not only when a read fails: a server killed with SIGKILL
 * leaves its board behind, readable and still, forever. Only the pid says
 * gone: a board removed or replaced under a live server (ENOENT, not a
 * board) is a board that cannot be read, tried again at every refresh. */
void pane_refresh(struct pane *p)
{
    char err[256];
    if (p->gone)
        return;
    bool alive = pane_process_alive(p->pid);
    int rc = board_read(p->path, p->before, err, sizeof(err));
    if (rc == 0) {                   /* (a dead server's last words included) */
        struct board_snapshot *t = p->now;
        p->now = p->before;
        p->before = t;
        p->error[0] = '\0';
        cpu_sample(p->cpu, p->pid, p->now, p->cpu_pct);
        if (alive)
            return;
    }
    if (!alive) {
        p->gone = true;              /* the server exited; keep its last picture */
        snprintf(p->error, sizeof(p->error), msg(M_SERVER_EXITED), p->pid);
    } else {
        snprintf(p->error, sizeof(p->error), msg(M_BOARD_UNREADABLE), p->pid, err);
    }
    p->before->pid = 0;              /* its contents are no longer a snapshot */
}
