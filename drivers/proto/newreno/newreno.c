/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * newreno - TCP NewReno (RFC 6582) as a Tonic program: window credit, cumulative acks only.
 *
 * Model. The logic is Tonic's appendix F, the paper's own NewReno incoming module, in C. Units
 * are segments: cwnd, ssthresh and the enforced window all count segments past wnd_start.
 *
 *   open ---3 dupacks, ack > recover (or the RFC 6582 s4.1 heuristic)---> recovery
 *     ^        mark wnd_start; ssthresh = max(inflight / 2, 2); cwnd = sent / 2
 *     |        recover = highest sent
 *     |   recovery: a partial ack (cumack <= recover) marks the new wnd_start again; dupacks
 *     |   inflate the window (wnd = cwnd + dupacks once inflight < cwnd)
 *     +---full ack (cumack > recover)---+
 *   RTO (any state): mark wnd_start, cwnd = wnd = 1, ssthresh = max(sent / 2, 2),
 *   recover = highest sent; later partial acks keep marking the next hole (go-back by holes).
 *
 * The window the engine enforces (wnd) is kept apart from the user's cwnd, as in appendix F:
 * cwnd grows by newly acked segments in slow start and by one segment every cwnd + 1 new acks
 * in congestion avoidance. The RTO is re-armed by every ack outside recovery, stopped when
 * nothing is outstanding, and not backed off (as in Tonic's code).
 */
#include "sl_proto.h"
#include "sl_newreno.h"

static_assert(sizeof(struct newreno) <= SL_PROTO_PRIV_MAX, "newreno state exceeds scratch");

static int
newreno_init(const struct sl_flow_view *f, void *priv, const struct sl_flow_conf *fc,
	     struct sl_proto_out *out)
{
	struct newreno *nr = priv;

	(void)fc;
	nr->cwnd = out->wnd_segs;
	nr->ssthresh = f->max_wnd_segs;
	nr->recover = f->wnd_start - 1;
	nr->prev_hi = f->wnd_start - 1;
	return 0;
}

static void
newreno_incoming(const struct sl_flow_view *f, void *priv, const struct sl_incoming *in,
		 struct sl_proto_out *out)
{
	struct newreno *nr = priv;
	const struct sl_event *ev = in->ev;
	uint32_t cum = ev->cumack, sent = sl_flow_sent(f), wnd = f->wnd_segs;
	uint32_t inflight, cwnd, ssthresh, newwnd;
	bool dup, isnew, fast, full, partial, inrec;

	if (ev->type != SL_EV_ACK || !(ev->flags & SL_EVF_CUMACK))
		return;
	dup = cum == in->old_wnd_start && sent > 0;
	isnew = sl_seq_gt(in->new_wnd_start, in->old_wnd_start);
	nr->dupacks = isnew ? 0 : dup ? (uint8_t)SL_MIN(nr->dupacks + 1u, 255u) : nr->dupacks;
	inflight = sent > nr->dupacks ? sent - nr->dupacks : 0;
	fast = nr->dupacks == NEWRENO_DUPTHRESH && dup &&
	       (sl_seq_gt(cum, nr->recover) || (wnd > 1 && cum - nr->prev_hi <= 4));
	full = isnew && sl_seq_gt(cum, nr->recover);
	partial = isnew && !full;
	if (isnew)
		nr->prev_hi = in->old_wnd_start;
	ssthresh = fast ? (inflight > 2 ? inflight / 2 : 2) : nr->ssthresh;
	if (fast || partial) {
		out->mark_from = f->wnd_start;
		out->mark_to = f->wnd_start + 1;
	}
	inrec = fast || (nr->inrec && sl_seq_le(cum, nr->recover));
	if (fast)
		nr->recover = f->snd_max - 1;

	/* Window (appendix F): cwnd is the user's; newwnd is what the engine enforces. */
	if (fast) {
		cwnd = sent > NEWRENO_DUPTHRESH + 2 ? sent / 2 : 1;
		newwnd = sent;
	} else if (!nr->inrec && isnew) {
		if (nr->cwnd < ssthresh)
			cwnd = nr->cwnd + in->newly_acked;
		else
			cwnd = nr->ai >= nr->cwnd ? nr->cwnd + 1 : nr->cwnd;
		newwnd = cwnd;
	} else {
		cwnd = nr->cwnd;
		newwnd = inflight >= nr->cwnd ? sent : nr->cwnd + nr->dupacks;
	}
	if (inrec && !nr->in_to)
		nr->ai = 0;
	else if (isnew && wnd >= nr->ssthresh)
		nr->ai = nr->ai == wnd ? 0 : (uint16_t)(nr->ai + 1);
	nr->in_to = nr->in_to && !full;
	nr->inrec = inrec;
	nr->ssthresh = ssthresh;
	nr->cwnd = SL_MIN(cwnd, f->max_wnd_segs);
	out->wnd_segs = SL_MAX(SL_MIN(newwnd, f->max_wnd_segs), 1u);
	/* Appendix F restarts the RTO on every ack outside recovery, and on none inside it. */
	out->rto_rearm = !inrec && f->snd_max != f->wnd_start;
}

static void
newreno_periodic(const struct sl_flow_view *f, void *priv, const struct sl_periodic *p,
		 struct sl_proto_out *out)
{
	struct newreno *nr = priv;
	uint32_t sent = sl_flow_sent(f);

	if (!p->rto_expired || sent == 0)
		return;
	out->mark_to = f->wnd_start + 1; /* the head only, not the engine's go-back-N */
	nr->ssthresh = SL_MAX(sent / 2, 2u);
	nr->cwnd = 1;
	nr->recover = f->snd_max - 1;
	nr->inrec = 0;
	nr->in_to = 1;
	nr->dupacks = 0;
	nr->ai = 0;
	out->wnd_segs = 1;
}

static const struct sl_proto_ops newreno_ops = {
	.incoming = newreno_incoming,
	.periodic = newreno_periodic,
	.init = newreno_init,
	.credit = SL_CREDIT_WINDOW,
	.priv_size = sizeof(struct newreno),
	.feedback = 0,
	.ack_every_pkts = 2,
	.name = "newreno",
};

SL_PROTO_REGISTER(newreno_ops);
