/* board.c -- the writer's side of the live state board. See board.h. */
#include "board.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BOARD_SAME_PROCESS_MAX 64   /* boards one process may hold at once */

struct board {
    char path[256];
    void *map;                     /* the whole file, shared */
    size_t map_bytes;
    struct board_header *header;
    _Atomic uint64_t *counters;
    struct hist *hist;
    struct board_thread *threads;
    struct board_loop *loops;
    struct board_queue *queues;
    struct board_event *events;
    atomic_uint thread_hint;       /* where the next slot search starts */
};

uint64_t board_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);   /* vDSO: no syscall */
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Names and texts are stored as atomic words so that a reader in the same
 * process (the tests) never races with a writer reusing the slot. */
static void put_text(_Atomic uint64_t *words, size_t bytes, const char *s)
{
    char buf[BOARD_TEXT_BYTES] = { 0 };
    strncpy(buf, s, bytes - 1);
    for (size_t i = 0; i < bytes / 8; i++) {
        uint64_t w;
        memcpy(&w, buf + i * 8, 8);
        atomic_store_explicit(&words[i], w, memory_order_relaxed);
    }
}

/* ---- where boards live -------------------------------------------------- */

int board_dir(char *out, size_t out_len)
{
    const char *forced = getenv("THREADLAB_BOARD_DIR");
    const char *runtime = getenv("XDG_RUNTIME_DIR");
    if (forced && *forced)
        snprintf(out, out_len, "%s", forced);
    else if (runtime && *runtime)
        snprintf(out, out_len, "%s/threadlab", runtime);
    else
        snprintf(out, out_len, "/tmp/threadlab-%u", (unsigned)getuid());

    if (mkdir(out, 0700) < 0 && errno != EEXIST)
        return -errno;
    /* In a shared /tmp, someone else may have made this name first: use it
     * only if it is a real directory, ours, and private. */
    struct stat st;
    if (lstat(out, &st) < 0)
        return -errno;
    if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077))
        return -EPERM;
    return 0;
}

/* ---- creating ----------------------------------------------------------- */

static size_t align8(size_t n) { return (n + 7) & ~(size_t)7; }

static void lay_out(struct board_header *h)
{
    size_t off = align8(sizeof(*h));
    h->counters_off = off;
    off += align8(sizeof(_Atomic uint64_t) * CTR_COUNT);
    h->hist_off = off;
    off += align8(sizeof(struct hist));
    h->threads_off = off;
    off += sizeof(struct board_thread) * BOARD_THREAD_SLOTS;
    h->loops_off = off;
    off += sizeof(struct board_loop) * BOARD_LOOP_SLOTS;
    h->queues_off = off;
    off += sizeof(struct board_queue) * BOARD_QUEUE_SLOTS;
    h->events_off = off;
    off += sizeof(struct board_event) * BOARD_EVENT_SLOTS;
    h->total_bytes = off;
}

static int open_exclusive(struct board *b)
{
    char dir[200];
    int rc = board_dir(dir, sizeof(dir));
    if (rc < 0)
        return rc;
    for (int n = 0; n < BOARD_SAME_PROCESS_MAX; n++) {
        if (n == 0)
            snprintf(b->path, sizeof(b->path), "%s/%d.board", dir, (int)getpid());
        else
            snprintf(b->path, sizeof(b->path), "%s/%d.%d.board", dir,
                     (int)getpid(), n);
        /* O_EXCL|O_NOFOLLOW: never follow a planted link, never reuse a file
         * we did not just create. */
        int fd = open(b->path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                      0600);
        if (fd >= 0 || errno != EEXIST)
            return fd >= 0 ? fd : -errno;
        /* Something is there. Our own board of a dead process with the same
         * pid, or this process's first board: take the next name. A
         * symlink, a hard link or a file not ours was planted: refuse, and
         * leave it (and whatever it points to) alone. */
        struct stat st;
        if (lstat(b->path, &st) == 0 &&
            (!S_ISREG(st.st_mode) || st.st_nlink != 1 || st.st_uid != getuid())) {
            fprintf(stderr, "threadlab: %s is a %s we did not make; not publishing "
                    "a board\n", b->path, S_ISLNK(st.st_mode) ? "symlink"
                    : st.st_nlink != 1 ? "hard link" : "file");
            return -ELOOP;
        }
    }
    return -EEXIST;
}

