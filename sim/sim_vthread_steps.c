/* sim_vthread_steps.c -- model 5 on the simulated machine: what a runner
 * (a carrier's thread, or a spare) does inside one vthread, step by step:
 * switch in, read(), handle a line, write the replies, park.
 *
 *   read: lines -> VS_READ, then a line at a time (VS_LINE, VS_CALL,
 *         VS_YIELD), the replies written (VS_FLUSH, VS_WRITE), read again
 *         EOF   -> VS_CLOSE;   EAGAIN -> VS_PARK
 *
 * Each step is one burst on the machine; what follows it is in
 * sim_vthread.c (sim__vthread_burst_done), and the carrier's loop that
 * switches into a vthread is in sim_carrier.c. This file calls neither:
 * it is the bottom of model 5.
 */
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
