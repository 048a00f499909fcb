/* scenario.c -- the demo's workloads. See scenario.h.
 *
 * The pool is given enough threads for the scenario's connections (its
 * default 16 would leave most of them queued: a lesson of its own, shown
 * by many-idle), and the loops a blocked-loop warning at 100 ms so the
 * stall is on screen when it happens; vthread runs with its defaults (the
 * monitor's handoff after 20 ms is what slow-handler shows). What each says, its summary and its
 * narrator, is in the message table (viz/msg.c), in both languages.
 */
#include "scenario.h"

#include <stdio.h>
#include <string.h>

#define LOOP_WARN "--blocked-warn-ms 100"

const struct scenario scenarios[] = {
    { "steady", M_SC_STEADY, M_SC_STEADY_SAY,
      64, "", { "", "--max 128", LOOP_WARN, LOOP_WARN, "" } },
    { "burst", M_SC_BURST, M_SC_BURST_SAY,
      400, "--waves 4", { "", "--max 512", LOOP_WARN, LOOP_WARN, "" } },
    { "slow-handler", M_SC_SLOW, M_SC_SLOW_SAY,
      64, "--mix sleep=200:1", { "", "--max 128", LOOP_WARN, LOOP_WARN, "" } },
    { "cpu-heavy", M_SC_CPU, M_SC_CPU_SAY,
      32, "--mix cpu=2000:20", { "", "--max 64", LOOP_WARN, LOOP_WARN, "" } },
    { "many-idle", M_SC_IDLE, M_SC_IDLE_SAY,
      2000, "--rate 2000 --ramp 2 --threads 2", { "", "--max 256", LOOP_WARN, LOOP_WARN, "" } },
    { "mixed", M_SC_MIXED, M_SC_MIXED_SAY,
      200, "--waves 2 --mix cpu=500:5,sleep=50:1", { "", "--max 256", LOOP_WARN, LOOP_WARN, "" } },
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
    static const char *const order[5] = { "bio", "pool", "reactor", "multireactor",
                                          "vthread" };
    for (int i = 0; i < 5; i++)
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
