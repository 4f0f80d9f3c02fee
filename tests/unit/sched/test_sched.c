/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for lib/sched/sched.c, the Tonic engine: every rule of the fixed stage, generation,
 * the three credit schemes, timers and the step rule, with test-local programs whose hooks do
 * only what a case configures (the real programs live in drivers/proto). Ends with randomized
 * event sequences over a lossy, reordering network checked against invariants.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sl_rng.h"
#include "sl_sched.h"
#include "sl_time.h"

/* ---- test programs: behaviour switched by the case ---- */

static struct {
	struct sl_incoming last_in; /* copy of the last incoming input */
	struct sl_event last_ev;    /* and of its event */
	struct sl_flow_view last_f; /* the flow as the hook saw it */
	struct sl_periodic last_p;
	unsigned n_in, n_per;
	uint64_t newly_sum[64]; /* per flow: sum of newly_acked */
	uint32_t set_wnd;       /* != 0: every incoming sets this window */
	uint64_t cnp_rate_bps;  /* CNP sets this rate */
	bool no_rto_defaults;   /* the hooks undo the engine's re-arm and go-back-N */
	uint64_t init_timer_ns; /* init asks for a program timer */
} T;

static void
t_incoming(const struct sl_flow_view *f, void *priv, const struct sl_incoming *in,
	   struct sl_proto_out *out)
{
	(void)priv;
	T.last_in = *in;
	T.last_ev = *in->ev;
	T.last_f = *f;
	T.n_in++;
	if (f->flow < 64)
		T.newly_sum[f->flow] += in->newly_acked;
	if (in->ev->type == SL_EV_NACK) {
		out->mark_from = in->ev->nack_seq;
		out->mark_to = in->ev->nack_seq + in->ev->nack_len;
	}
	if (in->ev->type == SL_EV_CNP && T.cnp_rate_bps)
		out->rate_bps = T.cnp_rate_bps;
	if (T.set_wnd)
		out->wnd_segs = T.set_wnd;
	if (T.no_rto_defaults)
		out->rto_rearm = false;
}

static void
t_periodic(const struct sl_flow_view *f, void *priv, const struct sl_periodic *p,
	   struct sl_proto_out *out)
{
	(void)priv;
	T.last_p = *p;
	T.last_f = *f;
	T.n_per++;
	if (T.no_rto_defaults) {
		out->mark_to = out->mark_from;
		out->rto_rearm = false;
	}
}

static int
t_init(const struct sl_flow_view *f, void *priv, const struct sl_flow_conf *fc,
       struct sl_proto_out *out)
{
	(void)f, (void)priv;
	if (fc->param[0] == 99)
		return -EPERM;
	out->timer_ns = T.init_timer_ns;
	return 0;
}

#define TEST_OPS(var, nm, cr)                                                                      \
	static const struct sl_proto_ops var = {                                                   \
		.incoming = t_incoming,                                                            \
		.periodic = t_periodic,                                                            \
		.init = t_init,                                                                    \
		.credit = cr,                                                                      \
		.priv_size = 16,                                                                   \
		.name = nm,                                                                        \
	};                                                                                         \
	SL_PROTO_REGISTER(var)

TEST_OPS(t_win, "t_win", SL_CREDIT_WINDOW);
TEST_OPS(t_rate, "t_rate", SL_CREDIT_RATE);
TEST_OPS(t_grant, "t_grant", SL_CREDIT_GRANT);

/* ---- helpers ---- */

static struct sl_sched *
mk(uint32_t flows, uint32_t W)
{
	struct sl_sched_conf c = {.max_flows = flows, .wnd_segs = W, .timer_tick_ns = 1000};
	struct sl_sched *s = sl_sched_create(&c);

	assert_non_null(s);
	memset(&T, 0, sizeof(T));
	return s;
}

static void
add(struct sl_sched *s, uint32_t flow, const char *proto, uint32_t wnd)
{
	struct sl_flow_conf fc = {.proto = proto, .seg_bytes = 1000, .init_wnd_segs = wnd};

	assert_int_equal(sl_sched_flow_add(s, flow, &fc), 0);
}

/* Flow 0 with program t_win and window wnd, nsegs pushed, the first burst at time 0. */
static unsigned
start(struct sl_sched *s, uint32_t wnd, uint32_t nsegs, uint16_t last_len, struct sl_seg *out,
      unsigned max)
{
	add(s, 0, "t_win", wnd);
	assert_int_equal(sl_sched_flow_push(s, 0, nsegs, last_len), 0);
	return sl_sched_next_burst(s, 0, out, max);
}

static void
ack(struct sl_sched *s, uint32_t flow, uint32_t cumack, uint64_t now)
{
	struct sl_event e = {
		.flow = flow, .type = SL_EV_ACK, .flags = SL_EVF_CUMACK, .cumack = cumack};

	assert_int_equal(sl_sched_incoming(s, &e, 1, now), 1);
}

static void
sack(struct sl_sched *s, uint32_t flow, uint32_t cumack, uint32_t seq, uint64_t now)
{
	struct sl_event e = {.flow = flow,
			     .type = SL_EV_ACK,
			     .flags = SL_EVF_CUMACK | SL_EVF_SACK,
			     .cumack = cumack,
			     .sack_seq = seq};

	assert_int_equal(sl_sched_incoming(s, &e, 1, now), 1);
}

static void
nack(struct sl_sched *s, uint32_t flow, uint32_t seq, uint32_t len, uint64_t now)
{
	struct sl_event e = {.flow = flow, .type = SL_EV_NACK, .nack_seq = seq, .nack_len = len};

	assert_int_equal(sl_sched_incoming(s, &e, 1, now), 1);
}

static struct sl_sched_stats
stats(const struct sl_sched *s)
{
	struct sl_sched_stats st;

	sl_sched_stats_get(s, &st);
	return st;
}

static struct sl_flow_view
view(const struct sl_sched *s, uint32_t flow)
{
	struct sl_flow_view v;

	assert_int_equal(sl_sched_flow_view(s, flow, &v), 0);
	return v;
}

/* The rate the engine's pacer applies to a flow, bps. */
static uint64_t
pacer_rate(const struct sl_sched *s, uint32_t flow)
{
	struct sl_pacer_flow_stats ps;

	assert_int_equal(sl_pacer_flow_stats_get(sl_sched_pacer(s), flow, &ps), 0);
	return ps.rate_bps;
}

/* ---- configuration ---- */

static void
sl_sched_create__rejects_bad_conf(void **state)
{
	const struct sl_sched_conf bad[] = {
		{.max_flows = 0},
		{.max_flows = 4, .wnd_segs = 32},
		{.max_flows = 4, .wnd_segs = 8192},
		{.max_flows = 4, .wnd_segs = 96},
		{.max_flows = 4, .queue_segs = 12},
		{.max_flows = 4, .queue_segs = 128},
		{.max_flows = 4, .queue_segs = 16, .queue_stop = 17},
		{.max_flows = 4, .queue_segs = 16, .queue_stop = 8, .queue_resume = 9},
		{.max_flows = 4, .timer_slots = 100},
		{.max_flows = 4, .flags = 1u << 7},
	};

	(void)state;
	for (unsigned i = 0; i < SL_ARRAY_SIZE(bad); i++) {
		errno = 0;
		assert_null(sl_sched_create(&bad[i]));
		assert_int_equal(errno, EINVAL);
	}
	assert_null(sl_sched_create(NULL));
	sl_sched_free(NULL);
}

