/* SPDX-License-Identifier: BSD-3-Clause */
/* Tests for drivers/proto/newreno/newreno.c: Tonic appendix F (RFC 6582) on scripted acks. */
#include "harness.h"
#include "sl_newreno.h"

static const struct newreno *
nr(const struct harness *h)
{
	return (const struct newreno *)h->priv;
}

static void
start(struct harness *h, uint32_t init_wnd)
{
	struct sl_flow_conf fc = {.init_wnd_segs = init_wnd};

	h_init(h, "newreno", &fc);
}

static void
newreno_init__cwnd_is_initial_window(void **state)
{
	struct harness h;

	(void)state;
	start(&h, 10);
	assert_int_equal(nr(&h)->cwnd, 10);
	assert_int_equal(nr(&h)->ssthresh, H_W);
	assert_int_equal(h.v.wnd_segs, 10);
}

static void
newreno_incoming__slow_start_grows_by_newly_acked(void **state)
{
	struct harness h;

	(void)state;
	start(&h, 10);
	h_send(&h, 10);
	h_ack(&h, 4, -1);
	assert_int_equal(nr(&h)->cwnd, 14);
	assert_int_equal(h.v.wnd_segs, 14);
	assert_true(h.rto_armed);
	assert_int_equal(h.nmarked, 0);
}

static void
newreno_incoming__congestion_avoidance_adds_one_per_window(void **state)
{
	struct harness h;
	uint32_t acks = 0;

	(void)state;
	start(&h, 10);
	h_send(&h, 10);
	h_periodic(&h, true, false, 1000); /* RTO: ssthresh 5, cwnd 1 */
	assert_int_equal(nr(&h)->ssthresh, 5);
	for (uint32_t c = 1; nr(&h)->cwnd < 5; c++) /* slow start back to ssthresh */
		h_ack(&h, c, -1);
	h_send(&h, 20);
	while (nr(&h)->cwnd == 5) {
		h_ack(&h, h.v.wnd_start + 1, -1);
		acks++;
	}
	assert_int_equal(nr(&h)->cwnd, 6);
	assert_int_equal(acks, 6); /* one more segment per cwnd + 1 acks (appendix F counter) */
}

/* Send 20, lose segment 1: cumack 1, then dupacks. */
static void
to_fast_retransmit(struct harness *h)
{
	start(h, 20);
	h_send(h, 20);
	h_ack(h, 1, -1);
	h_ack(h, 1, -1);
	assert_int_equal(h->nmarked, 0);
	assert_int_equal(h->v.wnd_segs, nr(h)->cwnd + 1); /* limited transmit */
	h_ack(h, 1, -1);
	assert_int_equal(h->nmarked, 0);
	h_ack(h, 1, -1);
}

static void
newreno_incoming__third_dupack_fast_retransmits(void **state)
{
	struct harness h;

	(void)state;
	to_fast_retransmit(&h);
	assert_int_equal(h.nmarked, 1);
	assert_true(sl_flow_is_marked(&h.v, 1));
	assert_true(nr(&h)->inrec);
	assert_int_equal(nr(&h)->recover, 19); /* highest sent */
	assert_int_equal(h.v.wnd_segs, 19);    /* wnd = sent: nothing new yet */
	assert_int_equal(nr(&h)->cwnd, 9);     /* sent / 2 */
	assert_int_equal(nr(&h)->ssthresh, 8); /* (sent - dupacks) / 2 */
}

static void
newreno_incoming__dupacks_inflate_once_inflight_below_cwnd(void **state)
{
	struct harness h;

	(void)state;
	to_fast_retransmit(&h);
	h_send(&h, 1); /* the retransmission */
	for (uint32_t d = 0; d < 7; d++)
		h_ack(&h, 1, -1);
	/* dupacks 10, inflight = 19 - 10 = 9 >= cwnd 9: still wnd = sent */
	assert_int_equal(h.v.wnd_segs, 19);
	h_ack(&h, 1, -1);
	assert_int_equal(h.v.wnd_segs, 9 + 11); /* cwnd + dupacks: one new segment */
}

