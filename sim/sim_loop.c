/* sim_loop.c -- what the two loop models share, as models/reactive/ does
 * for the real ones: a loop thread that waits in epoll_wait, then serves
 * its ready channels one at a time (read, decode and handle every line
 * read, one write for all the replies), accepts when it is a boss, and
 * runs the tasks that offloaded lines post back.
 *
 *   loop: epoll_wait -> [accept] -> [tasks] -> ready channels, in turn ->
 *         epoll_wait ...
 *   offload: loop --line--> business pool --reply as a task--> the loop
 *
 * A !sleep handled on the loop blocks the loop thread, and with it every
 * channel of that loop: the lesson of lab 04.
 *
 * The reactor and the multireactor differ only in their loops (one, or a
 * boss and workers) and in which loop gets a connection: the boss asks
 * the model's table (s->ops->assign), so this file names neither model.
 */
#include <stdio.h>
#include <stdlib.h>

#include "sim/sim_internal.h"

/* The loop's next burst: I/O work (epoll_wait, accept, read, handle,
 * write) or a task (an offloaded line's reply), added up for the board's
 * io/task split (the ioRatio picture). */
static void loop_run(struct sim *s, struct vloop *lp, vtime_t cpu_ns, bool task)
{
    int ratio = s->o->io_ratio;
    if (task) {
        lp->task_ns += cpu_ns;
        lp->task_budget_ns -= (double)cpu_ns;
    } else {
        lp->io_ns += cpu_ns;
        lp->task_budget_ns += (double)cpu_ns * (100 - ratio) / ratio;  /* Netty 4.1 */
    }
    if (s->viz)
        simviz_loop_time(s->viz, (int)(lp - s->loops), lp->io_ns, lp->task_ns);
    sim__run(s, lp->thread, cpu_ns, C_LOOP_STEP);
}

const char *sim__loop_name(const struct sim *s, int l, char name[static SIM_LOOP_NAME_LEN])
{
    /* The caller's buffer: sim --sweep runs simulations on several
     * threads at once. */
    if (s->o->model == SIM_REACTOR)
        return "reactor";
    if (l == s->boss)
        return "boss";
    snprintf(name, SIM_LOOP_NAME_LEN, "worker-%d", l + 1);
    return name;
}

static void loop_channels(struct sim *s, int l, int delta)
{
    s->loops[l].channels += (uint64_t)(int64_t)delta;
    if (s->viz)
        simviz_loop_channels(s->viz, l, s->loops[l].channels);
}

static void loop_wake(struct sim *s, int l)
{
    struct vloop *lp = &s->loops[l];
    if (!lp->in_epoll)
        return;
    lp->in_epoll = false;
    if (s->viz)
        simviz_loop_waiting(s->viz, l, false);
    lp->batch_left = lp->ready.len;
    loop_run(s, lp, sim__syscall_ns(s, s->o->prof.epoll_wait_ns), false);
}

void sim__loop_mark_ready(struct sim *s, uint32_t c)
{
    struct vconn *v = &s->conns[c];
    if (v->in_ready || v->offloaded || v->state != CS_OPEN)
        return;
    v->in_ready = true;
    sim__cq_push(s, &s->loops[v->loop].ready, c);
    loop_wake(s, (int)v->loop);
}

uint32_t sim__loops_accept_queue(const struct sim *s)
{
    return s->loops[s->boss].accepts.len;
}

/* A new connection waits for the boss to accept it. */
void sim__loops_connect(struct sim *s, uint32_t c)
{
    struct vloop *boss = &s->loops[s->boss];
    sim__cq_push(s, &boss->accepts, c);
    if (boss->in_epoll) {
        boss->in_epoll = false;
        boss->batch_left = 0;
        loop_run(s, boss, sim__syscall_ns(s, s->o->prof.epoll_wait_ns), false);
    }
}

/* ---- one step of a loop --------------------------------------------------------- */

/* Hand line k of c to the business pool; the channel waits for its reply. */
static void offload_line(struct sim *s, struct vloop *lp, uint32_t c)
{
    struct vconn *v = &s->conns[c];
    sim__line_taken(s, c);
    v->offloaded = true;
    sim__cq_push(s, &s->biz_queue, c);
    if (s->nbiz_idle > 0) {
        uint32_t b = s->biz_idle[--s->nbiz_idle];
        uint32_t bc = sim__cq_pop(s, &s->biz_queue);
        s->m.threads[b].owner = bc;
        sim__run(s, b, sim__line_cpu(s, bc, s->conns[bc].taken - 1), C_BIZ_DONE);
    }
    loop_run(s, lp, sim__syscall_ns(s, s->o->prof.eventfd_ns), false);
}