static void
sl_sched_flow_add__validates(void **state)
{
	struct sl_sched *s = mk(4, 64);
	struct sl_flow_conf fc = {.proto = "t_win", .seg_bytes = 1000};

	(void)state;
	assert_int_equal(sl_sched_flow_add(s, 4, &fc), -EINVAL);
	fc.seg_bytes = 0;
	assert_int_equal(sl_sched_flow_add(s, 0, &fc), -EINVAL);
	fc.seg_bytes = 70000;
	assert_int_equal(sl_sched_flow_add(s, 0, &fc), -EINVAL);
	fc.seg_bytes = 1000;
	fc.init_wnd_segs = 65;
	assert_int_equal(sl_sched_flow_add(s, 0, &fc), -EINVAL);
	fc.init_wnd_segs = 0;
	fc.proto = "nope";
	assert_int_equal(sl_sched_flow_add(s, 0, &fc), -ENOENT);
	fc.proto = "t_win";
	fc.param[0] = 99; /* the program's init refuses */
	assert_int_equal(sl_sched_flow_add(s, 0, &fc), -EPERM);
	assert_int_equal(sl_sched_flow_push(s, 0, 1, 1000), -ENOENT);
	fc.param[0] = 0;
	assert_int_equal(sl_sched_flow_add(s, 0, &fc), 0);
	assert_int_equal(sl_sched_flow_add(s, 0, &fc), -EEXIST);
	assert_int_equal(view(s, 0).wnd_segs, 64); /* default window: W */
	assert_int_equal(sl_sched_flow_del(s, 0), 0);
	assert_int_equal(sl_sched_flow_del(s, 0), -ENOENT);
	assert_int_equal(sl_sched_flow_add(s, 0, &fc), 0);
	sl_sched_free(s);
}

static void
sl_sched_flow_push__validates(void **state)
{
	struct sl_sched *s = mk(2, 64);

	(void)state;
	add(s, 0, "t_win", 4);
	assert_int_equal(sl_sched_flow_push(s, 0, 0, 1000), -EINVAL);
	assert_int_equal(sl_sched_flow_push(s, 0, 1, 0), -EINVAL);
	assert_int_equal(sl_sched_flow_push(s, 0, 1, 1001), -EINVAL);
	assert_int_equal(sl_sched_flow_push(s, 0, UINT32_C(1) << 30, 1000), 0);
	assert_int_equal(sl_sched_flow_push(s, 0, 1, 1000), -EOVERFLOW);
	assert_int_equal(stats(s).push_refused, 1);
	sl_sched_free(s);
}

/* ---- generation and the window ---- */

static void
sl_sched_next_burst__window_limits_new_segments(void **state)
{
	struct sl_sched *s = mk(1, 64);
	struct sl_seg out[32];

	(void)state;
	assert_int_equal(start(s, 4, 100, 1000, out, 32), 4);
	for (unsigned i = 0; i < 4; i++) {
		assert_int_equal(out[i].seq, i);
		assert_int_equal(out[i].len, 1000);
		assert_int_equal(out[i].tx_id, 0);
		assert_int_equal(out[i].flags, 0);
	}
	assert_int_equal(sl_sched_next_burst(s, 10, out, 32), 0);
	ack(s, 0, 2, 20);
	assert_int_equal(T.last_in.old_wnd_start, 0);
	assert_int_equal(T.last_in.new_wnd_start, 2);
	assert_int_equal(T.last_in.newly_acked, 2);
	assert_int_equal(sl_sched_next_burst(s, 30, out, 32), 2);
	assert_int_equal(out[0].seq, 4);
	assert_int_equal(out[1].seq, 5);
	sl_sched_free(s);
}

static void
sl_sched_next_burst__full_ring_window_edge(void **state)
{
	struct sl_sched *s = mk(1, 64);
	struct sl_seg out[128];

	(void)state;
	add(s, 0, "t_win", 64);
	sl_sched_flow_push(s, 0, 200, 1000);
	unsigned n = 0, k;
	while ((k = sl_sched_next_burst(s, 0, out + n, 128 - n)) > 0)
		n += k;
	assert_int_equal(n, 64); /* exactly W, not W + 1 */
	assert_int_equal(out[63].seq, 63);
	ack(s, 0, 0, 1); /* duplicate: nothing newly acked */
	assert_int_equal(T.last_in.newly_acked, 0);
	assert_int_equal(T.last_in.old_wnd_start, T.last_in.new_wnd_start);
	ack(s, 0, 64, 2); /* the whole ring at once */
	assert_int_equal(T.last_in.newly_acked, 64);
	assert_int_equal(view(s, 0).rto_at_ns, 0); /* all sent data acked: RTO disarmed */
	n = 0;
	while ((k = sl_sched_next_burst(s, 3, out + n, 128 - n)) > 0)
		n += k;
	assert_int_equal(n, 64);
	assert_int_equal(out[0].seq, 64);
	assert_int_equal(out[63].seq, 127);
	sl_sched_free(s);
}

static void
sl_sched_next_burst__tonic_tail_only_last_segment_short(void **state)
{
	struct sl_sched *s = mk(1, 64);
	struct sl_seg out[8];

	(void)state;
	assert_int_equal(start(s, 64, 3, 100, out, 8), 3);
	assert_int_equal(out[0].len, 1000);
	assert_int_equal(out[1].len, 1000);
	assert_int_equal(out[2].len, 100);
	assert_int_equal(out[2].flags & SL_SEG_F_TAIL, SL_SEG_F_TAIL);
	assert_int_equal(out[1].flags & SL_SEG_F_TAIL, 0);
	/* later data waits until the short segment is acked (appendix D) */
	assert_int_equal(sl_sched_flow_push(s, 0, 2, 1000), 0);
	assert_int_equal(sl_sched_flow_push(s, 0, 1, 10), -EBUSY);
	assert_int_equal(sl_sched_next_burst(s, 1, out, 8), 0);
	ack(s, 0, 2, 2);
	assert_int_equal(sl_sched_next_burst(s, 3, out, 8), 0);
	ack(s, 0, 3, 4);
	assert_int_equal(sl_sched_next_burst(s, 5, out, 8), 2);
	assert_int_equal(out[0].seq, 3);
	assert_int_equal(out[0].len, 1000);
	assert_int_equal(out[1].len, 1000);
	assert_int_equal(sl_sched_flow_push(s, 0, 1, 10), 0); /* short tail again: allowed */
	sl_sched_free(s);
}

static void
sl_sched_next_burst__lost_before_new(void **state)
{
	struct sl_sched *s = mk(1, 64);
	struct sl_seg out[16];

	(void)state;
	assert_int_equal(start(s, 8, 20, 1000, out, 16), 8);
	nack(s, 0, 3, 2, 1); /* the program marks 3 and 4 */
	assert_int_equal(view(s, 0).marked, 2);
	ack(s, 0, 2, 2); /* opens the window by 2: generation takes the lost ones first */
	assert_int_equal(sl_sched_next_burst(s, 3, out, 16), 4);
	assert_int_equal(out[0].seq, 3);
	assert_int_equal(out[0].tx_id, 1);
	assert_int_equal(out[0].flags & SL_SEG_F_RTX, SL_SEG_F_RTX);
	assert_int_equal(out[1].seq, 4);
	assert_int_equal(out[2].seq, 8);
	assert_int_equal(out[2].tx_id, 0);
	assert_int_equal(out[3].seq, 9);
	/* a second loss of 3: tx_id counts, saturating at 3 */
	for (unsigned k = 2; k <= 4; k++) {
		nack(s, 0, 3, 1, 3 + k);
		assert_int_equal(sl_sched_next_burst(s, 3 + k, out, 16), 1);
		assert_int_equal(out[0].seq, 3);
		assert_int_equal(out[0].tx_id, SL_MIN(k, 3u));
	}
	/* marks never cover acked or unsent segments */
	sack(s, 0, 2, 5, 20);
	nack(s, 0, 5, 30, 21);
	assert_int_equal(view(s, 0).marked, 4); /* 6..9 of [5, 35): 5 is SACKed, >= 10 unsent */
	sl_sched_free(s);
}

static void
sl_sched_next_burst__appendix_c_golden(void **state)
{
	/*
	 * Appendix C: ring bits 5 and 30 set, head 6: find-first gives 30, not 5. W = 64 here:
	 * wnd_start 6 (ring head 6); segment 30 is ring bit 30 and segment 69 is ring bit 5.
	 */
	struct sl_sched *s = mk(1, 64);
	struct sl_seg out[80];
	unsigned n = 0, k;

	(void)state;
	add(s, 0, "t_win", 64);
	sl_sched_flow_push(s, 0, 200, 1000);
	while ((k = sl_sched_next_burst(s, 0, out + n, 80 - n)) > 0)
		n += k;
	ack(s, 0, 6, 1);
	while ((k = sl_sched_next_burst(s, 2, out + n, 80 - n)) > 0)
		n += k;
	assert_int_equal(view(s, 0).snd_max, 70);
	nack(s, 0, 69, 1, 3); /* ring bit 5, before the head */
	nack(s, 0, 30, 1, 3); /* ring bit 30, after the head */
	assert_int_equal(sl_sched_next_burst(s, 4, out, 2), 2);
	assert_int_equal(out[0].seq, 30);
	assert_int_equal(out[1].seq, 69);
	sl_sched_free(s);
}

