/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dcqcn - RoCEv2 congestion control, DCQCN's reaction point (Zhu et al., SIGCOMM'15), as a
 * Tonic program: rate credit (Tonic Table 3, "RoCE+DCQCN").
 *
 * Model. The current rate RC is the engine's rate; the program keeps the target rate RT, the
 * congestion estimate alpha, and two increase stages: T counts timer periods and BC counts
 * byte-counter periods since the last cut.
 *
 *   CNP:            RT = RC; RC = max(RC x (1 - alpha / 2), min rate); alpha = (1 - g) alpha + g;
 *                   T = BC = 0; the timer and the byte counter restart.
 *   timer (55 us):  alpha = (1 - g) alpha (no CNP for a period); T += 1; increase.
 *   B bytes sent:   BC += 1; increase.
 *   increase:       fast recovery while max(T, BC) < F: RT unchanged;
 *                   hyper increase once min(T, BC) >= F: RT += (min(T, BC) - F + 1) R_HAI;
 *                   additive increase otherwise: RT += R_AI;  then RC = (RT + RC) / 2, both
 *                   capped at the line rate (the flow's initial rate).
 * Constants are the DCQCN paper's: g = 1/256, F = 5, alpha timer K = rate-increase timer
 * T = 55 us (one timer serves both: both restart on a CNP and fire after 55 us without one),
 * B = 10 MB, min rate 100 Mbps, R_AI 40 Mbps, R_HAI 200 Mbps; the cut uses alpha before its
 * CNP update, as the paper writes it (the NS3 code updates alpha first). The NS3 code's
 * config keeps g, F, R_AI, R_HAI and the 55 us alpha timer but sets T = 60 us and B = 300 KB
 * (300 MB in another revision). Fixed point: alpha is Q20 (1.0 = 2^20), rates are integer
 * bits/s. Loss recovery is RoCE's: a NACK marks the reported segments, the RTO goes back N
 * (marks everything unacked).
 * Behaviour worth knowing: a CNP after RC has recovered to RT barely lowers RT, and fast
 * recovery restores RC within F timer periods, so only CNPs that land during a recovery lower
 * a flow's rate for good. With sparse marking (two flows on 40G: one CNP per ~0.5 ms per
 * flow) the rates wander around the fair share on a ~15 ms scale, and two flows' averages
 * agree to ~2% RMS over 1 s.
 * The timer sleeps at the line. Once RC and RT are both at the line rate a period changes
 * nothing but alpha, which only a CNP reads; so the timer is not re-armed there, and a CNP that
 * finds it asleep first decays alpha by the periods it slept (the same integer steps, one per
 * whole period since the last one that ran: alpha stops falling at 255 in Q20, so at most
 * about 2100 of them). Without the rule every QP took a timer event each 55 us however idle:
 * 1000 QPs, 18 million events a second, which was all a receiving daemon's lcore did.
 * Parameters: param[0] timer period, ns [55000]; param[1] byte counter B, bytes [10 MB].
 */
#include <errno.h>

#include "sl_proto.h"
#include "sl_sched.h"

#define DCQCN_ALPHA_ONE (UINT32_C(1) << 20) /**< alpha = 1.0 in Q20 */
#define DCQCN_G_SHIFT 8                     /**< g = 1/256 */
#define DCQCN_F 5                           /**< fast-recovery stages */
#define DCQCN_TIMER_NS UINT64_C(55000)      /**< rate-increase and alpha timer, ns */
#define DCQCN_BC_BYTES UINT64_C(10000000)   /**< byte counter B, bytes */
#define DCQCN_MIN_BPS (100 * SL_BPS_PER_MBPS)
#define DCQCN_RAI_BPS (40 * SL_BPS_PER_MBPS)
#define DCQCN_RHAI_BPS (200 * SL_BPS_PER_MBPS)

struct dcqcn {
	uint64_t rt_bps;   /**< target rate RT, bits/s */
	uint64_t line_bps; /**< line rate: the cap of RT and RC, bits/s */
	uint32_t timer_ns; /**< timer period, ns */
	uint32_t alpha;    /**< congestion estimate, Q20 */
	uint32_t bc_segs;  /**< byte counter B, segments */
	uint32_t bc_mark;  /**< total segments sent when the byte counter last fired/reset */
	uint8_t t_stage;   /**< timer periods since the last cut (saturating) */
	uint8_t bc_stage;  /**< byte-counter periods since the last cut (saturating) */
	bool asleep;       /**< at the line, the timer not re-armed since slept_ns */
	uint64_t slept_ns; /**< the last period that ran, ns */
};
static_assert(sizeof(struct dcqcn) <= SL_PROTO_PRIV_MAX, "dcqcn state exceeds scratch");

static int
dcqcn_init(const struct sl_flow_view *f, void *priv, const struct sl_flow_conf *fc,
	   struct sl_proto_out *out)
{
	struct dcqcn *d = priv;
	uint64_t bc_bytes = fc->param[1] ? fc->param[1] : DCQCN_BC_BYTES;
	uint64_t timer_ns = fc->param[0] ? fc->param[0] : DCQCN_TIMER_NS;

