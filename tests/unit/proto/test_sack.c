/* SPDX-License-Identifier: BSD-3-Clause */
/* Tests for drivers/proto/sack/sack.c: RFC 6675 IsLost, pipe, NextSeg rules 1 and 2, RTO. */
#include "harness.h"

/* 20 sent; segment 0 acked; segment 1 lost; SACKs for 2..last arrive one by one. */
static void
start(struct harness *h)
{
	struct sl_flow_conf fc = {.init_wnd_segs = 20};

	h_init(h, "sack", &fc);
	h_send(h, 20);
	h_ack(h, 1, -1);
	assert_int_equal(h->v.wnd_segs, 21);
}

static void
sacks(struct harness *h, uint32_t from, uint32_t to, uint32_t skip)
{
	for (uint32_t s = from; s <= to; s++)
		if (s != skip)
			h_ack(h, h->v.wnd_start, s);
}

static void
sack_incoming__third_sack_above_a_hole_retransmits_it(void **state)
{
	struct harness h;

	(void)state;
	start(&h);
	sacks(&h, 2, 3, 0);
	assert_int_equal(h.nmarked, 0); /* two SACKs above: not lost yet */
	assert_int_equal(h.v.wnd_segs, 21);
	sacks(&h, 4, 4, 0);
	assert_int_equal(h.nmarked, 1);
	assert_true(sl_flow_is_marked(&h.v, 1));
	assert_int_equal(h.v.wnd_segs, 19); /* cwnd 9 < pipe 16: nothing new */
}

static void
sack_incoming__pipe_opens_new_data_then_the_next_hole(void **state)
{
	struct harness h;

	(void)state;
	start(&h);
	sacks(&h, 2, 11, 7); /* 7 is lost too; pipe = 20 - sacked - lost + rtx */
	assert_false(sl_flow_is_marked(&h.v, 7));
	h_ack(&h, 1, 12); /* pipe 8 < cwnd 9: rule 1 resends 7 */
	assert_true(sl_flow_is_marked(&h.v, 7));
	assert_int_equal(h.nmarked, 1);
	assert_int_equal(h.v.wnd_segs, 19); /* the budget went to the retransmission */
	h_ack(&h, 1, 13);
	assert_int_equal(h.nmarked, 0);
	assert_int_equal(h.v.wnd_segs, 20); /* rule 2: one new segment */
}

static void
sack_incoming__recovery_ends_past_recovery_point(void **state)
{
	struct harness h;

	(void)state;
	start(&h);
	sacks(&h, 2, 19, 0);
	h_send(&h, 1);
	h_ack(&h, 20, -1);
	assert_int_equal(h.v.wnd_segs, 9); /* cwnd = ssthresh = 19 / 2 */
	assert_false(h.rto_armed);         /* nothing outstanding */
}

static void
sack_periodic__rto_then_every_unsacked_hole_in_slow_start(void **state)
{
	struct harness h;

	(void)state;
	start(&h);
	sacks(&h, 5, 6, 0);
	h_periodic(&h, true, false, 1000);
	assert_int_equal(h.v.wnd_segs, 1);
	assert_int_equal(h.nmarked, 1); /* the first unacked: 1 */
	h_send(&h, 1);
	h_ack(&h, 2, -1); /* cwnd 2: 2 and 3 are resent, 5 and 6 are not */
	assert_int_equal(h.nmarked, 2);
	assert_true(sl_flow_is_marked(&h.v, 2) && sl_flow_is_marked(&h.v, 3));
	h_send(&h, 2);
	h_ack(&h, 4, -1); /* cwnd 4, pipe 0: 4, 7, 8, 9 (5, 6 SACKed) */
	assert_int_equal(h.nmarked, 4);
	assert_true(sl_flow_is_marked(&h.v, 4) && sl_flow_is_marked(&h.v, 7));
	assert_false(sl_flow_is_marked(&h.v, 5) || sl_flow_is_marked(&h.v, 6));
	assert_true(sl_flow_is_marked(&h.v, 9) && !sl_flow_is_marked(&h.v, 10));
}

static void
sack_incoming__sequence_wrap(void **state)
{
	struct sl_flow_conf fc = {.init_wnd_segs = 20, .first_seq = UINT32_MAX - 4};
	uint32_t b = fc.first_seq;
	struct harness h;

	(void)state;
	h_init(&h, "sack", &fc);
	h_send(&h, 20); /* segments b .. b + 19 straddle 2^32 */
	h_ack(&h, b + 1, -1);
	for (uint32_t k = 2; k <= 4; k++) /* b + 1 lost, three SACKs above it */
		h_ack(&h, b + 1, b + k);
	assert_int_equal(h.nmarked, 1);
	assert_true(sl_flow_is_marked(&h.v, b + 1));
	h_send(&h, 1);
	h_ack(&h, b + 20, -1); /* past the recovery point, across the wrap */
	assert_int_equal(h.v.wnd_segs, 9);
	assert_false(h.rto_armed);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sack_incoming__third_sack_above_a_hole_retransmits_it),
		cmocka_unit_test(sack_incoming__pipe_opens_new_data_then_the_next_hole),
		cmocka_unit_test(sack_incoming__recovery_ends_past_recovery_point),
		cmocka_unit_test(sack_periodic__rto_then_every_unsacked_hole_in_slow_start),
		cmocka_unit_test(sack_incoming__sequence_wrap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
