/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for lib/recv/recv.c: the MELO receiver (fast path, bits pool use, NACK with 3 holes,
 * head/tail-only access, pool exhaustion), go-back-N mode, feedback for each program, ACK
 * coalescing, and invariants after random arrival sequences.
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

static struct sl_recv_action act[70000];
static unsigned nact;

static struct sl_recv *
mk(uint32_t conns, uint32_t window, uint32_t pool_bits)
{
	struct sl_recv_conf c = SL_RECV_CONF_DEFAULT(conns);
	struct sl_recv *r;

	c.window_pkts = window;
	c.pool_bits = pool_bits;
	r = sl_recv_create(&c);
	assert_non_null(r);
	return r;
}

static void
open_conn(struct sl_recv *r, uint32_t conn, uint32_t isn, uint8_t mode, uint8_t fb, uint8_t every)
{
	struct sl_recv_conn_conf cc = {.isn = isn, .mode = mode, .fb = fb, .ack_every_pkts = every};

	assert_int_equal(sl_recv_conn_open(r, conn, &cc), 0);
}

static void *
handle_of(uint32_t psn)
{
	return (void *)(uintptr_t)((uint64_t)psn + 1);
}

/* Feed one packet at now_ns; its actions are in act[0..nact). */
static unsigned
rx(struct sl_recv *r, uint32_t conn, uint32_t psn, uint32_t flags, uint64_t now_ns)
{
	struct sl_recv_pkt p = {.conn = conn,
				.psn = psn,
				.flags = flags,
				.tx_id = (uint16_t)(psn & 7),
				.tx_ns = now_ns - 100,
				.handle = handle_of(psn),
				.app_addr = (uint64_t)psn * 1024};
	unsigned used;

	nact = sl_recv_burst(r, &p, 1, now_ns, act, SL_ARRAY_SIZE(act), &used);
	assert_int_equal(used, 1);
	return nact;
}

static unsigned
count(uint8_t type)
{
	unsigned k = 0;

	for (unsigned i = 0; i < nact; i++)
		k += act[i].type == type;
	return k;
}

static const struct sl_recv_action *
first(uint8_t type)
{
	for (unsigned i = 0; i < nact; i++)
		if (act[i].type == type)
			return &act[i];
	return NULL;
}

static struct sl_recv_conn_info
info(struct sl_recv *r, uint32_t conn)
{
	struct sl_recv_conn_info in;

	assert_int_equal(sl_recv_conn_info(r, conn, &in), 0);
	return in;
}

static void
sl_recv_mem__melo_fields_fit_24_bytes(void **state)
{
	struct sl_recv_conf c = SL_RECV_CONF_DEFAULT(300);
	struct sl_recv_mem m;

	(void)state;
	sl_recv_mem(&c, &m);
	/* The paper's 20 B with 24-bit PSNs becomes 24 B with 32-bit PSNs (melo.md, 6.1). */
	assert_int_equal(m.melo_fields_bytes, 24);
	assert_int_equal(m.conn_ctx_bytes, 64);
	assert_int_equal(m.pool_bytes, 384); /* 3 Kb per side */
	assert_int_equal(m.rob_bytes, 1024 * 16);
}

static void
sl_recv_create__rejects_bad_conf(void **state)
{
	struct sl_recv_conf c = SL_RECV_CONF_DEFAULT(4);

	(void)state;
	c.window_pkts = 100;
	assert_null(sl_recv_create(&c));
	assert_int_equal(errno, EINVAL);
	c = SL_RECV_CONF_DEFAULT(4);
	c.window_pkts = 65536;
	assert_null(sl_recv_create(&c));
	c = SL_RECV_CONF_DEFAULT(0);
	assert_null(sl_recv_create(&c));
	c = SL_RECV_CONF_DEFAULT(4);
	c.block_bits = 7;
	assert_null(sl_recv_create(&c));
	assert_null(sl_recv_create(NULL));
}

static void
sl_recv_conn_open__rejects_bad_and_duplicate(void **state)
{
	struct sl_recv *r = mk(2, 64, 128);
	struct sl_recv_conn_conf cc = {.mode = SL_RECV_MELO, .ack_every_pkts = 1};

	(void)state;
	assert_int_equal(sl_recv_conn_open(r, 2, &cc), -EINVAL);
	cc.ack_every_pkts = 0;
	assert_int_equal(sl_recv_conn_open(r, 0, &cc), -EINVAL);
	cc.ack_every_pkts = 1;
	cc.mode = 7;
	assert_int_equal(sl_recv_conn_open(r, 0, &cc), -EINVAL);
	cc.mode = SL_RECV_GBN;
	assert_int_equal(sl_recv_conn_open(r, 0, &cc), 0);
	assert_int_equal(sl_recv_conn_open(r, 0, &cc), -EEXIST);
	sl_recv_free(r);
}

static void
sl_recv_burst__bad_conn_dropped_and_counted(void **state)
{
	struct sl_recv *r = mk(2, 64, 128);
	struct sl_recv_stats st;

	(void)state;
	rx(r, 1, 0, 0, 1000); /* not open */
	assert_int_equal(nact, 1);
	assert_int_equal(act[0].type, SL_RECV_ACT_DROP);
	assert_int_equal(act[0].reason, SL_RECV_DROP_BAD_CONN);
	assert_ptr_equal(act[0].data.handle, handle_of(0));
	rx(r, 99, 0, 0, 1000);
	sl_recv_stats_get(r, &st);
	assert_int_equal(st.drop_bad_conn, 2);
	sl_recv_free(r);
}

