/* cli_fleet.c -- options and start-up shared by demo and compare. */
#include "cli_fleet.h"

#include <signal.h>
#include <stdatomic.h>
#include <string.h>

#include "cli.h"
#include "cli_help_zh.h"
#include "registry.h"

void plan_init(struct plan *p, double duration_s)
{
    memset(p, 0, sizeof(*p));
    for (int i = 0; i < FLEET_MAX && model_at(i); i++)
        p->models[p->nmodels++] = model_at(i)->name;
    p->sc = scenario_find("steady");
    p->duration_s = duration_s;
}

bool plan_parse_models(const char *cmd, const char *arg, void *plan)
{
    struct plan *p = plan;
    snprintf(p->models_buf, sizeof(p->models_buf), "%s", arg);
    p->nmodels = 0;
    for (char *save = NULL, *m = strtok_r(p->models_buf, ",", &save); m;
         m = strtok_r(NULL, ",", &save)) {
        if (!model_find(m)) {
            char names[128];
            cli_usage_error(cmd, "--models: no model called '%s' (%s)", m,
                            model_names(names, sizeof(names)));
            return false;
        }
        for (int k = 0; k < p->nmodels; k++)
            if (strcmp(p->models[k], m) == 0) {
                cli_usage_error(cmd, "--models: '%s' is named twice", m);
                return false;
            }
        if (p->nmodels == FLEET_MAX) {
            cli_usage_error(cmd, "--models: at most %d", FLEET_MAX);
            return false;
        }
        p->models[p->nmodels++] = m;
    }
    if (p->nmodels == 0) {
        cli_usage_error(cmd, "--models: name at least one model");
        return false;
    }
    return true;
}

bool plan_parse_scenario(const char *cmd, const char *arg, void *plan)
{
    struct plan *p = plan;
    p->sc = scenario_find(arg);
    if (!p->sc) {
        cli_usage_error(cmd, "--scenario: no scenario called '%s'", arg);
        return false;
    }
    return true;
}

void plan_usage(FILE *out, double default_duration_s)
{
    if (msg_lang() == LANG_ZH) {
        fprintf(out, cli_plan_options_zh, default_duration_s);
        return;
    }
    fprintf(out,
            "  --models LIST    comma-separated models (default bio,pool,reactor,\n"
            "                   multireactor,vthread)\n"
            "  --scenario NAME  the workload (default steady; see below)\n"
            "  --duration S     seconds of load per model (default %g)\n"
            "  --conns N        connections per model (default: the scenario's)\n",
            default_duration_s);
}

void plan_usage_scenarios(FILE *out)
{
    bool zh = msg_lang() == LANG_ZH;
    fprintf(out, zh ? "场景：\n" : "scenarios:\n");
    for (size_t i = 0; i < nscenarios; i++)
        fprintf(out, zh ? "  %-13s %s（%d 个连接）\n" : "  %-13s %s (%d conns)\n",
                scenarios[i].name, msg(scenarios[i].summary), scenarios[i].conns);
}

int plan_start(struct fleet *f, const struct plan *p, int i, char *err, size_t err_len)
{
    const char *model = p->models[i];
    char serve_buf[256], load_buf[256];
    const char *serve_argv[SCENARIO_MAX_ARGS];
    const char *load_argv[6 + SCENARIO_MAX_ARGS + PLAN_MAX_LOAD_ARGS + 1];
    scenario_split(scenario_serve_args(p->sc, model), serve_buf, sizeof(serve_buf),
                   serve_argv, SCENARIO_MAX_ARGS);
    int at = fleet_start_server(f, model, serve_argv, err, err_len);
    if (at < 0)
        return -1;

    char conns[16], duration[32];
    snprintf(conns, sizeof(conns), "%d", plan_conns(p));
    snprintf(duration, sizeof(duration), "%g", p->duration_s);
    int n = 0;
    load_argv[n++] = "--conns";
    load_argv[n++] = conns;
    load_argv[n++] = "--duration";
    load_argv[n++] = duration;
    /* A connection the pool keeps queued gets no reply for a while: that
     * is counted as a timeout only after 10 s. */
    load_argv[n++] = "--timeout";
    load_argv[n++] = "10";
    n += scenario_split(p->sc->load_args, load_buf, sizeof(load_buf), load_argv + n,
                        SCENARIO_MAX_ARGS);
    for (int k = 0; k < PLAN_MAX_LOAD_ARGS && p->load_args[k]; k++)
        load_argv[n++] = p->load_args[k];
    load_argv[n] = NULL;
    if (fleet_start_load(f, at, load_argv, err, err_len) < 0)
        return -1;
    return at;
}

static _Atomic bool interrupted;

static void on_stop_signal(int sig)
{
    (void)sig;
    atomic_store(&interrupted, true);
}

void plan_catch_stop_signals(void)
{
    struct sigaction stop = { .sa_handler = on_stop_signal };
    sigaction(SIGINT, &stop, NULL);
    sigaction(SIGTERM, &stop, NULL);
    sigaction(SIGHUP, &stop, NULL);
}

bool plan_interrupted(void)
{
    return atomic_load(&interrupted);
}

int plan_conns(const struct plan *p)
{
    return p->conns > 0 ? p->conns : p->sc->conns;
}

bool plan_fd_limit_fits(const struct plan *p, const char *cmd, char *msg, size_t msg_len)
{
    char why[320];
    if (cli_fd_limit_fits(plan_conns(p), why, sizeof(why)))
        return true;
    snprintf(msg, msg_len, "scenario %s: %s", p->sc->name, why);
    fprintf(stderr, "threadlab %s: %s\n", cmd, msg);
    return false;
}
