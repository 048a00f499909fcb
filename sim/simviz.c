/* simviz.c -- a simulated run on a board. See simviz.h. */
#include "simviz.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "loop/loop.h"
#include "probe/board.h"
#include "net/clock.h"

struct sim_viz {
    struct sim_viz_ctl *ctl;
    struct board *board;
    char model[16], options[192];     /* to make the board again */
    struct board_thread_ref *refs;    /* by simulated thread id */
    uint32_t nrefs;
    struct board_loop *loops[BOARD_LOOP_SLOTS];
    int nloops;
    double wall_start_s;
    vtime_t virtual_start;            /* the run's time at wall_start_s */
    uint64_t speed_ppb;               /* the speed wall_start_s was taken at */
    uint64_t now_ns;                  /* the run's time on the board's clock */
};

static double wall_s(void)
{
    return now_ns() / 1e9;
}

void sim_viz_ctl_init(struct sim_viz_ctl *c, double speed)
{
    memset(c, 0, sizeof(*c));
    atomic_store(&c->speed_ppb, (uint64_t)(speed * 1e9));
    atomic_store(&c->replay_to, -1);
    pthread_mutex_init(&c->lock, NULL);
}

struct sim_viz *simviz_open(struct sim_viz_ctl *ctl, const char *model,
                            const char *options, char *err, size_t err_len)
{
    struct sim_viz *v = calloc(1, sizeof(*v));
    if (!v) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    v->ctl = ctl;
    snprintf(v->model, sizeof(v->model), "%s", model);
    snprintf(v->options, sizeof(v->options), "%s", options);
    v->board = board_create(model, options);
    if (!v->board) {
        snprintf(err, err_len, "cannot publish a board (see the warning above)");
        free(v);
        return NULL;
    }
    /* The run's time 0 on the board's clock: threads that begin before
     * the first event must not be dated 0 (a FOR of the machine's uptime). */
    v->now_ns = board_sim_clock(v->board, 0);
    v->wall_start_s = wall_s();
    v->speed_ppb = atomic_load(&ctl->speed_ppb);
    return v;
}

void simviz_close(struct sim_viz *v)
{
    if (!v)
        return;
    board_close(v->board);
    free(v->refs);
    free(v);
}

const char *simviz_board_path(const struct sim_viz *v)
{
    return board_path(v->board);
}

static struct board_thread_ref *ref(struct sim_viz *v, uint32_t t)
{
    if (t >= v->nrefs) {
        uint32_t n = v->nrefs ? v->nrefs : 256;
        while (n <= t)
            n *= 2;
        struct board_thread_ref *r = realloc(v->refs, n * sizeof(*r));
        if (!r)
            return NULL;
        memset(r + v->nrefs, 0, (n - v->nrefs) * sizeof(*r));
        v->refs = r;
        v->nrefs = n;
    }
    return &v->refs[t];
}

static const enum board_role roles[] = {
    [VIZ_ACCEPTOR] = ROLE_ACCEPTOR, [VIZ_CONN] = ROLE_CONN,
    [VIZ_POOL_THREAD] = ROLE_POOL_WORKER, [VIZ_BOSS] = ROLE_BOSS,
    [VIZ_WORKER] = ROLE_WORKER_LOOP, [VIZ_BUSINESS] = ROLE_BUSINESS,
    [VIZ_CLIENT] = ROLE_CHECKER, [VIZ_CARRIER] = ROLE_CARRIER,
    [VIZ_MONITOR] = ROLE_MONITOR,
};

static const enum board_state states[] = {
    [VIZ_RUNNING] = STATE_RUNNING, [VIZ_RUNNABLE] = STATE_RUNNABLE,
    [VIZ_READING] = STATE_BLOCKED_IO,
    [VIZ_SLEEPING] = STATE_BLOCKED_SLEEP, [VIZ_WAITING] = STATE_WAITING,
    [VIZ_IDLE] = STATE_IDLE,
};

void simviz_thread(struct sim_viz *v, uint32_t t, enum viz_role role, const char *name,
                   uint64_t conn)
{
    struct board_thread_ref *r = ref(v, t);
    if (r) {
        board_thread_begin_at(v->board, r, roles[role], name, conn, v->now_ns);
        board_thread_tid(v->board, r, 0);      /* a simulated thread: no CPU to read */
        board_add(v->board, CTR_THREADS_SPAWNED, 1);
    }
}

void simviz_thread_conn(struct sim_viz *v, uint32_t t, uint64_t conn)
{
    struct board_thread_ref *r = ref(v, t);
    if (r)
        board_thread_conn(v->board, r, conn);
}

void simviz_state(struct sim_viz *v, uint32_t t, enum viz_state st)
{
    struct board_thread_ref *r = ref(v, t);
    if (r)
        board_thread_state_at(v->board, r, states[st], v->now_ns);
}

