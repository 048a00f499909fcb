/* check_board.c -- the live state board: what writers publish, readers
 * read; concurrent writers keep counts consistent; corrupt, truncated and
 * hostile files are refused with a message, never a crash. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model_suite.h"
#include "probe/board.h"
#include "probe/board_read.h"

static struct board_snapshot *snap(void)
{
    struct board_snapshot *s = malloc(sizeof(*s));
    ck_assert_ptr_nonnull(s);
    return s;
}

static void read_ok(struct board *b, struct board_snapshot *s)
{
    char err[256];
    int rc = board_read(board_path(b), s, err, sizeof(err));
    ck_assert_msg(rc == 0, "board_read: %s", err);
}

START_TEST(create_publish_read_close)
{
    struct board *b = board_create("bio", "port=1 test");
    ck_assert_ptr_nonnull(b);
    struct stat st;
    ck_assert_int_eq(stat(board_path(b), &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0600);

    struct board_thread_ref acceptor, conn;
    board_thread_begin(b, &acceptor, ROLE_ACCEPTOR, "acceptor", 0);
    board_thread_state(b, &acceptor, STATE_WAITING);
    board_thread_begin(b, &conn, ROLE_CONN, "conn-7", 7);
    board_thread_state(b, &conn, STATE_BLOCKED_SLEEP);
    board_thread_lines(b, &conn, 1);
    board_add(b, CTR_ACCEPTED, 3);
    board_add(b, CTR_ACTIVE, 2);
    board_sub(b, CTR_ACTIVE, 1);
    for (int i = 0; i < 100; i++)
        board_record_latency(b, 1000 * (uint64_t)(i + 1));
    board_event(b, EV_SPAWN, "spawn conn-%d: %s", 7, "no idle thread, 12 queued");
    struct board_loop *l = board_loop_claim(b, "worker-1");
    atomic_store(&l->channels, 5);
    struct board_queue *q = board_queue_claim(b, "tasks", 64);
    atomic_store(&q->depth, 9);

    struct board_snapshot *s = snap();
    read_ok(b, s);
    ck_assert_str_eq(s->model, "bio");
    ck_assert_str_eq(s->options, "port=1 test");
    ck_assert_int_eq(s->pid, getpid());
    ck_assert_uint_eq(s->counters[CTR_ACCEPTED], 3);
    ck_assert_uint_eq(s->counters[CTR_ACTIVE], 1);
    ck_assert_uint_eq(s->threads_by_state[STATE_WAITING], 1);
    ck_assert_uint_eq(s->threads_by_state[STATE_BLOCKED_SLEEP], 1);
    ck_assert_uint_eq(s->threads_by_state[STATE_IDLE], 0);
    ck_assert_int_eq(s->nthreads, 2);
    bool saw_conn = false;
    for (int i = 0; i < s->nthreads; i++)
        if (!strcmp(s->threads[i].name, "conn-7")) {
            saw_conn = true;
            ck_assert_int_eq(s->threads[i].role, ROLE_CONN);
            ck_assert_int_eq(s->threads[i].state, STATE_BLOCKED_SLEEP);
            ck_assert_uint_eq(s->threads[i].conn, 7);
            ck_assert_uint_eq(s->threads[i].lines, 1);
        }
    ck_assert(saw_conn);
    uint64_t total = 0;
    for (unsigned i = 0; i < HIST_BUCKETS; i++)
        total += s->hist[i];
    ck_assert_uint_eq(total, 100);
    uint64_t p50 = hist_counts_percentile(s->hist, s->hist_max, 50);
    ck_assert(p50 >= 50000 && p50 <= 53200);
    ck_assert_int_eq(s->nevents, 1);
    ck_assert_str_eq(s->events[0].text, "spawn conn-7: no idle thread, 12 queued");
    ck_assert_int_eq(s->nloops, 1);
    ck_assert_str_eq(s->loops[0].name, "worker-1");
    ck_assert_uint_eq(s->loops[0].channels, 5);
    ck_assert_int_eq(s->nqueues, 1);
    ck_assert_uint_eq(s->queues[0].capacity, 64);
    ck_assert_uint_eq(s->queues[0].depth, 9);

    /* Ended threads show as terminated and their slots are reused. */
    board_thread_end(b, &conn);
    read_ok(b, s);
    ck_assert_uint_eq(s->threads_by_state[STATE_BLOCKED_SLEEP], 0);
    ck_assert_uint_eq(s->threads_by_state[STATE_TERMINATED], 1);

    char path[256];
    snprintf(path, sizeof(path), "%s", board_path(b));
    board_close(b);
    ck_assert_int_eq(access(path, F_OK), -1);    /* removed at close */
    char err[256];
    ck_assert_int_eq(board_read(path, s, err, sizeof(err)), -ENOENT);
    free(s);
}
END_TEST

