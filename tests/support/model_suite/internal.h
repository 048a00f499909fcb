/* internal.h -- what the files of the shared echo suite (model_suite.h)
 * share. Every case starts the model on a free loopback port inside Check's
 * forked child, talks to it as a client would, and stops it; each has a
 * timeout. Each file holds one subject and adds its tests to the cases
 * suite.c creates. */
#ifndef THREADLAB_MODEL_SUITE_INTERNAL_H
#define THREADLAB_MODEL_SUITE_INTERNAL_H

#include "model_suite.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "echo/session.h"
#include "load/fleet.h"
#include "load/load.h"
#include "loop/loop.h"
#include "registry.h"
#include "probe/board_read.h"
#include "reactive/channel.h"
#include "probe/histogram.h"
#include "testnet.h"

/* The model the suite runs against, set before the runner forks. */
extern const char *model_under_test;

/* Under the sanitizers freed memory stays resident on purpose (ASan's
 * quarantine) and everything runs 5-15x slower: bounds on RSS and on
 * time are for the plain build. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif

/* The model under test with the test options (fixture.c). */
void start_default(struct test_server *t);
/* ... with all its connections on one loop (one worker). */
void start_one_loop(struct test_server *t);
/* Wait up to 10 s for this process's fds and threads to come back to
 * the counts before; *fds and *threads get the last look. */
void ms_settle(int fds_before, int threads_before, int *fds, int *threads);
/* Whether the model's connections share a loop thread. */
bool is_loop_model(const char *model);
/* Process pid's board, or NULL; its threads in a state, awaited. */
struct board_snapshot *read_board_of(pid_t pid);
void await_threads_in(pid_t pid, enum board_state state, uint64_t at_least,
                      const char *what);
/* Await process pid's board marked closing (the stop has begun). */
void await_closing(pid_t pid);
/* A server with --max-conns 1, full (limits.c); the holder's fd. */
int start_full_server(struct test_server *t);

/* How long one load case may take (load.c); its case's timeout is 2x. */
enum { LOAD_LINE_TIMEOUT_S = 120 };

/* Each subject's tests, added to the cases they belong to. */
void ms_add_load_tests(TCase *load);
void ms_add_protocol_tests(TCase *proto, TCase *blocking);
void ms_add_stop_tests(TCase *stop);
void ms_add_fault_tests(TCase *faults);
void ms_add_limit_tests(TCase *limits);
void ms_add_framing_tests(TCase *proto, TCase *faults);
void ms_add_process_tests(TCase *process);
void ms_add_fairness_tests(TCase *fairness, TCase *stop, bool loop_model);
void ms_add_reset_tests(TCase *resets);
void ms_add_task_tests(TCase *task, bool loop_model);

#endif
