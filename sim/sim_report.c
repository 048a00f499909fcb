/* sim_report.c -- what a run found, as `threadlab load` reports it plus the
 * machine's side: CPU, context switches, threads and memory. */
#include <stdio.h>

#include "sim/sim_internal.h"

/* Core c's busy time at s->window_end: what its finished stretches
 * added, plus the part of a stretch still running then. */
static vtime_t core_busy_at_window_end(const struct sim *s, int c)
{
    const struct vcore *core = &s->m.cores[c];
    vtime_t busy = core->busy_ns;
    if (core->thread != VT_NONE && core->segment_start < s->window_end)
        busy += s->window_end - core->segment_start;
    return busy;
}

/* Called before the first event at or after window_end is taken, so
 * nothing has happened since the last event and every running stretch
 * runs on to window_end. */
void sim__report_window(struct sim *s)
{
    s->window_taken = true;
    s->window_lines = s->r->lines_ok;
    for (int c = 0; c < s->o->cores; c++)
        s->window_core_busy[c] = core_busy_at_window_end(s, c);
}

static void fill_cpu(struct sim *s)
{
    const struct sim_opts *o = s->o;
    struct sim_report *r = s->r;
    double window_ns = (double)s->window_end;
    double sum = 0;
    r->core_busy_min_pct = 100;
    for (int c = 0; c < o->cores; c++) {
        double pct = window_ns > 0 ? 100.0 * (double)s->window_core_busy[c] / window_ns : 0;
        sum += pct;
        if (c < SIM_REPORT_CORES)
            r->core_busy_pct[c] = pct;
        if (pct < r->core_busy_min_pct)
            r->core_busy_min_pct = pct;
        if (pct > r->core_busy_max_pct)
            r->core_busy_max_pct = pct;
    }
    r->cpu_busy_pct = sum / o->cores;
    r->context_switches = s->m.context_switches;
    r->preemptions = s->m.preemptions;
    r->wakeup_preemptions = s->m.wakeup_preemptions;
    r->migrations = s->m.migrations;
}

/* Little's law, L = lambda x W, over the whole run: L from the area under
 * the count of lines in the system, W from each line's own time in it
 * (replies: their latency; lost lines: until their loss or the end). Two
 * separate sums of the same time, so a line counted in one and not the
 * other shows. */
static void fill_little(struct sim *s)
{
    struct sim_report *r = s->r;
    double run_ns = (double)s->eng.now;
    r->mean_latency_ns = r->lines_ok ? s->latency_sum_ns / (double)r->lines_ok : 0;
    if (run_ns <= 0 || r->lines_sent == 0)
        return;
    r->mean_in_system = s->in_system_area / run_ns;
    r->arrival_per_s = (double)r->lines_sent / run_ns * 1e9;
    r->sojourn_ns = (s->latency_sum_ns + s->lost_sojourn_ns) / (double)r->lines_sent;
}

void sim__report_fill(struct sim *s)
{
    const struct sim_opts *o = s->o;
    struct sim_report *r = s->r;
    r->virtual_s = (double)s->eng.now / 1e9;
    r->window_s = (double)s->window_end / 1e9;
    r->drain_s = r->virtual_s - r->window_s;
    r->window_lines = s->window_lines;
    r->lines_per_s = r->window_s > 0 ? (double)r->window_lines / r->window_s : 0;
    r->lines_lost = r->lines_sent - r->lines_ok;
    r->mean_wait_ns = s->waits ? s->wait_sum_ns / (double)s->waits : 0;
    r->waits = s->waits;
    r->p_wait = s->waits ? (double)s->waits_nonzero / (double)s->waits : 0;
    fill_cpu(s);
    fill_little(s);
    r->peak_threads = s->m.peak_live;
    r->peak_stack_bytes = (double)s->m.peak_live * o->prof.stack_kb * 1024.0;
    r->peak_conn_bytes = (double)s->peak_conns * o->prof.conn_kb * 1024.0;
    r->peak_resident_bytes = (double)s->m.peak_live *
                             (o->prof.stack_touched_kb + o->prof.kernel_stack_kb) * 1024.0 +
                             r->peak_conn_bytes;
    if (o->model == SIM_VTHREAD) {               /* + each vthread's stack */
        r->peak_stack_bytes += (double)r->peak_vthreads * o->vt_stack_kb * 1024.0;
        r->peak_vthread_bytes = (double)r->peak_vthreads * o->prof.vt_stack_touched_kb * 1024.0;
        r->peak_resident_bytes += r->peak_vthread_bytes;
    }
    for (uint32_t c = 0; c < o->conns; c++)
        if (s->conns[c].state == CS_QUEUED || s->conns[c].state == CS_BACKLOG)
            r->conns_unserved++;
    r->events = s->eng.processed;
}

