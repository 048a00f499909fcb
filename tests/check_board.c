/* check_board.c -- the live state board: what writers publish, readers
 * read; concurrent writers keep counts consistent; corrupt, truncated and
 * hostile files are refused with a message, never a crash; a board that
 * another process scribbles on or truncates never hangs or kills the
 * server that writes it. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "model_suite.h"
#include "probe/board.h"
#include "probe/board_read.h"
#include "cpuwait.h"
#include "testnet.h"

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
    board_thread_bytes(b, &conn, 100, 40);
    board_thread_bytes(b, &conn, 20, 80);        /* running totals, not the last read */
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
            ck_assert_uint_eq(s->threads[i].bytes_in, 120);
            ck_assert_uint_eq(s->threads[i].bytes_out, 120);
            ck_assert_uint_eq(s->threads[i].tid, (uint32_t)gettid());
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

/* A loop slot another process scribbled on: more idle task time than task
 * time is refused with a message; counters at their maximum are read, and
 * top --json prints them with finite percentages (no wrap, no division by
 * zero), every loop field present. */
START_TEST(scribbled_loop_counters_are_refused_or_printed_whole)
{
    struct board *b = board_create("reactor", "opts");
    struct board_loop *l = board_loop_claim(b, "worker-1");
    struct board_snapshot *s = snap();
    char err[256];
    ck_assert_ptr_nonnull(l);
    atomic_store(&l->task_ns, 10);
    atomic_store(&l->task_idle_ns, 20);
    ck_assert_int_eq(board_read(board_path(b), s, err, sizeof(err)), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "idle task time"));

    atomic_store(&l->io_ns, UINT64_MAX);
    atomic_store(&l->task_ns, UINT64_MAX);
    atomic_store(&l->task_idle_ns, UINT64_MAX);
    atomic_store(&l->out_pending_bytes, UINT64_MAX);
    atomic_store(&l->channels_paused, 3);
    ck_assert_int_eq(board_read(board_path(b), s, err, sizeof(err)), 0);
    char *json = NULL;
    size_t json_len = 0;
    FILE *out = open_memstream(&json, &json_len);
    board_snapshot_json(s, out);
    fclose(out);
    ck_assert_ptr_nonnull(strstr(json, "\"loops\":[{\"name\":\"worker-1\""));
    ck_assert_ptr_nonnull(strstr(json, "\"io_pct\":50.0,\"task_pct\":50.0"));
    ck_assert_ptr_nonnull(strstr(json, "\"channels_paused\":3"));
    ck_assert_ptr_null(strstr(json, "nan"));
    ck_assert_ptr_null(strstr(json, "inf"));
    const char *fields[] = { "phase", "channels", "queue", "blocked_ms", "shared_task_pct",
                             "out_pending_bytes", "tasks_starving_io" };
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        char key[40];
        snprintf(key, sizeof(key), "\"%s\":", fields[i]);
        ck_assert_msg(strstr(json, key), "no %s in %s", fields[i], json);
    }
    free(json);
    free(s);
    board_close(b);
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
    /* A link of a live pid (ours) to an fd that is no board: the pid was
     * reused, or the server closed its board and died before the link. */
    char reused[300], target[64];
    snprintf(reused, sizeof(reused), "%s/%d.9.board", dir, (int)getpid());
    snprintf(target, sizeof(target), "/proc/%d/fd/0", (int)getpid());
    ck_assert_int_eq(symlink(target, reused), 0);
    struct board *live = board_create("bio", "");
    int n = board_list(e, BOARD_LIST_MAX, false);
    bool listed_stale = false;
    for (int i = 0; i < n; i++)
        listed_stale |= e[i].pid == 2147483646 && !e[i].alive;
    ck_assert(listed_stale);
    n = board_list(e, BOARD_LIST_MAX, true);
    ck_assert_int_eq(access(path, F_OK), -1);       /* removed */
    struct stat st;
    ck_assert_int_eq(lstat(reused, &st), -1);       /* removed too */
    ck_assert_int_eq(lstat(target, &st), 0);        /* not what it named */
    bool listed_live = false;
    for (int i = 0; i < n; i++)
        listed_live |= e[i].pid == getpid() && e[i].alive;
    ck_assert(listed_live);
    board_close(live);
    rmdir(own);
}
END_TEST