static void
sl_sched_incoming__fixed_stage_cumack_and_sack(void **state)
{
	struct sl_sched *s = mk(1, 64);
	struct sl_seg out[16];

	(void)state;
	assert_int_equal(start(s, 10, 20, 1000, out, 16), 10);
	sack(s, 0, 0, 3, 1);
	assert_true(T.last_in.sack_accepted);
	assert_int_equal(T.last_in.newly_acked, 1);
	assert_true(sl_flow_is_acked(&T.last_f, 3));
	assert_false(sl_flow_is_acked(&T.last_f, 2));
	sack(s, 0, 0, 3, 2); /* not new */
	assert_false(T.last_in.sack_accepted);
	assert_int_equal(T.last_in.newly_acked, 0);
	sack(s, 0, 0, 12, 3); /* in the ring but never sent */
	assert_false(T.last_in.sack_accepted);
	sack(s, 0, 0, 100, 3); /* outside the window */
	assert_false(T.last_in.sack_accepted);
	sack(s, 0, 0, 7, 4);
	assert_int_equal(sl_flow_acked_count(&T.last_f, 0, 10), 2);
	ack(s, 0, 5, 5); /* 0..4, of which 3 was SACKed */
	assert_int_equal(T.last_in.newly_acked, 4);
	assert_int_equal(T.last_in.old_wnd_start, 0);
	assert_int_equal(T.last_in.new_wnd_start, 5);
	assert_int_equal(T.last_f.wnd_start, 5);
	assert_false(sl_flow_is_acked(&T.last_f, 5));
	assert_true(sl_flow_is_acked(&T.last_f, 7));
	assert_int_equal(sl_flow_acked_count(&T.last_f, 0, 20), 1);
	ack(s, 0, 3, 6); /* stale cumack: no movement */
	assert_int_equal(T.last_in.new_wnd_start, 5);
	struct sl_sched_stats st = stats(s);
	assert_int_equal(st.sacks_accepted, 2);
	assert_int_equal(st.sacks_ignored, 3);
	assert_int_equal(st.stale_acks, 1);
	/* the acked bits slid out: the ring position of 3 is clean for segment 67 */
	ack(s, 0, 10, 7);
	assert_int_equal(T.last_in.newly_acked, 4); /* 5, 6, 8, 9 */
	assert_int_equal(sl_flow_acked_count(&T.last_f, 10, 64), 0);
	sl_sched_free(s);
}

static void
sl_sched_incoming__refuses_bad_events(void **state)
{
	struct sl_sched *s = mk(2, 64);
	struct sl_seg out[8];
	struct sl_event ev[] = {
		{.flow = 7, .type = SL_EV_ACK, .flags = SL_EVF_CUMACK, .cumack = 1},
		{.flow = 1, .type = SL_EV_ACK, .flags = SL_EVF_CUMACK, .cumack = 1}, /* no flow 1 */
		{.flow = 0, .type = SL_EV_TYPES},
		{.flow = 0, .type = SL_EV_ACK, .flags = SL_EVF_CUMACK, .cumack = 5}, /* unsent */
		{.flow = 0, .type = SL_EV_NACK, .nack_seq = 0, .nack_len = 0},
		{.flow = 0, .type = SL_EV_ACK, .flags = SL_EVF_SACK, .sack_tx_id = 4},
		{.flow = 0, .type = SL_EV_ACK, .flags = SL_EVF_CUMACK, .cumack = 2}, /* good */
	};

	(void)state;
	assert_int_equal(start(s, 4, 10, 1000, out, 8), 4);
	assert_int_equal(sl_sched_incoming(s, ev, SL_ARRAY_SIZE(ev), 1), 1);
	assert_int_equal(stats(s).bad_events, SL_ARRAY_SIZE(ev) - 1);
	assert_int_equal(stats(s).events, 1);
	assert_int_equal(view(s, 0).wnd_start, 2);
	assert_int_equal(T.n_in, 1);
	sl_sched_free(s);
}

static void
sl_sched_incoming__window_shrink_holds_new_segments(void **state)
{
	struct sl_sched *s = mk(1, 64);
	struct sl_seg out[32];

	(void)state;
	assert_int_equal(start(s, 8, 20, 1000, out, 32), 8);
	T.set_wnd = 3;
	ack(s, 0, 2, 1); /* window [2, 5): 5..7 are already out */
	assert_int_equal(view(s, 0).wnd_segs, 3);
	assert_int_equal(sl_sched_next_burst(s, 2, out, 32), 0);
	ack(s, 0, 6, 3); /* [6, 9): only 8 is new */
	assert_int_equal(sl_sched_next_burst(s, 4, out, 32), 1);
	assert_int_equal(out[0].seq, 8);
	T.set_wnd = 1000; /* clamped to W */
	ack(s, 0, 9, 5);
	assert_int_equal(view(s, 0).wnd_segs, 64);
	assert_int_equal(sl_sched_next_burst(s, 6, out, 32), 11);
	sl_sched_free(s);
}

/* ---- sets ---- */

static void
sl_sched_next_burst__round_robin_several_per_visit(void **state)
{
	struct sl_sched_conf c = {.max_flows = 3, .visit_segs = 2};
	struct sl_sched *s = sl_sched_create(&c);
	struct sl_seg out[12];

	(void)state;
	memset(&T, 0, sizeof(T));
	for (uint32_t f = 0; f < 3; f++) {
		add(s, f, "t_win", 0);
		sl_sched_flow_push(s, f, 100, 1000);
	}
	uint32_t next_seq[3] = {0};

	/* warm-up: the active set feeds the ready FIFO one flow per iteration */
	assert_int_equal(sl_sched_next_burst(s, 0, out, 12), 12);
	for (unsigned i = 0; i < 12; i++) {
		assert_int_equal(out[i].seq, next_seq[out[i].flow]);
		next_seq[out[i].flow]++;
	}
	/* steady state: visits of 2 segments, every flow once in every 3 visits */
	assert_int_equal(sl_sched_next_burst(s, 1, out, 12), 12);
	for (unsigned i = 0; i < 12; i++) {
		assert_int_equal(out[i].seq, next_seq[out[i].flow]);
		next_seq[out[i].flow]++;
		if (i % 2)
			assert_int_equal(out[i].flow, out[i - 1].flow);
		if (i >= 6)
			assert_int_equal(out[i].flow, out[i - 6].flow);
	}
	assert_true(out[0].flow != out[2].flow && out[2].flow != out[4].flow &&
		    out[0].flow != out[4].flow);
	/* a burst that ends mid-visit finishes that visit first, then round-robin again */
	uint32_t mid = out[0].flow; /* 12 segments were 2 rounds: the next visit is out[0]'s */
	assert_int_equal(sl_sched_next_burst(s, 1, out, 1), 1);
	assert_int_equal(out[0].flow, mid);
	assert_int_equal(sl_sched_next_burst(s, 1, out, 3), 3);
	assert_int_equal(out[0].flow, mid);
	assert_int_equal(out[1].flow, out[2].flow);
	assert_true(out[1].flow != mid);
	assert_int_equal(sl_sched_next_deadline(s), 0);
	sl_sched_free(s);
}

/* ---- rate credit ---- */

/* Departure times of the next n segments, driving the engine from deadline to deadline. */
static void
departures(struct sl_sched *s, uint64_t *now, struct sl_seg *segs, uint64_t *at, unsigned n)
{
	struct sl_seg out[8];

	for (unsigned k = 0; k < n;) {
		unsigned got = sl_sched_next_burst(s, *now, out, 8);

		for (unsigned i = 0; i < got && k < n; i++, k++) {
			segs[k] = out[i];
			at[k] = *now;
		}
		if (k < n) {
			uint64_t d = sl_sched_next_deadline(s);

			assert_true(d != UINT64_MAX);
			*now = SL_MAX(*now + 1, d);
		}
	}
}

