/* board_read.c -- copy, validate, list. See board_read.h. */
#include "board_read.h"
#include "net/clock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *const role_names[ROLE_COUNT] = {
    "acceptor", "conn", "watchdog", "pool-worker", "boss", "worker-loop",
    "business", "checker", "main", "carrier", "vthread", "monitor",
};
static const char *const state_names[STATE_COUNT] = {
    "idle", "waiting", "running", "runnable", "blocked-io", "blocked-sleep",
    "terminated",
};
static const char *const event_names[EV_COUNT] = {
    "accept", "assign", "close", "spawn", "exit", "grow", "shrink",
    "queued", "run", "timer", "reject", "blocked", "error",
};
static const char *const counter_names[CTR_COUNT] = {
    "accepted", "active", "closed", "bytes_in", "bytes_out", "lines",
    "rejected", "offloaded", "err_line_too_long", "err_bad_argument",
    "err_reset", "err_accept", "threads_spawned", "threads_exited",
    "closed_idle", "closed_slow_line", "closed_stalled",
};

const char *board_role_name(enum board_role r)
{ return (unsigned)r < ROLE_COUNT ? role_names[r] : "?"; }
const char *board_state_name(enum board_state s)
{ return (unsigned)s < STATE_COUNT ? state_names[s] : "?"; }
const char *board_event_name(enum board_event_kind k)
{ return (unsigned)k < EV_COUNT ? event_names[k] : "?"; }
const char *board_counter_name(enum board_counter c)
{ return (unsigned)c < CTR_COUNT ? counter_names[c] : "?"; }

/* ---- validation ----------------------------------------------------------- */

#define FAIL(...) do { snprintf(err, err_len, __VA_ARGS__); return -EINVAL; } while (0)

/* A plain (non-atomic) read of a field in the copy. */
static uint64_t u64_at(const char *base, size_t off)
{
    uint64_t v;
    memcpy(&v, base + off, sizeof(v));
    return v;
}

static uint32_t u32_at(const char *base, size_t off)
{
    uint32_t v;
    memcpy(&v, base + off, sizeof(v));
    return v;
}

/* Copy a text stored as words; always NUL-terminated, non-printables shown
 * as '?' so a hostile board cannot send escape codes to the terminal. */
static void text_at(const char *base, size_t off, char *out, size_t bytes)
{
    memcpy(out, base + off, bytes);
    out[bytes - 1] = '\0';
    for (char *p = out; *p; p++)
        if ((unsigned char)*p < 32 || (unsigned char)*p == 127)
            *p = '?';
}

/* Does [off, off + count * size) lie inside the file, after the header? */
static bool section_fits(uint64_t off, uint64_t count, uint64_t size,
                         uint64_t header, uint64_t total)
{
    if (off < header || off % 8 != 0 || off > total)
        return false;
    if (count != 0 && size > (total - off) / count)
        return false;
    return true;
}

#define F(type, field) offsetof(type, field)

/* Events, oldest first. There is no head in the file (a writer never
 * reads one back): a finished event's seq is its ticket + 1, and ticket t
 * lives in slot t % slots, so the newest event is the largest seq that fits
 * its slot. Then the last min(head, slots) tickets are taken; a slot whose
 * seq is not the ticket expected is being written, was overwritten during
 * the copy, or was scribbled on: it is skipped, never trusted. */
static void parse_events(const char *b, uint64_t eoff, uint32_t nevent,
                         struct board_snapshot *s)
{
    uint64_t head = 0;
    for (uint32_t i = 0; i < nevent; i++) {
        uint64_t seq = u64_at(b, eoff + i * sizeof(struct board_event) +
                                 F(struct board_event, seq));
        if (seq != 0 && (seq - 1) % nevent == i && seq > head)
            head = seq;
    }
    s->event_head = head;
    uint64_t first = head > nevent ? head - nevent : 0;
    for (uint64_t idx = first; idx < head; idx++) {
        size_t o = eoff + (idx % nevent) * sizeof(struct board_event);
        if (u64_at(b, o + F(struct board_event, seq)) != idx + 1)
            continue;
        struct board_event_snap *e = &s->events[s->nevents++];
        e->kind = u32_at(b, o + F(struct board_event, kind));
        e->seq = idx + 1;
        e->time_ns = u64_at(b, o + F(struct board_event, time_ns));
        text_at(b, o + F(struct board_event, text), e->text, sizeof(e->text));
    }
}

