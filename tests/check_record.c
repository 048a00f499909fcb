/* check_record.c -- recordings: what is replayed is what was recorded,
 * forward and backward; stepping back then on returns the same frame; a
 * file cut short at any byte plays its whole frames and says where it was
 * cut; a changed byte anywhere, and broken files of every kind, are
 * refused, never crash. */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "probe/board.h"
#include "probe/board_read.h"
#include "viz/record.h"
#include "viz/view.h"

enum { FRAMES = 150, SHORT_FRAMES = 8 };
#define END_MARK_BYTES 20              /* "END1" frames ending_len crc, ending_crc */
#define ENDING "scenario test: the table\nmodel  lines/s\nbio    12319\n"
#define ENDING_ZH "场景 test：表格\n模型  行/秒\nbio    12319\n"

/* Frame f's caption in record_run: every third one has none. */
static void caption_of(int f, char *out, size_t len)
{
    if (f % 3 == 0)
        out[0] = '\0';
    else
        snprintf(out, len, "[sim reactor] event %d  next: conn %d reaches the server", f, f);
}

/* Frame f's caption in Chinese: every other captioned frame has one. */
static void caption_zh_of(int f, char *out, size_t len)
{
    if (f % 3 == 0 || f % 2 == 0)
        out[0] = '\0';
    else
        snprintf(out, len, "[仿真 reactor] 事件 %d  下一个：连接 %d 到达服务器", f, f);
}

/* Where each frame of the last record_run ended in the file. */
static uint64_t frame_end[FRAMES];

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

/* ck_assert, quiet when it holds: Check sends a message through a pipe for
 * every passing ck_assert (the last place reached), and these run millions
 * of times (every cut, every flip). */
#define CHECK(cond, ...) do { if (!(cond)) ck_abort_msg(__VA_ARGS__); } while (0)
#define SAME(x) CHECK(x, "frame %d: %s differs in the replay", frame, #x)

/* The fields a pane shows, compared one by one (a snapshot's spare array
 * slots are not part of it). */
static void assert_same(const struct board_snapshot *a, const struct board_snapshot *b,
                        int frame)
{
    SAME(a->pid == b->pid);
    SAME(!strcmp(a->model, b->model));
    SAME(!strcmp(a->options, b->options));
    SAME(!memcmp(a->counters, b->counters, sizeof(a->counters)));
    SAME(!memcmp(a->hist, b->hist, sizeof(a->hist)));
    SAME(!memcmp(a->threads_by_state, b->threads_by_state, sizeof(a->threads_by_state)));
    SAME(a->nthreads == b->nthreads);
    for (int i = 0; i < a->nthreads; i++) {
        SAME(!strcmp(a->threads[i].name, b->threads[i].name));
        SAME(a->threads[i].state == b->threads[i].state);
        SAME(a->threads[i].since_ns == b->threads[i].since_ns);
        SAME(a->threads[i].lines == b->threads[i].lines);
    }
    SAME(a->nloops == b->nloops);
    for (int i = 0; i < a->nloops; i++) {
        SAME(!strcmp(a->loops[i].name, b->loops[i].name));
        SAME(a->loops[i].channels == b->loops[i].channels);
        SAME(a->loops[i].blocked_since_ns == b->loops[i].blocked_since_ns);
    }
    SAME(a->nqueues == b->nqueues);
    CHECK(a->nevents == b->nevents, "frame %d: %d events recorded, %d replayed", frame,
          a->nevents, b->nevents);
    for (int i = 0; i < a->nevents; i++) {
        SAME(a->events[i].seq == b->events[i].seq);
        SAME(a->events[i].kind == b->events[i].kind);
        SAME(!strcmp(a->events[i].text, b->events[i].text));
    }
}

/* A real board, changed between frames as a server would change it:
 * threads come and go and change state, lines are counted, a loop blocks,
 * events are written (more than the ring holds, over the run). Each frame
 * is recorded and its snapshot kept, to compare with the replay. */
