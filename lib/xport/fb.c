/* SPDX-License-Identifier: BSD-3-Clause */
/* fb.c - receiver feedback <-> its wire form (sl_xport_fb.h). */
#include <errno.h>
#include <string.h>

#include "sl_common.h"
#include "sl_xport_fb.h"

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