/* ---- printing ------------------------------------------------------------------------ */

static void print_ns(FILE *out, double ns)
{
    if (ns >= 1e9)
        fprintf(out, "%.2fs", ns / 1e9);
    else if (ns >= 1e6)
        fprintf(out, "%.1fms", ns / 1e6);
    else
        fprintf(out, "%.1fus", ns / 1e3);
}

static void print_bytes(FILE *out, double b)
{
    if (b >= 1024.0 * 1024 * 1024)
        fprintf(out, "%.1f GiB", b / (1024.0 * 1024 * 1024));
    else
        fprintf(out, "%.1f MiB", b / (1024.0 * 1024));
}

/* The percentiles the text report prints, and their names. */
static const double report_pcts[] = { 50, 90, 99, 99.9 };
static const char *const report_pct_names[] = { "p50", "p90", "p99", "p99.9" };

/* " p50 1.1ms p90 1.2ms ...": h's first n of those percentiles. */
static void print_percentiles(FILE *out, const struct hist *h, int n)
{
    for (int i = 0; i < n; i++) {
        fprintf(out, " %s ", report_pct_names[i]);
        print_ns(out, (double)hist_percentile(h, report_pcts[i]));
    }
}

/* --waits, a line for one kind of thread: its turns on a core, how long
 * it waited for one once runnable and ran once on one, and how its turns
 * ended, a line answered. */
static void print_waits(FILE *out, const struct sim_report *r, int k, const char *who)
{
    const struct machine_waits *w = &r->core_waits;
    double lines = r->lines_ok > 0 ? (double)r->lines_ok : 1;
    fprintf(out, "  waits    %s: %llu turns on a core; waited for it", who,
            (unsigned long long)(w->blocked[k] + w->preempted[k]));
    print_percentiles(out, &w->wait_ns[k], 4);
    fprintf(out, "; ran");
    print_percentiles(out, &w->run_ns[k], 3);
    fprintf(out, "; blocked %.3f, preempted %.3f a line\n", (double)w->blocked[k] / lines,
            (double)w->preempted[k] / lines);
}

/* --json --waits: the same figures, in microseconds. */
static void json_waits(FILE *out, const struct sim_report *r, int k, const char *who)
{
    const struct machine_waits *w = &r->core_waits;
    double lines = r->lines_ok > 0 ? (double)r->lines_ok : 1;
    fprintf(out, ",\"waits_%s\":{\"turns\":%llu,\"wait_us\":{\"p50\":%.1f,\"p90\":%.1f,"
            "\"p99\":%.1f,\"p99.9\":%.1f},\"run_us\":{\"p50\":%.1f,\"p90\":%.1f,"
            "\"p99\":%.1f},\"blocked_per_line\":%.4f,\"preempted_per_line\":%.4f}", who,
            (unsigned long long)(w->blocked[k] + w->preempted[k]),
            hist_percentile(&w->wait_ns[k], 50) / 1e3, hist_percentile(&w->wait_ns[k], 90) / 1e3,
            hist_percentile(&w->wait_ns[k], 99) / 1e3,
            hist_percentile(&w->wait_ns[k], 99.9) / 1e3,
            hist_percentile(&w->run_ns[k], 50) / 1e3, hist_percentile(&w->run_ns[k], 90) / 1e3,
            hist_percentile(&w->run_ns[k], 99) / 1e3, (double)w->blocked[k] / lines,
            (double)w->preempted[k] / lines);
}

/* vthread: its own line, after the memory line. */
static void print_vthreads(FILE *out, const struct sim_opts *o, const struct sim_report *r)
{
    double lines = r->lines_ok > 0 ? (double)r->lines_ok : 1;
    fprintf(out, "\n  vthreads %llu at most on %d carriers%s: stacks ",
            (unsigned long long)r->peak_vthreads, o->carriers > 0 ? o->carriers : o->cores,
            o->pin ? " (--pin)" : "");
    print_bytes(out, r->peak_vthreads * o->vt_stack_kb * 1024.0);
    fprintf(out, " reserved (%.0f KiB each), ", o->vt_stack_kb);
    if (r->peak_vthread_bytes < 1024.0 * 1024)
        fprintf(out, "%.0f KiB", r->peak_vthread_bytes / 1024);
    else
        print_bytes(out, r->peak_vthread_bytes);
    fprintf(out, " touched (%.0f KiB each); %.2f switches and %.2f parks a line; "
            "%llu handoffs to a spare, %u spares at most", o->prof.vt_stack_touched_kb,
            (double)r->vt_switches / lines, (double)r->vt_parks / lines,
            (unsigned long long)r->handoffs, r->peak_spares);
}