static struct board_snapshot **record_run(int frames)
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
    ck_assert_int_le(frames, FRAMES);
    struct pane pane = { .pid = getpid() };
    snprintf(pane.path, sizeof(pane.path), "%s", board_path(b));
    for (int f = 0; f < frames; f++) {
        for (int i = 0; i < 40; i++)
            if ((i + f) % 3 == 0)
                board_thread_state(b, &refs[i], (enum board_state)((i + f) % 5));
        board_add(b, CTR_LINES, (uint64_t)f);
        board_record_latency(b, 1000u * (uint64_t)(f + 1));
        for (int e = 0; e < f % 7; e++)          /* a stall: f % 7 from 2 to 6 */
            board_event(b, e % 2 ? EV_BLOCKED : EV_ACCEPT, "%s frame %d event %d",
                        e % 2 && f % 7 == 6 && e == 5 ? "reactor unblocked:" : "reactor",
                        f, e);
        atomic_store(&loop->channels, (uint64_t)f);
        atomic_store(&loop->blocked_since_ns, f % 10 == 0 ? (uint64_t)f : 0);
        kept[f] = calloc(1, sizeof(struct board_snapshot));
        ck_assert_int_eq(board_read(pane.path, kept[f], err, sizeof(err)), 0);
        pane.now = kept[f];
        char caption[RECORD_CAPTION_MAX], caption_zh[RECORD_CAPTION_MAX];
        caption_of(f, caption, sizeof(caption));
        caption_zh_of(f, caption_zh, sizeof(caption_zh));
        recorder_caption(r, caption, caption_zh);
        ck_assert_int_eq(recorder_frame(r, (uint64_t)f * 500000000u, &pane, 1), 0);
        frame_end[f] = recorder_bytes(r);
    }
    recorder_ending(r, ENDING, ENDING_ZH);
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
    struct board_snapshot **kept = record_run(FRAMES);
    char err[256];
    struct recording *rec = recording_load(path, err, sizeof(err));
    ck_assert_msg(rec != NULL, "%s", err);
    ck_assert_int_eq(recording_frames(rec), FRAMES);
    ck_assert_ptr_null(recording_cut(rec));                /* a whole file */
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

/* A loaded recording: its frames, where it says it was cut (or NULL). */
static struct recording *load_ok(const char *p, const char *why)
{
    char err[512] = "";
    struct recording *rec = recording_load(p, err, sizeof(err));
    ck_assert_msg(rec != NULL, "%s was refused: %s", why, err);
    return rec;
}

/* The same for bytes in memory (thousands of variants: no file each). */
static struct recording *parse_ok(const char *bytes, size_t len, const char *why)
{
    char err[512] = "";
    struct recording *rec = recording_parse(bytes, len, "mem.tlr", err, sizeof(err));
    CHECK(rec != NULL, "%s was refused: %s", why, err);
    return rec;
}

/* Refused, with a reason: never a crash, never a half-loaded recording. */
static void assert_bytes_refused(const char *bytes, size_t len, const char *why)
{
    char err[512] = "";
    struct recording *rec = recording_parse(bytes, len, "mem.tlr", err, sizeof(err));
    CHECK(rec == NULL, "%s was loaded", why);
    CHECK(err[0] != '\0', "%s: no reason given", why);
}

/* Each frame's caption and the ending come back; a loop's stall is a
 * warning from its first blocked event to its unblocked one: frames with
 * f % 7 >= 2 have blocked events and the one at f % 7 == 6 ends with
 * "reactor unblocked", so one starts at each f % 7 == 2 and goes on for
 * four frames. */
