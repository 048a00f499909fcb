/* sim.c -- the four models and their clients on the simulated machine.
 *
 *   client: connect -> send a line -> (network) -> server -> reply ->
 *           (network) -> think -> send ... -> close
 *   server: threads that take CPU in bursts on the machine (machine.c):
 *     bio           an acceptor, and a thread per connection that blocks
 *                   in read, handles a line, writes, blocks again
 *     pool          an acceptor that hands connections to task threads
 *                   (min..max); the rest wait in a bounded queue
 *     reactor       one loop: accept, read, handle, write, in turn
 *     multireactor  a boss loop accepts and hands each connection to a
 *                   worker loop, round robin
 *   Loops may offload !cpu/!sleep lines to a business pool; the reply
 *   comes back to the loop as a task, in order per connection.
 *
 * What a line is (plain, !cpu, !sleep, its service time) is a function of
 * (seed, connection, line number), so nothing per line is stored and a
 * run is the same whatever order the events come in.
 */
#include "sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "des/engine.h"
#include "des/machine.h"
#include "des/rng.h"
#include "des/simviz.h"
#include "net/net.h"

enum event_kind {
    EV_CORE,            /* machine: a core's stretch ended */
    EV_CONNECT,         /* a client's connection reaches the server */
    EV_SEND,            /* a client sends its next line */
    EV_LINE,            /* a line reaches the server */
    EV_REPLY,           /* a reply reaches the client */
    EV_CLOSE,           /* a client's close reaches the server */
    EV_WAKE,            /* a thread's !sleep is over (gen: its next step) */
};

/* What a thread does when its burst ends (machine.h: cont). */
enum cont {
    C_ACCEPTED,         /* acceptor: one connection accepted */
    C_LINE_HANDLED,     /* conn thread: a line handled (and written, unless it slept) */
    C_REPLIED,          /* conn thread: the reply of a slept line written */
    C_CLOSED,           /* conn thread: the connection closed */
    C_LOOP_STEP,        /* loop: the step it was doing is done */
    C_BIZ_DONE,         /* business thread: an offloaded line handled */
    C_BIZ_SLEPT,        /* business thread: an offloaded !sleep is over */
    C_BIZ_SUBMITTED,    /* business thread: the reply handed to the loop */
    C_CLIENT,           /* the client thread: one reply read and checked */
};

enum line_kind { LINE_PLAIN, LINE_CPU, LINE_SLEEP };

enum conn_state { CS_NEW, CS_BACKLOG, CS_QUEUED, CS_OPEN, CS_DONE, CS_REFUSED };

struct vconn {
    uint8_t state;
    bool client_closed;          /* its close reached the server */
    bool waiting_read;           /* blocking models: its thread is in read() */
    bool in_ready;               /* loops: on its loop's ready list */
    bool offloaded;              /* loops: a line is on the business pool */
    uint32_t thread;             /* blocking models: who serves it */
    uint32_t loop;               /* loops: its worker */
    uint32_t next;               /* intrusive FIFO link (backlog, queue, ready) */
    uint32_t arrived;            /* lines that reached the server */
    uint32_t taken;              /* lines the server has begun */
    uint32_t answered;           /* replies that reached the client */
    uint32_t sent;               /* lines the client sent */
    vtime_t last_send;           /* closed loop: when the outstanding line left */
};

/* A FIFO of connections, linked through vconn.next. */
struct cqueue {
    uint32_t head, tail, len;
};

struct vloop {
    uint32_t thread;
    bool in_epoll;               /* blocked, waiting for events */
    bool is_boss;
    struct cqueue ready;         /* connections with lines to read */
    struct cqueue accepts;       /* boss: connections to accept */
    struct cqueue tasks;         /* offloaded lines come back here */
    uint32_t batch_left;         /* ready connections left in this round */
    uint32_t cur;                /* the connection being served, or VT_NONE */
    uint32_t cur_lines;          /* lines handled for cur since its read */
    uint64_t channels;
};

struct sim {
    const struct sim_opts *o;
    struct sim_report *r;
    struct des_engine eng;
    struct machine m;
    struct vconn *conns;
    uint64_t seed;
    double period_ns;            /* open loop: between one connection's lines */
    double *phase_ns;            /* open loop: each connection's first send */
    vtime_t send_until;          /* no line is sent after this */
    uint64_t open_conns, peak_conns;

    /* blocking models */
    uint32_t acceptor;
    bool acceptor_blocked;
    struct cqueue backlog;
    uint32_t accepting;          /* the connection the acceptor is on */
    struct cqueue pool_queue;    /* pool: accepted, waiting for a thread */
    uint32_t *idle;              /* pool: idle task threads (a stack) */
    uint32_t nidle, pool_size;

    /* loops */
    struct vloop *loops;
    int nloops;                  /* workers, then the boss (multireactor) */
    int boss;
    int workers;                 /* worker loops (multireactor) */
    uint32_t next_worker;
    struct cqueue biz_queue;     /* business pool: offloaded connections */
    uint32_t *biz_idle;
    uint32_t nbiz_idle;

    /* the client thread (--client-cpu): replies waiting for it, a ring */
    uint32_t client;
    bool client_blocked;
    uint32_t *client_q;
    uint32_t cq_head, cq_len, cq_cap;

    double wait_sum_ns;
    uint64_t waits;
    struct sim_viz *viz;         /* --viz: the board it plays on, or NULL */
};

/* ---- little helpers ----------------------------------------------------------- */

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* A uniform number in [0, 1) for (connection, line, salt). */
static double line_uniform(const struct sim *s, uint32_t c, uint32_t k, uint32_t salt)
{
    uint64_t h = mix64(s->seed ^ mix64(((uint64_t)c << 32 | k) ^ ((uint64_t)salt << 56)));
    return (double)(h >> 11) * 0x1.0p-53;
}

static enum line_kind line_kind(const struct sim *s, uint32_t c, uint32_t k)
{
    double u = line_uniform(s, c, k, 1) * 100.0;
    if (u < s->o->cpu_pct)
        return LINE_CPU;
    if (u < s->o->cpu_pct + s->o->sleep_pct)
        return LINE_SLEEP;
    return LINE_PLAIN;
}