void sim_report_print(const struct sim_opts *o, const struct sim_report *r, FILE *out)
{
    fprintf(out, "sim %s: %d cores, %u conns, %s, seed %llu\n", sim_model_name(o->model),
            o->cores, o->conns, o->rate > 0 ? "open loop" : "closed loop",
            (unsigned long long)o->seed);
    fprintf(out, "  lines    %llu ok of %llu sent: %.0f lines/s over the %.2fs of sending "
            "(simulated), then %.2fs of drain\n",
            (unsigned long long)r->lines_ok, (unsigned long long)r->lines_sent,
            r->lines_per_s, r->window_s, r->drain_s);
    fprintf(out, "  latency ");
    print_percentiles(out, &r->latency_ns, 4);
    fprintf(out, " max ");
    print_ns(out, (double)atomic_load(&r->latency_ns.max));
    fprintf(out, " mean ");
    print_ns(out, r->mean_latency_ns);
    fprintf(out, "\n  wait     mean ");
    print_ns(out, r->mean_wait_ns);
    fprintf(out, " at the server until a line first gets a core; %.1f%% of lines "
            "waited\n", 100 * r->p_wait);
    fprintf(out, "  little   L %.2f lines in the system = lambda %.0f lines/s x W ",
            r->mean_in_system, r->arrival_per_s);
    print_ns(out, r->sojourn_ns);
    fprintf(out, " (the whole run)\n");
    fprintf(out, "  conns    %llu opened, %llu refused, %llu never served\n",
            (unsigned long long)r->conns_opened, (unsigned long long)r->conns_refused,
            (unsigned long long)r->conns_unserved);
    fprintf(out, "  cpu      %.1f%% busy on %d cores while sending; %llu context switches "
            "(%llu preemptions, %llu of them by a woken thread); %llu moves to another "
            "core\n", r->cpu_busy_pct, o->cores,
            (unsigned long long)r->context_switches, (unsigned long long)r->preemptions,
            (unsigned long long)r->wakeup_preemptions, (unsigned long long)r->migrations);
    fprintf(out, "  cores   ");
    if (o->cores <= 16) {
        for (int c = 0; c < o->cores; c++)
            fprintf(out, " %.0f%%", r->core_busy_pct[c]);
        fprintf(out, " busy, core by core\n");
    } else {
        fprintf(out, " %.0f%% to %.0f%% busy, from the idlest core to the busiest\n",
                r->core_busy_min_pct, r->core_busy_max_pct);
    }
    if (o->waits) {
        print_waits(out, r, 0, "server threads");
        if (o->client_on_machine)
            print_waits(out, r, 1, "load generator");
    }
    fprintf(out, "  threads  %u at most; stacks ", r->peak_threads);
    print_bytes(out, r->peak_stack_bytes);
    fprintf(out, " reserved (%.0f KiB each); connections ", o->prof.stack_kb);
    print_bytes(out, r->peak_conn_bytes);
    fprintf(out, "\n  memory   ");
    print_bytes(out, r->peak_resident_bytes);
    fprintf(out, " resident at most: %.0f KiB of stack touched + %.0f KiB of kernel stack "
            "a thread, %.0f KiB a connection", o->prof.stack_touched_kb,
            o->prof.kernel_stack_kb, o->prof.conn_kb);
    if (o->model == SIM_VTHREAD)
        print_vthreads(out, o, r);
    fprintf(out, "\n  errors   ");
    if (r->conns_refused == 0 && r->conns_unserved == 0 && r->lines_lost == 0)
        fprintf(out, "none\n");
    else
        fprintf(out, "%llu connections refused, %llu left waiting; %llu lines lost: %llu "
                "with a refused connection, %llu left waiting, %llu cut short\n",
                (unsigned long long)r->conns_refused, (unsigned long long)r->conns_unserved,
                (unsigned long long)r->lines_lost, (unsigned long long)r->lines_refused,
                (unsigned long long)r->lines_unserved, (unsigned long long)r->lines_cut);
}

