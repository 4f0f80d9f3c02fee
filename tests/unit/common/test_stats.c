/* SPDX-License-Identifier: BSD-3-Clause */
/* Tests for lib/common/stats.c: histogram quantiles within the bucket precision, merge. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "sl_rng.h"
#include "sl_stats.h"

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void
sl_hist_quantile__small_values_exact(void **state)
{
	struct sl_hist h;

	(void)state;
	sl_hist_reset(&h);
	assert_int_equal(sl_hist_quantile(&h, 0.5), 0);
	for (uint64_t v = 1; v <= 10; v++)
		sl_hist_add(&h, v);
	assert_int_equal(sl_hist_quantile(&h, 0.5), 6);
	assert_int_equal(sl_hist_quantile(&h, 0.0), 1);
	assert_int_equal(sl_hist_quantile(&h, 1.0), 10);
	assert_int_equal(h.count, 10);
	assert_int_equal(h.sum, 55);
}

static void
sl_hist_quantile__random_within_precision(void **state)
{
	enum { N = 100000 };
	static uint64_t vals[N];
	static const double qs[] = {0.01, 0.5, 0.9, 0.99, 0.999};
	struct sl_hist h;
	struct sl_rng r;

	(void)state;
	sl_rng_seed(&r, 11);
	sl_hist_reset(&h);
	for (int i = 0; i < N; i++) {
		/* Spread over many magnitudes, up to 2^60. */
		vals[i] = sl_rng_next(&r) >> (4 + sl_rng_below(&r, 60));
		sl_hist_add(&h, vals[i]);
	}
	qsort(vals, N, sizeof(vals[0]), cmp_u64);
	for (unsigned k = 0; k < SL_ARRAY_SIZE(qs); k++) {
		uint64_t truth = vals[(size_t)(qs[k] * N)];
		uint64_t got = sl_hist_quantile(&h, qs[k]);

		assert_true(got >= truth);
		assert_true((double)got <= (double)truth * (1.0 + 1.0 / SL_HIST_SUB) + 1);
	}
	assert_int_equal(sl_hist_quantile(&h, 1.0), vals[N - 1]);
}

static void
sl_hist_add__extremes(void **state)
{
	struct sl_hist h;

	(void)state;
	sl_hist_reset(&h);
	sl_hist_add(&h, UINT64_MAX);
	sl_hist_add(&h, UINT64_MAX);
	assert_int_equal(h.sum, UINT64_MAX); /* saturates */
	assert_int_equal(sl_hist_quantile(&h, 0.5), UINT64_MAX);
}

static void
sl_hist_merge__adds_counts(void **state)
{
	struct sl_hist a, b;

	(void)state;
	sl_hist_reset(&a);
	sl_hist_reset(&b);
	for (uint64_t v = 0; v < 1000; v++)
		sl_hist_add(v % 2 ? &a : &b, v);
	sl_hist_merge(&a, &b);
	assert_int_equal(a.count, 1000);
	assert_int_equal(a.max, 999);
	assert_int_equal(a.sum, 999 * 1000 / 2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sl_hist_quantile__small_values_exact),
		cmocka_unit_test(sl_hist_quantile__random_within_precision),
		cmocka_unit_test(sl_hist_add__extremes),
		cmocka_unit_test(sl_hist_merge__adds_counts),
	};

	return cmocka_run_group_tests_name("common/stats", tests, NULL, NULL);
}