void simviz_lines(struct sim_viz *v, uint32_t t, uint64_t n)
{
    struct board_thread_ref *r = ref(v, t);
    if (r)
        board_thread_lines(v->board, r, n);
}

void simviz_thread_end(struct sim_viz *v, uint32_t t)
{
    struct board_thread_ref *r = ref(v, t);
    if (r) {
        board_thread_end_at(v->board, r, v->now_ns);
        board_add(v->board, CTR_THREADS_EXITED, 1);
    }
}

static const enum board_counter counters[] = {
    [VIZ_ACCEPTED] = CTR_ACCEPTED, [VIZ_ACTIVE] = CTR_ACTIVE, [VIZ_CLOSED] = CTR_CLOSED,
    [VIZ_LINES] = CTR_LINES, [VIZ_REJECTED] = CTR_REJECTED,
    [VIZ_OFFLOADED] = CTR_OFFLOADED,
};

void simviz_count(struct sim_viz *v, enum viz_counter c, int64_t delta)
{
    if (delta >= 0)
        board_add(v->board, counters[c], (uint64_t)delta);
    else
        board_sub(v->board, counters[c], (uint64_t)-delta);
}

static const char *const kind_names[VIZ_KIND_COUNT] = {
    "event", "accept", "assign", "spawn", "exit", "reject", "block", "close",
    "queued", "reply",
};

const char *viz_kind_name(enum viz_kind k)
{
    return (unsigned)k < VIZ_KIND_COUNT ? kind_names[k] : "event";
}

/* Something a class can step to happened. */
static void happened(struct sim_viz *v, enum viz_kind k)
{
    atomic_fetch_add(&v->ctl->kind_seen[k], 1);
    atomic_store(&v->ctl->last_kind, (int)k);
}

/* A reply reached its client: the line's latency is known. */
void simviz_latency(struct sim_viz *v, uint64_t ns)
{
    board_record_latency(v->board, ns);
    happened(v, VIZ_KIND_REPLY);
}

static const enum board_event_kind events[] = {
    [VIZ_EV_ACCEPT] = EV_ACCEPT, [VIZ_EV_ASSIGN] = EV_ASSIGN, [VIZ_EV_SPAWN] = EV_SPAWN,
    [VIZ_EV_EXIT] = EV_EXIT, [VIZ_EV_REJECT] = EV_REJECT, [VIZ_EV_BLOCKED] = EV_BLOCKED,
    [VIZ_EV_CLOSE] = EV_CLOSE, [VIZ_EV_QUEUED] = EV_TASK_QUEUED,
};

static const enum viz_kind event_kinds[] = {
    [VIZ_EV_ACCEPT] = VIZ_KIND_ACCEPT, [VIZ_EV_ASSIGN] = VIZ_KIND_ASSIGN,
    [VIZ_EV_SPAWN] = VIZ_KIND_SPAWN, [VIZ_EV_EXIT] = VIZ_KIND_EXIT,
    [VIZ_EV_REJECT] = VIZ_KIND_REJECT, [VIZ_EV_BLOCKED] = VIZ_KIND_BLOCK,
    [VIZ_EV_CLOSE] = VIZ_KIND_CLOSE, [VIZ_EV_QUEUED] = VIZ_KIND_QUEUED,
};

void simviz_event(struct sim_viz *v, enum viz_event kind, const char *fmt, ...)
{
    char text[BOARD_TEXT_BYTES];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    board_event_at(v->board, events[kind], v->now_ns, "%s", text);
    happened(v, event_kinds[kind]);
}

int simviz_loop(struct sim_viz *v, const char *name)
{
    if (v->nloops == BOARD_LOOP_SLOTS)
        return -1;
    struct board_loop *l = board_loop_claim(v->board, name);
    if (!l)
        return -1;
    atomic_store_explicit(&l->phase, LOOP_PHASE_WAITING, memory_order_relaxed);
    v->loops[v->nloops] = l;
    return v->nloops++;
}

void simviz_loop_channels(struct sim_viz *v, int loop, uint64_t channels)
{
    if (loop >= 0 && loop < v->nloops)
        atomic_store_explicit(&v->loops[loop]->channels, channels, memory_order_relaxed);
}

void simviz_loop_blocked(struct sim_viz *v, int loop, bool blocked)
{
    if (loop >= 0 && loop < v->nloops)
        atomic_store_explicit(&v->loops[loop]->blocked_since_ns,
                              blocked ? v->now_ns : 0, memory_order_relaxed);
}

void simviz_loop_waiting(struct sim_viz *v, int loop, bool waiting)
{
    if (loop >= 0 && loop < v->nloops)
        atomic_store_explicit(&v->loops[loop]->phase,
                              waiting ? LOOP_PHASE_WAITING : LOOP_PHASE_IO,
                              memory_order_relaxed);
}

