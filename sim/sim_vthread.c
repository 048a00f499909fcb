/* sim_vthread.c -- model 5 on the simulated machine: a virtual thread per
 * connection, on carrier threads (M:N), as models/vthread/ runs them.
 *
 *   acceptor --accept()+stack mmap+mail--> carrier-k (round robin)
 *   carrier-k: epoll_wait -> run queue: switch into vt-N -> read ->
 *              lines -> write -> read: EAGAIN -> park (switch out) -> ...
 *   monitor:   a carrier given up by a blocking call for --handoff-ms
 *              gets a spare thread (sim_carrier.c)
 *
 * What it costs, beyond what the reactors pay per line: two switches per
 * wakeup of a vthread (vt_switch_ns each: into it, and out when it
 * parks), and the read that says EAGAIN before it parks (read_empty_ns):
 * a vthread cannot stop on a short read, as a loop's channel does, since
 * its code is BIO's, read until it would block. Memory: the pages its
 * stack has touched (vt_stack_touched_kb), not the --stack it reserves.
 *
 * A vthread's life (vconn.vt), with the step of its runner that moves it:
 *
 *   MAIL --poll--> RUNNABLE --run--> RUNNING --park--> PARKED
 *                     ^                 |  \              | line or close
 *                     |                 |   \--!sleep--> CALL --over--> RUNNING
 *                     +----- poll ------+----- READY <----+
 *   RUNNING --!task--> YIELDED (run queue) --run--> RUNNING
 *   RUNNING --EOF--> DONE
 *
 * This file is the model's entry: its table of operations (the engine's
 * events), the vthread spawned by the acceptor, woken by its fd, and what
 * follows each of a runner's steps. The carriers' loop, the blocking
 * calls and the monitor are in sim_carrier.c; the steps themselves,
 * inside one vthread, in sim_vthread_steps.c. Calls run down that list.
 */
#include <stdio.h>
#include <stdlib.h>

#include "sim/sim_internal.h"

/* ---- after a runner's step ---------------------------------------------------- */

/* The replies written (VS_WRITE, VS_FLUSH) leave now. */
static void replies_leave(struct sim *s, struct vrunner *r)
{
    for (uint32_t i = 0; i < r->queued; i++) {
        sim__reply_sent(s, r->cur);
        sim__thread_line(s, r->thread);
    }
    r->queued = 0;
}

/* read() said EAGAIN and cur is parked. A line or a close that came
 * during the park is an edge its fd has seen: ready at the next poll. */
static void parked(struct sim *s, struct vrunner *r)
{
    uint32_t c = r->cur;
    struct vconn *v = &s->conns[c];
    v->vt = VTS_PARKED;
    r->cur = VT_NONE;
    if (v->arrived > v->taken || v->client_closed)
        sim__vthread_fd_ready(s, c);
}

static void closed(struct sim *s, struct vrunner *r)
{
    uint32_t c = r->cur;
    struct vconn *v = &s->conns[c];
    v->vt = VTS_DONE;
    r->cur = VT_NONE;
    s->carriers[v->loop].vthreads--;
    s->vthreads_live--;
    sim__conn_closed(s, c);
    if (s->viz)
        simviz_loop_channels(s->viz, (int)v->loop, s->carriers[v->loop].vthreads);
}

/* Thread t's burst is over: the acceptor's (sim_blocking.c), the
 * monitor's, or a runner's, whose step decides what follows. */
