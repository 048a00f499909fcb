/* channel.h -- a connection served by an event loop (Netty's Channel).
 *
 * Nonblocking all the way: the loop tells the channel its fd is readable;
 * it reads what is there into the echo session, decides the replies,
 * appends them to an output buffer and writes what the socket takes. It
 * never waits for the client — except that a !cpu or !sleep line runs
 * right here, on the loop thread, unless a business pool is given: then
 * the line goes to the pool, the channel's later lines wait behind it (so
 * replies stay in order), and the pool posts the reply back with
 * loop_execute. A !task line is queued on the channel's own loop
 * (loop_execute, Netty's channel.eventLoop().execute()): the loop runs it
 * in its task phase, under the ioRatio budget, and the later lines wait
 * behind it just as they do behind an offloaded one.
 *
 * Backpressure: above high water (unsent output) the channel stops reading
 * until the output drains below low water, so a client that sends and never
 * reads holds at most high water + one line of our memory.
 *
 * Fairness: one wakeup answers at most CHANNEL_LINES_PER_WAKEUP lines or
 * CHANNEL_HANDLER_BUDGET_US of handler time, whichever comes first, then
 * the loop serves the other ready channels and comes back for the rest
 * (loop_watch_resume). A `!cpu` line still stalls its loop for as long as
 * it runs -- that is the lesson -- but the line after it waits its turn.
 *
 * A channel's life is one state (enum channel_state); channel.c draws the
 * transitions at its top.
 *
 * Every function: the channel's loop thread only.
 */
#ifndef THREADLAB_CHANNEL_H
#define THREADLAB_CHANNEL_H

#include <stdbool.h>
#include <stdint.h>

#include "echo/session.h"
#include "loop/loop.h"
#include "threadpool/pool.h"
#include "probe/board.h"
#include "outbuf.h"

#define CHANNEL_HIGH_WATER_BYTES (1u << 20)    /* stop reading above this */
#define CHANNEL_LOW_WATER_BYTES (256u << 10)   /* read again below this */
/* How much one channel may read per wakeup before the loop turns to the
 * next ready fd: a new connection waits for one round of the others, so
 * the round must stay short even when every client pipelines nonstop.
 * 16 KiB is what Redis reads of a client per event; at 256 KiB, 50 busy
 * clients under ThreadSanitizer made a round take 10 s. */
#define CHANNEL_READ_BUDGET_BYTES (16u << 10)
/* How many lines, or how long in handlers, one channel may take per wakeup
 * before the loop turns to the others (Netty's maxMessagesPerRead, Redis's
 * per-client fairness). The clock is read once per reply, and a reply
 * holds at most CHANNEL_LINES_PER_REPLY lines (a run of plain lines is
 * one reply), so the budget costs a pipelined batch one clock read. That
 * is under one user instruction per line more than a read every 64 lines
 * (bench/profile.sh, the reactor at 64 connections x depth 16). */
#define CHANNEL_LINES_PER_WAKEUP 1024
#define CHANNEL_HANDLER_BUDGET_US 1000
#define CHANNEL_LINES_PER_REPLY 64

/* A channel's life (memcached's conn states). Drawn in channel.c. */
enum channel_state {
    CHANNEL_OPEN,        /* reading, answering lines, writing */
    CHANNEL_PAUSED,      /* output above high water: no reads until below low water */
    CHANNEL_OFFLOADED,   /* a line is on the business pool, or a !task on the loop's
                          * task queue: reads and later lines wait */
    CHANNEL_INPUT_ENDED, /* EOF, or the stop's bytes all read: answer, flush, close */
    CHANNEL_CLOSING,     /* the last reply is queued (!quit, too long, busy): flush, linger */
    CHANNEL_LINGERING,   /* write side shut: dropping input until EOF or the linger ends */
    CHANNEL_CLOSED,      /* fd closed with a line still offloaded or queued:
                          * freed when it returns */
};