/* A !task line: decode it now, and queue its CPU as a task on this same
 * loop (Netty's channel.eventLoop().execute()); the channel waits for the
 * reply, which the task writes (run_task). */
static void queue_task_line(struct sim *s, struct vloop *lp, uint32_t c)
{
    struct vconn *v = &s->conns[c];
    uint32_t k = v->taken;
    sim__line_taken(s, c);
    v->offloaded = true;
    sim__cq_push(s, &lp->tasks, c);
    lp->wait_conn = c;                              /* its wait ends on a core */
    lp->wait_line = k;
    loop_run(s, lp, sim__line_cpu(s, c, k) - sim__line_task(s, c, k), false);
}

/* Serving lp->cur: handle its next line read, or write all the replies.
 * False when there was nothing left to do for it. */
static bool serve_current(struct sim *s, int l)
{
    struct vloop *lp = &s->loops[l];
    const struct profile *p = &s->o->prof;
    uint32_t c = lp->cur;
    struct vconn *v = &s->conns[c];
    if (v->arrived > v->taken && !v->offloaded) {
        uint32_t k = v->taken;
        enum line_kind kind = sim__line_kind(s, c, k);
        if (s->o->offload > 0 && (kind == LINE_CPU || kind == LINE_SLEEP)) {
            offload_line(s, lp, c);
            return true;
        }
        if (kind == LINE_TASK) {                    /* decode now, the work later */
            queue_task_line(s, lp, c);
            return true;
        }
        sim__line_taken(s, c);
        lp->cur_lines++;
        vtime_t sleep = sim__line_sleep(s, c, k);
        if (sleep > 0) {                            /* the whole loop sleeps */
            sim__line_waited(s, c, k, s->eng.now);
            if (s->viz) {
                char name[SIM_LOOP_NAME_LEN];
                simviz_loop_blocked(s->viz, l, true);
                simviz_event(s->viz, VIZ_EV_BLOCKED, "%s sleeps %.0f ms in a handler: "
                             "its %llu connections wait", sim__loop_name(s, l, name),
                             (double)sleep / 1e6, (unsigned long long)lp->channels);
            }
            sim__block(s, lp->thread, VIZ_SLEEPING);
            sim__at(s, (double)sleep, EV_WAKE, lp->thread, C_LOOP_STEP);
            return true;
        }
        lp->wait_conn = c;                          /* its wait ends on a core */
        lp->wait_line = k;
        loop_run(s, lp, sim__line_cpu(s, c, k), false);
        return true;
    }
    /* Everything read is handled: one write for all of it (and a close,
     * if the client has gone meanwhile). The replies leave once the
     * write() is paid for (flush_written), not before. */
    lp->cur = VT_NONE;
    if (lp->cur_lines == 0)
        return false;
    lp->flush_conn = c;
    lp->flush_lines = lp->cur_lines;
    lp->cur_lines = 0;
    double cpu = p->write_ns;
    lp->flush_close = v->client_closed && !v->offloaded;
    if (lp->flush_close)
        cpu += p->close_ns;
    loop_run(s, lp, sim__syscall_ns(s, cpu), false);
    return true;
}

/* The step before was a write (and maybe a close): its replies leave now. */
static void flush_written(struct sim *s, int l)
{
    struct vloop *lp = &s->loops[l];
    uint32_t c = lp->flush_conn;
    lp->flush_conn = VT_NONE;
    for (uint32_t i = 0; i < lp->flush_lines; i++) {
        sim__reply_sent(s, c);
        sim__thread_line(s, lp->thread);
    }
    lp->flush_lines = 0;
    if (lp->flush_close) {
        lp->flush_close = false;
        sim__conn_closed(s, c);
        loop_channels(s, (int)s->conns[c].loop, -1);
    }
}

/* The step before handled a line: its wait ended when that burst got a core. */
static void note_wait(struct sim *s, int l)
{
    struct vloop *lp = &s->loops[l];
    sim__line_waited(s, lp->wait_conn, lp->wait_line, s->m.threads[lp->thread].burst_start);
    lp->wait_conn = VT_NONE;
}