static void vthread_burst_done(struct sim *s, uint32_t t)
{
    struct vthread *th = &s->m.threads[t];
    if (t == s->acceptor) {
        sim__blocking_burst_done(s, t);
        return;
    }
    if (t == s->monitor) {
        sim__monitor_burst_done(s);
        return;
    }
    struct vrunner *r = &s->runners[th->owner];
    if (r->wait_line != VT_NONE) {
        sim__line_waited(s, r->cur, r->wait_line, th->burst_start);
        r->wait_line = VT_NONE;
    }
    switch (r->step) {
    case VS_POLL:  sim__carrier_poll_done(s, r); return;
    case VS_READ:  sim__vthread_serve(s, r); return;
    case VS_LINE:  r->queued++; sim__vthread_serve(s, r); return;
    case VS_FLUSH: replies_leave(s, r); sim__vthread_serve(s, r); return;
    case VS_WRITE: replies_leave(s, r); sim__vthread_read(s, r, false); return;
    case VS_CALL:  sim__vthread_call_begin(s, r); return;
    case VS_PARK:  parked(s, r); break;
    case VS_CLOSE: closed(s, r); break;
    case VS_YIELD: {                                /* to the back of the run queue */
        struct vconn *v = &s->conns[r->cur];
        v->vt = VTS_YIELDED;
        sim__cq_push(s, &s->carriers[v->loop].runq, r->cur);
        r->cur = VT_NONE;
        break;
    }
    }
    sim__carrier_next(s, r);
}

/* ---- spawned by the acceptor, woken by its fd ---------------------------------------- */

static void vthread_accepted(struct sim *s, uint32_t c)
{
    struct vconn *v = &s->conns[c];
    int k = (int)(s->next_carrier++ % (uint32_t)s->ncarriers);
    struct vcarrier *cr = &s->carriers[k];
    v->state = CS_OPEN;
    v->loop = (uint32_t)k;
    v->vt = VTS_MAIL;
    cr->vthreads++;
    if (++s->vthreads_live > s->r->peak_vthreads)
        s->r->peak_vthreads = s->vthreads_live;
    sim__cq_push(s, &cr->mail, c);
    if (s->viz) {
        char name[SIM_LOOP_NAME_LEN];
        simviz_loop_channels(s->viz, k, cr->vthreads);
        simviz_event(s->viz, VIZ_EV_ASSIGN, "vt-%u -> %s: round robin (%d of %d)", c + 1,
                     sim__carrier_name(k, name), k + 1, s->ncarriers);
    }
    sim__carrier_wake(s, k);
}

/* A line or the client's close reached c. */
void sim__vthread_fd_ready(struct sim *s, uint32_t c)
{
    struct vconn *v = &s->conns[c];
    if (v->vt != VTS_PARKED)
        return;                  /* not waiting: it reads the bytes anyway */
    v->vt = VTS_READY;
    sim__cq_push(s, &s->carriers[v->loop].ready, c);
    sim__carrier_wake(s, (int)v->loop);
}

/* ---- the model's table ------------------------------------------------------------ */

/* The acceptor (sim_blocking.c), the carriers, the monitor. */
static int vthread_setup(struct sim *s)
{
    if (sim__blocking_setup(s) < 0)
        return -1;
    return sim__carriers_setup(s);
}

/* On top of accept(): the vthread's stack mapped, and mail for a carrier. */
static vtime_t vthread_accept_cost(struct sim *s)
{
    const struct profile *p = &s->o->prof;
    return sim__syscall_ns(s, p->vt_stack_map_ns + p->eventfd_ns);
}

/* Only a runner sleeps (a vthread's blocking call): it is over. */
static void vthread_wake(struct sim *s, uint32_t t, uint32_t cont)
{
    (void)cont;                                     /* always C_VT_CALLED */
    sim__vthread_call_end(s, t);
}

/* Connections arrive as the blocking models' do (an acceptor), and are
 * served by vthreads on carriers. */
const struct sim_model_ops sim__vthread_ops = {
    .setup = vthread_setup,
    .accept_queue = sim__blocking_accept_queue,
    .connect = sim__blocking_connect,
    .input = sim__vthread_fd_ready,
    .burst_done = vthread_burst_done,
    .wake = vthread_wake,
    .look = sim__monitor_look,
    .accept_cost = vthread_accept_cost,
    .accepted = vthread_accepted,
};
