/* SPDX-License-Identifier: BSD-3-Clause */
/* Tests for lib/pacer/ffs.c: the hierarchical find-first-set bitmap against a bit-by-bit scan. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <stdlib.h>

#include <cmocka.h>

#include "ffs.h"
#include "sl_rng.h"

static uint32_t
ref_from(const struct sl_pacer_ffs *b, uint32_t i)
{
	for (uint32_t k = 0; k < b->nbits; k++) {
		uint32_t j = (i + k) & (b->nbits - 1);

		if (sl_pacer_ffs_test(b, j))
			return j;
	}
	return SL_PACER_FFS_NONE;
}

static void
check_size(uint32_t nbits, uint32_t nset, uint64_t seed)
{
	struct sl_pacer_ffs b;
	struct sl_rng r;

	sl_rng_seed(&r, seed);
	assert_int_equal(sl_pacer_ffs_init(&b, nbits), 0);
	assert_int_equal(sl_pacer_ffs_from(&b, 0), SL_PACER_FFS_NONE);
	for (uint32_t k = 0; k < nset; k++)
		sl_pacer_ffs_set(&b, (uint32_t)sl_rng_below(&r, nbits));
	for (unsigned q = 0; q < 300; q++) {
		uint32_t i = (uint32_t)sl_rng_below(&r, nbits);

		assert_int_equal(sl_pacer_ffs_from(&b, i), ref_from(&b, i));
		/* Clear what was found: the summary levels must follow. */
		if (q % 3 == 0 && sl_pacer_ffs_from(&b, i) != SL_PACER_FFS_NONE)
			sl_pacer_ffs_clear(&b, sl_pacer_ffs_from(&b, i));
	}
	sl_pacer_ffs_fini(&b);
}

static void
sl_pacer_ffs_from__matches_scan_sparse_and_dense(void **state)
{
	(void)state;
	check_size(64, 3, 1);
	check_size(4096, 5, 2);
	check_size(4096, 2000, 3);
	check_size(1u << 18, 40, 4);
	check_size(1u << 20, 2, 5);
}

static void
sl_pacer_ffs_from__wraps_to_lower_bits(void **state)
{
	struct sl_pacer_ffs b;

	(void)state;
	assert_int_equal(sl_pacer_ffs_init(&b, 1u << 14), 0);
	sl_pacer_ffs_set(&b, 7);
	assert_int_equal(sl_pacer_ffs_from(&b, 8), 7);
	assert_int_equal(sl_pacer_ffs_find_ge(&b, 8), SL_PACER_FFS_NONE);
	sl_pacer_ffs_set(&b, 9000);
	assert_int_equal(sl_pacer_ffs_from(&b, 8), 9000);
	sl_pacer_ffs_clear(&b, 9000);
	sl_pacer_ffs_clear(&b, 7);
	assert_int_equal(sl_pacer_ffs_from(&b, 0), SL_PACER_FFS_NONE);
	sl_pacer_ffs_fini(&b);
}

/* Clearing set bits one by one in circular order from a random start visits them all. */
static void
sl_pacer_ffs_clear_next__walks_the_set_bits_in_order(void **state)
{
	static const uint32_t sizes[] = {64, 4096, 1u << 18};
	struct sl_pacer_ffs b;
	struct sl_rng r;

	(void)state;
	sl_rng_seed(&r, 6);
	for (unsigned s = 0; s < 3; s++) {
		uint32_t n = sizes[s], i;

		assert_int_equal(sl_pacer_ffs_init(&b, n), 0);
		for (uint32_t k = 0; k < 200; k++) /* clusters in one word and lone bits */
			sl_pacer_ffs_set(&b, (uint32_t)sl_rng_below(&r, k % 2 ? n : 64) & (n - 1));
		sl_pacer_ffs_set(&b, n - 1); /* the next bit after it is in another word */
		i = sl_pacer_ffs_from(&b, (uint32_t)sl_rng_below(&r, n));
		while (i != SL_PACER_FFS_NONE) {
			uint32_t want;

			assert_true(sl_pacer_ffs_test(&b, i));
			sl_pacer_ffs_clear(&b, i);
			want = ref_from(&b, (i + 1) & (n - 1));
			sl_pacer_ffs_set(&b, i);
			assert_int_equal(sl_pacer_ffs_clear_next(&b, i), want);
			assert_false(sl_pacer_ffs_test(&b, i));
			assert_int_equal(sl_pacer_ffs_from(&b, i),
					 want); /* levels above followed */
			i = want;
		}
		sl_pacer_ffs_fini(&b);
	}
}

static void
sl_pacer_ffs_init__rejects_bad_sizes(void **state)
{
	struct sl_pacer_ffs b;

	(void)state;
	assert_int_equal(sl_pacer_ffs_init(&b, 100), -EINVAL);
	assert_int_equal(sl_pacer_ffs_init(&b, 32), -EINVAL);
	assert_int_equal(sl_pacer_ffs_init(&b, 1u << 25), -EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sl_pacer_ffs_from__matches_scan_sparse_and_dense),
		cmocka_unit_test(sl_pacer_ffs_from__wraps_to_lower_bits),
		cmocka_unit_test(sl_pacer_ffs_clear_next__walks_the_set_bits_in_order),
		cmocka_unit_test(sl_pacer_ffs_init__rejects_bad_sizes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