START_TEST(captions_ending_and_new_warnings_replay)
{
    make_dir();
    free_kept(record_run(FRAMES));
    struct recording *rec = load_ok(path, "a recording with captions");
    ck_assert_str_eq(recording_ending(rec, LANG_EN), ENDING);
    ck_assert_str_eq(recording_ending(rec, LANG_ZH), ENDING_ZH);
    char want[RECORD_CAPTION_MAX], want_zh[RECORD_CAPTION_MAX];
    int starts = 0;
    for (int f = 0; f < FRAMES; f++) {
        caption_of(f, want, sizeof(want));
        caption_zh_of(f, want_zh, sizeof(want_zh));
        ck_assert_str_eq(recording_caption(rec, f, LANG_EN), want);
        /* A frame without a Chinese caption shows the English one. */
        ck_assert_str_eq(recording_caption(rec, f, LANG_ZH), want_zh[0] ? want_zh : want);
        ck_assert(recording_has_warning(rec, f) == (f % 7 >= 2));
        ck_assert(recording_new_warning(rec, f) == (f % 7 == 2));
        starts += recording_new_warning(rec, f);
    }
    ck_assert_int_eq(starts, (FRAMES + 4) / 7);
    recording_free(rec);
    remove_dir();
}
END_TEST

START_TEST(a_recording_cut_at_any_byte_plays_its_whole_frames)
{
    make_dir();
    struct board_snapshot **kept = record_run(SHORT_FRAMES);
    size_t len;
    char *good = slurp(path, &len);
    char err[512], want[64];
    struct pane panes[VIEW_MAX_PANES] = { 0 };
    printf("an %d-frame recording with captions and an ending: %zu bytes, cut at each\n",
           SHORT_FRAMES, len);
    /* Every cut a dying recorder can leave: any length short of the end. */
    for (size_t cut = 0; cut < len; cut++) {
        int whole = 0;
        while (whole < SHORT_FRAMES && frame_end[whole] <= cut)
            whole++;
        if (whole == 0) {                  /* nothing to play: refused, saying why */
            err[0] = '\0';
            CHECK(!recording_parse(good, cut, "mem.tlr", err, sizeof(err)),
                  "cut at %zu: loaded with no whole frame", cut);
            CHECK(strstr(err, "cut short") || cut == 0, "cut at %zu: %s", cut, err);
            continue;
        }
        struct recording *rec = parse_ok(good, cut, "a cut file");
        CHECK(recording_frames(rec) == whole, "cut at %zu: %d frames, %d whole", cut,
              recording_frames(rec), whole);
        const char *where = recording_cut(rec);
        CHECK(where != NULL, "cut at %zu: not said to be cut", cut);
        snprintf(want, sizeof(want), " of %zu, after frame %d ", cut, whole);
        CHECK(strstr(where, want), "cut at %zu: '%s' lacks '%s'", cut, where, want);
        /* The last whole frame is the recorded one. */
        CHECK(recording_show(rec, whole - 1, panes) == 1, "cut at %zu: no pane", cut);
        assert_same(kept[whole - 1], panes[0].now, whole - 1);
        recording_free(rec);              /* (the panes' buffers serve the next) */
    }
    recording_release_panes(panes);
    /* A power loss can leave zeros where the last writes should be. */
    char *zeros = calloc(1, len);
    memcpy(zeros, good, (size_t)frame_end[4]);
    struct recording *rec = parse_ok(zeros, len, "a file ending in zeros");
    ck_assert_int_eq(recording_frames(rec), 5);
    ck_assert_ptr_nonnull(strstr(recording_cut(rec), "zeros"));
    recording_free(rec);
    free(zeros);
    free(good);
    free_kept(kept);
    remove_dir();
}
END_TEST

START_TEST(a_changed_byte_anywhere_is_refused)
{
    make_dir();
    free_kept(record_run(SHORT_FRAMES));
    size_t len;
    char *good = slurp(path, &len);
    char *copy = malloc(len);
    /* Every byte, header and end mark included; the low bit of the even
     * ones, the high bit of the odd ones. */
    for (size_t at = 0; at < len; at++) {
        memcpy(copy, good, len);
        copy[at] ^= (char)(at % 2 ? 0x80 : 0x01);
        assert_bytes_refused(copy, len, "a flipped byte");
    }
    free(copy);
    free(good);
    remove_dir();
}
END_TEST

