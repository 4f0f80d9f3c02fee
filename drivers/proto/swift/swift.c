/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * swift - Swift's delay-based window (Kumar et al., "Swift: Delay is Simple and Effective for
 * Congestion Control in the Datacenter", SIGCOMM'20, section 3) as a Tonic program: window
 * credit driven by a per-segment RTT, which Tonic's hardware could not express (section 6.1.1:
 * no per-packet timestamps). The engine supplies in->rtt_ns from the send time echoed by the
 * receiver (SL_EVF_TS) or kept per segment (SL_SCHED_F_TX_TS).
 *
 * Model, per ack with an RTT sample `delay`:
 *   delay < target:  additive increase, cwnd += ai x newly_acked / cwnd (ai segments per RTT)
 *   delay >= target: multiplicative decrease, at most once per RTT,
 *                    cwnd *= max(1 - beta (delay - target) / delay, 1 - max_mdf)
 *   3rd dupack:      fast retransmit (tcp_cwnd.h) and cwnd *= 1 - max_mdf, once per RTT
 *   RTO:             cwnd = 1 segment, retransmit the first unacked one
 * Constants are the paper's: ai = 1 segment, beta = 0.8, max_mdf = 0.5; the target is one
 * parameter (the paper's base target plus its topology and flow scaling, fixed per flow).
 * Fixed point: cwnd in Q8 segments (fractional growth), the decrease factor in Q10.
 * Parameters: param[0] target delay, ns [25 us].
 */
#include <errno.h>

#include "sl_proto.h"
#include "sl_sched.h"
#include "../tcp_cwnd.h"

#define SWIFT_Q8 256u          /**< one segment in Q8 */
#define SWIFT_BETA_Q10 819u    /**< beta = 0.8 in Q10 */
#define SWIFT_MAX_MDF_Q10 512u /**< 1 - max_mdf = 0.5 in Q10 */
#define SWIFT_TARGET_NS UINT64_C(25000)

struct swift {
	struct tcp_loss l;
	uint32_t cwnd_q8;     /**< congestion window, segments, Q8 */
	uint32_t target_ns;   /**< target delay, ns */
	uint32_t last_rtt_ns; /**< latest RTT sample, ns: the "once per RTT" spacing */
	uint64_t last_cut_ns; /**< time of the last decrease, ns */
};
static_assert(sizeof(struct swift) <= SL_PROTO_PRIV_MAX, "swift state exceeds scratch");

static int
swift_init(const struct sl_flow_view *f, void *priv, const struct sl_flow_conf *fc,
	   struct sl_proto_out *out)
{
	struct swift *sw = priv;
	uint64_t target = fc->param[0] ? fc->param[0] : SWIFT_TARGET_NS;

	if (target > UINT32_MAX)
		return -EINVAL;
	tcp_loss_init(&sw->l, f);
	sw->target_ns = (uint32_t)target;
	sw->cwnd_q8 = out->wnd_segs * SWIFT_Q8;
	return 0;
}

/* Multiply cwnd by factor_q10 if the last decrease is at least one RTT old. */
static void
swift_cut(struct swift *sw, uint64_t now_ns, uint32_t factor_q10)
{
	if (now_ns - sw->last_cut_ns < sw->last_rtt_ns)
		return;
	sw->cwnd_q8 = (uint32_t)(((uint64_t)sw->cwnd_q8 * factor_q10) >> 10);
	sw->last_cut_ns = now_ns;
}

static void
swift_incoming(const struct sl_flow_view *f, void *priv, const struct sl_incoming *in,
	       struct sl_proto_out *out)
{
	struct swift *sw = priv;
	enum tcp_loss_ev le = tcp_loss_ack(&sw->l, f, in, out);
	uint64_t delay = in->rtt_ns;

	if (in->ev->type != SL_EV_ACK)
		return;
	if (delay)
		sw->last_rtt_ns = (uint32_t)SL_MIN(delay, UINT32_MAX);
	if (le == TCP_LOSS_FAST) {
		swift_cut(sw, in->now_ns, SWIFT_MAX_MDF_Q10);
	} else if (delay && delay < sw->target_ns) {
		sw->cwnd_q8 +=
			(uint32_t)((uint64_t)in->newly_acked * SWIFT_Q8 * SWIFT_Q8 / sw->cwnd_q8);
	} else if (delay) {
		uint64_t dec = SWIFT_BETA_Q10 * (delay - sw->target_ns) / delay;

		swift_cut(sw, in->now_ns,
			  (uint32_t)SL_MAX(1024u - dec, (uint64_t)SWIFT_MAX_MDF_Q10));
	}
	sw->cwnd_q8 = SL_MAX(SL_MIN(sw->cwnd_q8, f->max_wnd_segs * SWIFT_Q8), SWIFT_Q8);
	out->wnd_segs = sw->cwnd_q8 / SWIFT_Q8 + (sw->l.inrec ? sw->l.dupacks : 0);
	if (le == TCP_LOSS_PARTIAL)
		out->rto_rearm = false; /* a partial ack does not restart the RTO */
}

static void
swift_periodic(const struct sl_flow_view *f, void *priv, const struct sl_periodic *p,
	       struct sl_proto_out *out)
{
	struct swift *sw = priv;

	if (!p->rto_expired || sl_flow_sent(f) == 0)
		return;
	tcp_loss_timeout(&sw->l, f);
	tcp_loss_mark_head(f, out);
	sw->cwnd_q8 = SWIFT_Q8;
	sw->last_cut_ns = p->now_ns;
	out->wnd_segs = 1;
}

static const struct sl_proto_ops swift_ops = {
	.incoming = swift_incoming,
	.periodic = swift_periodic,
	.init = swift_init,
	.credit = SL_CREDIT_WINDOW,
	.priv_size = sizeof(struct swift),
	.feedback = SL_PROTO_FB_ECHO,
	.ack_every_pkts = 1,
	.name = "swift",
};

SL_PROTO_REGISTER(swift_ops);
