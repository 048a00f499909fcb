/* sim_internal.h -- what the simulator's files share, and nothing outside
 * sim/ may include: the run's state and the helpers every model uses.
 *
 * Calls run one way, down this list (tests/arch/sim_calls.sh checks it):
 *
 *   sim.c              the run: set up, the event loop, and dispatch, only
 *                      through the model's table (struct sim_model_ops)
 *   sim_models.c       --model -> its table
 *   sim_bio.c          model 1: a thread per connection
 *   sim_pool.c         model 2: task threads min..max, then a queue
 *   sim_reactor.c      model 3: one loop does everything
 *   sim_multireactor.c model 4: a boss loop hands connections to workers
 *   sim_vthread.c      model 5: a virtual thread per connection: spawned,
 *                      woken by its fd, and what follows a runner's step
 *   sim_carrier.c      model 5's carriers: their loop, blocking calls, the
 *                      monitor's handoff to a spare
 *   sim_vthread_steps.c model 5: a runner's steps inside one vthread: its
 *                      read, its lines, its writes
 *   sim_blocking.c     what bio, pool and vthread's acceptor share: the
 *                      acceptor, and a thread that blocks in read, handles
 *                      a line, writes
 *   sim_loop.c         what both loop models share: a loop's step, offload
 *   sim_client.c       the clients: send, think, time each reply
 *   sim_report.c       the report, as text and JSON
 *   sim_opts.c         the options: defaults, checks, what a run needs
 *   sim_core.c         what all of them share: lines, threads on the
 *                      machine, connections
 *
 * A model reaches the shared helpers by name; a shared helper reaches
 * the model's own part (what the acceptor does with a connection, which
 * worker gets it) through the model's table, s->ops.
 *
 * Everything here runs on the one simulation thread.
 */
#ifndef THREADLAB_SIM_INTERNAL_H
#define THREADLAB_SIM_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/engine.h"
#include "sim/machine.h"
#include "sim/rng.h"
#include "sim/sim.h"
#include "sim/simviz.h"

enum event_kind {
    EV_CORE,            /* machine: a core's stretch ended */
    EV_CONNECT,         /* a client's connection reaches the server */
    EV_SEND,            /* a client sends its next line */
    EV_LINE,            /* a line reaches the server */
    EV_REPLY,           /* a reply reaches the client */
    EV_CLOSE,           /* a client's close reaches the server */
    EV_WAKE,            /* a thread's !sleep is over (gen: its next step) */
    EV_LOOK,            /* vthread: the monitor looks at a carrier (id) */
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
    C_VT_STEP,          /* vthread: a carrier's runner, its step (vrunner.step) */
    C_VT_CALLED,        /* vthread: a runner's blocking call (!sleep) is over */
    C_VT_MONITOR,       /* vthread: the monitor has made a spare's thread */
};

enum line_kind {
    LINE_PLAIN,         /* echo it */
    LINE_CPU,           /* !cpu: CPU on the handling thread */
    LINE_SLEEP,         /* !sleep: the handling thread blocks */
    LINE_TASK,          /* !task: CPU queued as a task on the channel's loop
                           (the blocking models burn it on their thread) */
};

enum conn_state {
    CS_NEW,             /* not connected yet */
    CS_BACKLOG,         /* in the accept queue */
    CS_QUEUED,          /* pool: accepted, waiting for a task thread */
    CS_OPEN,            /* served by a thread or a loop */
    CS_DONE,            /* closed by the server after the client's close */
    CS_REFUSED,         /* refused (busy, no thread, backlog full) */
};

struct vconn {
    uint8_t state;               /* enum conn_state */
    bool client_closed;          /* its close reached the server */
    bool waiting_read;           /* blocking models: its thread is in read() */
    bool in_ready;               /* loops: on its loop's ready list */
    bool offloaded;              /* loops: a line is away (on the business
                                    pool, or a !task queued on its loop):
                                    the channel waits for its reply */
    uint8_t vt;                  /* vthread: its virtual thread (enum vt_state) */
    uint32_t thread;             /* blocking models: who serves it */
    uint32_t loop;               /* loops: its worker; vthread: its carrier */
    uint32_t next[2];            /* intrusive FIFO links (enum cq_link) */
    uint32_t arrived;            /* lines that reached the server */
    uint32_t taken;              /* lines the server has begun */
    uint32_t answered;           /* replies that reached the client */
    uint32_t sent;               /* lines the client sent */
    vtime_t last_send;           /* closed loop: when the outstanding line left */
};

