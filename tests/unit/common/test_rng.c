/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for lib/common/rng.c: the exact xoshiro256** and splitmix64 sequences (so experiments
 * reproduce on every platform), unbiased bounded draws and calibrated probabilities.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "sl_rng.h"

static void
sl_rng_next__matches_reference_vectors(void **state)
{
	/* Outputs of the reference algorithm from state {1, 2, 3, 4}. */
	static const uint64_t expect[] = {
		0x2d00, 0x0, 0x5a007080, 0x10e0000000009d80, 0x10e0b61ce1009d80, 0x870021ce143ad00};
	struct sl_rng r = {.s = {1, 2, 3, 4}};

	(void)state;
	for (unsigned i = 0; i < SL_ARRAY_SIZE(expect); i++)
		assert_int_equal(sl_rng_next(&r), expect[i]);
}

static void
sl_rng_seed__splitmix64_expansion(void **state)
{
	struct sl_rng r;

	(void)state;
	sl_rng_seed(&r, 12345);
	assert_int_equal(r.s[0], 0x22118258a9d111a0);
	assert_int_equal(r.s[3], 0x2d160e7e5c3f42ca);
	assert_int_equal(sl_rng_next(&r), 0xbe6a36374160d49b);
	assert_int_equal(sl_rng_next(&r), 0x214aaa0637a688c6);
}

static void
sl_rng_below__uniform_chi_square(void **state)
{
	enum { N = 10, DRAWS = 1000000 };
	uint64_t hist[N] = {0};
	struct sl_rng r;
	double chi2 = 0, expect = (double)DRAWS / N;

	(void)state;
	sl_rng_seed(&r, 1);
	for (int i = 0; i < DRAWS; i++) {
		uint64_t v = sl_rng_below(&r, N);

		assert_true(v < N);
		hist[v]++;
	}
	for (int i = 0; i < N; i++)
		chi2 += (hist[i] - expect) * (hist[i] - expect) / expect;
	/* 9 degrees of freedom: P(chi2 > 27.88) = 0.001. */
	assert_true(chi2 < 27.88);
}

static void
sl_rng_below__large_bound_in_range(void **state)
{
	struct sl_rng r;
	uint64_t n = (UINT64_C(1) << 63) + 12345;

	(void)state;
	sl_rng_seed(&r, 3);
	for (int i = 0; i < 100000; i++)
		assert_true(sl_rng_below(&r, n) < n);
	assert_int_equal(sl_rng_below(&r, 1), 0);
}

static void
sl_rng_chance__probability_within_confidence(void **state)
{
	static const double ps[] = {1e-4, 1e-3, 1e-2, 0.1, 0.5, 0.9};
	struct sl_rng r;
	const int draws = 1000000;

	(void)state;
	sl_rng_seed(&r, 99);
	for (unsigned k = 0; k < SL_ARRAY_SIZE(ps); k++) {
		uint64_t thr = sl_rng_threshold(ps[k]), hits = 0;
		double sd = sqrt(draws * ps[k] * (1 - ps[k]));

		for (int i = 0; i < draws; i++)
			hits += sl_rng_chance(&r, thr);
		/* 99.9% two-sided interval: +- 3.29 standard deviations. */
		assert_true(fabs((double)hits - draws * ps[k]) <= 3.29 * sd + 1);
	}
	assert_int_equal(sl_rng_threshold(0), 0);
	assert_int_equal(sl_rng_threshold(-1), 0);
	assert_int_equal(sl_rng_threshold(1), UINT64_MAX);
}

static void
sl_rng_exponential__mean(void **state)
{
	struct sl_rng r;
	double sum = 0;
	const int draws = 1000000;

	(void)state;
	sl_rng_seed(&r, 5);
	for (int i = 0; i < draws; i++) {
		double v = sl_rng_exponential(&r, 250.0);

		assert_true(v >= 0);
		sum += v;
	}
	/* sd of the mean = 250 / sqrt(draws) = 0.25; allow 4 sd. */
	assert_true(fabs(sum / draws - 250.0) < 1.0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sl_rng_next__matches_reference_vectors),
		cmocka_unit_test(sl_rng_seed__splitmix64_expansion),
		cmocka_unit_test(sl_rng_below__uniform_chi_square),
		cmocka_unit_test(sl_rng_below__large_bound_in_range),
		cmocka_unit_test(sl_rng_chance__probability_within_confidence),
		cmocka_unit_test(sl_rng_exponential__mean),
	};

	return cmocka_run_group_tests_name("common/rng", tests, NULL, NULL);
}
