/* bio.h -- model 1: one thread per connection, blocking I/O.
 *
 * Usable as a library (the tests and the demo run it in-process) and as
 * `threadlab serve bio`. See docs/models/bio.md.
 */
#ifndef THREADLAB_BIO_H
#define THREADLAB_BIO_H

#include <stdint.h>

#include "server.h"

struct bio_server;

/* Counters, read with bio_stats from the live board: all zero but
 * live_threads and shed when the server runs with no_board. */
struct bio_stats {
    uint64_t accepted;        /* connections accepted */
    uint64_t rejected;        /* refused with "!err busy" (--max-threads) */
    uint64_t shed;            /* closed at once when out of descriptors */
    uint64_t threads_spawned; /* connection threads created */
    uint64_t threads_reaped;  /* connection threads joined */
    uint64_t live_threads;    /* connection threads running now */
    uint64_t lines;           /* request lines answered */
    uint64_t bytes_in;        /* bytes read from clients */
    uint64_t bytes_out;       /* bytes written to clients */
};

/* Listen and start the acceptor thread. Returns the server, or NULL with
 * errno set (EADDRINUSE, EINVAL for a bad option...). Any thread; block
 * SIGINT/SIGTERM first if another thread is to receive them. */
struct bio_server *bio_start(const struct server_opts *opts);

/* The port it listens on. Any thread. */
uint16_t bio_port(const struct bio_server *s);

/* A snapshot of the counters. Any thread. */
void bio_stats(struct bio_server *s, struct bio_stats *out);

/* Graceful stop: stop accepting, let every connection thread answer the
 * lines already received, flush, close, join every thread, free. Any thread
 * but the server's own. */
void bio_stop(struct bio_server *s);

#endif
