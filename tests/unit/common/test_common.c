/* SPDX-License-Identifier: BSD-3-Clause */
/* Tests for lib/common/sl_common.h: the power-of-two helpers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "sl_common.h"

static void
sl_is_pow2__zero_is_not(void **state)
{
	(void)state;
	assert_false(sl_is_pow2(0));
	assert_true(sl_is_pow2(1));
	assert_true(sl_is_pow2(2));
	assert_false(sl_is_pow2(3));
	assert_true(sl_is_pow2(4096));
	assert_false(sl_is_pow2(4097));
	assert_true(sl_is_pow2(UINT64_C(1) << 63));
	assert_false(sl_is_pow2(UINT64_MAX));
}

static void
sl_align_pow2__least_power_at_or_above(void **state)
{
	(void)state;
	assert_int_equal(sl_align_pow2(0), 1);
	assert_int_equal(sl_align_pow2(1), 1);
	assert_int_equal(sl_align_pow2(2), 2);
	assert_int_equal(sl_align_pow2(3), 4);
	assert_int_equal(sl_align_pow2(64), 64);
	assert_int_equal(sl_align_pow2(65), 128);
	assert_true(sl_align_pow2((UINT64_C(1) << 40) + 1) == UINT64_C(1) << 41);
	assert_true(sl_align_pow2(UINT64_C(1) << 63) == UINT64_C(1) << 63);
}

static void
sl_align_pow2_u32__every_value_to_2p31(void **state)
{
	(void)state;
	assert_int_equal(sl_align_pow2_u32(0), 1);
	assert_int_equal(sl_align_pow2_u32(1), 1);
	assert_int_equal(sl_align_pow2_u32(5), 8);
	assert_int_equal(sl_align_pow2_u32(128), 128);
	assert_int_equal(sl_align_pow2_u32(129), 256);
	assert_int_equal(sl_align_pow2_u32((UINT32_C(1) << 31) - 1), UINT32_C(1) << 31);
	assert_int_equal(sl_align_pow2_u32(UINT32_C(1) << 31), UINT32_C(1) << 31);
	/* the doubling loop it replaces, over every small value */
	for (uint32_t v = 0; v <= 70000; v++) {
		uint32_t p = 1;

		while (p < v)
			p <<= 1;
		assert_int_equal(sl_align_pow2_u32(v), p);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sl_is_pow2__zero_is_not),
		cmocka_unit_test(sl_align_pow2__least_power_at_or_above),
		cmocka_unit_test(sl_align_pow2_u32__every_value_to_2p31),
	};

	return cmocka_run_group_tests_name("common/common", tests, NULL, NULL);
}
