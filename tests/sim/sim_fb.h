/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sim_fb.h - a receiver plug-in's way out: one feedback frame, encoded with sl_xfb_encode
 * exactly as it would go on the wire (sl_wire.h), in a control packet toward the flow's sender.
 * The sender decodes it (sim_sched.c); cumack and seq are filled too, so traces and the
 * reference-shaped counters keep working. Shared by lib/recv's plug-in (sim_librecv.c) and
 * lib/ec's (sim_ec.c).
 */
#ifndef SIM_FB_H
#define SIM_FB_H

#include <assert.h>
#include <errno.h>

#include "sim.h"
#include "sl_wire.h"

static_assert(SIM_FB_MAX_BYTES >= SL_XFB_MAX_LEN, "a control packet holds any feedback frame");

/*
 * Queue fb on host's link as a control packet of type (enum sim_pkt_type) to host `to`, for flow
 * fb->qpn; seq is the segment the packet names in traces. 0, -ENOMEM (no packet: the run stops,
 * sim_error), or sl_xfb_encode's error.
 */
static inline int
sim_fb_send(struct sim *s, uint32_t host, uint32_t to, uint8_t type, const struct sl_xfb *fb,
	    uint32_t seq)
{
	struct sim_pkt *p = sim_pkt_alloc(s);
	int n;

	if (p == NULL)
		return -ENOMEM;
	n = sl_xfb_encode(fb, p->fb, sizeof(p->fb));
	if (n < 0) {
		sim_pkt_free(s, p);
		return n;
	}
	p->fb_len = (uint8_t)n;
	p->type = type;
	p->dst = (uint16_t)to;
	p->flow = fb->qpn;
	p->cumack = fb->ack_psn;
	p->seq = seq;
	sim_host_send_ctrl(s, host, p);
	return 0;
}

#endif /* SIM_FB_H */