/* A file or link planted at our board's name: symlink() never follows or
 * opens it, so the board takes the next name, the target is untouched,
 * and board_close leaves the planted entry alone (it is not ours). */
START_TEST(a_planted_entry_is_left_alone)
{
    char own[] = "/tmp/threadlab-planted-XXXXXX", path[300], target[300];
    ck_assert_ptr_nonnull(mkdtemp(own));
    setenv("THREADLAB_BOARD_DIR", own, 1);  /* no other reader cleans it */
    snprintf(target, sizeof(target), "%s/victim", own);
    FILE *f = fopen(target, "w");
    fputs("precious", f);
    fclose(f);
    snprintf(path, sizeof(path), "%s/%d.board", own, (int)getpid());
    for (int kind = 0; kind < 2; kind++) {
        if (kind == 0)
            ck_assert_int_eq(symlink(target, path), 0);
        else
            ck_assert_int_eq(link(target, path), 0);
        struct board *b = board_create("bio", "");
        ck_assert_ptr_nonnull(b);
        ck_assert_str_ne(board_path(b), path);
        board_event(b, EV_ACCEPT, "written to the board, not to the victim");
        board_close(b);
        struct stat st;
        ck_assert_int_eq(lstat(path, &st), 0);          /* still there */
        ck_assert(kind == 0 ? S_ISLNK(st.st_mode) : S_ISREG(st.st_mode));
        char buf[32] = "";
        f = fopen(target, "r");
        ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
        fclose(f);
        ck_assert_str_eq(buf, "precious");      /* the target untouched */
        unlink(path);
    }
    unlink(target);
    rmdir(own);
}
END_TEST

/* ---- a board someone else damages ----------------------------------------- */

/* Overwrite the whole board with random bytes through its link, as any
 * process of ours can. Returns the board's size. */
static size_t scribble(const char *path, unsigned seed)
{
    int fd = open(path, O_RDWR | O_CLOEXEC);
    ck_assert_msg(fd >= 0, "open %s: %s", path, strerror(errno));
    struct stat st;
    ck_assert_int_eq(fstat(fd, &st), 0);
    size_t len = (size_t)st.st_size;
    char *junk = malloc(len);
    for (size_t i = 0; i < len; i++)
        junk[i] = (char)rand_r(&seed);
    ck_assert_int_eq(pwrite(fd, junk, len, 0), (ssize_t)len);
    free(junk);
    close(fd);
    return len;
}

/* Truncate the board through its link; 0 or -errno (a sealed board
 * refuses, a plain file would not). */
static int shrink(const char *path, off_t to)
{
    int fd = open(path, O_RDWR | O_CLOEXEC);
    ck_assert_msg(fd >= 0, "open %s: %s", path, strerror(errno));
    int rc = ftruncate(fd, to) == 0 ? 0 : -errno;
    close(fd);
    return rc;
}

static void read_fails_with_a_message(const char *path, const char *after)
{
    struct board_snapshot *s = snap();
    char err[256] = "";
    int rc = board_read(path, s, err, sizeof(err));
    ck_assert_msg(rc < 0, "after %s, a damaged board was read as good", after);
    ck_assert_msg(err[0] != '\0', "after %s, refused without a message", after);
    free(s);
}

/* The kernel refuses to shrink the board, so a store after a truncate
 * cannot fault (with a plain file, this test dies of SIGBUS). */
