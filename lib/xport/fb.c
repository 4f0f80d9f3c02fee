/* SPDX-License-Identifier: BSD-3-Clause */
/* fb.c - receiver feedback <-> its wire form (sl_xport.h). */
#include <errno.h>
#include <string.h>

#include "sl_common.h"
#include "sl_xport.h"

static_assert(SL_RECV_NACK_HOLES == SL_XFB_HOLES, "a NACK carries the same holes on the wire");
static_assert(SL_RECV_FBF_SACK == SL_XFB_F_SACK && SL_RECV_FBF_ECHO == SL_XFB_F_ECHO &&
		      SL_RECV_FBF_ECN == SL_XFB_F_ECN,
	      "ACK flags keep their bits on the wire");

int
sl_xport_fb_from_recv(const struct sl_recv_action *a, struct sl_xfb *fb)
{
	static const uint8_t op_of[] = {
		[SL_RECV_ACT_ACK] = SL_XOP_ACK,
		[SL_RECV_ACT_NACK] = SL_XOP_NACK,
		[SL_RECV_ACT_CNP] = SL_XOP_CNP,
		[SL_RECV_ACT_PULL] = SL_XOP_PULL,
	};
	const struct sl_recv_fb *r = &a->fb;

	if (a->type < SL_RECV_ACT_ACK || a->type > SL_RECV_ACT_PULL)
		return -EINVAL;
	memset(fb, 0, sizeof(*fb));
	fb->opcode = op_of[a->type];
	fb->qpn = a->conn;
	fb->ack_psn = r->ack_psn;
	switch (a->type) {
	case SL_RECV_ACT_ACK:
		fb->flags = r->flags;
		fb->acked_pkts = r->acked_pkts;
		fb->ce_pkts = r->ce_pkts;
		fb->sack_psn = r->sack_psn;
		fb->echo_tx_id = r->echo_tx_id;
		fb->echo_tx_ns = r->echo_tx_ns;
		break;
	case SL_RECV_ACT_NACK:
		fb->acked_pkts = r->acked_pkts;
		fb->ce_pkts = r->ce_pkts;
		fb->nholes = r->nholes;
		for (unsigned i = 0; i < r->nholes && i < SL_XFB_HOLES; i++)
			fb->hole[i] =
				(struct sl_xfb_hole){r->hole[i].start_psn, r->hole[i].len_pkts};
		break;
	case SL_RECV_ACT_PULL:
		fb->pull_seq = r->pull_seq;
		break;
	default:
		break;
	}
	return 0;
}

void
sl_xport_fb_from_ec(const struct sl_ec_action *a, uint32_t qpn, struct sl_xfb *fb)
{
	memset(fb, 0, sizeof(*fb));
	fb->opcode = a->type == SL_EC_NACK ? SL_XOP_NACK : SL_XOP_ACK;
	fb->qpn = qpn;
	fb->ack_psn = a->ack_psn;
	if (a->type == SL_EC_NACK && a->hole_len) {
		fb->nholes = 1;
		fb->hole[0] = (struct sl_xfb_hole){a->hole_psn, (uint16_t)a->hole_len};
	}
}

void
sl_xport_fb_to_recv(const struct sl_xfb *fb, struct sl_recv_fb *out)
{
	memset(out, 0, sizeof(*out));
	out->ack_psn = fb->ack_psn;
	out->sack_psn = fb->sack_psn;
	out->echo_tx_ns = fb->echo_tx_ns;
	out->echo_tx_id = fb->echo_tx_id;
	out->acked_pkts = fb->acked_pkts;
	out->ce_pkts = fb->ce_pkts;
	out->flags = fb->flags;
	out->nholes = fb->nholes;
	for (unsigned i = 0; i < fb->nholes; i++)
		out->hole[i] = (struct sl_recv_hole){fb->hole[i].start_psn, fb->hole[i].len_pkts};
	out->pull_seq = fb->pull_seq;
}

/*
 * Lost retransmissions. MELO's sender marks only PSNs no earlier NACK marked, and leaves a lost
 * retransmission to the timeout, which resends from the front: on a fast wire the RTO is a
 * hundred round trips, and at 1 % loss 1 % of the repairs are lost again, so the RTO would be the
 * p99 of every recovery. But the sender can tell such a loss as RACK does, by send order: a
 * NACK's newest hole ends at the packet whose arrival made it; if that packet was first sent
 * after the marking of an older hole this NACK still names (its PSN is at or beyond the snd_max
 * of that marking: marked PSNs go before any new one), the retransmission went out before it on
 * a path that keeps order, and is lost. Those holes, up to what earlier NACKs marked, become
 * NACK events again. A reordering path may make a redundant retransmission of it, never a loss.
 */
