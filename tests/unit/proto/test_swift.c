/* SPDX-License-Identifier: BSD-3-Clause */
/* Tests for drivers/proto/swift/swift.c: additive increase below target, bounded decrease. */
#include "harness.h"

#define US SL_NS_PER_US

static void
start(struct harness *h)
{
	struct sl_flow_conf fc = {.init_wnd_segs = 10, .param = {25 * US}};

	h_init(h, "swift", &fc);
	h_send(h, 40);
	h->v.now_ns = 1000 * US;
}

/* An ack of one segment whose send time was rtt_ns ago. */
static void
ack_rtt(struct harness *h, uint64_t rtt_ns)
{
	struct sl_event ev = {.type = SL_EV_ACK,
			      .flags = SL_EVF_CUMACK | SL_EVF_TS,
			      .cumack = h->v.wnd_start + 1};

	h->v.now_ns += US;
	ev.echo_ts_ns = h->v.now_ns - rtt_ns;
	h_event(h, &ev, h->v.now_ns);
}

static void
swift_incoming__grows_one_segment_per_window_below_target(void **state)
{
	struct harness h;

	(void)state;
	start(&h);
	for (int i = 0; i < 10; i++)
		ack_rtt(&h, 5 * US);
	assert_int_equal(h.v.wnd_segs, 10); /* 10 x 25.6/256 short of a segment */
	ack_rtt(&h, 5 * US);
	assert_int_equal(h.v.wnd_segs, 11);
}

static void
swift_incoming__cuts_in_proportion_to_excess_delay_once_per_rtt(void **state)
{
	struct harness h;

	(void)state;
	start(&h);
	ack_rtt(&h, 50 * US); /* 1 - 0.8 x 25/50 = 0.6: 10 -> 6 */
	assert_int_equal(h.v.wnd_segs, 6);
	ack_rtt(&h, 50 * US); /* within one RTT of the cut: no second cut */
	assert_int_equal(h.v.wnd_segs, 6);
	h.v.now_ns += 2000 * US; /* more than one (1 ms) RTT after the cut */
	ack_rtt(&h, 1000 * US);  /* capped at max_mdf: halved, not cut by 78% */
	assert_int_equal(h.v.wnd_segs, 3);
}

static void
swift_periodic__rto_resets_to_one_segment(void **state)
{
	struct harness h;

	(void)state;
	start(&h);
	h_periodic(&h, true, false, h.v.now_ns);
	assert_int_equal(h.v.wnd_segs, 1);
	assert_true(sl_flow_is_marked(&h.v, 0));
	assert_true(h.rto_armed);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(swift_incoming__grows_one_segment_per_window_below_target),
		cmocka_unit_test(swift_incoming__cuts_in_proportion_to_excess_delay_once_per_rtt),
		cmocka_unit_test(swift_periodic__rto_resets_to_one_segment),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
