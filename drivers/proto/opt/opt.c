/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * opt - the OPT baseline of the endpoint-congestion paper (Chong and Krishnan, "Addressing
 * Endpoint-induced Congestion for Accelerator Scale-Out in a Medium-Scale Domain", section III.A,
 * "Baseline and Proposed Policies"): a go-back-N sender with no congestion control at all, as a
 * Tonic program with window credit.
 *
 * Model. The sender transmits back to back up to two fixed thresholds of outstanding data, an
 * outstanding-packet threshold and an outstanding-byte threshold; the window is their minimum,
 * min(param[0] segments, param[1] bytes / seg_bytes), at least 1, and never changes. The
 * paper does not give the thresholds: the defaults are the flow's ring W and no byte limit.
 * Loss recovery is the base protocol's (section II.A): the target drops an out-of-order packet
 * and NACKs the next expected segment; the sender goes back N, marking [nack_seq, snd_max), and
 * the retransmissions follow the same window (a NACK naming a hole, from a target with
 * selective repeat, marks the hole alone). A lost ACK or NACK is recovered by the engine's
 * RTO, which goes back N too. Duplicate ACKs mean nothing to OPT (the plain target never sends
 * them; lib/recv sends one for an out-of-order packet when the program takes no NACKs).
 * State machine: none; no per-flow state (priv_size 0), no periodic hook.
 * Parameters (ec_window.h, shared with aimd and dack): param[0] outstanding segments [W];
 * param[1] outstanding bytes [0: no limit]. Units: segments, bytes.
 */
#include "sl_proto.h"
#include "../ec_window.h"

static int
opt_init(const struct sl_flow_view *f, void *priv, const struct sl_flow_conf *fc,
	 struct sl_proto_out *out)
{
	(void)priv;
	return ec_opt_wnd(f, fc, &out->wnd_segs);
}

static void
opt_incoming(const struct sl_flow_view *f, void *priv, const struct sl_incoming *in,
	     struct sl_proto_out *out)
{
	(void)priv;
	ec_nack_mark(f, in, out);
}

static const struct sl_proto_ops opt_ops = {
	.incoming = opt_incoming,
	.init = opt_init,
	.credit = SL_CREDIT_WINDOW,
	.priv_size = 0,
	.feedback = 0, /* cumulative ACKs; the seed's target NACKs on its own */
	.ack_every_pkts = 1,
	.name = "opt",
};

SL_PROTO_REGISTER(opt_ops);
