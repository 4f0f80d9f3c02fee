/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for drivers/proto/dack/dack.c, the endpoint-congestion initiator (Chong and Krishnan,
 * "Addressing Endpoint-induced Congestion for Accelerator Scale-Out in a Medium-Scale Domain":
 * section III.A, OPT's behaviour without endpoint congestion; section II.E and Fig. 2, the halt
 * states; section II.F, recovery): the H-state table driven by scripted IACK / DACK sequences, the
 * window after each event (allowance per IACK 1, 1, 2, ..., then OPT's window), the counter
 * threshold (6 and a parameter), a DACK clearing unused allowance, the probe with nothing in
 * flight, recovery after a NACK at one retransmission per DACK, the RTO, and OPT's windows whenever
 * no DACK comes; a selective NACK (a hole) resends the hole alone, changes no state, and the IACK
 * that ends it counts once per segment it covers. A "room" is what the window lets go now:
 * wnd_start + wnd_segs - snd_nxt.
 */
#include <errno.h>

#include "harness.h"

static void
start(struct harness *h, const char *name, uint64_t segs, uint64_t thresh)
{
	struct sl_flow_conf fc = {.param = {segs, 0, 0, thresh}};

	h_init(h, name, &fc);
}

static int64_t
room(const struct harness *h)
{
	return (int64_t)h->v.wnd_start + h->v.wnd_segs - h->v.snd_nxt;
}

/* The engine with data to send: marked segments first, then what the window allows. */
static void
fill(struct harness *h)
{
	h_send(h, h->v.marked + (uint32_t)SL_MAX(room(h), 0));
}

static void
iack(struct harness *h, uint32_t n)
{
	h_ack(h, h->v.wnd_start + n, -1);
}

static void
dack(struct harness *h)
{
	h_ack(h, h->v.wnd_start, -1);
}

/* Ten segments in flight, then a DACK: H_M1 with the window closed. */
static void
throttled(struct harness *h, uint64_t thresh)
{
	start(h, "dack", 0, thresh);
	h_send(h, 10);
	dack(h);
	assert_int_equal(h->v.wnd_segs, 10);
	assert_int_equal(room(h), 0);
}

/* IACKs of one segment, the window filled after each: the room each one opens. */
static void
expect_climb(struct harness *h, const int64_t *grant, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		uint32_t flight = h->v.snd_nxt - h->v.wnd_start - 1;

		iack(h, 1);
		if (grant[i] < 0) { /* H_INF: OPT's window */
			assert_int_equal(h->v.wnd_segs, H_W);
		} else {
			assert_int_equal(room(h), grant[i]);
			assert_int_equal(h->v.wnd_segs, flight + grant[i]);
		}
		fill(h);
	}
}

static void
dack_init__unthrottled_at_opt_window(void **state)
{
	struct harness h;
	struct sl_flow_conf fc = {.seg_bytes = 1000, .param = {0, 0, 0, UINT64_C(1) << 32}};

	(void)state;
	start(&h, "dack", 0, 0);
	assert_int_equal(h.v.wnd_segs, H_W);
	start(&h, "dack", 40, 0);
	assert_int_equal(h.v.wnd_segs, 40);
	assert_int_equal(h.ops->init(&h.v, h.priv, &fc, &h.out), -EINVAL);
	fc.param[3] = 0;
	fc.param[0] = H_W + 1;
	assert_int_equal(h.ops->init(&h.v, h.priv, &fc, &h.out), -EINVAL);
}

static void
dack_incoming__state_table_threshold_6(void **state)
{
	/* H_M1 -> H_0 (1), H_0 -> H_1 (1), five IACKs in H_1 (2 each), the sixth: H_INF. */
	static const int64_t g[] = {1, 1, 2, 2, 2, 2, 2, -1};
	struct harness h;

	(void)state;
	throttled(&h, 0);
	expect_climb(&h, g, SL_ARRAY_SIZE(g));
	iack(&h, 3); /* H_INF stays unthrottled */
	assert_int_equal(h.v.wnd_segs, H_W);
}