/* Boss work: accept one connection and give it a worker loop. */
static void accept_one(struct sim *s, int l)
{
    struct vloop *lp = &s->loops[l];
    uint32_t c = sim__cq_pop(s, &lp->accepts);
    struct vconn *v = &s->conns[c];
    int w = s->ops->assign(s, c);                   /* itself, or a worker */
    v->loop = (uint32_t)w;
    v->state = CS_OPEN;
    loop_channels(s, w, +1);
    if (s->viz) {
        simviz_count(s->viz, VIZ_ACCEPTED, 1);
        simviz_count(s->viz, VIZ_ACTIVE, 1);
    }
    vtime_t cpu = sim__syscall_ns(s, s->o->prof.accept_ns);
    if (w != l)
        cpu += sim__syscall_ns(s, s->o->prof.eventfd_ns);      /* the hand-off wakes the worker */
    if (v->client_closed || v->arrived > v->taken)
        sim__loop_mark_ready(s, c);
    loop_run(s, lp, cpu, false);
}

/* A task: an offloaded line's reply posted back, or a !task line's CPU.
 * Either way it writes the reply (which leaves when the write is paid,
 * in flush_written). */
static void run_task(struct sim *s, int l)
{
    struct vloop *lp = &s->loops[l];
    uint32_t c = sim__cq_pop(s, &lp->tasks);
    struct vconn *v = &s->conns[c];
    v->offloaded = false;
    lp->flush_conn = c;
    lp->flush_lines = 1;
    if (v->arrived > v->taken || v->client_closed)
        sim__loop_mark_ready(s, c);
    vtime_t work = sim__line_task(s, c, v->taken - 1);
    loop_run(s, lp, work + sim__syscall_ns(s, s->o->prof.write_ns), true);
}

/* ioRatio (Netty 4.1): while channels are ready, tasks run only for the
 * time the I/O before them earned; with nothing ready, they all run. */
static bool tasks_may_run(const struct sim *s, const struct vloop *lp)
{
    return lp->tasks.len > 0 &&
           (lp->ready.len == 0 || s->o->io_ratio == 100 || lp->task_budget_ns > 0);
}

/* The next ready channel of this round (a new round: epoll_wait first). */
static void read_ready(struct sim *s, int l)
{
    struct vloop *lp = &s->loops[l];
    const struct profile *p = &s->o->prof;
    if (lp->batch_left == 0) {
        lp->batch_left = lp->ready.len;
        loop_run(s, lp, sim__syscall_ns(s, p->epoll_wait_ns), false);
        return;
    }
    lp->batch_left--;
    uint32_t c = sim__cq_pop(s, &lp->ready);
    struct vconn *v = &s->conns[c];
    v->in_ready = false;
    if (v->state != CS_OPEN) {                      /* closed since it was listed */
        loop_run(s, lp, 0, false);
        return;
    }
    if (v->arrived == v->taken && v->client_closed && !v->offloaded) {
        sim__conn_closed(s, c);                     /* EOF: close it */
        loop_channels(s, (int)v->loop, -1);
        loop_run(s, lp, sim__syscall_ns(s, p->read_ns + p->close_ns), false);
        return;
    }
    lp->cur = c;
    lp->cur_lines = 0;
    /* One read: it gets less than it asked for, so the socket is empty
     * and no read is paid just to hear EAGAIN (models/reactive/channel.c
     * stops on a short read, as Netty does; epoll says when more comes). */
    loop_run(s, lp, sim__syscall_ns(s, p->read_ns), false);
}

/* The loop's work, one step per burst: finish the channel it is serving,
 * accept one connection (boss), run an offloaded line's reply (a task),
 * serve the next ready channel, or wait in epoll_wait. */
static void loop_step(struct sim *s, int l)
{
    struct vloop *lp = &s->loops[l];
    if (lp->wait_conn != VT_NONE)
        note_wait(s, l);
    if (lp->flush_conn != VT_NONE)
        flush_written(s, l);
    if (lp->cur != VT_NONE && serve_current(s, l))
        return;
    if (lp->accepts.len > 0) {
        accept_one(s, l);
    } else if (tasks_may_run(s, lp)) {
        run_task(s, l);
    } else if (lp->ready.len > 0) {
        read_ready(s, l);
    } else {
        lp->in_epoll = true;                        /* nothing to do: wait */
        if (s->viz)
            simviz_loop_waiting(s->viz, l, true);
        lp->batch_left = 0;
        lp->task_budget_ns = 0;                     /* a new iteration earns anew */
        sim__block(s, lp->thread, VIZ_WAITING);
    }
}

