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
 *   both: a cumulative ACK that moves the window re-arms the RTO; an RTO resends from the
 *         front, [wnd_start, snd_max), and re-arms (the paper: a lost retransmission is
 *         recovered by the timeout, GBN-like). The RTO period is the flow's rto_ns, fixed.
 * State machine: none beyond the engine's (no private state, priv_size 0). Units: segments,
 * ns.
 */
#include "sl_proto.h"
#include "sl_sched.h"

static void
recovery_incoming(const struct sl_flow_view *f, const struct sl_incoming *in,
		  struct sl_proto_out *out, bool rewind)
{
	const struct sl_event *ev = in->ev;

	if (ev->type == SL_EV_NACK) {
		out->mark_from = ev->nack_seq;
		out->mark_to = rewind ? f->snd_max : ev->nack_seq + ev->nack_len;
	}
	if (sl_flow_sent(f) == 0)
		out->rto_stop = true;
	else if (sl_seq_gt(in->new_wnd_start, in->old_wnd_start))
		out->rto_rearm = true;
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

static void
recovery_periodic(const struct sl_flow_view *f, void *priv, const struct sl_periodic *p,
		  struct sl_proto_out *out)
{
	(void)priv;
	if (!p->rto_expired || sl_flow_sent(f) == 0)
		return;
	out->mark_from = f->wnd_start;
	out->mark_to = f->snd_max;
	out->rto_rearm = true;
}

static int
recovery_init(const struct sl_flow_view *f, void *priv, const struct sl_flow_conf *fc,
	      struct sl_proto_out *out)
{
	(void)f;
	(void)priv;
	(void)fc;
	(void)out;
	return 0;
}

static const struct sl_proto_ops melo_ops = {
	.incoming = melo_incoming,
	.periodic = recovery_periodic,
	.init = recovery_init,
	.credit = SL_CREDIT_RATE,
	.priv_size = 0,
	.name = "melo",
};

static const struct sl_proto_ops gbn_ops = {
	.incoming = gbn_incoming,
	.periodic = recovery_periodic,
	.init = recovery_init,
	.credit = SL_CREDIT_RATE,
	.priv_size = 0,
	.name = "gbn",
};

SL_PROTO_REGISTER(melo_ops);
SL_PROTO_REGISTER(gbn_ops);