/* Record SHORT_FRAMES frames of a made-up snapshot whose events are
 * pseudo-random text (so that deflate cannot shrink them away), with the
 * file size limited to limit bytes (0: none). The same bytes every time
 * but the header's start time, so a first run tells where frames end.
 * Ends with recorder_close, or with finish, with recorder_finish as the
 * commands end a recording. */
static struct recorder_result {
    int rcs[SHORT_FRAMES];
    uint64_t ends[SHORT_FRAMES];
    uint32_t whole;
    uint64_t bytes;
    int close_rc;
    bool whole_file;                     /* what recorder_finish said */
} record_limited(uint64_t limit, bool finish)
{
    struct recorder_result res = { 0 };
    struct board_snapshot *s = calloc(1, sizeof(*s));
    s->pid = getpid();
    snprintf(s->model, sizeof(s->model), "bio");
    struct pane pane = { .pid = s->pid, .now = s };
    char err[256];
    struct recorder *r = recorder_open(path, err, sizeof(err));
    ck_assert_msg(r != NULL, "%s", err);
    struct rlimit old, small;
    ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
    small = old;
    small.rlim_cur = limit;
    signal(SIGXFSZ, SIG_IGN);            /* then write(2) fails with EFBIG */
    if (limit)
        ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &small), 0);
    unsigned seed = 7;
    for (int f = 0; f < SHORT_FRAMES; f++) {
        s->nevents = 4;
        for (int e = 0; e < 4; e++) {
            s->events[e] = (struct board_event_snap){ .seq = (uint64_t)(4 * f + e + 1),
                                                      .kind = EV_ACCEPT };
            for (int i = 0; i < 60; i++)
                s->events[e].text[i] = (char)('!' + rand_r(&seed) % 90);
        }
        res.rcs[f] = recorder_frame(r, (uint64_t)f * 1000, &pane, 1);
        res.ends[f] = recorder_bytes(r);
    }
    res.whole = recorder_frames(r);
    res.bytes = recorder_bytes(r);
    if (finish)
        res.whole_file = recorder_finish(r, path, "check_record", "frame");
    else
        res.close_rc = recorder_close(r);
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
    free(s);
    return res;
}

START_TEST(a_full_disk_leaves_a_recording_that_plays)
{
    make_dir();
    char err[256];
    /* /dev/full: refused at open, before anything is recorded. */
    ck_assert_ptr_null(recorder_open("/dev/full", err, sizeof(err)));
    ck_assert_msg(strstr(err, "No space left"), "%s", err);
    ck_assert_ptr_null(recorder_open("/nonexistent/dir/x.tlr", err, sizeof(err)));
    ck_assert_msg(strstr(err, "No such file"), "%s", err);

    /* A file size limit in the middle of frame 5 stands in for a disk that
     * fills up mid-run. */
    struct recorder_result free_run = record_limited(0, false);
    ck_assert_int_eq(free_run.whole, SHORT_FRAMES);
    uint64_t limit = free_run.ends[3] + (free_run.ends[4] - free_run.ends[3]) / 2;
    ck_assert_uint_gt(free_run.ends[4] - free_run.ends[3], 2 * END_MARK_BYTES);
    struct recorder_result res = record_limited(limit, false);
    ck_assert_int_eq(res.whole, 4);
    for (int f = 0; f < SHORT_FRAMES; f++)          /* then it stays failed */
        ck_assert_int_eq(res.rcs[f], f < 4 ? 0 : -EFBIG);
    ck_assert_int_eq(res.close_rc, -EFBIG);
    ck_assert_uint_eq(res.bytes, free_run.ends[3]);
    /* The half-written frame was cut away, so the end mark (20 bytes with
     * no ending, which fit under the limit) follows the last whole frame: a
     * whole file. */
    size_t size;
    free(slurp(path, &size));
    ck_assert_uint_eq(size, res.bytes + END_MARK_BYTES);
    struct recording *rec = load_ok(path, "a recording whose disk filled up");
    ck_assert_int_eq(recording_frames(rec), 4);
    ck_assert_ptr_null(recording_cut(rec));
    recording_free(rec);
    remove_dir();
}
END_TEST

