/* rng.h -- the simulator's random numbers: xoshiro256** seeded through
 * splitmix64. Same seed, same sequence, on every machine: that is what
 * makes a run reproducible to the byte. */
#ifndef THREADLAB_RNG_H
#define THREADLAB_RNG_H

#include <stdint.h>

struct rng {
    uint64_t s[4];
};

void rng_seed(struct rng *r, uint64_t seed);
uint64_t rng_next(struct rng *r);

/* Uniform in [0, 1). */
double rng_uniform(struct rng *r);

/* Exponential with this mean (the gaps of a Poisson process). */
double rng_exp(struct rng *r, double mean);

/* A log-normal factor of mean 1 and shape sigma (the spread of ln x):
 * multiply a mean cost by it to draw one call's cost. sigma 0: exactly 1,
 * and no number is drawn. */
double rng_lognormal_factor(struct rng *r, double sigma);

/* The standard normal's 90th, 99th and 99.9th percentiles: where a
 * cost's shape has its knots (below), and what calibrate divides a
 * measured ratio by to read it as a log-normal's sigma. */
#define RNG_Z90 1.2816
#define RNG_Z99 2.3263
#define RNG_Z999 3.0902

/* A cost's shape: a log-normal of sigma up to its p90, and beyond that
 * the measured tail (a call at its p99 costs p99 times its median, at its
 * p99.9 p999 times; 0: the log-normal's own). ln(cost / median) is
 * piecewise linear in the normal deviate z, through the knots p90, p99
 * and p99.9, and goes on past the last at its slope (up to z = 4.5, the
 * 1 in 300 000th call): a log-normal whose spread grows in the tail. */
struct cost_shape {
    double sigma, p99, p999;
};

/* A factor to multiply a cost's figure by: its body has mean 1 (the
 * figure is the log-normal's mean, as calibrate writes it), and the tail
 * adds the rare long calls on top. Without a tail this is exactly
 * rng_lognormal_factor, draw for draw. */
double rng_cost_factor(struct rng *r, struct cost_shape shape);

/* The same, stopped at the p99.9 knot (when there is one): for a wait
 * that ends, as a host's stall does (a halted vCPU's wakeup, a timer's),
 * where a call's cost goes on growing past its last knot. Draw for draw
 * rng_cost_factor's up to there. */
double rng_stall_factor(struct rng *r, struct cost_shape shape);

/* ln(factor) at the normal deviate z, before the body's mean is taken
 * off: what rng_cost_factor draws, for the tests. */
double rng_cost_ln(struct cost_shape shape, double z);

/* Uniform integer in [0, n). */
uint64_t rng_below(struct rng *r, uint64_t n);

#endif
