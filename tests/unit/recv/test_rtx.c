/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for lib/recv/rtx.c: the sender-side bitmap rebuilt from NACKs (marks, takes, repeated
 * holes, cumulative ACKs, RTO, its own pool running dry, bad NACKs), and a closed loop with the
 * receiver over a lossy channel: only holes are resent, and a lost retransmission is recovered
 * by the RTO (requirements 8 and 9 of melo.md, section 6).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sl_recv.h"
#include "sl_rng.h"

static struct sl_recv_rtx *
mk(uint32_t flows, uint32_t pool_bits)
{
	struct sl_recv_rtx_conf c = {
		.max_flows = flows, .window_pkts = 1024, .pool_bits = pool_bits, .block_bits = 8};
	struct sl_recv_rtx *t = sl_recv_rtx_create(&c);

	assert_non_null(t);
	return t;
}

static struct sl_recv_fb
nack(uint32_t ack, unsigned n, const uint32_t (*holes)[2])
{
	struct sl_recv_fb fb = {.ack_psn = ack, .nholes = (uint8_t)n};

	for (unsigned i = 0; i < n; i++)
		fb.hole[i] = (struct sl_recv_hole){holes[i][0], (uint16_t)holes[i][1]};
	return fb;
}

static void
sl_recv_rtx_create__rejects_bad_conf(void **state)
{
	struct sl_recv_rtx_conf c = {
		.max_flows = 1, .window_pkts = 1000, .pool_bits = 1024, .block_bits = 8};

	(void)state;
	assert_null(sl_recv_rtx_create(&c));
	assert_int_equal(errno, EINVAL);
	c.window_pkts = 1024;
	c.block_bits = 3;
	assert_null(sl_recv_rtx_create(&c));
	assert_int_equal(errno, EINVAL);
	c.block_bits = 8;
	c.max_flows = 0;
	assert_null(sl_recv_rtx_create(&c));
	assert_int_equal(sl_recv_rtx_flow_bytes(), 16);
}

static void
sl_recv_rtx_nack__marks_holes_and_take_returns_ranges(void **state)
{
	struct sl_recv_rtx *t = mk(1, 1024);
	const uint32_t h[3][2] = {{30, 5}, {20, 2}, {10, 3}}; /* newest first */
	struct sl_recv_fb fb = nack(10, 3, h);
	struct sl_recv_range out[4];

	(void)state;
	assert_int_equal(sl_recv_rtx_flow_open(t, 0, 0), 0);
	assert_int_equal(sl_recv_rtx_flow_open(t, 0, 0), -EEXIST);
	assert_int_equal(sl_recv_rtx_nack(t, 0, &fb), 10);
	assert_int_equal(sl_recv_rtx_marked(t, 0), 10);
	/* Blocks from 10's block (8..15) to 34's block (32..39): 4 blocks. */
	assert_int_equal(sl_recv_rtx_pool_used_blocks(t), 4);
	assert_int_equal(sl_recv_rtx_audit(t), 0);
	assert_int_equal(sl_recv_rtx_take(t, 0, out, 4, 4), 2);
	assert_int_equal(out[0].start_psn, 10);
	assert_int_equal(out[0].len_pkts, 3);
	assert_int_equal(out[1].start_psn, 20);
	assert_int_equal(out[1].len_pkts, 1);
	assert_int_equal(sl_recv_rtx_take(t, 0, out, 4, 100), 2);
	assert_int_equal(out[0].start_psn, 21);
	assert_int_equal(out[0].len_pkts, 1);
	assert_int_equal(out[1].start_psn, 30);
	assert_int_equal(out[1].len_pkts, 5);
	assert_int_equal(sl_recv_rtx_marked(t, 0), 0);
	assert_int_equal(sl_recv_rtx_pool_used_blocks(t), 0);
	assert_int_equal(sl_recv_rtx_audit(t), 0);
	sl_recv_rtx_free(t);
}

static void
sl_recv_rtx_nack__repeated_holes_are_not_marked_again(void **state)
{
	struct sl_recv_rtx *t = mk(1, 1024);
	const uint32_t h1[1][2] = {{10, 3}};
	const uint32_t h2[2][2] = {{20, 4}, {11, 2}}; /* 10 came back; the old hole repeats */
	struct sl_recv_fb fb = nack(10, 1, h1);
	struct sl_recv_range out[4];
	struct sl_recv_rtx_stats st;

	(void)state;
	sl_recv_rtx_flow_open(t, 0, 0);
	assert_int_equal(sl_recv_rtx_nack(t, 0, &fb), 3);
	assert_int_equal(sl_recv_rtx_take(t, 0, out, 4, 100), 1);
	fb = nack(11, 2, h2);
	assert_int_equal(sl_recv_rtx_nack(t, 0, &fb), 4);
	assert_int_equal(sl_recv_rtx_take(t, 0, out, 4, 100), 1);
	assert_int_equal(out[0].start_psn, 20);
	assert_int_equal(out[0].len_pkts, 4);
	sl_recv_rtx_stats_get(t, &st);
	assert_int_equal(st.pkts_repeated, 2);
	assert_int_equal(st.pkts_marked, 7);
	assert_int_equal(st.pkts_taken, 7);
	sl_recv_rtx_free(t);
}

