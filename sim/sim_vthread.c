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
 * The carriers' loop, the blocking calls and the monitor are in
 * sim_carrier.c; this file is what a runner does inside one vthread.
 */
#include <stdio.h>
#include <stdlib.h>

#include "sim/sim_internal.h"

/* ---- a runner's bursts ------------------------------------------------------- */

void sim__runner_run(struct sim *s, struct vrunner *r, vtime_t cpu_ns, enum vt_step step)
{
    r->step = (uint8_t)step;
    sim__run(s, r->thread, cpu_ns, C_VT_STEP);
}

/* A switch between the carrier's loop and a vthread, counted. */
static vtime_t vt_switch(struct sim *s)
{
    s->r->vt_switches++;
    return (vtime_t)s->o->prof.vt_switch_ns;
}

/* ---- inside a vthread ---------------------------------------------------------- */

void sim__vthread_read(struct sim *s, struct vrunner *r, bool switch_in)
{
    const struct profile *p = &s->o->prof;
    struct vconn *v = &s->conns[r->cur];
    vtime_t cpu = switch_in ? vt_switch(s) : 0;
    if (v->arrived > v->taken) {                    /* lines: read them */
        sim__runner_run(s, r, cpu + sim__syscall_ns(s, p->read_ns), VS_READ);
    } else if (v->client_closed) {                  /* EOF: close, and return */
        cpu += sim__syscall_ns(s, p->read_ns + p->close_ns + p->vt_stack_unmap_ns);
        sim__runner_run(s, r, cpu + vt_switch(s), VS_CLOSE);
    } else {                                        /* EAGAIN: park */
        s->r->vt_parks++;
        cpu += sim__syscall_ns(s, p->read_empty_ns);
        sim__runner_run(s, r, cpu + vt_switch(s), VS_PARK);
    }
}

/* The line's work needs the replies before it written first
 * (vthread.c, answer_lines: none waits behind a !sleep). */
static bool write_before(const struct sim *s, const struct vrunner *r, enum line_kind kind)
{
    (void)s;
    return r->queued > 0 && kind != LINE_PLAIN;
}

void sim__vthread_serve(struct sim *s, struct vrunner *r)
{
    const struct profile *p = &s->o->prof;
    uint32_t c = r->cur;
    struct vconn *v = &s->conns[c];
    if (v->arrived == v->taken) {                   /* all handled: write them */
        if (r->queued > 0)
            sim__runner_run(s, r, sim__syscall_ns(s, p->write_ns), VS_WRITE);
        else
            sim__vthread_read(s, r, false);
        return;
    }
    uint32_t k = v->taken;
    enum line_kind kind = sim__line_kind(s, c, k);
    if (write_before(s, r, kind)) {
        sim__runner_run(s, r, sim__syscall_ns(s, p->write_ns), VS_FLUSH);
        return;
    }
    sim__line_taken(s, c);
    r->wait_line = k;                               /* its wait ends on a core */
    vtime_t cpu = sim__line_cpu(s, c, k);
    if (kind == LINE_SLEEP)
        sim__runner_run(s, r, cpu, VS_CALL);
    else if (kind == LINE_TASK)                     /* decode, then yield */
        sim__runner_run(s, r, cpu - sim__line_task(s, c, k) + vt_switch(s), VS_YIELD);
    else
        sim__runner_run(s, r, cpu, VS_LINE);
}

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

/* Runner t's burst is over: what its step was decides what follows. */
void sim__vthread_burst_done(struct sim *s, uint32_t t)
{
    struct vthread *th = &s->m.threads[t];
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

void sim__vthread_accepted(struct sim *s, uint32_t c)
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

void sim__vthread_fd_ready(struct sim *s, uint32_t c)
{
    struct vconn *v = &s->conns[c];
    if (v->vt != VTS_PARKED)
        return;                  /* not waiting: it reads the bytes anyway */
    v->vt = VTS_READY;
    sim__cq_push(s, &s->carriers[v->loop].ready, c);
    sim__carrier_wake(s, (int)v->loop);
}
