/* rng.c -- xoshiro256** (Blackman and Vigna), seeded by splitmix64. */
#include "rng.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void rng_seed(struct rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t rng_next(struct rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double rng_uniform(struct rng *r)
{
    return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

double rng_exp(struct rng *r, double mean)
{
    return -mean * log1p(-rng_uniform(r));    /* 1 - u is never 0 */
}

uint64_t rng_below(struct rng *r, uint64_t n)
{
    return n ? rng_next(r) % n : 0;
}

/* Box-Muller: a standard normal from two uniforms. */
static double normal(struct rng *r)
{
    double u1 = 1.0 - rng_uniform(r), u2 = rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

double rng_lognormal_factor(struct rng *r, double sigma)
{
    return rng_cost_factor(r, (struct cost_shape){ sigma, 0, 0 });
}

#define Z90 RNG_Z90
#define Z99 RNG_Z99
#define Z999 RNG_Z999
#define Z_MAX 4.5                /* the tail goes on to the 1 in 300 000th call */

double rng_cost_ln(struct cost_shape shape, double z)
{
    double body = shape.sigma * z;
    if (z <= Z90 || (shape.p99 <= 0 && shape.p999 <= 0))
        return body;
    /* The knots, each at least the one before (a tail never bends back). */
    double at90 = shape.sigma * Z90;
    double at99 = shape.p99 > 0 ? fmax(log(shape.p99), at90) : shape.sigma * Z99;
    double at999 = shape.p999 > 0 ? fmax(log(shape.p999), at99)
                                  : at99 + shape.sigma * (Z999 - Z99);
    if (z <= Z99)
        return at90 + (z - Z90) * (at99 - at90) / (Z99 - Z90);
    return at99 + (fmin(z, Z_MAX) - Z99) * (at999 - at99) / (Z999 - Z99);
}

double rng_cost_factor(struct rng *r, struct cost_shape shape)
{
    if (shape.sigma <= 0 && shape.p99 <= 0 && shape.p999 <= 0)
        return 1;
    double z = normal(r);
    /* E[exp(sigma Z)] = exp(sigma^2 / 2): the body's mean is 1. */
    return exp(rng_cost_ln(shape, z) - shape.sigma * shape.sigma / 2);
}

double rng_stall_factor(struct rng *r, struct cost_shape shape)
{
    double f = rng_cost_factor(r, shape);
    double most = shape.p999 * exp(-shape.sigma * shape.sigma / 2); /* the knot, as a factor */
    return shape.p999 > 0 && f > most ? most : f;
}