START_TEST(truncating_the_board_is_refused)
{
    struct board *b = board_create("bio", "");
    ck_assert_ptr_nonnull(b);
    size_t len = scribble(board_path(b), 7);   /* just to learn the size */
    ck_assert_int_eq(shrink(board_path(b), 0), -EPERM);
    ck_assert_int_eq(shrink(board_path(b), (off_t)len / 2), -EPERM);
    ck_assert_int_eq(shrink(board_path(b), (off_t)len * 2), -EPERM);
    struct board_thread_ref t;
    board_thread_begin(b, &t, ROLE_CONN, "conn-1", 1);
    for (int i = 0; i < 2 * BOARD_EVENT_SLOTS; i++)
        board_event(b, EV_ACCEPT, "accept %d", i);      /* every slot */
    board_add(b, CTR_LINES, 1);
    board_thread_end(b, &t);
    struct stat st;
    ck_assert_int_eq(stat(board_path(b), &st), 0);
    ck_assert_uint_eq((uint64_t)st.st_size, len);
    board_close(b);
}
END_TEST

/* After a scribble, the writer goes on as if nothing happened: it read
 * nothing back (the event ring's ticket and marks, which slots are taken,
 * a thread's totals are private). Once the header is put back, a reader
 * sees exactly what was written after the scribble. */
START_TEST(a_scribbled_board_never_feeds_back)
{
    enum { THREADS = 100, EVENTS = BOARD_EVENT_SLOTS + 100 };
    struct board *b = board_create("reactor", "");
    ck_assert_ptr_nonnull(b);
    char header[sizeof(struct board_header)];
    int fd = open(board_path(b), O_RDWR | O_CLOEXEC);
    ck_assert_int_eq(pread(fd, header, sizeof(header), 0), (ssize_t)sizeof(header));
    struct board_thread_ref t[THREADS];
    for (int i = 0; i < THREADS / 2; i++)
        board_thread_begin(b, &t[i], ROLE_CONN, "before", (uint64_t)i);
    board_event(b, EV_SPAWN, "before the scribble");
    struct board_loop *loop = board_loop_claim(b, "worker-1");

    scribble(board_path(b), 99);
    read_fails_with_a_message(board_path(b), "a scribble");
    for (int i = 0; i < THREADS / 2; i++)
        board_thread_end(b, &t[i]);
    for (int i = 0; i < THREADS; i++) {
        board_thread_begin(b, &t[i], ROLE_CONN, "after", (uint64_t)i);
        ck_assert_msg(t[i].slot >= 0, "thread %d got no slot on a scribbled board", i);
        board_thread_state(b, &t[i], STATE_BLOCKED_IO);
    }
    for (int i = 0; i < EVENTS; i++)     /* returns: nothing spins on the map */
        board_event(b, EV_ACCEPT, "after %d", i);
    board_loop_release(b, loop);
    ck_assert_ptr_eq(board_loop_claim(b, "worker-2"), loop);  /* slot reused */

    ck_assert_int_eq(pwrite(fd, header, sizeof(header), 0), (ssize_t)sizeof(header));
    close(fd);
    struct board_snapshot *s = snap();
    read_ok(b, s);
    ck_assert_int_eq(s->nevents, BOARD_EVENT_SLOTS);
    char last[32];
    snprintf(last, sizeof(last), "after %d", EVENTS - 1);
    ck_assert_str_eq(s->events[s->nevents - 1].text, last);
    ck_assert_uint_eq(s->event_head, EVENTS + 1);
    int after = 0;
    for (int i = 0; i < s->nthreads; i++)
        after += !strcmp(s->threads[i].name, "after") &&
                 s->threads[i].state == STATE_BLOCKED_IO;
    ck_assert_int_eq(after, THREADS);
    for (int i = 0; i < THREADS; i++)
        board_thread_end(b, &t[i]);
    free(s);
    board_close(b);
}
END_TEST

/* ---- ... under load, in a real server process ----------------------------- */

/* The sanitizers make the server's own code several times slower (a
 * thread start under TSan alone can take tens of ms): its bound scales, as
 * the shared suite's latency bounds do. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif

enum {
    LOAD_CONNS = 4,         /* echo connections during the damage */
    LOAD_PAUSE_EVERY = 8,   /* lines between 1 ms pauses on each */
    PROBE_LIMIT_MS = SANITIZED ? 2000 : 1000, /* a fresh connection's line
                               must come back by then */
    STOP_LIMIT_MS = 10000,  /* the servers' stop timeout (stop_timeout_ms) */
    GIVE_UP_MS = 30000,     /* wall time after which a wait has failed */
};

