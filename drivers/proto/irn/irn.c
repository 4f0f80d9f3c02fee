/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * irn - IRN's sender (Mittal et al., "Revisiting Network Support for RDMA", SIGCOMM'18) as a
 * Tonic program: rate credit plus selective retransmission and BDP-FC (Tonic Table 3, "IRN").
 *
 * Model. The receiver acknowledges every packet with the cumulative ack and, for an
 * out-of-order packet, that packet's number (IRN's NACK carries exactly this pair; here it is
 * an ack with a SACK, or an explicit NACK event). The acked bitmap is the sender's scoreboard.
 *
 *   open ---a SACK past the cumack, or a NACK---> recovery: recover = highest sent.
 *   recovery: every unSACKed segment below the highest SACKed one is lost; each is marked
 *             once (rtx_hi remembers how far marking got), lost-before-new sends it first.
 *   recovery ---cumack > recover---> open.
 *   RTO: enter recovery and mark every unSACKed segment [wnd_start, snd_max); the period is
 *        RTO_low when at most N = 3 segments are in flight, else RTO_high (IRN section 3.1).
 * BDP-FC caps the segments in flight at the bandwidth-delay product: the program sets the
 * window to param[0] segments (default W), which lib/sched enforces for window credit only
 * today, so a rate flow is bounded by W until the engine applies it to every scheme. The rate
 * is the flow's configured rate: IRN runs with or without DCQCN; this is its recovery half.
 * Parameters: param[0] BDP cap, segments [W]; param[1] RTO_low, ns [100 us];
 * param[2] RTO_high, ns [320 us].
 */
#include <errno.h>

#include "sl_proto.h"
#include "sl_sched.h"

#define IRN_RTO_LOW_NS UINT64_C(100000)  /**< RTO with <= IRN_RTO_N in flight, ns */
#define IRN_RTO_HIGH_NS UINT64_C(320000) /**< RTO otherwise, ns */
#define IRN_RTO_N 3                      /**< in-flight threshold for RTO_low, segments */

struct irn {
	uint32_t recover;     /**< highest segment sent when recovery began */
	uint32_t rtx_hi;      /**< segments below it were marked in this recovery */
	uint32_t sack_hi;     /**< highest SACKed segment + 1 in this recovery */
	uint32_t rto_low_us;  /**< RTO_low, us */
	uint32_t rto_high_us; /**< RTO_high, us */
	uint8_t inrec;        /**< in recovery */
};
static_assert(sizeof(struct irn) <= SL_PROTO_PRIV_MAX, "irn state exceeds scratch");

static int
irn_init(const struct sl_flow_view *f, void *priv, const struct sl_flow_conf *fc,
	 struct sl_proto_out *out)
{
	struct irn *r = priv;
	uint64_t lo = fc->param[1] ? fc->param[1] : IRN_RTO_LOW_NS;
	uint64_t hi = fc->param[2] ? fc->param[2] : IRN_RTO_HIGH_NS;

	if (fc->param[0] > f->max_wnd_segs || lo / SL_NS_PER_US > UINT32_MAX ||
	    hi / SL_NS_PER_US > UINT32_MAX || lo < SL_NS_PER_US || hi < SL_NS_PER_US)
		return -EINVAL;
	r->rto_low_us = (uint32_t)(lo / SL_NS_PER_US);
	r->rto_high_us = (uint32_t)(hi / SL_NS_PER_US);
	r->recover = f->wnd_start - 1;
	out->wnd_segs = fc->param[0] ? (uint32_t)fc->param[0] : f->max_wnd_segs;
	out->rto_ns = r->rto_high_us * SL_NS_PER_US;
	return 0;
}

static void
irn_enter(const struct sl_flow_view *f, struct irn *r)
{
	r->inrec = 1;
	r->recover = f->snd_max - 1;
	r->rtx_hi = f->wnd_start;
	r->sack_hi = f->wnd_start;
}

static void
irn_incoming(const struct sl_flow_view *f, void *priv, const struct sl_incoming *in,
	     struct sl_proto_out *out)
{
	struct irn *r = priv;
	const struct sl_event *ev = in->ev;
	uint32_t sent = sl_flow_sent(f), lost_to = f->wnd_start;

	if (ev->type == SL_EV_ACK && (ev->flags & SL_EVF_SACK) &&
	    sl_seq_gt(ev->sack_seq, f->wnd_start))
		lost_to = ev->sack_seq;
	else if (ev->type == SL_EV_NACK)
		lost_to = ev->nack_seq + ev->nack_len;
	else if (ev->type != SL_EV_ACK)
		return;
	if (r->inrec && sl_seq_gt(f->wnd_start, r->recover))
		r->inrec = 0;
	if (!r->inrec && sl_seq_gt(lost_to, f->wnd_start))
		irn_enter(f, r);
	if (r->inrec) {
		r->sack_hi = sl_seq_max(r->sack_hi, lost_to);
		r->rtx_hi = sl_seq_max(r->rtx_hi, f->wnd_start);
		if (sl_seq_lt(r->rtx_hi, r->sack_hi)) {
			out->mark_from = r->rtx_hi;
			out->mark_to = r->sack_hi;
			r->rtx_hi = r->sack_hi;
		}
	}
	out->rto_ns = (sent <= IRN_RTO_N ? r->rto_low_us : r->rto_high_us) * SL_NS_PER_US;
}

static void
irn_periodic(const struct sl_flow_view *f, void *priv, const struct sl_periodic *p,
	     struct sl_proto_out *out)
{
	struct irn *r = priv;

	(void)out; /* the engine's go-back-N marks [wnd_start, snd_max) and re-arms */
	if (!p->rto_expired || f->snd_max == f->wnd_start)
		return;
	irn_enter(f, r);
	r->rtx_hi = f->snd_max;
	r->sack_hi = f->snd_max;
}

static const struct sl_proto_ops irn_ops = {
	.incoming = irn_incoming,
	.periodic = irn_periodic,
	.init = irn_init,
	.credit = SL_CREDIT_RATE,
	.priv_size = sizeof(struct irn),
	/* IRN's NACK is (cumulative ACK, the out-of-order PSN): an ACK with a SACK. */
	.feedback = SL_PROTO_FB_SACK | SL_PROTO_FB_CNP,
	.ack_every_pkts = 1,
	.name = "irn",
};

SL_PROTO_REGISTER(irn_ops);