static void
sl_recv_rtx_ack__drops_marks_behind_the_ack(void **state)
{
	struct sl_recv_rtx *t = mk(1, 1024);
	const uint32_t h[2][2] = {{40, 4}, {5, 20}};
	struct sl_recv_fb fb = nack(5, 2, h);
	struct sl_recv_range out[2];
	struct sl_recv_rtx_stats st;

	(void)state;
	sl_recv_rtx_flow_open(t, 0, 0);
	assert_int_equal(sl_recv_rtx_nack(t, 0, &fb), 24);
	assert_int_equal(sl_recv_rtx_ack(t, 0, 30), 0);
	assert_int_equal(sl_recv_rtx_marked(t, 0), 4);
	assert_int_equal(sl_recv_rtx_audit(t), 0);
	assert_int_equal(sl_recv_rtx_take(t, 0, out, 2, 100), 1);
	assert_int_equal(out[0].start_psn, 40);
	sl_recv_rtx_stats_get(t, &st);
	assert_int_equal(st.pkts_acked_marked, 20);
	assert_int_equal(sl_recv_rtx_ack(t, 1, 30), -EINVAL);
	sl_recv_rtx_free(t);
}

static void
sl_recv_rtx_rto__clears_the_bitmap(void **state)
{
	struct sl_recv_rtx *t = mk(1, 1024);
	const uint32_t h[1][2] = {{3, 9}};
	struct sl_recv_fb fb = nack(3, 1, h);
	struct sl_recv_range out[1];

	(void)state;
	sl_recv_rtx_flow_open(t, 0, 0);
	sl_recv_rtx_nack(t, 0, &fb);
	assert_int_equal(sl_recv_rtx_rto(t, 0, 3), 0);
	assert_int_equal(sl_recv_rtx_marked(t, 0), 0);
	assert_int_equal(sl_recv_rtx_pool_used_blocks(t), 0);
	assert_int_equal(sl_recv_rtx_take(t, 0, out, 1, 10), 0);
	/* After the RTO the same hole is not marked again: the go-back resend covers it. */
	assert_int_equal(sl_recv_rtx_nack(t, 0, &fb), 0);
	sl_recv_rtx_free(t);
}

static void
sl_recv_rtx_nack__pool_exhausted_leaves_hole_for_later(void **state)
{
	struct sl_recv_rtx *t = mk(2, 16); /* 2 blocks */
	const uint32_t h0[1][2] = {{0, 16}};
	const uint32_t h1[2][2] = {{17, 1}, {8, 1}}; /* 2 blocks: 8..15, 16..23 */
	struct sl_recv_fb fb = nack(0, 1, h0);
	struct sl_recv_range out[2];
	struct sl_recv_rtx_stats st;

	(void)state;
	sl_recv_rtx_flow_open(t, 0, 0);
	sl_recv_rtx_flow_open(t, 1, 0);
	assert_int_equal(sl_recv_rtx_nack(t, 0, &fb), 16);
	fb = nack(0, 2, h1);
	assert_int_equal(sl_recv_rtx_nack(t, 1, &fb), 0);
	sl_recv_rtx_stats_get(t, &st);
	assert_int_equal(st.pkts_pool_exhausted, 2);
	assert_int_equal(sl_recv_rtx_take(t, 0, out, 2, 100), 1);
	/* The repeated NACK can now mark both holes. */
	assert_int_equal(sl_recv_rtx_nack(t, 1, &fb), 2);
	assert_int_equal(sl_recv_rtx_audit(t), 0);
	sl_recv_rtx_free(t);
}

static void
sl_recv_rtx_nack__rejects_bad_input(void **state)
{
	struct sl_recv_rtx *t = mk(1, 1024);
	const uint32_t h[3][2] = {{5000, 2}, {2, 1}, {20, 0}}; /* beyond window, behind, empty */
	struct sl_recv_fb fb = nack(10, 3, h);
	struct sl_recv_rtx_stats st;

	(void)state;
	sl_recv_rtx_flow_open(t, 0, 0);
	assert_int_equal(sl_recv_rtx_nack(t, 0, &fb), 0);
	fb.nholes = 4;
	assert_int_equal(sl_recv_rtx_nack(t, 0, &fb), -EINVAL);
	assert_int_equal(sl_recv_rtx_nack(t, 3, &fb), -EINVAL);
	sl_recv_rtx_stats_get(t, &st);
	assert_int_equal(st.bad_holes, 3);
	assert_int_equal(st.bad_nacks, 2);
	assert_int_equal(sl_recv_rtx_marked(t, 0), 0);
	sl_recv_rtx_free(t);
}

/*
 * Closed loop: a sender of N packets (window 256) over a channel that loses first transmissions
 * with probability p (and retransmissions with probability p_rtx), a MELO receiver, NACKs into
 * the tracker, marked PSNs resent before new ones, RTO after `rto` idle rounds. Returns the
 * number of retransmissions that carried an already-received PSN.
 */
