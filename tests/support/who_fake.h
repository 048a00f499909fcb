/* who_fake.h -- fake multi-reactors for grading lab 06's proof of
 * affinity (affinity_proof.h): small echo servers on loopback that answer
 * "!who" the way a real multi-reactor would, or the way one with a given
 * flaw would. The proof only ever sees !who replies, so a proof that
 * passes one of the flawed fakes would pass the flawed server too.
 *
 * A fake echoes every other line as it came; it does not run !cpu,
 * !sleep or !task, and it has no board: a proof that sets out to tell a
 * fake from a real server can, and proves nothing by it. */
#ifndef THREADLAB_WHO_FAKE_H
#define THREADLAB_WHO_FAKE_H

#include <stdint.h>

enum who_fake_flaw {
    WHO_FAKE_FAITHFUL,          /* connection i on worker i mod n, for life */
    WHO_FAKE_ALWAYS_MASKS,      /* i & (n - 1): with 3 workers, never worker-2 */
    WHO_FAKE_STARTS_ONE_LATE,   /* i + 1 mod n: the first on worker-2 */
    WHO_FAKE_CHANNEL_MOVES,     /* from its third line, the next worker answers */
    WHO_FAKE_LAST_CHOSEN,       /* every line on the worker chosen last */
    WHO_FAKE_BOSS_ANSWERS,      /* the boss serves every line itself */
    WHO_FAKE_FLAWS              /* how many there are */
};

struct who_fake;

/* A fake with that flaw and `workers` worker names, listening on a free
 * loopback port, served by a thread of its own. NULL + errno. */
struct who_fake *who_fake_start(enum who_fake_flaw flaw, int workers);

/* Its port. */
uint16_t who_fake_port(const struct who_fake *f);

/* What the flaw is, as a sentence's end ("a chooser that ..."). */
const char *who_fake_flaw_name(enum who_fake_flaw flaw);

/* Close every connection, join its thread, free it. */
void who_fake_stop(struct who_fake *f);

#endif