/* Who wrote the board (pid, model, options, times) and its counters and
 * histogram: plain numbers, any value is a value, but a pid must be one. */
static int parse_identity(const char *b, uint64_t coff, uint64_t hoff,
                          struct board_snapshot *s, char *err, size_t err_len)
{
    s->pid = (int)u32_at(b, F(struct board_header, pid));
    if (s->pid <= 0)
        FAIL("bad pid %d", s->pid);
    text_at(b, F(struct board_header, model), s->model, sizeof(s->model));
    text_at(b, F(struct board_header, options), s->options, sizeof(s->options));
    s->start_unix_ns = u64_at(b, F(struct board_header, start_unix_ns));
    s->start_mono_ns = u64_at(b, F(struct board_header, start_mono_ns));
    s->closing = u32_at(b, F(struct board_header, closing)) != 0;
    s->simulated = u32_at(b, F(struct board_header, simulated)) != 0;
    s->sim_now_ns = u64_at(b, F(struct board_header, sim_now_ns));
    for (int i = 0; i < STATE_COUNT; i++)
        s->threads_by_state[i] = u64_at(b, F(struct board_header, unslotted_by_state) + 8u * i);
    s->threads_unslotted = u64_at(b, F(struct board_header, threads_unslotted));

    for (int i = 0; i < CTR_COUNT; i++)
        s->counters[i] = u64_at(b, coff + 8u * i);
    for (unsigned i = 0; i < HIST_BUCKETS; i++)
        s->hist[i] = u64_at(b, hoff + F(struct hist, counts) + 8u * i);
    s->hist_max = u64_at(b, hoff + F(struct hist, max));
    return 0;
}

/* The thread slots in use, counted by state too. A role or state out of
 * range is a scribbled board, not a thread to show. */
static int parse_threads(const char *b, uint64_t toff, uint32_t nthread,
                         struct board_snapshot *s, char *err, size_t err_len)
{
    for (uint32_t i = 0; i < nthread; i++) {
        size_t o = toff + i * sizeof(struct board_thread);
        if (u32_at(b, o + F(struct board_thread, in_use)) != 1)
            continue;                    /* free, or being claimed */
        struct board_thread_snap *t = &s->threads[s->nthreads];
        t->role = u32_at(b, o + F(struct board_thread, role));
        t->state = u32_at(b, o + F(struct board_thread, state));
        if ((unsigned)t->role >= ROLE_COUNT || (unsigned)t->state >= STATE_COUNT)
            FAIL("thread slot %u: role %u or state %u out of range", i,
                 (unsigned)t->role, (unsigned)t->state);
        text_at(b, o + F(struct board_thread, name), t->name, sizeof(t->name));
        t->since_ns = u64_at(b, o + F(struct board_thread, since_ns));
        t->conn = u64_at(b, o + F(struct board_thread, conn));
        t->lines = u64_at(b, o + F(struct board_thread, lines));
        t->busy_ns = u64_at(b, o + F(struct board_thread, busy_ns));
        t->idle_ns = u64_at(b, o + F(struct board_thread, idle_ns));
        t->tid = u32_at(b, o + F(struct board_thread, tid));
        t->bytes_in = u64_at(b, o + F(struct board_thread, bytes_in));
        t->bytes_out = u64_at(b, o + F(struct board_thread, bytes_out));
        s->threads_by_state[t->state]++;
        s->nthreads++;
    }
    return 0;
}

/* The loop slots in use: their figures, each phase in range. */
static int parse_loops(const char *b, uint64_t loff, uint32_t nloop, struct board_snapshot *s,
                       char *err, size_t err_len)
{
    for (uint32_t i = 0; i < nloop; i++) {
        size_t o = loff + i * sizeof(struct board_loop);
        if (u32_at(b, o + F(struct board_loop, in_use)) != 1)
            continue;
        struct board_loop_snap *l = &s->loops[s->nloops++];
        text_at(b, o + F(struct board_loop, name), l->name, sizeof(l->name));
        l->phase = u32_at(b, o + F(struct board_loop, phase));
        if (l->phase > 4)
            FAIL("loop slot %u: phase %u out of range", i, l->phase);
        l->channels = u64_at(b, o + F(struct board_loop, channels));
        l->task_queue_depth = u64_at(b, o + F(struct board_loop, task_queue_depth));
        l->timers = u64_at(b, o + F(struct board_loop, timers));
        l->io_ns = u64_at(b, o + F(struct board_loop, io_ns));
        l->task_ns = u64_at(b, o + F(struct board_loop, task_ns));
        l->iterations = u64_at(b, o + F(struct board_loop, iterations));
        l->longest_task_ns = u64_at(b, o + F(struct board_loop, longest_task_ns));
        l->blocked_since_ns = u64_at(b, o + F(struct board_loop, blocked_since_ns));
        l->task_idle_ns = u64_at(b, o + F(struct board_loop, task_idle_ns));
        if (l->task_idle_ns > l->task_ns)
            FAIL("loop slot %u: idle task time past all task time", i);
        l->out_pending_bytes = u64_at(b, o + F(struct board_loop, out_pending_bytes));
        l->channels_paused = u64_at(b, o + F(struct board_loop, channels_paused));
        l->tasks_starving_io = u64_at(b, o + F(struct board_loop, tasks_starving_io));
    }
    return 0;
}

