/* affinity_proof.c -- lab 06: the proof of affinity. See affinity_proof.h.
 * The two helpers are given; affinity_holds is the proof. */
#include "affinity_proof.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "testnet.h"

#define PROOF_TURNS 3                   /* connections: three turns of the chooser */
#define PROOF_ROUNDS 4                  /* then this many lines on each, all open */
#define PROOF_MAX_CONNS 48
#define THREAD_NAME_BYTES 32

/* Ask fd "!who"; the name of the thread that answered into thread.
 * Returns false when no !who reply came (a close, an error, a timeout, or
 * some other line). */
static bool ask_who(int fd, char *thread, size_t cap)
{
    char line[256];
    tn_send_str(fd, "!who\n");
    ssize_t n = tn_read_line(fd, line, sizeof(line) - 1);
    if (n <= 0)
        return false;
    line[n] = '\0';
    const char *t = strstr(line, " thread=");
    if (strncmp(line, "!who ", 5) != 0 || !t)
        return false;
    t += strlen(" thread=");
    snprintf(thread, cap, "%.*s", (int)strcspn(t, " \n"), t);
    return true;
}

/* Say why the proof failed, printf-style, into why; returns false. */
static bool refuted(char *why, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, cap, fmt, ap);
    va_end(ap);
    return false;
}

bool affinity_holds(uint16_t port, int workers, char *why, size_t why_bytes)
{
    int n = workers * PROOF_TURNS, opened = 0;
    int fds[PROOF_MAX_CONNS];
    char first[PROOF_MAX_CONNS][THREAD_NAME_BYTES], now[THREAD_NAME_BYTES];
    if (workers < 2 || n > PROOF_MAX_CONNS)
        return refuted(why, why_bytes, "cannot prove it for %d workers", workers);
    bool holds = true;
    /* One at a time, each answered before the next connects: the server
     * accepts them in this order, so the i-th goes to worker i mod n. */
    for (int i = 0; i < n && holds; i++) {
        char want[THREAD_NAME_BYTES];
        snprintf(want, sizeof(want), "worker-%d", i % workers + 1);
        fds[opened++] = tn_connect(port);
        if (!ask_who(fds[i], first[i], sizeof(first[i])))
            holds = refuted(why, why_bytes, "connection %d gave no !who reply", i);
        else if (strcmp(first[i], want) != 0)
            holds = refuted(why, why_bytes, "connection %d went to %s, not to %s "
                            "(round robin over %d)", i, first[i], want, workers);
    }
    /* Then all of them open, in turns: a line is answered by its own
     * connection's worker, not by whichever was used last. */
    for (int r = 1; r <= PROOF_ROUNDS && holds; r++)
        for (int i = 0; i < n && holds; i++) {
            if (!ask_who(fds[i], now, sizeof(now)))
                holds = refuted(why, why_bytes, "connection %d gave no reply to line %d",
                                i, r + 1);
            else if (strcmp(now, first[i]) != 0)
                holds = refuted(why, why_bytes, "connection %d moved: line %d answered "
                                "by %s, line 1 by %s", i, r + 1, now, first[i]);
        }
    for (int i = 0; i < opened; i++)
        close(fds[i]);
    return holds;
}
