/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * harness.h - drive one transport program's hooks on scripted inputs, without the engine.
 *
 * The harness keeps a flow the way lib/sched presents it to a program (struct sl_flow_view
 * with ring bitmaps) and plays the engine's fixed stage in its simplest form: a cumack slides
 * the window, a SACK inside the window sets its bit, newly_acked counts both, and the RTO
 * stops when nothing is outstanding. It pre-fills the decisions with the engine's own defaults
 * (sl_proto_default_incoming / _periodic: RFC 6298's timer rules, go-back-N on an RTO), calls
 * the program's hook if it has one and applies the decisions like the engine does (window
 * clamped to [1, W], marks only on transmitted unacked segments). Tests read the results from the
 * harness fields. Unit: segments; the window W is 128 unless a test says otherwise.
 */
#ifndef PROTO_HARNESS_H
#define PROTO_HARNESS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "sl_sched.h"

#define H_W 128u

struct harness {
	const struct sl_proto_ops *ops;
	struct sl_flow_view v;
	struct sl_flow_conf fc;
	uint64_t acked[SL_BITMAP_WORDS(H_W)];
	uint64_t marked[SL_BITMAP_WORDS(H_W)];
	uint64_t priv[SL_PROTO_PRIV_MAX / 8];
	struct sl_proto_out out; /**< the last hook's raw decisions */
	uint32_t nmarked;        /**< segments the last hook marked */
	bool rto_armed;
	uint64_t timer_at_ns; /**< program timer expiry, 0 when none */
};

static inline void
h_apply(struct harness *h)
{
	const struct sl_proto_out *o = &h->out;

	h->v.wnd_segs = SL_MIN(SL_MAX(o->wnd_segs, 1u), H_W);
	h->v.rate_bps = SL_MAX(o->rate_bps, 1u);
	h->v.rto_ns = o->rto_ns;
	h->v.tokens_bytes += o->add_tokens_bytes;
	h->nmarked = 0;
	for (uint32_t s = sl_seq_max(o->mark_from, h->v.wnd_start);
	     sl_seq_lt(s, o->mark_to) && sl_seq_lt(s, h->v.snd_max); s++) {
		if (!sl_flow_is_acked(&h->v, s) && !sl_flow_is_marked(&h->v, s)) {
			sl_bitmap_set(h->marked, s % H_W);
			h->v.marked++;
			h->nmarked++;
		}
	}
	if (o->rto_rearm)
		h->rto_armed = true;
	if (o->timer_ns)
		h->timer_at_ns = h->v.now_ns + o->timer_ns;
}

static inline void
h_prefill(struct harness *h)
{
	h->out = (struct sl_proto_out){
		.wnd_segs = h->v.wnd_segs, .rate_bps = h->v.rate_bps, .rto_ns = h->v.rto_ns};
}

/* Start a flow of program `name` with fc (seg_bytes defaults to 1000). */
static inline void
h_init(struct harness *h, const char *name, const struct sl_flow_conf *fc)
{
	memset(h, 0, sizeof(*h));
	h->ops = sl_proto_find(name);
	assert_non_null(h->ops);
	if (fc)
		h->fc = *fc;
	h->fc.proto = name;
	if (h->fc.seg_bytes == 0)
		h->fc.seg_bytes = 1000;
	h->v.wnd_start = h->v.snd_nxt = h->v.snd_max = h->v.tail = h->fc.first_seq;
	h->v.max_wnd_segs = H_W;
	h->v.seg_bytes = h->fc.seg_bytes;
	h->v.wnd_segs = h->fc.init_wnd_segs ? h->fc.init_wnd_segs : H_W;
	h->v.rate_bps = h->fc.init_rate_bps ? h->fc.init_rate_bps : 10 * SL_BPS_PER_GBPS;
	h->v.rto_ns = h->fc.rto_ns ? h->fc.rto_ns : SL_NS_PER_MS;
	h->v.tokens_bytes = h->fc.init_credit_bytes;
	h->v.param = h->fc.param;
	h->v.acked_bits = h->acked;
	h->v.marked_bits = h->marked;
	h_prefill(h);
	if (h->ops->init)
		assert_int_equal(h->ops->init(&h->v, h->priv, &h->fc, &h->out), 0);
	h_apply(h);
}