static uint64_t
closed_loop(double p, double p_rtx, uint32_t n, uint64_t seed, uint64_t *rtos)
{
	struct sl_recv_conf rc = SL_RECV_CONF_DEFAULT(1);
	struct sl_recv *r;
	struct sl_recv_rtx *t = mk(1, 1024);
	static struct sl_recv_action act[1100];
	uint8_t *got = calloc(n, 1);
	uint32_t una = 0, nxt = 0, delivered = 0, idle = 0;
	uint64_t redundant = 0, lose = sl_rng_threshold(p), lose_rtx = sl_rng_threshold(p_rtx);
	struct sl_recv_conn_conf cc = {
		.isn = 0, .mode = SL_RECV_MELO, .fb = SL_RECV_FB_NACK, .ack_every_pkts = 1};
	struct sl_recv_rtx_stats st;
	struct sl_recv_stats rst;
	struct sl_rng rng;

	rc.window_pkts = 256;
	r = sl_recv_create(&rc);
	assert_non_null(r);
	assert_non_null(got);
	assert_int_equal(sl_recv_conn_open(r, 0, &cc), 0);
	sl_recv_rtx_flow_open(t, 0, 0);
	sl_rng_seed(&rng, seed);
	*rtos = 0;
	while (delivered < n) {
		struct sl_recv_range rg;
		struct sl_recv_pkt pkt = {.conn = 0};
		bool rtx = sl_recv_rtx_take(t, 0, &rg, 1, 1) == 1;
		unsigned na, used;

		if (rtx) {
			pkt.psn = rg.start_psn;
			pkt.flags = SL_RECV_F_RTX;
		} else if (nxt < n && nxt - una < 256) {
			pkt.psn = nxt++;
		} else {
			if (++idle < 4)
				continue;
			/* RTO: go back to snd_una. */
			sl_recv_rtx_rto(t, 0, una);
			nxt = una;
			idle = 0;
			(*rtos)++;
			continue;
		}
		idle = 0;
		if (rtx && got[pkt.psn])
			redundant++;
		if (sl_rng_chance(&rng, rtx ? lose_rtx : lose))
			continue;
		na = sl_recv_burst(r, &pkt, 1, 0, act, SL_ARRAY_SIZE(act), &used);
		for (unsigned i = 0; i < na; i++) {
			if (act[i].type == SL_RECV_ACT_DELIVER) {
				assert_int_equal(act[i].psn, delivered);
				got[act[i].psn] = 1;
				delivered++;
			} else if (act[i].type == SL_RECV_ACT_STORE) {
				got[act[i].psn] = 1;
			} else if (act[i].type == SL_RECV_ACT_NACK) {
				assert_true(sl_recv_rtx_nack(t, 0, &act[i].fb) >= 0);
				una = act[i].fb.ack_psn;
			} else if (act[i].type == SL_RECV_ACT_ACK) {
				sl_recv_rtx_ack(t, 0, act[i].fb.ack_psn);
				una = act[i].fb.ack_psn;
			}
		}
		assert_int_equal(sl_recv_audit(r), 0);
		assert_int_equal(sl_recv_rtx_audit(t), 0);
	}
	sl_recv_rtx_stats_get(t, &st);
	assert_true(st.pkts_taken > 0); /* losses were recovered by selective resends */
	sl_recv_stats_get(r, &rst);
	assert_true(rst.rtx_redundant_pkts <= redundant); /* lost ones never arrived */
	free(got);
	sl_recv_free(r);
	sl_recv_rtx_free(t);
	return redundant;
}

static void
sl_recv_rtx__closed_loop_resends_only_holes(void **state)
{
	uint64_t rtos;

	(void)state;
	/* 1% loss, no retransmission lost: every resend is needed and no RTO fires. */
	assert_int_equal(closed_loop(0.01, 0, 20000, 1, &rtos), 0);
	assert_int_equal(rtos, 0);
	assert_int_equal(closed_loop(0.05, 0, 20000, 2, &rtos), 0);
	assert_int_equal(rtos, 0);
}

static void
sl_recv_rtx__closed_loop_lost_retransmission_recovered_by_rto(void **state)
{
	uint64_t rtos;

	(void)state;
	closed_loop(0.02, 0.3, 20000, 3, &rtos);
	assert_true(rtos > 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sl_recv_rtx_create__rejects_bad_conf),
		cmocka_unit_test(sl_recv_rtx_nack__marks_holes_and_take_returns_ranges),
		cmocka_unit_test(sl_recv_rtx_nack__repeated_holes_are_not_marked_again),
		cmocka_unit_test(sl_recv_rtx_ack__drops_marks_behind_the_ack),
		cmocka_unit_test(sl_recv_rtx_rto__clears_the_bitmap),
		cmocka_unit_test(sl_recv_rtx_nack__pool_exhausted_leaves_hole_for_later),
		cmocka_unit_test(sl_recv_rtx_nack__rejects_bad_input),
		cmocka_unit_test(sl_recv_rtx__closed_loop_resends_only_holes),
		cmocka_unit_test(sl_recv_rtx__closed_loop_lost_retransmission_recovered_by_rto),
	};
	return cmocka_run_group_tests_name("recv-rtx", tests, NULL, NULL);
}
