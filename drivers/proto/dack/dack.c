/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dack - the endpoint-congestion initiator (Chong and Krishnan, "Addressing Endpoint-induced
 * Congestion for Accelerator Scale-Out in a Medium-Scale Domain", sections II.E and II.F): a
 * duplicate ACK (DACK) from the target means "slow down", and the sender falls to ACK-clocked halt
 * states, then climbs back to OPT's window. A Tonic program, window credit.
 *
 * ACK kinds (section II.C), against the previous ACK's cumack (ack): an IACK is above it, a DACK
 * equals it, one below it is stale and ignored. Until a NACK this is wnd_start (IACK: moves
 * wnd_start; DACK: repeats it); a NACK carries the target's expected segment, which the engine
 * applies as a cumack, yet is no ACK: the target's DACKs after it repeat its last IACK.
 *
 * Model. No rate, delay or AIMD arithmetic: the window is OPT's (ec_window.h) or the segments
 * in flight plus an allowance of new ones, earned per IACK and cleared by a DACK. Fig. 2:
 *
 *   state  new segments per IACK   IACK ->                          DACK ->
 *   H_INF  OPT's window (no gate)  H_INF                            H_M1
 *   H_M1   1                       H_0                              H_M1
 *   H_0    1                       H_1, count = 0                   H_M1
 *   H_1    2                       count + 1; at param[3]: H_INF    H_M1
 *
 * An IACK grants the allowance of the state it arrives in (the IACK that moves H_0 to H_1
 * grants 1; the one that brings count to the threshold opens OPT's window):
 *   window = (snd_nxt - new wnd_start) + leftover + N, capped at OPT's window, where
 *   leftover = max(0, window - (snd_nxt - old wnd_start)) is the allowance not yet used.
 * A DACK sets window = snd_nxt - wnd_start: the unused allowance goes (the paper leaves it
 * open) and nothing new may go. With nothing in flight that is 0, which the engine clamps to
 * 1: one new segment may go, the probe whose IACK clocks the next; without it no IACK could
 * come and no RTO would run, and the flow would stall for good.
 * Recovery from an EC drop (section II.F), H_REC: a NACK does not go back N unthrottled;
 * rtx_next = nack_seq, rtx_end = snd_max, the window stays closed to new data; each DACK marks
 * the one segment rtx_next, moves it on and restarts the RTO (the target is still draining);
 * wnd_start moves rtx_next up; at rtx_end the flow is in H_M1. A NACK at or above rtx_next is
 * ignored then, one below restarts from it. RTO: the engine's go-back-N, then H_M1, closed.
 * A selective NACK (SL_EVF_HOLE: a target with selective repeat holds the packets past the
 * hole, lib/ec's sr_pkts; beyond the paper) marks its hole alone and changes no state: a hole
 * is a loss, not congestion, and the queue's own drops are told by the DACKs around them.
 * While a hole is open the target's IACKs stop at it, each packet past it that crosses its
 * threshold sending only its DACK, if congested; so the IACK that ends the hole counts as one
 * IACK per segment it newly acknowledges (the ones the hole held back), and the ACK clock of
 * H(-1) to H1 is where it would have been.
 * Parameters: param[0] outstanding segments [W]; param[1] outstanding bytes [no limit];
 * param[3] IACKs in H_1 before H_INF [6]. Units: segments.
 */
#include "sl_proto.h"
#include "../ec_window.h"

#define DACK_H1_IACKS 6 /**< IACKs counted in H_1 before H_INF (the paper's, empirical) */

enum dack_state { H_INF = 0, H_M1, H_0, H_1, H_REC };
enum dack_kind { OTHER = 0, IACK, DACK };

struct dack {
	uint32_t wnd;      /**< window as decided, before the engine's clamp, segments */
	uint32_t opt;      /**< OPT's window, segments */
	uint32_t thresh;   /**< IACKs in H_1 before H_INF */
	uint32_t count;    /**< IACKs counted in H_1 */
	uint32_t ack;      /**< cumack of the previous IACK or DACK, segment */
	uint32_t rtx_next; /**< H_REC: the segment the next DACK resends */
	uint32_t rtx_end;  /**< H_REC: snd_max when the NACK came; recovery ends here */
	uint32_t hole_end; /**< hole_open: end of the highest hole NACKed, segment */
	uint8_t state;     /**< enum dack_state */
	uint8_t hole_open; /**< a selective NACK's hole not yet acked */
};
static_assert(sizeof(struct dack) <= SL_PROTO_PRIV_MAX, "dack state exceeds scratch");

static int
dack_init(const struct sl_flow_view *f, void *priv, const struct sl_flow_conf *fc,
	  struct sl_proto_out *out)
{
	struct dack *d = priv;
	int rc = ec_opt_wnd(f, fc, &d->opt);

	if (rc)
		return rc;
	if (fc->param[3] > UINT32_MAX)
		return -EINVAL;
	d->thresh = fc->param[3] ? (uint32_t)fc->param[3] : DACK_H1_IACKS;
	d->ack = f->wnd_start;
	d->state = H_INF;
	d->wnd = out->wnd_segs = d->opt;
	return 0;
}

/* Classify an ACK against the previous one (a cumack beyond what was sent is no ACK). */
static enum dack_kind
dack_kind(const struct sl_flow_view *f, struct dack *d, const struct sl_event *ev)
{
	if (ev->type != SL_EV_ACK || !(ev->flags & SL_EVF_CUMACK) ||
	    sl_seq_gt(ev->cumack, f->snd_max))
		return OTHER;
	if (ev->cumack == d->ack)
		return DACK;
	if (sl_seq_lt(ev->cumack, d->ack))
		return OTHER;
	d->ack = ev->cumack;
	return IACK;
}

/* Close the window to new data and enter state s (a DACK, the end of recovery, an RTO). */
static void
dack_close(const struct sl_flow_view *f, struct dack *d, uint8_t s)
{
	d->state = s;
	d->wnd = f->snd_nxt - f->wnd_start;
}

/*
 * n IACKs outside recovery (n > 1: the one that ends a hole): each the allowance of the state it
 * arrives in, then its transition.
 */
static void
dack_iack(const struct sl_flow_view *f, struct dack *d, const struct sl_incoming *in, uint32_t n)
{
	uint32_t was = f->snd_nxt - in->old_wnd_start, grant = 0;
	uint32_t left = d->wnd > was ? d->wnd - was : 0;

	for (uint32_t i = 0; i < n && d->state != H_INF; i++) {
		grant += d->state == H_1 ? 2 : 1;
		if (d->state == H_M1) {
			d->state = H_0;
		} else if (d->state == H_0) {
			d->state = H_1;
			d->count = 0;
		} else if (++d->count >= d->thresh) {
			d->state = H_INF;
		}
	}
	if (d->state == H_INF)
		d->wnd = d->opt;
	else
		d->wnd = SL_MIN(f->snd_nxt - f->wnd_start + left + grant, d->opt);
}

/* H_REC: one resent segment per DACK; wnd_start moves rtx_next up; at rtx_end, H_M1. */
static void
dack_recover(const struct sl_flow_view *f, struct dack *d, enum dack_kind kind,
	     struct sl_proto_out *out)
{
	if (sl_seq_lt(d->rtx_next, f->wnd_start))
		d->rtx_next = f->wnd_start;
	if (kind == DACK && sl_seq_lt(d->rtx_next, d->rtx_end)) {
		out->mark_from = d->rtx_next;
		out->mark_to = ++d->rtx_next;
		out->rto_rearm = true;
	}
	dack_close(f, d, sl_seq_lt(d->rtx_next, d->rtx_end) ? H_REC : H_M1);
}

/* A NACK: recovery from nack_seq, or a restart below rtx_next; what was not sent is ignored. */
static void
dack_nack(const struct sl_flow_view *f, struct dack *d, const struct sl_incoming *in,
	  struct sl_proto_out *out)
{
	uint32_t adv = in->new_wnd_start - in->old_wnd_start, from = in->ev->nack_seq;

	if (sl_seq_lt(from, f->wnd_start))
		from = f->wnd_start;
	if (d->state != H_INF) /* its cumack clocks nothing: the window's end stays put */
		d->wnd = d->wnd > adv ? d->wnd - adv : 0;
	if (in->ev->flags & SL_EVF_HOLE) { /* selective: the hole alone (the engine clips it) */
		out->mark_from = in->ev->nack_seq;
		out->mark_to = in->ev->nack_seq + in->ev->nack_len;
		if (!d->hole_open || sl_seq_gt(out->mark_to, d->hole_end))
			d->hole_end = out->mark_to;
		d->hole_open = 1;
		return;
	}
	if (sl_seq_lt(from, f->snd_max) && d->state != H_REC) {
		d->state = H_REC;
		d->rtx_next = from;
		d->rtx_end = f->snd_max;
	} else if (d->state == H_REC && sl_seq_lt(from, d->rtx_next)) {
		d->rtx_next = from;
	}
	if (d->state == H_REC)
		dack_recover(f, d, OTHER, out);
}

static void
dack_incoming(const struct sl_flow_view *f, void *priv, const struct sl_incoming *in,
	      struct sl_proto_out *out)
{
	struct dack *d = priv;
	enum dack_kind kind = dack_kind(f, d, in->ev);
	uint32_t iacks = 1;

	if (kind == IACK && d->hole_open) { /* the IACKs the hole held back (see the essay) */
		iacks = SL_MAX(in->newly_acked, 1u);
		d->hole_open = sl_seq_lt(f->wnd_start, d->hole_end);
	}
	if (in->ev->type == SL_EV_NACK)
		dack_nack(f, d, in, out);
	else if (d->state == H_REC)
		dack_recover(f, d, kind, out);
	else if (kind == DACK)
		dack_close(f, d, H_M1);
	else if (kind == IACK)
		dack_iack(f, d, in, iacks);
	out->wnd_segs = d->wnd;
}

static void
dack_periodic(const struct sl_flow_view *f, void *priv, const struct sl_periodic *p,
	      struct sl_proto_out *out)
{
	struct dack *d = priv;

	if (!p->rto_expired || sl_flow_sent(f) == 0)
		return;
	dack_close(f, d, H_M1); /* the engine's go-back-N stays in out */
	out->wnd_segs = d->wnd;
}

static const struct sl_proto_ops dack_ops = {
	.incoming = dack_incoming,
	.periodic = dack_periodic,
	.init = dack_init,
	.credit = SL_CREDIT_WINDOW,
	.priv_size = sizeof(struct dack),
	.feedback = 0, /* cumulative ACKs; the seed's target NACKs on its own */
	.ack_every_pkts = 1,
	.name = "dack",
};

SL_PROTO_REGISTER(dack_ops);