/* Connect to 127.0.0.1:port; reads and writes time out after 2 s, so no
 * load thread can hang on a dead server. -1 on failure. */
static int dial(uint16_t port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    struct timeval tv = { 2, 0 };
    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Read exactly len bytes; false on EOF, error or timeout. */
static bool recv_all(int fd, char *buf, size_t len)
{
    for (size_t got = 0; got < len;) {
        ssize_t n = recv(fd, buf + got, len - got, 0);
        if (n <= 0)
            return false;
        got += (size_t)n;
    }
    return true;
}

struct load {
    uint16_t port;
    int id;
    _Atomic bool stop;
    _Atomic uint64_t *lines;    /* shared by all load threads */
    _Atomic uint64_t *failed;   /* wrong bytes, lost lines, dropped conns */
};

/* One connection, one line in flight (a batch would wait on Nagle and
 * delayed ACKs in the blocking models), every byte checked. */
static void *echo_load_main(void *arg)
{
    struct load *l = arg;
    char out[32], in[sizeof(out)];
    int fd = dial(l->port);
    if (fd < 0) {
        atomic_fetch_add(l->failed, 1);
        return NULL;
    }
    for (unsigned seq = 0; !atomic_load(&l->stop); seq++) {
        size_t len = (size_t)sprintf(out, "load %d line %u\n", l->id, seq);
        if (send(fd, out, len, MSG_NOSIGNAL) != (ssize_t)len ||
            !recv_all(fd, in, len) || memcmp(in, out, len) != 0) {
            atomic_fetch_add(l->failed, 1);
            break;
        }
        atomic_fetch_add(l->lines, 1);
        if (seq % LOAD_PAUSE_EVERY == 0)
            usleep(1000);          /* load, not a CPU hog on a shared box */
    }
    close(fd);
    return NULL;
}

/* Connections that come and go: each one is an accept and a close event
 * (and a spawn and an exit in bio), so the server keeps writing events
 * into the damaged ring. */
static void *churn_main(void *arg)
{
    struct load *l = arg;
    char in[16];
    while (!atomic_load(&l->stop)) {
        int fd = dial(l->port);
        if (fd < 0 || send(fd, "churn\n", 6, MSG_NOSIGNAL) != 6 ||
            !recv_all(fd, in, 6) || memcmp(in, "churn\n", 6) != 0)
            atomic_fetch_add(l->failed, 1);
        if (fd >= 0)
            close(fd);
        usleep(2000);
    }
    return NULL;
}

/* One line on a fresh connection: how long its echo took, in ms of time
 * the server controls (see cpuwait.h), or -1 if none came within
 * GIVE_UP_MS of wall time or the connection failed. *wall_ms gets the
 * wall time it took. */
static long probe_ms(uint16_t port, pid_t server, struct cw_meter *lag,
                     long *wall_ms)
{
    static struct cw_span sp;            /* large; the test's main thread only */
    cw_span_begin(&sp, lag, server);
    int fd = dial(port);
    if (fd < 0)
        return -1;
    char in[8];
    size_t got = 0;
    long took = -1;
    if (send(fd, "probe\n", 6, MSG_NOSIGNAL) == 6) {
        while (got < 6) {
            long left = GIVE_UP_MS - cw_span_wall_ms(&sp);
            struct pollfd p = { .fd = fd, .events = POLLIN };
            if (left <= 0 || poll(&p, 1, (int)left) <= 0)
                break;
            ssize_t n = recv(fd, in + got, 6 - got, 0);
            if (n <= 0)
                break;
            got += (size_t)n;
        }
        if (got == 6 && memcmp(in, "probe\n", 6) == 0)
            took = cw_span_own_ms(&sp, lag);
    }
    *wall_ms = cw_span_wall_ms(&sp);
    close(fd);
    return took;
}

struct served {
    pid_t pid;
    uint16_t port;
    char dir[64];           /* its port file and log */
    char board[300];        /* its board's link */
};

/* Run `threadlab serve MODEL` (THREADLAB_BIN, else build/threadlab) as a
 * child that dies with this test process, and wait for its port and its
 * board. */
static void serve_start(struct served *sv, const char *model)
{
    const char *bin = getenv("THREADLAB_BIN");
    char port_file[96], log[96], dir[200];
    if (!bin)
        bin = "build/threadlab";
    snprintf(sv->dir, sizeof(sv->dir), "/tmp/threadlab-damage-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(sv->dir));
    snprintf(port_file, sizeof(port_file), "%s/port", sv->dir);
    snprintf(log, sizeof(log), "%s/log", sv->dir);
    sv->pid = fork();
    ck_assert_int_ge(sv->pid, 0);
    if (sv->pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);  /* a failed test leaves no server */
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(fd, 1);
        dup2(fd, 2);
        execl(bin, bin, "serve", model, "--port", "0", "--port-file", port_file,
              (char *)NULL);
        _exit(127);
    }
    ck_assert_int_eq(board_dir(dir, sizeof(dir)), 0);
    snprintf(sv->board, sizeof(sv->board), "%s/%d.board", dir, (int)sv->pid);
    struct stat st;
    sv->port = 0;
    for (uint64_t until = now_ms() + 5000; now_ms() < until; usleep(10000)) {
        FILE *f = fopen(port_file, "r");
        unsigned p = 0;
        if (f && fscanf(f, "%u", &p) == 1)
            sv->port = (uint16_t)p;
        if (f)
            fclose(f);
        if (sv->port && lstat(sv->board, &st) == 0)
            break;
    }
    ck_assert_msg(sv->port != 0 && lstat(sv->board, &st) == 0,
                  "%s serve %s did not start (log in %s)", bin, model, sv->dir);
}

/* SIGTERM; how long until it was reaped, in ms of time the server
 * controls (gauged by the lag meter only: a reaped server has no /proc),
 * or -1 after GIVE_UP_MS of wall time (then it is killed). */
static long serve_stop(struct served *sv, struct cw_meter *lag, int *status)
{
    static struct cw_span sp;
    cw_span_begin(&sp, lag, 0);
    kill(sv->pid, SIGTERM);
    while (cw_span_wall_ms(&sp) < GIVE_UP_MS) {
        if (waitpid(sv->pid, status, WNOHANG) == sv->pid)
            return cw_span_own_ms(&sp, lag);
        usleep(5000);
    }
    kill(sv->pid, SIGKILL);
    waitpid(sv->pid, status, 0);
    return -1;
}

static void serve_cleanup(struct served *sv)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/port", sv->dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/log", sv->dir);
    unlink(path);
    rmdir(sv->dir);
}