static void
dack_incoming__threshold_is_param3(void **state)
{
	static const int64_t g1[] = {1, 1, -1}, g2[] = {1, 1, 2, -1},
			     g9[] = {1, 1, 2, 2, 2, 2, 2, 2, 2, 2, -1};
	struct harness h;

	(void)state;
	throttled(&h, 1);
	expect_climb(&h, g1, SL_ARRAY_SIZE(g1));
	throttled(&h, 2);
	expect_climb(&h, g2, SL_ARRAY_SIZE(g2));
	throttled(&h, 9);
	expect_climb(&h, g9, SL_ARRAY_SIZE(g9));
}

static void
dack_incoming__dack_in_every_state_returns_to_h_m1(void **state)
{
	static const int64_t g[] = {1, 1, 2, 2, 2, 2, 2, -1};
	struct harness h;

	(void)state;
	/* From H_M1, H_0, H_1 after k IACKs there: the next DACK closes the window, and the
	 * climb starts again from H_M1 with the counter reset. */
	for (unsigned k = 0; k < SL_ARRAY_SIZE(g); k++) {
		throttled(&h, 0);
		expect_climb(&h, g, k);
		dack(&h);
		assert_int_equal(room(&h), 0);
		assert_int_equal(h.v.wnd_segs, h.v.snd_nxt - h.v.wnd_start);
		dack(&h); /* H_M1 on a DACK stays in H_M1 */
		assert_int_equal(room(&h), 0);
		expect_climb(&h, g, SL_ARRAY_SIZE(g));
	}
	/* From H_INF: the first DACK. */
	start(&h, "dack", 0, 0);
	h_send(&h, 50);
	iack(&h, 5);
	assert_int_equal(h.v.wnd_segs, H_W);
	dack(&h);
	assert_int_equal(h.v.wnd_segs, 45);
	expect_climb(&h, g, SL_ARRAY_SIZE(g));
}

static void
dack_incoming__dack_clears_unused_allowance(void **state)
{
	struct harness h;

	(void)state;
	throttled(&h, 0);
	/* The application has nothing more to send: the allowance builds up, 1 + 1 + 2 + 2. */
	iack(&h, 1);
	assert_int_equal(room(&h), 1);
	iack(&h, 1);
	assert_int_equal(room(&h), 2);
	iack(&h, 2); /* an IACK of two segments still grants the state's allowance */
	assert_int_equal(room(&h), 4);
	iack(&h, 1);
	assert_int_equal(room(&h), 6);
	h_send(&h, 4); /* part of it used */
	assert_int_equal(room(&h), 2);
	dack(&h);
	assert_int_equal(room(&h), 0); /* cleared */
	iack(&h, 1);
	assert_int_equal(room(&h), 1); /* H_M1 again: one, nothing left over */
}

static void
dack_incoming__allowance_capped_at_opt_window(void **state)
{
	struct harness h;

	(void)state;
	start(&h, "dack", 12, 0);
	h_send(&h, 10);
	dack(&h);
	for (int i = 0; i < 3; i++)
		iack(&h, 1); /* rooms 1, 2, 4 with 7 in flight: 11 */
	assert_int_equal(h.v.wnd_segs, 11);
	iack(&h, 1); /* 6 in flight + 4 + 2 = 12: OPT's 12 is the most */
	assert_int_equal(h.v.wnd_segs, 12);
	iack(&h, 1);
	assert_int_equal(h.v.wnd_segs, 12);
}

static void
dack_incoming__dack_with_nothing_in_flight_leaves_one_probe(void **state)
{
	struct harness h;

	(void)state;
	throttled(&h, 0);
	iack(&h, 10); /* everything acked: H_0, one new segment allowed */
	assert_int_equal(room(&h), 1);
	dack(&h); /* the decided window is 0, the engine's floor 1: one probe may go */
	assert_int_equal(h.out.wnd_segs, 0);
	assert_int_equal(h.v.wnd_segs, 1);
	assert_int_equal(room(&h), 1);
	h_send(&h, 1);
	assert_int_equal(room(&h), 0);
	iack(&h, 1); /* its IACK clocks the next: H_M1 -> H_0 */
	assert_int_equal(room(&h), 1);
}

