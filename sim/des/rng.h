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

/* Uniform integer in [0, n). */
uint64_t rng_below(struct rng *r, uint64_t n);

#endif
