/* SPDX-License-Identifier: BSD-3-Clause */
/* Tests for drivers/proto/irn/irn.c: selective recovery from SACKs, RTO_low/high, BDP-FC. */
#include <errno.h>

#include "harness.h"

static void
start(struct harness *h)
{
	struct sl_flow_conf fc = {.init_rate_bps = 40 * SL_BPS_PER_GBPS, .param = {16}};

	h_init(h, "irn", &fc);
	h_send(h, 10);
}

static void
irn_init__bdp_cap_and_bad_parameters(void **state)
{
	struct harness h;
	struct sl_flow_conf fc = {.seg_bytes = 1000, .param = {H_W + 1}};
	struct sl_proto_out out = {0};

	(void)state;
	start(&h);
	assert_int_equal(h.v.wnd_segs, 16);
	assert_int_equal(h.v.rto_ns, 320000);
	assert_int_equal(h.ops->init(&h.v, h.priv, &fc, &out), -EINVAL); /* cap beyond W */
	fc.param[0] = 0;
	fc.param[1] = 10; /* RTO_low below 1 us */
	assert_int_equal(h.ops->init(&h.v, h.priv, &fc, &out), -EINVAL);
}

static void
irn_incoming__sack_past_cumack_marks_the_holes_once(void **state)
{
	struct harness h;

	(void)state;
	start(&h);
	h_ack(&h, 2, 5); /* 2, 3, 4 missing */
	assert_int_equal(h.nmarked, 3);
	assert_true(sl_flow_is_marked(&h.v, 2) && sl_flow_is_marked(&h.v, 4));
	h_ack(&h, 2, 6); /* nothing new below 6 */
	assert_int_equal(h.nmarked, 0);
	h_ack(&h, 2, 8); /* 7 is a new hole */
	assert_int_equal(h.nmarked, 1);
	assert_true(sl_flow_is_marked(&h.v, 7));
}

static void
irn_incoming__recovery_ends_past_recover(void **state)
{
	struct harness h;

	(void)state;
	start(&h);
	h_ack(&h, 2, 5);
	h_send(&h, 3);
	h_ack(&h, 10, -1); /* everything up to recover (9) acked */
	h_send(&h, 5);     /* 10..14 */
	h_ack(&h, 10, 12); /* a new recovery marks 10 and 11 */
	assert_int_equal(h.nmarked, 2);
	assert_true(sl_flow_is_marked(&h.v, 10));
}

static void
irn_incoming__rto_low_with_few_in_flight(void **state)
{
	struct harness h;

	(void)state;
	start(&h);
	h_ack(&h, 4, -1);
	assert_int_equal(h.v.rto_ns, 320000); /* 6 in flight */
	h_ack(&h, 7, -1);
	assert_int_equal(h.v.rto_ns, 100000); /* 3 in flight: RTO_low */
	assert_true(h.rto_armed);
}

static void
irn_periodic__rto_marks_every_unsacked_segment(void **state)
{
	struct harness h;

	(void)state;
	start(&h);
	h_ack(&h, 0, 5); /* marks 0..4 */
	h_periodic(&h, true, false, 1000);
	assert_int_equal(h.nmarked, 4); /* 6..9: 0..4 already marked, 5 SACKed */
	assert_true(h.rto_armed);
	h_ack(&h, 0, 9); /* after an RTO nothing is marked twice */
	assert_int_equal(h.nmarked, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(irn_init__bdp_cap_and_bad_parameters),
		cmocka_unit_test(irn_incoming__sack_past_cumack_marks_the_holes_once),
		cmocka_unit_test(irn_incoming__recovery_ends_past_recover),
		cmocka_unit_test(irn_incoming__rto_low_with_few_in_flight),
		cmocka_unit_test(irn_periodic__rto_marks_every_unsacked_segment),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