START_TEST(more_threads_than_slots_are_still_counted)
{
    enum { N = BOARD_THREAD_SLOTS + 100 };
    struct board *b = board_create("bio", "");
    struct board_thread_ref *refs = calloc(N, sizeof(*refs));
    for (int i = 0; i < N; i++) {
        board_thread_begin(b, &refs[i], ROLE_CONN, "conn", (uint64_t)i + 1);
        board_thread_state(b, &refs[i], STATE_BLOCKED_IO);
    }
    struct board_snapshot *s = snap();
    read_ok(b, s);
    ck_assert_int_eq(s->nthreads, BOARD_THREAD_SLOTS);
    ck_assert_uint_eq(s->threads_by_state[STATE_BLOCKED_IO], N);
    ck_assert_uint_eq(s->threads_unslotted, 100);
    for (int i = 0; i < N; i++)
        board_thread_end(b, &refs[i]);
    read_ok(b, s);
    ck_assert_uint_eq(s->threads_by_state[STATE_BLOCKED_IO], 0);
    ck_assert_uint_eq(s->threads_unslotted, 0);
    free(refs);
    free(s);
    board_close(b);
}
END_TEST

/* ---- concurrent writers, a reader in the middle --------------------------- */

enum { WRITERS = 8, ROUNDS = 3000 };

struct writer_arg { struct board *b; int id; };

static void *writer_main(void *arg)
{
    struct writer_arg *w = arg;
    char name[16];
    for (int r = 0; r < ROUNDS; r++) {
        struct board_thread_ref t;
        snprintf(name, sizeof(name), "w%d-%d", w->id, r % 100);
        board_thread_begin(w->b, &t, ROLE_CONN, name, (uint64_t)r);
        board_thread_state(w->b, &t, STATE_RUNNING);
        board_add(w->b, CTR_LINES, 1);
        board_record_latency(w->b, (uint64_t)r * 10);
        board_thread_state(w->b, &t, STATE_BLOCKED_IO);
        if (r % 10 == 0)
            board_event(w->b, EV_SPAWN, "writer %d round %d", w->id, r);
        board_thread_end(w->b, &t);
    }
    return NULL;
}

START_TEST(concurrent_writers_keep_counts_consistent)
{
    struct board *b = board_create("bio", "");
    pthread_t th[WRITERS];
    struct writer_arg args[WRITERS];
    struct board_snapshot *s = snap();
    for (int i = 0; i < WRITERS; i++) {
        args[i] = (struct writer_arg){ b, i };
        pthread_create(&th[i], NULL, writer_main, &args[i]);
    }
    /* Read while they write: every snapshot must parse, and every value
     * stay in range. */
    for (int k = 0; k < 50; k++) {
        read_ok(b, s);
        uint64_t live = 0;
        for (int st = 0; st < STATE_COUNT; st++)
            if (st != STATE_TERMINATED)
                live += s->threads_by_state[st];
        ck_assert_uint_le(live, WRITERS);
        ck_assert_uint_le(s->counters[CTR_LINES], WRITERS * ROUNDS);
        for (int i = 1; i < s->nevents; i++)
            ck_assert_uint_gt(s->events[i].seq, s->events[i - 1].seq);
    }
    for (int i = 0; i < WRITERS; i++)
        pthread_join(th[i], NULL);
    read_ok(b, s);
    ck_assert_uint_eq(s->counters[CTR_LINES], WRITERS * ROUNDS);
    for (int st = 0; st < STATE_COUNT; st++)
        if (st != STATE_TERMINATED)
            ck_assert_uint_eq(s->threads_by_state[st], 0);
    uint64_t total = 0;
    for (unsigned i = 0; i < HIST_BUCKETS; i++)
        total += s->hist[i];
    ck_assert_uint_eq(total, WRITERS * ROUNDS);
    ck_assert_uint_eq(s->event_head, WRITERS * ROUNDS / 10);
    ck_assert_int_eq(s->nevents, BOARD_EVENT_SLOTS);
    free(s);
    board_close(b);
}
END_TEST

