/* session.c -- commands, replies and work. See session.h. */
#include "session.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int echo_session_init(struct echo_session *s, const char *model,
                      uint64_t conn_id, size_t max_line)
{
    memset(s, 0, sizeof(*s));
    s->model = model;
    s->conn_id = conn_id;
    return echo_decoder_init(&s->decoder, max_line);
}

void echo_session_free(struct echo_session *s)
{
    echo_decoder_free(&s->decoder);
}

char *echo_session_space(struct echo_session *s, size_t *len_out)
{
    return echo_decoder_space(&s->decoder, len_out);
}

void echo_session_commit(struct echo_session *s, size_t n)
{
    echo_decoder_commit(&s->decoder, n);
}

/* Parse a decimal in [0, max] that fills [p, end) exactly. */
static bool parse_bounded(const char *p, const char *end, uint32_t max,
                          uint32_t *out)
{
    uint64_t v = 0;
    if (p == end)
        return false;
    for (; p < end; p++) {
        if (*p < '0' || *p > '9')
            return false;
        v = v * 10 + (uint64_t)(*p - '0');
        if (v > max)
            return false;
    }
    *out = (uint32_t)v;
    return true;
}

/* If the line is "<word>" or "<word> <args>", point *args at the arguments
 * (empty for the bare word) and return true. The word must end at a space or
 * at the end: "!cpux" is not "!cpu". */
static bool match_command(const char *p, const char *end, const char *word,
                          const char **args)
{
    size_t n = strlen(word);
    if ((size_t)(end - p) < n || memcmp(p, word, n) != 0)
        return false;
    if (p + n == end) {
        *args = end;
        return true;
    }
    if (p[n] != ' ')
        return false;
    *args = p + n + 1;
    return true;
}

static void reply_error(struct echo_reply *r, enum echo_error e)
{
    r->error = e;
    r->work = ECHO_WORK_NONE;
    if (e == ECHO_ERROR_BAD_ARGUMENT) {
        r->data = ECHO_ERR_BAD_ARGUMENT;
        r->len = sizeof(ECHO_ERR_BAD_ARGUMENT) - 1;
    } else {
        r->data = ECHO_ERR_LINE_TOO_LONG;
        r->len = sizeof(ECHO_ERR_LINE_TOO_LONG) - 1;
        r->close_after = true;
    }
}

/* The reply to a line that is no command: the line itself. Under load
 * nearly every line is one, so this is a handful of stores, not a memset:
 * the fields not named are zero (ECHO_WORK_NONE, ECHO_ERROR_NONE, false). */
static inline void reply_echo(struct echo_reply *r, const char *line, size_t len)
{
    *r = (struct echo_reply){ .data = line, .len = len, .request_len = len, .lines = 1 };
}

static inline bool is_command(const char *line, size_t len)
{
    return len >= 2 && line[0] == '!';
}

void echo_decide(const char *line, size_t len, struct echo_reply *r)
{
    reply_echo(r, line, len);
    if (!is_command(line, len))
        return;

    /* Commands ignore one '\r' before the '\n', so that `nc -C` and telnet
     * work; the echo itself still carries the '\r'. */
    const char *end = line + len - 1;
    if (end > line && end[-1] == '\r')
        end--;

    const char *args;
    if (match_command(line, end, "!cpu", &args)) {
        if (!parse_bounded(args, end, ECHO_CPU_MAX_US, &r->work_amount))
            goto bad_argument;
        r->work = ECHO_WORK_CPU;
    } else if (match_command(line, end, "!sleep", &args)) {
        if (!parse_bounded(args, end, ECHO_SLEEP_MAX_MS, &r->work_amount))
            goto bad_argument;
        r->work = ECHO_WORK_SLEEP;
    } else if (match_command(line, end, "!task", &args)) {
        if (!parse_bounded(args, end, ECHO_CPU_MAX_US, &r->work_amount))
            goto bad_argument;
        r->work = ECHO_WORK_TASK;
    } else if (match_command(line, end, "!quit", &args)) {
        if (args != end)
            goto bad_argument;
        r->close_after = true;
    } else if (match_command(line, end, "!who", &args)) {
        if (args != end)
            goto bad_argument;
        r->data = NULL;          /* the session fills in who is asking */
        r->len = 0;
    }
    return;

bad_argument:
    reply_error(r, ECHO_ERROR_BAD_ARGUMENT);
}

