/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sack - SACK-based loss recovery in the style of RFC 6675, one SACK block per ack (Tonic
 * Table 3, "SACK"): window credit, segments as the unit.
 *
 * The scoreboard is the engine's `acked` bitmap. RFC 6675's definitions, in segments:
 *   IsLost(s)  at least DupThresh (3) SACKed segments above s. Because the count only falls as
 *              s grows, the lost set is "every unSACKed segment below L"; L (lost_end) is found
 *              by a binary search over sl_flow_acked_count().
 *   pipe       unSACKed segments not lost, plus those below HighRxt (retransmitted, or marked
 *              and about to be): pipe = unsacked - lost + rtx.
 *
 *   open ---IsLost(wnd_start), wnd_start > RecoveryPoint---> recovery:
 *        RecoveryPoint = highest sent; ssthresh = cwnd = max(FlightSize / 2, 2); HighRxt =
 *        wnd_start + 1 with wnd_start marked (step 4.3). On every later ack in recovery:
 *        budget = cwnd - pipe; NextSeg rule 1 marks lost segments above HighRxt (at most
 *        budget of them); rule 2 opens the window for new data with what is left.
 *   recovery ---cumack > RecoveryPoint---> open (cwnd = ssthresh).
 *   RTO: cwnd = 1 (tcp_cwnd.h), RecoveryPoint = highest sent, and recovery continues with every
 *        unSACKed segment below it counted lost while cwnd grows in slow start (RFC 6675 s5.1).
 */
#include "sl_proto.h"
#include "../tcp_cwnd.h"

#define SACK_DUPTHRESH 3 /**< SACKed segments above a hole that make it lost */

struct sack {
	struct tcp_cwnd c;
	uint32_t recover;  /**< RecoveryPoint: highest segment sent when recovery began */
	uint32_t high_rxt; /**< HighRxt + 1: segments below it were marked in this recovery */
	uint8_t inrec;     /**< in loss recovery */
	uint8_t after_rto; /**< the recovery started with an RTO: slow start, all holes lost */
};
static_assert(sizeof(struct sack) <= SL_PROTO_PRIV_MAX, "sack state exceeds scratch");

/* First segment s in [wnd_start, snd_max] with fewer than DupThresh SACKed segments above. */
static uint32_t
sack_lost_end(const struct sl_flow_view *f)
{
	uint32_t lo = f->wnd_start, hi = f->snd_max;

	while (lo != hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (sl_flow_acked_count(f, mid + 1, f->snd_max - mid - 1) >= SACK_DUPTHRESH)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* UnSACKed segments in [from, to). */
static uint32_t
sack_holes(const struct sl_flow_view *f, uint32_t from, uint32_t to)
{
	return (to - from) - sl_flow_acked_count(f, from, to - from);
}

static int
sack_init(const struct sl_flow_view *f, void *priv, const struct sl_flow_conf *fc,
	  struct sl_proto_out *out)
{
	struct sack *sk = priv;

	(void)fc;
	tcp_cwnd_init(&sk->c, f, out);
	sk->recover = f->wnd_start - 1;
	return 0;
}

/* One recovery step: retransmit lost segments, then new data, within cwnd - pipe. */
static void
sack_recover(const struct sl_flow_view *f, struct sack *sk, struct sl_proto_out *out)
{
	uint32_t ws = f->wnd_start, sent = sl_flow_sent(f);
	uint32_t lost_end = sack_lost_end(f), pipe, budget;

	if (sk->after_rto && sl_seq_lt(lost_end, sk->recover + 1))
		lost_end = sl_seq_min(sk->recover + 1, f->snd_max);
	if (sl_seq_lt(sk->high_rxt, ws))
		sk->high_rxt = ws;
	pipe = sack_holes(f, ws, f->snd_max) - sack_holes(f, ws, lost_end) +
	       sack_holes(f, ws, sk->high_rxt);
	budget = sk->c.cwnd > pipe ? sk->c.cwnd - pipe : 0;
	if (budget && sl_seq_lt(sk->high_rxt, lost_end) && out->mark_from == out->mark_to) {
		uint32_t to = sk->high_rxt, n = 0;

		while (n < budget && sl_seq_lt(to, lost_end)) /* rule 1: lost, not yet resent */
			n += !sl_flow_is_acked(f, to++);
		out->mark_from = sk->high_rxt;
		out->mark_to = to;
		sk->high_rxt = to;
		budget -= n;
	}
	out->wnd_segs = SL_MIN(sent + budget, f->max_wnd_segs); /* rule 2: new data */
}

static void
sack_incoming(const struct sl_flow_view *f, void *priv, const struct sl_incoming *in,
	      struct sl_proto_out *out)
{
	struct sack *sk = priv;
	const struct sl_event *ev = in->ev;
	bool isnew = sl_seq_gt(in->new_wnd_start, in->old_wnd_start);

	if (ev->type != SL_EV_ACK)
		return;
	if (sk->inrec && sl_seq_gt(f->wnd_start, sk->recover)) {
		sk->inrec = 0;
		sk->after_rto = 0;
		sk->c.cwnd = SL_MAX(SL_MIN(sk->c.cwnd, sk->c.ssthresh), 1u);
		out->wnd_segs = sk->c.cwnd;
		return;
	}
	if (isnew && (!sk->inrec || sk->after_rto))
		tcp_cwnd_grow(&sk->c, f, in->newly_acked);
	if (!sk->inrec && sl_seq_gt(f->wnd_start, sk->recover) &&
	    sl_seq_gt(sack_lost_end(f), f->wnd_start)) {
		sk->inrec = 1;
		sk->recover = f->snd_max - 1;
		sk->c.ssthresh = tcp_cwnd_half(sl_flow_sent(f));
		sk->c.cwnd = sk->c.ssthresh;
		sk->high_rxt = f->wnd_start + 1; /* RFC 6675 s5 step 4.3: resend the first loss */
		out->mark_from = f->wnd_start;
		out->mark_to = f->wnd_start + 1;
	}
	if (sk->inrec)
		sack_recover(f, sk, out);
	else
		out->wnd_segs = sk->c.cwnd;
}

static void
sack_periodic(const struct sl_flow_view *f, void *priv, const struct sl_periodic *p,
	      struct sl_proto_out *out)
{
	struct sack *sk = priv;

	if (!p->rto_expired || sl_flow_sent(f) == 0)
		return;
	tcp_cwnd_timeout(&sk->c, f, out);
	sk->inrec = 1;
	sk->after_rto = 1;
	sk->recover = f->snd_max - 1;
	sk->high_rxt = f->wnd_start + 1;
}

static const struct sl_proto_ops sack_ops = {
	.incoming = sack_incoming,
	.periodic = sack_periodic,
	.init = sack_init,
	.credit = SL_CREDIT_WINDOW,
	.priv_size = sizeof(struct sack),
	.feedback = SL_PROTO_FB_SACK,
	.ack_every_pkts = 2,
	.name = "sack",
};

SL_PROTO_REGISTER(sack_ops);