static void
sl_sched_next_burst__rate_appendix_b_600ns(void **state)
{
	/*
	 * 20 Gbps, 1500 B: a segment every 600 ns exactly (Tonic at 1000-cycle precision: 1 us),
	 * released by the engine's pacer. Tassel decides a flow once per lookahead L (1 us at
	 * first) for floor(R x L / len) packets, the fraction carried: the first decision sends
	 * one, so the second leaves at the next decision, within one L; from then on every
	 * departure is exact and none is early.
	 */
	struct sl_sched *s = mk(1, 128);
	struct sl_flow_conf fc = {
		.proto = "t_rate", .seg_bytes = 1500, .init_rate_bps = 20 * SL_BPS_PER_GBPS};
	struct sl_seg segs[40];
	uint64_t now = 0, at[40];

	(void)state;
	assert_int_equal(sl_sched_flow_add(s, 0, &fc), 0);
	sl_sched_flow_push(s, 0, 100, 1500);
	departures(s, &now, segs, at, 1);
	assert_int_equal(at[0], 0);
	/* the active stage announced queue_stop (11) slots; one was released and sent */
	assert_int_equal(view(s, 0).queued, 10);
	assert_int_equal(view(s, 0).snd_nxt, 1);
	departures(s, &now, segs + 1, at + 1, SL_ARRAY_SIZE(at) - 1);
	assert_true(at[1] >= 600 && at[1] <= 600 + SL_NS_PER_US);
	for (unsigned k = 2; k < SL_ARRAY_SIZE(at); k++)
		assert_int_equal(at[k], 600 * k);
	assert_int_equal(stats(s).pace_released, SL_ARRAY_SIZE(at));
	sl_sched_free(s);
}

/* The window bounds a rate flow too (Tonic's wnd_size; IRN's BDP-FC sets it). */
static void
sl_sched_next_burst__rate_flow_within_window(void **state)
{
	struct sl_sched *s = mk(1, 128);
	struct sl_flow_conf fc = {.proto = "t_rate",
				  .seg_bytes = 1000,
				  .init_wnd_segs = 4,
				  .init_rate_bps = 100 * SL_BPS_PER_GBPS};
	struct sl_seg out[64];
	unsigned n = 0;

	(void)state;
	assert_int_equal(sl_sched_flow_add(s, 0, &fc), 0);
	sl_sched_flow_push(s, 0, 100, 1000);
	for (uint64_t t = 0; t < 100 * SL_NS_PER_US; t += SL_NS_PER_US)
		n += sl_sched_next_burst(s, t, out, 64);
	assert_int_equal(n, 4); /* credit for 64 segments, window of 4 */
	assert_int_equal(view(s, 0).snd_nxt, 4);
	ack(s, 0, 2, 100 * SL_NS_PER_US);
	for (uint64_t t = 101 * SL_NS_PER_US; t < 200 * SL_NS_PER_US; t += SL_NS_PER_US)
		n += sl_sched_next_burst(s, t, out, 64);
	assert_int_equal(n, 6); /* two acked, two more */
	sl_sched_free(s);
}

/* Long-run conformance: bytes sent over a horizon match R within 1%, 1 Mbps to 100 Gbps. */
static void
sl_sched_next_burst__rate_conformance(void **state)
{
	static const uint64_t rates[] = {1 * SL_BPS_PER_MBPS, 37 * SL_BPS_PER_MBPS, SL_BPS_PER_GBPS,
					 20 * SL_BPS_PER_GBPS, 100 * SL_BPS_PER_GBPS};

	(void)state;
	for (unsigned r = 0; r < SL_ARRAY_SIZE(rates); r++) {
		struct sl_sched *s = mk(1, 128);
		struct sl_flow_conf fc = {
			.proto = "t_rate", .seg_bytes = 1500, .init_rate_bps = rates[r]};
		struct sl_seg out[8];
		uint64_t now = 0, bytes = 0, horizon = sl_tx_ns_ceil(1500 * 2000, rates[r]);

		assert_int_equal(sl_sched_flow_add(s, 0, &fc), 0);
		sl_sched_flow_push(s, 0, 100000, 1500);
		while (now <= horizon) {
			unsigned n = sl_sched_next_burst(s, now, out, 8);

			for (unsigned i = 0; i < n; i++)
				bytes += out[i].len;
			if (n) /* an ideal receiver: the ring never limits the rate */
				ack(s, 0, out[n - 1].seq + 1, now);
			now = SL_MAX(now, sl_sched_next_deadline(s));
		}
		/* c0 = 1500 B plus R x horizon */
		double expect = 1500.0 + (double)rates[r] * (double)horizon / 8e9;
		assert_true(bytes <= expect + 1);
		assert_true((double)bytes >= expect * 0.99);
		sl_sched_free(s);
	}
}

static void
sl_sched_incoming__rate_change_reschedules(void **state)
{
	struct sl_sched *s = mk(1, 128);
	struct sl_flow_conf fc = {.proto = "t_rate",
				  .seg_bytes = 1000,
				  .init_rate_bps = SL_BPS_PER_MBPS,
				  .rto_ns = SL_NS_PER_S};
	struct sl_seg out[4];
	struct sl_event cnp = {.flow = 0, .type = SL_EV_CNP};

	(void)state;
	assert_int_equal(sl_sched_flow_add(s, 0, &fc), 0);
	sl_sched_flow_push(s, 0, 10, 1000);
	assert_int_equal(sl_sched_next_burst(s, 0, out, 4), 1);
	assert_int_equal(sl_sched_next_burst(s, 1000, out, 4), 0); /* 8 ms apart at 1 Mbps */
	T.cnp_rate_bps = 8 * SL_BPS_PER_GBPS;                      /* 1000 B per us */
	sl_sched_incoming(s, &cnp, 1, 1000);
	assert_int_equal(view(s, 0).rate_bps, 8 * SL_BPS_PER_GBPS);
	assert_int_equal(pacer_rate(s, 0), 8 * SL_BPS_PER_GBPS);
	/* the packet already decided keeps its time; the ones after it go at the new rate */
	assert_int_equal(sl_sched_next_burst(s, 8 * SL_NS_PER_MS - 1, out, 4), 0);
	assert_int_equal(sl_sched_next_burst(s, 8 * SL_NS_PER_MS, out, 4), 1);
	assert_int_equal(sl_sched_next_burst(s, 8 * SL_NS_PER_MS + 999, out, 4), 0);
	assert_int_equal(sl_sched_next_burst(s, 8 * SL_NS_PER_MS + 1000, out, 4), 1);
	sl_sched_free(s);
}

/* ---- pacing: caps, lengths, lost before new ---- */

/* A window flow with a cap leaves at the cap, charged its length plus the wire overhead. */
static void
sl_sched_next_burst__window_flow_with_a_cap_is_paced(void **state)
{
	struct sl_sched_conf c = {.max_flows = 1, .wnd_segs = 128, .wire_overhead_bytes = 24};
	struct sl_sched *s = sl_sched_create(&c);
	struct sl_flow_conf fc = {.proto = "t_win",
				  .seg_bytes = 976,
				  .max_rate_bps = 8 * SL_BPS_PER_GBPS}; /* 1000 B per us */
	struct sl_seg segs[40];
	uint64_t now = 0, at[40];

	(void)state;
	assert_non_null(s);
	memset(&T, 0, sizeof(T));
	assert_int_equal(sl_sched_flow_add(s, 0, &fc), 0);
	assert_int_equal(pacer_rate(s, 0), 8 * SL_BPS_PER_GBPS);
	assert_int_equal(sl_sched_flow_push(s, 0, 100, 976), 0);
	departures(s, &now, segs, at, SL_ARRAY_SIZE(at));
	for (unsigned k = 0; k < SL_ARRAY_SIZE(at); k++)
		assert_int_equal(segs[k].seq, k);
	/* Tassel's first decision sends one; after the next, every departure is exact */
	assert_true(at[1] >= SL_NS_PER_US && at[1] <= 2 * SL_NS_PER_US);
	for (unsigned k = 2; k < SL_ARRAY_SIZE(at); k++)
		assert_int_equal(at[k], k * SL_NS_PER_US);
	sl_sched_free(s);
}