/* CPU to handle line k of connection c: decode and reply, plus its work. */
static vtime_t line_cpu(const struct sim *s, uint32_t c, uint32_t k)
{
    double ns = s->o->prof.handle_ns;
    if (s->o->service_exp_us > 0)
        ns += -s->o->service_exp_us * 1e3 * log1p(-line_uniform(s, c, k, 2));
    if (line_kind(s, c, k) == LINE_CPU)
        ns += s->o->cpu_us * 1e3;
    return (vtime_t)ns;
}

static vtime_t line_sleep(const struct sim *s, uint32_t c, uint32_t k)
{
    return line_kind(s, c, k) == LINE_SLEEP ? (vtime_t)(s->o->sleep_ms * 1e6) : 0;
}

/* When line k of connection c left the client. */
static vtime_t line_sent_at(const struct sim *s, uint32_t c, uint32_t k)
{
    if (s->o->rate > 0)
        return (vtime_t)(s->phase_ns[c] + k * s->period_ns);
    return s->conns[c].last_send;
}

static void at(struct sim *s, double delay_ns, uint32_t kind, uint32_t id, uint32_t gen)
{
    if (des_schedule(&s->eng, (vtime_t)delay_ns, kind, id, gen) < 0)
        abort();                 /* out of memory: the run cannot go on */
}

/* The machine's run and block, shown on the board when --viz is on. */
static void run(struct sim *s, uint32_t t, vtime_t cpu_ns, uint32_t cont)
{
    if (s->viz)
        simviz_state(s->viz, t, VIZ_RUNNING);
    machine_run(&s->m, t, cpu_ns, cont);
}

static void block(struct sim *s, uint32_t t, enum viz_state why)
{
    if (s->viz)
        simviz_state(s->viz, t, why);
    machine_block(&s->m, t);
}

static uint32_t spawn(struct sim *s, uint32_t owner, enum viz_role role,
                      const char *name, uint64_t conn)
{
    uint32_t t = machine_spawn(&s->m, owner);
    if (t != VT_NONE && s->viz) {
        simviz_thread(s->viz, t, role, name, conn);
        simviz_state(s->viz, t, role == VIZ_CONN ? VIZ_READING : VIZ_WAITING);
    }
    return t;
}

static void thread_exit(struct sim *s, uint32_t t)
{
    if (s->viz)
        simviz_thread_end(s->viz, t);
    machine_exit(&s->m, t);
}

/* The server closed connection c (its client had closed). */
static void conn_closed(struct sim *s, uint32_t c)
{
    s->conns[c].state = CS_DONE;
    s->open_conns--;
    if (s->viz) {
        simviz_count(s->viz, VIZ_CLOSED, 1);
        simviz_count(s->viz, VIZ_ACTIVE, -1);
    }
}

static void cq_push(struct sim *s, struct cqueue *q, uint32_t c)
{
    s->conns[c].next = VT_NONE;
    if (q->len++ == 0)
        q->head = c;
    else
        s->conns[q->tail].next = c;
    q->tail = c;
}

static uint32_t cq_pop(struct sim *s, struct cqueue *q)
{
    uint32_t c = q->head;
    q->head = s->conns[c].next;
    q->len--;
    return c;
}

static void conn_opened(struct sim *s)
{
    if (++s->open_conns > s->peak_conns)
        s->peak_conns = s->open_conns;
}

/* The server has begun line k of c: note how long it waited there. */
static void line_taken(struct sim *s, uint32_t c)
{
    struct vconn *v = &s->conns[c];
    vtime_t arrived = line_sent_at(s, c, v->taken) + (vtime_t)s->o->prof.net_one_way_ns;
    if (s->eng.now >= arrived) {
        s->wait_sum_ns += (double)(s->eng.now - arrived);
        s->waits++;
    }
    v->taken++;
}

static void reply_sent(struct sim *s, uint32_t c)
{
    at(s, s->o->prof.net_one_way_ns, EV_REPLY, c, 0);
    if (s->viz)
        simviz_count(s->viz, VIZ_LINES, 1);
}

static bool more_to_send(const struct sim *s, uint32_t c)
{
    const struct vconn *v = &s->conns[c];
    if (s->o->lines_per_conn > 0 && v->sent >= s->o->lines_per_conn)
        return false;
    return s->eng.now < s->send_until;
}

static void refuse(struct sim *s, uint32_t c, const char *why)
{
    if (s->conns[c].state != CS_NEW)
        s->open_conns--;                            /* it had reached us */
    s->conns[c].state = CS_REFUSED;
    s->r->conns_refused++;
    if (s->viz) {
        simviz_count(s->viz, VIZ_REJECTED, 1);
        simviz_event(s->viz, VIZ_EV_REJECT, "conn %u refused: %s", c + 1, why);
    }
}

/* ---- the clients ----------------------------------------------------------------- */

static void client_send(struct sim *s, uint32_t c)
{
    struct vconn *v = &s->conns[c];
    if (v->state == CS_REFUSED || !more_to_send(s, c))
        return;
    v->last_send = s->eng.now;
    v->sent++;
    s->r->lines_sent++;
    at(s, s->o->prof.net_one_way_ns, EV_LINE, c, 0);
    if (s->o->rate > 0 && more_to_send(s, c))
        at(s, s->period_ns, EV_SEND, c, 0);
}

static void client_close(struct sim *s, uint32_t c)
{
    at(s, s->o->prof.net_one_way_ns, EV_CLOSE, c, 0);
}

static void on_reply(struct sim *s, uint32_t c)
{
    struct vconn *v = &s->conns[c];
    vtime_t sent = line_sent_at(s, c, v->answered);
    hist_record(&s->r->latency_ns, s->eng.now - sent);
    if (s->viz)
        simviz_latency(s->viz, s->eng.now - sent);
    v->answered++;
    s->r->lines_ok++;
    if (s->o->rate > 0) {                           /* open loop */
        if (v->answered == v->sent && !more_to_send(s, c))
            client_close(s, c);
        return;
    }
    if (more_to_send(s, c)) {                       /* closed loop: think, send */
        double think = s->o->think_us > 0
            ? -s->o->think_us * 1e3 * log1p(-line_uniform(s, c, v->answered, 3)) : 0;
        at(s, think, EV_SEND, c, 0);
    } else {
        client_close(s, c);
    }
}

