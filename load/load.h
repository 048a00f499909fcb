/* load.h -- the load generator: echo clients that check every byte.
 *
 * `threadlab load HOST:PORT` opens C connections and keeps D lines in
 * flight on each (closed loop), or sends lines at a fixed total rate (open
 * loop, --rate), and verifies that every reply is the line it sent, byte for
 * byte and in order. Latency is measured from the moment a line was meant
 * to be sent: in open loop a server that stalls cannot hide the stall by
 * slowing the client down (the "coordinated omission" trap).
 *
 * Lines are made from (connection, sequence number) by a seeded generator,
 * so the expected reply is re-made instead of stored: memory stays at two
 * line buffers per connection whatever the depth.
 */
#ifndef THREADLAB_LOAD_H
#define THREADLAB_LOAD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include "probe/histogram.h"

#define LOAD_OPEN_LOOP_MAX_IN_FLIGHT 4096 /* per connection, --rate only */

/* Why a connection or a line failed. */
enum load_error {
    LOAD_ERR_CONNECT,      /* connect refused, timed out, or no fds */
    LOAD_ERR_RESET,        /* the server reset the connection */
    LOAD_ERR_CLOSED,       /* EOF while replies were still owed */
    LOAD_ERR_MISMATCH,     /* a reply that is not the line sent */
    LOAD_ERR_BUSY,         /* "!err busy" */
    LOAD_ERR_TOO_LONG,     /* "!err line-too-long" */
    LOAD_ERR_BAD_ARGUMENT, /* "!err bad-argument" */
    LOAD_ERR_OTHER_ERR,    /* any other "!err ..." reply */
    LOAD_ERR_TIMEOUT,      /* no reply for --timeout while one was owed */
    LOAD_ERR_COUNT
};

/* What a run does. load_opts_init fills the defaults. */
struct load_opts {
    struct sockaddr_storage addr; /* the server */
    socklen_t addr_len;
    const char *target;           /* "HOST:PORT" as given, for the report */
    int conns;                    /* --conns: connections */
    int depth;                    /* --depth: lines in flight per connection */
    size_t line_bytes;            /* --size: bytes per line, '\n' included */
    double duration_s;            /* --duration: seconds of sending */
    uint64_t total_lines;         /* --lines: stop after this many (0: use duration) */
    double rate;                  /* --rate: lines/s over all conns (0: closed loop) */
    double cpu_pct;               /* --mix cpu=US:PCT: share of !cpu lines */
    uint32_t cpu_us;
    double sleep_pct;             /* --mix sleep=MS:PCT: share of !sleep lines */
    uint32_t sleep_ms;
    double task_pct;              /* --mix task=US:PCT: share of !task lines */
    uint32_t task_us;
    double ramp_s;                /* --ramp: spread connects over this long */
    int waves;                    /* --waves: connects come in this many
                                     waves spread over the duration (0: off) */
    const _Atomic bool *stop;     /* set (by a signal handler): stop sending
                                     now and report; may be NULL */
    int threads;                  /* --threads: client threads */
    double timeout_s;             /* --timeout: longest wait for a reply */
    uint64_t seed;                /* --seed: line contents */
    bool progress;                /* print a progress line to stderr */
};

/* What a run measured. */
struct load_report {
    uint64_t lines_sent;          /* lines written */
    uint64_t lines_ok;            /* replies that matched */
    uint64_t bytes_sent;
    uint64_t bytes_received;
    uint64_t conns_opened;        /* connects that succeeded */
    uint64_t errors[LOAD_ERR_COUNT];
    uint64_t errors_total;
    double elapsed_s;             /* first connect to last reply */
    double lines_per_s;
    double mb_per_s;              /* echoed megabytes (10^6) per second */
    struct hist latency_ns;       /* intended send time -> reply complete */
};

/* Defaults: 1 connection, depth 1, 64-byte lines, 10 s, closed loop. */
void load_opts_init(struct load_opts *o);

/* Check the options; on error writes a message into err and returns
 * -EINVAL. */
int load_opts_check(const struct load_opts *o, char *err, size_t err_len);

/* Run the load, blocking until it ends. Returns 0 when it ran (errors are
 * in the report), -errno when it could not start. Any thread; the report
 * is large (it holds a histogram): do not put it on a small stack. */
int load_run(const struct load_opts *o, struct load_report *r);

/* Make line `seq` of connection `conn` into buf (room for o->line_bytes, or
 * for a command line); returns its length, '\n' included. The same inputs
 * always make the same bytes: that is how replies are checked. */
size_t load_make_line(const struct load_opts *o, uint32_t conn, uint64_t seq,
                      char *buf);

/* The report's human form and JSON form. */
void load_report_print(const struct load_opts *o, const struct load_report *r,
                       FILE *out);
void load_report_json(const struct load_opts *o, const struct load_report *r,
                      FILE *out);

/* The name of an error kind, as used in reports ("connect", "busy"...). */
const char *load_error_name(enum load_error e);

#endif