/* ---- the business pool ------------------------------------------------------------ */

static void biz_burst_done(struct sim *s, uint32_t t)
{
    struct vthread *th = &s->m.threads[t];
    uint32_t c = th->owner;
    if (th->cont == C_BIZ_DONE) {
        sim__line_waited(s, c, s->conns[c].taken - 1, th->burst_start);
        sim__thread_line(s, t);
        vtime_t sleep = sim__line_sleep(s, c, s->conns[c].taken - 1);
        if (sleep > 0) {
            sim__block(s, t, VIZ_SLEEPING);
            sim__at(s, (double)sleep, EV_WAKE, t, C_BIZ_SLEPT);
            return;
        }
        sim__run(s, t, sim__syscall_ns(s, s->o->prof.eventfd_ns), C_BIZ_SUBMITTED);
        return;
    }
    /* The reply goes back to the channel's loop, as a task. */
    struct vloop *lp = &s->loops[s->conns[c].loop];
    sim__cq_push(s, &lp->tasks, c);
    loop_wake(s, (int)s->conns[c].loop);
    if (s->biz_queue.len > 0) {
        uint32_t next = sim__cq_pop(s, &s->biz_queue);
        th->owner = next;
        sim__run(s, t, sim__line_cpu(s, next, s->conns[next].taken - 1), C_BIZ_DONE);
    } else {
        s->biz_idle[s->nbiz_idle++] = t;
        sim__block(s, t, VIZ_IDLE);
    }
}

/* ---- the engine's events --------------------------------------------------------- */

/* A burst is over: a loop's step (the loops were spawned first, so
 * their thread ids are their indexes), or a business thread's. */
void sim__loops_burst_done(struct sim *s, uint32_t t)
{
    if (t < (uint32_t)s->nloops)
        loop_step(s, (int)t);
    else
        biz_burst_done(s, t);
}

/* A !sleep is over: a business thread hands its reply back, a loop goes
 * on with the step it slept in. */
void sim__loops_wake(struct sim *s, uint32_t t, uint32_t cont)
{
    if (cont == C_BIZ_SLEPT) {
        sim__run(s, t, sim__syscall_ns(s, s->o->prof.eventfd_ns), C_BIZ_SUBMITTED);
        return;
    }
    if (s->viz)
        simviz_loop_blocked(s->viz, (int)t, false);
    sim__run(s, t, 0, cont);
}

/* ---- set up -------------------------------------------------------------------------- */

/* nworkers loops, then (unless a worker is its own boss) the boss loop,
 * then the business pool. The loops' thread ids are their indexes. */
int sim__loops_setup(struct sim *s, int nworkers, bool own_boss)
{
    s->nloops = nworkers + (own_boss ? 1 : 0);
    s->loops = calloc((size_t)s->nloops, sizeof(*s->loops));
    if (!s->loops)
        return -1;
    s->boss = own_boss ? nworkers : 0;
    for (int l = 0; l < s->nloops; l++) {
        char buf[SIM_LOOP_NAME_LEN];
        const char *name = sim__loop_name(s, l, buf);
        s->loops[l].thread = sim__spawn(s, (uint32_t)l, l == s->boss ? VIZ_BOSS : VIZ_WORKER,
                                        name, 0);
        s->loops[l].in_epoll = true;
        s->loops[l].cur = VT_NONE;
        s->loops[l].flush_conn = VT_NONE;
        s->loops[l].tasks.link = CQ_JOB;
        s->loops[l].wait_conn = VT_NONE;
        if (s->viz)
            simviz_loop(s->viz, name);
    }
    s->biz_queue.link = CQ_JOB;
    if (s->o->offload > 0) {
        s->biz_idle = malloc((size_t)s->o->offload * sizeof(*s->biz_idle));
        if (!s->biz_idle)
            return -1;
        for (int i = 0; i < s->o->offload; i++)
            s->biz_idle[s->nbiz_idle++] = sim__spawn_idle(s, VIZ_BUSINESS, "biz", i + 1);
    }
    return 0;
}
