/* SPDX-License-Identifier: BSD-3-Clause */
/* Tests for drivers/proto/reno/reno.c: fast retransmit, inflation, deflation, RTO. */
#include "harness.h"

static void
start(struct harness *h)
{
	struct sl_flow_conf fc = {.init_wnd_segs = 20};

	h_init(h, "reno", &fc);
	h_send(h, 20);
	h_ack(h, 1, -1);
}

static void
reno_incoming__slow_start_grows_per_acked_segment(void **state)
{
	struct harness h;

	(void)state;
	start(&h);
	assert_int_equal(h.v.wnd_segs, 21);
	h_ack(&h, 4, -1);
	assert_int_equal(h.v.wnd_segs, 24);
	assert_true(h.rto_armed);
}

static void
reno_incoming__third_dupack_halves_and_inflates(void **state)
{
	struct harness h;

	(void)state;
	start(&h);
	h_ack(&h, 1, -1);
	h_ack(&h, 1, -1);
	assert_int_equal(h.nmarked, 0);
	assert_int_equal(h.v.wnd_segs, 21); /* no change before the threshold */
	h_ack(&h, 1, -1);
	assert_int_equal(h.nmarked, 1);
	assert_true(sl_flow_is_marked(&h.v, 1));
	assert_int_equal(h.v.wnd_segs, 9 + 3); /* ssthresh = 19 / 2, plus 3 dupacks */
	h_ack(&h, 1, -1);
	assert_int_equal(h.v.wnd_segs, 9 + 4);
	assert_int_equal(h.nmarked, 0); /* one retransmission per loss event */
}

static void
reno_incoming__new_ack_deflates_without_marking(void **state)
{
	struct harness h;

	(void)state;
	start(&h);
	for (int i = 0; i < 5; i++)
		h_ack(&h, 1, -1);
	h_send(&h, 1);
	h_ack(&h, 6, -1); /* a partial ack: Reno leaves recovery anyway */
	assert_int_equal(h.v.wnd_segs, 9);
	assert_int_equal(h.nmarked, 0);
	h_ack(&h, 6, -1);
	h_ack(&h, 6, -1);
	h_ack(&h, 6, -1); /* a second loss needs three fresh dupacks */
	assert_true(sl_flow_is_marked(&h.v, 6));
}

static void
reno_periodic__rto_restarts_from_one_segment(void **state)
{
	struct harness h;

	(void)state;
	start(&h);
	h_periodic(&h, true, false, 1000);
	assert_int_equal(h.v.wnd_segs, 1);
	assert_true(sl_flow_is_marked(&h.v, 1));
	assert_true(h.rto_armed);
	h_send(&h, 1);
	h_ack(&h, 20, -1);
	h_periodic(&h, true, false, 2000); /* nothing outstanding: no action */
	assert_int_equal(h.nmarked, 0);
	assert_false(h.rto_armed);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reno_incoming__slow_start_grows_per_acked_segment),
		cmocka_unit_test(reno_incoming__third_dupack_halves_and_inflates),
		cmocka_unit_test(reno_incoming__new_ack_deflates_without_marking),
		cmocka_unit_test(reno_periodic__rto_restarts_from_one_segment),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
