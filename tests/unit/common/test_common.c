/* SPDX-License-Identifier: BSD-3-Clause */
/* Tests for lib/common/sl_common.h: the power-of-two helpers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "sl_common.h"

/* x, whether it is a power of two, and the least power of two >= x (1 for 0). */
static const struct {
	uint64_t x;
	bool pow2;
	uint64_t up;
} pow2_cases[] = {
	{0, false, 1},
	{1, true, 1},
	{2, true, 2},
	{3, false, 4},
	{64, true, 64},
	{65, false, 128},
	{4096, true, 4096},
	{4097, false, 8192},
	{(UINT64_C(1) << 31) - 1, false, UINT64_C(1) << 31},
	{UINT64_C(1) << 31, true, UINT64_C(1) << 31},
	{(UINT64_C(1) << 40) + 1, false, UINT64_C(1) << 41},
	{UINT64_C(1) << 63, true, UINT64_C(1) << 63},
	{UINT64_MAX, false, 0}, /* beyond sl_align_pow2's range: sl_is_pow2 only */
};

static void
sl_is_pow2__table(void **state)
{
	(void)state;
	for (size_t i = 0; i < SL_ARRAY_SIZE(pow2_cases); i++)
		assert_int_equal(sl_is_pow2(pow2_cases[i].x), pow2_cases[i].pow2);
}

/* Both widths: sl_align_pow2_u32 wherever x fits its range (at most 2^31). */
static void
sl_align_pow2__table(void **state)
{
	(void)state;
	for (size_t i = 0; i < SL_ARRAY_SIZE(pow2_cases); i++) {
		uint64_t x = pow2_cases[i].x, up = pow2_cases[i].up;

		if (up == 0)
			continue;
		assert_true(sl_align_pow2(x) == up);
		if (x <= UINT64_C(1) << 31)
			assert_int_equal(sl_align_pow2_u32((uint32_t)x), up);
	}
}

/* The doubling loop sl_align_pow2_u32 replaced, over every small value. */
static void
sl_align_pow2_u32__as_the_doubling_loop(void **state)
{
	(void)state;
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
		cmocka_unit_test(sl_is_pow2__table),
		cmocka_unit_test(sl_align_pow2__table),
		cmocka_unit_test(sl_align_pow2_u32__as_the_doubling_loop),
	};

	return cmocka_run_group_tests_name("common/common", tests, NULL, NULL);
}
