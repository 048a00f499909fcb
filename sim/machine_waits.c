/* machine_waits.c -- sim --waits: the machine's notes of how long threads
 * wait for a core and run on one. See machine_waits.h.
 */
#include "machine_waits.h"

/* sim --waits: which of the two kinds thread t's figures go to. */
static int waits_kind(const struct machine *m, uint32_t t)
{
    return t == m->waits_apart;
}

/* Core c's thread leaves it: the stretch it ran there, and whether it
 * was preempted. */
void waits_note_run(struct machine *m, int c, bool preempted)
{
    if (!m->waits)
        return;
    int k = waits_kind(m, m->cores[c].thread);
    vtime_t now = m->eng->now, on = m->cores[c].on_core_since;
    hist_record(&m->waits->run_ns[k], now > on ? now - on : 0);
    if (preempted)
        m->waits->preempted[k]++;
    else
        m->waits->blocked[k]++;
}

void waits_note_wait(struct machine *m, uint32_t t, vtime_t start)
{
    if (m->waits)
        hist_record(&m->waits->wait_ns[waits_kind(m, t)], start - m->threads[t].runnable_at);
}