/* A cap below a rate program's rate wins; the program's rate still shows in its view. */
static void
sl_sched_flow_add__cap_bounds_a_rate_program(void **state)
{
	struct sl_sched *s = mk(2, 128);
	struct sl_flow_conf fc = {.proto = "t_rate",
				  .seg_bytes = 1000,
				  .init_rate_bps = 20 * SL_BPS_PER_GBPS,
				  .max_rate_bps = SL_BPS_PER_GBPS};
	struct sl_flow_conf gc = {
		.proto = "t_grant", .seg_bytes = 1000, .max_rate_bps = SL_BPS_PER_GBPS};
	struct sl_event cnp = {.flow = 0, .type = SL_EV_CNP};

	(void)state;
	assert_int_equal(sl_sched_flow_add(s, 0, &fc), 0);
	assert_int_equal(view(s, 0).rate_bps, 20 * SL_BPS_PER_GBPS);
	assert_int_equal(pacer_rate(s, 0), SL_BPS_PER_GBPS);
	T.cnp_rate_bps = 100 * SL_BPS_PER_MBPS; /* below the cap: the program's rate rules */
	sl_sched_incoming(s, &cnp, 1, 0);
	assert_int_equal(pacer_rate(s, 0), 100 * SL_BPS_PER_MBPS);
	T.cnp_rate_bps = 1; /* below the pacer's floor: clamped to it */
	sl_sched_incoming(s, &cnp, 1, 0);
	assert_int_equal(view(s, 0).rate_bps, 1);
	assert_int_equal(pacer_rate(s, 0), SL_PACER_RATE_MIN_BPS);
	/* a grant program's receiver paces it: no cap */
	assert_int_equal(sl_sched_flow_add(s, 1, &gc), -EINVAL);
	fc.seg_bytes = SL_PACER_LEN_MAX + 1; /* longer than the pacer takes */
	assert_int_equal(sl_sched_flow_add(s, 1, &fc), -EINVAL);
	sl_sched_free(s);
}

/*
 * The line bypass: a rate flow at the link's rate leaves through the ready FIFO, a run at a
 * time, with no pacer release; a CNP that cuts its rate below the link puts it back under the
 * pacer, which starts it afresh (no burst for the time it was away) and times it at the new
 * rate exactly; back at the link's rate it bypasses again. Nothing is lost, sent twice or out of
 * order on the way. Without the flag the same flow is released by the pacer.
 */
static void
sl_sched_next_burst__line_bypass_skips_the_pacer_at_the_link_rate(void **state)
{
	struct sl_sched_conf c = {.max_flows = 1,
				  .wnd_segs = 128,
				  .timer_tick_ns = 1000,
				  .link_bps = 8 * SL_BPS_PER_GBPS, /* 1000 B per us */
				  .flags = SL_SCHED_F_LINE_BYPASS};
	struct sl_flow_conf fc = {.proto = "t_rate",
				  .seg_bytes = 1000,
				  .init_rate_bps = 8 * SL_BPS_PER_GBPS,
				  .rto_ns = SL_NS_PER_S};
	struct sl_event cnp = {.flow = 0, .type = SL_EV_CNP};
	struct sl_seg out[64];
	uint32_t next = 0;
	uint64_t now;
	unsigned n;

	(void)state;
	for (int bypass = 1; bypass >= 0; bypass--) {
		struct sl_sched *s;

		c.flags = bypass ? SL_SCHED_F_LINE_BYPASS : 0;
		s = sl_sched_create(&c);
		assert_non_null(s);
		memset(&T, 0, sizeof(T));
		next = 0;
		assert_int_equal(sl_sched_flow_add(s, 0, &fc), 0);
		sl_sched_flow_push(s, 0, 1000, 1000);
		n = sl_sched_next_burst(s, 0, out, 64);
		for (unsigned i = 0; i < n; i++)
			assert_int_equal(out[i].seq, next++);
		if (!bypass) { /* the pacer: one now (Tassel's first decision), the rest timed */
			assert_int_equal(n, 1);
			assert_int_equal(stats(s).pace_released, 1);
			assert_int_equal(stats(s).bypass_enters, 0);
			sl_sched_free(s);
			continue;
		}
		/* a window's worth at once (the link keeps the line), no pacer release */
		assert_int_equal(n, 64);
		assert_int_equal(stats(s).pace_released, 0);
		assert_int_equal(stats(s).bypass_enters, 1);
		ack(s, 0, next, 1000);
		/* a CNP: 1 Gbit/s, one 1000-B segment every 8 us, under the pacer from now */
		T.cnp_rate_bps = SL_BPS_PER_GBPS;
		sl_sched_incoming(s, &cnp, 1, 1000);
		assert_int_equal(stats(s).bypass_leaves, 1);
		assert_int_equal(pacer_rate(s, 0), SL_BPS_PER_GBPS);
		for (now = 1000; now < 1000 + 80 * SL_NS_PER_US; now += SL_NS_PER_US) {
			n = sl_sched_next_burst(s, now, out, 64);
			for (unsigned i = 0; i < n; i++)
				assert_int_equal(out[i].seq, next++);
		}
		/* 80 us at 1 Gbit/s: 10 segments, give or take the first decision's one */
		assert_true(next - 64 >= 10 && next - 64 <= 11);
		assert_true(stats(s).pace_released >= 10);
		/* back at the link's rate: the ready FIFO again */
		ack(s, 0, next, now);
		T.cnp_rate_bps = 8 * SL_BPS_PER_GBPS;
		sl_sched_incoming(s, &cnp, 1, now);
		assert_int_equal(stats(s).bypass_enters, 2);
		n = sl_sched_next_burst(s, now, out, 64);
		assert_true(n >= 64 - 11); /* all the window left, in one call */
		for (unsigned i = 0; i < n; i++)
			assert_int_equal(out[i].seq, next++);
		assert_int_equal(view(s, 0).snd_nxt, next);
		sl_sched_free(s);
	}
}

/*
 * Slots announced before a loss was known carry the resend first: under go-back-N, new data
 * sent ahead of the rewound segments would open a new hole at every rewind.
 */
static void
sl_sched_next_burst__paced_resend_goes_before_announced_new_data(void **state)
{
	struct sl_sched *s = mk(1, 128);
	struct sl_flow_conf fc = {
		.proto = "t_rate", .seg_bytes = 1000, .init_rate_bps = 8 * SL_BPS_PER_GBPS};
	struct sl_seg segs[8];
	uint64_t now = 0, at[8];

	(void)state;
	assert_int_equal(sl_sched_flow_add(s, 0, &fc), 0);
	assert_int_equal(sl_sched_flow_push(s, 0, 100, 1000), 0);
	departures(s, &now, segs, at, 4); /* 0..3 sent, slots for more announced */
	assert_true(view(s, 0).queued > 0);
	nack(s, 0, 1, 1, now);
	departures(s, &now, segs, at, 2);
	assert_int_equal(segs[0].seq, 1);
	assert_true(segs[0].flags & SL_SEG_F_RTX);
	assert_int_equal(segs[1].seq, 4);
	/* a window cut leaves the outstanding slots nothing to send: released unused, counted */
	assert_true(view(s, 0).queued > 0);
	T.set_wnd = 5; /* wnd_start 0, snd_nxt 5 */
	ack(s, 0, 0, now);
	for (unsigned i = 0; i < 200; i++, now += 100) /* 20 us: 1 us apart, 11 at most */
		assert_int_equal(sl_sched_next_burst(s, now, segs, 8), 0);
	assert_true(stats(s).pace_unused > 0);
	assert_int_equal(view(s, 0).queued, 0);
	sl_sched_free(s);
}

/* ---- grant credit ---- */

