/* check_record.c -- recordings: what is replayed is what was recorded,
 * forward and backward; stepping back then on returns the same frame;
 * broken files of every kind are refused, never crash. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probe/board.h"
#include "probe/board_read.h"
#include "viz/record.h"
#include "viz/view.h"

enum { FRAMES = 150 };

static char dir[64], path[128];

static void make_dir(void)
{
    snprintf(dir, sizeof(dir), "/tmp/threadlab-record-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/run.tlr", dir);
    setenv("THREADLAB_BOARD_DIR", dir, 1);
}

static void remove_dir(void)
{
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* The fields a pane shows, compared one by one (a snapshot's spare array
 * slots are not part of it). */
static void assert_same(const struct board_snapshot *a, const struct board_snapshot *b,
                        int frame)
{
    ck_assert_msg(a->pid == b->pid, "frame %d: pid", frame);
    ck_assert_str_eq(a->model, b->model);
    ck_assert_str_eq(a->options, b->options);
    ck_assert(memcmp(a->counters, b->counters, sizeof(a->counters)) == 0);
    ck_assert(memcmp(a->hist, b->hist, sizeof(a->hist)) == 0);
    ck_assert(memcmp(a->threads_by_state, b->threads_by_state,
                     sizeof(a->threads_by_state)) == 0);
    ck_assert_int_eq(a->nthreads, b->nthreads);
    for (int i = 0; i < a->nthreads; i++) {
        ck_assert_str_eq(a->threads[i].name, b->threads[i].name);
        ck_assert_int_eq(a->threads[i].state, b->threads[i].state);
        ck_assert_uint_eq(a->threads[i].since_ns, b->threads[i].since_ns);
        ck_assert_uint_eq(a->threads[i].lines, b->threads[i].lines);
    }
    ck_assert_int_eq(a->nloops, b->nloops);
    for (int i = 0; i < a->nloops; i++) {
        ck_assert_str_eq(a->loops[i].name, b->loops[i].name);
        ck_assert_uint_eq(a->loops[i].channels, b->loops[i].channels);
        ck_assert_uint_eq(a->loops[i].blocked_since_ns, b->loops[i].blocked_since_ns);
    }
    ck_assert_int_eq(a->nqueues, b->nqueues);
    ck_assert_msg(a->nevents == b->nevents, "frame %d: %d events recorded, %d replayed",
                  frame, a->nevents, b->nevents);
    for (int i = 0; i < a->nevents; i++) {
        ck_assert_uint_eq(a->events[i].seq, b->events[i].seq);
        ck_assert_int_eq(a->events[i].kind, b->events[i].kind);
        ck_assert_str_eq(a->events[i].text, b->events[i].text);
    }
}

/* A real board, changed between frames as a server would change it:
 * threads come and go and change state, lines are counted, a loop blocks,
 * events are written (more than the ring holds, over the run). Each frame
 * is recorded and its snapshot kept, to compare with the replay. */
static struct board_snapshot **record_run(void)
{
    struct board *b = board_create("reactor", "recorded in a test");
    ck_assert_ptr_nonnull(b);
    struct board_thread_ref refs[40];
    struct board_loop *loop = board_loop_claim(b, "reactor");
    for (int i = 0; i < 40; i++) {
        char name[16];
        snprintf(name, sizeof(name), "conn-%d", i + 1);
        board_thread_begin(b, &refs[i], ROLE_CONN, name, (uint64_t)i + 1);
    }
    char err[256];
    struct recorder *r = recorder_open(path, err, sizeof(err));
    ck_assert_msg(r != NULL, "%s", err);
    struct board_snapshot **kept = calloc(FRAMES, sizeof(*kept));
    struct pane pane = { .pid = getpid() };
    snprintf(pane.path, sizeof(pane.path), "%s", board_path(b));
    for (int f = 0; f < FRAMES; f++) {
        for (int i = 0; i < 40; i++)
            if ((i + f) % 3 == 0)
                board_thread_state(b, &refs[i], (enum board_state)((i + f) % 5));
        board_add(b, CTR_LINES, (uint64_t)f);
        board_record_latency(b, 1000u * (uint64_t)(f + 1));
        for (int e = 0; e < f % 7; e++)
            board_event(b, e % 2 ? EV_BLOCKED : EV_ACCEPT, "frame %d event %d", f, e);
        atomic_store(&loop->channels, (uint64_t)f);
        atomic_store(&loop->blocked_since_ns, f % 10 == 0 ? (uint64_t)f : 0);
        kept[f] = calloc(1, sizeof(struct board_snapshot));
        ck_assert_int_eq(board_read(pane.path, kept[f], err, sizeof(err)), 0);
        pane.now = kept[f];
        ck_assert_int_eq(recorder_frame(r, (uint64_t)f * 500000000u, &pane, 1), 0);
    }
    ck_assert_int_eq(recorder_close(r), 0);
    board_close(b);
    return kept;
}