static void
sl_recv_burst__in_order_uses_no_bits_and_coalesces_acks(void **state)
{
	struct sl_recv *r = mk(1, 64, 128);
	struct sl_recv_stats st;

	(void)state;
	open_conn(r, 0, 100, SL_RECV_MELO, 0, 2);
	for (uint32_t psn = 100; psn < 110; psn++) {
		rx(r, 0, psn, 0, 1000 + psn);
		assert_int_equal(act[0].type, SL_RECV_ACT_DELIVER);
		assert_int_equal(act[0].psn, psn);
		assert_ptr_equal(act[0].data.handle, handle_of(psn));
		assert_int_equal(act[0].data.app_addr, psn * 1024);
		/* An ACK for every second packet, cumulative. */
		assert_int_equal(count(SL_RECV_ACT_ACK), (psn - 100) % 2);
		if ((psn - 100) % 2)
			assert_int_equal(first(SL_RECV_ACT_ACK)->fb.ack_psn, psn + 1);
		assert_int_equal(sl_recv_pool_used_blocks(r), 0);
	}
	assert_int_equal(info(r, 0).has_rob, false);
	sl_recv_stats_get(r, &st);
	assert_int_equal(st.delivered_fast_pkts, 10);
	assert_int_equal(st.acks, 5);
	sl_recv_free(r);
}

static void
sl_recv_poll__delayed_ack_fires_after_ack_delay(void **state)
{
	struct sl_recv_conf c = SL_RECV_CONF_DEFAULT(2);
	struct sl_recv *r;
	struct sl_recv_stats st;

	(void)state;
	c.ack_delay_ns = 5000;
	r = sl_recv_create(&c);
	assert_non_null(r);
	open_conn(r, 0, 0, SL_RECV_MELO, 0, 4);
	open_conn(r, 1, 0, SL_RECV_MELO, 0, 4);
	assert_int_equal(sl_recv_next_deadline(r), UINT64_MAX);
	rx(r, 0, 0, 0, 1000);
	rx(r, 1, 0, 0, 2000);
	rx(r, 0, 1, 0, 3000);
	assert_int_equal(sl_recv_next_deadline(r), 6000);
	assert_int_equal(sl_recv_poll(r, 5999, act, 8), 0);
	nact = sl_recv_poll(r, 6000, act, 8);
	assert_int_equal(nact, 1);
	assert_int_equal(act[0].type, SL_RECV_ACT_ACK);
	assert_int_equal(act[0].conn, 0);
	assert_int_equal(act[0].fb.ack_psn, 2);
	assert_int_equal(act[0].fb.acked_pkts, 2);
	nact = sl_recv_poll(r, 10000, act, 8);
	assert_int_equal(nact, 1);
	assert_int_equal(act[0].conn, 1);
	/* An ACK already sent by count leaves a stale entry that sends nothing. */
	for (uint32_t p = 1; p < 5; p++)
		rx(r, 1, p, 0, 20000);
	assert_int_equal(count(SL_RECV_ACT_ACK), 1);
	assert_int_equal(sl_recv_poll(r, 30000, act, 8), 0);
	sl_recv_stats_get(r, &st);
	assert_int_equal(st.acks_delayed, 2);
	sl_recv_free(r);
}

static void
sl_recv_burst__new_hole_nacks_once_immediately(void **state)
{
	struct sl_recv *r = mk(1, 64, 128);
	const struct sl_recv_action *a;
	struct sl_recv_stats st;

	(void)state;
	open_conn(r, 0, 0, SL_RECV_MELO, SL_RECV_FB_NACK, 8);
	rx(r, 0, 0, 0, 10);
	rx(r, 0, 5, 0, 20); /* hole [1, 4] */
	assert_int_equal(act[0].type, SL_RECV_ACT_STORE);
	assert_int_equal(count(SL_RECV_ACT_NACK), 1);
	a = first(SL_RECV_ACT_NACK);
	assert_int_equal(a->fb.ack_psn, 1);
	assert_int_equal(a->fb.nholes, 1);
	assert_int_equal(a->fb.hole[0].start_psn, 1);
	assert_int_equal(a->fb.hole[0].len_pkts, 4);
	/* Extending the tail without a new gap sends no NACK. */
	rx(r, 0, 6, 0, 30);
	assert_int_equal(count(SL_RECV_ACT_NACK), 0);
	assert_int_equal(count(SL_RECV_ACT_STORE), 1);
	/* Three more holes: the NACK carries the 3 newest, newest first. */
	rx(r, 0, 9, 0, 40);  /* [7, 8] */
	rx(r, 0, 12, 0, 50); /* [10, 11] */
	rx(r, 0, 20, 0, 60); /* [13, 19] */
	a = first(SL_RECV_ACT_NACK);
	assert_non_null(a);
	assert_int_equal(a->fb.nholes, 3);
	assert_int_equal(a->fb.hole[0].start_psn, 13);
	assert_int_equal(a->fb.hole[0].len_pkts, 7);
	assert_int_equal(a->fb.hole[1].start_psn, 10);
	assert_int_equal(a->fb.hole[1].len_pkts, 2);
	assert_int_equal(a->fb.hole[2].start_psn, 7);
	assert_int_equal(a->fb.hole[2].len_pkts, 2);
	sl_recv_stats_get(r, &st);
	assert_int_equal(st.nacks, 4);
	assert_int_equal(st.nack_holes[1], 1);
	assert_int_equal(st.nack_holes[2], 1);
	assert_int_equal(st.nack_holes[3], 2);
	assert_int_equal(st.holes_formed, 4);
	assert_int_equal(st.holes_untracked, 1);
	assert_int_equal(sl_recv_audit(r), 0);
	sl_recv_free(r);
}

