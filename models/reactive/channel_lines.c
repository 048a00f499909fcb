/* channel_lines.c -- a wakeup's lines answered, in order, under its budget
 * (Netty's maxMessagesPerRead, Redis's per-client fairness): each reply
 * queued for the socket, a line with work run here or sent away (the
 * business pool, the loop's task queue) while the lines behind it wait.
 * See channel.c for the states, and inside_channel.h for how the files of a
 * channel call each other.
 */
#include "inside_channel.h"

#include <stdlib.h>
#include <string.h>

#include "net/clock.h"

/* ---- the budget --------------------------------------------------------------- */

void batch_begin(struct batch *b, uint64_t read_ns, uint64_t now)
{
    *b = (struct batch){ .read_ns = read_ns ? read_ns : now,
                         .deadline_ns = now + CHANNEL_HANDLER_BUDGET_US * 1000ull };
}

void batch_count(struct batch *b, uint32_t lines)
{
    b->lines += lines;
    if (b->lines >= CHANNEL_LINES_PER_WAKEUP || now_ns() >= b->deadline_ns)
        b->spent = true;
}

/* The most lines the next reply may hold: a run of plain lines is one
 * reply, and one clock read. */
static uint32_t batch_room(const struct batch *b)
{
    uint32_t left = CHANNEL_LINES_PER_WAKEUP - b->lines;
    return left < CHANNEL_LINES_PER_REPLY ? left : CHANNEL_LINES_PER_REPLY;
}

/* ---- !task: work queued on the channel's own loop ------------------------------ *
 * Netty's channel.eventLoop().execute(): the handler does not do the work
 * now, it queues it on its own loop, which runs it in the task phase, as
 * long as ioRatio allows. The channel waits in OFFLOADED meanwhile (its
 * later lines keep their order), and the task, once it ran, hands the
 * reply to the next I/O phase (loop_watch_resume), where the lines behind
 * it are answered and the output written: so the loop's task time is the
 * work itself, and its I/O time is the echo. */

struct queued_task {
    struct channel *ch;
    uint64_t read_ns;            /* when the line was read */
    uint32_t cpu_us;             /* what to burn */
    size_t len;
    char line[];                 /* the reply (the echoed line), copied */
};

/* On the loop, in its task phase: the work, then the reply. */
static void queued_task_run(void *arg)
{
    struct queued_task *t = arg;
    struct channel *ch = t->ch;
    echo_burn_cpu_us(t->cpu_us);
    if (ch->state == CHANNEL_CLOSED) {  /* the client left meanwhile */
        channel_free(ch);
        free(t);
        return;
    }
    ch->state = input_state(ch);
    bool queued = append_out(ch, t->line, t->len);
    uint64_t read_ns = t->read_ns;
    free(t);
    if (!queued) {
        channel_end(ch, ECHO_END_NO_MEMORY);
        return;
    }
    ch->lines++;
    /* Counted here, from its read to its reply, as finish_wakeup counts
     * the others: the write follows in the next I/O phase. */
    struct board *board = ch->host->board;
    if (board) {
        board_record_latency_n(board, now_ns() - read_ns, 1);
        board_add(board, CTR_LINES, 1);
        board_thread_lines(board, loop_thread_on_board(ch->loop), 1);
    }
    loop_watch_resume(ch->loop, &ch->watch);
}

/* Queue a !task line on the channel's loop. Returns false if the loop's
 * task queue refused it (full: the loop counts it) or memory ran out. */
static bool queue_task(struct channel *ch, const struct echo_reply *r, uint64_t read_ns)
{
    struct queued_task *t = malloc(sizeof(*t) + r->len);
    if (!t)
        return false;
    *t = (struct queued_task){ .ch = ch, .read_ns = read_ns, .cpu_us = r->work_amount,
                               .len = r->len };
    memcpy(t->line, r->data, r->len);
    if (loop_execute(ch->loop, queued_task_run, t) < 0) {
        free(t);
        return false;
    }
    ch->state = CHANNEL_OFFLOADED;
    return true;
}

/* ---- answering ------------------------------------------------------------------ */

static bool answers_lines(const struct channel *ch)
{
    return ch->state == CHANNEL_OPEN || ch->state == CHANNEL_PAUSED ||
           ch->state == CHANNEL_INPUT_ENDED;
}

/* Does this line leave the loop? A !task always (the loop's task queue);
 * with a business pool, a line with work, and !who (a business thread
 * answers it with its own name). */