static void
newreno_incoming__partial_ack_marks_next_hole_full_ack_exits(void **state)
{
	struct harness h;

	(void)state;
	to_fast_retransmit(&h);
	h_send(&h, 1);
	h.rto_armed = false;
	h_ack(&h, 5, -1); /* partial: 5 <= recover */
	assert_int_equal(h.nmarked, 1);
	assert_true(sl_flow_is_marked(&h.v, 5));
	assert_true(nr(&h)->inrec);
	assert_false(h.rto_armed); /* not re-armed inside recovery */
	h_send(&h, 1);
	h_ack(&h, 20, -1); /* full: past recover */
	assert_false(nr(&h)->inrec);
	assert_int_equal(h.nmarked, 0);
	assert_false(h.rto_armed); /* nothing outstanding: stopped */
	h_ack(&h, 20, -1);
	assert_int_equal(nr(&h)->dupacks, 0); /* no data outstanding: not a dupack */
}

static void
newreno_periodic__rto_marks_head_and_resets_window(void **state)
{
	struct harness h;

	(void)state;
	start(&h, 10);
	h_send(&h, 10);
	h_periodic(&h, true, false, 5000);
	assert_int_equal(h.nmarked, 1);
	assert_true(sl_flow_is_marked(&h.v, 0));
	assert_int_equal(h.v.wnd_segs, 1);
	assert_int_equal(nr(&h)->cwnd, 1);
	assert_int_equal(nr(&h)->ssthresh, 5);
	assert_int_equal(nr(&h)->recover, 9);
	assert_true(h.rto_armed);
	/* after the timeout a new ack at or below recover marks the next hole */
	h_send(&h, 1);
	h_ack(&h, 3, -1);
	assert_true(sl_flow_is_marked(&h.v, 3));
}

static void
newreno_periodic__idle_flow_ignores_rto(void **state)
{
	struct harness h;

	(void)state;
	start(&h, 10);
	h_periodic(&h, true, false, 5000);
	assert_int_equal(nr(&h)->cwnd, 10);
	assert_int_equal(h.nmarked, 0);
	assert_false(h.rto_armed);
}

static void
newreno_incoming__ignores_other_events(void **state)
{
	struct harness h;
	struct sl_event cnp = {.type = SL_EV_CNP};

	(void)state;
	start(&h, 10);
	h_send(&h, 10);
	h_event(&h, &cnp, 100);
	assert_int_equal(nr(&h)->cwnd, 10);
	assert_int_equal(h.v.wnd_segs, 10);
}

static void
newreno_incoming__sequence_wrap(void **state)
{
	struct sl_flow_conf fc = {.init_wnd_segs = 20, .first_seq = UINT32_MAX - 2};
	uint32_t b = fc.first_seq;
	struct harness h;

	(void)state;
	h_init(&h, "newreno", &fc);
	h_send(&h, 20);
	for (int i = 0; i < 4; i++) /* a new ack, then 3 dupacks: b + 1 lost */
		h_ack(&h, b + 1, -1);
	assert_true(sl_flow_is_marked(&h.v, b + 1));
	assert_int_equal(nr(&h)->recover, b + 19);
	h_send(&h, 1);
	h_ack(&h, b + 6, -1); /* partial, across 2^32 */
	assert_true(sl_flow_is_marked(&h.v, b + 6));
	h_send(&h, 1);
	h_ack(&h, b + 20, -1);
	assert_false(nr(&h)->inrec);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(newreno_init__cwnd_is_initial_window),
		cmocka_unit_test(newreno_incoming__slow_start_grows_by_newly_acked),
		cmocka_unit_test(newreno_incoming__congestion_avoidance_adds_one_per_window),
		cmocka_unit_test(newreno_incoming__third_dupack_fast_retransmits),
		cmocka_unit_test(newreno_incoming__dupacks_inflate_once_inflight_below_cwnd),
		cmocka_unit_test(newreno_incoming__partial_ack_marks_next_hole_full_ack_exits),
		cmocka_unit_test(newreno_periodic__rto_marks_head_and_resets_window),
		cmocka_unit_test(newreno_periodic__idle_flow_ignores_rto),
		cmocka_unit_test(newreno_incoming__ignores_other_events),
		cmocka_unit_test(newreno_incoming__sequence_wrap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