/* ---- hostile files --------------------------------------------------------- */

static char *board_bytes(size_t *len)
{
    struct board *b = board_create("bio", "opts");
    struct board_thread_ref t;
    board_thread_begin(b, &t, ROLE_CONN, "conn-1", 1);
    board_event(b, EV_ACCEPT, "accept conn 1");
    int fd = open(board_path(b), O_RDONLY);
    struct stat st;
    fstat(fd, &st);
    *len = (size_t)st.st_size;
    char *bytes = malloc(*len);
    ck_assert_int_eq(pread(fd, bytes, *len, 0), (ssize_t)*len);
    close(fd);
    board_close(b);
    return bytes;
}

START_TEST(truncated_boards_are_refused)
{
    size_t len;
    char *good = board_bytes(&len);
    struct board_snapshot *s = snap();
    char err[256];
    ck_assert_int_eq(board_parse(good, len, s, err, sizeof(err)), 0);
    size_t cuts[] = { 0, 1, 7, 8, 100, sizeof(struct board_header) - 1,
                      sizeof(struct board_header), len / 2, len - 1 };
    for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
        err[0] = '\0';
        int rc = board_parse(good, cuts[i], s, err, sizeof(err));
        ck_assert_msg(rc == -EINVAL, "cut at %zu accepted", cuts[i]);
        ck_assert_msg(err[0] != '\0', "cut at %zu: no message", cuts[i]);
    }
    free(good);
    free(s);
}
END_TEST

START_TEST(random_corruption_never_crashes)
{
    size_t len;
    char *good = board_bytes(&len);
    char *bad = malloc(len);
    struct board_snapshot *s = snap();
    char err[256];
    unsigned seed = 12345;
    int refused = 0;
    /* Flip bytes in the header and the first slots, where every field is
     * checked; a parse must either succeed with values in range or fail
     * with a message. (Under ASan, any read out of bounds fails the test.) */
    size_t hot = sizeof(struct board_header) + 4096;
    for (int round = 0; round < 3000; round++) {
        memcpy(bad, good, len);
        int flips = 1 + (int)(rand_r(&seed) % 8);
        for (int f = 0; f < flips; f++) {
            size_t at = (size_t)rand_r(&seed) % (round % 2 ? len : hot);
            bad[at] = (char)rand_r(&seed);
        }
        size_t use = round % 5 == 0 ? (size_t)rand_r(&seed) % len : len;
        err[0] = '\0';
        int rc = board_parse(bad, use, s, err, sizeof(err));
        if (rc != 0) {
            refused++;
            ck_assert_msg(err[0] != '\0', "refused without a message");
            continue;
        }
        ck_assert_int_le(s->nthreads, BOARD_THREAD_SLOTS);
        ck_assert_int_le(s->nevents, BOARD_EVENT_SLOTS);
        for (int i = 0; i < s->nthreads; i++) {
            ck_assert_int_lt(s->threads[i].state, STATE_COUNT);
            ck_assert_int_lt(s->threads[i].role, ROLE_COUNT);
            ck_assert_uint_lt(strlen(s->threads[i].name), BOARD_NAME_BYTES);
        }
        for (int i = 0; i < s->nevents; i++)
            ck_assert_int_lt(s->events[i].kind, EV_COUNT);
        ck_assert_uint_lt(strlen(s->model), BOARD_MODEL_BYTES);
    }
    ck_assert_int_gt(refused, 100);     /* the checks do bite */
    free(good);
    free(bad);
    free(s);
}
END_TEST

