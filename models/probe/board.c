/* board.c -- the writer's side of the live state board. See board.h. */
#include "board.h"
#include "net/clock.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BOARD_SAME_PROCESS_MAX 64   /* boards one process may hold at once */

/* Who holds a thread slot. Private to the writer: the shared slot's in_use
 * and state are only stored, never read back. */
enum slot_use { SLOT_FREE, SLOT_LIVE, SLOT_ENDED };

struct board {
    char path[256];                /* the link readers find */
    char target[64];               /* what it points to: /proc/PID/fd/N */
    int fd;                        /* the sealed memfd, open for the board's
                                      life so that readers can reach it */
    void *map;                     /* the whole board, shared */
    size_t map_bytes;
    struct board_header *header;   /* section pointers, from the private */
    _Atomic uint64_t *counters;    /* layout, never from the mapped offsets */
    struct hist *hist;
    struct board_thread *threads;
    struct board_loop *loops;
    struct board_queue *queues;
    struct board_event *events;

    /* The writer's control state, in private memory (see board.h). */
    atomic_uint thread_hint;       /* where the next slot search starts */
    _Atomic uint8_t thread_use[BOARD_THREAD_SLOTS]; /* enum slot_use */
    atomic_bool loop_taken[BOARD_LOOP_SLOTS];
    atomic_bool queue_taken[BOARD_QUEUE_SLOTS];
    _Atomic uint64_t event_tickets;                 /* events begun */
    _Atomic uint64_t event_done[BOARD_EVENT_SLOTS]; /* per ring slot: the
                                      last ticket finished there, + 1 */
    uint64_t start_mono_ns;        /* what the header says, kept here */
};

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

/* The board's memory: a memfd (anonymous shared memory with no name in any
 * folder), 0600, its size fixed by seals. F_SEAL_SHRINK is what matters:
 * with a plain file, `truncate -s 0` by anyone who can open it makes the
 * server's next store into the mapping die with SIGBUS; a sealed memfd
 * refuses the truncate (EPERM). F_SEAL_GROW keeps the size readers see
 * equal to the header's; F_SEAL_SEAL forbids lifting the seals. Writes
 * stay possible, for us and for anyone who opens /proc/PID/fd/N: that is
 * why the writer reads nothing back. */
