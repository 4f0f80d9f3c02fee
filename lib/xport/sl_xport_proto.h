/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_xport_proto.h - where a transport program meets its peer's receiver: the feedback a
 * program reads is declared in its ops table (lib/sched), the receiver that sends it is
 * configured per connection (lib/recv); the transport endpoint, which uses both, joins them.
 */
#ifndef SL_XPORT_PROTO_H
#define SL_XPORT_PROTO_H

#include "sl_recv.h"

/*
 * Feedback for the registered program proto (struct sl_proto_ops.feedback and
 * .ack_every_pkts): fills cc->fb and cc->ack_every_pkts, leaves isn and mode.
 * 0, -EINVAL (NULL argument) or -ENOENT (no such program).
 */
int sl_xport_recv_conf_for_proto(const char *proto, struct sl_recv_conn_conf *cc);

#endif /* SL_XPORT_PROTO_H */