/* With --client-cpu the clients are a thread on the machine: a reply is
 * seen only once that thread has read and checked it. */
static vtime_t client_line_ns(const struct sim *s)
{
    const struct profile *p = &s->o->prof;
    return (vtime_t)(p->read_ns + p->handle_ns + p->write_ns);
}

static void reply_reaches_client(struct sim *s, uint32_t c)
{
    if (!s->o->client_on_machine) {
        on_reply(s, c);
        return;
    }
    if (s->cq_len == s->cq_cap) {
        uint32_t cap = s->cq_cap ? s->cq_cap * 2 : 1024;
        uint32_t *q = malloc(cap * sizeof(*q));
        if (!q)
            abort();
        for (uint32_t i = 0; i < s->cq_len; i++)
            q[i] = s->client_q[(s->cq_head + i) % s->cq_cap];
        free(s->client_q);
        s->client_q = q;
        s->cq_head = 0;
        s->cq_cap = cap;
    }
    s->client_q[(s->cq_head + s->cq_len++) % s->cq_cap] = c;
    if (s->client_blocked) {
        s->client_blocked = false;
        run(s, s->client, client_line_ns(s), C_CLIENT);
    }
}

static void client_burst_done(struct sim *s)
{
    uint32_t c = s->client_q[s->cq_head];
    s->cq_head = (s->cq_head + 1) % s->cq_cap;
    s->cq_len--;
    on_reply(s, c);
    if (s->cq_len > 0) {
        run(s, s->client, client_line_ns(s), C_CLIENT);
    } else {
        s->client_blocked = true;
        block(s, s->client, VIZ_WAITING);
    }
}

/* ---- blocking models: the acceptor and the connection threads ------------------ */

static void conn_thread_next(struct sim *s, uint32_t t, uint32_t c);

/* Start handling the next line of c on its thread t (t is running, or
 * blocked in read and woken by this). */
static void conn_begin_line(struct sim *s, uint32_t t, uint32_t c)
{
    struct vconn *v = &s->conns[c];
    uint32_t k = v->taken;
    v->waiting_read = false;
    const struct profile *p = &s->o->prof;
    vtime_t cpu = (vtime_t)p->read_ns + line_cpu(s, c, k);
    bool sleeps = line_sleep(s, c, k) > 0;
    if (!sleeps)
        cpu += (vtime_t)p->write_ns;
    line_taken(s, c);
    run(s, t, cpu, C_LINE_HANDLED);
}

static void conn_thread_next(struct sim *s, uint32_t t, uint32_t c)
{
    struct vconn *v = &s->conns[c];
    if (v->arrived > v->taken) {
        conn_begin_line(s, t, c);
    } else if (v->client_closed) {
        run(s, t, (vtime_t)s->o->prof.close_ns, C_CLOSED);
    } else {
        v->waiting_read = true;                     /* blocked in read() */
        block(s, t, VIZ_READING);
    }
}

/* A thread (BIO's own, or a pool task thread) starts serving c. */
static void conn_thread_start(struct sim *s, uint32_t t, uint32_t c)
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
        run(s, t, (vtime_t)s->o->prof.close_ns, C_CLOSED);
    } else {
        v->waiting_read = true;
    }
}

static bool can_spawn(const struct sim *s)
{
    /* LAB 08 BEGIN: the machine's thread limit. A new thread may be made
     * unless --max-threads is set (not 0) and that many threads are alive
     * already (s->m.live): then pthread_create fails, and BIO must refuse
     * the connection. This is what breaks BIO at 100 000 connections.
     * STUB: (void)s;
     * STUB: return true;
     */
    return s->o->max_threads == 0 || s->m.live < s->o->max_threads;
    /* LAB 08 END */
}

/* The acceptor has accepted c: give it a thread. */
static void accepted_blocking(struct sim *s, uint32_t c)
{
    if (s->o->model == SIM_BIO) {
        if (!can_spawn(s)) {
            refuse(s, c, "no more threads (--max-threads)");
            return;
        }
        char name[32];
        snprintf(name, sizeof(name), "conn-%u", c + 1);
        uint32_t t = spawn(s, c, VIZ_CONN, name, c + 1);
        if (t == VT_NONE) {
            refuse(s, c, "out of memory");
            return;
        }
        if (s->viz)
            simviz_event(s->viz, VIZ_EV_SPAWN, "conn-%u: a thread for conn %u, %u live",
                         c + 1, c + 1, s->m.live);
        conn_thread_start(s, t, c);
        return;
    }
    /* pool: an idle thread, a new thread, the queue, or "busy" */
    if (s->nidle > 0) {
        conn_thread_start(s, s->idle[--s->nidle], c);
    } else if ((int)s->pool_size < s->o->pool_max && can_spawn(s)) {
        char name[32];
        snprintf(name, sizeof(name), "task-%u", s->pool_size + 1);
        uint32_t t = spawn(s, c, VIZ_POOL_THREAD, name, c + 1);
        if (t == VT_NONE) {
            refuse(s, c, "out of memory");
            return;
        }
        s->pool_size++;
        if (s->viz)
            simviz_event(s->viz, VIZ_EV_SPAWN, "%s: no idle thread, size %u of max %d",
                         name, s->pool_size, s->o->pool_max);
        conn_thread_start(s, t, c);
    } else if ((int)s->pool_queue.len < s->o->pool_queue) {
        s->conns[c].state = CS_QUEUED;
        cq_push(s, &s->pool_queue, c);
        if (s->viz)
            simviz_event(s->viz, VIZ_EV_QUEUED, "conn %u waits: all %u threads busy, "
                         "%u queued", c + 1, s->pool_size, s->pool_queue.len);
    } else {
        refuse(s, c, "the queue is full (--queue)");  /* "!err busy" */
    }
}

