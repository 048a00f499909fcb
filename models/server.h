/* server.h -- the options every model takes, in one place.
 *
 * The four models take the same flags wherever a flag means the same thing
 * (`--port --bind --max-line --backlog ...`), so they share one options
 * struct; each model reads the fields that apply to it and ignores the rest.
 * The command line fills it (cli), and tests fill it directly.
 */
#ifndef THREADLAB_SERVER_H
#define THREADLAB_SERVER_H

#include <stdbool.h>
#include <stddef.h>

#include "net/net.h"
#include "threadpool/pool.h"
#include "probe/board.h"

struct server_opts {
    struct net_listen_opts listen; /* --bind --port --backlog --keepalive --nodelay */
    size_t max_line;               /* --max-line: longest line, '\n' not counted */
    int max_threads;               /* bio --max-threads: 0 means no limit */
    int stack_kb;                  /* bio --stack-kb: 0 means the system default */
    struct pool_opts pool;         /* pool --min --max --queue --idle-ms --reject
                                      --adaptive: the task pool's sizes */
    int offload_threads;           /* reactors --offload N: business pool size, 0: none */
    int io_ratio_pct;              /* reactors --io-ratio (1..100) */
    int blocked_warn_ms;           /* reactors --blocked-warn-ms */
    int blocked_trace_ms;          /* reactors --blocked-trace-ms: stack past this; 0: never */
    int stop_timeout_ms;           /* reactors: longest graceful stop before closing */
    int max_conns;                 /* --max-conns: beyond, "!err busy"; 0: no limit */
    int idle_timeout_ms;           /* --idle-timeout: close after this silence; 0: never */
    int line_timeout_ms;           /* --line-timeout: a line must complete within; 0: never */
    int stall_timeout_ms;          /* --stall-timeout: replies unread this long; 0: never */
    int bosses;                    /* multireactor --bosses: 0 means 1 */
    int workers;                   /* multireactor --workers: 0 means 2 x cores */
    int carriers;                  /* vthread --carriers: 0 means the cores */
    size_t stack_bytes;            /* vthread --stack: 0 means 64 KiB */
    int handoff_ms;                /* vthread --handoff-ms */
    bool pin;                      /* vthread --pin: a blocking call holds its carrier */
    int linger_ms;                 /* how long a closing error reply drains input */
    bool no_board;                 /* --no-board: publish no live state */
    struct board_thread_ref *main_thread; /* if set, the thread calling
                                      *_start is put on the board as "main"
                                      through this ref, waiting (serve's main
                                      thread: it waits for the stop signal,
                                      then joins the rest); NULL in tests,
                                      whose thread is not the server's */
};

/* Create the model's live board unless opts->no_board; on failure the
 * server runs without one, after a warning on stderr. Its header shows
 * the options every model shares, then own_options, what the model adds
 * (" max-threads=0 stack-kb=0": each model describes its own, so that
 * this file, below every model, knows none of them). With
 * opts->main_thread, the calling thread takes a thread slot before any
 * of the model's threads, role main, state waiting; its ref is never used again (the board
 * goes with the server's stop). Returns the board or NULL. The thread that
 * calls *_start. */
struct board *server_open_board(const char *model, const struct server_opts *opts,
                                const char *own_options);

#endif