/* A command that was asked to record says whether it got a whole
 * recording: demo --record on a disk that filled before frame 1 said
 * "it plays its first 0 frames" and exited 0, leaving a file that replay
 * refuses. */
START_TEST(a_recording_that_failed_is_not_called_recorded)
{
    make_dir();
    struct recorder_result whole = record_limited(0, true);
    ck_assert(whole.whole_file);
    ck_assert_int_eq(access(path, F_OK), 0);

    /* Full after frame 2: the file keeps its two whole frames and plays,
     * but the command must not say all went well. */
    uint64_t mid_frame_3 = whole.ends[1] + (whole.ends[2] - whole.ends[1]) / 2;
    struct recorder_result cut = record_limited(mid_frame_3, true);
    ck_assert_uint_eq(cut.whole, 2);
    ck_assert(!cut.whole_file);
    struct recording *rec = load_ok(path, "a recording whose disk filled after frame 2");
    ck_assert_int_eq(recording_frames(rec), 2);
    recording_free(rec);

    /* Full inside frame 1: nothing to play, so no file is left behind. */
    struct recorder_result none = record_limited(whole.ends[0] / 2, true);
    ck_assert_uint_eq(none.whole, 0);
    ck_assert(!none.whole_file);
    ck_assert_int_eq(access(path, F_OK), -1);

    /* No frame at all (the show ended first): the same. */
    char err[256];
    struct recorder *r = recorder_open(path, err, sizeof(err));
    ck_assert_msg(r != NULL, "%s", err);
    ck_assert(!recorder_finish(r, path, "check_record", "frame"));
    ck_assert_int_eq(access(path, F_OK), -1);
    ck_assert(recorder_finish(NULL, path, "check_record", "frame"));
    remove_dir();
}
END_TEST

/* ---- a long recording, in bounded memory --------------------------------- */

enum { LONG_FRAMES = 800, LONG_THREADS = 4096 };

/* Frame f of the long recording: every thread's counters move each frame
 * (a busy server's every slot), and an event every third frame. */
static void long_frame(struct board_snapshot *s, int f)
{
    s->pid = 4242;
    snprintf(s->model, sizeof(s->model), "bio");
    s->taken_mono_ns = s->start_mono_ns + (uint64_t)f * 100000000u;
    s->counters[CTR_LINES] = (uint64_t)f * LONG_THREADS;
    s->nthreads = LONG_THREADS;
    for (int i = 0; i < LONG_THREADS; i++) {
        struct board_thread_snap *t = &s->threads[i];
        snprintf(t->name, sizeof(t->name), "conn-%d", i + 1);
        t->role = ROLE_CONN;
        t->state = (enum board_state)((i + f) % 3 ? STATE_BLOCKED_IO : STATE_RUNNING);
        t->conn = (uint64_t)i + 1;
        t->lines = (uint64_t)f * 7 + (uint64_t)i;
        t->bytes_in = t->bytes_out = t->lines * 64;
        t->busy_ns = (uint64_t)f * 1000003u + (uint64_t)i;
        t->since_ns = s->taken_mono_ns - (uint64_t)i;
    }
    if (f % 3 == 0) {
        struct board_event_snap *e = &s->events[s->nevents < BOARD_EVENT_SLOTS ? s->nevents++ : 0];
        *e = (struct board_event_snap){ .seq = (uint64_t)f / 3 + 1, .kind = EV_ACCEPT,
                                        .time_ns = s->taken_mono_ns };
        snprintf(e->text, sizeof(e->text), "conn %d at frame %d", f / 3 + 1, f);
    }
}