void simviz_loop_time(struct sim_viz *v, int loop, uint64_t io_ns, uint64_t task_ns)
{
    if (loop >= 0 && loop < v->nloops) {
        atomic_store_explicit(&v->loops[loop]->io_ns, io_ns, memory_order_relaxed);
        atomic_store_explicit(&v->loops[loop]->task_ns, task_ns, memory_order_relaxed);
    }
}

bool simviz_reset(struct sim_viz *v)
{
    board_close(v->board);
    free(v->refs);
    v->refs = NULL;
    v->nrefs = 0;
    v->nloops = 0;
    for (int k = 0; k < VIZ_KIND_COUNT; k++)
        atomic_store(&v->ctl->kind_seen[k], 0);
    atomic_store(&v->ctl->last_kind, VIZ_KIND_NONE);
    v->board = board_create(v->model, v->options);
    if (v->board)
        v->now_ns = board_sim_clock(v->board, 0);
    return v->board != NULL;
}

/* Going back, or on to a kind: this event runs at once, unshown.
 * Arriving there pauses. The events count is stored before replay_to is
 * cleared (see struct sim_viz_ctl). */
static bool run_through(struct sim_viz_ctl *c, uint64_t events_done)
{
    int64_t replay_to = atomic_load(&c->replay_to);
    if (replay_to >= 0) {
        if (events_done < (uint64_t)replay_to)
            return true;
        atomic_store(&c->events, events_done);
        atomic_store(&c->paused, true);
        atomic_store(&c->replay_to, -1);
        return false;
    }
    uint64_t until = atomic_load(&c->until);
    while (until != 0) {
        if (atomic_load(&c->kind_seen[VIZ_UNTIL_KIND(until)]) < VIZ_UNTIL_SEEN(until))
            return true;
        /* There: pause, unless a press moved the target meanwhile. */
        if (atomic_compare_exchange_strong(&c->until, &until, 0)) {
            atomic_store(&c->paused, true);
            break;
        }
    }
    return false;
}

void sim_viz_step_to_kind(struct sim_viz_ctl *c)
{
    atomic_store(&c->paused, true);
    uint64_t old = atomic_load(&c->until), next;
    do {
        int kind = old ? VIZ_UNTIL_KIND(old) : atomic_load(&c->last_kind);
        if (kind == VIZ_KIND_NONE) {
            atomic_fetch_add(&c->steps, 1);
            return;
        }
        next = old ? old + 1 : VIZ_UNTIL(kind, atomic_load(&c->kind_seen[kind]) + 1);
    } while (!atomic_compare_exchange_weak(&c->until, &old, next));
}

bool simviz_pace(struct sim_viz *v, vtime_t at, uint64_t events_done, const char *desc)
{
    struct sim_viz_ctl *c = v->ctl;
    v->now_ns = board_sim_clock(v->board, at);   /* the board's time is the run's */
    if (atomic_load(&c->restart) || atomic_load(&c->quit))
        return false;                            /* a step back: start over */
    if (run_through(c, events_done)) {
        atomic_store(&c->vnow_ns, at);
        return true;
    }
    atomic_store(&c->events, events_done);
    pthread_mutex_lock(&c->lock);
    snprintf(c->last, sizeof(c->last), "%s", desc);
    pthread_mutex_unlock(&c->lock);
    atomic_store(&c->vnow_ns, at);
    if (c->shown)
        c->shown(c->shown_arg, events_done, desc);
    for (;;) {
        if (atomic_load(&c->quit) || atomic_load(&c->restart))
            return false;
        uint64_t speed = atomic_load(&c->speed_ppb);
        if (atomic_load(&c->paused)) {
            if (atomic_load(&c->steps) > 0) {
                atomic_fetch_sub(&c->steps, 1);
                break;                           /* one event, then pause again */
            }
            if (atomic_load(&c->until) != 0)
                break;                           /* on to the next of a kind */
            /* Resume from here, at whatever speed, without a jump. */
            v->wall_start_s = wall_s();
            v->virtual_start = at;
            struct timespec nap = { 0, 20 * 1000000L };
            nanosleep(&nap, NULL);
            continue;
        }
        if (speed != v->speed_ppb) {             /* a new speed starts from here */
            v->speed_ppb = speed;
            v->wall_start_s = wall_s();
            v->virtual_start = at;
        }
        double due_s = v->wall_start_s + (double)(at - v->virtual_start) / ((double)speed);
        double wait = due_s - wall_s();
        if (wait <= 0)
            break;
        if (wait > 0.05)
            wait = 0.05;                         /* look at the keys now and then */
        struct timespec nap = { 0, (long)(wait * 1e9) };
        nanosleep(&nap, NULL);
    }
    return true;
}

void simviz_finish(struct sim_viz *v)
{
    atomic_store(&v->ctl->finished, true);
    board_event_at(v->board, EV_CLOSE, v->now_ns, "the simulated run is over");
}