static void
sl_recv_burst__front_fill_delivers_run_and_frees_blocks(void **state)
{
	struct sl_recv *r = mk(1, 64, 128);
	struct sl_recv_conn_info in;
	struct sl_recv_stats st;

	(void)state;
	open_conn(r, 0, 0, SL_RECV_MELO, SL_RECV_FB_NACK, 1);
	rx(r, 0, 0, 0, 1);
	for (uint32_t p = 2; p < 20; p++)
		rx(r, 0, p, 0, 2); /* PSN 1 lost; 2..19 held in blocks 0, 1, 2 */
	in = info(r, 0);
	assert_int_equal(in.blocks, 3);
	assert_int_equal(in.rcv_nxt, 1);
	assert_int_equal(in.rcv_high, 19);
	assert_true(in.has_rob);
	rx(r, 0, 1, SL_RECV_F_RTX, 3);
	/* 1 delivered directly, then 2..19 from the reorder buffer, in order, then one ACK. */
	assert_int_equal(count(SL_RECV_ACT_DELIVER), 19);
	for (uint32_t i = 0; i < 19; i++) {
		assert_int_equal(act[i].psn, i + 1);
		assert_ptr_equal(act[i].data.handle, handle_of(i + 1));
		assert_int_equal(act[i].data.app_addr, (i + 1) * 1024);
	}
	assert_int_equal(act[19].type, SL_RECV_ACT_ACK);
	assert_int_equal(act[19].fb.ack_psn, 20);
	in = info(r, 0);
	assert_int_equal(in.blocks, 0);
	assert_int_equal(in.nholes, 0);
	assert_false(in.has_rob);
	assert_int_equal(sl_recv_pool_used_blocks(r), 0);
	sl_recv_stats_get(r, &st);
	assert_int_equal(st.delivered_rob_pkts, 18);
	assert_int_equal(st.pool_peak_blocks, 3);
	assert_int_equal(sl_recv_audit(r), 0);
	sl_recv_free(r);
}

static void
sl_recv_burst__partial_fill_frees_passed_blocks_and_splits_holes(void **state)
{
	struct sl_recv *r = mk(1, 64, 128);
	struct sl_recv_conn_info in;

	(void)state;
	open_conn(r, 0, 0, SL_RECV_MELO, 0, 1);
	rx(r, 0, 0, 0, 1);
	rx(r, 0, 6, 0, 1);  /* hole [1, 5] */
	rx(r, 0, 12, 0, 1); /* hole [7, 11]; bits in blocks 0 and 1 */
	rx(r, 0, 9, 0, 1);  /* tail block (8..15): splits [7, 11] into [10, 11] and [7, 8] */
	in = info(r, 0);
	assert_int_equal(in.nholes, 3);
	assert_int_equal(in.hole[0].start_psn, 10);
	assert_int_equal(in.hole[0].len_pkts, 2);
	assert_int_equal(in.hole[1].start_psn, 7);
	assert_int_equal(in.hole[1].len_pkts, 2);
	assert_int_equal(in.hole[2].start_psn, 1);
	assert_int_equal(in.hole[2].len_pkts, 5);
	for (uint32_t p = 1; p <= 5; p++)
		rx(r, 0, p, 0, 2);
	/* RCV.NXT moved to 7 (6 came out of the buffer); block 0 stays: 7 is in it. */
	in = info(r, 0);
	assert_int_equal(in.rcv_nxt, 7);
	assert_int_equal(in.blocks, 2);
	rx(r, 0, 7, 0, 3);
	rx(r, 0, 8, 0, 3);
	in = info(r, 0);
	assert_int_equal(in.rcv_nxt, 10);
	assert_int_equal(in.blocks, 1); /* block 0 returned as RCV.NXT left it */
	assert_int_equal(in.nholes, 1);
	assert_int_equal(sl_recv_audit(r), 0);
	sl_recv_free(r);
}

static void
sl_recv_burst__middle_access_dropped(void **state)
{
	struct sl_recv *r = mk(1, 64, 128);
	struct sl_recv_stats st;

	(void)state;
	open_conn(r, 0, 0, SL_RECV_MELO, 0, 1);
	rx(r, 0, 1, 0, 1);              /* hole [0] */
	rx(r, 0, 10, 0, 1);             /* hole [2, 9] */
	rx(r, 0, 20, 0, 1);             /* hole [11, 19]; blocks 0, 1, 2 */
	rx(r, 0, 11, SL_RECV_F_RTX, 2); /* block 1: the middle */
	assert_int_equal(nact, 1);
	assert_int_equal(act[0].type, SL_RECV_ACT_DROP);
	assert_int_equal(act[0].reason, SL_RECV_DROP_MIDDLE_ACCESS);
	rx(r, 0, 3, SL_RECV_F_RTX, 2); /* head block: accepted */
	assert_int_equal(act[0].type, SL_RECV_ACT_STORE);
	rx(r, 0, 17, SL_RECV_F_RTX, 2); /* tail block: accepted */
	assert_int_equal(act[0].type, SL_RECV_ACT_STORE);
	rx(r, 0, 3, SL_RECV_F_RTX, 2); /* again: duplicate, ACKed */
	assert_int_equal(act[0].reason, SL_RECV_DROP_DUPLICATE);
	assert_int_equal(count(SL_RECV_ACT_ACK), 1);
	sl_recv_stats_get(r, &st);
	assert_int_equal(st.drop_middle_access, 1);
	assert_int_equal(st.drop_duplicate, 1);
	sl_recv_free(r);
}

static void
sl_recv_burst__middle_walk_ablation_accepts_middle_blocks(void **state)
{
	struct sl_recv_conf c = SL_RECV_CONF_DEFAULT(1);
	struct sl_recv *r;
	struct sl_recv_stats st;

	(void)state;
	c.window_pkts = 64;
	c.middle_walk = true;
	r = sl_recv_create(&c);
	assert_non_null(r);
	open_conn(r, 0, 0, SL_RECV_MELO, 0, 1);
	rx(r, 0, 1, 0, 1);
	rx(r, 0, 30, 0, 1);             /* blocks 0..3 */
	rx(r, 0, 20, SL_RECV_F_RTX, 2); /* block 2: two hops from the head */
	assert_int_equal(act[0].type, SL_RECV_ACT_STORE);
	rx(r, 0, 10, SL_RECV_F_RTX, 2); /* block 1 */
	assert_int_equal(act[0].type, SL_RECV_ACT_STORE);
	for (uint32_t p = 0; p < 30; p++)
		rx(r, 0, p, 0, 3);
	assert_int_equal(info(r, 0).rcv_nxt, 31);
	assert_int_equal(sl_recv_pool_used_blocks(r), 0);
	sl_recv_stats_get(r, &st);
	assert_int_equal(st.middle_walks, 2);
	assert_int_equal(st.middle_walk_blocks, 3);
	assert_int_equal(st.drop_middle_access, 0);
	assert_int_equal(st.delivered_pkts, 31);
	assert_int_equal(sl_recv_audit(r), 0);
	sl_recv_free(r);
}

