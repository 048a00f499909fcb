/* fixture.c -- the suite's fixture: a model started with the test
 * options and stopped after checking that fds, threads and RSS came back;
 * the server's own board read and awaited; the runner. */
#include "internal.h"

const char *model_under_test;   /* set before the runner forks */

void ts_opts(struct server_opts *o)
{
    server_opts_init(o);
    o->listen.port = 0;
    /* Pool threads above min end soon, so that a scenario's thread count
     * comes back to its baseline within the check's wait. */
    o->pool.idle_ms = 300;
}

void ts_start(struct test_server *t, const char *name,
              const struct server_opts *opts)
{
    t->model = model_find(name);
    ck_assert_msg(t->model != NULL, "no model called %s", name);
    /* A server must ignore SIGPIPE itself: one that forgets dies here. */
    signal(SIGPIPE, SIG_DFL);
    t->server = t->model->start(opts);
    ck_assert_msg(t->server != NULL, "%s did not start: %s", name,
                  strerror(errno));
    t->port = t->model->port(t->server);
    ck_assert_int_ne(t->port, 0);
    t->fds_before = tn_fd_count();
    tn_fd_names(t->fd_names_before, sizeof(t->fd_names_before));
    t->threads_before = tn_thread_count("");
    t->rss_before_kb = tn_rss_kb();
}

/* RSS may grow by what the test's own clients hold and by what malloc
 * keeps for reuse; a leak of a buffer per line or per connection, or an
 * unbounded queue, goes far past this. Under the sanitizers freed memory
 * stays resident on purpose (ASan's quarantine), so RSS says nothing. */
enum { RSS_GROWTH_LIMIT_KB = 256 * 1024 };

/* Wait up to 10 s for this process to hold no more fds and threads than
 * it did before; *fds and *threads get the last look. The figures judged
 * are those of that look, not a fresh one: a second look may catch an fd
 * that something opens for a moment (the eintr shim's walk of
 * /proc/self/task did) and fail a clean stop. */
void ms_settle(int fds_before, int threads_before, int *fds, int *threads)
{
    uint64_t deadline = now_ms() + 10000;
    *fds = tn_fd_count();
    *threads = tn_thread_count("");
    while ((*fds > fds_before || *threads > threads_before) && now_ms() < deadline) {
        usleep(20000);
        *fds = tn_fd_count();
        *threads = tn_thread_count("");
    }
}

void ts_stop_checked(struct test_server *t, const char *scenario)
{
    int fds, threads;
    ms_settle(t->fds_before, t->threads_before, &fds, &threads);
    long rss = tn_rss_kb();
    size_t name_len = strlen(scenario);        /* Check names it "<test>_fn" */
    if (name_len > 3 && strcmp(scenario + name_len - 3, "_fn") == 0)
        name_len -= 3;
    printf("  %-12s %-42.*s rss %6ld -> %6ld KiB  fds %3d -> %3d  threads %3d -> %3d\n",
           model_under_test, (int)name_len, scenario, t->rss_before_kb, rss,
           t->fds_before, fds, t->threads_before, threads);
    fflush(stdout);
    char states[256], fd_names[512];
    tn_port_states(t->port, states, sizeof(states));
    tn_fd_names(fd_names, sizeof(fd_names));
    ck_assert_msg(fds <= t->fds_before, "%s: %d fds open after, %d before; sockets "
                  "on the port: %s; fds before: %s; after: %s", scenario, fds,
                  t->fds_before, states, t->fd_names_before, fd_names);
    char names[512];
    tn_thread_names(names, sizeof(names));
    ck_assert_msg(threads <= t->threads_before, "%s: %d threads after, %d before: %s",
                  scenario, threads, t->threads_before, names);
    ck_assert_msg(SANITIZED || rss - t->rss_before_kb < RSS_GROWTH_LIMIT_KB,
                  "%s: RSS grew from %ld to %ld KiB", scenario, t->rss_before_kb, rss);
    ts_stop_now(t);
}

void ts_stop_now(struct test_server *t)
{
    t->model->stop(t->server);
    t->server = NULL;
}

