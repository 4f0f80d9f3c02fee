/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_xport_fb.h - where the receiver's feedback meets the wire: lib/recv decides what to
 * answer (struct sl_recv_action, struct sl_recv_fb) and lib/wire owns how it looks on the wire
 * (struct sl_xfb, sl_xhdr.h); neither includes the other, and the transport endpoint, which
 * uses both, converts between them here. Field for field; nothing is computed.
 */
#ifndef SL_XPORT_FB_H
#define SL_XPORT_FB_H

#include <stdbool.h>

#include "sl_ec.h"
#include "sl_recv.h"
#include "sl_recv_rtx.h"
#include "sl_sched.h"
#include "sl_xhdr.h"

/*
 * The wire form of a feedback action (type ACK, NACK, CNP or PULL; conn is the QPN).
 * 0, or -EINVAL for a data action.
 */
int sl_xport_fb_from_recv(const struct sl_recv_action *a, struct sl_xfb *fb);

/*
 * The wire form of an endpoint-congestion target's action (lib/ec), naming QP qpn: IACK and
 * DACK as ACKs, a NACK as a NACK naming the expected PSN, with its one hole when it is selective
 * (hole_len > 0). The endpoint then addresses it to the connection's peer (QPN and token).
 */
void sl_xport_fb_from_ec(const struct sl_ec_action *a, uint32_t qpn, struct sl_xfb *fb);

/* The receiver's form of a decoded feedback frame, as lib/recv's sender-side tracker takes it. */
void sl_xport_fb_to_recv(const struct sl_xfb *fb, struct sl_recv_fb *out);

/* How a sending flow reads its peer's feedback (sl_xport_fb_events). */
struct sl_xport_fb_flow {
	uint32_t seg_bytes; /**< a PULL grants one segment, bytes */
	bool sack;          /**< hand ACKs' SACK blocks to the program */
	bool ts;            /**< hand ACKs' echoed send times to the program */
	bool tracked;       /**< NACKs go through the MELO tracker (the flow is open in it) */
	uint64_t rto_seen;  /**< the engine's RTO count when the tracker last looked */
	uint32_t mark_psn;  /**< the engine's snd_max when a NACK last marked PSNs: a packet at or
			     *   beyond it was first sent after every retransmission marked then */
	uint64_t *relost;   /**< tracked: PSNs NACKed again because their retransmission was
			     *   lost are counted here (NULL: not counted) */
};

/*
 * The scheduler events of one decoded feedback frame for flow of engine e, at most max (>= 1):
 * an ACK is one event (cumulative ACK, the SACK, ECN count and echoed send time the flow
 * reads); a CNP or PULL maps to its event type. A NACK of a tracked flow goes through lib/recv's
 * sender-side tracker rtx (sl_recv_rtx.h): an RTO the engine fired since the last NACK clears the
 * tracker first, the holes mark only PSNs no earlier NACK marked, and each newly marked range
 * becomes one SL_EV_NACK event (at least one event, for the cumulative ACK); so does each hole an
 * earlier NACK marked when the receiver has since received a packet first sent after that
 * marking (fb.c, "Lost retransmissions"); an untracked NACK
 * names its newest hole, or the expected PSN for go-back-N. ACKs of a tracked flow shrink the
 * tracker. An untracked NACK that names a hole carries SL_EVF_HOLE. Returns the number of events
 * written.
 */
unsigned sl_xport_fb_events(struct sl_sched *e, struct sl_recv_rtx *rtx, uint32_t flow,
			    struct sl_xport_fb_flow *ff, const struct sl_xfb *x,
			    struct sl_event *ev, unsigned max);

#endif /* SL_XPORT_FB_H */