static void
sl_recv_burst__conn_max_blocks_caps_one_connection(void **state)
{
	struct sl_recv_conf c = SL_RECV_CONF_DEFAULT(2);
	struct sl_recv *r;
	struct sl_recv_stats st;

	(void)state;
	c.window_pkts = 64;
	c.conn_max_blocks = 2;
	r = sl_recv_create(&c);
	assert_non_null(r);
	open_conn(r, 0, 0, SL_RECV_MELO, 0, 1);
	open_conn(r, 1, 0, SL_RECV_MELO, 0, 1);
	rx(r, 0, 15, 0, 1); /* blocks 0, 1: at the cap */
	assert_int_equal(act[0].type, SL_RECV_ACT_STORE);
	rx(r, 0, 16, 0, 1); /* would need block 2 */
	assert_int_equal(act[0].reason, SL_RECV_DROP_CONN_CAP);
	rx(r, 1, 16, 0, 1); /* another connection is not held back: 3 blocks for it alone */
	assert_int_equal(act[0].reason, SL_RECV_DROP_CONN_CAP);
	rx(r, 1, 9, 0, 1);
	assert_int_equal(act[0].type, SL_RECV_ACT_STORE);
	sl_recv_stats_get(r, &st);
	assert_int_equal(st.drop_conn_cap, 2);
	assert_int_equal(st.drop_pool_exhausted, 0);
	sl_recv_free(r);
}

static void
sl_recv_burst__pool_exhausted_drops_then_recovers(void **state)
{
	struct sl_recv *r = mk(2, 64, 16); /* 2 blocks of 8 bits */
	struct sl_recv_stats st;

	(void)state;
	open_conn(r, 0, 0, SL_RECV_MELO, 0, 1);
	open_conn(r, 1, 0, SL_RECV_MELO, 0, 1);
	rx(r, 0, 9, 0, 1); /* blocks 0 and 1: the whole pool */
	assert_int_equal(sl_recv_pool_used_blocks(r), 2);
	rx(r, 1, 3, 0, 1);
	assert_int_equal(act[0].reason, SL_RECV_DROP_POOL_EXHAUSTED);
	rx(r, 0, 16, 0, 1);
	assert_int_equal(act[0].reason, SL_RECV_DROP_POOL_EXHAUSTED);
	/* In-order data needs no bits: connection 1 still moves. */
	rx(r, 1, 0, 0, 1);
	assert_int_equal(act[0].type, SL_RECV_ACT_DELIVER);
	for (uint32_t p = 0; p < 9; p++)
		rx(r, 0, p, SL_RECV_F_RTX, 2);
	assert_int_equal(info(r, 0).rcv_nxt, 10);
	assert_int_equal(sl_recv_pool_used_blocks(r), 0);
	rx(r, 1, 3, 0, 3); /* now it gets a block */
	assert_int_equal(act[0].type, SL_RECV_ACT_STORE);
	sl_recv_stats_get(r, &st);
	assert_int_equal(st.drop_pool_exhausted, 2);
	assert_int_equal(sl_recv_audit(r), 0);
	sl_recv_free(r);
}

static void
sl_recv_stats_get__pool_usage_integral_and_redundant_rtx(void **state)
{
	struct sl_recv *r = mk(1, 64, 128);
	struct sl_recv_stats st;

	(void)state;
	open_conn(r, 0, 0, SL_RECV_MELO, 0, 1);
	rx(r, 0, 0, 0, 500);
	rx(r, 0, 2, 0, 1000);             /* 1 block from t = 1000 */
	rx(r, 0, 9, 0, 3000);             /* 2 blocks from t = 3000 */
	rx(r, 0, 2, SL_RECV_F_RTX, 3500); /* a redundant retransmission */
	rx(r, 0, 0, 0, 3600);             /* a duplicate, not flagged */
	assert_int_equal(sl_recv_poll(r, 4000, act, 8), 0);
	rx(r, 0, 1, SL_RECV_F_RTX, 4000); /* fills the front hole: hole [3, 8] remains */
	sl_recv_stats_get(r, &st);
	assert_int_equal(st.pool_block_ns, 1 * 2000 + 2 * 1000);
	assert_int_equal(st.rtx_redundant_pkts, 1);
	assert_int_equal(st.drop_duplicate, 2);
	sl_recv_stats_reset(r);
	sl_recv_poll(r, 5000, act, 8);
	sl_recv_stats_get(r, &st);
	assert_int_equal(st.pool_block_ns, 2 * 1000); /* RCV.NXT 3: blocks 0 and 1 still held */
	sl_recv_free(r);
}

static void
sl_recv_burst__duplicate_and_out_of_window(void **state)
{
	struct sl_recv *r = mk(1, 64, 128);
	struct sl_recv_stats st;

	(void)state;
	open_conn(r, 0, 0, SL_RECV_MELO, SL_RECV_FB_SACK, 4);
	rx(r, 0, 0, 0, 1);
	rx(r, 0, 0, 0, 2);
	assert_int_equal(act[0].reason, SL_RECV_DROP_DUPLICATE);
	assert_int_equal(act[1].type, SL_RECV_ACT_ACK);
	assert_int_equal(act[1].fb.ack_psn, 1);
	assert_false(act[1].fb.flags & SL_RECV_FBF_SACK); /* below RCV.NXT: no SACK */
	rx(r, 0, 1 + 64, 0, 3);
	assert_int_equal(nact, 1);
	assert_int_equal(act[0].reason, SL_RECV_DROP_OUT_OF_WINDOW);
	rx(r, 0, 64, 0, 3); /* last PSN inside the window */
	assert_int_equal(act[0].type, SL_RECV_ACT_STORE);
	sl_recv_stats_get(r, &st);
	assert_int_equal(st.drop_duplicate, 1);
	assert_int_equal(st.drop_out_of_window, 1);
	sl_recv_free(r);
}

