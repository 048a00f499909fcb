/* registry.h -- the models by name, for the command line and the tests.
 *
 * The one place that knows every model, so that `threadlab serve MODEL`,
 * the demo and the shared test suite name a model instead of copying code
 * per model (as Netty runs one socket test suite against every transport).
 */
#ifndef THREADLAB_REGISTRY_H
#define THREADLAB_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include "server.h"

/* Fill in the defaults: 127.0.0.1, port 0, max-line 65536, no limits,
 * and each model's own (here, where every model is known). Any thread
 * (o is the caller's). */
void server_opts_init(struct server_opts *o);

/* How to drive one model without knowing which it is. */
struct model_desc {
    const char *name;                      /* "bio", ... */
    const char *summary;                   /* one line for --help */
    void *(*start)(const struct server_opts *opts); /* NULL + errno on failure */
    uint16_t (*port)(const void *server);  /* the port it listens on */
    void (*stop)(void *server);            /* graceful stop, then free */
};

/* The model called name, or NULL. Any thread (the table is constant). */
const struct model_desc *model_find(const char *name);

/* The i-th model (0-based), or NULL past the end. Any thread. */
const struct model_desc *model_at(int i);

/* Every model's name, comma-separated ("bio, pool, ..."), into buf (cut
 * to len); returns buf, for a message that names what may be chosen.
 * Any thread. */
const char *model_names(char *buf, size_t len);

#endif