	if (timer_ns > UINT32_MAX || bc_bytes / f->seg_bytes > UINT32_MAX)
		return -EINVAL;
	d->line_bps = out->rate_bps;
	d->rt_bps = out->rate_bps;
	d->alpha = DCQCN_ALPHA_ONE;
	d->timer_ns = (uint32_t)timer_ns;
	d->bc_segs = (uint32_t)SL_MAX(bc_bytes / f->seg_bytes, 1u);
	d->bc_mark = (uint32_t)f->total_sent;
	out->wnd_segs = f->max_wnd_segs;
	out->timer_ns = d->timer_ns;
	return 0;
}

static void
dcqcn_increase(struct dcqcn *d, struct sl_proto_out *out)
{
	uint8_t lo = SL_MIN(d->t_stage, d->bc_stage), hi = SL_MAX(d->t_stage, d->bc_stage);

	if (lo >= DCQCN_F)
		d->rt_bps += (uint64_t)(lo - DCQCN_F + 1) * DCQCN_RHAI_BPS;
	else if (hi >= DCQCN_F)
		d->rt_bps += DCQCN_RAI_BPS;
	d->rt_bps = SL_MIN(d->rt_bps, d->line_bps);
	/* The mean rounded up: rounded down, RC one bit/s below RT would never reach it. */
	out->rate_bps = SL_MIN((d->rt_bps + out->rate_bps + 1) / 2, d->line_bps);
}

/* The periods the timer slept through, up to now_ns: alpha decays as if each had run. */
static void
dcqcn_wake(struct dcqcn *d, uint64_t now_ns)
{
	uint64_t periods = (now_ns - d->slept_ns) / d->timer_ns;

	for (; periods && d->alpha >> DCQCN_G_SHIFT; periods--)
		d->alpha -= d->alpha >> DCQCN_G_SHIFT;
	d->asleep = false;
}

/* Byte counter: one stage per B bytes sent since the last cut. */
static void
dcqcn_bytes(const struct sl_flow_view *f, struct dcqcn *d, struct sl_proto_out *out)
{
	if ((uint32_t)f->total_sent - d->bc_mark < d->bc_segs)
		return;
	d->bc_mark += d->bc_segs;
	d->bc_stage = (uint8_t)SL_MIN(d->bc_stage + 1u, 255u);
	dcqcn_increase(d, out);
}

static void
dcqcn_incoming(const struct sl_flow_view *f, void *priv, const struct sl_incoming *in,
	       struct sl_proto_out *out)
{
	struct dcqcn *d = priv;
	const struct sl_event *ev = in->ev;

	if (ev->type == SL_EV_CNP) {
		uint64_t rc = out->rate_bps;

		if (d->asleep)
			dcqcn_wake(d, in->now_ns);

		d->rt_bps = rc;
		rc -= (uint64_t)(((unsigned __int128)rc * d->alpha) >> 21);
		out->rate_bps = SL_MAX(rc, DCQCN_MIN_BPS);
		d->alpha =
			d->alpha - (d->alpha >> DCQCN_G_SHIFT) + (DCQCN_ALPHA_ONE >> DCQCN_G_SHIFT);
		d->t_stage = 0;
		d->bc_stage = 0;
		d->bc_mark = (uint32_t)f->total_sent;
		out->timer_ns = d->timer_ns;
		return;
	}
	if (ev->type == SL_EV_NACK) {
		out->mark_from = ev->nack_seq;
		out->mark_to = ev->nack_seq + ev->nack_len;
	}
	dcqcn_bytes(f, d, out);
}

static void
dcqcn_periodic(const struct sl_flow_view *f, void *priv, const struct sl_periodic *p,
	       struct sl_proto_out *out)
{
	struct dcqcn *d = priv;

	if (!p->timer_expired)
		return;
	d->alpha -= d->alpha >> DCQCN_G_SHIFT;
	d->t_stage = (uint8_t)SL_MIN(d->t_stage + 1u, 255u);
	dcqcn_increase(d, out);
	dcqcn_bytes(f, d, out);
	if (d->rt_bps == d->line_bps && out->rate_bps == d->line_bps) {
		d->asleep = true;
		d->slept_ns = p->now_ns;
		return;
	}
	out->timer_ns = d->timer_ns;
}

static const struct sl_proto_ops dcqcn_ops = {
	.incoming = dcqcn_incoming,
	.periodic = dcqcn_periodic,
	.init = dcqcn_init,
	.credit = SL_CREDIT_RATE,
	.priv_size = sizeof(struct dcqcn),
	.feedback = SL_PROTO_FB_CNP | SL_PROTO_FB_NACK,
	.ack_every_pkts = 1,
	.name = "dcqcn",
};

SL_PROTO_REGISTER(dcqcn_ops);