static int create_sealed_memfd(size_t bytes)
{
    int fd = memfd_create(BOARD_MEMFD_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return -errno;
    if (fchmod(fd, 0600) < 0 || ftruncate(fd, (off_t)bytes) < 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
        int rc = -errno;
        close(fd);
        return rc;
    }
    return fd;
}

/* Make the board findable: <dir>/<pid>.board, a symlink to
 * /proc/<pid>/fd/<fd>. symlink() never follows or opens what is already
 * there, so a planted file or link at our name cannot make us write
 * anywhere; we just take the next name. */
static int publish_link(struct board *b)
{
    char dir[200];
    int rc = board_dir(dir, sizeof(dir));
    if (rc < 0)
        return rc;
    snprintf(b->target, sizeof(b->target), "/proc/%d/fd/%d", (int)getpid(), b->fd);
    for (int n = 0; n < BOARD_SAME_PROCESS_MAX; n++) {
        if (n == 0)
            snprintf(b->path, sizeof(b->path), "%s/%d.board", dir, (int)getpid());
        else
            snprintf(b->path, sizeof(b->path), "%s/%d.%d.board", dir,
                     (int)getpid(), n);
        if (symlink(b->target, b->path) == 0)
            return 0;
        if (errno != EEXIST)
            return -errno;
    }
    return -EEXIST;
}

/* Fill in the header in the mapping from the private layout. */
static void write_header(struct board_header *h, const struct board_header *layout,
                         const char *model, const char *options)
{
    h->version = BOARD_VERSION;
    h->header_bytes = sizeof(*h);
    h->total_bytes = layout->total_bytes;
    h->thread_slots = BOARD_THREAD_SLOTS;
    h->loop_slots = BOARD_LOOP_SLOTS;
    h->queue_slots = BOARD_QUEUE_SLOTS;
    h->event_slots = BOARD_EVENT_SLOTS;
    h->counters_off = layout->counters_off;
    h->hist_off = layout->hist_off;
    h->threads_off = layout->threads_off;
    h->loops_off = layout->loops_off;
    h->queues_off = layout->queues_off;
    h->events_off = layout->events_off;
    h->pid = (int32_t)getpid();
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    h->start_unix_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
    h->start_mono_ns = now_ns();
    snprintf(h->model, sizeof(h->model), "%s", model);
    snprintf(h->options, sizeof(h->options), "%s", options ? options : "");
}

struct board *board_create(const char *model, const char *options)
{
    struct board *b = calloc(1, sizeof(*b));
    struct board_header layout = { 0 };
    int rc;

    if (!b)
        return NULL;
    lay_out(&layout);
    b->fd = create_sealed_memfd(layout.total_bytes);
    if (b->fd < 0) {
        rc = b->fd;
        goto out_free;
    }
    b->map_bytes = layout.total_bytes;
    b->map = mmap(NULL, b->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd, 0);
    if (b->map == MAP_FAILED) {
        rc = -errno;
        goto out_close_fd;
    }
    /* Section pointers come from the private layout: no one else can see
     * the memfd yet, but nothing is ever taken back from the mapping. */
    char *base = b->map;
    b->header = (struct board_header *)base;
    b->counters = (_Atomic uint64_t *)(base + layout.counters_off);
    b->hist = (struct hist *)(base + layout.hist_off);
    b->threads = (struct board_thread *)(base + layout.threads_off);
    b->loops = (struct board_loop *)(base + layout.loops_off);
    b->queues = (struct board_queue *)(base + layout.queues_off);
    b->events = (struct board_event *)(base + layout.events_off);
    write_header(b->header, &layout, model, options);
    b->start_mono_ns = b->header->start_mono_ns;   /* ours: just written */
    /* The memfd is zero-filled, which is every field's starting value. The
     * magic goes last, and the link after it: a reader that finds the
     * board sees a complete header. */
    atomic_store_explicit(&b->header->magic, BOARD_MAGIC, memory_order_release);
    rc = publish_link(b);
    if (rc < 0)
        goto out_unmap;
    return b;

out_unmap:
    munmap(b->map, b->map_bytes);
out_close_fd:
    close(b->fd);
out_free:
    free(b);
    errno = -rc;
    return NULL;
}

/* Is the entry at b->path still the link we made? Someone may have removed
 * it and put something else there; that is not ours to delete. */
static bool link_is_ours(const struct board *b)
{
    char now[sizeof(b->target)];
    ssize_t n = readlink(b->path, now, sizeof(now) - 1);
    if (n < 0)
        return false;
    now[n] = '\0';
    return strcmp(now, b->target) == 0;
}

void board_close(struct board *b)
{
    if (!b)
        return;
    /* The link first, so that no reader finds it pointing at a closed fd
     * (or at whatever file takes that fd number next). */
    if (link_is_ours(b))
        unlink(b->path);
    munmap(b->map, b->map_bytes);
    close(b->fd);
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

void board_record_latency_n(struct board *b, uint64_t ns, uint64_t n)
{
    if (b)
        hist_record_n(b->hist, ns, n);
}

/* ---- threads ------------------------------------------------------------- */

/* Claim a free slot, or one whose thread has ended. -1 when all are live.
 * The choice is made on the private thread_use, never on the mapping. */
static int claim_thread_slot(struct board *b)
{
    unsigned start = atomic_fetch_add_explicit(&b->thread_hint, 1,
                                               memory_order_relaxed);
    for (unsigned i = 0; i < BOARD_THREAD_SLOTS; i++) {
        unsigned slot = (start + i) % BOARD_THREAD_SLOTS;
        uint8_t expect = SLOT_FREE;
        if (atomic_compare_exchange_strong(&b->thread_use[slot], &expect, SLOT_LIVE))
            return (int)slot;
        expect = SLOT_ENDED;
        if (atomic_compare_exchange_strong(&b->thread_use[slot], &expect, SLOT_LIVE))
            return (int)slot;
    }
    return -1;
}

void board_thread_begin(struct board *b, struct board_thread_ref *t,
                        enum board_role role, const char *name, uint64_t conn)
{
    board_thread_begin_at(b, t, role, name, conn, now_ns());
}

void board_thread_begin_at(struct board *b, struct board_thread_ref *t,
                           enum board_role role, const char *name, uint64_t conn,
                           uint64_t at_ns)
{
    *t = (struct board_thread_ref){ .slot = -1, .state = STATE_IDLE,
                                    .since_ns = at_ns };
    if (!b)
        return;
    t->slot = claim_thread_slot(b);
    if (t->slot < 0) {
        atomic_fetch_add(&b->header->unslotted_by_state[STATE_IDLE], 1);
        atomic_fetch_add(&b->header->threads_unslotted, 1);
        return;
    }
    /* in_use 2 while the fields are filled: readers skip the slot. */
    struct board_thread *s = &b->threads[t->slot];
    atomic_store_explicit(&s->in_use, 2, memory_order_relaxed);
    atomic_store_explicit(&s->role, role, memory_order_relaxed);
    atomic_store_explicit(&s->state, STATE_IDLE, memory_order_relaxed);
    put_text(s->name, BOARD_NAME_BYTES, name);
    atomic_store_explicit(&s->since_ns, t->since_ns, memory_order_relaxed);
    atomic_store_explicit(&s->conn, conn, memory_order_relaxed);
    atomic_store_explicit(&s->lines, 0, memory_order_relaxed);
    atomic_store_explicit(&s->busy_ns, 0, memory_order_relaxed);
    atomic_store_explicit(&s->idle_ns, 0, memory_order_relaxed);
    atomic_store_explicit(&s->bytes_in, 0, memory_order_relaxed);
    atomic_store_explicit(&s->bytes_out, 0, memory_order_relaxed);
    /* The kernel's id, not pthread_self: it names /proc/PID/task/TID. */
    atomic_store_explicit(&s->tid, (uint32_t)gettid(), memory_order_relaxed);
    atomic_store_explicit(&s->in_use, 1, memory_order_release);
}

void board_thread_state(struct board *b, struct board_thread_ref *t,
                        enum board_state state)
{
    if (b && t->state != state)
        board_thread_state_at(b, t, state, now_ns());
}

void board_thread_state_at(struct board *b, struct board_thread_ref *t,
                           enum board_state state, uint64_t at_ns)
{
    if (!b || t->state == state)
        return;
    if (t->slot >= 0) {
        /* Only this thread writes its slot, and the totals live in its ref:
         * plain stores, no locked add, nothing read back. */
        struct board_thread *s = &b->threads[t->slot];
        if (t->state == STATE_RUNNING) {
            t->busy_ns += at_ns - t->since_ns;
            atomic_store_explicit(&s->busy_ns, t->busy_ns, memory_order_relaxed);
        } else {
            t->idle_ns += at_ns - t->since_ns;
            atomic_store_explicit(&s->idle_ns, t->idle_ns, memory_order_relaxed);
        }
        atomic_store_explicit(&s->state, state, memory_order_relaxed);
        atomic_store_explicit(&s->since_ns, at_ns, memory_order_relaxed);
    } else {
        atomic_fetch_sub_explicit(&b->header->unslotted_by_state[t->state], 1,
                                  memory_order_relaxed);
        atomic_fetch_add_explicit(&b->header->unslotted_by_state[state], 1,
                                  memory_order_relaxed);
    }
    t->state = state;
    t->since_ns = at_ns;
}

void board_thread_lines(struct board *b, struct board_thread_ref *t, uint64_t n)
{
    if (!b || t->slot < 0)
        return;
    t->lines += n;
    atomic_store_explicit(&b->threads[t->slot].lines, t->lines, memory_order_relaxed);
}

void board_thread_bytes(struct board *b, struct board_thread_ref *t,
                        uint64_t bytes_in, uint64_t bytes_out)
{
    if (!b || t->slot < 0)
        return;
    struct board_thread *s = &b->threads[t->slot];
    t->bytes_in += bytes_in;
    t->bytes_out += bytes_out;
    atomic_store_explicit(&s->bytes_in, t->bytes_in, memory_order_relaxed);
    atomic_store_explicit(&s->bytes_out, t->bytes_out, memory_order_relaxed);
}

void board_thread_tid(struct board *b, struct board_thread_ref *t, uint32_t tid)
{
    if (b && t->slot >= 0)
        atomic_store_explicit(&b->threads[t->slot].tid, tid, memory_order_relaxed);
}

void board_thread_conn(struct board *b, struct board_thread_ref *t, uint64_t conn)
{
    if (b && t->slot >= 0)
        atomic_store_explicit(&b->threads[t->slot].conn, conn, memory_order_relaxed);
}

void board_thread_end(struct board *b, struct board_thread_ref *t)
{
    board_thread_end_at(b, t, now_ns());
}

void board_thread_end_at(struct board *b, struct board_thread_ref *t, uint64_t at_ns)
{
    if (!b)
        return;
    if (t->slot < 0) {
        atomic_fetch_sub(&b->header->unslotted_by_state[t->state], 1);
        atomic_fetch_sub(&b->header->threads_unslotted, 1);
        return;
    }
    /* The slot stays, showing "terminated", until a new thread reuses it;
     * the release orders our last stores before a reuser's. */
    board_thread_state_at(b, t, STATE_TERMINATED, at_ns);
    atomic_store_explicit(&b->thread_use[t->slot], SLOT_ENDED, memory_order_release);
}

/* ---- loops and queues ---------------------------------------------------- */

/* Take the first untaken slot of a section, by its private flags. */
static int claim_slot(atomic_bool *taken, int count)
{
    for (int i = 0; i < count; i++) {
        bool expect = false;
        if (atomic_compare_exchange_strong(&taken[i], &expect, true))
            return i;
    }
    return -1;
}

struct board_loop *board_loop_claim(struct board *b, const char *name)
{
    int i = b ? claim_slot(b->loop_taken, BOARD_LOOP_SLOTS) : -1;
    if (i < 0)
        return NULL;
    /* Every field starts over: a reused slot (or a scribbled one) must not
     * show what was there before. */
    struct board_loop *l = &b->loops[i];
    atomic_store_explicit(&l->in_use, 2, memory_order_relaxed);
    put_text(l->name, BOARD_NAME_BYTES, name);
    atomic_store_explicit(&l->phase, 0, memory_order_relaxed);
    _Atomic uint64_t *fields[] = { &l->channels, &l->task_queue_depth, &l->timers,
                                   &l->io_ns, &l->task_ns, &l->iterations,
                                   &l->longest_task_ns, &l->blocked_since_ns,
                                   &l->out_pending_bytes, &l->channels_paused,
                                   &l->task_idle_ns,
                                   &l->tasks_starving_io };
    for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++)
        atomic_store_explicit(fields[f], 0, memory_order_relaxed);
    atomic_store_explicit(&l->in_use, 1, memory_order_release);
    return l;
}

void board_loop_release(struct board *b, struct board_loop *slot)
{
    if (!b || !slot)
        return;
    ptrdiff_t i = slot - b->loops;
    assert(i >= 0 && i < BOARD_LOOP_SLOTS);
    atomic_store(&slot->in_use, 0);
    atomic_store(&b->loop_taken[i], false);
}

struct board_queue *board_queue_claim(struct board *b, const char *name,
                                      uint64_t capacity)
{
    int i = b ? claim_slot(b->queue_taken, BOARD_QUEUE_SLOTS) : -1;
    if (i < 0)
        return NULL;
    struct board_queue *q = &b->queues[i];
    atomic_store_explicit(&q->in_use, 2, memory_order_relaxed);
    put_text(q->name, BOARD_NAME_BYTES, name);
    atomic_store_explicit(&q->depth, 0, memory_order_relaxed);
    atomic_store_explicit(&q->high_water, 0, memory_order_relaxed);
    atomic_store_explicit(&q->rejected, 0, memory_order_relaxed);
    atomic_store_explicit(&q->capacity, capacity, memory_order_relaxed);
    atomic_store_explicit(&q->in_use, 1, memory_order_release);
    return q;
}

/* ---- events -------------------------------------------------------------- */

static void put_event(struct board *b, enum board_event_kind kind, uint64_t at_ns,
                      const char *text);

__attribute__((format(printf, 4, 0)))
static void event_v(struct board *b, enum board_event_kind kind, uint64_t at_ns,
                    const char *fmt, va_list ap)
{
    char text[BOARD_TEXT_BYTES];
    vsnprintf(text, sizeof(text), fmt, ap);
    put_event(b, kind, at_ns, text);
}

void board_event(struct board *b, enum board_event_kind kind, const char *fmt, ...)
{
    va_list ap;
    if (!b)
        return;
    va_start(ap, fmt);
    event_v(b, kind, now_ns(), fmt, ap);
    va_end(ap);
}

void board_event_at(struct board *b, enum board_event_kind kind, uint64_t at_ns,
                    const char *fmt, ...)
{
    va_list ap;
    if (!b)
        return;
    va_start(ap, fmt);
    event_v(b, kind, at_ns, fmt, ap);
    va_end(ap);
}

uint64_t board_sim_clock(struct board *b, uint64_t run_ns)
{
    if (!b)
        return run_ns;
    atomic_store_explicit(&b->header->sim_now_ns, run_ns, memory_order_relaxed);
    atomic_store_explicit(&b->header->simulated, 1, memory_order_relaxed);
    return b->start_mono_ns + run_ns;
}

static void put_event(struct board *b, enum board_event_kind kind, uint64_t at_ns,
                      const char *text)
{

    /* Take a ticket. The slot is ours once the writer of the ticket one
     * lap earlier has finished with it (two writers a lap apart must not
     * mix their texts). Both the ticket counter and the "finished" marks
     * are private: a wait on the shared slot's seq would spin forever once
     * someone scribbled on it. The writer a lap earlier is a few stores
     * from done, so this wait ends as soon as it is scheduled again; events
     * are rare, so it almost never waits at all. */
    uint64_t ticket = atomic_fetch_add(&b->event_tickets, 1);
    unsigned slot = (unsigned)(ticket % BOARD_EVENT_SLOTS);
    uint64_t lap_before = ticket >= BOARD_EVENT_SLOTS ? ticket - BOARD_EVENT_SLOTS + 1 : 0;
    while (atomic_load_explicit(&b->event_done[slot], memory_order_acquire) != lap_before)
        sched_yield();

    /* seq is 0 while we write and ticket + 1 after, so a reader can tell a
     * finished event from one being written. */
    struct board_event *e = &b->events[slot];
    atomic_store_explicit(&e->seq, 0, memory_order_relaxed);
    atomic_store_explicit(&e->time_ns, at_ns, memory_order_relaxed);
    atomic_store_explicit(&e->kind, kind, memory_order_relaxed);
    put_text(e->text, BOARD_TEXT_BYTES, text);
    atomic_store_explicit(&e->seq, ticket + 1, memory_order_release);
    atomic_store_explicit(&b->event_done[slot], ticket + 1, memory_order_release);
}
