/* SPDX-License-Identifier: BSD-3-Clause */
/* Tests for lib/common/str.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "sl_str.h"

static void
sl_str_trim__both_ends_in_place(void **state)
{
	char a[] = " \t key = value \r\n", b[] = "", c[] = " \t\n ", d[] = "x";

	(void)state;
	assert_string_equal(sl_str_trim(a), "key = value");
	assert_string_equal(sl_str_trim(b), "");
	assert_string_equal(sl_str_trim(c), "");
	assert_string_equal(sl_str_trim(d), "x");
	assert_ptr_equal(sl_str_trim(d), d);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sl_str_trim__both_ends_in_place),
	};

	return cmocka_run_group_tests_name("common/str", tests, NULL, NULL);
}
