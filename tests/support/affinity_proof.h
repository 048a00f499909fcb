/* affinity_proof.h -- lab 06's proof of affinity, as code that a grader
 * can run: a connection of a multi-reactor is served by one worker thread
 * for its whole life, and the chooser hands the i-th connection to worker
 * i mod n. check_multireactor's "proof" case runs it against a real
 * multi-reactor (it must hold) and against fakes with a flaw each
 * (who_fake.h: it must find each one out). */
#ifndef THREADLAB_AFFINITY_PROOF_H
#define THREADLAB_AFFINITY_PROOF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AFFINITY_WHY_BYTES 200          /* room for the reason a proof gives */

/* Does the multi-reactor on 127.0.0.1:port -- just started, with
 * `workers` (2 or more) worker loops named "worker-1" ... and no
 * connection accepted yet -- hand the i-th connection it accepts (i from
 * 0) to worker-(i mod workers + 1), and answer every line of a connection
 * on that one worker's thread, whatever the other connections do?
 *
 * Finds out by asking "!who" (see docs/protocol.md); the server is
 * treated as a stranger: anything it replies may be wrong. Returns true
 * when every answer agreed; false, with a sentence in why (which
 * connection, which line, what it said), at the first that did not.
 * Closes every connection it opened (the servers it is graded against
 * take up to 64 at once). A test's thread; blocking, each read bounded by
 * testnet's timeout. */
bool affinity_holds(uint16_t port, int workers, char *why, size_t why_bytes);

#endif