static void
sl_sched_next_burst__grant_tokens(void **state)
{
	struct sl_sched *s = mk(1, 64);
	struct sl_flow_conf fc = {.proto = "t_grant", .seg_bytes = 1000, .rto_ns = 10000};
	struct sl_event pull = {.flow = 0, .type = SL_EV_PULL, .grant_bytes = 2500};
	struct sl_seg out[32];

	(void)state;
	assert_int_equal(sl_sched_flow_add(s, 0, &fc), 0);
	sl_sched_flow_push(s, 0, 40, 1000);
	assert_int_equal(sl_sched_next_burst(s, 0, out, 32), 0); /* no tokens */
	sl_sched_incoming(s, &pull, 1, 1);
	assert_int_equal(sl_sched_next_burst(s, 1, out, 32), 2);
	assert_int_equal(view(s, 0).tokens_bytes, 500);
	assert_int_equal(sl_sched_next_burst(s, 2, out, 32), 0);
	assert_int_equal(stats(s).credit_waits, 1);
	/* the RTO adds 16000 B of retransmission credit; the engine goes back N */
	assert_int_equal(sl_sched_next_burst(s, 12000, out, 32), 16);
	/* nothing is generated ahead of tokens: the resends go first, then new data */
	assert_int_equal(out[0].seq, 0);
	assert_int_equal(out[0].tx_id, 1);
	assert_int_equal(out[1].seq, 1);
	assert_int_equal(out[1].tx_id, 1);
	assert_int_equal(out[2].seq, 2);
	assert_int_equal(out[15].seq, 15);
	assert_int_equal(view(s, 0).tokens_bytes, 500);
	sl_sched_free(s);
}

/* ---- timers ---- */

static void
sl_sched_next_burst__rto_armed_at_transmit_swept_within_a_tick(void **state)
{
	struct sl_sched *s = mk(1, 64);
	struct sl_flow_conf fc = {.proto = "t_win", .seg_bytes = 1000, .rto_ns = 10000};
	struct sl_seg out[8];

	(void)state;
	assert_int_equal(sl_sched_flow_add(s, 0, &fc), 0);
	assert_int_equal(view(s, 0).rto_at_ns, 0);
	sl_sched_flow_push(s, 0, 4, 1000);
	assert_int_equal(sl_sched_next_burst(s, 500, out, 8), 4);
	assert_int_equal(view(s, 0).rto_at_ns, 10500);
	uint64_t dl = sl_sched_next_deadline(s);
	assert_true(dl >= 10500 && dl <= 10500 + 1024);
	assert_int_equal(sl_sched_next_burst(s, 10499, out, 8), 0);
	assert_int_equal(T.n_per, 0);
	assert_int_equal(sl_sched_next_burst(s, dl, out, 8), 4); /* the engine goes back N */
	assert_int_equal(T.n_per, 1);
	assert_true(T.last_p.rto_expired);
	assert_false(T.last_p.timer_expired);
	assert_int_equal(T.last_f.rto_at_ns, 0); /* disarmed before the hook */
	assert_int_equal(out[0].tx_id, 1);
	assert_int_equal(view(s, 0).rto_at_ns, dl + 10000); /* re-armed by the engine */
	assert_int_equal(stats(s).rto_fired, 1);
	sl_sched_free(s);
}

static void
sl_sched_next_burst__ack_in_same_step_drops_timeout(void **state)
{
	struct sl_sched *s = mk(1, 64);
	struct sl_flow_conf fc = {.proto = "t_win", .seg_bytes = 1000, .rto_ns = 10000};
	struct sl_seg out[8];

	(void)state;
	assert_int_equal(sl_sched_flow_add(s, 0, &fc), 0);
	sl_sched_flow_push(s, 0, 4, 1000);
	assert_int_equal(sl_sched_next_burst(s, 0, out, 8), 4);
	T.no_rto_defaults = true;
	ack(s, 0, 1, 20000); /* progress, but the program does not re-arm */
	assert_int_equal(sl_sched_next_burst(s, 20000, out, 8), 0);
	assert_int_equal(T.n_per, 0);
	assert_int_equal(stats(s).rto_dropped_by_ack, 1);
	assert_int_equal(stats(s).rto_fired, 0);
	/* the next step has no ack: the timeout fires */
	assert_int_equal(sl_sched_next_burst(s, 21024, out, 8), 0);
	assert_int_equal(T.n_per, 1);
	assert_true(T.last_p.rto_expired);
	assert_int_equal(stats(s).rto_fired, 1);
	sl_sched_free(s);
}

static void
sl_sched_next_burst__rto_rearm_later_and_disarm(void **state)
{
	struct sl_sched *s = mk(1, 64);
	struct sl_flow_conf fc = {.proto = "t_win", .seg_bytes = 1000, .rto_ns = 10000};
	struct sl_seg out[8];

	(void)state;
	assert_int_equal(sl_sched_flow_add(s, 0, &fc), 0);
	sl_sched_flow_push(s, 0, 4, 1000);
	assert_int_equal(sl_sched_next_burst(s, 0, out, 8), 4);
	ack(s, 0, 1, 8000);
	sl_sched_next_burst(s, 8000, out, 8);
	assert_int_equal(view(s, 0).rto_at_ns, 18000);
	sl_sched_next_burst(s, 12000, out, 8); /* the old expiry passes quietly */
	assert_int_equal(T.n_per, 0);
	ack(s, 0, 4, 13000); /* everything acked: disarmed */
	assert_int_equal(view(s, 0).rto_at_ns, 0);
	sl_sched_next_burst(s, 50000, out, 8);
	assert_int_equal(T.n_per, 0);
	assert_int_equal(sl_sched_next_deadline(s), UINT64_MAX);
	sl_sched_free(s);
}

/* A program without hooks: RFC 6298's rules and go-back-N are the engine's. */
static const struct sl_proto_ops t_bare = {.credit = SL_CREDIT_WINDOW, .name = "t_bare"};
SL_PROTO_REGISTER(t_bare);

static void
sl_sched__program_without_hooks_gets_rfc6298_and_go_back_n(void **state)
{
	struct sl_sched *s = mk(1, 64);
	struct sl_flow_conf fc = {.proto = "t_bare", .seg_bytes = 1000, .rto_ns = 10000};
	struct sl_seg out[16];
	struct sl_event dup = {.flow = 0, .type = SL_EV_ACK, .flags = SL_EVF_CUMACK, .cumack = 3};

	(void)state;
	assert_int_equal(sl_sched_flow_add(s, 0, &fc), 0);
	sl_sched_flow_push(s, 0, 8, 1000);
	assert_int_equal(sl_sched_next_burst(s, 0, out, 16), 8);
	assert_int_equal(view(s, 0).rto_at_ns, 10000); /* 5.1: armed at transmit */
	ack(s, 0, 3, 4000);
	assert_int_equal(view(s, 0).rto_at_ns, 14000); /* 5.3: re-armed by progress */
	sl_sched_incoming(s, &dup, 1, 6000);
	assert_int_equal(view(s, 0).rto_at_ns, 14000); /* a duplicate does not re-arm */
	sl_sched_next_burst(s, 6000, out, 16);
	/* 5.4, 5.6: the expiry resends everything unacked, [3, 8), and re-arms */
	assert_int_equal(sl_sched_next_burst(s, 14000 + 1024, out, 16), 5);
	for (unsigned i = 0; i < 5; i++) {
		assert_int_equal(out[i].seq, 3 + i);
		assert_int_equal(out[i].tx_id, 1);
	}
	assert_true(view(s, 0).rto_at_ns > 14000);
	ack(s, 0, 8, 20000); /* 5.2: all acknowledged, stopped */
	assert_int_equal(view(s, 0).rto_at_ns, 0);
	assert_int_equal(sl_sched_next_deadline(s), UINT64_MAX);
	sl_sched_free(s);
}

/* RTOs far past the first wheel level (2.1 ms) and past the second (8.8 s) fire in time. */
static void
sl_sched_next_burst__far_rto_fires_within_a_tick(void **state)
{
	static const uint64_t rto[] = {SL_NS_PER_S, 60 * SL_NS_PER_S};

	(void)state;
	for (unsigned i = 0; i < SL_ARRAY_SIZE(rto); i++) {
		struct sl_sched *s = mk(2, 64);
		struct sl_flow_conf fc = {.proto = "t_win", .seg_bytes = 1000, .rto_ns = rto[i]};
		struct sl_seg out[4];
		uint64_t now = 0, dl;

		T.no_rto_defaults = true; /* each fires once */
		assert_int_equal(sl_sched_flow_add(s, 0, &fc), 0);
		fc.rto_ns = 3 * SL_NS_PER_MS; /* a near one on the same wheel */
		assert_int_equal(sl_sched_flow_add(s, 1, &fc), 0);
		sl_sched_flow_push(s, 0, 1, 1000);
		sl_sched_flow_push(s, 1, 1, 1000);
		assert_int_equal(sl_sched_next_burst(s, 0, out, 4), 2);
		/* run the clock in uneven steps, as a run loop would */
		while (T.n_per < 2 && now < rto[i] + SL_NS_PER_MS) {
			dl = sl_sched_next_deadline(s);
			assert_true(dl > now && dl != UINT64_MAX);
			now = dl;
			sl_sched_next_burst(s, now, out, 4);
			if (T.n_per == 1 && T.last_f.flow == 1)
				assert_true(now >= 3 * SL_NS_PER_MS &&
					    now <= 3 * SL_NS_PER_MS + 1024);
		}
		assert_int_equal(T.n_per, 2);
		assert_int_equal(T.last_f.flow, 0);
		assert_true(now >= rto[i] && now <= rto[i] + 1024);
		sl_sched_free(s);
	}
}

