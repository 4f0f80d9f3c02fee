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

static void
registry__missing_hook_rejected(void **state)
{
	static struct sl_proto_ops bad[3], good;

	(void)state;
	for (int i = 0; i < 3; i++) {
		bad[i] = *sl_proto_find("newreno");
		snprintf(bad[i].name, sizeof(bad[i].name), "nr-nohook%d", i);
	}
	bad[0].incoming = NULL;
	bad[1].periodic = NULL;
	bad[2].init = NULL;
	for (int i = 0; i < 3; i++) {
		assert_int_equal(sl_proto_register(&bad[i]), -EINVAL);
		assert_null(sl_proto_find(bad[i].name));
	}
	good = *sl_proto_find("newreno"); /* the same table with its hooks is accepted */
	snprintf(good.name, sizeof(good.name), "nr-copy");
	assert_int_equal(sl_proto_register(&good), 0);
	assert_ptr_equal(sl_proto_find("nr-copy"), &good);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(registry__every_program_registered),
		cmocka_unit_test(registry__duplicate_name_rejected),
		cmocka_unit_test(registry__missing_hook_rejected),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
