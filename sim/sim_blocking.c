/* sim_blocking.c -- what the two blocking models share, as
 * models/blocking/ does for the real ones (vthread's acceptor too): an
 * acceptor thread, and a thread per served connection that blocks in
 * read(), handles a line, writes the reply, and blocks again.
 *
 *   connect -> backlog -> acceptor: accept() [+ pthread_create]
 *           -> bio: a new thread (sim_bio.c)
 *           -> pool: an idle thread, a new one, or the queue (sim_pool.c)
 *           -> vthread: a virtual thread on a carrier (sim_vthread.c)
 *   thread: read -> handle [-> !sleep: block] -> write -> read ... -> close
 *
 * What differs by model (the cost on top of accept(), what becomes of an
 * accepted connection, of a thread whose connection closed) it asks the
 * model's table, s->ops: the models call this file, never the reverse.
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

/* A line or the client's close reached c: a thread blocked in its read()
 * wakes. (A line is begun at once by a thread that finds it there, so a
 * thread in read() has read every line: what woke it is the new one, or
 * the close.) */
void sim__blocking_input(struct sim *s, uint32_t c)
{
    struct vconn *v = &s->conns[c];
    if (v->state != CS_OPEN || !v->waiting_read)
        return;
    if (v->arrived > v->taken) {
        conn_begin_line(s, v->thread, c);           /* wakes the thread */
    } else if (v->client_closed) {
        v->waiting_read = false;
        sim__run(s, v->thread, sim__syscall_ns(s, s->o->prof.close_ns), C_CLOSED);
    }
}

/* Thread t's !sleep in a handler is over: it writes the reply. */
void sim__blocking_wake(struct sim *s, uint32_t t, uint32_t cont)
{
    (void)cont;                                     /* always C_REPLIED */
    sim__run(s, t, sim__syscall_ns(s, s->o->prof.write_ns), C_REPLIED);
}

bool sim__can_spawn(const struct sim *s)
{
    return s->o->max_threads == 0 || s->m.live < s->o->max_threads;
}

/* ---- the acceptor ------------------------------------------------------------------ */

/* The acceptor takes the next connection of the backlog: accept(), and
 * what the model does on top (pthread_create when a thread will be made
 * for it, a vthread's stack and mail). */
static void accept_next(struct sim *s)
{
    s->accepting = sim__cq_pop(s, &s->backlog);
    const struct profile *p = &s->o->prof;
    vtime_t cpu = sim__syscall_ns(s, p->accept_ns);
    cpu += s->ops->accept_cost(s);                  /* the model's: pthread_create, ... */
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

uint32_t sim__blocking_accept_queue(const struct sim *s)
{
    return s->backlog.len;
}

/* c reaches the server: the backlog, and the acceptor wakes if it waits. */
void sim__blocking_connect(struct sim *s, uint32_t c)
{
    if (s->viz) {
        simviz_count(s->viz, VIZ_ACCEPTED, 1);
        simviz_count(s->viz, VIZ_ACTIVE, 1);
        simviz_event(s->viz, VIZ_EV_ACCEPT, "conn %u", c + 1);
    }
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
    return 0;
}

/* ---- a burst done --------------------------------------------------------------------- */

void sim__blocking_burst_done(struct sim *s, uint32_t t)
{
    struct vthread *th = &s->m.threads[t];
    if (t == s->acceptor) {
        s->ops->accepted(s, s->accepting);          /* a thread, a vthread, the queue */
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
        s->ops->conn_done(s, t);                    /* the thread ends, or goes back */
        return;
    }
}