void start_default(struct test_server *t)
{
    struct server_opts o;
    ts_opts(&o);
    ts_start(t, model_under_test, &o);
}

/* A server whose connections all share one loop (one worker; the blocking
 * models ignore it): what a test of one loop's fairness needs. */
void start_one_loop(struct test_server *t)
{
    struct server_opts o;
    ts_opts(&o);
    o.workers = 1;
    ts_start(t, model_under_test, &o);
}

/* ---- the server's own board ------------------------------------------------ */

/* The board of process pid, or NULL when it has none (yet, or any more). */
struct board_snapshot *read_board_of(pid_t pid)
{
    struct board_entry e[BOARD_LIST_MAX];
    int n = board_list(e, BOARD_LIST_MAX, false);
    struct board_snapshot *snap = malloc(sizeof(*snap));
    char err[160];
    ck_assert_ptr_nonnull(snap);
    for (int i = 0; i < n; i++)
        if (e[i].pid == pid && board_read(e[i].path, snap, err, sizeof(err)) == 0)
            return snap;
    free(snap);
    return NULL;
}

struct board_snapshot *ts_own_board(void)
{
    struct board_snapshot *snap = read_board_of(getpid());
    if (!snap)
        ck_abort_msg("no board of this process");
    return snap;
}

/* Threads of process pid's server in `state` now (0 without a board). */
static uint64_t threads_in(pid_t pid, enum board_state state)
{
    struct board_snapshot *b = read_board_of(pid);
    uint64_t n = b ? b->threads_by_state[state] : 0;
    free(b);
    return n;
}

/* Await (up to TS_AWAIT_MS) at least `at_least` threads of process pid in
 * `state`; fails the test, naming `what`, if they never are. */
void await_threads_in(pid_t pid, enum board_state state, uint64_t at_least,
                      const char *what)
{
    uint64_t deadline = now_ms() + TS_AWAIT_MS, seen;
    while ((seen = threads_in(pid, state)) < at_least && now_ms() < deadline)
        usleep(2000);
    ck_assert_msg(seen >= at_least, "%s: the board never showed %llu thread(s) in state %d "
                  "(%llu after %d s)", what, (unsigned long long)at_least, (int)state,
                  (unsigned long long)seen, TS_AWAIT_MS / 1000);
}

void ts_await_threads_in(enum board_state state, uint64_t at_least, const char *what)
{
    await_threads_in(getpid(), state, at_least, what);
}

bool ts_board_shows(enum board_state state)
{
    return threads_in(getpid(), state) > 0;
}

/* Await (up to TS_AWAIT_MS) process pid's board marked closing: its
 * server has taken the stop signal and begun the graceful stop. */
void await_closing(pid_t pid)
{
    uint64_t deadline = now_ms() + TS_AWAIT_MS;
    bool closing = false;
    while (!closing && now_ms() < deadline) {
        struct board_snapshot *b = read_board_of(pid);
        closing = b && b->closing;
        free(b);
        if (!closing)
            usleep(2000);
    }
    ck_assert_msg(closing, "the server never began to stop (its board was not marked "
                  "closing after %d s)", TS_AWAIT_MS / 1000);
}

/* The models whose connections share a loop thread. */
bool is_loop_model(const char *model)
{
    return strcmp(model, "reactor") == 0 || strcmp(model, "multireactor") == 0;
}

int ts_run(Suite *s)
{
    /* Test servers publish boards; keep them out of the user's own board
     * directory, where a running `threadlab top` would show them. */
    char dir[64];
    snprintf(dir, sizeof(dir), "/tmp/threadlab-tests-%u", (unsigned)getuid());
    setenv("THREADLAB_BOARD_DIR", dir, 0);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    /* Each case ran in a child of its own; one that failed an assertion or
     * was killed at its timeout never stopped its servers, so their boards
     * stayed. The children are all gone now: remove the boards of dead
     * processes (what any reader does), leaving live servers' alone. */
    struct board_entry live[64];
    (void)board_list(live, 64, true);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