START_TEST(foreign_version_and_bad_files)
{
    size_t len;
    char *bytes = board_bytes(&len);
    struct board_snapshot *s = snap();
    char err[256], dir[200], path[300];

    uint32_t v = BOARD_VERSION + 1;
    memcpy(bytes + offsetof(struct board_header, version), &v, sizeof(v));
    ck_assert_int_eq(board_parse(bytes, len, s, err, sizeof(err)), -EPROTO);
    ck_assert_ptr_nonnull(strstr(err, "version"));

    /* A directory, a symlink and an empty file at board paths. */
    ck_assert_int_eq(board_dir(dir, sizeof(dir)), 0);
    snprintf(path, sizeof(path), "%s/999999999.board", dir);
    mkdir(path, 0700);
    ck_assert_int_lt(board_read(path, s, err, sizeof(err)), 0);
    rmdir(path);
    symlink("/etc/passwd", path);
    ck_assert_int_lt(board_read(path, s, err, sizeof(err)), 0);   /* O_NOFOLLOW */
    unlink(path);
    int fd = open(path, O_CREAT | O_WRONLY, 0600);
    close(fd);
    ck_assert_int_eq(board_read(path, s, err, sizeof(err)), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "size"));
    unlink(path);
    free(bytes);
    free(s);
}
END_TEST

START_TEST(stale_boards_are_cleaned_by_readers)
{
    char dir[200], path[300];
    struct board_entry e[BOARD_LIST_MAX];
    /* A directory of its own: any other reader (a `threadlab top` of
     * another test) would clean the stale board before we look. */
    char own[] = "/tmp/threadlab-stale-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(own));
    setenv("THREADLAB_BOARD_DIR", own, 1);
    ck_assert_int_eq(board_dir(dir, sizeof(dir)), 0);
    /* A pid that cannot exist: above the kernel's pid_max. */
    snprintf(path, sizeof(path), "%s/2147483646.board", dir);
    int fd = open(path, O_CREAT | O_WRONLY, 0600);
    ck_assert_int_ge(fd, 0);
    close(fd);
    struct board *live = board_create("bio", "");
    int n = board_list(e, BOARD_LIST_MAX, false);
    bool listed_stale = false;
    for (int i = 0; i < n; i++)
        listed_stale |= e[i].pid == 2147483646 && !e[i].alive;
    ck_assert(listed_stale);
    n = board_list(e, BOARD_LIST_MAX, true);
    ck_assert_int_eq(access(path, F_OK), -1);       /* removed */
    bool listed_live = false;
    for (int i = 0; i < n; i++)
        listed_live |= e[i].pid == getpid() && e[i].alive;
    ck_assert(listed_live);
    board_close(live);
    rmdir(own);
}
END_TEST

START_TEST(a_planted_link_is_refused_and_left_alone)
{
    char dir[200], path[300], target[300];
    ck_assert_int_eq(board_dir(dir, sizeof(dir)), 0);
    snprintf(target, sizeof(target), "%s/victim", dir);
    FILE *f = fopen(target, "w");
    fputs("precious", f);
    fclose(f);
    snprintf(path, sizeof(path), "%s/%d.board", dir, (int)getpid());
    ck_assert_int_eq(symlink(target, path), 0);
    errno = 0;
    struct board *b = board_create("bio", "");
    ck_assert_ptr_null(b);                  /* publishing turns off */
    ck_assert_int_eq(errno, ELOOP);
    char buf[32] = "";
    f = fopen(target, "r");
    ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
    fclose(f);
    ck_assert_str_eq(buf, "precious");      /* the target untouched */
    unlink(path);

    ck_assert_int_eq(link(target, path), 0); /* a hard link too */
    ck_assert_ptr_null(board_create("bio", ""));
    unlink(path);
    unlink(target);
}
END_TEST

START_TEST(two_boards_in_one_process)
{
    struct board *a = board_create("bio", ""), *b = board_create("bio", "");
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert_str_ne(board_path(a), board_path(b));
    board_close(a);
    board_close(b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("board");
    TCase *tc = tcase_create("board");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, create_publish_read_close);
    tcase_add_test(tc, more_threads_than_slots_are_still_counted);
    tcase_add_test(tc, concurrent_writers_keep_counts_consistent);
    tcase_add_test(tc, truncated_boards_are_refused);
    tcase_add_test(tc, random_corruption_never_crashes);
    tcase_add_test(tc, foreign_version_and_bad_files);
    tcase_add_test(tc, stale_boards_are_cleaned_by_readers);
    tcase_add_test(tc, two_boards_in_one_process);
    tcase_add_test(tc, a_planted_link_is_refused_and_left_alone);
    suite_add_tcase(s, tc);
    return ts_run(s);
}