/* Transmit n segments: marked ones first (clearing them), then new ones. */
static inline void
h_send(struct harness *h, uint32_t n)
{
	while (n--) {
		uint32_t i = sl_bitmap_ffs_from(h->marked, H_W, h->v.wnd_start % H_W);

		h->v.total_sent++;
		if (i != SL_BITMAP_NONE) {
			sl_bitmap_clear(h->marked, i);
			h->v.marked--;
			continue;
		}
		h->v.snd_max++;
		h->v.snd_nxt = h->v.tail = h->v.snd_max;
	}
}

/* One event at now_ns through the fixed stage and the program's incoming hook. */
static inline void
h_event(struct harness *h, const struct sl_event *ev, uint64_t now_ns)
{
	struct sl_incoming in = {.ev = ev, .old_wnd_start = h->v.wnd_start, .now_ns = now_ns};

	h->v.now_ns = now_ns;
	if ((ev->flags & SL_EVF_CUMACK) && sl_seq_gt(ev->cumack, h->v.wnd_start) &&
	    sl_seq_le(ev->cumack, h->v.snd_max)) {
		while (h->v.wnd_start != ev->cumack) {
			uint32_t i = h->v.wnd_start % H_W;

			in.newly_acked += !sl_bitmap_test(h->acked, i);
			if (sl_bitmap_test(h->marked, i))
				h->v.marked--;
			sl_bitmap_clear(h->acked, i);
			sl_bitmap_clear(h->marked, i);
			h->v.wnd_start++;
		}
	}
	if ((ev->flags & SL_EVF_SACK) && sl_seq_ge(ev->sack_seq, h->v.wnd_start) &&
	    sl_seq_lt(ev->sack_seq, h->v.snd_max) && !sl_flow_is_acked(&h->v, ev->sack_seq)) {
		sl_bitmap_set(h->acked, ev->sack_seq % H_W);
		if (sl_flow_is_marked(&h->v, ev->sack_seq)) {
			sl_bitmap_clear(h->marked, ev->sack_seq % H_W);
			h->v.marked--;
		}
		in.sack_accepted = true;
		in.newly_acked++;
	}
	if (ev->flags & SL_EVF_TS)
		in.rtt_ns = now_ns - ev->echo_ts_ns;
	if (ev->type == SL_EV_PULL)
		h->v.tokens_bytes += ev->grant_bytes;
	in.new_wnd_start = h->v.wnd_start;
	if (h->v.wnd_start == h->v.snd_max)
		h->rto_armed = false;
	h_prefill(h);
	sl_proto_default_incoming(&h->v, &in, &h->out);
	if (h->ops->incoming)
		h->ops->incoming(&h->v, h->priv, &in, &h->out);
	h_apply(h);
}

/* A cumulative ack, optionally with one SACKed segment (sack < 0: none). */
static inline void
h_ack(struct harness *h, uint32_t cumack, int64_t sack)
{
	struct sl_event ev = {.type = SL_EV_ACK, .flags = SL_EVF_CUMACK, .cumack = cumack};

	if (sack >= 0) {
		ev.flags |= SL_EVF_SACK;
		ev.sack_seq = (uint32_t)sack;
	}
	h_event(h, &ev, h->v.now_ns);
}

/* A go-back-N NACK naming one segment, seq (no cumulative ACK). */
static inline void
h_nack(struct harness *h, uint32_t seq)
{
	struct sl_event ev = {.type = SL_EV_NACK, .nack_seq = seq, .nack_len = 1};

	h_event(h, &ev, h->v.now_ns);
}

/* The periodic hook: the RTO and/or the program timer fired at now_ns. */
static inline void
h_periodic(struct harness *h, bool rto, bool timer, uint64_t now_ns)
{
	struct sl_periodic p = {.now_ns = now_ns, .rto_expired = rto, .timer_expired = timer};

	h->v.now_ns = now_ns;
	if (rto)
		h->rto_armed = false;
	if (timer)
		h->timer_at_ns = 0;
	h_prefill(h);
	sl_proto_default_periodic(&h->v, &p, &h->out);
	if (h->ops->periodic)
		h->ops->periodic(&h->v, h->priv, &p, &h->out);
	h_apply(h);
}

#endif /* PROTO_HARNESS_H */