static unsigned
relost(const struct sl_xport_fb_flow *ff, const struct sl_recv_fb *fb, uint32_t marked_high,
       const struct sl_event *tmpl, struct sl_event *ev, unsigned max)
{
	uint32_t seen;
	unsigned n = 0;

	if (fb->nholes == 0)
		return 0;
	seen = fb->hole[0].start_psn + fb->hole[0].len_pkts;
	if (sl_seq_lt(seen, ff->mark_psn))
		return 0;
	for (unsigned i = 0; i < fb->nholes && n < max; i++) {
		uint32_t s = fb->hole[i].start_psn,
			 hi = sl_seq_min(s + fb->hole[i].len_pkts, marked_high);

		if (sl_seq_lt(s, fb->ack_psn) || sl_seq_ge(s, hi))
			continue;
		ev[n] = *tmpl;
		ev[n].type = SL_EV_NACK;
		ev[n].nack_seq = s;
		ev[n].nack_len = hi - s;
		if (ff->relost)
			sl_stat_add(ff->relost, hi - s);
		n++;
	}
	return n;
}

/* A NACK of a tracked flow: one event per newly marked or lost-again range (at least one). */
static unsigned
tracked_nack(struct sl_sched *e, struct sl_recv_rtx *rtx, uint32_t flow,
	     struct sl_xport_fb_flow *ff, const struct sl_recv_fb *fb, struct sl_event *ev,
	     unsigned max)
{
	struct sl_recv_range rg[8];
	struct sl_event tmpl = ev[0];
	struct sl_flow_stats st;
	struct sl_flow_view v;
	unsigned n, k;
	uint32_t marked_high;

	if (sl_sched_flow_stats_get(e, flow, &st) == 0 && st.rto_fired != ff->rto_seen &&
	    sl_sched_flow_view(e, flow, &v) == 0) {
		ff->rto_seen = st.rto_fired;
		sl_recv_rtx_rto(rtx, flow, v.wnd_start);
		ff->mark_psn = v.snd_max; /* the RTO resends everything before it */
	}
	marked_high = sl_recv_rtx_nack_high(rtx, flow);
	sl_recv_rtx_nack(rtx, flow, fb);
	n = relost(ff, fb, marked_high, &tmpl, ev, max);
	while (n < max && (k = sl_recv_rtx_take(rtx, flow, rg, SL_MIN(SL_ARRAY_SIZE(rg), max - n),
						UINT32_MAX)) > 0) {
		for (unsigned i = 0; i < k; i++, n++) {
			ev[n] = tmpl;
			ev[n].type = SL_EV_NACK;
			ev[n].nack_seq = rg[i].start_psn;
			ev[n].nack_len = rg[i].len_pkts;
		}
	}
	if (n && sl_sched_flow_view(e, flow, &v) == 0)
		ff->mark_psn = v.snd_max;
	return n ? n : 1; /* nothing new: the NACK still carries its cumulative ACK */
}

unsigned
sl_xport_fb_events(struct sl_sched *e, struct sl_recv_rtx *rtx, uint32_t flow,
		   struct sl_xport_fb_flow *ff, const struct sl_xfb *x, struct sl_event *ev,
		   unsigned max)
{
	struct sl_recv_fb fb;

	sl_xport_fb_to_recv(x, &fb);
	memset(&ev[0], 0, sizeof(ev[0]));
	ev[0].flow = flow;
	ev[0].flags = SL_EVF_CUMACK;
	ev[0].cumack = fb.ack_psn;
	switch (x->opcode) {
	case SL_XOP_ACK:
		ev[0].type = SL_EV_ACK;
		if (ff->sack && (fb.flags & SL_RECV_FBF_SACK)) {
			ev[0].flags |= SL_EVF_SACK;
			ev[0].sack_seq = fb.sack_psn;
			ev[0].sack_tx_id = (uint8_t)SL_MIN(fb.echo_tx_id, 3);
		}
		if ((fb.flags & SL_RECV_FBF_ECN) && fb.ce_pkts) {
			ev[0].flags |= SL_EVF_ECE;
			ev[0].ce_segs = fb.ce_pkts;
		}
		if (ff->ts && (fb.flags & SL_RECV_FBF_ECHO) && fb.echo_tx_ns) {
			ev[0].flags |= SL_EVF_TS;
			ev[0].echo_ts_ns = fb.echo_tx_ns;
		}
		if (ff->tracked)
			sl_recv_rtx_ack(rtx, flow, fb.ack_psn);
		return 1;
	case SL_XOP_NACK:
		if (ff->tracked)
			return tracked_nack(e, rtx, flow, ff, &fb, ev, max);
		ev[0].type = SL_EV_NACK;
		ev[0].nack_seq = fb.nholes ? fb.hole[0].start_psn : fb.ack_psn;
		ev[0].nack_len = fb.nholes ? fb.hole[0].len_pkts : 1;
		if (fb.nholes)
			ev[0].flags |= SL_EVF_HOLE;
		return 1;
	case SL_XOP_CNP:
		ev[0].type = SL_EV_CNP;
		ev[0].flags = 0;
		return 1;
	default:
		ev[0].type = SL_EV_PULL;
		ev[0].flags = 0;
		ev[0].grant_bytes = ff->seg_bytes;
		return 1;
	}
}
