/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rng.c - seeding (splitmix64), bounded draws (Lemire 2019, "Fast random integer generation in
 * an interval") and distribution helpers for sl_rng.
 */
#include <math.h>

#include "sl_rng.h"

static uint64_t
splitmix64(uint64_t *x)
{
	uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

void
sl_rng_seed(struct sl_rng *r, uint64_t seed)
{
	for (unsigned i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

uint64_t
sl_rng_below(struct sl_rng *r, uint64_t n)
{
	unsigned __int128 m = (unsigned __int128)sl_rng_next(r) * n;
	uint64_t low = (uint64_t)m;

	if (low < n) {
		uint64_t floor = -n % n;

		while (low < floor) {
			m = (unsigned __int128)sl_rng_next(r) * n;
			low = (uint64_t)m;
		}
	}
	return (uint64_t)(m >> 64);
}

uint64_t
sl_rng_threshold(double p)
{
	if (!(p > 0.0))
		return 0;
	if (p >= 1.0)
		return UINT64_MAX;
	return (uint64_t)ldexp(p, 64);
}

double
sl_rng_exponential(struct sl_rng *r, double mean)
{
	return -mean * log1p(-sl_rng_double(r));
}