/* The damage, in order: each is followed by a probe. */
enum damage { DAMAGE_SCRIBBLE, DAMAGE_TRUNCATE_0, DAMAGE_TRUNCATE_HALF,
              DAMAGE_SCRIBBLE_AGAIN, DAMAGE_COUNT };
static const char *const damage_names[DAMAGE_COUNT] = {
    "random bytes over the whole board", "a truncate to 0", "a truncate to half",
    "random bytes again",
};

static void damage(const char *path, enum damage d, size_t len)
{
    if (d == DAMAGE_SCRIBBLE || d == DAMAGE_SCRIBBLE_AGAIN)
        scribble(path, 1000 + (unsigned)d);
    else  /* refused by a sealed board; the server must live either way */
        (void)shrink(path, d == DAMAGE_TRUNCATE_0 ? 0 : (off_t)len / 2);
}

static const char *const served_models[] = { "bio", "pool", "reactor", "multireactor",
                                              "vthread" };

/* The test: under load, random bytes over the whole board, then
 * truncates to 0 and to half. After each, a fresh connection's line comes
 * back within 1 s (of time the server controls; typically 1 ms) and the reader refuses
 * the board with a message; the load goes on and loses nothing; SIGTERM
 * ends the server within its stop timeout, and its link is gone. */