static void
dack_incoming__stale_and_other_events_change_nothing(void **state)
{
	struct harness h;
	struct sl_event cnp = {.type = SL_EV_CNP};
	struct sl_event beyond = {.type = SL_EV_ACK, .flags = SL_EVF_CUMACK, .cumack = 1000};
	struct sl_event nack_ev = {.type = SL_EV_NACK, .flags = SL_EVF_CUMACK, .nack_len = 1};

	(void)state;
	throttled(&h, 0);
	iack(&h, 3); /* H_0 */
	fill(&h);
	h_ack(&h, 2, -1); /* stale: below the previous ACK */
	h_event(&h, &cnp, 0);
	h_event(&h, &beyond, 0);
	assert_int_equal(room(&h), 0);
	iack(&h, 1); /* still H_0 (grants 1, to H_1), then H_1 grants 2 */
	assert_int_equal(room(&h), 1);
	iack(&h, 1);
	assert_int_equal(room(&h), 3);
	/* A NACK for nothing sent whose cumack acks everything: no clock, only the probe. */
	dack(&h);
	assert_false(h.out.rto_rearm); /* outside recovery a DACK leaves the RTO alone */
	nack_ev.cumack = nack_ev.nack_seq = h.v.snd_max;
	h_event(&h, &nack_ev, 0);
	assert_int_equal(h.nmarked, 0);
	assert_int_equal(h.v.wnd_start, h.v.snd_max);
	assert_int_equal(room(&h), 1);
}

static void
dack_incoming__nack_one_retransmission_per_dack(void **state)
{
	static const int64_t g[] = {1, 1, 2};
	struct harness h;

	(void)state;
	start(&h, "dack", 20, 0);
	h_send(&h, 20);
	iack(&h, 5);
	h_nack(&h, 8);
	assert_int_equal(h.nmarked, 0); /* no go-back-N */
	assert_int_equal(room(&h), 0);  /* no new data */
	for (uint32_t s = 8; s < 20; s++) {
		dack(&h);
		assert_int_equal(h.nmarked, 1);
		assert_true(sl_flow_is_marked(&h.v, s));
		assert_int_equal(room(&h), 0);
		assert_true(h.out.rto_rearm); /* each DACK shows the target draining */
		fill(&h);
		assert_int_equal(h.v.snd_max, 20); /* only the retransmission went */
		if (s == 12) {
			h_nack(&h, 13); /* at or above rtx_next (13): ignored */
			h_nack(&h, 17);
			assert_int_equal(h.nmarked, 0);
		}
	}
	dack(&h); /* recovery is over: H_M1 */
	assert_int_equal(h.nmarked, 0);
	assert_int_equal(room(&h), 0);
	expect_climb(&h, g, SL_ARRAY_SIZE(g));
}

static void
dack_incoming__recovery_follows_iacks_and_restarts_below(void **state)
{
	struct harness h;

	(void)state;
	start(&h, "dack", 0, 0);
	h_send(&h, 20);
	h_nack(&h, 0);
	dack(&h);
	dack(&h);
	assert_true(sl_flow_is_marked(&h.v, 1));
	fill(&h);
	iack(&h, 6); /* wnd_start 6 passes rtx_next 2 */
	assert_int_equal(room(&h), 0);
	dack(&h);
	assert_true(sl_flow_is_marked(&h.v, 6));
	h_nack(&h, 7); /* at rtx_next: ignored */
	dack(&h);
	assert_true(sl_flow_is_marked(&h.v, 7));
	fill(&h);
	h_nack(&h, 6); /* below rtx_next (8): restart there */
	dack(&h);
	assert_int_equal(h.nmarked, 1);
	assert_true(sl_flow_is_marked(&h.v, 6));
	iack(&h, 14); /* everything acked: out of recovery, H_M1 */
	assert_int_equal(h.v.wnd_start, 20);
	assert_int_equal(room(&h), 1);
	h_send(&h, 1);
	iack(&h, 1);
	assert_int_equal(room(&h), 1); /* H_0: 1, not OPT's window */
}