static void
sl_recv_burst__psn_wrap(void **state)
{
	struct sl_recv *r = mk(1, 64, 128);
	uint32_t isn = UINT32_MAX - 5;

	(void)state;
	open_conn(r, 0, isn, SL_RECV_MELO, SL_RECV_FB_NACK, 1);
	rx(r, 0, isn, 0, 1);
	rx(r, 0, isn + 10, 0, 1); /* across the wrap */
	assert_int_equal(first(SL_RECV_ACT_NACK)->fb.hole[0].start_psn, isn + 1);
	assert_int_equal(first(SL_RECV_ACT_NACK)->fb.hole[0].len_pkts, 9);
	for (uint32_t k = 1; k < 10; k++)
		rx(r, 0, isn + k, 0, 2);
	assert_int_equal(count(SL_RECV_ACT_DELIVER), 2);
	assert_int_equal(act[1].psn, isn + 10);
	assert_int_equal(info(r, 0).rcv_nxt, isn + 11);
	assert_int_equal(sl_recv_pool_used_blocks(r), 0);
	assert_int_equal(sl_recv_audit(r), 0);
	sl_recv_free(r);
}

static void
sl_recv_burst__gbn_drops_and_nacks_once_per_gap(void **state)
{
	struct sl_recv *r = mk(1, 64, 128);
	struct sl_recv_stats st;

	(void)state;
	open_conn(r, 0, 0, SL_RECV_GBN, SL_RECV_FB_NACK, 1);
	rx(r, 0, 0, 0, 1);
	rx(r, 0, 2, 0, 1);
	assert_int_equal(act[0].reason, SL_RECV_DROP_OUT_OF_ORDER);
	assert_int_equal(act[1].type, SL_RECV_ACT_NACK);
	assert_int_equal(act[1].fb.ack_psn, 1);
	assert_int_equal(act[1].fb.nholes, 0);
	rx(r, 0, 3, 0, 1);
	assert_int_equal(nact, 1); /* same gap: no second NACK */
	rx(r, 0, 1, 0, 2);
	assert_int_equal(act[0].type, SL_RECV_ACT_DELIVER);
	rx(r, 0, 4, 0, 2); /* a new gap episode */
	assert_int_equal(count(SL_RECV_ACT_NACK), 1);
	assert_int_equal(first(SL_RECV_ACT_NACK)->fb.ack_psn, 2);
	assert_int_equal(sl_recv_pool_used_blocks(r), 0);
	sl_recv_stats_get(r, &st);
	assert_int_equal(st.drop_out_of_order, 3);
	assert_int_equal(st.nack_holes[0], 2);
	sl_recv_free(r);
}

/* NACKs sent, of those repeats, and out-of-order drops that sent none; then free r. */
static void
check_gbn_nacks_and_free(struct sl_recv *r, uint64_t nacks, uint64_t repeated, uint64_t suppressed)
{
	struct sl_recv_stats st;

	sl_recv_stats_get(r, &st);
	assert_int_equal(st.nacks, nacks);
	assert_int_equal(st.nacks_repeated, repeated);
	assert_int_equal(st.nacks_suppressed, suppressed);
	sl_recv_free(r);
}

/* ns-3 DCQCN model: the NACK of one RCV.NXT repeats only once the interval has passed. */
static void
sl_recv_burst__gbn_nack_interval_repeats_after_interval(void **state)
{
	struct sl_recv_conf c = SL_RECV_CONF_DEFAULT(1);
	struct sl_recv *r;

	(void)state;
	c.window_pkts = 64;
	c.pool_bits = 128;
	c.nack_interval_ns = 500 * SL_NS_PER_US;
	r = sl_recv_create(&c);
	assert_non_null(r);
	open_conn(r, 0, 0, SL_RECV_GBN, SL_RECV_FB_NACK, 1);
	rx(r, 0, 0, 0, 1000);
	rx(r, 0, 2, 0, 1000); /* gap at 1: NACK at once */
	assert_int_equal(count(SL_RECV_ACT_NACK), 1);
	rx(r, 0, 3, 0, 1000 + 500 * SL_NS_PER_US - 1); /* inside the interval: none */
	assert_int_equal(nact, 1);
	assert_int_equal(act[0].reason, SL_RECV_DROP_OUT_OF_ORDER);
	rx(r, 0, 4, 0, 1000 + 500 * SL_NS_PER_US); /* interval over: NACK 1 again */
	assert_int_equal(count(SL_RECV_ACT_NACK), 1);
	assert_int_equal(first(SL_RECV_ACT_NACK)->fb.ack_psn, 1);
	rx(r, 0, 5, 0, 1000 + 600 * SL_NS_PER_US); /* the repeat restarted the interval */
	assert_int_equal(count(SL_RECV_ACT_NACK), 0);
	rx(r, 0, 1, 0, 1000 + 600 * SL_NS_PER_US);
	assert_int_equal(act[0].type, SL_RECV_ACT_DELIVER);
	rx(r, 0, 3, 0, 1000 + 600 * SL_NS_PER_US); /* new RCV.NXT (2): NACK at once */
	assert_int_equal(count(SL_RECV_ACT_NACK), 1);
	assert_int_equal(first(SL_RECV_ACT_NACK)->fb.ack_psn, 2);
	check_gbn_nacks_and_free(r, 3, 1, 2);
}