static void
sl_sched_next_burst__program_timer(void **state)
{
	struct sl_sched *s = mk(1, 64);
	struct sl_flow_conf fc = {.proto = "t_win", .seg_bytes = 1000, .start_ns = 5000};
	struct sl_seg out[2];

	(void)state;
	T.init_timer_ns = 55000;
	assert_int_equal(sl_sched_flow_add(s, 0, &fc), 0);
	sl_sched_next_burst(s, 60000 - 1, out, 2);
	assert_int_equal(T.n_per, 0);
	sl_sched_next_burst(s, 60000 + 1000, out, 2);
	assert_int_equal(T.n_per, 1);
	assert_true(T.last_p.timer_expired);
	assert_false(T.last_p.rto_expired);
	assert_int_equal(stats(s).timers_fired, 1);
	sl_sched_free(s);
}

static void
sl_sched_flow_stats__counts(void **state)
{
	struct sl_sched *s = mk(2, 64);
	struct sl_flow_stats fs;
	struct sl_sched_stats st;
	struct sl_seg out[8];

	(void)state;
	assert_int_equal(start(s, 8, 3, 100, out, 8), 3);
	nack(s, 0, 1, 1, 1);
	assert_int_equal(sl_sched_next_burst(s, 2, out, 8), 1);
	ack(s, 0, 3, 3);
	assert_int_equal(sl_sched_flow_stats_get(s, 0, &fs), 0);
	assert_int_equal(fs.segs_sent, 4);
	assert_int_equal(fs.segs_rtx, 1);
	assert_int_equal(fs.bytes_sent, 1000 + 1000 + 100 + 1000);
	assert_int_equal(fs.acks, 1);
	assert_int_equal(fs.nacks, 1);
	assert_int_equal(sl_sched_flow_stats_get(s, 1, &fs), -ENOENT);
	sl_sched_stats_get(s, &st);
	assert_int_equal(st.decisions, 4);
	assert_int_equal(st.generated, 4);
	assert_int_equal(st.generated_rtx, 1);
	/* the table reads the counter it names */
	assert_int_equal(sl_stat_get(&st, &sl_sched_stat_table.desc[0]), 4);
	assert_string_equal(sl_sched_stat_table.desc[0].name, "decisions");
	assert_non_null(sl_sched_flow_priv(s, 0));
	assert_null(sl_sched_flow_priv(s, 1));
	sl_sched_free(s);
}

/* ---- sequence wrap and timestamps ---- */

static void
sl_sched__sequence_wrap(void **state)
{
	struct sl_sched *s = mk(1, 64);
	struct sl_flow_conf fc = {.proto = "t_win",
				  .seg_bytes = 1000,
				  .init_wnd_segs = 16,
				  .first_seq = UINT32_MAX - 5};
	struct sl_seg out[32];

	(void)state;
	assert_int_equal(sl_sched_flow_add(s, 0, &fc), 0);
	sl_sched_flow_push(s, 0, 20, 700);
	assert_int_equal(sl_sched_next_burst(s, 0, out, 32), 16); /* the window */
	assert_int_equal(out[0].seq, UINT32_MAX - 5);
	assert_int_equal(out[6].seq, 0);
	assert_int_equal(out[15].seq, 9);
	assert_int_equal(sl_sched_next_burst(s, 0, out, 32), 0);
	sack(s, 0, UINT32_MAX - 1, 2, 1); /* cumack before the wrap, SACK after */
	assert_true(T.last_in.sack_accepted);
	assert_int_equal(T.last_in.newly_acked, 5);
	nack(s, 0, UINT32_MAX, 3, 2); /* marks UINT32_MAX, 0, 1 */
	assert_int_equal(view(s, 0).marked, 3);
	assert_int_equal(sl_sched_next_burst(s, 3, out, 32), 7);
	assert_int_equal(out[0].seq, UINT32_MAX);
	assert_int_equal(out[1].seq, 0);
	assert_int_equal(out[2].seq, 1);
	assert_int_equal(out[2].tx_id, 1);
	assert_int_equal(out[3].seq, 10);
	assert_int_equal(out[6].seq, 13);
	assert_int_equal(out[6].len, 700);
	ack(s, 0, 14, 4); /* across the wrap */
	assert_int_equal(T.last_in.newly_acked, 19 - 4);
	assert_int_equal(view(s, 0).wnd_start, 14);
	sl_sched_free(s);
}

static void
sl_sched_incoming__rtt_samples(void **state)
{
	struct sl_sched_conf c = {.max_flows = 1, .flags = SL_SCHED_F_TX_TS};
	struct sl_sched *s = sl_sched_create(&c);
	struct sl_seg out[8];
	struct sl_event e = {.flow = 0,
			     .type = SL_EV_ACK,
			     .flags = SL_EVF_CUMACK | SL_EVF_TS,
			     .cumack = 1,
			     .echo_ts_ns = 100};

	(void)state;
	memset(&T, 0, sizeof(T));
	add(s, 0, "t_win", 8);
	sl_sched_flow_push(s, 0, 8, 1000);
	assert_int_equal(sl_sched_next_burst(s, 100, out, 2), 2);
	assert_int_equal(sl_sched_next_burst(s, 300, out, 1), 1);
	sl_sched_incoming(s, &e, 1, 1100); /* echoed */
	assert_int_equal(T.last_in.rtt_ns, 1000);
	ack(s, 0, 3, 1500); /* stored send time of segment 2: 300 */
	assert_int_equal(T.last_in.rtt_ns, 1200);
	assert_int_equal(sl_sched_next_burst(s, 1550, out, 8), 5);
	nack(s, 0, 3, 1, 1600);
	assert_int_equal(sl_sched_next_burst(s, 1700, out, 8), 1);
	ack(s, 0, 4, 2000); /* segment 3 was resent: Karn, no sample */
	assert_int_equal(T.last_in.rtt_ns, 0);
	assert_true(sl_sched_bytes_per_flow(s) > 128 * 8);
	sl_sched_free(s);
}

/* ---- randomized: lossy reordering network, ideal receiver, invariants ---- */

#define RF 6       /* flows */
#define RSEGS 400  /* segments pushed per flow */
#define RPIPE 4096 /* in-flight packets */

struct pkt {
	uint64_t at_ns;
	uint32_t flow, seq;
	uint8_t tx_id;
};

static void
check_invariants(const struct sl_sched *s, uint32_t flow)
{
	struct sl_flow_view v = view(s, flow);
	uint32_t W = v.max_wnd_segs, marked = 0;

	assert_true(sl_seq_le(v.wnd_start, v.snd_max));
	assert_true(sl_seq_le(v.snd_max, v.snd_nxt));
	assert_true(sl_seq_le(v.snd_nxt, v.tail));
	assert_true(v.snd_max - v.wnd_start <= W);
	for (uint32_t i = 0; i < W; i++) {
		uint32_t seq = v.wnd_start + i;
		bool a = sl_bitmap_test(v.acked_bits, seq & (W - 1));
		bool m = sl_bitmap_test(v.marked_bits, seq & (W - 1));

		if (!sl_seq_lt(seq, v.snd_max))
			assert_false(a || m); /* nothing known beyond what was sent */
		assert_false(a && m);         /* acked segments are never marked */
		marked += m;
	}
	assert_int_equal(marked, v.marked);
}