/* The queue slots in use. */
static void parse_queues(const char *b, uint64_t qoff, uint32_t nqueue,
                         struct board_snapshot *s)
{
    for (uint32_t i = 0; i < nqueue; i++) {
        size_t o = qoff + i * sizeof(struct board_queue);
        if (u32_at(b, o + F(struct board_queue, in_use)) != 1)
            continue;
        struct board_queue_snap *q = &s->queues[s->nqueues++];
        text_at(b, o + F(struct board_queue, name), q->name, sizeof(q->name));
        q->depth = u64_at(b, o + F(struct board_queue, depth));
        q->capacity = u64_at(b, o + F(struct board_queue, capacity));
        q->high_water = u64_at(b, o + F(struct board_queue, high_water));
        q->rejected = u64_at(b, o + F(struct board_queue, rejected));
    }
}

int board_parse(const void *bytes, size_t len, struct board_snapshot *s,
                char *err, size_t err_len)
{
    const char *b = bytes;
    const size_t H = sizeof(struct board_header);

    memset(s, 0, offsetof(struct board_snapshot, threads));
    s->nthreads = s->nloops = s->nqueues = s->nevents = 0;
    if (len < H)
        FAIL("truncated: %zu bytes, a header needs %zu", len, H);
    if (u64_at(b, F(struct board_header, magic)) != BOARD_MAGIC)
        FAIL("not a threadlab board (bad magic)");
    uint32_t version = u32_at(b, F(struct board_header, version));
    if (version != BOARD_VERSION) {
        snprintf(err, err_len, "board layout version %u, this threadlab reads %u",
                 version, BOARD_VERSION);
        return -EPROTO;
    }
    if (u32_at(b, F(struct board_header, header_bytes)) != H)
        FAIL("header size %u, expected %zu",
             u32_at(b, F(struct board_header, header_bytes)), H);
    uint64_t total = u64_at(b, F(struct board_header, total_bytes));
    if (total != len)
        FAIL("truncated or padded: header says %llu bytes, file has %zu",
             (unsigned long long)total, len);

    uint32_t nthread = u32_at(b, F(struct board_header, thread_slots));
    uint32_t nloop = u32_at(b, F(struct board_header, loop_slots));
    uint32_t nqueue = u32_at(b, F(struct board_header, queue_slots));
    uint32_t nevent = u32_at(b, F(struct board_header, event_slots));
    if (nthread > BOARD_THREAD_SLOTS || nloop > BOARD_LOOP_SLOTS ||
        nqueue > BOARD_QUEUE_SLOTS || nevent > BOARD_EVENT_SLOTS || nevent == 0)
        FAIL("slot counts out of range (%u threads, %u loops, %u queues, %u events)",
             nthread, nloop, nqueue, nevent);
    uint64_t coff = u64_at(b, F(struct board_header, counters_off));
    uint64_t hoff = u64_at(b, F(struct board_header, hist_off));
    uint64_t toff = u64_at(b, F(struct board_header, threads_off));
    uint64_t loff = u64_at(b, F(struct board_header, loops_off));
    uint64_t qoff = u64_at(b, F(struct board_header, queues_off));
    uint64_t eoff = u64_at(b, F(struct board_header, events_off));
    if (!section_fits(coff, CTR_COUNT, 8, H, total) ||
        !section_fits(hoff, 1, sizeof(struct hist), H, total) ||
        !section_fits(toff, nthread, sizeof(struct board_thread), H, total) ||
        !section_fits(loff, nloop, sizeof(struct board_loop), H, total) ||
        !section_fits(qoff, nqueue, sizeof(struct board_queue), H, total) ||
        !section_fits(eoff, nevent, sizeof(struct board_event), H, total))
        FAIL("a section lies outside the file");

    int rc = parse_identity(b, coff, hoff, s, err, err_len);
    if (rc == 0)
        rc = parse_threads(b, toff, nthread, s, err, err_len);
    if (rc != 0)
        return rc;

    rc = parse_loops(b, loff, nloop, s, err, err_len);
    if (rc != 0)
        return rc;
    parse_queues(b, qoff, nqueue, s);
    parse_events(b, eoff, nevent, s);
    for (int i = 0; i < s->nevents; i++)
        if ((unsigned)s->events[i].kind >= EV_COUNT)
            FAIL("event %llu: kind %u out of range",
                 (unsigned long long)s->events[i].seq - 1, (unsigned)s->events[i].kind);
    return 0;
}

