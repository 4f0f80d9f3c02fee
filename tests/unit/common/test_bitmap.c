/* SPDX-License-Identifier: BSD-3-Clause */
/* Tests for lib/common/bitmap.c: ring find-first-set (Tonic appendix C) and ranges with wrap. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "sl_bitmap.h"
#include "sl_rng.h"

/* Slow reference: walk bits from head with wrap. */
static uint32_t
ref_ffs_from(const uint64_t *w, uint32_t nbits, uint32_t head)
{
	for (uint32_t k = 0; k < nbits; k++) {
		uint32_t i = (head + k) % nbits;

		if (sl_bitmap_test(w, i))
			return i;
	}
	return SL_BITMAP_NONE;
}

static void
sl_bitmap_ffs_from__appendix_c_example(void **state)
{
	uint64_t w[1] = {0};

	(void)state;
	sl_bitmap_set(w, 5);
	sl_bitmap_set(w, 30);
	assert_int_equal(sl_bitmap_ffs_from(w, 64, 6), 30);
	assert_int_equal(sl_bitmap_ffs_from(w, 64, 5), 5);
	assert_int_equal(sl_bitmap_ffs_from(w, 64, 0), 5);
	assert_int_equal(sl_bitmap_ffs_from(w, 64, 31), 5); /* wraps */
}

static void
sl_bitmap_ffs_from__empty_is_none(void **state)
{
	uint64_t w[4] = {0};

	(void)state;
	for (uint32_t h = 0; h < 256; h += 17)
		assert_int_equal(sl_bitmap_ffs_from(w, 256, h), SL_BITMAP_NONE);
}

static void
sl_bitmap_ffs_from__wraps_inside_head_word(void **state)
{
	uint64_t w[2] = {0};

	(void)state;
	sl_bitmap_set(w, 70); /* only bit: in the head's word, below the head */
	assert_int_equal(sl_bitmap_ffs_from(w, 128, 100), 70);
	assert_int_equal(sl_bitmap_ffs_from(w, 128, 70), 70);
	assert_int_equal(sl_bitmap_ffs_from(w, 128, 71), 70);
}

static void
sl_bitmap_ffs_from__random_against_reference(void **state)
{
	struct sl_rng r;
	uint64_t w[64];

	(void)state;
	sl_rng_seed(&r, 42);
	for (int iter = 0; iter < 20000; iter++) {
		uint32_t nbits = 64 * (uint32_t)(1 + sl_rng_below(&r, 64));
		uint32_t density = (uint32_t)sl_rng_below(&r, 5);

		memset(w, 0, sizeof(w));
		for (uint32_t i = 0; i < nbits; i++)
			if (density && sl_rng_below(&r, 1u << (3 * density)) == 0)
				sl_bitmap_set(w, i);
		for (int q = 0; q < 8; q++) {
			uint32_t head = (uint32_t)sl_rng_below(&r, nbits);

			assert_int_equal(sl_bitmap_ffs_from(w, nbits, head),
					 ref_ffs_from(w, nbits, head));
		}
	}
}

static void
sl_bitmap_clear_range__random_against_reference(void **state)
{
	struct sl_rng r;
	uint64_t w[8], ref[8];

	(void)state;
	sl_rng_seed(&r, 7);
	for (int iter = 0; iter < 20000; iter++) {
		uint32_t nbits = 64 * (uint32_t)(1 + sl_rng_below(&r, 8));
		uint32_t start = (uint32_t)sl_rng_below(&r, nbits);
		uint32_t count = (uint32_t)sl_rng_below(&r, nbits + 1);
		uint32_t set_ref = 0;

		for (unsigned i = 0; i < 8; i++)
			w[i] = ref[i] = sl_rng_next(&r);
		for (uint32_t k = 0; k < count; k++)
			if (sl_bitmap_test(ref, (start + k) % nbits))
				set_ref++;
		assert_int_equal(sl_bitmap_count_range(w, nbits, start, count), set_ref);
		for (uint32_t k = 0; k < count; k++)
			sl_bitmap_clear(ref, (start + k) % nbits);
		sl_bitmap_clear_range(w, nbits, start, count);
		assert_memory_equal(w, ref, sizeof(w));
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sl_bitmap_ffs_from__appendix_c_example),
		cmocka_unit_test(sl_bitmap_ffs_from__empty_is_none),
		cmocka_unit_test(sl_bitmap_ffs_from__wraps_inside_head_word),
		cmocka_unit_test(sl_bitmap_ffs_from__random_against_reference),
		cmocka_unit_test(sl_bitmap_clear_range__random_against_reference),
	};

	return cmocka_run_group_tests_name("common/bitmap", tests, NULL, NULL);
}