/* The acceptor takes the next connection of the backlog: accept(), and
 * pthread_create when a thread will be made for it. */
static void accept_next(struct sim *s)
{
    s->accepting = cq_pop(s, &s->backlog);
    vtime_t cpu = (vtime_t)s->o->prof.accept_ns;
    if (s->o->model == SIM_BIO ||
        (s->nidle == 0 && (int)s->pool_size < s->o->pool_max))
        cpu += (vtime_t)s->o->prof.thread_create_ns;
    run(s, s->acceptor, cpu, C_ACCEPTED);
}

static void acceptor_next(struct sim *s)
{
    if (s->backlog.len == 0) {
        s->acceptor_blocked = true;
        block(s, s->acceptor, VIZ_WAITING);
        return;
    }
    accept_next(s);
}

static void blocking_burst_done(struct sim *s, uint32_t t)
{
    struct vthread *th = &s->m.threads[t];
    if (t == s->acceptor) {
        accepted_blocking(s, s->accepting);
        acceptor_next(s);
        return;
    }
    uint32_t c = th->owner;
    struct vconn *v = &s->conns[c];
    switch (th->cont) {
    case C_LINE_HANDLED: {
        vtime_t sleep = line_sleep(s, c, v->taken - 1);
        if (sleep > 0) {                            /* !sleep: the thread blocks */
            block(s, t, VIZ_SLEEPING);
            at(s, (double)sleep, EV_WAKE, t, C_REPLIED);
            return;
        }
        reply_sent(s, c);
        conn_thread_next(s, t, c);
        return;
    }
    case C_REPLIED:
        reply_sent(s, c);
        conn_thread_next(s, t, c);
        return;
    case C_CLOSED:
        conn_closed(s, c);
        if (s->o->model == SIM_POOL) {              /* next task, or idle */
            if (s->pool_queue.len > 0) {
                conn_thread_start(s, t, cq_pop(s, &s->pool_queue));
            } else {
                s->idle[s->nidle++] = t;
                block(s, t, VIZ_IDLE);
            }
        } else {
            thread_exit(s, t);
        }
        return;
    }
}

/* ---- loops --------------------------------------------------------------------- */

static void loop_step(struct sim *s, int l);

static const char *loop_name(const struct sim *s, int l)
{
    static char name[32];
    if (s->o->model == SIM_REACTOR)
        return "reactor";
    if (l == s->boss)
        return "boss";
    snprintf(name, sizeof(name), "worker-%d", l + 1);
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
    run(s, lp->thread, (vtime_t)s->o->prof.epoll_wait_ns, C_LOOP_STEP);
}

static void mark_ready(struct sim *s, uint32_t c)
{
    struct vconn *v = &s->conns[c];
    if (v->in_ready || v->offloaded || v->state != CS_OPEN)
        return;
    v->in_ready = true;
    cq_push(s, &s->loops[v->loop].ready, c);
    loop_wake(s, (int)v->loop);
}

/* The loop's work, one step per burst: accept one connection (boss), run
 * an offloaded line's reply (a task), or serve one ready connection. */
static void loop_step(struct sim *s, int l)
{
    struct vloop *lp = &s->loops[l];
    const struct profile *p = &s->o->prof;
    if (lp->cur != VT_NONE) {                       /* finish serving cur */
        uint32_t c = lp->cur;
        struct vconn *v = &s->conns[c];
        if (v->arrived > v->taken && !v->offloaded) {
            uint32_t k = v->taken;
            if (s->o->offload > 0 && line_kind(s, c, k) != LINE_PLAIN) {
                /* Hand it to the business pool; this channel waits. */
                line_taken(s, c);
                v->offloaded = true;
                cq_push(s, &s->biz_queue, c);
                if (s->nbiz_idle > 0) {
                    uint32_t b = s->biz_idle[--s->nbiz_idle];
                    uint32_t bc = cq_pop(s, &s->biz_queue);
                    s->m.threads[b].owner = bc;
                    run(s, b, line_cpu(s, bc, s->conns[bc].taken - 1),
                                C_BIZ_DONE);
                }
                run(s, lp->thread, (vtime_t)p->eventfd_ns, C_LOOP_STEP);
                return;
            }
            line_taken(s, c);
            lp->cur_lines++;
            vtime_t sleep = line_sleep(s, c, k);
            if (sleep > 0) {                        /* the whole loop sleeps */
                if (s->viz) {
                    simviz_loop_blocked(s->viz, l, true);
                    simviz_event(s->viz, VIZ_EV_BLOCKED, "%s sleeps %.0f ms in a handler: "
                                 "its %llu connections wait", loop_name(s, l),
                                 (double)sleep / 1e6, (unsigned long long)lp->channels);
                }
                block(s, lp->thread, VIZ_SLEEPING);
                at(s, (double)sleep, EV_WAKE, lp->thread, C_LOOP_STEP);
                return;
            }
            run(s, lp->thread, line_cpu(s, c, k), C_LOOP_STEP);
            return;
        }
        /* Everything read is handled: one write for all of it (and a
         * close, if the client has gone meanwhile). */
        lp->cur = VT_NONE;
        if (lp->cur_lines > 0) {
            for (uint32_t i = 0; i < lp->cur_lines; i++)
                reply_sent(s, c);
            lp->cur_lines = 0;
            double cpu = p->write_ns;
            if (v->client_closed && !v->offloaded) {
                conn_closed(s, c);
                loop_channels(s, (int)v->loop, -1);
                cpu += p->close_ns;
            }
            run(s, lp->thread, (vtime_t)cpu, C_LOOP_STEP);
            return;
        }
    }
    if (lp->accepts.len > 0) {                      /* boss work */
        uint32_t c = cq_pop(s, &lp->accepts);
        struct vconn *v = &s->conns[c];
        int w = s->o->model == SIM_REACTOR ? 0 : (int)(s->next_worker++ % (uint32_t)s->workers);
        v->loop = (uint32_t)w;
        v->state = CS_OPEN;
        loop_channels(s, w, +1);
        if (s->viz) {
            simviz_count(s->viz, VIZ_ACCEPTED, 1);
            simviz_count(s->viz, VIZ_ACTIVE, 1);
            if (s->o->model == SIM_REACTOR)
                simviz_event(s->viz, VIZ_EV_ACCEPT, "conn %u", c + 1);
            else
                simviz_event(s->viz, VIZ_EV_ASSIGN, "conn %u -> worker-%d: round robin "
                             "(%d of %d)", c + 1, w + 1, w + 1, s->workers);
        }
        vtime_t cpu = (vtime_t)p->accept_ns;
        if (w != l)
            cpu += (vtime_t)p->eventfd_ns;          /* the hand-off wakes the worker */
        if (v->client_closed || v->arrived > v->taken)
            mark_ready(s, c);
        run(s, lp->thread, cpu, C_LOOP_STEP);
        return;
    }
    if (lp->tasks.len > 0) {                        /* an offloaded reply */
        uint32_t c = cq_pop(s, &lp->tasks);
        struct vconn *v = &s->conns[c];
        v->offloaded = false;
        reply_sent(s, c);
        if (v->arrived > v->taken || v->client_closed)
            mark_ready(s, c);
        run(s, lp->thread, (vtime_t)p->write_ns, C_LOOP_STEP);
        return;
    }
    if (lp->ready.len > 0) {
        if (lp->batch_left == 0) {                  /* a new round: epoll_wait */
            lp->batch_left = lp->ready.len;
            run(s, lp->thread, (vtime_t)p->epoll_wait_ns, C_LOOP_STEP);
            return;
        }
        lp->batch_left--;
        uint32_t c = cq_pop(s, &lp->ready);
        struct vconn *v = &s->conns[c];
        v->in_ready = false;
        if (v->state != CS_OPEN) {                  /* closed since it was listed */
            run(s, lp->thread, 0, C_LOOP_STEP);
            return;
        }
        if (v->arrived == v->taken && v->client_closed && !v->offloaded) {
            conn_closed(s, c);                      /* EOF: close it */
            loop_channels(s, (int)v->loop, -1);
            run(s, lp->thread, (vtime_t)(p->read_ns + p->close_ns),
                        C_LOOP_STEP);
            return;
        }
        lp->cur = c;
        lp->cur_lines = 0;
        run(s, lp->thread, (vtime_t)p->read_ns, C_LOOP_STEP);
        return;
    }
    lp->in_epoll = true;                            /* nothing to do: wait */
    if (s->viz)
        simviz_loop_waiting(s->viz, l, true);
    lp->batch_left = 0;
    block(s, lp->thread, VIZ_WAITING);
}