static bool leaves_the_loop(const struct channel *ch, const struct echo_reply *r)
{
    return r->work == ECHO_WORK_TASK ||
           (ch->hand_off && (r->work != ECHO_WORK_NONE || r->who));
}

/* Send the line away. Returns false if it was refused. */
static bool send_away(struct channel *ch, const struct echo_reply *r, uint64_t read_ns)
{
    return r->work == ECHO_WORK_TASK ? queue_task(ch, r, read_ns)
                                     : ch->hand_off(ch, r, read_ns);
}

static void answer_busy(struct echo_reply *r)
{
    r->data = ECHO_ERR_BUSY;
    r->len = sizeof(ECHO_ERR_BUSY) - 1;
    r->work = ECHO_WORK_NONE;
}

static void count_error(struct board *board, enum echo_error error)
{
    if (error == ECHO_ERROR_BAD_ARGUMENT)
        board_add(board, CTR_ERR_BAD_ARGUMENT, 1);
    if (error == ECHO_ERROR_LINE_TOO_LONG)
        board_add(board, CTR_ERR_LINE_TOO_LONG, 1);
}

/* Answer a line here, on the loop: its work first (without a business
 * pool every channel of this loop waits for it: the lesson of the single
 * reactor), then its reply. Returns false if the channel ended. */
static bool answer_here(struct channel *ch, const struct echo_reply *r)
{
    struct board *board = ch->host->board;
    if (r->work == ECHO_WORK_SLEEP)
        board_thread_state(board, loop_thread_on_board(ch->loop), STATE_BLOCKED_SLEEP);
    echo_do_work(r);
    if (r->work == ECHO_WORK_SLEEP)
        board_thread_state(board, loop_thread_on_board(ch->loop), STATE_RUNNING);
    if (!append_out(ch, r->data, r->len)) {
        channel_end(ch, ECHO_END_NO_MEMORY);
        return false;
    }
    ch->lines += r->lines;
    if (r->error != ECHO_ERROR_NONE)
        count_error(board, r->error);
    if (r->close_after) {
        ch->state = CHANNEL_CLOSING;
        ch->linger_end = r->error == ECHO_ERROR_LINE_TOO_LONG ? ECHO_END_TOO_LONG
                                                               : ECHO_END_QUIT;
    }
    return true;
}

bool answer_lines(struct channel *ch, struct batch *b)
{
    struct echo_reply reply;
    const char *thread_name = loop_name(ch->loop);   /* for !who */

    while (answers_lines(ch) && !b->spent &&
           echo_session_next(&ch->session, thread_name, batch_room(b), &reply)) {
        bool leaves = leaves_the_loop(ch, &reply);
        /* The replies before a slow line go out first, so that
         * `hi\n!sleep 10000\n` answers `hi` at once, as the blocking
         * models do. */
        if ((leaves || reply.work != ECHO_WORK_NONE) && !write_out(ch))
            return false;
        if (leaves) {
            if (send_away(ch, &reply, b->read_ns))
                return true;          /* later lines wait for this one */
            answer_busy(&reply);
        }
        if (!answer_here(ch, &reply))
            return false;
        batch_count(b, (uint32_t)reply.lines);
    }
    return true;
}

bool finish_wakeup(struct channel *ch, struct batch *b)
{
    struct board *board = ch->host->board;
    /* The line clock: a partial line left over starts it (or keeps it if
     * no line completed meanwhile). With the budget spent, what is left
     * starts with whole lines: the next wakeup finishes it. */
    if (echo_decoder_pending(&ch->session.decoder) == 0)
        ch->partial_since_ns = 0;
    else if (!b->spent && (ch->partial_since_ns == 0 || b->lines > 0))
        ch->partial_since_ns = ch->last_read_ns;
    if (!write_out(ch))
        return false;
    /* A line's handling time, as in every model, runs from the read that
     * brought it to its reply being written (here: handed to the socket). */
    if (board && b->lines) {
        uint64_t took = now_ns() - b->read_ns;
        board_record_latency_n(board, took, b->lines);
        board_add(board, CTR_LINES, b->lines);
        board_thread_lines(board, loop_thread_on_board(ch->loop), b->lines);
    }
    if (b->spent) {
        /* Lines may be left in our buffer, where epoll cannot see them:
         * the loop serves the other ready channels, then comes back. */
        ch->unanswered_since_ns = b->read_ns;
        loop_watch_resume(ch->loop, &ch->watch);
    }
    return react_to_output(ch, b->spent);
}
