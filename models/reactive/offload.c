/* offload.c -- a slow line leaves the loop: it goes to the business pool,
 * and its reply comes back to the channel's loop, where the lines behind
 * it are answered (lab 04). See channel.c for the states (OFFLOADED), and
 * inside_channel.h for the files below this one, which it calls.
 */
#include <stdlib.h>
#include <string.h>

#include "inside_channel.h"
#include "loop/promise.h"
#include "net/clock.h"

/* A line on the business pool. The business thread reads only this, never
 * the channel. */
struct offload {
    struct channel *ch;          /* for the listener, on the loop: not touched here */
    struct promise *done;        /* completed by the business thread */
    uint64_t read_ns;            /* when the line was read */
    struct echo_reply work;      /* what to do; data points into `line` */
    bool asks_who;               /* !who: the business thread answers it */
    const char *model;           /* for that answer */
    uint64_t conn_id;
    struct board *board;         /* the business thread's board, or NULL */
    size_t len;
    char line[];                 /* the reply (the echoed line), copied */
};

/* ---- offload ---------------------------------------------------------------- *
 * Netty's pattern for slow handlers: the business executor returns a
 * future, and a listener on the event loop takes the result. Here the
 * promise is made on the channel's loop (its listeners run there), the
 * business thread completes it, and offload_done, the listener, writes the
 * reply on the loop's thread: the only thread that touches the channel.
 * This is also Vert.x's worker context: one connection's offloaded lines
 * run one at a time, in order, each on whichever business thread is free
 * (an offloaded !who names it), never two at once. */

/* Back on the loop (the promise's listener): the offloaded line's reply,
 * then the lines behind it. */
static void offload_done(struct promise *done, void *arg)
{
    struct offload *o = arg;
    struct channel *ch = o->ch;
    (void)done;                         /* the reply is in o: the promise just says when */
    if (ch->state == CHANNEL_CLOSED) {  /* the client left meanwhile */
        channel_free(ch);
        free(o);
        return;
    }
    ch->state = input_state(ch);
    struct batch b;
    batch_begin(&b, o->read_ns, now_ns());
    bool queued = append_out(ch, o->line, o->len);
    free(o);
    if (!queued) {
        channel_end(ch, ECHO_END_NO_MEMORY);
        return;
    }
    ch->lines++;
    /* The offloaded line's reply is counted with the lines behind it, which
     * have waited since about the same read. */
    batch_count(&b, 1);
    if (answer_lines(ch, &b))
        finish_wakeup(ch, &b);
}

/* On a business thread: an offloaded !who is answered by this thread, in
 * the session's own words (a session of one line, so the format lives in
 * one place). Out of memory: the loop's answer stands. */
static void answer_who_here(struct offload *o, const char *thread_name)
{
    struct echo_session one;
    size_t room;
    if (echo_session_init(&one, o->model, o->conn_id, ECHO_WHO_MAX_BYTES) < 0)
        return;
    char *buf = echo_session_space(&one, &room);
    struct echo_reply r;
    if (buf && room >= sizeof("!who\n") - 1) {
        memcpy(buf, "!who\n", sizeof("!who\n") - 1);
        echo_session_commit(&one, sizeof("!who\n") - 1);
        if (echo_session_next(&one, thread_name, 1, &r) && r.len <= ECHO_WHO_MAX_BYTES) {
            memcpy(o->line, r.data, r.len);
            o->len = r.len;
        }
    }
    echo_session_free(&one);
}

/* On a business thread: the slow part, then complete the promise. */
static void offload_run(void *arg, struct pool_thread *self)
{
    struct offload *o = arg;
    struct board_thread_ref *me = self ? pool_thread_board(self) : NULL;
    if (me && o->work.work == ECHO_WORK_SLEEP)
        board_thread_state(o->board, me, STATE_BLOCKED_SLEEP);
    echo_do_work(&o->work);
    if (me)
        board_thread_state(o->board, me, STATE_RUNNING);
    if (o->asks_who)
        answer_who_here(o, self ? pool_thread_name(self) : "caller");
    /* The listener is queued on the loop (a full task queue is waited
     * out, promise.c), and runs there after this returns. The business
     * pool rejects with abort, never caller-runs: a loop thread that ran
     * this itself would run the listener inside offload(). */
    struct promise *done = o->done;
    promise_succeed(done, NULL);
    promise_release(done);
}

/* Hand a !cpu, !sleep or !who line to the business pool, with a promise
 * whose listener (offload_done) brings the reply back to this loop.
 * Returns false if the pool refused it or memory ran out (the line then
 * gets "!err busy"). */
bool offload(struct channel *ch, const struct echo_reply *r, uint64_t read_ns)
{
    size_t room = r->len > ECHO_WHO_MAX_BYTES ? r->len : ECHO_WHO_MAX_BYTES;
    struct offload *o = malloc(sizeof(*o) + room);
    if (!o)
        return false;
    *o = (struct offload){ .ch = ch, .read_ns = read_ns, .work = *r, .len = r->len,
                           .asks_who = r->who, .model = ch->host->model,
                           .conn_id = ch->id, .board = ch->host->board };
    memcpy(o->line, r->data, r->len);
    o->work.data = o->line;
    o->done = promise_create(ch->loop);
    if (!o->done || promise_add_listener(o->done, offload_done, o) < 0)
        goto out_free;
    enum channel_state was = ch->state;
    ch->state = CHANNEL_OFFLOADED;     /* before the submit: the pool may answer at once */
    if (pool_submit(ch->host->business, offload_run, o, ch->id) < 0) {
        ch->state = was;
        goto out_free;                 /* never completed: its listener never runs */
    }
    board_add(ch->host->board, CTR_OFFLOADED, 1);
    return true;

out_free:
    if (o->done)
        promise_release(o->done);
    free(o);
    return false;
}
