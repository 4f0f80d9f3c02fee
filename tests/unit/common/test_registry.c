/* SPDX-License-Identifier: BSD-3-Clause */
/* Tests for lib/common/registry.c: the rules in their documented order, lookup, iteration. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "sl_registry.h"

struct toy_ops {
	int (*must)(int);
	int (*may)(int);
	int weight;
	char name[8];
};

static int
twice(int x)
{
	return 2 * x;
}

static int
weight_check(const void *p)
{
	return ((const struct toy_ops *)p)->weight < 0 ? -EINVAL : 0;
}

static const size_t required[] = {offsetof(struct toy_ops, must)};

static void
sl_registry_add__enforces_each_rule(void **state)
{
	const void *slots[2];
	struct sl_registry r = SL_REGISTRY_INIT(
		slots, struct toy_ops, name, SL_REGISTRY_REQUIRED(required), .check = weight_check);
	struct toy_ops a = {.must = twice, .name = "a"}, b = {.must = twice, .name = "b"};
	struct toy_ops c = {.must = twice, .name = "c"}, bad = a;

	(void)state;
	assert_int_equal(sl_registry_add(&r, NULL), -EINVAL);
	bad.must = NULL;
	assert_int_equal(sl_registry_add(&r, &bad), -EINVAL); /* required hook missing */
	bad = a;
	bad.weight = -1;
	assert_int_equal(sl_registry_add(&r, &bad), -EINVAL); /* the module's own check */
	bad = a;
	bad.name[0] = '\0';
	assert_int_equal(sl_registry_add(&r, &bad), -EINVAL); /* empty name */
	memset(bad.name, 'x', sizeof(bad.name));
	assert_int_equal(sl_registry_add(&r, &bad), -EINVAL); /* unterminated name */
	assert_int_equal(r.n, 0);

	assert_int_equal(sl_registry_add(&r, &a), 0); /* the optional hook may be NULL */
	bad = a;
	assert_int_equal(sl_registry_add(&r, &bad), -EEXIST);
	assert_int_equal(sl_registry_add(&r, &b), 0);
	assert_int_equal(sl_registry_add(&r, &c), -ENOSPC);
	assert_int_equal(r.n, 2);
}

static void
sl_registry_find__by_name_as_registered(void **state)
{
	const void *slots[4];
	struct sl_registry r = SL_REGISTRY_INIT(slots, struct toy_ops, name);
	struct toy_ops a = {.name = "alpha"}, b = {.name = "alphabe"};

	(void)state;
	assert_null(sl_registry_find(&r, "alpha"));
	assert_int_equal(sl_registry_add(&r, &a), 0);
	assert_int_equal(sl_registry_add(&r, &b), 0);
	assert_ptr_equal(sl_registry_find(&r, "alpha"), &a); /* the table itself, not a copy */
	assert_ptr_equal(sl_registry_find(&r, "alphabe"), &b);
	assert_null(sl_registry_find(&r, "alph"));
	assert_null(sl_registry_find(&r, "alphabet"));
	assert_null(sl_registry_find(&r, NULL));
	assert_ptr_equal(sl_registry_at(&r, 0), &a);
	assert_ptr_equal(sl_registry_at(&r, 1), &b);
	assert_null(sl_registry_at(&r, 2));
	assert_string_equal(sl_registry_name(&r, &b), "alphabe");
}

static void
sl_registry_add_ctor__counts_failures(void **state)
{
	const void *slots[1];
	struct sl_registry r = SL_REGISTRY_INIT(slots, struct toy_ops, name);
	struct toy_ops a = {.name = "a"};

	(void)state;
	sl_registry_add_ctor(&r, &a);
	assert_int_equal(r.ctor_failure, 0);
	sl_registry_add_ctor(&r, &a);
	sl_registry_add_ctor(&r, NULL);
	assert_int_equal(r.ctor_failure, 2);
	assert_int_equal(r.n, 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sl_registry_add__enforces_each_rule),
		cmocka_unit_test(sl_registry_find__by_name_as_registered),
		cmocka_unit_test(sl_registry_add_ctor__counts_failures),
	};

	return cmocka_run_group_tests_name("common/registry", tests, NULL, NULL);
}
