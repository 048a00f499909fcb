/* check_des.h -- what the files of check_des share: the simulator,
 * checked against queueing theory, against itself (determinism), and
 * against the lessons it is there to teach. Each file holds one subject
 * and adds its tests to the cases main.c creates. */
#ifndef CHECK_DES_H
#define CHECK_DES_H

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/calibrate.h"
#include "sim/engine.h"
#include "sim/machine.h"
#include "sim/profile.h"
#include "sim/rng.h"
#include "sim/sim.h"

/* Under the sanitizers (10x slower) the same paths run on fewer
 * requests, for memory and race errors; tight bounds are the plain
 * build's. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif
/* How far a simulated mean may be from theory's (theory.c, lessons.c). */
static const double tolerance = SANITIZED ? 0.5 : 0.03;

/* Every run in check_des: it succeeds, and Little's law holds to 1%. L
 * (the area under the count of lines in the system) and W (each line's
 * own time in it) are summed apart, so a line counted in one and not the
 * other, answered twice or never, shows. */
void run_checked(const struct sim_opts *o, struct sim_report *r);
/* The same, for the lessons and the scheduler's cases. */
void run(const struct sim_opts *o, struct sim_report *r);
/* qsort's order of doubles. */
int cmp_double(const void *a, const void *b);
/* The mean wait in queue of one request per connection at Poisson times,
 * exponential service of 100 us, no other costs (theory.c); *p_wait the
 * share that waited. */
double simulated_wait_ns(enum sim_model model, int c, double rho, uint32_t n,
                         double *p_wait);

/* Each subject's tests, added to the cases they belong to. */
void add_engine_tests(TCase *engine);
void add_profile_tests(TCase *engine);
void add_theory_tests(TCase *theory);
void add_scheduler_tests(TCase *sched);
void add_simple_scheduler_tests(TCase *simple);
void add_lesson_tests(TCase *lessons);
void add_property_tests(TCase *props);

#endif
