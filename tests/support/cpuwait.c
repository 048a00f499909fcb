/* cpuwait.c -- time the code controls. See cpuwait.h. */
#include "cpuwait.h"
#include "net/clock.h"

#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void *meter_main(void *arg)
{
    struct cw_meter *m = arg;
    const struct timespec one_ms = { 0, 1000000 };
    while (!atomic_load(&m->stop)) {
        uint64_t before = now_ns() / 1000;
        nanosleep(&one_ms, NULL);
        uint64_t slept = now_ns() / 1000 - before;
        if (slept > 2000)
            atomic_fetch_add(&m->late_us, slept - 2000);
    }
    return NULL;
}

void cw_meter_start(struct cw_meter *m)
{
    atomic_init(&m->stop, false);
    atomic_init(&m->late_us, 0);
    ck_assert_int_eq(pthread_create(&m->thread, NULL, meter_main, m), 0);
}

void cw_meter_stop(struct cw_meter *m)
{
    atomic_store(&m->stop, true);
    pthread_join(m->thread, NULL);
}

/* The second number of /proc/PID/task/TID/schedstat is the time that
 * thread spent runnable but waiting for a CPU, ns. */
static void read_task_waits(pid_t pid, struct cw_task_waits *w)
{
    char path[64];
    w->n = 0;
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    for (struct dirent *e; d && (e = readdir(d)) && w->n < CW_TASKS_MAX;) {
        int tid = atoi(e->d_name);
        unsigned long long run_ns, wait_ns;
        snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)pid, tid);
        FILE *f = tid > 0 ? fopen(path, "r") : NULL;
        if (f && fscanf(f, "%llu %llu", &run_ns, &wait_ns) == 2) {
            w->tid[w->n] = tid;
            w->wait_ns[w->n++] = wait_ns;
        }
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
}

/* The longest any one thread of pid waited for a CPU since `before` (a
 * thread born since counts from 0), us. */
static uint64_t longest_wait_us(pid_t pid, const struct cw_task_waits *before)
{
    struct cw_task_waits *now = malloc(sizeof(*now));
    uint64_t longest = 0;
    ck_assert_ptr_nonnull(now);
    read_task_waits(pid, now);
    for (int i = 0; i < now->n; i++) {
        uint64_t then = 0;
        for (int k = 0; k < before->n; k++)
            if (before->tid[k] == now->tid[i])
                then = before->wait_ns[k];
        if (now->wait_ns[i] > then && now->wait_ns[i] - then > longest)
            longest = now->wait_ns[i] - then;
    }
    free(now);
    return longest / 1000;
}

void cw_span_begin(struct cw_span *sp, struct cw_meter *m, pid_t server)
{
    sp->start_us = now_ns() / 1000;
    sp->late_at_start_us = atomic_load(&m->late_us);
    sp->server = server;
    sp->server_at_start.n = 0;
    if (server > 0)
        read_task_waits(server, &sp->server_at_start);
}

long cw_span_wall_ms(const struct cw_span *sp)
{
    return (long)((now_ns() / 1000 - sp->start_us) / 1000);
}

long cw_span_own_ms(const struct cw_span *sp, struct cw_meter *m)
{
    uint64_t wall = now_ns() / 1000 - sp->start_us;
    uint64_t late = atomic_load(&m->late_us) - sp->late_at_start_us;
    if (sp->server > 0) {
        uint64_t waited = longest_wait_us(sp->server, &sp->server_at_start);
        late = waited > late ? waited : late;
    }
    return late >= wall ? 0 : (long)((wall - late) / 1000);
}
