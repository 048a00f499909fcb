/* scenario.c -- the demo's workloads. See scenario.h.
 *
 * The pool is given enough threads for the scenario's connections (its
 * default 16 would leave most of them queued: a lesson of its own, shown
 * by many-idle), and the loops a blocked-loop warning at 100 ms so the
 * stall is on screen when it happens.
 */
#include "scenario.h"

#include <stdio.h>
#include <string.h>

#define LOOP_WARN "--blocked-warn-ms 100"

const struct scenario scenarios[] = {
    { "steady", "many connections, small lines, closed loop",
      "Count threads: BIO one per connection, the pool up to "
      "--max, the reactor one loop, the multi-reactor a boss and workers; "
      "each also has its main thread, and the loops a checker.",
      64, "", { "", "--max 128", LOOP_WARN, LOOP_WARN } },
    { "burst", "connections arrive in four waves",
      "Connections arrive in waves: BIO's threads jump with each wave, the pool "
      "grows its task threads, the loops just take more channels.",
      400, "--waves 4", { "", "--max 512", LOOP_WARN, LOOP_WARN } },
    { "slow-handler", "1% of lines run !sleep 200 in the handler",
      "1% of lines sleep 200 ms: the reactor's one loop sleeps too (BLOCKED) and all "
      "its connections wait; BIO and the pool block just one thread.",
      64, "--mix sleep=200:1", { "", "--max 128", LOOP_WARN, LOOP_WARN } },
    { "cpu-heavy", "20% of lines burn 2 ms of CPU (!cpu 2000)",
      "20% of lines burn 2 ms of CPU: threads beyond the cores only queue for them. "
      "Lines/s level off alike; see BIO's context switches.",
      32, "--mix cpu=2000:20", { "", "--max 64", LOOP_WARN, LOOP_WARN } },
    { "many-idle", "2000 connections, one line a second each (open loop)",
      "2000 idle-ish connections: BIO holds 2000 threads blocked in read, the pool "
      "256 (the rest wait in its queue), the loops 2000 channels.",
      2000, "--rate 2000 --ramp 2 --threads 2", { "", "--max 256", LOOP_WARN, LOOP_WARN } },
    { "mixed", "connections in waves, !cpu and !sleep lines mixed in",
      "A bit of everything: waves of connections, 5% of lines burn 0.5 ms, 1% sleep "
      "50 ms. Which keeps its p99 lowest?",
      200, "--waves 2 --mix cpu=500:5,sleep=50:1", { "", "--max 256", LOOP_WARN, LOOP_WARN } },
};

const size_t nscenarios = sizeof(scenarios) / sizeof(scenarios[0]);

const struct scenario *scenario_find(const char *name)
{
    for (size_t i = 0; i < nscenarios; i++)
        if (strcmp(scenarios[i].name, name) == 0)
            return &scenarios[i];
    return NULL;
}

const char *scenario_serve_args(const struct scenario *s, const char *model)
{
    static const char *const order[4] = { "bio", "pool", "reactor", "multireactor" };
    for (int i = 0; i < 4; i++)
        if (strcmp(order[i], model) == 0)
            return s->serve_args[i];
    return "";
}

int scenario_split(const char *args, char *buf, size_t buf_len, const char **argv,
                   int max)
{
    int n = 0;
    snprintf(buf, buf_len, "%s", args);
    for (char *save = NULL, *tok = strtok_r(buf, " ", &save); tok && n < max - 1;
         tok = strtok_r(NULL, " ", &save))
        argv[n++] = tok;
    argv[n] = NULL;
    return n;
}
