/* panes.c -- a pane over a real board: a server killed with SIGKILL is
 * gone at the next refresh, a live one whose board cannot be read is not,
 * and out of memory leaves a pane as it was. */
#include "check_view.h"

/* A child process that publishes a board and waits to be killed; its pid,
 * and the board's path in path. */
static pid_t board_child(char *path, size_t len)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(fds[0]);
        struct board *b = board_create("bio", "killed in a test");
        const char *at = b ? board_path(b) : "";
        ssize_t w = write(fds[1], at, strlen(at) + 1);
        (void)w;
        for (;;)
            pause();
    }
    close(fds[1]);
    ssize_t n = read(fds[0], path, len - 1);
    close(fds[0]);
    ck_assert_int_gt(n, 1);
    path[n] = '\0';
    return pid;
}

static char board_tmp[64];

static void use_temporary_board_dir(void)
{
    snprintf(board_tmp, sizeof(board_tmp), "/tmp/threadlab-pane-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(board_tmp));
    setenv("THREADLAB_BOARD_DIR", board_tmp, 1);
}

static void remove_board_dir(void)
{
    char cmd[100];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", board_tmp);
    ck_assert_int_eq(system(cmd), 0);
}

START_TEST(a_server_killed_with_sigkill_is_gone_at_the_next_refresh)
{
    use_temporary_board_dir();
    char path[256];
    pid_t pid = board_child(path, sizeof(path));
    struct pane p = { 0 };
    ck_assert_int_eq(pane_attach(&p, path, pid), 0);
    pane_refresh(&p);
    ck_assert_msg(!p.gone && p.now->pid == pid, "a live server: %s", p.error);
    ck_assert(pane_process_alive(pid));
    /* Killed, not yet reaped: a zombie, which kill(pid, 0) still finds.
     * WNOWAIT waits for the death and leaves the zombie in place. */
    kill(pid, SIGKILL);
    siginfo_t info;
    ck_assert_int_eq(waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT), 0);
    ck_assert_int_eq(kill(pid, 0), 0);
    ck_assert(!pane_process_alive(pid));
    struct stat left;                            /* its board's link stays behind */
    ck_assert_int_eq(lstat(path, &left), 0);
    pane_refresh(&p);
    ck_assert_msg(p.gone, "a SIGKILLed server's pane is not gone");
    ck_assert_ptr_nonnull(strstr(p.error, "the server exited"));
    ck_assert_int_eq(p.now->pid, pid);          /* its last picture is kept */
    /* Reaped: no process at all. */
    ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
    struct pane q = { 0 };
    ck_assert_int_eq(pane_attach(&q, path, pid), 0);
    pane_refresh(&q);
    ck_assert(q.gone);
    pane_detach(&p);
    pane_detach(&q);
    unlink(path);                        /* what a killed server leaves, we clean */
    remove_board_dir();
}
END_TEST

/* A live server whose board was removed, or replaced by something that is
 * not a board, is not gone: its pane says the board cannot be read, keeps
 * its last picture, and reads again once the board is back. */
START_TEST(a_live_server_whose_board_cannot_be_read_is_not_gone)
{
    use_temporary_board_dir();
    char path[256], target[256];
    pid_t pid = board_child(path, sizeof(path));
    ssize_t n = readlink(path, target, sizeof(target) - 1);
    ck_assert_int_gt(n, 0);
    target[n] = '\0';
    struct pane p = { 0 };
    ck_assert_int_eq(pane_attach(&p, path, pid), 0);
    pane_refresh(&p);
    ck_assert_msg(!p.gone && p.now->pid == pid, "a live server: %s", p.error);
    ck_assert_int_eq(unlink(path), 0);                       /* removed */
    pane_refresh(&p);
    ck_assert_msg(!p.gone, "a removed board's live server is gone: %s", p.error);
    ck_assert_msg(strstr(p.error, "lives, but its board cannot be read"), "%s", p.error);
    ck_assert_int_eq(p.now->pid, pid);                       /* its last picture */
    FILE *f = fopen(path, "w");                              /* not a board */
    ck_assert_ptr_nonnull(f);
    fputs("not a board\n", f);
    fclose(f);
    pane_refresh(&p);
    ck_assert_msg(!p.gone && strstr(p.error, "cannot be read"), "%s", p.error);
    struct screen scr;
    struct view *v = calloc(1, sizeof(*v));
    view_init(v, false);
    view_resize(v, 120, 36);
    v->npanes = 1;
    v->panes[0] = p;
    ck_assert_int_eq(screen_init(&scr, 120, 36), 0);
    view_render(v, &scr);
    ck_assert_int_gt(screen_find(&scr, "BOARD UNREADABLE: the server lives"), -1);
    ck_assert_int_lt(screen_find(&scr, "GONE"), 0);
    screen_free(&scr);
    free(v);
    ck_assert_int_eq(unlink(path), 0);                       /* back */
    ck_assert_int_eq(symlink(target, path), 0);
    pane_refresh(&p);
    ck_assert_msg(!p.gone && p.error[0] == '\0', "the board is back: %s", p.error);
    kill(pid, SIGKILL);
    ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
    pane_refresh(&p);
    ck_assert(p.gone);
    pane_detach(&p);
    unlink(path);
    remove_board_dir();
}
END_TEST

/* Address-space limits break the sanitizers' shadow memory: plain builds only. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif

START_TEST(out_of_memory_leaves_a_pane_as_it_was)
{
    if (SANITIZED)
        return;
    use_temporary_board_dir();
    char path[256];
    pid_t pid = board_child(path, sizeof(path));
    struct pane p = { 0 };
    ck_assert_int_eq(pane_attach(&p, path, pid), 0);
    pane_refresh(&p);
    struct board_snapshot *now = p.now, *before = p.before;
    p.gone = true;                           /* the pane a new server would take */
    /* No room for a snapshot: the address space capped just above its size now. */
    long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fscanf(f, "%ld", &pages), 1);
    fclose(f);
    struct rlimit old, cap;
    ck_assert_int_eq(getrlimit(RLIMIT_AS, &old), 0);
    cap = old;
    cap.rlim_cur = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + sizeof(struct board_snapshot) / 2;
    ck_assert_int_eq(setrlimit(RLIMIT_AS, &cap), 0);
    int rc = pane_attach(&p, "/elsewhere/1.board", 1);
    ck_assert_int_eq(setrlimit(RLIMIT_AS, &old), 0);
    ck_assert_int_eq(rc, -ENOMEM);
    ck_assert_str_eq(p.path, path);
    ck_assert_int_eq(p.pid, pid);
    ck_assert(p.gone);
    ck_assert(p.now == now && p.before == before);   /* still ours, still valid */
    ck_assert_int_eq(p.now->pid, pid);
    pane_detach(&p);                                  /* freed once */
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    unlink(path);
    remove_board_dir();
}
END_TEST

void add_pane_tests(TCase *tc)
{
    tcase_add_test(tc, a_server_killed_with_sigkill_is_gone_at_the_next_refresh);
    tcase_add_test(tc, a_live_server_whose_board_cannot_be_read_is_not_gone);
    tcase_add_test(tc, out_of_memory_leaves_a_pane_as_it_was);
}