/* The echoed lines right behind an echoed one join its reply: the decoder
 * hands lines out in the order they sit in its buffer, so each one starts
 * where the reply ends. A line that starts with '!' stays for the next
 * call, which decides it alone. */
static void extend_echo_run(struct echo_decoder *d, size_t max_lines, struct echo_reply *r)
{
    const char *line;
    size_t len;
    while (r->lines < max_lines && d->start < d->end && d->buf[d->start] != '!' &&
           echo_decoder_next(d, &line, &len) == ECHO_DECODE_LINE) {
        r->len += len;
        r->request_len += len;
        r->lines++;
    }
}

bool echo_session_next(struct echo_session *s, const char *thread_name,
                       size_t max_lines, struct echo_reply *r)
{
    const char *line;
    size_t len;

    if (s->closing)
        return false;
    switch (echo_decoder_next(&s->decoder, &line, &len)) {
    case ECHO_DECODE_NEED_MORE:
        return false;
    case ECHO_DECODE_TOO_LONG:
        memset(r, 0, sizeof(*r));
        reply_error(r, ECHO_ERROR_LINE_TOO_LONG);
        r->lines = 1;
        s->closing = true;
        return true;
    case ECHO_DECODE_LINE:
        break;
    }
    if (!is_command(line, len)) {   /* the common case, without a call */
        reply_echo(r, line, len);
        extend_echo_run(&s->decoder, max_lines, r);
        return true;
    }
    echo_decide(line, len, r);
    if (r->data == NULL) {
        int n = snprintf(s->who, sizeof(s->who),
                         "!who model=%s thread=%s conn=%llu\n", s->model,
                         thread_name ? thread_name : "?",
                         (unsigned long long)s->conn_id);
        r->data = s->who;
        r->who = true;
        r->len = n < (int)sizeof(s->who) ? (size_t)n : sizeof(s->who) - 1;
    }
    if (r->close_after)
        s->closing = true;
    return true;
}

const char *echo_end_reason(enum echo_end end, bool stopping)
{
    switch (end) {
    case ECHO_END_EOF:       return stopping ? "server stopping" : "client closed";
    case ECHO_END_RESET:     return "reset by client";
    case ECHO_END_IO_ERROR:  return "I/O error";
    case ECHO_END_QUIT:      return "!quit";
    case ECHO_END_TOO_LONG:  return "line too long";
    case ECHO_END_NO_MEMORY: return "out of memory";
    case ECHO_END_STOPPED:   return "closed by the stop timeout";
    case ECHO_END_IDLE:      return "idle too long (--idle-timeout)";
    case ECHO_END_LINE_TIMEOUT: return "line too slow (--line-timeout)";
    case ECHO_END_STALLED:   return "not reading its replies (--stall-timeout)";
    case ECHO_END_REFUSED:   return "refused: too many connections (--max-conns)";
    }
    return "?";
}

bool echo_end_lingers(enum echo_end end)
{
    return end == ECHO_END_QUIT || end == ECHO_END_TOO_LONG || end == ECHO_END_REFUSED;
}

static uint64_t clock_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void echo_burn_cpu_us(uint32_t us)
{
    /* Thread CPU time, not wall time: on a busy machine the burn takes
     * longer in wall time, exactly as real CPU-bound work would. */
    uint64_t until = clock_ns(CLOCK_THREAD_CPUTIME_ID) + (uint64_t)us * 1000u;
    volatile uint64_t sink = 0;
    while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < until)
        for (int i = 0; i < 256; i++)
            sink += (uint64_t)i;
    (void)sink;
}

void echo_sleep_ms(uint32_t ms)
{
    struct timespec left = { .tv_sec = ms / 1000,
                             .tv_nsec = (long)(ms % 1000) * 1000000L };
    while (nanosleep(&left, &left) == -1 && errno == EINTR)
        ;
}

void echo__do_work(const struct echo_reply *r)
{
    if (r->work == ECHO_WORK_CPU || r->work == ECHO_WORK_TASK)
        echo_burn_cpu_us(r->work_amount);
    else if (r->work == ECHO_WORK_SLEEP)
        echo_sleep_ms(r->work_amount);
}
