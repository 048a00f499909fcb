/* session.h -- the echo protocol's logic, shared by all four models.
 *
 * Bytes in, bytes out, plus a work directive. The session decodes lines,
 * decides what each one means and says what to send back; it never touches
 * a socket, a thread or a clock. Each model executes the work directive its
 * own way, and that difference is the lesson: a BIO or pool thread may block
 * in `!sleep`, a loop thread must not.
 *
 * Threads: a session belongs to one connection and is used by one thread
 * at a time (the echo_session_* functions); echo_decide, echo_end_reason
 * and echo_end_lingers are pure, any thread; the work functions block or
 * burn the calling thread, whichever that is.
 *
 *   read() --> echo_session_space/commit --> echo_session_next --> reply
 *                                                    |
 *                                  work: none | cpu N us | sleep N ms | task N us
 *
 * Commands (any other line, '!' or not, is echoed as it came):
 *   !cpu N     burn N microseconds of CPU (0..10 000 000), then echo
 *   !sleep N   block N milliseconds (0..60 000), then echo
 *   !task N    N microseconds of CPU (0..10 000 000, as !cpu) queued as a
 *              task on the connection's own loop, then echo; the blocking
 *              models, having no loop, burn it on their thread
 *   !who       reply "!who model=M thread=T conn=C\n"
 *   !quit      echo, then close
 * A bad argument gets "!err bad-argument\n" and the connection stays open. A
 * line over max_line gets "!err line-too-long\n" and the connection closes.
 */
#ifndef THREADLAB_ECHO_SESSION_H
#define THREADLAB_ECHO_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decoder.h"

#define ECHO_CPU_MAX_US 10000000u   /* !cpu: at most 10 s */
#define ECHO_SLEEP_MAX_MS 60000u    /* !sleep: at most 60 s */
#define ECHO_WHO_MAX_BYTES 160      /* room for the !who reply */

#define ECHO_ERR_LINE_TOO_LONG "!err line-too-long\n"
#define ECHO_ERR_BAD_ARGUMENT "!err bad-argument\n"
#define ECHO_ERR_BUSY "!err busy\n"

/* What the handling thread must do before sending the reply. */
enum echo_work {
    ECHO_WORK_NONE,  /* reply at once */
    ECHO_WORK_CPU,   /* burn work_amount microseconds of CPU first */
    ECHO_WORK_SLEEP, /* block work_amount milliseconds first */
    ECHO_WORK_TASK,  /* burn work_amount microseconds as a task on the
                      * connection's loop (on the thread, without a loop) */
};

/* Why a reply is an error, for the board's counters. */
enum echo_error {
    ECHO_ERROR_NONE,
    ECHO_ERROR_LINE_TOO_LONG,
    ECHO_ERROR_BAD_ARGUMENT,
};

/* Why a connection ended: every model closes for these reasons. */
enum echo_end {
    ECHO_END_EOF,          /* the client closed (or a stop ended input) */
    ECHO_END_RESET,        /* the client reset the connection */
    ECHO_END_IO_ERROR,     /* another read or write error */
    ECHO_END_QUIT,         /* !quit */
    ECHO_END_TOO_LONG,     /* a line over --max-line */
    ECHO_END_NO_MEMORY,    /* the session could not grow its buffer */
    ECHO_END_STOPPED,      /* the server gave up waiting at stop */
    ECHO_END_IDLE,         /* sent nothing for --idle-timeout */
    ECHO_END_LINE_TIMEOUT, /* a line still incomplete after --line-timeout */
    ECHO_END_STALLED,      /* read nothing of its replies for --stall-timeout */
    ECHO_END_REFUSED,      /* refused at accept: "!err busy" (--max-conns) */
};

/* One decision: send `data`, after doing `work`, then maybe close. */
struct echo_reply {
    const char *data;        /* bytes to send; valid until the next _space */
    size_t len;              /* how many */
    enum echo_work work;     /* what to do before sending */
    uint32_t work_amount;    /* microseconds (cpu, task) or milliseconds (sleep) */
    bool close_after;        /* !quit or a fatal error: flush, then close */
    enum echo_error error;   /* non-NONE for "!err" replies */
    size_t request_len;      /* bytes of the request lines, '\n' included */
    size_t lines;            /* request lines this reply answers (1, or a run) */
    bool who;                /* the answer to !who: it names the thread that asked
                              * (data is the session's `who`, which the next !who
                              * rewrites) */
};

struct echo_session {
    struct echo_decoder decoder; /* the connection's input */
    const char *model;           /* "bio", "pool", ... for !who */
    uint64_t conn_id;            /* the connection's number, for !who */
    bool closing;                /* a close_after reply was given */
    char who[ECHO_WHO_MAX_BYTES];/* the last !who reply */
};

/* ---- lifetime (the connection's thread) ---- */

/* Start a session for connection conn_id of a model. Returns 0 or -ENOMEM. */
int echo_session_init(struct echo_session *s, const char *model,
                      uint64_t conn_id, size_t max_line);
void echo_session_free(struct echo_session *s);

/* ---- input (the connection's thread) ---- */

/* Where to read to and how much (see echo_decoder_space); NULL on ENOMEM. */
char *echo_session_space(struct echo_session *s, size_t *len_out);
void echo_session_commit(struct echo_session *s, size_t n);

/* ---- decisions (the connection's thread, but for the pure ones) ---- */

/* Decide the reply to the next complete line. thread_name is the name of the
 * thread handling it (for !who). Returns true and fills *r, or false when
 * more input is needed or the session is closing.
 *
 * An echoed line takes the echoed lines right behind it into the same
 * reply, up to max_lines lines (the caller's budget; 0 counts as 1): their
 * reply is their own bytes, one span of the input, so a pipelined batch of
 * 16 lines is decided, counted and written as one reply, not 16. A run
 * stops before a line that starts with '!' (it may be a command), an
 * incomplete line or a line too long; r->lines says how many it holds. */
bool echo_session_next(struct echo_session *s, const char *thread_name,
                       size_t max_lines, struct echo_reply *r);

/* Decide what one line means, without a session: the pure core of
 * echo_session_next, exposed for tests. line includes its '\n'. Pure, any
 * thread. */
void echo_decide(const char *line, size_t len, struct echo_reply *r);

/* The reason as words for the event log ("client closed", "!quit"...).
 * stopping: the server is stopping (an EOF was of its own making). Pure,
 * any thread. */
const char *echo_end_reason(enum echo_end end, bool stopping);

/* Does this ending follow an error reply that must be read before the
 * close (a lingering close)? Pure, any thread. */
bool echo_end_lingers(enum echo_end end);

/* ---- work (on the calling thread: it blocks or burns that thread) ---- */

/* Burn `us` microseconds of this thread's CPU time (not wall time). */
void echo_burn_cpu_us(uint32_t us);

/* Block this thread for `ms` milliseconds, resuming after signals. */
void echo_sleep_ms(uint32_t ms);

/* Internal: the work of a reply that has some (cpu, sleep or task). */
void echo__do_work(const struct echo_reply *r);

/* Run r->work on the calling thread: the blocking models' way (a task is
 * burnt like !cpu: a thread of its own has no loop to queue it on). Inline
 * because every line passes here and almost none has work: the test is a
 * compare, where a call cost 6 instructions per line (docs/performance.md). */
static inline void echo_do_work(const struct echo_reply *r)
{
    if (r->work != ECHO_WORK_NONE)
        echo__do_work(r);
}

#endif