void sim_report_engine(const struct sim_report *r, FILE *out)
{
    fprintf(out, "engine: %llu events in %.2fs of wall time: %.1fM events/s, "
            "peak RSS %ld MiB\n", (unsigned long long)r->events, r->wall_s,
            r->events_per_s / 1e6, r->peak_rss_kb / 1024);
}

void sim_report_json(const struct sim_opts *o, const struct sim_report *r, FILE *out)
{
    fprintf(out, "{\"model\":\"%s\",\"cores\":%d,\"conns\":%u,\"seed\":%llu,"
            "\"lines_sent\":%llu,\"lines_ok\":%llu,\"lines_lost\":%llu,\"virtual_s\":%.6f,"
            "\"window_s\":%.6f,\"drain_s\":%.6f,\"window_lines\":%llu,\"lines_per_s\":%.1f,"
            "\"latency_us\":{\"p50\":%.1f,\"p90\":%.1f,\"p99\":%.1f,\"p99.9\":%.1f,"
            "\"max\":%.1f},\"mean_wait_us\":%.3f,\"conns_opened\":%llu,"
            "\"conns_refused\":%llu,\"conns_unserved\":%llu,\"cpu_busy_pct\":%.2f,"
            "\"context_switches\":%llu,\"preemptions\":%llu,\"wakeup_preemptions\":%llu,"
            "\"migrations\":%llu,\"peak_threads\":%u,"
            "\"peak_stack_bytes\":%.0f,\"peak_resident_bytes\":%.0f,\"peak_conn_bytes\":%.0f,"
            "\"events\":%llu,",
            sim_model_name(o->model), o->cores, o->conns, (unsigned long long)o->seed,
            (unsigned long long)r->lines_sent, (unsigned long long)r->lines_ok,
            (unsigned long long)r->lines_lost, r->virtual_s, r->window_s, r->drain_s,
            (unsigned long long)r->window_lines, r->lines_per_s,
            hist_percentile(&r->latency_ns, 50) / 1e3,
            hist_percentile(&r->latency_ns, 90) / 1e3,
            hist_percentile(&r->latency_ns, 99) / 1e3,
            hist_percentile(&r->latency_ns, 99.9) / 1e3,
            atomic_load(&r->latency_ns.max) / 1e3, r->mean_wait_ns / 1e3,
            (unsigned long long)r->conns_opened, (unsigned long long)r->conns_refused,
            (unsigned long long)r->conns_unserved, r->cpu_busy_pct,
            (unsigned long long)r->context_switches, (unsigned long long)r->preemptions,
            (unsigned long long)r->wakeup_preemptions, (unsigned long long)r->migrations,
            r->peak_threads, r->peak_stack_bytes, r->peak_resident_bytes, r->peak_conn_bytes,
            (unsigned long long)r->events);
    fprintf(out, "\"mean_latency_us\":%.3f,\"p_wait\":%.6f,\"mean_in_system\":%.4f,"
            "\"arrival_per_s\":%.1f,\"sojourn_us\":%.3f,", r->mean_latency_ns / 1e3,
            r->p_wait, r->mean_in_system, r->arrival_per_s, r->sojourn_ns / 1e3);
    fprintf(out, "\"core_busy_pct\":[");
    for (int c = 0; c < o->cores && c < SIM_REPORT_CORES; c++)
        fprintf(out, "%s%.2f", c ? "," : "", r->core_busy_pct[c]);
    fprintf(out, "],\"core_busy_min_pct\":%.2f,\"core_busy_max_pct\":%.2f",
            r->core_busy_min_pct, r->core_busy_max_pct);
    if (o->waits)
        for (int k = 0; k < (o->client_on_machine ? 2 : 1); k++)
            json_waits(out, r, k, k ? "load" : "server");
    if (o->model == SIM_VTHREAD)
        fprintf(out, ",\"vthread\":{\"carriers\":%d,\"pin\":%s,\"handoff_ms\":%d,"
                "\"stack_kb\":%.0f,\"peak_vthreads\":%llu,\"peak_vthread_bytes\":%.0f,"
                "\"switches\":%llu,\"parks\":%llu,\"handoffs\":%llu,\"peak_spares\":%u}",
                o->carriers > 0 ? o->carriers : o->cores, o->pin ? "true" : "false",
                o->handoff_ms, o->vt_stack_kb, (unsigned long long)r->peak_vthreads,
                r->peak_vthread_bytes, (unsigned long long)r->vt_switches,
                (unsigned long long)r->vt_parks, (unsigned long long)r->handoffs,
                r->peak_spares);
    fprintf(out, "}\n");
}
