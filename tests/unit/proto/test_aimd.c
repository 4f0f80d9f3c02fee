/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for drivers/proto/aimd/aimd.c: the initial window, linear growth of about one segment
 * per RTT, halving on a NACK at most once per window of data, the cap at OPT's window, duplicate
 * ACKs ignored, the RTO. Segments of 1000 bytes.
 */
#include "harness.h"

static void
start(struct harness *h, uint64_t segs, uint64_t bytes, uint64_t cwnd_bytes)
{
	struct sl_flow_conf fc = {.param = {segs, bytes, cwnd_bytes}};

	h_init(h, "aimd", &fc);
}

/* One RTT: send the window, then its acks, one per segment (per_seg) or all in one. */
static void
rtt(struct harness *h, bool per_seg)
{
	uint32_t n = h->v.wnd_start + h->v.wnd_segs - h->v.snd_nxt;

	h_send(h, n);
	if (!per_seg) {
		h_ack(h, h->v.snd_max, -1);
		return;
	}
	while (h->v.wnd_start != h->v.snd_max)
		h_ack(h, h->v.wnd_start + 1, -1);
}

static void
aimd_init__initial_window_and_cap(void **state)
{
	struct harness h;

	(void)state;
	start(&h, 0, 0, 0);
	assert_int_equal(h.v.wnd_segs, 10); /* 10 segments by default */
	start(&h, 0, 0, 25500);
	assert_int_equal(h.v.wnd_segs, 25); /* param[2] bytes, whole segments */
	start(&h, 16, 0, 25000);
	assert_int_equal(h.v.wnd_segs, 16); /* capped at OPT's packets */
	start(&h, 0, 12500, 25000);
	assert_int_equal(h.v.wnd_segs, 12); /* capped at OPT's bytes */
	start(&h, 0, 0, 10);
	assert_int_equal(h.v.wnd_segs, 1); /* at least one segment */
}

static void
aimd_incoming__one_segment_per_rtt(void **state)
{
	struct harness h;

	(void)state;
	/* A window acked by one ACK adds exactly seg_bytes: 10 x 1000^2 / 10000. */
	start(&h, 0, 0, 0);
	for (uint32_t k = 1; k <= 5; k++) {
		rtt(&h, false);
		assert_int_equal(h.v.wnd_segs, 10 + k);
	}
	/* One ACK per segment: the same, but for rounding and the growth inside the RTT. */
	start(&h, 0, 0, 0);
	for (uint32_t k = 1; k <= 20; k++) {
		rtt(&h, true);
		assert_in_range(h.v.wnd_segs, 10 + k - 1, 10 + k);
	}
	assert_true(h.rto_armed || h.v.wnd_start == h.v.snd_max);
}

static void
aimd_incoming__nack_halves_once_per_window(void **state)
{
	struct harness h;

	(void)state;
	start(&h, 0, 0, 20000);
	h_send(&h, 20);
	h_ack(&h, 2, -1);
	assert_int_equal(h.v.wnd_segs, 20);
	h_nack(&h, 5);
	assert_int_equal(h.v.wnd_segs, 10); /* halved */
	assert_int_equal(h.nmarked, 15);    /* go-back-N: [5, 20) */
	h_nack(&h, 5);
	assert_int_equal(h.v.wnd_segs, 10); /* the same window of data: no second cut */
	h_send(&h, 15);
	h_ack(&h, 12, -1);
	assert_int_equal(h.v.wnd_segs, 10); /* no growth before the recovery point */
	h_nack(&h, 12);
	assert_int_equal(h.v.wnd_segs, 10);
	assert_int_equal(h.nmarked, 8); /* but every NACK goes back N */
	h_send(&h, 8);
	h_ack(&h, 20, -1); /* wnd_start reaches snd_max of the cut: recovery is over */
	assert_int_equal(h.v.wnd_segs, 10);
	h_send(&h, 10);
	h_nack(&h, 25);
	assert_int_equal(h.v.wnd_segs, 5); /* a new window of data: cut again */
	h_nack(&h, 26);
	assert_int_equal(h.v.wnd_segs, 5);
}

static void
aimd_incoming__halving_stops_at_one_segment(void **state)
{
	struct harness h;

	(void)state;
	start(&h, 0, 0, 1000);
	h_send(&h, 1);
	h_nack(&h, 0);
	assert_int_equal(h.v.wnd_segs, 1);
	assert_int_equal(h.out.wnd_segs, 1); /* decided, not the engine's clamp */
}

static void
aimd_incoming__growth_capped_at_opt_window(void **state)
{
	struct harness h;

	(void)state;
	start(&h, 12, 0, 11000);
	for (int k = 0; k < 10; k++) {
		rtt(&h, false);
		assert_true(h.v.wnd_segs <= 12);
	}
	assert_int_equal(h.v.wnd_segs, 12);
	start(&h, 0, 12999, 11000);
	for (int k = 0; k < 10; k++)
		rtt(&h, false);
	assert_int_equal(h.v.wnd_segs, 12);
}

static void
aimd_incoming__duplicate_acks_are_no_signal(void **state)
{
	struct harness h;

	(void)state;
	start(&h, 0, 0, 0);
	h_send(&h, 10);
	h_ack(&h, 1, -1);
	for (int i = 0; i < 10; i++) {
		h_ack(&h, 1, -1);
		assert_int_equal(h.v.wnd_segs, 10);
		assert_int_equal(h.nmarked, 0);
	}
}

static void
aimd_periodic__rto_one_segment_and_go_back_n(void **state)
{
	struct harness h;

	(void)state;
	start(&h, 0, 0, 20000);
	h_send(&h, 20);
	h_ack(&h, 4, -1);
	h_periodic(&h, true, false, 5000);
	assert_int_equal(h.v.wnd_segs, 1);
	assert_int_equal(h.nmarked, 16); /* the engine's go-back-N */
	assert_true(h.rto_armed);
	h_nack(&h, 4);
	assert_int_equal(h.v.wnd_segs, 1); /* the same loss: no further cut */
	h_send(&h, 16);
	h_ack(&h, 20, -1); /* 16 x 1000^2 / 1000 bytes due, but one ACK adds one segment */
	assert_int_equal(h.v.wnd_segs, 2);
	h_send(&h, 2);
	h_ack(&h, 22, -1); /* + 2 x 1000^2 / 2000 */
	assert_int_equal(h.v.wnd_segs, 3);
	h_periodic(&h, true, false, 6000); /* nothing outstanding: nothing to do */
	assert_int_equal(h.v.wnd_segs, 3);
	assert_int_equal(h.nmarked, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(aimd_init__initial_window_and_cap),
		cmocka_unit_test(aimd_incoming__one_segment_per_rtt),
		cmocka_unit_test(aimd_incoming__nack_halves_once_per_window),
		cmocka_unit_test(aimd_incoming__halving_stops_at_one_segment),
		cmocka_unit_test(aimd_incoming__growth_capped_at_opt_window),
		cmocka_unit_test(aimd_incoming__duplicate_acks_are_no_signal),
		cmocka_unit_test(aimd_periodic__rto_one_segment_and_go_back_n),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