static void
dack_incoming__nack_cumack_does_not_hide_the_dacks(void **state)
{
	struct harness h;
	struct sl_event ev = {.type = SL_EV_NACK,
			      .flags = SL_EVF_CUMACK,
			      .cumack = 12,
			      .nack_seq = 12,
			      .nack_len = 1};

	(void)state;
	/* lib/ec's NACK carries the expected segment (12) above its last IACK (5), and the engine
	 * slides wnd_start to it; the recovery DACKs repeat 5 and must still clock. */
	start(&h, "dack", 20, 0);
	h_send(&h, 20);
	iack(&h, 5);
	h_event(&h, &ev, 0);
	assert_int_equal(h.v.wnd_start, 12);
	assert_int_equal(room(&h), 0);
	h_ack(&h, 5, -1);
	assert_int_equal(h.nmarked, 1);
	assert_true(sl_flow_is_marked(&h.v, 12));
	h_ack(&h, 4, -1); /* below the previous ACK: stale */
	assert_int_equal(h.nmarked, 0);
	fill(&h);
	h_ack(&h, 7, -1); /* an IACK below wnd_start: the DACKs now repeat 7 */
	h_ack(&h, 7, -1);
	assert_true(sl_flow_is_marked(&h.v, 13));
}

static void
dack_periodic__rto_goes_back_n_then_h_m1(void **state)
{
	static const int64_t g[] = {1, 1, 2};
	struct harness h;

	(void)state;
	start(&h, "dack", 0, 0);
	h_send(&h, 20);
	iack(&h, 4);
	h_periodic(&h, true, false, 1000);
	assert_int_equal(h.nmarked, 16); /* the engine's go-back-N, [4, 20) */
	assert_true(h.rto_armed);
	assert_int_equal(room(&h), 0);
	fill(&h);
	assert_int_equal(h.v.snd_max, 20);
	expect_climb(&h, g, SL_ARRAY_SIZE(g));
	/* An RTO in recovery: go-back-N, then H_M1. */
	h_nack(&h, h.v.wnd_start);
	h_periodic(&h, true, false, 2000);
	assert_int_equal(h.nmarked, h.v.snd_max - h.v.wnd_start);
	fill(&h);
	expect_climb(&h, g, SL_ARRAY_SIZE(g));
	/* Nothing outstanding: nothing to do. */
	iack(&h, h.v.snd_max - h.v.wnd_start);
	h_periodic(&h, true, false, 3000);
	assert_int_equal(h.nmarked, 0);
	assert_false(h.rto_armed);
}

static void
dack_incoming__without_dacks_same_windows_as_opt(void **state)
{
	struct harness o, d;
	struct sl_flow_conf fc = {.param = {48, 30000}};
	struct sl_event cnp = {.type = SL_EV_CNP};
	static const int acks[] = {1, 3, 0, 7, 2, 30, 1, 0, 5, 4, 11};

	(void)state;
	h_init(&o, "opt", &fc);
	h_init(&d, "dack", &fc);
	assert_int_equal(d.v.wnd_segs, 30);
	for (unsigned r = 0; r < 20; r++) {
		for (size_t i = 0; i < SL_ARRAY_SIZE(acks); i++) {
			struct harness *h[2] = {&o, &d};

			for (int k = 0; k < 2; k++) {
				fill(h[k]);
				if (acks[i] == 0) /* a stale ACK, then no ACK at all */
					h_ack(h[k], h[k]->v.wnd_start - 1, -1);
				else if (h[k]->v.snd_max - h[k]->v.wnd_start >= (uint32_t)acks[i])
					iack(h[k], (uint32_t)acks[i]);
				h_event(h[k], &cnp, 0);
			}
			assert_int_equal(d.v.wnd_segs, o.v.wnd_segs);
			assert_int_equal(d.v.snd_max, o.v.snd_max);
			assert_int_equal(d.v.wnd_start, o.v.wnd_start);
			assert_int_equal(d.v.marked, o.v.marked);
		}
	}
	assert_true(d.v.snd_max > 1000);
}