START_TEST(a_damaged_board_never_takes_the_server_down)
{
    const char *model = served_models[_i];
    struct served sv;
    struct cw_meter lag;
    _Atomic uint64_t lines = 0, failed = 0;
    struct load loads[LOAD_CONNS + 1];
    pthread_t th[LOAD_CONNS + 1];
    cw_meter_start(&lag);
    serve_start(&sv, model);
    for (int i = 0; i <= LOAD_CONNS; i++) {
        loads[i] = (struct load){ .port = sv.port, .id = i, .lines = &lines,
                                  .failed = &failed };
        pthread_create(&th[i], NULL, i < LOAD_CONNS ? echo_load_main : churn_main,
                       &loads[i]);
    }
    usleep(100000);
    size_t len = scribble(sv.board, 1);          /* the first damage */
    long worst_ms = 0, worst_wall_ms = 0;
    for (int d = 0; d < DAMAGE_COUNT; d++) {
        if (d > 0)
            damage(sv.board, d, len);
        usleep(50000);             /* the load writes events on the damage */
        long wall_ms, took = probe_ms(sv.port, sv.pid, &lag, &wall_ms);
        ck_assert_msg(took >= 0, "%s: no echo after %s", model, damage_names[d]);
        ck_assert_msg(took <= PROBE_LIMIT_MS, "%s: the echo took %ld ms (%ld ms of "
                      "wall time) after %s", model, took, wall_ms, damage_names[d]);
        worst_ms = took > worst_ms ? took : worst_ms;
        worst_wall_ms = wall_ms > worst_wall_ms ? wall_ms : worst_wall_ms;
        read_fails_with_a_message(sv.board, damage_names[d]);
    }
    /* The load goes on: its lines keep coming back. */
    uint64_t lines_damaged = atomic_load(&lines);
    static struct cw_span sp;
    cw_span_begin(&sp, &lag, 0);
    while (atomic_load(&lines) <= lines_damaged + LOAD_CONNS &&
           cw_span_wall_ms(&sp) < GIVE_UP_MS)
        usleep(5000);
    for (int i = 0; i <= LOAD_CONNS; i++)
        atomic_store(&loads[i].stop, true);
    for (int i = 0; i <= LOAD_CONNS; i++)
        pthread_join(th[i], NULL);
    ck_assert_uint_eq(atomic_load(&failed), 0);
    ck_assert_uint_gt(atomic_load(&lines), lines_damaged + LOAD_CONNS);

    int status = 0;
    long stop_ms = serve_stop(&sv, &lag, &status);
    cw_meter_stop(&lag);
    ck_assert_msg(stop_ms >= 0 && stop_ms <= STOP_LIMIT_MS,
                  "%s: SIGTERM did not end it within %d ms", model, STOP_LIMIT_MS);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "%s: ended with status %#x", model, status);
    struct stat st;
    ck_assert_int_eq(lstat(sv.board, &st), -1);     /* its link removed */
    printf("%s: damaged board: worst probe %ld ms (%ld ms of wall time), %llu load "
           "lines, stopped in %ld ms\n", model, worst_ms, worst_wall_ms,
           (unsigned long long)atomic_load(&lines), stop_ms);
    serve_cleanup(&sv);
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
    tcase_add_test(tc, scribbled_loop_counters_are_refused_or_printed_whole);
    tcase_add_test(tc, stale_boards_are_cleaned_by_readers);
    tcase_add_test(tc, two_boards_in_one_process);
    tcase_add_test(tc, a_planted_entry_is_left_alone);
    tcase_add_test(tc, truncating_the_board_is_refused);
    tcase_add_test(tc, a_scribbled_board_never_feeds_back);
    suite_add_tcase(s, tc);
    TCase *served = tcase_create("damaged under load");
    tcase_set_timeout(served, 60);
    tcase_add_loop_test(served, a_damaged_board_never_takes_the_server_down, 0,
                        sizeof(served_models) / sizeof(served_models[0]));
    suite_add_tcase(s, served);
    return ts_run(s);
}
