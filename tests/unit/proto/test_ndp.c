/* SPDX-License-Identifier: BSD-3-Clause */
/* Tests for drivers/proto/ndp/ndp.c: NACKs mark, the RTO marks all unacked, grant credit. */
#include "harness.h"

static void
start(struct harness *h)
{
	struct sl_flow_conf fc = {.init_credit_bytes = 8000};

	h_init(h, "ndp", &fc);
	h_send(h, 10);
}

static void
ndp_init__whole_ring_window_and_grant_credit(void **state)
{
	struct harness h;

	(void)state;
	start(&h);
	assert_int_equal(h.v.wnd_segs, H_W);
	assert_int_equal(h.ops->credit, SL_CREDIT_GRANT);
	assert_int_equal(h.ops->priv_size, 0);
}

static void
ndp_incoming__nack_marks_reported_segments(void **state)
{
	struct harness h;
	struct sl_event nack = {.type = SL_EV_NACK,
				.flags = SL_EVF_CUMACK,
				.cumack = 2,
				.nack_seq = 4,
				.nack_len = 2};

	(void)state;
	start(&h);
	h_event(&h, &nack, 100);
	assert_int_equal(h.nmarked, 2);
	assert_true(sl_flow_is_marked(&h.v, 4) && sl_flow_is_marked(&h.v, 5));
	assert_false(sl_flow_is_marked(&h.v, 3));
	assert_true(h.rto_armed);
}

static void
ndp_incoming__pull_and_ack_leave_marks_alone(void **state)
{
	struct harness h;
	struct sl_event pull = {.type = SL_EV_PULL, .grant_bytes = 1000};

	(void)state;
	start(&h);
	h_event(&h, &pull, 100);
	assert_int_equal(h.nmarked, 0);
	assert_int_equal(h.v.tokens_bytes, 9000); /* the engine's fixed stage adds the grant */
	h_ack(&h, 10, 9);
	assert_int_equal(h.nmarked, 0);
	assert_false(h.rto_armed); /* everything acked: stopped */
}

static void
ndp_periodic__rto_marks_every_unacked_segment(void **state)
{
	struct harness h;

	(void)state;
	start(&h);
	h_ack(&h, 3, 6);
	h_periodic(&h, true, false, 1000);
	assert_int_equal(h.nmarked, 6); /* 3..9 without the SACKed 6 */
	assert_false(sl_flow_is_marked(&h.v, 6));
	assert_true(h.rto_armed);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ndp_init__whole_ring_window_and_grant_credit),
		cmocka_unit_test(ndp_incoming__nack_marks_reported_segments),
		cmocka_unit_test(ndp_incoming__pull_and_ack_leave_marks_alone),
		cmocka_unit_test(ndp_periodic__rto_marks_every_unacked_segment),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
