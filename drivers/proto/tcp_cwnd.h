/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tcp_cwnd.h - the congestion-window pieces the TCP-family programs (reno, sack, dctcp) share,
 * in segments (RFC 5681):
 *   - growth on a new cumulative ack: slow start adds the newly acked segments while
 *     cwnd < ssthresh; congestion avoidance adds one segment per cwnd acked segments;
 *   - the retransmission timeout: ssthresh = max(flight / 2, 2), cwnd = 1, and only the first
 *     unacked segment is marked, in place of the engine's go-back-N (the engine re-arms the
 *     RTO, not backed off, as in Tonic's code).
 *   - NewReno-style loss recovery for programs whose subject is congestion control (dctcp,
 *     swift): the 3rd dupack with cumack > recover marks wnd_start (fast retransmit); a new
 *     ack at or below recover marks the next hole (partial ack, also after an RTO); an ack
 *     past recover ends recovery.
 * NewReno itself keeps appendix F's own formulation in newreno.c.
 */
#ifndef SL_PROTO_TCP_CWND_H
#define SL_PROTO_TCP_CWND_H

#include "sl_proto.h"

struct tcp_cwnd {
	uint32_t cwnd;     /**< congestion window, segments */
	uint32_t ssthresh; /**< slow-start threshold, segments */
	uint32_t acked;    /**< segments acked toward the next +1 in congestion avoidance */
};

static inline void
tcp_cwnd_init(struct tcp_cwnd *c, const struct sl_flow_view *f, const struct sl_proto_out *out)
{
	c->cwnd = out->wnd_segs;
	c->ssthresh = f->max_wnd_segs;
	c->acked = 0;
}

/* A new cumulative ack outside recovery: grow cwnd, capped at W. */
static inline void
tcp_cwnd_grow(struct tcp_cwnd *c, const struct sl_flow_view *f, uint32_t newly_acked)
{
	if (c->cwnd < c->ssthresh) {
		c->cwnd += newly_acked;
	} else {
		c->acked += newly_acked;
		if (c->acked >= c->cwnd) {
			c->acked -= c->cwnd;
			c->cwnd++;
		}
	}
	c->cwnd = SL_MIN(c->cwnd, f->max_wnd_segs);
}

/* Mark the first unacked segment for retransmission. */
static inline void
tcp_loss_mark_head(const struct sl_flow_view *f, struct sl_proto_out *out)
{
	out->mark_from = f->wnd_start;
	out->mark_to = f->wnd_start + 1;
}

/* Half the flight, at least 2 (RFC 5681 eq. 4). */
static inline uint32_t
tcp_cwnd_half(uint32_t flight)
{
	return SL_MAX(flight / 2, 2u);
}

/* The RTO fired with data outstanding: back to one segment, resend the first unacked one. */
static inline void
tcp_cwnd_timeout(struct tcp_cwnd *c, const struct sl_flow_view *f, struct sl_proto_out *out)
{
	c->ssthresh = tcp_cwnd_half(sl_flow_sent(f));
	c->cwnd = 1;
	c->acked = 0;
	tcp_loss_mark_head(f, out);
	out->wnd_segs = 1;
}

struct tcp_loss {
	uint32_t recover; /**< highest segment sent when recovery or the last RTO began */
	uint8_t dupacks;  /**< duplicate acks since the last new ack */
	uint8_t inrec;    /**< in fast recovery */
};

enum tcp_loss_ev {
	TCP_LOSS_NONE,    /**< nothing new (a dupack below the threshold, or another event) */
	TCP_LOSS_NEW,     /**< a new ack outside recovery */
	TCP_LOSS_FAST,    /**< fast retransmit: wnd_start is marked; cut the window */
	TCP_LOSS_PARTIAL, /**< a new ack at or below recover: the next hole is marked */
	TCP_LOSS_EXIT,    /**< a full ack ended fast recovery */
};

static inline void
tcp_loss_init(struct tcp_loss *l, const struct sl_flow_view *f)
{
	l->recover = f->wnd_start - 1;
}

/* Classify an ack event (ignores other types) and mark what it reveals lost. */
static inline enum tcp_loss_ev
tcp_loss_ack(struct tcp_loss *l, const struct sl_flow_view *f, const struct sl_incoming *in,
	     struct sl_proto_out *out)
{
	if (in->ev->type != SL_EV_ACK || !(in->ev->flags & SL_EVF_CUMACK))
		return TCP_LOSS_NONE;
	if (sl_seq_gt(in->new_wnd_start, in->old_wnd_start)) {
		l->dupacks = 0;
		if (sl_seq_le(f->wnd_start, l->recover) && f->snd_max != f->wnd_start) {
			tcp_loss_mark_head(f, out);
			return TCP_LOSS_PARTIAL;
		}
		if (!l->inrec)
			return TCP_LOSS_NEW;
		l->inrec = 0;
		return TCP_LOSS_EXIT;
	}
	if (in->ev->cumack != in->old_wnd_start || sl_flow_sent(f) == 0)
		return TCP_LOSS_NONE;
	l->dupacks = (uint8_t)SL_MIN(l->dupacks + 1u, 255u);
	if (l->inrec || l->dupacks != 3 || !sl_seq_gt(f->wnd_start, l->recover))
		return TCP_LOSS_NONE;
	l->inrec = 1;
	l->recover = f->snd_max - 1;
	tcp_loss_mark_head(f, out);
	return TCP_LOSS_FAST;
}

/* The RTO fired: leave fast recovery; holes up to the highest sent are found by partial acks. */
static inline void
tcp_loss_timeout(struct tcp_loss *l, const struct sl_flow_view *f)
{
	l->inrec = 0;
	l->dupacks = 0;
	l->recover = f->snd_max - 1;
}

#endif /* SL_PROTO_TCP_CWND_H */