static void free_kept(struct board_snapshot **kept)
{
    for (int f = 0; f < FRAMES; f++)
        free(kept[f]);
    free(kept);
}

START_TEST(replayed_frames_are_the_recorded_ones_forward_and_backward)
{
    make_dir();
    struct board_snapshot **kept = record_run();
    char err[256];
    struct recording *rec = recording_load(path, err, sizeof(err));
    ck_assert_msg(rec != NULL, "%s", err);
    ck_assert_int_eq(recording_frames(rec), FRAMES);
    struct pane panes[VIEW_MAX_PANES] = { 0 };
    for (int f = 0; f < FRAMES; f++) {                     /* forward */
        ck_assert_int_eq(recording_show(rec, f, panes), 1);
        assert_same(kept[f], panes[0].now, f);
        ck_assert_uint_eq(recording_time_ns(rec, f), (uint64_t)f * 500000000u);
        if (f > 0)
            assert_same(kept[f - 1], panes[0].before, f);
    }
    for (int f = FRAMES - 1; f >= 0; f--) {                /* backward */
        recording_show(rec, f, panes);
        assert_same(kept[f], panes[0].now, f);
    }
    for (int f = 3; f < FRAMES; f += 37) {                 /* back one, on one */
        recording_show(rec, f, panes);
        recording_show(rec, f - 1, panes);
        assert_same(kept[f - 1], panes[0].now, f - 1);
        recording_show(rec, f, panes);
        assert_same(kept[f], panes[0].now, f);
    }
    /* The warnings are where blocked events were written. */
    ck_assert(recording_has_warning(rec, 2));              /* 2 % 7 = 2 events */
    ck_assert(!recording_has_warning(rec, 7));             /* 0 events */
    ck_assert_int_eq(recording_new_events(rec, 6), 6);
    recording_release_panes(panes);
    recording_free(rec);
    free_kept(kept);
    remove_dir();
}
END_TEST

static char *slurp(const char *p, size_t *len)
{
    FILE *f = fopen(p, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    rewind(f);
    char *d = malloc(*len);
    ck_assert_uint_eq(fread(d, 1, *len, f), *len);
    fclose(f);
    return d;
}

static void spill(const char *p, const char *d, size_t len)
{
    FILE *f = fopen(p, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(d, 1, len, f), len);
    fclose(f);
}

/* Refused, with a reason: never a crash, never a half-loaded recording. */
static void assert_refused(const char *p, const char *why)
{
    char err[512] = "";
    struct recording *rec = recording_load(p, err, sizeof(err));
    ck_assert_msg(rec == NULL, "%s was loaded", why);
    ck_assert_msg(err[0] != '\0', "%s: no reason given", why);
}

START_TEST(broken_recordings_are_refused)
{
    make_dir();
    free_kept(record_run());
    size_t len;
    char *good = slurp(path, &len);
    char bad[160];
    snprintf(bad, sizeof(bad), "%s/bad.tlr", dir);
    char err[512];

    /* Cut at every length: a truncated recording is refused. */
    for (size_t cut = 0; cut < len; cut += 1 + cut / 50) {
        spill(bad, good, cut);
        assert_refused(bad, "a truncated file");
    }
    spill(bad, good, len / 2);
    recording_load(bad, err, sizeof(err));
    ck_assert_msg(strstr(err, "truncated") || strstr(err, "corrupt"), "%s", err);

    /* Another version. */
    char *copy = malloc(len);
    memcpy(copy, good, len);
    copy[8] = 2;
    spill(bad, copy, len);
    recording_load(bad, err, sizeof(err));
    ck_assert_ptr_nonnull(strstr(err, "version 2"));

    /* Not a recording at all. */
    spill(bad, "hello, world\n", 13);
    recording_load(bad, err, sizeof(err));
    ck_assert_ptr_nonnull(strstr(err, "not a threadlab recording"));

    /* Any single byte changed: refused (a checksum, a mark, a length). */
    unsigned seed = 1;
    for (int k = 0; k < 400; k++) {
        memcpy(copy, good, len);
        size_t at = 24 + (size_t)rand_r(&seed) % (len - 24);
        copy[at] ^= (char)(1 + rand_r(&seed) % 255);
        spill(bad, copy, len);
        assert_refused(bad, "a flipped byte");
    }
    /* Random garbage after a good header. */
    for (int k = 0; k < 100; k++) {
        memcpy(copy, good, len);
        for (size_t i = 24; i < len; i++)
            copy[i] = (char)rand_r(&seed);
        spill(bad, copy, len);
        assert_refused(bad, "garbage");
    }
    free(copy);
    free(good);
    remove_dir();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("record");
    TCase *tc = tcase_create("record");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, replayed_frames_are_the_recorded_ones_forward_and_backward);
    tcase_add_test(tc, broken_recordings_are_refused);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