/* The default, 0: one NACK per gap episode however long it lasts (RoCE style). */
static void
sl_recv_burst__gbn_nack_interval_zero_never_repeats(void **state)
{
	struct sl_recv *r = mk(1, 64, 128);

	(void)state;
	open_conn(r, 0, 0, SL_RECV_GBN, SL_RECV_FB_NACK, 1);
	rx(r, 0, 1, 0, 0);
	assert_int_equal(count(SL_RECV_ACT_NACK), 1);
	for (uint32_t k = 2; k < 10; k++) {
		rx(r, 0, k, 0, (uint64_t)k * SL_NS_PER_S);
		assert_int_equal(count(SL_RECV_ACT_NACK), 0);
	}
	check_gbn_nacks_and_free(r, 1, 0, 8);
}

static void
sl_recv_burst__gbn_without_nack_sends_a_dup_ack_without_sack(void **state)
{
	struct sl_recv *r = mk(1, 64, 128);

	(void)state;
	open_conn(r, 0, 0, SL_RECV_GBN, SL_RECV_FB_SACK, 4);
	rx(r, 0, 0, 0, 1);
	rx(r, 0, 2, 0, 1); /* dropped: must not be SACKed */
	assert_int_equal(act[0].reason, SL_RECV_DROP_OUT_OF_ORDER);
	assert_int_equal(act[1].type, SL_RECV_ACT_ACK);
	assert_int_equal(act[1].fb.ack_psn, 1);
	assert_false(act[1].fb.flags & SL_RECV_FBF_SACK);
	sl_recv_free(r);
}

static void
sl_recv_burst__cnp_rate_limited_per_connection(void **state)
{
	struct sl_recv *r = mk(1, 64, 128);
	struct sl_recv_stats st;

	(void)state;
	open_conn(r, 0, 0, SL_RECV_MELO, SL_RECV_FB_CNP, 16);
	rx(r, 0, 0, SL_RECV_F_ECN_CE, 0);
	assert_int_equal(count(SL_RECV_ACT_CNP), 1);
	rx(r, 0, 1, SL_RECV_F_ECN_CE, 49999);
	assert_int_equal(count(SL_RECV_ACT_CNP), 0);
	rx(r, 0, 2, 0, 60000);
	assert_int_equal(count(SL_RECV_ACT_CNP), 0);
	rx(r, 0, 3, SL_RECV_F_ECN_CE, 50000);
	assert_int_equal(count(SL_RECV_ACT_CNP), 1);
	sl_recv_stats_get(r, &st);
	assert_int_equal(st.cnps, 2);
	assert_int_equal(st.cnps_suppressed, 1);
	sl_recv_free(r);
}

static void
sl_recv_burst__ack_echo_ecn_and_sack_fields(void **state)
{
	struct sl_recv *r = mk(1, 64, 128);
	const struct sl_recv_action *a;

	(void)state;
	open_conn(r, 0, 0, SL_RECV_MELO, SL_RECV_FB_ECHO | SL_RECV_FB_ECN | SL_RECV_FB_SACK, 3);
	rx(r, 0, 0, SL_RECV_F_ECN_CE, 1000);
	rx(r, 0, 1, 0, 2000);
	rx(r, 0, 2, SL_RECV_F_ECN_CE, 3000);
	a = first(SL_RECV_ACT_ACK);
	assert_non_null(a);
	assert_int_equal(a->fb.acked_pkts, 3);
	assert_int_equal(a->fb.ce_pkts, 2);
	assert_true(a->fb.flags & SL_RECV_FBF_ECHO);
	assert_int_equal(a->fb.echo_tx_ns, 2900);
	assert_int_equal(a->fb.echo_tx_id, 2);
	rx(r, 0, 5, 0, 4000); /* out of order: immediate ACK naming 5 */
	a = first(SL_RECV_ACT_ACK);
	assert_true(a->fb.flags & SL_RECV_FBF_SACK);
	assert_int_equal(a->fb.sack_psn, 5);
	assert_int_equal(a->fb.ack_psn, 3);
	assert_int_equal(a->fb.ce_pkts, 0);
	rx(r, 0, 3, SL_RECV_F_ACK_REQ, 5000);
	assert_int_equal(count(SL_RECV_ACT_ACK), 1);
	sl_recv_free(r);
}

static void
sl_recv_burst__ndp_pulls_and_nacks_trimmed(void **state)
{
	struct sl_recv *r = mk(1, 64, 128);
	struct sl_recv_conn_conf cc = {.isn = 0,
				       .mode = SL_RECV_MELO,
				       .fb = SL_RECV_FB_SACK | SL_RECV_FB_PULL, /* NDP's feedback */
				       .ack_every_pkts = 1};
	const struct sl_recv_action *a;
	struct sl_recv_stats st;

	(void)state;
	assert_int_equal(sl_recv_conn_open(r, 0, &cc), 0);
	rx(r, 0, 0, 0, 1);
	a = first(SL_RECV_ACT_PULL);
	assert_non_null(a);
	assert_int_equal(a->fb.pull_seq, 1);
	rx(r, 0, 1, SL_RECV_F_TRIMMED, 2);
	assert_int_equal(act[0].reason, SL_RECV_DROP_TRIMMED);
	a = first(SL_RECV_ACT_NACK);
	assert_non_null(a);
	assert_int_equal(a->fb.nholes, 1);
	assert_int_equal(a->fb.hole[0].start_psn, 1);
	assert_int_equal(a->fb.hole[0].len_pkts, 1);
	assert_int_equal(first(SL_RECV_ACT_PULL)->fb.pull_seq, 2);
	/* Reordering (NDP sprays packets) is SACKed, not NACKed. */
	rx(r, 0, 3, 0, 3);
	assert_int_equal(count(SL_RECV_ACT_NACK), 0);
	a = first(SL_RECV_ACT_ACK);
	assert_non_null(a);
	assert_true(a->fb.flags & SL_RECV_FBF_SACK);
	assert_int_equal(a->fb.sack_psn, 3);
	assert_int_equal(first(SL_RECV_ACT_PULL)->fb.pull_seq, 3);
	/* A trimmed copy of a PSN already held is not NACKed; one beyond the window neither. */
	rx(r, 0, 3, SL_RECV_F_TRIMMED, 4);
	assert_int_equal(count(SL_RECV_ACT_NACK), 0);
	rx(r, 0, 1 + 64, SL_RECV_F_TRIMMED, 4);
	assert_int_equal(count(SL_RECV_ACT_NACK), 0);
	rx(r, 0, 2, SL_RECV_F_TRIMMED, 4); /* missing, in the head block */
	assert_int_equal(count(SL_RECV_ACT_NACK), 1);
	sl_recv_stats_get(r, &st);
	assert_int_equal(st.pulls, 6);
	assert_int_equal(st.drop_trimmed, 4);
	sl_recv_free(r);
}