/* ---- opening ---------------------------------------------------------------- */

/* Parse a board link's target, "/proc/PID/fd/N" and nothing else. */
static bool parse_link_target(const char *target, int *pid, int *fd)
{
    int used = 0;
    if (sscanf(target, "/proc/%d/fd/%d%n", pid, fd, &used) != 2 || *pid <= 0 ||
        *fd < 0 || target[used] != '\0')
        return false;
    char again[64];             /* no leading zeros, signs or spaces */
    snprintf(again, sizeof(again), "/proc/%d/fd/%d", *pid, *fd);
    return strcmp(again, target) == 0;
}

/* Does this /proc/.../fd/N entry name a board's memfd? Its link text is
 * "/memfd:threadlab-board (deleted)". A fd that a reused pid holds, or one
 * a server reused after closing its board, reads otherwise. */
static bool fd_is_board_memfd(const char *fd_path)
{
    static const char want[] = "/memfd:" BOARD_MEMFD_NAME;
    const size_t want_len = sizeof(want) - 1;
    char what[128];
    ssize_t n = readlink(fd_path, what, sizeof(what) - 1);
    if (n < 0)
        return false;
    what[n] = '\0';
    return strncmp(what, want, want_len) == 0 &&
           (what[want_len] == '\0' || what[want_len] == ' ');
}

/* Open a board link: read where it points, check that it is a server's
 * board memfd, open it, and check again on the fd we got (the server may
 * have closed its board between the two). Returns the fd or -errno. */
static int open_board_link(const char *path, int *link_pid, char *err, size_t err_len)
{
    char target[64];
    int fd_num;
    ssize_t n = readlink(path, target, sizeof(target) - 1);
    if (n < 0 || (size_t)n >= sizeof(target) - 1) {
        snprintf(err, err_len, "%s: a link, but not one to a board", path);
        return n < 0 ? -errno : -EINVAL;
    }
    target[n] = '\0';
    if (!parse_link_target(target, link_pid, &fd_num)) {
        snprintf(err, err_len, "%s: a link to %s, not to a board", path, target);
        return -EINVAL;
    }
    if (!fd_is_board_memfd(target)) {
        snprintf(err, err_len, "%s: pid %d has no board at fd %d", path,
                 *link_pid, fd_num);
        return -ENOENT;
    }
    int fd = open(target, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        int rc = -errno;
        snprintf(err, err_len, "%s: %s", path,
                 rc == -ENOENT ? "no such board" : strerror(-rc));
        return rc;
    }
    char mine[64];
    snprintf(mine, sizeof(mine), "/proc/self/fd/%d", fd);
    if (!fd_is_board_memfd(mine)) {
        close(fd);
        snprintf(err, err_len, "%s: the server closed its board", path);
        return -ENOENT;
    }
    return fd;
}

/* Open what a board entry names: a link to a live server's memfd, or a
 * plain file (a board copied for later, or one of an older threadlab).
 * Never follows any other link. Returns the fd or -errno, with err set. */
static int open_board(const char *path, int *link_pid, char *err, size_t err_len)
{
    struct stat st;
    *link_pid = 0;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
        return open_board_link(path, link_pid, err, err_len);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        int rc = -errno;
        snprintf(err, err_len, "%s: %s", path,
                 rc == -ENOENT ? "no such board" : strerror(-rc));
        return rc;
    }
    return fd;
}

/* Copy the whole of fd (a regular file of ours, of a sane size) into a
 * malloc'd buffer; *len is what was read (less if it shrank meanwhile). */
