/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dctcp - Data Center TCP (Alizadeh et al., SIGCOMM'10; RFC 8257) as a Tonic program: window
 * credit, the window cut in proportion to the fraction of ECN-marked segments.
 *
 * Model. Switches mark CE above a queue threshold K; the receiver echoes each segment's mark
 * (SL_EVF_ECE with ce_segs). Once per observation window (one RTT: until wnd_start passes
 * the highest segment sent when the window began) the sender updates
 *     alpha = (1 - g) alpha + g F,   F = marked segments / acked segments in the window,
 * and on the first echoed mark of a window cuts once: cwnd = cwnd (1 - alpha / 2),
 * ssthresh = cwnd. Without marks it grows like Reno (slow start, then +1 per window).
 * Losses use NewReno-style recovery (tcp_cwnd.h): the 3rd dupack halves cwnd and retransmits,
 * partial acks retransmit the next hole, the RTO restarts from one segment.
 * Constants: g = 1/16 (RFC 8257 s4.2); alpha starts at 1 (RFC 8257 s4.2, conservative).
 * Fixed point: alpha in Q10 (1.0 = 1024). Units: segments.
 */
#include "sl_proto.h"
#include "../tcp_cwnd.h"

#define DCTCP_ALPHA_ONE 1024u /**< alpha = 1.0 in Q10 */
#define DCTCP_G_SHIFT 4       /**< g = 1/16 */

struct dctcp {
	struct tcp_cwnd c;
	struct tcp_loss l;
	uint32_t win_end; /**< the observation window ends when wnd_start passes this segment */
	uint16_t alpha;   /**< fraction of marked segments, moving average, Q10 */
	uint16_t acked;   /**< segments acked in this observation window (saturating) */
	uint16_t ce;      /**< of which carried CE (saturating) */
	uint8_t cut;      /**< the window was already cut in this observation window */
};
static_assert(sizeof(struct dctcp) <= SL_PROTO_PRIV_MAX, "dctcp state exceeds scratch");

static int
dctcp_init(const struct sl_flow_view *f, void *priv, const struct sl_flow_conf *fc,
	   struct sl_proto_out *out)
{
	struct dctcp *d = priv;

	(void)fc;
	tcp_cwnd_init(&d->c, f, out);
	tcp_loss_init(&d->l, f);
	d->alpha = DCTCP_ALPHA_ONE;
	d->win_end = f->wnd_start;
	return 0;
}

/* Count acked and marked segments; close the observation window once per RTT. */
static void
dctcp_observe(const struct sl_flow_view *f, struct dctcp *d, const struct sl_incoming *in)
{
	uint32_t ce = (in->ev->flags & SL_EVF_ECE) ? in->ev->ce_segs : 0;

	d->acked = (uint16_t)SL_MIN(d->acked + in->newly_acked, UINT16_MAX);
	d->ce = (uint16_t)SL_MIN(d->ce + ce, d->acked);
	if (!sl_seq_gt(f->wnd_start, d->win_end))
		return;
	if (d->acked) {
		uint32_t frac = (uint32_t)d->ce * DCTCP_ALPHA_ONE / d->acked;

		d->alpha = (uint16_t)(d->alpha - (d->alpha >> DCTCP_G_SHIFT) +
				      (frac >> DCTCP_G_SHIFT));
	}
	d->acked = 0;
	d->ce = 0;
	d->cut = 0;
	d->win_end = f->snd_max;
}

static void
dctcp_incoming(const struct sl_flow_view *f, void *priv, const struct sl_incoming *in,
	       struct sl_proto_out *out)
{
	struct dctcp *d = priv;
	enum tcp_loss_ev le = tcp_loss_ack(&d->l, f, in, out);
	bool isnew = sl_seq_gt(in->new_wnd_start, in->old_wnd_start);

	if (in->ev->type != SL_EV_ACK)
		return;
	dctcp_observe(f, d, in);
	if (le == TCP_LOSS_FAST) {
		d->c.ssthresh = tcp_cwnd_half(sl_flow_sent(f));
		d->c.cwnd = d->c.ssthresh;
		d->cut = 1;
	} else if ((in->ev->flags & SL_EVF_ECE) && in->ev->ce_segs && !d->cut && !d->l.inrec) {
		d->c.cwnd = SL_MAX(d->c.cwnd - ((d->c.cwnd * d->alpha) >> 11), 2u);
		d->c.ssthresh = d->c.cwnd;
		d->cut = 1;
	} else if (isnew && !d->l.inrec && le != TCP_LOSS_EXIT) {
		tcp_cwnd_grow(&d->c, f, in->newly_acked);
	}
	out->wnd_segs = d->l.inrec ? d->c.cwnd + d->l.dupacks : d->c.cwnd;
	if (d->l.inrec)
		out->rto_rearm = false; /* acks inside fast recovery do not restart the RTO */
}

static void
dctcp_periodic(const struct sl_flow_view *f, void *priv, const struct sl_periodic *p,
	       struct sl_proto_out *out)
{
	struct dctcp *d = priv;

	if (!p->rto_expired || sl_flow_sent(f) == 0)
		return;
	tcp_loss_timeout(&d->l, f);
	tcp_cwnd_timeout(&d->c, f, out);
}

static const struct sl_proto_ops dctcp_ops = {
	.incoming = dctcp_incoming,
	.periodic = dctcp_periodic,
	.init = dctcp_init,
	.credit = SL_CREDIT_WINDOW,
	.priv_size = sizeof(struct dctcp),
	.feedback = SL_PROTO_FB_ECN,
	.ack_every_pkts = 2,
	.name = "dctcp",
};

SL_PROTO_REGISTER(dctcp_ops);
