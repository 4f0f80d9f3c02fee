/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * melo - the two senders of MELO's evaluation (Lu et al., "Memory Efficient Loss Recovery for
 * Hardware-based Transport in Datacenter", APNet'17, sections 3.2.4 and 4) as Tonic programs:
 * "melo" resends only the holes the receiver NACKs, "gbn" is RoCE's go-back-N baseline.
 *
 * Model. Both send at the flow's configured rate (rate credit): the paper runs DCQCN, which
 * reacts to ECN marks and not to random loss, so with loss alone the rate stays at line rate.
 * Loss recovery is all they decide:
 *   melo: a NACK event names one range of missing segments [nack_seq, nack_seq + nack_len),
 *         already rebuilt into the sender's bitmap and de-duplicated by lib/recv's rtx tracker
 *         (the host feeds one event per range); exactly that range is marked, so only the
 *         holes are resent.
 *   gbn:  a NACK names the receiver's expected segment (RCV.NXT); the sender rewinds to it:
 *         [nack_seq, snd_max) is marked, everything sent after the loss goes again. This is
 *         also the sender of the DCQCN ns-3 model (its NACK handler drops the sending buffer
 *         below the NACKed PSN and requeues the rest); how often the NACK comes is the
 *         receiver's choice (lib/recv's nack_interval_ns: RoCE style or ns-3's repeat).
 *   both: the engine's timer rules as they are: a cumulative ACK that moves the window
 *         re-arms the RTO, and an RTO resends from the front, [wnd_start, snd_max) (the paper:
 *         a lost retransmission is recovered by the timeout, GBN-like). The RTO period is the
 *         flow's rto_ns, fixed.
 * Feedback: NACKs and CNPs, one ACK per packet, DCQCN's (the paper runs both under DCQCN).
 * State machine: none beyond the engine's (no private state, priv_size 0, no init or periodic
 * hook). Units: segments, ns.
 */
#include "sl_proto.h"
#include "sl_sched.h"

/* A NACK marks its range (melo) or everything from it on (gbn); nothing else is decided. */
static void
recovery_incoming(const struct sl_flow_view *f, const struct sl_incoming *in,
		  struct sl_proto_out *out, bool rewind)
{
	const struct sl_event *ev = in->ev;

	if (ev->type == SL_EV_NACK) {
		out->mark_from = ev->nack_seq;
		out->mark_to = rewind ? f->snd_max : ev->nack_seq + ev->nack_len;
	}
}

static void
melo_incoming(const struct sl_flow_view *f, void *priv, const struct sl_incoming *in,
	      struct sl_proto_out *out)
{
	(void)priv;
	recovery_incoming(f, in, out, false);
}

static void
gbn_incoming(const struct sl_flow_view *f, void *priv, const struct sl_incoming *in,
	     struct sl_proto_out *out)
{
	(void)priv;
	recovery_incoming(f, in, out, true);
}

static const struct sl_proto_ops melo_ops = {
	.incoming = melo_incoming,
	.credit = SL_CREDIT_RATE,
	.priv_size = 0,
	.feedback = SL_PROTO_FB_NACK | SL_PROTO_FB_CNP,
	.ack_every_pkts = 1,
	.name = "melo",
};

static const struct sl_proto_ops gbn_ops = {
	.incoming = gbn_incoming,
	.credit = SL_CREDIT_RATE,
	.priv_size = 0,
	.feedback = SL_PROTO_FB_NACK | SL_PROTO_FB_CNP,
	.ack_every_pkts = 1,
	.name = "gbn",
};

SL_PROTO_REGISTER(melo_ops);
SL_PROTO_REGISTER(gbn_ops);