static int copy_board(int fd, const char *path, char **copy, size_t *len,
                      char *err, size_t err_len)
{
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, err_len, "%s: not a regular file", path);
        return -EINVAL;
    }
    if (st.st_uid != getuid()) {
        snprintf(err, err_len, "%s: owned by uid %u, not by us", path,
                 (unsigned)st.st_uid);
        return -EACCES;
    }
    if (st.st_size <= 0 || (uint64_t)st.st_size > BOARD_MAX_FILE_BYTES) {
        snprintf(err, err_len, "%s: size %lld is not a board's", path,
                 (long long)st.st_size);
        return -EINVAL;
    }
    size_t want = (size_t)st.st_size, got = 0;
    *copy = malloc(want);
    if (!*copy) {
        snprintf(err, err_len, "%s: out of memory", path);
        return -ENOMEM;
    }
    while (got < want) {
        ssize_t n = pread(fd, *copy + got, want - got, (off_t)got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;                        /* shrank under us: parse says so */
        got += (size_t)n;
    }
    *len = got;
    return 0;
}

int board_read(const char *path, struct board_snapshot *s, char *err,
               size_t err_len)
{
    int link_pid;
    char *copy = NULL;
    size_t len = 0;
    int fd = open_board(path, &link_pid, err, err_len);
    if (fd < 0)
        return fd;
    int rc = copy_board(fd, path, &copy, &len, err, err_len);
    close(fd);
    if (rc < 0)
        return rc;
    uint64_t taken_ns = now_ns();
    char why[200];
    rc = board_parse(copy, len, s, why, sizeof(why));
    free(copy);
    if (rc == 0 && link_pid != 0 && s->pid != link_pid) {
        snprintf(why, sizeof(why), "the board of pid %d says pid %d", link_pid, s->pid);
        rc = -EINVAL;
    }
    if (rc < 0)
        snprintf(err, err_len, "%s: %s", path, why);
    /* A simulated board's moment is the run's time, not when we looked:
     * its ages, rates and "up" are then in simulated time. */
    s->taken_mono_ns = rc == 0 && s->simulated ? s->start_mono_ns + s->sim_now_ns : taken_ns;
    return rc;
}

/* ---- listing -------------------------------------------------------------- */

static bool process_alive(int pid)
{
    return kill(pid, 0) == 0 || errno == EPERM;
}

/* Is the board at path live? Its pid must exist and, for a link, still
 * hold a board memfd at that fd: a link whose pid was reused by another
 * process, or whose server closed its board but died before removing the
 * link, is stale. */
static bool board_alive(const char *path, int pid)
{
    struct stat st;
    if (!process_alive(pid))
        return false;
    if (lstat(path, &st) < 0 || !S_ISLNK(st.st_mode))
        return true;                      /* a plain file: judged by its pid */
    char target[64];
    int link_pid, fd_num;
    ssize_t n = readlink(path, target, sizeof(target) - 1);
    if (n < 0)
        return false;
    target[n] = '\0';
    return parse_link_target(target, &link_pid, &fd_num) && link_pid == pid &&
           fd_is_board_memfd(target);
}

static int by_pid(const void *a, const void *b)
{
    const struct board_entry *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return strcmp(x->path, y->path);
}

int board_list(struct board_entry *out, int max, bool clean_stale)
{
    char dir[200];
    int rc = board_dir(dir, sizeof(dir)), n = 0;
    if (rc < 0)
        return rc;
    DIR *d = opendir(dir);
    if (!d)
        return -errno;
    for (struct dirent *e; (e = readdir(d)) && n < max;) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        size_t len = strlen(e->d_name);
        if (end == e->d_name || pid <= 0 || len < 7 ||
            strcmp(e->d_name + len - 6, ".board") != 0)
            continue;
        struct board_entry *b = &out[n];
        b->pid = (int)pid;
        snprintf(b->path, sizeof(b->path), "%s/%s", dir, e->d_name);
        b->alive = board_alive(b->path, b->pid);
        if (!b->alive && clean_stale) {
            unlink(b->path);              /* a crashed server's leftovers: a
                                             link or a file, never followed */
            continue;
        }
        n++;
    }
    closedir(d);
    qsort(out, (size_t)n, sizeof(*out), by_pid);
    return n;
}

/* ---- JSON ------------------------------------------------------------------ */

/* Copy src for a JSON string: a board's text is printable already (the
 * reader made it so); quotes and backslashes become '?', so the JSON stays
 * whole whatever the writer put there. */
