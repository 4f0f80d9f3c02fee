/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * aimd - the TCP-like baseline of the endpoint-congestion paper (Chong and Krishnan, "Addressing
 * Endpoint-induced Congestion for Accelerator Scale-Out in a Medium-Scale Domain", section III.A):
 * an RFC 5681 congestion window in bytes over the paper's go-back-N reliability, as a Tonic program
 * with window credit.
 *
 * Model (the paper gives only "grows linearly and shrinks in half depending on NACKs and
 * ACKs"; the rest is ours):
 *   - cwnd, bytes, starts at param[2] [10 x seg_bytes] and is capped at OPT's window x
 *     seg_bytes (ec_window.h); the enforced window is cwnd / seg_bytes segments, at least 1;
 *   - congestion avoidance only (no slow start): each newly acked segment adds
 *     seg_bytes x seg_bytes / cwnd (RFC 5681 eq. 3), about one segment per RTT; the quotient's
 *     remainder is carried (acc), so the growth is exact in integers; one ACK adds at most one
 *     segment (a go-back-N burst acked at once after an RTO must not jump the window);
 *   - a NACK goes back N as OPT does (or resends its hole alone, SL_EVF_HOLE) and halves cwnd
 *     (at least one segment), at most once per
 *     window of data: the halving sets the recovery point to snd_max, and until wnd_start
 *     reaches it NACKs only mark and cwnd does not grow (RFC 6582's "recover");
 *   - a duplicate ACK is no signal (the baseline's target never sends one: no dupack rule);
 *   - RTO: the engine's go-back-N, cwnd = one segment, and a recovery point at snd_max (the
 *     NACKs of the same loss do not cut the window again).
 * States: open, recovery (recover valid). Units: bytes, segments.
 * Parameters: param[0] outstanding segments [W]; param[1] outstanding bytes [no limit];
 * param[2] initial cwnd, bytes [10 x seg_bytes].
 */
#include "sl_proto.h"
#include "../ec_window.h"

#define AIMD_INIT_SEGS 10 /**< initial window without param[2], segments */

struct aimd {
	uint64_t cwnd;    /**< congestion window, bytes */
	uint64_t cap;     /**< OPT's window, bytes: the most cwnd may be */
	uint64_t acc;     /**< seg_bytes^2 summed over acked segments, not yet added, bytes^2 */
	uint32_t recover; /**< snd_max at the last cut: no second cut before wnd_start reaches it */
	uint8_t inrec;    /**< recover is valid */
};
static_assert(sizeof(struct aimd) <= SL_PROTO_PRIV_MAX, "aimd state exceeds scratch");

static void
aimd_window(const struct sl_flow_view *f, const struct aimd *a, struct sl_proto_out *out)
{
	out->wnd_segs = (uint32_t)SL_MAX(a->cwnd / f->seg_bytes, 1u);
}

static int
aimd_init(const struct sl_flow_view *f, void *priv, const struct sl_flow_conf *fc,
	  struct sl_proto_out *out)
{
	struct aimd *a = priv;
	uint32_t opt;
	int rc = ec_opt_wnd(f, fc, &opt);

	if (rc)
		return rc;
	a->cap = (uint64_t)opt * f->seg_bytes;
	a->cwnd = fc->param[2] ? fc->param[2] : (uint64_t)AIMD_INIT_SEGS * f->seg_bytes;
	a->cwnd = SL_MIN(SL_MAX(a->cwnd, f->seg_bytes), a->cap);
	aimd_window(f, a, out);
	return 0;
}

/* One cut per window of data: halve, at least one segment, and remember snd_max. */
static void
aimd_cut(const struct sl_flow_view *f, struct aimd *a, uint64_t cwnd)
{
	a->cwnd = SL_MAX(cwnd, f->seg_bytes);
	a->acc = 0;
	a->recover = f->snd_max;
	a->inrec = 1;
}

static void
aimd_incoming(const struct sl_flow_view *f, void *priv, const struct sl_incoming *in,
	      struct sl_proto_out *out)
{
	struct aimd *a = priv;
	uint64_t seg = f->seg_bytes, inc;

	if (a->inrec && sl_seq_ge(f->wnd_start, a->recover))
		a->inrec = 0;
	if (in->ev->type == SL_EV_NACK) {
		ec_nack_mark(f, in, out);
		if (!a->inrec)
			aimd_cut(f, a, a->cwnd / 2);
	} else if (in->ev->type == SL_EV_ACK && !a->inrec) {
		a->acc += (uint64_t)in->newly_acked * seg * seg;
		inc = a->acc / a->cwnd;
		a->acc = inc < seg ? a->acc - inc * a->cwnd : 0;
		inc = SL_MIN(inc, seg);
		a->cwnd = SL_MIN(a->cwnd + inc, a->cap);
	}
	aimd_window(f, a, out);
}

static void
aimd_periodic(const struct sl_flow_view *f, void *priv, const struct sl_periodic *p,
	      struct sl_proto_out *out)
{
	struct aimd *a = priv;

	if (!p->rto_expired || sl_flow_sent(f) == 0)
		return;
	aimd_cut(f, a, f->seg_bytes); /* the engine's go-back-N stays in out */
	aimd_window(f, a, out);
}

static const struct sl_proto_ops aimd_ops = {
	.incoming = aimd_incoming,
	.periodic = aimd_periodic,
	.init = aimd_init,
	.credit = SL_CREDIT_WINDOW,
	.priv_size = sizeof(struct aimd),
	.feedback = 0, /* cumulative ACKs; the seed's target NACKs on its own */
	.ack_every_pkts = 1,
	.name = "aimd",
};

SL_PROTO_REGISTER(aimd_ops);