/* Which of a connection's two links a queue uses. A connection may be in
 * one queue of each kind at once: a loop's ready list (new lines came)
 * while its offloaded line is on the business queue or back as a task. */
enum cq_link {
    CQ_WAIT,            /* the backlog, the pool's queue, a loop's ready list */
    CQ_JOB,             /* the business queue, a loop's tasks */
};

/* A FIFO of connections, linked through vconn.next[link]. */
struct cqueue {
    uint32_t head, tail, len;
    uint8_t link;                /* enum cq_link (0: CQ_WAIT) */
};

struct vloop {
    uint32_t thread;             /* the loop's thread */
    bool in_epoll;               /* blocked, waiting for events */
    struct cqueue ready;         /* connections with lines to read */
    struct cqueue accepts;       /* boss: connections to accept */
    struct cqueue tasks;         /* offloaded lines come back here */
    uint32_t batch_left;         /* ready connections left in this round */
    uint32_t cur;                /* the connection being served, or VT_NONE */
    uint32_t cur_lines;          /* lines handled for cur since its read */
    uint64_t channels;           /* connections it serves */
    uint32_t flush_conn;         /* replies being written for this channel ... */
    uint32_t flush_lines;        /* ... this many, sent when the write is paid */
    bool flush_close;            /* ... and then the channel closes */
    uint32_t wait_conn;          /* the line being handled: its wait ends ... */
    uint32_t wait_line;          /* ... when this burst got a core */
    vtime_t io_ns, task_ns;      /* CPU asked for I/O work and for tasks */
    double task_budget_ns;       /* ioRatio: task time left while channels
                                    are ready (io x (100 - ratio) / ratio) */
};

/* A virtual thread's life (vthread; vconn.vt), drawn in sim_vthread.c. */
enum vt_state {
    VTS_NONE,           /* no vthread (yet, or another model) */
    VTS_MAIL,           /* spawned: in its carrier's mailbox */
    VTS_RUNNABLE,       /* on the run queue: resumes into its read() */
    VTS_YIELDED,        /* on the run queue after a !task's yield: resumes
                           into the task's CPU */
    VTS_RUNNING,        /* a runner is in it */
    VTS_PARKED,         /* read() said EAGAIN: waits for its fd */
    VTS_READY,          /* parked, its fd ready: on the carrier's ready list
                           until the next epoll_wait */
    VTS_CALL,           /* in a blocking call (!sleep), on its runner */
    VTS_DONE,           /* returned: stack unmapped */
};

/* What a runner's burst does (vrunner.step), and so what follows it. */
enum vt_step {
    VS_POLL,            /* epoll_wait: the mail and the ready fds' vthreads
                           join the run queue */
    VS_READ,            /* [switched into cur and] read(): lines, to handle */
    VS_LINE,            /* handled one of cur's lines: its reply is queued */
    VS_FLUSH,           /* wrote the replies queued before a line's work */
    VS_WRITE,           /* wrote cur's replies: they leave */
    VS_PARK,            /* read() said EAGAIN: cur parks, switched out */
    VS_YIELD,           /* a !task line decoded: cur yields, switched out */
    VS_CALL,            /* a !sleep line decoded: the call begins */
    VS_CLOSE,           /* read() said EOF: closed, stack unmapped, switched out */
};

/* A kernel thread that runs a carrier's loop: the carrier's own, or a
 * spare the monitor started. */
struct vrunner {
    uint32_t thread;             /* on the machine; VT_NONE: a free slot */
    uint32_t carrier;            /* the carrier it runs or waits for */
    bool spare;                  /* ends once nobody needs it */
    uint32_t number;             /* a spare's N (spare-N) */
    uint8_t step;                /* enum vt_step: its burst now */
    uint32_t cur;                /* the vthread (connection) it is in, or VT_NONE */
    uint32_t queued;             /* cur's replies handled, not yet written */
    uint32_t wait_line;          /* the line whose wait ends when this burst
                                    got a core, or VT_NONE */
    uint32_t next_waiter;        /* the carrier's next waiting runner */
};

/* A carrier: an epoll loop with a run queue of vthreads, run by one
 * runner at a time (models/vthread/carrier.c's token). */