struct channel;

/* Backpressure on one loop, summed over its channels, for the board.
 * Loop thread only (the channels update it and publish it to the loop's
 * board slot; nothing reads it back from the board). */
struct channel_backlog {
    uint64_t pending_bytes;      /* replies the channels have not yet written */
    uint64_t paused;             /* channels in CHANNEL_PAUSED */
};

/* What the model lends its channels. */
struct channel_host {
    const char *model;           /* for !who */
    size_t max_line;
    int linger_ms;               /* a closing error reply drains this long */
    struct board *board;         /* may be NULL */
    struct pool *business;       /* --offload: where !cpu/!sleep run; or NULL */
    struct channel_backlog *backlog; /* this loop's totals, or NULL */
    size_t high_water, low_water;
    int idle_timeout_ms;         /* 0: none; see server_opts */
    int line_timeout_ms;
    int stall_timeout_ms;
    /* The channel has closed its fd and is about to be freed. Loop thread. */
    void (*on_closed)(struct channel *ch, void *host_arg);
    void *host_arg;
    bool (*stopping)(void *host_arg);   /* is the server stopping? */
    /* When a stop's hard timeout passes (now_ns), or 0 while no stop
     * is under way; may be NULL. Read once per wakeup. */
    uint64_t (*stop_deadline_ns)(void *host_arg);
};

struct channel {
    struct loop *loop;
    struct loop_watch watch;     /* the fd, as the loop sees it */
    uint64_t id;
    const struct channel_host *host;
    struct echo_session session;
    struct outbuf out;           /* replies not yet written, in order */
    /* Where a line that must not run on the loop goes: offload.c's offload
     * when the model has a business pool, else NULL (the line runs here).
     * Returns false if it was refused (the line gets "!err busy"). */
    bool (*hand_off)(struct channel *ch, const struct echo_reply *r, uint64_t read_ns);
    enum channel_state state;    /* see the drawing in channel.c */
    enum echo_end linger_end;    /* how a lingering close is counted when it ends */
    size_t read_left;            /* bytes it may still read: SIZE_MAX, or a stop's count */
    uint64_t unanswered_since_ns;/* read time of lines left for the next wakeup */
    struct loop_timer *linger_timer;
    size_t linger_unacked;       /* our bytes the peer had not acknowledged */
    int linger_periods;          /* linger_ms periods lingered so far */
    struct loop_timer *deadline_timer; /* idle, line and stall timeouts */
    uint64_t partial_since_ns;   /* a partial line is waiting since, or 0 */
    uint64_t last_drain_ns;      /* output last shrank, or was empty */
    uint64_t lines;
    uint64_t last_read_ns;       /* when bytes last came in */
    size_t pending_counted;      /* its share of host->backlog->pending_bytes */
    bool paused_counted;         /* counted in host->backlog->paused */
    struct channel *prev, *next; /* the model's list of channels */
};

/* Take over fd (made nonblocking) on loop l: watch it, count it. Returns the
 * channel, or NULL (fd closed) when out of memory. */
struct channel *channel_open(struct loop *l, int fd, uint64_t id,
                             const struct channel_host *host);

/* Refuse the channel (--max-conns): "!err busy", then a lingering close,
 * without reading its requests. */
void channel_refuse(struct channel *ch);

/* For a graceful stop: the channel answers every byte the kernel holds
 * for it now, reads nothing after that, flushes, and closes with a linger
 * so that a client still sending gets its answers and EOF, not a reset.
 * It does so in its next wakeups (a resume), under its budget: this call
 * never runs a handler. Past host->stop_deadline_ns it closes instead. */
void channel_stop_reading(struct channel *ch);

/* Close now, whatever is pending (the stop timeout). */
void channel_close_now(struct channel *ch);

/* Unsent output bytes now. */
size_t channel_pending_output(const struct channel *ch);

#endif