struct board *board_create(const char *model, const char *options)
{
    struct board *b = calloc(1, sizeof(*b));
    struct board_header layout = { 0 };
    int fd, err;

    if (!b)
        return NULL;
    lay_out(&layout);
    fd = open_exclusive(b);
    if (fd < 0) {
        err = -fd;
        goto out_free;
    }
    if (ftruncate(fd, (off_t)layout.total_bytes) < 0)
        goto out_unlink;
    b->map_bytes = layout.total_bytes;
    b->map = mmap(NULL, b->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (b->map == MAP_FAILED)
        goto out_unlink;
    close(fd);

    char *base = b->map;
    struct board_header *h = b->header = (struct board_header *)base;
    h->version = BOARD_VERSION;
    h->header_bytes = sizeof(*h);
    h->total_bytes = layout.total_bytes;
    h->thread_slots = BOARD_THREAD_SLOTS;
    h->loop_slots = BOARD_LOOP_SLOTS;
    h->queue_slots = BOARD_QUEUE_SLOTS;
    h->event_slots = BOARD_EVENT_SLOTS;
    h->counters_off = layout.counters_off;
    h->hist_off = layout.hist_off;
    h->threads_off = layout.threads_off;
    h->loops_off = layout.loops_off;
    h->queues_off = layout.queues_off;
    h->events_off = layout.events_off;
    h->pid = (int32_t)getpid();
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    h->start_unix_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
    h->start_mono_ns = board_now_ns();
    snprintf(h->model, sizeof(h->model), "%s", model);
    snprintf(h->options, sizeof(h->options), "%s", options ? options : "");
    b->counters = (_Atomic uint64_t *)(base + h->counters_off);
    b->hist = (struct hist *)(base + h->hist_off);
    b->threads = (struct board_thread *)(base + h->threads_off);
    b->loops = (struct board_loop *)(base + h->loops_off);
    b->queues = (struct board_queue *)(base + h->queues_off);
    b->events = (struct board_event *)(base + h->events_off);
    /* The file is zero-filled, which is every field's starting value. The
     * magic goes last: a reader that sees it sees a complete header. */
    atomic_store_explicit(&h->magic, BOARD_MAGIC, memory_order_release);
    return b;

out_unlink:
    err = errno;
    close(fd);
    unlink(b->path);
out_free:
    free(b);
    errno = err;
    return NULL;
}

void board_close(struct board *b)
{
    if (!b)
        return;
    unlink(b->path);
    munmap(b->map, b->map_bytes);
    free(b);
}

const char *board_path(const struct board *b)
{
    return b ? b->path : "";
}

void board_conn_ended(struct board *b, uint64_t conn, enum echo_end end,
                      bool stopping, uint64_t lines)
{
    if (!b)
        return;
    if (end == ECHO_END_RESET)
        board_add(b, CTR_ERR_RESET, 1);
    else if (end == ECHO_END_IDLE)
        board_add(b, CTR_CLOSED_IDLE, 1);
    else if (end == ECHO_END_LINE_TIMEOUT)
        board_add(b, CTR_CLOSED_SLOW_LINE, 1);
    else if (end == ECHO_END_STALLED)
        board_add(b, CTR_CLOSED_STALLED, 1);
    board_sub(b, CTR_ACTIVE, 1);
    board_add(b, CTR_CLOSED, 1);
    board_event(b, EV_CLOSE, "conn %llu: %s, after %llu lines",
                (unsigned long long)conn, echo_end_reason(end, stopping),
                (unsigned long long)lines);
}

void board_mark_closing(struct board *b)
{
    if (b)
        atomic_store(&b->header->closing, 1);
}

/* ---- counters and latency ------------------------------------------------ */

void board_add(struct board *b, enum board_counter c, uint64_t n)
{
    if (b)
        atomic_fetch_add_explicit(&b->counters[c], n, memory_order_relaxed);
}

void board_sub(struct board *b, enum board_counter c, uint64_t n)
{
    if (b)
        atomic_fetch_sub_explicit(&b->counters[c], n, memory_order_relaxed);
}

uint64_t board_counter(const struct board *b, enum board_counter c)
{
    return b ? atomic_load_explicit(&b->counters[c], memory_order_relaxed) : 0;
}

void board_record_latency(struct board *b, uint64_t ns)
{
    if (b)
        hist_record(b->hist, ns);
}

/* ---- threads ------------------------------------------------------------- */

/* Claim a free slot, or one whose thread has ended. -1 when all are live. */
static int claim_thread_slot(struct board *b)
{
    unsigned start = atomic_fetch_add_explicit(&b->thread_hint, 1,
                                               memory_order_relaxed);
    for (unsigned i = 0; i < BOARD_THREAD_SLOTS; i++) {
        unsigned slot = (start + i) % BOARD_THREAD_SLOTS;
        struct board_thread *t = &b->threads[slot];
        uint32_t expect = 0;
        if (atomic_compare_exchange_strong(&t->in_use, &expect, 2))
            return (int)slot;
        expect = 1;
        if (atomic_load_explicit(&t->state, memory_order_relaxed) == STATE_TERMINATED &&
            atomic_compare_exchange_strong(&t->in_use, &expect, 2))
            return (int)slot;
    }
    return -1;
}

void board_thread_begin(struct board *b, struct board_thread_ref *t,
                        enum board_role role, const char *name, uint64_t conn)
{
    t->slot = -1;
    t->state = STATE_IDLE;
    t->since_ns = board_now_ns();
    if (!b)
        return;
    t->slot = claim_thread_slot(b);
    if (t->slot < 0) {
        atomic_fetch_add(&b->header->unslotted_by_state[STATE_IDLE], 1);
        atomic_fetch_add(&b->header->threads_unslotted, 1);
        return;
    }
    struct board_thread *s = &b->threads[t->slot];
    atomic_store_explicit(&s->role, role, memory_order_relaxed);
    atomic_store_explicit(&s->state, STATE_IDLE, memory_order_relaxed);
    put_text(s->name, BOARD_NAME_BYTES, name);
    atomic_store_explicit(&s->since_ns, t->since_ns, memory_order_relaxed);
    atomic_store_explicit(&s->conn, conn, memory_order_relaxed);
    atomic_store_explicit(&s->lines, 0, memory_order_relaxed);
    atomic_store_explicit(&s->busy_ns, 0, memory_order_relaxed);
    atomic_store_explicit(&s->idle_ns, 0, memory_order_relaxed);
    atomic_store_explicit(&s->in_use, 1, memory_order_release);
}

void board_thread_state(struct board *b, struct board_thread_ref *t,
                        enum board_state state)
{
    if (b && t->state != state)
        board_thread_state_at(b, t, state, board_now_ns());
}

void board_thread_state_at(struct board *b, struct board_thread_ref *t,
                           enum board_state state, uint64_t now_ns)
{
    if (!b || t->state == state)
        return;
    if (t->slot >= 0) {
        /* Only this thread writes its slot: load + store, no locked add. */
        struct board_thread *s = &b->threads[t->slot];
        _Atomic uint64_t *acc = t->state == STATE_RUNNING ? &s->busy_ns
                                                          : &s->idle_ns;
        atomic_store_explicit(acc, atomic_load_explicit(acc, memory_order_relaxed)
                              + (now_ns - t->since_ns), memory_order_relaxed);
        atomic_store_explicit(&s->state, state, memory_order_relaxed);
        atomic_store_explicit(&s->since_ns, now_ns, memory_order_relaxed);
    } else {
        atomic_fetch_sub_explicit(&b->header->unslotted_by_state[t->state], 1,
                                  memory_order_relaxed);
        atomic_fetch_add_explicit(&b->header->unslotted_by_state[state], 1,
                                  memory_order_relaxed);
    }
    t->state = state;
    t->since_ns = now_ns;
}

void board_thread_lines(struct board *b, struct board_thread_ref *t, uint64_t n)
{
    if (!b || t->slot < 0)
        return;
    struct board_thread *s = &b->threads[t->slot];
    atomic_store_explicit(&s->lines,
                          atomic_load_explicit(&s->lines, memory_order_relaxed) + n,
                          memory_order_relaxed);
}

void board_thread_conn(struct board *b, struct board_thread_ref *t, uint64_t conn)
{
    if (b && t->slot >= 0)
        atomic_store_explicit(&b->threads[t->slot].conn, conn, memory_order_relaxed);
}

void board_thread_end(struct board *b, struct board_thread_ref *t)
{
    if (!b)
        return;
    if (t->slot < 0) {
        atomic_fetch_sub(&b->header->unslotted_by_state[t->state], 1);
        atomic_fetch_sub(&b->header->threads_unslotted, 1);
        return;
    }
    /* The slot stays, showing "terminated", until a new thread reuses it. */
    board_thread_state(b, t, STATE_TERMINATED);
}

/* ---- loops and queues ---------------------------------------------------- */

struct board_loop *board_loop_claim(struct board *b, const char *name)
{
    for (int i = 0; b && i < BOARD_LOOP_SLOTS; i++) {
        uint32_t expect = 0;
        if (atomic_compare_exchange_strong(&b->loops[i].in_use, &expect, 2)) {
            put_text(b->loops[i].name, BOARD_NAME_BYTES, name);
            atomic_store_explicit(&b->loops[i].in_use, 1, memory_order_release);
            return &b->loops[i];
        }
    }
    return NULL;
}

struct board_queue *board_queue_claim(struct board *b, const char *name,
                                      uint64_t capacity)
{
    for (int i = 0; b && i < BOARD_QUEUE_SLOTS; i++) {
        uint32_t expect = 0;
        if (atomic_compare_exchange_strong(&b->queues[i].in_use, &expect, 2)) {
            put_text(b->queues[i].name, BOARD_NAME_BYTES, name);
            atomic_store(&b->queues[i].capacity, capacity);
            atomic_store_explicit(&b->queues[i].in_use, 1, memory_order_release);
            return &b->queues[i];
        }
    }
    return NULL;
}

/* ---- events -------------------------------------------------------------- */

void board_event(struct board *b, enum board_event_kind kind, const char *fmt, ...)
{
    char text[BOARD_TEXT_BYTES];
    va_list ap;

    if (!b)
        return;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);

    /* Take a ticket. The slot is ours once the writer of the ticket one
     * lap earlier has finished with it (two writers a lap apart must not
     * mix their texts); events are rare, so this wait almost never spins.
     * seq is 0 while we write and index + 1 after, so a reader can tell a
     * finished event from one being written. */
    uint64_t index = atomic_fetch_add(&b->header->event_head, 1);
    struct board_event *e = &b->events[index % BOARD_EVENT_SLOTS];
    uint64_t lap_before = index >= BOARD_EVENT_SLOTS ? index - BOARD_EVENT_SLOTS + 1 : 0;
    while (atomic_load_explicit(&e->seq, memory_order_acquire) != lap_before)
        ;
    atomic_store_explicit(&e->seq, 0, memory_order_relaxed);
    atomic_store_explicit(&e->time_ns, board_now_ns(), memory_order_relaxed);
    atomic_store_explicit(&e->kind, kind, memory_order_relaxed);
    put_text(e->text, BOARD_TEXT_BYTES, text);
    atomic_store_explicit(&e->seq, index + 1, memory_order_release);
}
