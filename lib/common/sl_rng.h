/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_rng.h - a seeded pseudo-random generator that gives the same sequence on every platform.
 *
 * xoshiro256** (Blackman and Vigna, 2018): 256 bits of state, period 2^256 - 1, passes BigCrush,
 * about 1 ns per draw. The seed is expanded with splitmix64 so nearby seeds give unrelated
 * streams. Bounded draws use Lemire's multiply-shift with rejection (no modulo bias);
 * probabilities are pre-scaled to a 64-bit threshold so a Bernoulli trial is one compare.
 * Every experiment, impairment and benchmark in sluice takes its seed from its config.
 */
#ifndef SL_RNG_H
#define SL_RNG_H

#include <stdint.h>

#include "sl_common.h"

struct sl_rng {
	uint64_t s[4];
};

void sl_rng_seed(struct sl_rng *r, uint64_t seed);

static inline uint64_t
sl_rng_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint64_t
sl_rng_next(struct sl_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = sl_rng_rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = sl_rng_rotl(s[3], 45);
	return result;
}

/* Uniform in [0, n); n > 0. */
uint64_t sl_rng_below(struct sl_rng *r, uint64_t n);

/* Uniform double in [0, 1), 53 random bits. */
static inline double
sl_rng_double(struct sl_rng *r)
{
	return (double)(sl_rng_next(r) >> 11) * 0x1.0p-53;
}

/*
 * Probability p in [0, 1] as a threshold: a draw succeeds when sl_rng_next() < threshold.
 * p = 0 never succeeds; p = 1 maps to UINT64_MAX and fails once in 2^64 draws.
 */
uint64_t sl_rng_threshold(double p);

static inline bool
sl_rng_chance(struct sl_rng *r, uint64_t threshold)
{
	return sl_rng_next(r) < threshold;
}

/* Exponential with the given mean (for Poisson arrivals), as a double. */
double sl_rng_exponential(struct sl_rng *r, double mean);

#endif /* SL_RNG_H */
