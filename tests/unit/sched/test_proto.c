/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests for lib/sched/proto.c: the transport-program registry. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sl_sched.h"

static void
nop_incoming(const struct sl_flow_view *f, void *priv, const struct sl_incoming *in,
	     struct sl_proto_out *out)
{
	(void)f, (void)priv, (void)in, (void)out;
}

static void
nop_periodic(const struct sl_flow_view *f, void *priv, const struct sl_periodic *p,
	     struct sl_proto_out *out)
{
	(void)f, (void)priv, (void)p, (void)out;
}

static int
nop_init(const struct sl_flow_view *f, void *priv, const struct sl_flow_conf *fc,
	 struct sl_proto_out *out)
{
	(void)f, (void)priv, (void)fc, (void)out;
	return 0;
}

/* Registered by the constructor macro before main(). */
static const struct sl_proto_ops ctor_ops = {
	.incoming = nop_incoming,
	.periodic = nop_periodic,
	.init = nop_init,
	.credit = SL_CREDIT_WINDOW,
	.priv_size = 8,
	.name = "t_ctor",
};
SL_PROTO_REGISTER(ctor_ops);

static void
SL_PROTO_REGISTER__registers_before_main(void **state)
{
	(void)state;
	assert_ptr_equal(sl_proto_find("t_ctor"), &ctor_ops);
	assert_int_equal(sl_proto_register_failures(), 0);
}

/* Every hook is optional: a program of none runs on the engine's defaults alone. */
static void
sl_proto_register__hooks_are_optional(void **state)
{
	static struct sl_proto_ops o;

	(void)state;
	o = ctor_ops;
	strcpy(o.name, "t_nohooks");
	o.incoming = NULL;
	o.periodic = NULL;
	o.init = NULL;
	assert_int_equal(sl_proto_register(&o), 0);
	assert_ptr_equal(sl_proto_find("t_nohooks"), &o);
	assert_int_equal(sl_proto_register(NULL), -EINVAL);
}

static void
sl_proto_register__rejects_bad_fields(void **state)
{
	static struct sl_proto_ops o;

	(void)state;
	o = ctor_ops;
	strcpy(o.name, "t_bad");
	o.priv_size = SL_PROTO_PRIV_MAX + 1;
	assert_int_equal(sl_proto_register(&o), -EINVAL);
	o.priv_size = SL_PROTO_PRIV_MAX;
	o.credit = (enum sl_credit)7;
	assert_int_equal(sl_proto_register(&o), -EINVAL);
	o.credit = SL_CREDIT_RATE;
	o.name[0] = '\0';
	assert_int_equal(sl_proto_register(&o), -EINVAL);
	memset(o.name, 'x', sizeof(o.name)); /* not terminated */
	assert_int_equal(sl_proto_register(&o), -EINVAL);
	strcpy(o.name, "t_bad");
	assert_int_equal(sl_proto_register(&o), 0); /* the largest private state is fine */
	assert_ptr_equal(sl_proto_find("t_bad"), &o);
}

static void
sl_proto_register__rejects_duplicate_name(void **state)
{
	static struct sl_proto_ops dup;

	(void)state;
	dup = ctor_ops;
	assert_int_equal(sl_proto_register(&dup), -EEXIST);
	assert_ptr_equal(sl_proto_find("t_ctor"), &ctor_ops);
}

static void
sl_proto_register__table_full(void **state)
{
	static struct sl_proto_ops many[SL_PROTO_MAX];
	int rc = 0;
	unsigned i;

	(void)state;
	for (i = 0; i < SL_PROTO_MAX && rc == 0; i++) {
		many[i] = ctor_ops;
		snprintf(many[i].name, sizeof(many[i].name), "t_many%u", i);
		rc = sl_proto_register(&many[i]);
	}
	assert_int_equal(rc, -ENOSPC);
	assert_null(sl_proto_find(many[i - 1].name));
	assert_non_null(sl_proto_find("t_many0"));
}

static void
sl_proto_find__unknown_or_null(void **state)
{
	(void)state;
	assert_null(sl_proto_find("nope"));
	assert_null(sl_proto_find(NULL));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(SL_PROTO_REGISTER__registers_before_main),
		cmocka_unit_test(sl_proto_register__hooks_are_optional),
		cmocka_unit_test(sl_proto_register__rejects_bad_fields),
		cmocka_unit_test(sl_proto_register__rejects_duplicate_name),
		cmocka_unit_test(sl_proto_find__unknown_or_null),
		cmocka_unit_test(sl_proto_register__table_full),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
