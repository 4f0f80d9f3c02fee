/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reno - TCP Reno (RFC 5681 fast retransmit / fast recovery) as a Tonic program: window
 * credit, cumulative acks only, so one loss per window is repaired without a timeout.
 *
 * States (Tonic Table 3, "Reno"):
 *   open ---3rd dupack---> recovery: mark wnd_start; ssthresh = max(flight / 2, 2);
 *                          cwnd = ssthresh; wnd = cwnd + dupacks (window inflation)
 *   recovery ---any new ack---> open: wnd = cwnd = ssthresh (deflation). A second hole in
 *                          the same window needs three more dupacks or the RTO.
 *   any ---RTO---> open with cwnd = 1 (tcp_cwnd.h).
 * Units: segments; the enforced window counts segments past wnd_start.
 */
#include "sl_proto.h"
#include "../tcp_cwnd.h"

#define RENO_DUPTHRESH 3 /**< dupacks that trigger fast retransmit */

struct reno {
	struct tcp_cwnd c;
	uint8_t dupacks; /**< duplicate acks since the last new ack */
	uint8_t inrec;   /**< in fast recovery */
};
static_assert(sizeof(struct reno) <= SL_PROTO_PRIV_MAX, "reno state exceeds scratch");

static int
reno_init(const struct sl_flow_view *f, void *priv, const struct sl_flow_conf *fc,
	  struct sl_proto_out *out)
{
	struct reno *r = priv;

	(void)fc;
	tcp_cwnd_init(&r->c, f, out);
	return 0;
}

static void
reno_incoming(const struct sl_flow_view *f, void *priv, const struct sl_incoming *in,
	      struct sl_proto_out *out)
{
	struct reno *r = priv;
	const struct sl_event *ev = in->ev;
	uint32_t sent = sl_flow_sent(f);

	if (ev->type != SL_EV_ACK || !(ev->flags & SL_EVF_CUMACK))
		return;
	if (sl_seq_gt(in->new_wnd_start, in->old_wnd_start)) {
		if (r->inrec)
			r->inrec = 0; /* deflate: cwnd is already ssthresh */
		else
			tcp_cwnd_grow(&r->c, f, in->newly_acked);
		r->dupacks = 0;
		out->wnd_segs = r->c.cwnd;
		return;
	}
	if (ev->cumack != in->old_wnd_start || sent == 0)
		return;
	r->dupacks = (uint8_t)SL_MIN(r->dupacks + 1u, 255u);
	if (!r->inrec && r->dupacks == RENO_DUPTHRESH) {
		r->inrec = 1;
		r->c.ssthresh = tcp_cwnd_half(sent);
		r->c.cwnd = r->c.ssthresh;
		out->mark_from = f->wnd_start;
		out->mark_to = f->wnd_start + 1;
	}
	if (r->inrec)
		out->wnd_segs = r->c.cwnd + r->dupacks;
}

static void
reno_periodic(const struct sl_flow_view *f, void *priv, const struct sl_periodic *p,
	      struct sl_proto_out *out)
{
	struct reno *r = priv;

	if (!p->rto_expired || sl_flow_sent(f) == 0)
		return;
	r->inrec = 0;
	r->dupacks = 0;
	tcp_cwnd_timeout(&r->c, f, out);
}

static const struct sl_proto_ops reno_ops = {
	.incoming = reno_incoming,
	.periodic = reno_periodic,
	.init = reno_init,
	.credit = SL_CREDIT_WINDOW,
	.priv_size = sizeof(struct reno),
	.feedback = 0,
	.ack_every_pkts = 2,
	.name = "reno",
};

SL_PROTO_REGISTER(reno_ops);