static void biz_burst_done(struct sim *s, uint32_t t)
{
    struct vthread *th = &s->m.threads[t];
    uint32_t c = th->owner;
    if (th->cont == C_BIZ_DONE) {
        vtime_t sleep = line_sleep(s, c, s->conns[c].taken - 1);
        if (sleep > 0) {
            block(s, t, VIZ_SLEEPING);
            at(s, (double)sleep, EV_WAKE, t, C_BIZ_SLEPT);
            return;
        }
        run(s, t, (vtime_t)s->o->prof.eventfd_ns, C_BIZ_SUBMITTED);
        return;
    }
    /* The reply goes back to the channel's loop, as a task. */
    struct vloop *lp = &s->loops[s->conns[c].loop];
    cq_push(s, &lp->tasks, c);
    loop_wake(s, (int)s->conns[c].loop);
    if (s->biz_queue.len > 0) {
        uint32_t next = cq_pop(s, &s->biz_queue);
        th->owner = next;
        run(s, t, line_cpu(s, next, s->conns[next].taken - 1), C_BIZ_DONE);
    } else {
        s->biz_idle[s->nbiz_idle++] = t;
        block(s, t, VIZ_IDLE);
    }
}

/* ---- dispatch --------------------------------------------------------------------- */

static void burst_done(void *ctx, uint32_t t)
{
    struct sim *s = ctx;
    if (s->o->client_on_machine && t == s->client)
        client_burst_done(s);
    else if (s->o->model == SIM_BIO || s->o->model == SIM_POOL)
        blocking_burst_done(s, t);
    else if (t < (uint32_t)s->nloops)               /* loops were spawned first */
        loop_step(s, (int)t);
    else
        biz_burst_done(s, t);
}

/* A !sleep is over: the thread goes on with its next step. */
static void on_wake(struct sim *s, uint32_t t, uint32_t cont)
{
    switch (cont) {
    case C_BIZ_SLEPT:
        run(s, t, (vtime_t)s->o->prof.eventfd_ns, C_BIZ_SUBMITTED);
        break;
    case C_REPLIED:
        run(s, t, (vtime_t)s->o->prof.write_ns, C_REPLIED);
        break;
    default:                                        /* a loop */
        if (s->viz)
            simviz_loop_blocked(s->viz, (int)t, false);
        run(s, t, 0, cont);
    }
}

static void on_connect(struct sim *s, uint32_t c)
{
    struct vconn *v = &s->conns[c];
    if (s->o->backlog > 0 && s->backlog.len + (s->nloops ? s->loops[s->boss].accepts.len : 0)
                                 >= s->o->backlog) {
        refuse(s, c, "the accept queue is full (--backlog)");
        return;
    }
    s->r->conns_opened++;
    conn_opened(s);
    if (s->viz && s->nloops == 0) {
        simviz_count(s->viz, VIZ_ACCEPTED, 1);
        simviz_count(s->viz, VIZ_ACTIVE, 1);
        simviz_event(s->viz, VIZ_EV_ACCEPT, "conn %u", c + 1);
    }
    v->state = CS_BACKLOG;
    if (s->nloops > 0) {
        cq_push(s, &s->loops[s->boss].accepts, c);
        if (s->loops[s->boss].in_epoll) {
            s->loops[s->boss].in_epoll = false;
            s->loops[s->boss].batch_left = 0;
            run(s, s->loops[s->boss].thread,
                        (vtime_t)s->o->prof.epoll_wait_ns, C_LOOP_STEP);
        }
    } else {
        cq_push(s, &s->backlog, c);
        if (s->acceptor_blocked) {
            s->acceptor_blocked = false;
            accept_next(s);
        }
    }
    /* The client sends as soon as it is connected: the kernel holds its
     * lines until the server reads them. */
    if (s->o->rate > 0) {
        double first = s->phase_ns[c] - (double)s->eng.now;
        at(s, first > 0 ? first : 0, EV_SEND, c, 0);
    } else {
        client_send(s, c);
    }
}

