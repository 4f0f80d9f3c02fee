/* SPDX-License-Identifier: BSD-3-Clause */
/* Tests for drivers/proto/dctcp/dctcp.c: alpha from the marked fraction, one cut per window. */
#include "harness.h"

static void
start(struct harness *h)
{
	struct sl_flow_conf fc = {.init_wnd_segs = 20};

	h_init(h, "dctcp", &fc);
	h_send(h, 20);
}

/* Ack segment by segment up to cumack, every segment CE-marked or not. */
static void
acks(struct harness *h, uint32_t to, bool ce)
{
	while (h->v.wnd_start != to) {
		struct sl_event ev = {
			.type = SL_EV_ACK, .flags = SL_EVF_CUMACK, .cumack = h->v.wnd_start + 1};

		if (ce) {
			ev.flags |= SL_EVF_ECE;
			ev.ce_segs = 1;
		}
		h_event(h, &ev, h->v.now_ns + 100);
	}
}

static void
dctcp_incoming__first_mark_cuts_by_half_alpha_once_per_window(void **state)
{
	struct harness h;

	(void)state;
	start(&h);
	acks(&h, 1, false); /* closes the initial empty window: alpha 1 - 1/16 */
	acks(&h, 2, true);  /* cwnd 21 x (1 - 0.9375 / 2) */
	assert_int_equal(h.v.wnd_segs, 21 - ((21 * 960) >> 11));
	acks(&h, 10, true); /* the same window: no second cut, no growth */
	assert_int_equal(h.v.wnd_segs, 21 - ((21 * 960) >> 11));
}

static void
dctcp_incoming__alpha_follows_the_marked_fraction(void **state)
{
	struct harness h;
	uint32_t w0, w1;

	(void)state;
	start(&h);
	acks(&h, 1, false);
	acks(&h, 20, false); /* a window without marks: alpha 0.9375 -> 0.8789 */
	w0 = h.v.wnd_segs;
	h_send(&h, w0);
	acks(&h, 21, true); /* cut by alpha / 2 = 0.44 */
	w1 = h.v.wnd_segs;
	assert_true(w1 >= w0 * 54 / 100 && w1 <= w0 * 58 / 100);
}

static void
dctcp_incoming__third_dupack_halves_and_retransmits(void **state)
{
	struct harness h;

	(void)state;
	start(&h);
	acks(&h, 1, false);
	for (int i = 0; i < 3; i++)
		h_ack(&h, 1, -1);
	assert_true(sl_flow_is_marked(&h.v, 1));
	assert_int_equal(h.v.wnd_segs, 9 + 3); /* ssthresh 19 / 2 plus the dupacks */
}

static void
dctcp_periodic__rto_restarts_from_one_segment(void **state)
{
	struct harness h;

	(void)state;
	start(&h);
	h_periodic(&h, true, false, 1000);
	assert_int_equal(h.v.wnd_segs, 1);
	assert_true(sl_flow_is_marked(&h.v, 0));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dctcp_incoming__first_mark_cuts_by_half_alpha_once_per_window),
		cmocka_unit_test(dctcp_incoming__alpha_follows_the_marked_fraction),
		cmocka_unit_test(dctcp_incoming__third_dupack_halves_and_retransmits),
		cmocka_unit_test(dctcp_periodic__rto_restarts_from_one_segment),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
