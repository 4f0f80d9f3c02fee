/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for drivers/proto/opt/opt.c: the window from the outstanding-packet and -byte
 * thresholds, go-back-N on a NACK, no reaction to duplicate ACKs, the engine's RTO.
 */
#include <errno.h>

#include "harness.h"

static void
start(struct harness *h, uint64_t segs, uint64_t bytes)
{
	struct sl_flow_conf fc = {.param = {segs, bytes}};

	h_init(h, "opt", &fc);
}

static void
opt_init__window_from_packet_and_byte_thresholds(void **state)
{
	static const struct {
		uint64_t segs, bytes;
		uint32_t wnd;
	} c[] = {
		{0, 0, H_W},     /* defaults: the ring W, no byte limit */
		{20, 0, 20},     /* packets */
		{0, 5500, 5},    /* bytes / seg_bytes, rounded down */
		{20, 30000, 20}, /* the smaller of the two */
		{40, 30000, 30}, /* the smaller of the two */
		{H_W, 0, H_W},   /* the most */
		{0, 999, 1},     /* less than a segment: still one */
		{1, 1000000, 1}, /* one segment */
	};
	struct harness h;

	(void)state;
	for (size_t i = 0; i < SL_ARRAY_SIZE(c); i++) {
		start(&h, c[i].segs, c[i].bytes);
		assert_int_equal(h.v.wnd_segs, c[i].wnd);
		assert_int_equal(h.out.wnd_segs, c[i].wnd); /* as decided, not clamped */
	}
}

static void
opt_init__more_packets_than_the_ring_refused(void **state)
{
	struct harness h;
	struct sl_flow_conf fc = {.seg_bytes = 1000, .param = {H_W + 1}};

	(void)state;
	start(&h, 0, 0);
	assert_int_equal(h.ops->init(&h.v, h.priv, &fc, &h.out), -EINVAL);
}

static void
opt_incoming__nack_goes_back_n(void **state)
{
	struct harness h;
	struct sl_event nack = {.type = SL_EV_NACK, .nack_seq = 8, .nack_len = 1};

	(void)state;
	start(&h, 20, 0);
	h_send(&h, 20);
	h_ack(&h, 5, -1);
	h_event(&h, &nack, 1000);
	assert_int_equal(h.nmarked, 12); /* [8, 20) */
	assert_false(sl_flow_is_marked(&h.v, 7));
	assert_true(sl_flow_is_marked(&h.v, 8));
	assert_true(sl_flow_is_marked(&h.v, 19));
	assert_int_equal(h.v.wnd_segs, 20); /* no congestion control */
	/* A MELO hole [10, 12) marks from it on: what is already marked is not counted again. */
	nack.nack_seq = 10;
	nack.nack_len = 2;
	h_event(&h, &nack, 2000);
	assert_int_equal(h.nmarked, 0);
	h_send(&h, 12);
	h_event(&h, &nack, 3000);
	assert_int_equal(h.nmarked, 10); /* [10, 20) */
	/* A NACK for what was never sent marks nothing. */
	h_send(&h, 10);
	nack.nack_seq = 20;
	h_event(&h, &nack, 4000);
	assert_int_equal(h.nmarked, 0);
}

static void
opt_incoming__duplicate_acks_change_nothing(void **state)
{
	struct harness h;

	(void)state;
	start(&h, 20, 0);
	h_send(&h, 20);
	h_ack(&h, 3, -1);
	for (int i = 0; i < 10; i++) {
		h_ack(&h, 3, -1);
		assert_int_equal(h.nmarked, 0);
		assert_int_equal(h.v.wnd_segs, 20);
	}
	h_ack(&h, 2, -1); /* stale */
	assert_int_equal(h.v.wnd_segs, 20);
	assert_int_equal(h.v.marked, 0);
}

static void
opt_periodic__rto_goes_back_n(void **state)
{
	struct harness h;

	(void)state;
	start(&h, 20, 0);
	h_send(&h, 20);
	h_ack(&h, 4, -1);
	h_periodic(&h, true, false, 5000);
	assert_int_equal(h.nmarked, 16); /* the engine's default: [wnd_start, snd_max) */
	assert_true(h.rto_armed);
	assert_int_equal(h.v.wnd_segs, 20);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(opt_init__window_from_packet_and_byte_thresholds),
		cmocka_unit_test(opt_init__more_packets_than_the_ring_refused),
		cmocka_unit_test(opt_incoming__nack_goes_back_n),
		cmocka_unit_test(opt_incoming__duplicate_acks_change_nothing),
		cmocka_unit_test(opt_periodic__rto_goes_back_n),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