struct vcarrier {
    uint32_t owner;              /* the runner holding it, or VT_NONE: given
                                    up by a blocking call, held by nobody */
    bool in_epoll;               /* its owner waits in epoll_wait */
    struct cqueue mail;          /* spawned vthreads, not yet adopted */
    struct cqueue ready;         /* parked vthreads whose fd is ready */
    struct cqueue runq;          /* runnable vthreads */
    uint32_t round_left;         /* of this turn of the run queue */
    uint32_t blocked;            /* its runners in a blocking call, without --pin */
    vtime_t released_at;         /* when the last of them gave it up */
    uint32_t waiters, waiters_tail;  /* runners back from a call, waiting for
                                    it (a FIFO through next_waiter) */
    uint64_t vthreads;           /* its vthreads alive */
};

struct sim_model_ops;

struct sim {
    const struct sim_opts *o;
    const struct sim_model_ops *ops;   /* the model's table (sim_models.c) */
    struct sim_report *r;
    struct des_engine eng;
    struct machine m;
    struct vconn *conns;
    uint64_t seed;               /* the run's salt for per-line draws */
    double period_ns;            /* open loop: between one connection's lines
                                    (sim__line_sent_at rounds each send
                                    time, never the period) */
    vtime_t *phase_ns;           /* open loop: each connection's first send */
    vtime_t send_until;          /* no line is sent after this */
    uint64_t open_conns, peak_conns;

    /* blocking models */
    uint32_t acceptor;           /* the acceptor's thread */
    bool acceptor_blocked;       /* in accept(), waiting */
    struct cqueue backlog;       /* connected, not accepted yet */
    uint32_t accepting;          /* the connection the acceptor is on */
    struct cqueue pool_queue;    /* pool: accepted, waiting for a thread */
    uint32_t *idle;              /* pool: idle task threads (a stack) */
    uint32_t nidle, pool_size;

    /* loops */
    struct vloop *loops;
    int nloops;                  /* workers, then the boss (multireactor) */
    int boss;                    /* the loop that accepts */
    int workers;                 /* worker loops (multireactor) */
    uint32_t next_worker;        /* multireactor: round robin */
    struct cqueue biz_queue;     /* business pool: offloaded connections */
    uint32_t *biz_idle;          /* idle business threads (a stack) */
    uint32_t nbiz_idle;

    /* virtual threads */
    struct vcarrier *carriers;
    int ncarriers;
    uint32_t next_carrier;       /* round robin */
    struct vrunner *runners;     /* the carriers' own (index = carrier), then spares */
    uint32_t nrunners, runners_cap;
    uint32_t monitor;            /* the monitor's thread */
    bool monitor_busy;           /* in a burst: making a spare's thread */
    uint32_t *spares_due;        /* runners whose thread the monitor makes
                                    next, a ring of ncarriers */
    uint32_t due_head, due_len;
    uint32_t spares_live;
    uint64_t vthreads_live;

    /* the client thread (--client-cpu): replies waiting for it, a ring */
    uint32_t client;
    bool client_blocked;
    uint32_t *client_q;
    uint32_t cq_head, cq_len, cq_cap;
    uint32_t client_round_left;  /* replies left of its epoll_wait's round */
    vtime_t client_timer_at;     /* open loop: when its timer next woke it
                                    (lines due before then leave then) */

    /* what the report needs on top of the counters */
    double wait_sum_ns;          /* line at the server -> it first got a core */
    uint64_t waits, waits_nonzero;
    double latency_sum_ns;       /* every reply's latency, exactly */
    uint64_t in_system;          /* lines sent, not answered nor lost */
    vtime_t in_system_at;        /* when in_system last changed */
    double in_system_area;       /* the integral of in_system over time, ns */
    double lost_sojourn_ns;      /* lines lost (refused, left waiting): time
                                    from their send to their loss or the end */
    bool window_taken;           /* the sending window's figures are taken */
    vtime_t window_end;          /* when sending ended (--duration) */
    uint64_t window_lines;       /* replies received by then */
    vtime_t *window_core_busy;   /* each core's busy time by then */
    struct rng costs;            /* draws each syscall's and wakeup's cost */
    struct sim_viz *viz;         /* --viz: the board it plays on, or NULL */
    bool out_of_memory;          /* an allocation failed: the run stops at
                                    the end of this event, and fails */
};

/* ---- lines: what line k of connection c is (sim_core.c) ------------------------- */

double sim__line_uniform(const struct sim *s, uint32_t c, uint32_t k, uint32_t salt);
enum line_kind sim__line_kind(const struct sim *s, uint32_t c, uint32_t k);
vtime_t sim__line_cpu(const struct sim *s, uint32_t c, uint32_t k);
vtime_t sim__line_sleep(const struct sim *s, uint32_t c, uint32_t k);
/* A !task line's queued CPU (0 for other lines); sim__line_cpu includes it. */
vtime_t sim__line_task(const struct sim *s, uint32_t c, uint32_t k);
/* When line k of c left the client (open loop: when it was due to; a
 * line due before its connection was made leaves when it is made). Every
 * send time and every latency comes from here, in whole nanoseconds, so
 * a reply is never timed from a moment after its line was sent. */
