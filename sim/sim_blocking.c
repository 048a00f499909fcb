/* sim_blocking.c -- what the two blocking models share, as
 * models/blocking/ does for the real ones (vthread's acceptor too): an
 * acceptor thread, and a
 * thread per served connection that blocks in read(), handles a line,
 * writes the reply, and blocks again.
 *
 *   connect -> backlog -> acceptor: accept() [+ pthread_create]
 *           -> bio: a new thread (sim_bio.c)
 *           -> pool: an idle thread, a new one, or the queue (sim_pool.c)
 *   thread: read -> handle [-> !sleep: block] -> write -> read ... -> close
 */
#include <stdio.h>

#include "sim/sim_internal.h"

/* ---- the connection thread ------------------------------------------------------- */

/* Start handling the next line of c on its thread t (t is running, or
 * blocked in read and woken by this). */
static void conn_begin_line(struct sim *s, uint32_t t, uint32_t c)
{
    struct vconn *v = &s->conns[c];
    uint32_t k = v->taken;
    v->waiting_read = false;
    const struct profile *p = &s->o->prof;
    /* One read(), as models/blocking/conn.c blocks in (a stop wakes it
     * with a signal: no poll before each read). */
    vtime_t cpu = sim__syscall_ns(s, p->read_ns) + sim__line_cpu(s, c, k);
    bool sleeps = sim__line_sleep(s, c, k) > 0;
    if (!sleeps)
        cpu += sim__syscall_ns(s, p->write_ns);
    sim__line_taken(s, c);
    sim__run(s, t, cpu, C_LINE_HANDLED);
}

/* What t does next for c: a line that is there, the close, or read(). */
static void conn_thread_next(struct sim *s, uint32_t t, uint32_t c)
{
    struct vconn *v = &s->conns[c];
    if (v->arrived > v->taken) {
        conn_begin_line(s, t, c);
    } else if (v->client_closed) {
        sim__run(s, t, sim__syscall_ns(s, s->o->prof.close_ns), C_CLOSED);
    } else {
        v->waiting_read = true;                     /* blocked in read() */
        sim__block(s, t, VIZ_READING);
    }
}

/* A thread (BIO's own, or a pool task thread) starts serving c. */
void sim__conn_thread_start(struct sim *s, uint32_t t, uint32_t c)
{
    struct vconn *v = &s->conns[c];
    v->state = CS_OPEN;
    v->thread = t;
    s->m.threads[t].owner = c;
    if (s->m.threads[t].state == VT_RUNNING) {
        conn_thread_next(s, t, c);
        return;
    }
    if (v->arrived > v->taken) {
        conn_begin_line(s, t, c);
    } else if (v->client_closed) {
        sim__run(s, t, sim__syscall_ns(s, s->o->prof.close_ns), C_CLOSED);
    } else {
        v->waiting_read = true;
    }
}

void sim__blocking_line_arrived(struct sim *s, uint32_t c)
{
    struct vconn *v = &s->conns[c];
    if (v->state == CS_OPEN && v->waiting_read)
        conn_begin_line(s, v->thread, c);           /* wakes the thread */
}

void sim__blocking_client_closed(struct sim *s, uint32_t c)
{
    struct vconn *v = &s->conns[c];
    if (v->state == CS_OPEN && v->waiting_read) {
        v->waiting_read = false;
        sim__run(s, v->thread, sim__syscall_ns(s, s->o->prof.close_ns), C_CLOSED);
    }
}

bool sim__can_spawn(const struct sim *s)
{
    return s->o->max_threads == 0 || s->m.live < s->o->max_threads;
}

/* ---- the acceptor ------------------------------------------------------------------ */

/* The acceptor takes the next connection of the backlog: accept(), and
 * pthread_create when a thread will be made for it. */
static void accept_next(struct sim *s)
{
    s->accepting = sim__cq_pop(s, &s->backlog);
    const struct profile *p = &s->o->prof;
    vtime_t cpu = sim__syscall_ns(s, p->accept_ns);
    if (s->o->model == SIM_VTHREAD)                 /* a stack, and mail for a carrier */
        cpu += sim__syscall_ns(s, p->vt_stack_map_ns + p->eventfd_ns);
    else if (s->o->model == SIM_BIO || sim__pool_will_spawn(s))
        cpu += (vtime_t)p->thread_create_ns;
    sim__run(s, s->acceptor, cpu, C_ACCEPTED);
}

static void acceptor_next(struct sim *s)
{
    if (s->backlog.len == 0) {
        s->acceptor_blocked = true;
        sim__block(s, s->acceptor, VIZ_WAITING);
        return;
    }
    accept_next(s);
}

void sim__blocking_connect(struct sim *s, uint32_t c)
{
    sim__cq_push(s, &s->backlog, c);
    if (s->acceptor_blocked) {
        s->acceptor_blocked = false;
        accept_next(s);
    }
}

int sim__blocking_setup(struct sim *s)
{
    s->acceptor = sim__spawn(s, VT_NONE, VIZ_ACCEPTOR, "acceptor", 0);
    s->acceptor_blocked = true;
    return s->o->model == SIM_POOL ? sim__pool_setup(s) : 0;
}

/* ---- a burst done --------------------------------------------------------------------- */

void sim__blocking_burst_done(struct sim *s, uint32_t t)
{
    struct vthread *th = &s->m.threads[t];
    if (t == s->acceptor) {
        if (s->o->model == SIM_BIO)
            sim__bio_accepted(s, s->accepting);
        else if (s->o->model == SIM_VTHREAD)
            sim__vthread_accepted(s, s->accepting);
        else
            sim__pool_accepted(s, s->accepting);
        acceptor_next(s);
        return;
    }
    uint32_t c = th->owner;
    struct vconn *v = &s->conns[c];
    switch (th->cont) {
    case C_LINE_HANDLED: {
        sim__line_waited(s, c, v->taken - 1, th->burst_start);
        vtime_t sleep = sim__line_sleep(s, c, v->taken - 1);
        if (sleep > 0) {                            /* !sleep: the thread blocks */
            sim__block(s, t, VIZ_SLEEPING);
            sim__at(s, (double)sleep, EV_WAKE, t, C_REPLIED);
            return;
        }
        sim__reply_sent(s, c);
        sim__thread_line(s, t);
        conn_thread_next(s, t, c);
        return;
    }
    case C_REPLIED:
        sim__reply_sent(s, c);
        sim__thread_line(s, t);
        conn_thread_next(s, t, c);
        return;
    case C_CLOSED:
        sim__conn_closed(s, c);
        if (s->o->model == SIM_POOL)
            sim__pool_conn_done(s, t);
        else
            sim__bio_conn_done(s, t);
        return;
    }
}
