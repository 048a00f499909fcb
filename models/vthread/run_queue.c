/* run_queue.c -- a carrier's run queue, and what puts a vthread on it or
 * takes it off the carrier for good: the resume (for every reason but an
 * fd, which park.c's carrier__ready handles), the yield, the end. Both the
 * carrier's loop (carrier.c) and the park (park.c) call these; they call
 * neither. See carrier.h. */
#include "carrier.h"

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

/* ---- the run queue --------------------------------------------------------- */

void carrier__runq_push(struct carrier *c, struct vthread *vt)
{
    vt->state = VT_RUNNABLE;
    vt->next = NULL;
    if (c->runq_tail)
        c->runq_tail->next = vt;
    else
        c->runq_head = vt;
    c->runq_tail = vt;
    c->runq_len++;
}

struct vthread *carrier__runq_pop(struct carrier *c)
{
    struct vthread *vt = c->runq_head;
    if (!vt)
        return NULL;
    c->runq_head = vt->next;
    if (!c->runq_head)
        c->runq_tail = NULL;
    c->runq_len--;
    return vt;
}

/* ---- the resume, for all the reasons but an fd ---------------------------------- */

void carrier__resume(struct carrier *c, struct vthread *vt, enum vt_wake why)
{
    if (vt->deadline.index != HEAP_NOT_IN)
        heap_remove(&c->deadlines, &vt->deadline);
    vt->woke = why;
    carrier__runq_push(c, vt);
    probe_runnable(c->rt->opts.board, &vt->on_board);
}

void carrier__drain_wake(struct carrier *c)
{
    uint64_t count;
    ssize_t got = read(c->wake_fd, &count, sizeof(count));
    (void)got;                      /* EAGAIN: another runner drained it */
}

void vt_yield(struct vthread *self)
{
    struct carrier *c = self->carrier;
    self->woke = VT_WAKE_READY;
    carrier__runq_push(c, self);
    probe_runnable(c->rt->opts.board, &self->on_board);
    vt_switch(&self->ctx, &self->runner->sched);
}

/* ---- a vthread's life on the carrier ---------------------------------------- */

void carrier__forget(struct carrier *c, struct vthread *vt)
{
    if (vt->prev_all)
        vt->prev_all->next_all = vt->next_all;
    else
        c->all = vt->next_all;
    if (vt->next_all)
        vt->next_all->prev_all = vt->prev_all;
    c->vthreads--;
    probe_thread_ended(c->rt->opts.board, &vt->on_board);
    vt_context_free(&vt->ctx);
    free(vt);

    struct vt_runtime *rt = c->rt;
    pthread_mutex_lock(&rt->live_lock);
    if (--rt->live == 0)
        pthread_cond_broadcast(&rt->live_changed);
    pthread_mutex_unlock(&rt->live_lock);
}