/* A selective NACK of [seq, seq + len) with the target's expected segment as its cumack. */
static void
hole(struct harness *h, uint32_t seq, uint32_t len)
{
	struct sl_event ev = {.type = SL_EV_NACK,
			      .flags = SL_EVF_CUMACK | SL_EVF_HOLE,
			      .cumack = seq,
			      .nack_seq = seq,
			      .nack_len = len};

	h_event(h, &ev, h->v.now_ns);
}

static void
dack_incoming__hole_resent_alone_and_its_iack_counts_what_it_held(void **state)
{
	struct harness h;

	(void)state;
	/* Unthrottled: a hole is a loss, not congestion; OPT's window stays. */
	start(&h, "dack", 0, 0);
	h_send(&h, 20);
	iack(&h, 4);
	hole(&h, 6, 2);
	assert_int_equal(h.nmarked, 2);
	assert_true(sl_flow_is_marked(&h.v, 6) && sl_flow_is_marked(&h.v, 7));
	assert_false(sl_flow_is_marked(&h.v, 8));
	assert_int_equal(h.v.wnd_segs, H_W);
	/* Throttled in H_M1 with ten in flight: the hole changes no state, and the IACK that ends
	 * it after 5 more crossed counts 1 + 5 + ... IACKs: H_M1 -> H_0 -> H_1 and 4 in H_1, a
	 * room of 1 + 1 + 2 x 4 = 10. */
	throttled(&h, 0);
	hole(&h, 0, 1);
	assert_int_equal(h.nmarked, 1);
	assert_int_equal(h.v.wnd_segs, 10);
	assert_int_equal(room(&h), 0);
	fill(&h); /* the resend of 0 */
	iack(&h, 6);
	assert_int_equal(room(&h), 10);
	/* Two IACKs more in H_1 reach the threshold (6): OPT's window. */
	fill(&h);
	iack(&h, 1);
	assert_int_equal(room(&h), 2);
	fill(&h);
	iack(&h, 1);
	assert_int_equal(h.v.wnd_segs, H_W);
	/* Past the hole's end, an IACK of many counts once again. */
	throttled(&h, 0);
	hole(&h, 0, 1);
	fill(&h);
	iack(&h, 1);
	assert_int_equal(room(&h), 1); /* the hole alone: H_M1 -> H_0 */
	fill(&h);
	iack(&h, 3);
	assert_int_equal(room(&h), 1); /* H_0 -> H_1: one IACK, whatever it covers */
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dack_init__unthrottled_at_opt_window),
		cmocka_unit_test(dack_incoming__state_table_threshold_6),
		cmocka_unit_test(dack_incoming__threshold_is_param3),
		cmocka_unit_test(dack_incoming__dack_in_every_state_returns_to_h_m1),
		cmocka_unit_test(dack_incoming__dack_clears_unused_allowance),
		cmocka_unit_test(dack_incoming__allowance_capped_at_opt_window),
		cmocka_unit_test(dack_incoming__dack_with_nothing_in_flight_leaves_one_probe),
		cmocka_unit_test(dack_incoming__stale_and_other_events_change_nothing),
		cmocka_unit_test(dack_incoming__nack_one_retransmission_per_dack),
		cmocka_unit_test(dack_incoming__recovery_follows_iacks_and_restarts_below),
		cmocka_unit_test(dack_incoming__nack_cumack_does_not_hide_the_dacks),
		cmocka_unit_test(dack_incoming__hole_resent_alone_and_its_iack_counts_what_it_held),
		cmocka_unit_test(dack_periodic__rto_goes_back_n_then_h_m1),
		cmocka_unit_test(dack_incoming__without_dacks_same_windows_as_opt),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