static void
sl_recv_conn_close__returns_stored_handles(void **state)
{
	struct sl_recv *r = mk(1, 64, 128);
	struct sl_recv_stats st;

	(void)state;
	open_conn(r, 0, 0, SL_RECV_MELO, 0, 1);
	rx(r, 0, 3, 0, 1);
	rx(r, 0, 7, 0, 1);
	nact = sl_recv_conn_close(r, 0, act, 64);
	assert_int_equal(nact, 2);
	assert_int_equal(act[0].reason, SL_RECV_DROP_CLOSED);
	assert_int_equal(act[0].psn, 3);
	assert_ptr_equal(act[0].data.handle, handle_of(3));
	assert_int_equal(act[1].psn, 7);
	assert_int_equal(sl_recv_pool_used_blocks(r), 0);
	assert_int_equal(sl_recv_conn_close(r, 0, act, 64), 0);
	rx(r, 0, 0, 0, 2);
	assert_int_equal(act[0].reason, SL_RECV_DROP_BAD_CONN);
	open_conn(r, 0, 0, SL_RECV_MELO, 0, 1); /* reopen */
	rx(r, 0, 0, 0, 3);
	assert_int_equal(act[0].type, SL_RECV_ACT_DELIVER);
	sl_recv_stats_get(r, &st);
	assert_int_equal(st.drop_closed, 2);
	assert_int_equal(sl_recv_audit(r), 0);
	sl_recv_free(r);
}

static void
sl_recv_burst__stops_when_actions_may_not_fit(void **state)
{
	struct sl_recv *r = mk(1, 64, 128);
	struct sl_recv_pkt p[2] = {{.conn = 0, .psn = 0}, {.conn = 0, .psn = 1}};
	unsigned used;

	(void)state;
	open_conn(r, 0, 0, SL_RECV_MELO, 0, 1);
	assert_int_equal(sl_recv_actions_max(r), 64 + 3);
	nact = sl_recv_burst(r, p, 2, 1, act, 64 + 3 + 1, &used);
	assert_int_equal(used, 1);
	assert_int_equal(nact, 2);
	nact = sl_recv_burst(r, &p[1], 1, 1, act, 10, &used);
	assert_int_equal(used, 0);
	assert_int_equal(nact, 0);
	sl_recv_free(r);
}

/*
 * Random arrivals (new data with loss, reordering, duplicates, retransmissions from the
 * front, random retransmissions, go-back-N connections mixed in) across many connections on a
 * pool small enough to run dry. After every packet: the audit holds (free + allocated = pool,
 * no block reachable twice, chains exactly cover RCV.NXT..RCV.HIGH); every handle comes back
 * exactly once (delivered or dropped; stored ones later); deliveries are in PSN order.
 */
#define RAND_CONNS 24
#define RAND_TX 200000

struct model {
	uint32_t next_new;  /* next PSN never sent */
	uint32_t delivered; /* next PSN the receiver must deliver */
};

static uint8_t handle_state[RAND_TX + 1]; /* 0 sent, 1 stored, 2 returned */
static uint32_t handle_psn[RAND_TX + 1];

static void
check_actions(struct model *m)
{
	for (unsigned i = 0; i < nact; i++) {
		const struct sl_recv_action *a = &act[i];
		uintptr_t h = (uintptr_t)a->data.handle;

		switch (a->type) {
		case SL_RECV_ACT_STORE:
			assert_int_equal(handle_state[h], 0);
			handle_state[h] = 1;
			break;
		case SL_RECV_ACT_DELIVER:
			assert_true(handle_state[h] <= 1);
			handle_state[h] = 2;
			assert_int_equal(a->psn, m[a->conn].delivered);
			assert_int_equal(handle_psn[h], a->psn);
			m[a->conn].delivered++;
			break;
		case SL_RECV_ACT_DROP:
			assert_int_equal(handle_state[h], a->reason == SL_RECV_DROP_CLOSED ? 1 : 0);
			handle_state[h] = 2;
			break;
		default:
			break;
		}
	}
}