static void on_line(struct sim *s, uint32_t c)
{
    struct vconn *v = &s->conns[c];
    if (v->state == CS_REFUSED)
        return;
    v->arrived++;
    if (s->nloops > 0) {
        mark_ready(s, c);
    } else if (v->state == CS_OPEN && v->waiting_read) {
        conn_begin_line(s, v->thread, c);           /* wakes the thread */
    }
}

static void on_close(struct sim *s, uint32_t c)
{
    struct vconn *v = &s->conns[c];
    if (v->state == CS_REFUSED)
        return;
    v->client_closed = true;
    if (s->nloops > 0) {
        mark_ready(s, c);
    } else if (v->state == CS_OPEN && v->waiting_read) {
        v->waiting_read = false;
        run(s, v->thread, (vtime_t)s->o->prof.close_ns, C_CLOSED);
    }
}

/* ---- set up, run, report -------------------------------------------------------- */

static const char *const model_names[SIM_MODEL_COUNT] = {
    "bio", "pool", "reactor", "multireactor",
};

const char *sim_model_name(enum sim_model m)
{
    return (unsigned)m < SIM_MODEL_COUNT ? model_names[m] : "?";
}

int sim_model_by_name(const char *name)
{
    for (int i = 0; i < SIM_MODEL_COUNT; i++)
        if (strcmp(model_names[i], name) == 0)
            return i;
    return -1;
}

void sim_opts_init(struct sim_opts *o, enum sim_model model)
{
    memset(o, 0, sizeof(*o));
    o->model = model;
    o->cores = 2;
    profile_default(&o->prof);
    o->seed = 1;
    o->conns = 1;
    o->duration_s = 10;
    o->max_threads = 32768;      /* Linux's default pid_max */
    o->backlog = 0;              /* 0: unbounded (the kernel's queue is
                                    not what these runs are about) */
    o->pool_min = 4;
    o->pool_max = 16;
    o->pool_queue = 1024;
    o->workers = 0;              /* 0: 2 x cores, as the real multireactor */
    o->io_ratio = 50;
}

int sim_opts_check(const struct sim_opts *o, char *err, size_t err_len)
{
    const char *why = NULL;
    if (o->cores < 1 || o->cores > 4096)
        why = "--cores must be from 1 to 4096";
    else if (o->conns < 1 || o->conns > 50000000)
        why = "--conns must be from 1 to 50000000";
    else if (o->duration_s <= 0 && o->lines_per_conn == 0)
        why = "give --duration or --lines-per-conn";
    else if (o->cpu_pct < 0 || o->sleep_pct < 0 || o->cpu_pct + o->sleep_pct > 100)
        why = "--mix shares must add up to at most 100%";
    else if (o->pool_min < 0 || o->pool_max < 1 || o->pool_min > o->pool_max)
        why = "--min and --max must be 0 <= min <= max, max >= 1";
    else if (o->workers < 0 || o->workers > 4096)
        why = "--workers must be from 1 to 4096 (0: 2 x cores)";
    else if (o->offload < 0 || o->offload > 100000)
        why = "--offload must be from 0 to 100000";
    else if (o->rate < 0 || o->think_us < 0 || o->ramp_s < 0)
        why = "--rate, --think-us and --ramp must not be negative";
    if (why) {
        snprintf(err, err_len, "%s", why);
        return -1;
    }
    return 0;
}

/* A pool's thread, made at the start and idle: "task-3", "biz-1". */
static uint32_t spawn_idle(struct sim *s, enum viz_role role, const char *prefix, int n)
{
    char name[32];
    snprintf(name, sizeof(name), "%s-%d", prefix, n);
    uint32_t t = spawn(s, VT_NONE, role, name, 0);
    if (s->viz && t != VT_NONE)
        simviz_state(s->viz, t, VIZ_IDLE);
    return t;
}

/* The client thread is spawned last: the loops' thread ids come first. */
static int spawn_client(struct sim *s)
{
    if (!s->o->client_on_machine)
        return 0;
    s->client = spawn(s, VT_NONE, VIZ_CLIENT, "clients", 0);
    s->client_blocked = true;
    return s->client == VT_NONE ? -1 : 0;
}