static void json_safe(char *dst, size_t dst_len, const char *src)
{
    snprintf(dst, dst_len, "%s", src);
    for (char *c = dst; *c; c++)
        if (*c == '"' || *c == '\\')
            *c = '?';
}

/* Every loop: its ioRatio split (since it started, from the loop's own
 * time accounting), what it is doing, and its backpressure. io_pct and
 * task_pct share all of its busy time; shared_task_pct leaves out the
 * tasks run when I/O had nothing to do: the share ioRatio sets. */
static void json_loops(const struct board_snapshot *s, FILE *out)
{
    static const char *const phases[] = { "starting", "waiting", "io", "tasks", "stopped" };
    fprintf(out, ",\"loops\":[");
    for (int i = 0; i < s->nloops; i++) {
        const struct board_loop_snap *l = &s->loops[i];
        char name[BOARD_NAME_BYTES];
        json_safe(name, sizeof(name), l->name);
        /* Sums of two counters another process may have written: in
         * doubles, so that no value overflows or divides by zero. */
        double total = (double)l->io_ns + (double)l->task_ns;
        double io_pct = total > 0 ? 100.0 * (double)l->io_ns / total : 0;
        double task_pct = total > 0 ? 100.0 - io_pct : 0;
        double shared = total - (double)l->task_idle_ns;
        double shared_task_pct = shared > 0
                               ? 100.0 * ((double)l->task_ns - (double)l->task_idle_ns) / shared : 0;
        double blocked_ms = l->blocked_since_ns && l->blocked_since_ns < s->taken_mono_ns
                          ? (double)(s->taken_mono_ns - l->blocked_since_ns) / 1e6 : 0;
        fprintf(out, "%s{\"name\":\"%s\",\"phase\":\"%s\",\"channels\":%llu,"
                "\"queue\":%llu,\"timers\":%llu,\"io_ns\":%llu,\"task_ns\":%llu,"
                "\"io_pct\":%.1f,\"task_pct\":%.1f,\"task_idle_ns\":%llu,"
                "\"shared_task_pct\":%.1f,\"iterations\":%llu,"
                "\"longest_task_us\":%.1f,\"blocked_ms\":%.1f,"
                "\"out_pending_bytes\":%llu,\"channels_paused\":%llu,"
                "\"tasks_starving_io\":%llu}",
                i ? "," : "", name, phases[l->phase < 5 ? l->phase : 0],
                (unsigned long long)l->channels, (unsigned long long)l->task_queue_depth,
                (unsigned long long)l->timers, (unsigned long long)l->io_ns,
                (unsigned long long)l->task_ns, io_pct, task_pct,
                (unsigned long long)l->task_idle_ns, shared_task_pct,
                (unsigned long long)l->iterations, (double)l->longest_task_ns / 1e3,
                blocked_ms, (unsigned long long)l->out_pending_bytes,
                (unsigned long long)l->channels_paused,
                (unsigned long long)l->tasks_starving_io);
    }
    fprintf(out, "]");
}

void board_snapshot_json(const struct board_snapshot *s, FILE *out)
{
    char model[BOARD_MODEL_BYTES];
    snprintf(model, sizeof(model), "%s", s->model);
    for (char *c = model; *c; c++)
        if (*c == '"' || *c == '\\')
            *c = '?';              /* printable already; keep the JSON whole */
    fprintf(out, "{\"pid\":%d,\"model\":\"%s\",\"closing\":%s,\"counters\":{",
            s->pid, model, s->closing ? "true" : "false");
    for (int c = 0; c < CTR_COUNT; c++)
        fprintf(out, "%s\"%s\":%llu", c ? "," : "", board_counter_name(c),
                (unsigned long long)s->counters[c]);
    fprintf(out, "},\"threads\":{");
    for (int st = 0; st < STATE_TERMINATED; st++)
        fprintf(out, "%s\"%s\":%llu", st ? "," : "", board_state_name(st),
                (unsigned long long)s->threads_by_state[st]);
    fprintf(out, "}");
    json_loops(s, out);
    fprintf(out, ",\"handle_p50_us\":%.1f,\"handle_p99_us\":%.1f,\"handle_max_us\":%.1f}\n",
            hist_counts_percentile(s->hist, 0, 50) / 1e3,
            hist_counts_percentile(s->hist, 0, 99) / 1e3, s->hist_max / 1e3);
}
