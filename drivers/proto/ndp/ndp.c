/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ndp - NDP's sender (Handley et al., SIGCOMM'17) as a Tonic program: grant-token credit,
 * loss detection by NACK and timeout (Tonic Table 3, "NDP").
 *
 * Model. The receiver drives the sender: the first window goes out on the flow's initial
 * tokens (init_credit_bytes, about one BDP), and afterwards every PULL from the receiver adds
 * one segment's worth of tokens (the engine's fixed stage adds grant_bytes). Switches trim
 * the payload of packets that do not fit instead of dropping them; the receiver answers a
 * trimmed header with a NACK, which marks that segment for retransmission, and a pull, which
 * pays for it. Lost-before-new in the engine sends the retransmission first.
 *
 *   NACK [seq, seq + len)  mark those segments (only transmitted, unacked ones are marked)
 *   ACK, NACK              re-arm the RTO while anything is outstanding: every answer, not
 *                          only one that moves the window, shows the receiver is pulling
 *   RTO                    the engine's go-back-N marks every unacked segment
 *                          [wnd_start, snd_max) and adds rto_credit_bytes of tokens, so the
 *                          resend is not stuck without pulls
 * The window is the whole ring (W): credit, not the window, limits NDP. No per-flow state:
 * Tonic's version keeps 1 bit, which the engine's RTO bookkeeping already holds here.
 * Units: segments, bytes for tokens, ns.
 */
#include "sl_proto.h"

static int
ndp_init(const struct sl_flow_view *f, void *priv, const struct sl_flow_conf *fc,
	 struct sl_proto_out *out)
{
	(void)priv;
	(void)fc;
	out->wnd_segs = f->max_wnd_segs;
	return 0;
}

static void
ndp_incoming(const struct sl_flow_view *f, void *priv, const struct sl_incoming *in,
	     struct sl_proto_out *out)
{
	const struct sl_event *ev = in->ev;

	(void)priv;
	if (ev->type == SL_EV_NACK) {
		out->mark_from = ev->nack_seq;
		out->mark_to = ev->nack_seq + ev->nack_len;
	}
	if (ev->type == SL_EV_ACK || ev->type == SL_EV_NACK)
		out->rto_rearm = f->snd_max != f->wnd_start;
}

static const struct sl_proto_ops ndp_ops = {
	.incoming = ndp_incoming,
	.init = ndp_init,
	.credit = SL_CREDIT_GRANT,
	.priv_size = 0,
	/* NDP sprays packets: reordering is normal, so SACKs, and only trimmed headers are NACKed.
	 */
	.feedback = SL_PROTO_FB_SACK | SL_PROTO_FB_PULL,
	.ack_every_pkts = 1,
	.name = "ndp",
};

SL_PROTO_REGISTER(ndp_ops);
