/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Registry checks for the programs of drivers/proto. The registry is the one list of program
 * names: this test walks it, and meson hands it the list of program directories it built
 * (SL_PROTO_DIRS) so a directory whose program failed to register is caught. Each program is
 * well formed, its receiver is configured from its own declaration (lib/xport), the feedback
 * fits its credit scheme, and the registry refuses a second table under a taken name.
 */
#include <errno.h>
#include <stdio.h>

#include "harness.h"
#include "sl_xport.h"

#define FB_ALL                                                                                     \
	(SL_PROTO_FB_SACK | SL_PROTO_FB_ECHO | SL_PROTO_FB_ECN | SL_PROTO_FB_CNP |                 \
	 SL_PROTO_FB_PULL | SL_PROTO_FB_NACK)

static void
registry__every_program_directory_registered(void **state)
{
	char dirs[] = SL_PROTO_DIRS;
	unsigned n_dirs = 0;

	(void)state;
	assert_int_equal(sl_proto_register_failures(), 0);
	for (char *save, *d = strtok_r(dirs, " ", &save); d != NULL;
	     d = strtok_r(NULL, " ", &save)) {
		if (sl_proto_find(d) == NULL)
			fail_msg("drivers/proto/%s registered no program named %s", d, d);
		n_dirs++;
	}
	assert_true(n_dirs > 0);
	assert_true(sl_proto_count() >= n_dirs);
	assert_null(sl_proto_at(sl_proto_count()));
}

static void
registry__every_program_well_formed_with_its_feedback(void **state)
{
	(void)state;
	for (unsigned i = 0; i < sl_proto_count(); i++) {
		const struct sl_proto_ops *ops = sl_proto_at(i);
		struct sl_recv_conn_conf cc = {0};

		assert_ptr_equal(sl_proto_find(ops->name), ops);
		assert_true(ops->credit <= SL_CREDIT_GRANT);
		assert_true(ops->priv_size <= SL_PROTO_PRIV_MAX);
		assert_int_equal(ops->feedback & ~FB_ALL, 0);
		/* A rate is cut by congestion notifications; grant credit comes from PULLs. */
		if (ops->credit == SL_CREDIT_RATE && !(ops->feedback & SL_PROTO_FB_CNP))
			fail_msg("%s: a rate program without CNPs", ops->name);
		if (ops->credit == SL_CREDIT_GRANT && !(ops->feedback & SL_PROTO_FB_PULL))
			fail_msg("%s: a grant program without PULLs", ops->name);
		assert_int_equal(sl_xport_recv_conf_for_proto(ops->name, &cc), 0);
		assert_int_equal(cc.fb, ops->feedback);
		assert_true(cc.ack_every_pkts >= 1);
		printf("{\"program\": \"%s\", \"credit\": %d, \"priv_bytes\": %u, \"feedback\": "
		       "%u, "
		       "\"ack_every_pkts\": %u}\n",
		       ops->name, ops->credit, ops->priv_size, ops->feedback, cc.ack_every_pkts);
	}
}

static void
sl_xport_recv_conf_for_proto__melo_senders_and_errors(void **state)
{
	struct sl_recv_conn_conf cc = {.isn = 7, .mode = SL_RECV_GBN};

	(void)state;
	/* MELO's evaluation (section 4) runs both recoveries under DCQCN: NACKs and CNPs. */
	assert_int_equal(sl_xport_recv_conf_for_proto("gbn", &cc), 0);
	assert_int_equal(cc.fb, SL_RECV_FB_NACK | SL_RECV_FB_CNP);
	assert_int_equal(cc.ack_every_pkts, 1);
	assert_int_equal(cc.isn, 7); /* left alone */
	assert_int_equal(cc.mode, SL_RECV_GBN);
	assert_int_equal(sl_xport_recv_conf_for_proto("cubic", &cc), -ENOENT);
	assert_int_equal(sl_xport_recv_conf_for_proto(NULL, &cc), -EINVAL);
	assert_int_equal(sl_xport_recv_conf_for_proto("melo", NULL), -EINVAL);
}

static void
registry__duplicate_name_rejected(void **state)
{
	static struct sl_proto_ops copy[SL_PROTO_MAX];
	unsigned n = sl_proto_count();

	(void)state;
	for (unsigned i = 0; i < n; i++) {
		copy[i] = *sl_proto_at(i);
		assert_int_equal(sl_proto_register(&copy[i]), -EEXIST);
		assert_ptr_not_equal(sl_proto_find(copy[i].name), &copy[i]);
	}
	assert_int_equal(sl_proto_count(), n);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(registry__every_program_directory_registered),
		cmocka_unit_test(registry__every_program_well_formed_with_its_feedback),
		cmocka_unit_test(sl_xport_recv_conf_for_proto__melo_senders_and_errors),
		cmocka_unit_test(registry__duplicate_name_rejected),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
