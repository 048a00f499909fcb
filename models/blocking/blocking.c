/* blocking.c -- what bio and pool share: open, stop accepting, close.
 * See blocking.h. */
#include "blocking.h"

#include <errno.h>
#include <stdlib.h>

#include "net/net.h"

void *blocking_new(size_t size, const char *model, const struct server_opts *opts,
                   const char *own_options)
{
    struct blocking_server *b = calloc(1, size);
    if (!b)
        return NULL;
    b->opts = *opts;
    int rc = conn_registry_init(&b->conns);
    if (rc < 0)
        goto out_free;
    net_ignore_sigpipe();
    rc = acceptor_open(&b->acceptor, &b->opts.listen);
    if (rc < 0)
        goto out_destroy_registry;
    b->board = server_open_board(model, &b->opts, own_options);
    b->serving = (struct conn_server){ model, &b->opts, b->board, &b->conns };
    return b;

out_destroy_registry:
    conn_registry_destroy(&b->conns);
out_free:
    free(b);
    errno = -rc;
    return NULL;
}

void *blocking_admit(struct blocking_server *b, int fd, uint64_t id, size_t size)
{
    if (conn_refuse_over_limit(&b->opts, &b->conns, &b->acceptor, fd, id))
        return NULL;
    void *record = calloc(1, size);
    if (!record)
        acceptor_refuse(&b->acceptor, fd, id, "out of memory");
    return record;
}

void blocking_stop_accepting(struct blocking_server *b)
{
    board_mark_closing(b->board);
    /* The connections first: the acceptor may itself be held by one (it
     * serves it under caller-runs, or waits in pool_submit, under block,
     * for a task thread to free a place), and joining it before they knew
     * of the stop waited for their clients to leave. */
    conn_registry_stop_input(&b->conns);
    acceptor_stop(&b->acceptor);
}

void blocking_free(struct blocking_server *b)
{
    acceptor_stop(&b->acceptor);         /* a second call finds it stopped */
    board_close(b->board);
    conn_registry_destroy(&b->conns);
    free(b);                             /* the model's whole server */
}