static void
sl_recv_burst__random_arrivals_keep_invariants(void **state)
{
	struct sl_recv *r = mk(RAND_CONNS, 64, 96); /* 12 blocks for 24 connections */
	struct model m[RAND_CONNS];
	struct sl_rng rng;
	uint32_t tx = 0;
	uint64_t now = 0;
	struct sl_recv_stats st;

	(void)state;
	sl_rng_seed(&rng, 7);
	for (uint32_t c = 0; c < RAND_CONNS; c++) {
		uint32_t isn = c == 3 ? UINT32_MAX - 40 : (uint32_t)sl_rng_next(&rng);

		open_conn(r, c, isn, c % 6 == 5 ? SL_RECV_GBN : SL_RECV_MELO,
			  (uint8_t)sl_rng_below(&rng, 64), (uint8_t)(1 + sl_rng_below(&rng, 4)));
		m[c] = (struct model){isn, isn};
	}
	while (tx < RAND_TX - 2 * RAND_CONNS * 64) {
		uint32_t c = (uint32_t)sl_rng_below(&rng, RAND_CONNS), psn, kind;
		struct sl_recv_conn_info in = info(r, c);
		struct sl_recv_pkt p;
		unsigned used;

		kind = (uint32_t)sl_rng_below(&rng, 100);
		if (kind < 55) { /* new data, 10% lost */
			if (m[c].next_new - in.rcv_nxt >= 64)
				continue;
			psn = m[c].next_new++;
			if (sl_rng_below(&rng, 10) == 0)
				continue;
		} else if (kind < 75) { /* retransmission from the front (RTO style) */
			psn = in.rcv_nxt;
			if (psn == m[c].next_new)
				continue;
		} else if (kind < 95) { /* any PSN near the window; beyond next_new: a skip ahead */
			psn = in.rcv_nxt - 3 + (uint32_t)sl_rng_below(&rng, 70);
			if (psn - m[c].next_new < (1u << 31))
				m[c].next_new = psn + 1;
		} else { /* stale duplicate */
			psn = in.rcv_nxt - 1 - (uint32_t)sl_rng_below(&rng, 1000);
		}
		tx++;
		handle_psn[tx] = psn;
		p = (struct sl_recv_pkt){.conn = c,
					 .psn = psn,
					 .flags = (uint32_t)sl_rng_below(&rng, 8),
					 .tx_ns = now,
					 .handle = (void *)(uintptr_t)tx};
		nact = sl_recv_burst(r, &p, 1, now, act, SL_ARRAY_SIZE(act), &used);
		check_actions(m);
		now += sl_rng_below(&rng, 2000);
		nact = sl_recv_poll(r, now, act, 64);
		assert_int_equal(sl_recv_audit(r), 0);
		assert_true(sl_recv_pool_used_blocks(r) <= sl_recv_pool_total_blocks(r));
	}
	sl_recv_stats_get(r, &st);
	assert_true(st.drop_pool_exhausted > 0);
	assert_true(st.drop_middle_access > 0);
	assert_true(st.delivered_rob_pkts > 0);
	/* Finish every connection by resending from the front: all data arrives, in order. */
	for (uint32_t c = 0; c < RAND_CONNS; c++) {
		for (;;) {
			struct sl_recv_conn_info in = info(r, c);
			struct sl_recv_pkt p;
			unsigned used;

			if (in.rcv_nxt == m[c].next_new)
				break;

			tx++;
			handle_psn[tx] = in.rcv_nxt;
			p = (struct sl_recv_pkt){
				.conn = c, .psn = in.rcv_nxt, .handle = (void *)(uintptr_t)tx};
			nact = sl_recv_burst(r, &p, 1, now, act, SL_ARRAY_SIZE(act), &used);
			check_actions(m);
		}
		assert_int_equal(m[c].delivered, m[c].next_new);
		nact = sl_recv_conn_close(r, c, act, SL_ARRAY_SIZE(act));
		check_actions(m);
	}
	assert_int_equal(sl_recv_pool_used_blocks(r), 0);
	for (uint32_t h = 1; h <= tx; h++)
		assert_int_equal(handle_state[h], 2);
	assert_int_equal(sl_recv_audit(r), 0);
	sl_recv_free(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sl_recv_mem__melo_fields_fit_24_bytes),
		cmocka_unit_test(sl_recv_create__rejects_bad_conf),
		cmocka_unit_test(sl_recv_conn_open__rejects_bad_and_duplicate),
		cmocka_unit_test(sl_recv_burst__bad_conn_dropped_and_counted),
		cmocka_unit_test(sl_recv_burst__in_order_uses_no_bits_and_coalesces_acks),
		cmocka_unit_test(sl_recv_poll__delayed_ack_fires_after_ack_delay),
		cmocka_unit_test(sl_recv_burst__new_hole_nacks_once_immediately),
		cmocka_unit_test(sl_recv_burst__front_fill_delivers_run_and_frees_blocks),
		cmocka_unit_test(sl_recv_burst__partial_fill_frees_passed_blocks_and_splits_holes),
		cmocka_unit_test(sl_recv_burst__middle_access_dropped),
		cmocka_unit_test(sl_recv_burst__middle_walk_ablation_accepts_middle_blocks),
		cmocka_unit_test(sl_recv_burst__conn_max_blocks_caps_one_connection),
		cmocka_unit_test(sl_recv_burst__pool_exhausted_drops_then_recovers),
		cmocka_unit_test(sl_recv_stats_get__pool_usage_integral_and_redundant_rtx),
		cmocka_unit_test(sl_recv_burst__duplicate_and_out_of_window),
		cmocka_unit_test(sl_recv_burst__psn_wrap),
		cmocka_unit_test(sl_recv_burst__gbn_drops_and_nacks_once_per_gap),
		cmocka_unit_test(sl_recv_burst__gbn_nack_interval_repeats_after_interval),
		cmocka_unit_test(sl_recv_burst__gbn_nack_interval_zero_never_repeats),
		cmocka_unit_test(sl_recv_burst__gbn_without_nack_sends_a_dup_ack_without_sack),
		cmocka_unit_test(sl_recv_burst__cnp_rate_limited_per_connection),
		cmocka_unit_test(sl_recv_burst__ack_echo_ecn_and_sack_fields),
		cmocka_unit_test(sl_recv_burst__ndp_pulls_and_nacks_trimmed),
		cmocka_unit_test(sl_recv_conn_close__returns_stored_handles),
		cmocka_unit_test(sl_recv_burst__stops_when_actions_may_not_fit),
		cmocka_unit_test(sl_recv_burst__random_arrivals_keep_invariants),
	};
	return cmocka_run_group_tests_name("recv", tests, NULL, NULL);
}