static int setup(struct sim *s)
{
    const struct sim_opts *o = s->o;
    s->conns = calloc(o->conns, sizeof(*s->conns));
    if (!s->conns)
        return -1;
    if (des_init(&s->eng, 4096) < 0 ||
        machine_init(&s->m, &s->eng, &o->prof, o->cores, EV_CORE, burst_done, s) < 0)
        return -1;
    struct rng rng;
    rng_seed(&rng, o->seed);
    s->seed = rng_next(&rng);
    s->send_until = o->duration_s > 0 ? (vtime_t)(o->duration_s * 1e9) : UINT64_MAX;
    if (o->rate > 0) {
        s->period_ns = (double)o->conns / o->rate * 1e9;
        s->phase_ns = malloc(o->conns * sizeof(double));
        if (!s->phase_ns)
            return -1;
    }
    /* When each client connects: evenly over the ramp, or at random in it. */
    for (uint32_t c = 0; c < o->conns; c++) {
        double when = o->ramp_s * 1e9 *
                      (o->random_connects ? rng_uniform(&rng) : (double)c / o->conns);
        if (o->rate > 0)
            s->phase_ns[c] = when + rng_uniform(&rng) * s->period_ns;
        s->conns[c].thread = VT_NONE;
        at(s, when + o->prof.net_one_way_ns, EV_CONNECT, c, 0);
    }

    if (o->model == SIM_BIO || o->model == SIM_POOL) {
        s->acceptor = spawn(s, VT_NONE, VIZ_ACCEPTOR, "acceptor", 0);
        s->acceptor_blocked = true;
        if (o->model == SIM_POOL) {
            s->idle = malloc((size_t)o->pool_max * sizeof(*s->idle));
            if (!s->idle)
                return -1;
            for (int i = 0; i < o->pool_min; i++) {
                s->idle[s->nidle++] = spawn_idle(s, VIZ_POOL_THREAD, "task", i + 1);
                s->pool_size++;
            }
        }
        return spawn_client(s);
    }
    /* Loops: the workers (the reactor has one, which is also the boss). */
    s->workers = o->workers > 0 ? o->workers : 2 * o->cores;
    int nworkers = o->model == SIM_REACTOR ? 1 : s->workers;
    s->nloops = nworkers + (o->model == SIM_MULTIREACTOR ? 1 : 0);
    s->loops = calloc((size_t)s->nloops, sizeof(*s->loops));
    if (!s->loops)
        return -1;
    s->boss = o->model == SIM_REACTOR ? 0 : nworkers;
    for (int l = 0; l < s->nloops; l++) {
        const char *name = loop_name(s, l);
        s->loops[l].thread = spawn(s, (uint32_t)l, l == s->boss ? VIZ_BOSS : VIZ_WORKER,
                                   name, 0);
        s->loops[l].in_epoll = true;
        s->loops[l].cur = VT_NONE;
        if (s->viz)
            simviz_loop(s->viz, name);
    }
    if (o->offload > 0) {
        s->biz_idle = malloc((size_t)o->offload * sizeof(*s->biz_idle));
        if (!s->biz_idle)
            return -1;
        for (int i = 0; i < o->offload; i++)
            s->biz_idle[s->nbiz_idle++] = spawn_idle(s, VIZ_BUSINESS, "biz", i + 1);
    }
    return spawn_client(s);
}

/* One event in words, for the screen's status line (--viz only). */
static void describe(const struct sim *s, const struct des_event *ev, char *out,
                     size_t len)
{
    uint32_t c = ev->id;
    switch (ev->kind) {
    case EV_CORE:
        snprintf(out, len, "core %u: its thread's burst or slice ends", c);
        break;
    case EV_CONNECT:
        snprintf(out, len, "conn %u reaches the server", c + 1);
        break;
    case EV_SEND:
        snprintf(out, len, "client %u sends line %u", c + 1, s->conns[c].sent + 1);
        break;
    case EV_LINE:
        snprintf(out, len, "a line of conn %u reaches the server", c + 1);
        break;
    case EV_REPLY:
        snprintf(out, len, "reply %u reaches client %u", s->conns[c].answered + 1, c + 1);
        break;
    case EV_CLOSE:
        snprintf(out, len, "conn %u's close reaches the server", c + 1);
        break;
    case EV_WAKE:
        snprintf(out, len, "thread %u wakes from !sleep", c);
        break;
    default:
        snprintf(out, len, "event %u", ev->kind);
    }
}

static long self_peak_rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

int sim_run(const struct sim_opts *o, struct sim_report *r)
{
    struct sim *s = calloc(1, sizeof(*s));
    if (!s)
        return -1;
    memset(r, 0, sizeof(*r));
    hist_init(&r->latency_ns);
    s->o = o;
    s->r = r;
    s->viz = o->viz;
    double wall_start = net_now_ns() / 1e9;
    int rc = setup(s);
    if (rc == 0) {
        struct des_event ev;
        while (des_next(&s->eng, &ev)) {
            if (s->viz) {
                char what[160];
                describe(s, &ev, what, sizeof(what));
                if (!simviz_pace(s->viz, ev.at, s->eng.processed - 1, what))
                    break;                          /* quit from the screen */
            }
            switch (ev.kind) {
            case EV_CORE:    machine_core_event(&s->m, ev.id, ev.gen); break;
            case EV_CONNECT: on_connect(s, ev.id); break;
            case EV_SEND:    client_send(s, ev.id); break;
            case EV_LINE:    on_line(s, ev.id); break;
            case EV_REPLY:   reply_reaches_client(s, ev.id); break;
            case EV_CLOSE:   on_close(s, ev.id); break;
            case EV_WAKE:    on_wake(s, ev.id, ev.gen); break;
            }
        }
        if (s->viz)
            simviz_finish(s->viz);
        r->virtual_s = (double)s->eng.now / 1e9;
        r->lines_per_s = r->virtual_s > 0 ? (double)r->lines_ok / r->virtual_s : 0;
        r->mean_wait_ns = s->waits ? s->wait_sum_ns / (double)s->waits : 0;
        r->waits = s->waits;
        r->cpu_busy_pct = s->eng.now
            ? 100.0 * (double)machine_busy_ns(&s->m) / ((double)s->eng.now * o->cores) : 0;
        r->core_busy_min_pct = 100;
        for (int c = 0; c < o->cores; c++) {
            double pct = s->eng.now ? 100.0 * (double)s->m.cores[c].busy_ns /
                                          (double)s->eng.now : 0;
            if (c < SIM_REPORT_CORES)
                r->core_busy_pct[c] = pct;
            if (pct < r->core_busy_min_pct)
                r->core_busy_min_pct = pct;
            if (pct > r->core_busy_max_pct)
                r->core_busy_max_pct = pct;
        }
        r->context_switches = s->m.context_switches;
        r->preemptions = s->m.preemptions;
        r->peak_threads = s->m.peak_live;
        r->peak_stack_bytes = (double)s->m.peak_live * o->prof.stack_kb * 1024.0;
        r->peak_conn_bytes = (double)s->peak_conns * o->prof.conn_kb * 1024.0;
        for (uint32_t c = 0; c < o->conns; c++)
            if (s->conns[c].state == CS_QUEUED || s->conns[c].state == CS_BACKLOG)
                r->conns_unserved++;
        r->events = s->eng.processed;
    }
    r->wall_s = net_now_ns() / 1e9 - wall_start;
    r->events_per_s = r->wall_s > 0 ? (double)r->events / r->wall_s : 0;
    r->peak_rss_kb = self_peak_rss_kb();
    machine_free(&s->m);
    des_free(&s->eng);
    free(s->conns);
    free(s->phase_ns);
    free(s->idle);
    free(s->loops);
    free(s->biz_idle);
    free(s->client_q);
    free(s);
    return rc;
}