vtime_t sim__line_sent_at(const struct sim *s, uint32_t c, uint32_t k);

/* ---- the machine and the board together (sim_core.c) ------------------------- */

/* One syscall's cost: the profile's figure (a mean) times a log-normal
 * factor of mean 1 and shape syscall_sigma, so that costs vary as they
 * do on a real machine and tail latency has a source. */
vtime_t sim__syscall_ns(struct sim *s, double mean_ns);
/* An event delay_ns from now. Out of memory, the run stops after the
 * event being handled (s->out_of_memory) and fails. */
void sim__at(struct sim *s, double delay_ns, uint32_t kind, uint32_t id, uint32_t gen);
/* machine_run / machine_block, shown on the board with --viz. */
void sim__run(struct sim *s, uint32_t t, vtime_t cpu_ns, uint32_t cont);
void sim__block(struct sim *s, uint32_t t, enum viz_state why);
uint32_t sim__spawn(struct sim *s, uint32_t owner, enum viz_role role, const char *name,
                    uint64_t conn);
/* A pool's thread, made at the start and idle: "task-3", "biz-1". */
uint32_t sim__spawn_idle(struct sim *s, enum viz_role role, const char *prefix, int n);
void sim__thread_exit(struct sim *s, uint32_t t);
/* Thread t has handled (or written) one more line: its LINES on the board. */
void sim__thread_line(struct sim *s, uint32_t t);

/* ---- connections (sim_core.c) ----------------------------------------------------- */

void sim__cq_push(struct sim *s, struct cqueue *q, uint32_t c);
uint32_t sim__cq_pop(struct sim *s, struct cqueue *q);
void sim__conn_opened(struct sim *s);
/* Lines entering (+) or leaving (-) the system: the clients' lines in
 * flight, for the mean number in the system (Little's law). */
void sim__in_system(struct sim *s, int64_t delta);
void sim__conn_closed(struct sim *s, uint32_t c);
void sim__refuse(struct sim *s, uint32_t c, const char *why);
/* c's lines not answered are lost, counted under why (one of the
 * report's lines_refused, lines_unserved, lines_cut): their time in the
 * system so far counts for Little's law. */
void sim__lines_leave(struct sim *s, uint32_t c, uint64_t *why);
/* The server has begun c's next line (it is no longer waiting to be read). */
void sim__line_taken(struct sim *s, uint32_t c);
/* Line k of c first got a core at on_cpu: it waited since it arrived. */
void sim__line_waited(struct sim *s, uint32_t c, uint32_t k, vtime_t on_cpu);
/* A reply leaves the server for c's client. */
void sim__reply_sent(struct sim *s, uint32_t c);

/* ---- a model's table of operations (one per model file; sim_models.c) -------- */

/* What the engine (sim.c) does with an event depends on the model: each
 * model fills one of these tables, and the engine calls only through it,
 * as the real servers plug into models/server.c. The engine names no
 * model, so a new model is a new table, not a new case in every switch.
 * Everything about a connection that is the same for all models (its
 * counts, the client's side) the engine does itself, before it calls. */
struct sim_model_ops {
    /* The run starts: make the model's threads and its state. */
    int (*setup)(struct sim *s);
    /* Connections that reached the server and wait to be accepted
     * (--backlog bounds them). */
    uint32_t (*accept_queue)(const struct sim *s);
    /* Connection c reaches the server: it waits to be accepted. */
    void (*connect)(struct sim *s, uint32_t c);
    /* A line or the client's close reached c (v->arrived, v->client_closed
     * already say so): a thread blocked in read, or a loop, may go on. */
    void (*input)(struct sim *s, uint32_t c);
    /* Thread t of the model (not the clients') has finished its burst;
     * s->m.threads[t].cont says what it was doing. */
    void (*burst_done)(struct sim *s, uint32_t t);
    /* Thread t's !sleep (a blocking call) is over; cont is its next step. */
    void (*wake)(struct sim *s, uint32_t t, uint32_t cont);
    /* The monitor looks at carrier k (EV_LOOK); NULL for the models that
     * schedule no look. */
    void (*look)(struct sim *s, int k);