static void record_long(void)
{
    char err[256];
    struct recorder *r = recorder_open(path, err, sizeof(err));
    ck_assert_msg(r != NULL, "%s", err);
    struct board_snapshot *s = calloc(1, sizeof(*s));
    struct pane pane = { .pid = 4242, .now = s };
    for (int f = 0; f < LONG_FRAMES; f++) {
        if (s->nevents == BOARD_EVENT_SLOTS)     /* a ring: the oldest goes */
            s->nevents = 0;
        long_frame(s, f);
        ck_assert_int_eq(recorder_frame(r, (uint64_t)f * 100000000u, &pane, 1), 0);
    }
    ck_assert_int_eq(recorder_close(r), 0);
    free(s);
}

/* Frame f as replayed: thread 1000's counters, and the newest event. */
static void assert_long_frame(struct recording *rec, struct pane *panes, int f)
{
    ck_assert_int_eq(recording_show(rec, f, panes), 1);
    const struct board_snapshot *s = panes[0].now;
    ck_assert_int_eq(s->nthreads, LONG_THREADS);
    CHECK(s->threads[999].lines == (uint64_t)f * 7 + 999, "frame %d: lines %llu", f,
          (unsigned long long)s->threads[999].lines);
    CHECK(s->threads[999].busy_ns == (uint64_t)f * 1000003u + 999, "frame %d: busy", f);
    char newest[64];
    snprintf(newest, sizeof(newest), "conn %d at frame %d", f / 3 + 1, f / 3 * 3);
    CHECK(s->nevents == (f / 3 + 1 < BOARD_EVENT_SLOTS ? f / 3 + 1 : BOARD_EVENT_SLOTS),
          "frame %d: %d events", f, s->nevents);
    CHECK(!strcmp(s->events[s->nevents - 1].text, newest), "frame %d: newest event '%s'", f,
          s->events[s->nevents - 1].text);
    if (f > 0)
        CHECK(panes[0].before->threads[999].lines == (uint64_t)(f - 1) * 7 + 999,
              "frame %d: the frame before", f);
}

/* The address space this process has now, in bytes. */
static rlim_t address_space_now(void)
{
    long pages;
    FILE *f = fopen("/proc/self/statm", "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fscanf(f, "%ld", &pages), 1);
    fclose(f);
    return (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE);
}

/* Address-space limits break the sanitizers' shadow memory: plain builds only. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define LIMITS_WORK 0
#else
#define LIMITS_WORK 1
#endif

/* A recording whose frames inflate to more than twice 32 MiB (4096
 * threads whose counters all move, 800 frames) replays within 32 MiB of
 * address space more than the process had: first, last, back one, on
 * one, seeks, each frame what was recorded. With almost no memory to
 * spare, the load says memory ran out (it said "corrupt: frame N does not
 * inflate", N following the limit and not the file). */
START_TEST(a_long_recording_replays_in_bounded_memory)
{
    if (!LIMITS_WORK)
        return;
    make_dir();
    record_long();
    struct rlimit old, cap;
    ck_assert_int_eq(getrlimit(RLIMIT_AS, &old), 0);
    cap = old;
    cap.rlim_cur = address_space_now() + (32u << 20);
    ck_assert_int_eq(setrlimit(RLIMIT_AS, &cap), 0);
    char err[512] = "";
    struct recording *rec = recording_load(path, err, sizeof(err));
    ck_assert_msg(rec != NULL, "refused within 32 MiB: %s", err);
    ck_assert_int_eq(recording_frames(rec), LONG_FRAMES);
    struct pane panes[VIEW_MAX_PANES] = { 0 };
    int at[] = { 0, LONG_FRAMES - 1, LONG_FRAMES - 2, LONG_FRAMES - 1, LONG_FRAMES / 2,
                 LONG_FRAMES / 2 - 1, 1, 64, 63, 65, 500, 499 };
    for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++)
        assert_long_frame(rec, panes, at[i]);
    for (int f = LONG_FRAMES - 1; f > LONG_FRAMES - 20; f--)       /* back, frame by frame */
        assert_long_frame(rec, panes, f);
    recording_release_panes(panes);
    recording_free(rec);
    /* Almost nothing to spare: refused, and the reason is memory. */
    cap.rlim_cur = address_space_now() + (1u << 20);
    ck_assert_int_eq(setrlimit(RLIMIT_AS, &cap), 0);
    rec = recording_load(path, err, sizeof(err));
    ck_assert_int_eq(setrlimit(RLIMIT_AS, &old), 0);
    ck_assert_msg(rec == NULL, "loaded with 1 MiB to spare");
    ck_assert_msg(strstr(err, "out of memory") && !strstr(err, "corrupt"), "%s", err);
    remove_dir();
}
END_TEST