/* ---- reports ------------------------------------------------------------------------ */

static void print_ns(FILE *out, double ns)
{
    if (ns >= 1e9)
        fprintf(out, "%.2fs", ns / 1e9);
    else if (ns >= 1e6)
        fprintf(out, "%.1fms", ns / 1e6);
    else
        fprintf(out, "%.1fus", ns / 1e3);
}

static void print_bytes(FILE *out, double b)
{
    if (b >= 1024.0 * 1024 * 1024)
        fprintf(out, "%.1f GiB", b / (1024.0 * 1024 * 1024));
    else
        fprintf(out, "%.1f MiB", b / (1024.0 * 1024));
}

void sim_report_print(const struct sim_opts *o, const struct sim_report *r, FILE *out)
{
    fprintf(out, "sim %s: %d cores, %u conns, %s, seed %llu\n", sim_model_name(o->model),
            o->cores, o->conns, o->rate > 0 ? "open loop" : "closed loop",
            (unsigned long long)o->seed);
    fprintf(out, "  lines    %llu ok of %llu sent in %.2fs (simulated): %.0f lines/s\n",
            (unsigned long long)r->lines_ok, (unsigned long long)r->lines_sent,
            r->virtual_s, r->lines_per_s);
    fprintf(out, "  latency ");
    static const double pcts[] = { 50, 90, 99, 99.9 };
    static const char *const names[] = { "p50", "p90", "p99", "p99.9" };
    for (int i = 0; i < 4; i++) {
        fprintf(out, " %s ", names[i]);
        print_ns(out, (double)hist_percentile(&r->latency_ns, pcts[i]));
    }
    fprintf(out, " max ");
    print_ns(out, (double)atomic_load(&r->latency_ns.max));
    fprintf(out, "\n  wait     mean ");
    print_ns(out, r->mean_wait_ns);
    fprintf(out, " at the server before a line is handled\n");
    fprintf(out, "  conns    %llu opened, %llu refused, %llu never served\n",
            (unsigned long long)r->conns_opened, (unsigned long long)r->conns_refused,
            (unsigned long long)r->conns_unserved);
    fprintf(out, "  cpu      %.1f%% busy on %d cores; %llu context switches "
            "(%llu preemptions)\n", r->cpu_busy_pct, o->cores,
            (unsigned long long)r->context_switches, (unsigned long long)r->preemptions);
    fprintf(out, "  cores   ");
    if (o->cores <= 16) {
        for (int c = 0; c < o->cores; c++)
            fprintf(out, " %.0f%%", r->core_busy_pct[c]);
        fprintf(out, " busy, core by core\n");
    } else {
        fprintf(out, " %.0f%% to %.0f%% busy, from the idlest core to the busiest\n",
                r->core_busy_min_pct, r->core_busy_max_pct);
    }
    fprintf(out, "  threads  %u at most; stacks ", r->peak_threads);
    print_bytes(out, r->peak_stack_bytes);
    fprintf(out, " reserved (%.0f KiB each); connections ", o->prof.stack_kb);
    print_bytes(out, r->peak_conn_bytes);
    fprintf(out, "\n  errors   ");
    if (r->conns_refused == 0 && r->conns_unserved == 0)
        fprintf(out, "none\n");
    else
        fprintf(out, "%llu connections refused, %llu left waiting\n",
                (unsigned long long)r->conns_refused,
                (unsigned long long)r->conns_unserved);
    fprintf(out, "  engine   %llu events in %.2fs: %.1fM events/s, peak RSS %ld MiB\n",
            (unsigned long long)r->events, r->wall_s, r->events_per_s / 1e6,
            r->peak_rss_kb / 1024);
}

void sim_report_json(const struct sim_opts *o, const struct sim_report *r, FILE *out)
{
    fprintf(out, "{\"model\":\"%s\",\"cores\":%d,\"conns\":%u,\"seed\":%llu,"
            "\"lines_sent\":%llu,\"lines_ok\":%llu,\"virtual_s\":%.6f,\"lines_per_s\":%.1f,"
            "\"latency_us\":{\"p50\":%.1f,\"p90\":%.1f,\"p99\":%.1f,\"p99.9\":%.1f,"
            "\"max\":%.1f},\"mean_wait_us\":%.3f,\"conns_opened\":%llu,"
            "\"conns_refused\":%llu,\"conns_unserved\":%llu,\"cpu_busy_pct\":%.2f,"
            "\"context_switches\":%llu,\"preemptions\":%llu,\"peak_threads\":%u,"
            "\"peak_stack_bytes\":%.0f,\"peak_conn_bytes\":%.0f,\"events\":%llu,",
            sim_model_name(o->model), o->cores, o->conns, (unsigned long long)o->seed,
            (unsigned long long)r->lines_sent, (unsigned long long)r->lines_ok,
            r->virtual_s, r->lines_per_s,
            hist_percentile(&r->latency_ns, 50) / 1e3,
            hist_percentile(&r->latency_ns, 90) / 1e3,
            hist_percentile(&r->latency_ns, 99) / 1e3,
            hist_percentile(&r->latency_ns, 99.9) / 1e3,
            atomic_load(&r->latency_ns.max) / 1e3, r->mean_wait_ns / 1e3,
            (unsigned long long)r->conns_opened, (unsigned long long)r->conns_refused,
            (unsigned long long)r->conns_unserved, r->cpu_busy_pct,
            (unsigned long long)r->context_switches, (unsigned long long)r->preemptions,
            r->peak_threads, r->peak_stack_bytes, r->peak_conn_bytes,
            (unsigned long long)r->events);
    fprintf(out, "\"core_busy_pct\":[");
    for (int c = 0; c < o->cores && c < SIM_REPORT_CORES; c++)
        fprintf(out, "%s%.2f", c ? "," : "", r->core_busy_pct[c]);
    fprintf(out, "],\"core_busy_min_pct\":%.2f,\"core_busy_max_pct\":%.2f}\n",
            r->core_busy_min_pct, r->core_busy_max_pct);
}
