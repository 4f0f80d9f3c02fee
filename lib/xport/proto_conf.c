/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proto_conf.c - a receiver connection configured for the program that sends on it: each
 * transport program declares the feedback it reads (struct sl_proto_ops.feedback,
 * .ack_every_pkts), so the registry is the one list of programs and their feedback.
 */
#include <assert.h>
#include <errno.h>

#include "sl_proto.h"
#include "sl_xport.h"

static_assert(SL_PROTO_FB_SACK == SL_RECV_FB_SACK && SL_PROTO_FB_ECHO == SL_RECV_FB_ECHO &&
		      SL_PROTO_FB_ECN == SL_RECV_FB_ECN && SL_PROTO_FB_CNP == SL_RECV_FB_CNP &&
		      SL_PROTO_FB_PULL == SL_RECV_FB_PULL && SL_PROTO_FB_NACK == SL_RECV_FB_NACK,
	      "a program's feedback bits are the receiver's (docs/recv.md 4.3)");

int
sl_xport_recv_conf_for_proto(const char *proto, struct sl_recv_conn_conf *cc)
{
	const struct sl_proto_ops *ops;

	if (proto == NULL || cc == NULL)
		return -EINVAL;
	ops = sl_proto_find(proto);
	if (ops == NULL)
		return -ENOENT;
	cc->fb = ops->feedback;
	cc->ack_every_pkts = ops->ack_every_pkts ? ops->ack_every_pkts : 1;
	return 0;
}