START_TEST(broken_recordings_are_refused)
{
    make_dir();
    free_kept(record_run(FRAMES));
    size_t len;
    char *good = slurp(path, &len);
    char bad[160];
    snprintf(bad, sizeof(bad), "%s/bad.tlr", dir);
    char err[512];

    /* Cut inside the header: nothing to play, and it says so. */
    spill(bad, good, 20);
    recording_load(bad, err, sizeof(err));
    ck_assert_msg(strstr(err, "cut short at byte 20, inside its header"), "%s", err);

    /* Another version. */
    char *copy = malloc(len);
    memcpy(copy, good, len);
    copy[8] = 1;
    spill(bad, copy, len);
    recording_load(bad, err, sizeof(err));
    ck_assert_msg(strstr(err, "version 1; this threadlab reads version 3"), "%s", err);

    /* Not a recording at all; nothing at all. */
    spill(bad, "hello, world\n", 13);
    recording_load(bad, err, sizeof(err));
    ck_assert_ptr_nonnull(strstr(err, "not a threadlab recording"));
    spill(bad, "", 0);
    recording_load(bad, err, sizeof(err));
    ck_assert_ptr_nonnull(strstr(err, "not a threadlab recording"));

    /* Bytes after the end mark. */
    char *longer = malloc(len + 1);
    memcpy(longer, good, len);
    longer[len] = 'x';
    spill(bad, longer, len + 1);
    recording_load(bad, err, sizeof(err));
    ck_assert_msg(strstr(err, "bytes follow its end mark"), "%s", err);
    free(longer);

    /* Any single byte of a long recording changed, to any other value:
     * refused (every byte of a short one is in the test above). */
    unsigned seed = 1;
    for (int k = 0; k < 100; k++) {
        memcpy(copy, good, len);
        size_t at = 24 + (size_t)rand_r(&seed) % (len - 24);
        copy[at] ^= (char)(1 + rand_r(&seed) % 255);
        assert_bytes_refused(copy, len, "a flipped byte");
    }
    /* A byte flipped in the middle: a checksum's error, or, when the middle
     * falls on a frame's mark (the frames' sizes vary with what the board
     * held), the mark's: either way "corrupt", with where. */
    memcpy(copy, good, len);
    copy[len / 2] ^= 0x10;
    spill(bad, copy, len);
    recording_load(bad, err, sizeof(err));
    ck_assert_msg(strstr(err, "corrupt: ") && strstr(err, "(byte "), "%s", err);
    /* Random garbage after a good header. */
    for (int k = 0; k < 100; k++) {
        memcpy(copy, good, len);
        for (size_t i = 24; i < len; i++)
            copy[i] = (char)rand_r(&seed);
        assert_bytes_refused(copy, len, "garbage");
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
    tcase_add_test(tc, captions_ending_and_new_warnings_replay);
    tcase_add_test(tc, a_recording_cut_at_any_byte_plays_its_whole_frames);
    tcase_add_test(tc, a_changed_byte_anywhere_is_refused);
    tcase_add_test(tc, a_full_disk_leaves_a_recording_that_plays);
    tcase_add_test(tc, a_recording_that_failed_is_not_called_recorded);
    tcase_add_test(tc, broken_recordings_are_refused);
    tcase_add_test(tc, a_long_recording_replays_in_bounded_memory);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
