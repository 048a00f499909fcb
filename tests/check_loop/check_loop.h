/* check_loop.h -- what the files of check_loop share: the event loop on
 * its own, the libuv way (run it, then assert on what the callbacks
 * counted). Each file holds one subject and adds its tests to the cases
 * main.c creates. */
#ifndef CHECK_LOOP_H
#define CHECK_LOOP_H

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "echo/session.h"
#include "loop/checker.h"
#include "loop/group.h"
#include "loop/loop.h"
#include "loop/inside_loop.h"
#include "loop/promise.h"
#include "loop/timer_heap.h"
#include "model_suite.h"
#include "testnet.h"

/* A started loop with this ioRatio (asserts it started). */
struct loop *start_loop(int io_ratio);
void stop_loop(struct loop *l);

/* Await cond (polled; at most 20 s, a hang guard that only a wrong loop
 * reaches): what a loop does "soon" may take a while on a loaded machine,
 * so tests await the state instead of sleeping a guess. */
#define WAIT_UNTIL(cond) \
    do { \
        uint64_t until_ms_ = now_ms() + 20000; \
        while (!(cond) && now_ms() < until_ms_) \
            usleep(1000); \
    } while (0)

/* Wait (up to 10 s) for a counter the loop's callbacks bump to reach want;
 * its value then. A loaded machine may run the loop late, never wrongly:
 * the tests wait for what the loop does, not for a fixed time. */
int wait_count(atomic_int *n, int want);

/* Queue a task on l and await it (asserts it ran): every task l had queued
 * before, and whatever they queued ahead of it, has run by then. This is
 * how a test knows "nothing more comes" without sleeping a guess. */
void loop_drain(struct loop *l);

/* The hang guard of one ioRatio measure (io_ratio.c); the running case's
 * timeout is 3x (quiet: well under a second of CPU a ratio; a mutant that
 * spins waits out the timeout, so it is no longer than it must be). */
enum { RATIO_HANG_GUARD_S = 40 };

/* Each subject's tests, added to the cases they belong to. */
void add_pure_tests(TCase *pure, TCase *phase);
void add_task_tests(TCase *running, TCase *races);
void add_timer_tests(TCase *running);
void add_promise_tests(TCase *running);
void add_io_ratio_tests(TCase *running);
void add_checker_tests(TCase *running);
void add_watch_tests(TCase *running);
void add_fault_tests(TCase *running);

#endif