    /* What the shared helpers need from the model that uses them; NULL
     * in the models that do not. The acceptor (sim_blocking.c): */
    vtime_t (*accept_cost)(struct sim *s);     /* CPU on top of accept() */
    void (*accepted)(struct sim *s, uint32_t c);
    void (*conn_done)(struct sim *s, uint32_t t);  /* t's connection closed */
    /* The boss loop (sim_loop.c): the loop that serves c from now. */
    int (*assign)(struct sim *s, uint32_t c);
};

extern const struct sim_model_ops sim__bio_ops, sim__pool_ops, sim__reactor_ops,
    sim__multireactor_ops, sim__vthread_ops;
/* The table of model m, or NULL. */
const struct sim_model_ops *sim__model_ops(enum sim_model m);

/* ---- the clients (sim_client.c) ---------------------------------------------- */

void sim__client_send(struct sim *s, uint32_t c);
void sim__reply_reaches_client(struct sim *s, uint32_t c);
void sim__client_burst_done(struct sim *s);
int sim__spawn_client(struct sim *s);

/* ---- blocking models (sim_blocking.c, sim_bio.c, sim_pool.c) ---------------- */

/* The acceptor's thread (bio, pool, vthread). */
int sim__blocking_setup(struct sim *s);
uint32_t sim__blocking_accept_queue(const struct sim *s);
void sim__blocking_connect(struct sim *s, uint32_t c);
void sim__blocking_input(struct sim *s, uint32_t c);
void sim__blocking_burst_done(struct sim *s, uint32_t t);
void sim__blocking_wake(struct sim *s, uint32_t t, uint32_t cont);
void sim__conn_thread_start(struct sim *s, uint32_t t, uint32_t c);
bool sim__can_spawn(const struct sim *s);

uint64_t sim__pool_reach(const struct sim_opts *o);

/* ---- loop models (sim_loop.c, sim_reactor.c, sim_multireactor.c) ------------- */

int sim__loops_setup(struct sim *s, int nworkers, bool own_boss);
/* Loop l's name ("reactor", "boss", "worker-3"), in name when it is made. */
#define SIM_LOOP_NAME_LEN 32
const char *sim__loop_name(const struct sim *s, int l, char name[static SIM_LOOP_NAME_LEN]);
uint32_t sim__loops_accept_queue(const struct sim *s);
void sim__loops_connect(struct sim *s, uint32_t c);
void sim__loop_mark_ready(struct sim *s, uint32_t c);
void sim__loops_burst_done(struct sim *s, uint32_t t);
void sim__loops_wake(struct sim *s, uint32_t t, uint32_t cont);

/* ---- virtual threads (sim_vthread.c, sim_carrier.c, sim_vthread_steps.c) ---- */

/* A line or the client's close reached c: a parked vthread's fd is ready. */
void sim__vthread_fd_ready(struct sim *s, uint32_t c);

/* The carriers (sim_carrier.c): made at the start, each with its runner. */
int sim__carriers_setup(struct sim *s);
/* The carrier's loop, after a vthread's step or a poll. */
void sim__carrier_next(struct sim *s, struct vrunner *r);
void sim__carrier_wake(struct sim *s, int k);
void sim__carrier_poll_done(struct sim *s, struct vrunner *r);
const char *sim__carrier_name(int k, char name[static SIM_LOOP_NAME_LEN]);
/* r->cur's !sleep begins (VS_CALL's burst is done), and ends (EV_WAKE). */
void sim__vthread_call_begin(struct sim *s, struct vrunner *r);
void sim__vthread_call_end(struct sim *s, uint32_t t);
void sim__monitor_look(struct sim *s, int k);
void sim__monitor_burst_done(struct sim *s);

/* A runner's steps inside one vthread (sim_vthread_steps.c). */
/* Runner r switches into (or goes on in) r->cur at the top of its loop:
 * its read(). */
void sim__vthread_read(struct sim *s, struct vrunner *r, bool switch_in);
/* r->cur's next step: a line, or the write of its replies. */
void sim__vthread_serve(struct sim *s, struct vrunner *r);
/* A runner's burst: cpu_ns, then step. */
void sim__runner_run(struct sim *s, struct vrunner *r, vtime_t cpu_ns, enum vt_step step);

/* ---- the report (sim_report.c) --------------------------------------------- */

/* The sending window has ended (at s->window_end): take its figures. */
void sim__report_window(struct sim *s);
/* Fill s->r from the finished run (not the engine's wall time). */
void sim__report_fill(struct sim *s);

#endif