static void
run_random(uint64_t seed, const char *proto, uint32_t W, double loss)
{
	struct sl_sched_conf c = {.max_flows = RF,
				  .wnd_segs = W,
				  .timer_tick_ns = 512,
				  .visit_segs = 1 + (uint32_t)(seed % 8)};
	struct sl_sched *s = sl_sched_create(&c);
	static struct pkt pipe[RPIPE];
	static uint8_t got[RF][RSEGS];
	struct sl_rng rng;
	struct sl_seg out[64];
	uint32_t first[RF], cum[RF], pushed[RF] = {0};
	uint64_t newly = 0;
	unsigned npipe = 0;
	uint64_t now = 0, thr = sl_rng_threshold(loss);

	memset(&T, 0, sizeof(T));
	memset(got, 0, sizeof(got));
	sl_rng_seed(&rng, seed);
	for (uint32_t f = 0; f < RF; f++) {
		struct sl_flow_conf fc = {.proto = proto,
					  .seg_bytes = 1000,
					  .init_wnd_segs = 1 + (uint32_t)sl_rng_below(&rng, W),
					  .init_rate_bps =
						  SL_BPS_PER_GBPS * (1 + sl_rng_below(&rng, 40)),
					  .init_credit_bytes = 3000,
					  .rto_ns = 200000,
					  .first_seq = (uint32_t)sl_rng_next(&rng)};

		assert_int_equal(sl_sched_flow_add(s, f, &fc), 0);
		first[f] = cum[f] = fc.first_seq;
	}
	for (unsigned step = 0; step < 200000; step++) {
		uint32_t f = (uint32_t)sl_rng_below(&rng, RF);
		bool done = true;

		/* random pushes (a short tail only at the very end) */
		if (pushed[f] < RSEGS && sl_rng_below(&rng, 8) == 0) {
			uint32_t want = 1 + (uint32_t)sl_rng_below(&rng, 40);
			uint32_t n = SL_MIN(want, RSEGS - pushed[f]);
			uint16_t last = pushed[f] + n == RSEGS ? 333 : 1000;

			if (sl_sched_flow_push(s, f, n, last) == 0)
				pushed[f] += n;
		}
		/* a grant flow gets pulls */
		if (strcmp(proto, "t_grant") == 0 && sl_rng_below(&rng, 4) == 0) {
			struct sl_event p = {.flow = f, .type = SL_EV_PULL, .grant_bytes = 3000};

			sl_sched_incoming(s, &p, 1, now);
		}
		/* deliver due packets (random order among due ones), ideal receiver acks */
		for (unsigned i = 0; i < npipe;) {
			struct pkt p = pipe[i];

			if (p.at_ns > now) {
				i++;
				continue;
			}
			pipe[i] = pipe[--npipe];
			uint32_t off = p.seq - first[p.flow];
			struct sl_event e = {.flow = p.flow,
					     .type = SL_EV_ACK,
					     .flags = SL_EVF_CUMACK | SL_EVF_SACK,
					     .sack_seq = p.seq,
					     .sack_tx_id = p.tx_id};

			assert_true(off < RSEGS);
			got[p.flow][off] = 1;
			while (cum[p.flow] - first[p.flow] < RSEGS &&
			       got[p.flow][cum[p.flow] - first[p.flow]])
				cum[p.flow]++;
			e.cumack = cum[p.flow];
			assert_int_equal(sl_sched_incoming(s, &e, 1, now), 1);
		}
		unsigned n = sl_sched_next_burst(s, now, out, 1 + (unsigned)sl_rng_below(&rng, 64));
		for (unsigned i = 0; i < n; i++) {
			struct sl_flow_view v = view(s, out[i].flow);

			/* sent within the ring, after the window start */
			assert_true(sl_seq_ge(out[i].seq, v.wnd_start));
			assert_true(sl_seq_lt(out[i].seq, v.wnd_start + W));
			if (strcmp(proto, "t_win") == 0 && !(out[i].flags & SL_SEG_F_RTX))
				assert_true(sl_seq_lt(out[i].seq, v.wnd_start + v.wnd_segs));
			assert_int_equal(out[i].len,
					 out[i].seq - first[out[i].flow] == RSEGS - 1 ? 333 : 1000);
			if (sl_rng_chance(&rng, thr) || npipe == RPIPE)
				continue;
			pipe[npipe++] = (struct pkt){.at_ns = now + 2000 + sl_rng_below(&rng, 8000),
						     .flow = out[i].flow,
						     .seq = out[i].seq,
						     .tx_id = out[i].tx_id};
		}
		for (uint32_t k = 0; k < RF; k++) {
			if (step % 64 == 0)
				check_invariants(s, k);
			done = done && pushed[k] == RSEGS &&
			       view(s, k).wnd_start == first[k] + RSEGS;
		}
		if (done)
			break;
		now += 1 + sl_rng_below(&rng, 300);
	}
	for (uint32_t f = 0; f < RF; f++) {
		/* every pushed segment acked, and counted newly acked once, and once more for
		 * each time an RTO forgot its SACK (RFC 2018 section 8) */
		assert_int_equal(view(s, f).wnd_start, first[f] + RSEGS);
		assert_true(T.newly_sum[f] >= RSEGS);
		newly += T.newly_sum[f] - RSEGS;
	}
	assert_int_equal(newly, stats(s).sacks_forgotten);
	sl_sched_free(s);
}

static void
sl_sched__random_events_keep_invariants(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 6; seed++) {
		run_random(seed, "t_win", seed & 1 ? 64 : 256, 0.05 * (double)(seed % 3));
		run_random(seed + 100, "t_rate", 128, 0.03);
		run_random(seed + 200, "t_grant", 64, 0.02);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sl_sched_create__rejects_bad_conf),
		cmocka_unit_test(sl_sched_flow_add__validates),
		cmocka_unit_test(sl_sched_flow_push__validates),
		cmocka_unit_test(sl_sched_next_burst__window_limits_new_segments),
		cmocka_unit_test(sl_sched_next_burst__full_ring_window_edge),
		cmocka_unit_test(sl_sched_next_burst__tonic_tail_only_last_segment_short),
		cmocka_unit_test(sl_sched_next_burst__lost_before_new),
		cmocka_unit_test(sl_sched_next_burst__appendix_c_golden),
		cmocka_unit_test(sl_sched_incoming__fixed_stage_cumack_and_sack),
		cmocka_unit_test(sl_sched_incoming__refuses_bad_events),
		cmocka_unit_test(sl_sched_incoming__window_shrink_holds_new_segments),
		cmocka_unit_test(sl_sched_next_burst__round_robin_several_per_visit),
		cmocka_unit_test(sl_sched_next_burst__rate_appendix_b_600ns),
		cmocka_unit_test(sl_sched_next_burst__rate_flow_within_window),
		cmocka_unit_test(sl_sched_next_burst__rate_conformance),
		cmocka_unit_test(sl_sched_incoming__rate_change_reschedules),
		cmocka_unit_test(sl_sched_next_burst__window_flow_with_a_cap_is_paced),
		cmocka_unit_test(sl_sched_flow_add__cap_bounds_a_rate_program),
		cmocka_unit_test(sl_sched_next_burst__paced_resend_goes_before_announced_new_data),
		cmocka_unit_test(sl_sched_next_burst__line_bypass_skips_the_pacer_at_the_link_rate),
		cmocka_unit_test(sl_sched_next_burst__grant_tokens),
		cmocka_unit_test(sl_sched_next_burst__rto_armed_at_transmit_swept_within_a_tick),
		cmocka_unit_test(sl_sched_next_burst__ack_in_same_step_drops_timeout),
		cmocka_unit_test(sl_sched_next_burst__rto_rearm_later_and_disarm),
		cmocka_unit_test(sl_sched__program_without_hooks_gets_rfc6298_and_go_back_n),
		cmocka_unit_test(sl_sched_next_burst__far_rto_fires_within_a_tick),
		cmocka_unit_test(sl_sched_next_burst__program_timer),
		cmocka_unit_test(sl_sched_flow_stats__counts),
		cmocka_unit_test(sl_sched__sequence_wrap),
		cmocka_unit_test(sl_sched_incoming__rtt_samples),
		cmocka_unit_test(sl_sched__random_events_keep_invariants),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
