/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sim_recv.h - the simulator's reference receiver, plugged into hosts through
 * struct sim_receiver_ops (sim_librecv.h puts lib/recv behind the same ops; each scenario
 * picks one).
 *
 * Per data packet it answers with one ACK: cumulative ack (the next segment it expects), one
 * SACK block (the segment that arrived), the tx_id and send timestamp echoed, and the ECN mark
 * echoed. It also sends a CNP for an ECN-marked packet, at most one per flow per
 * cnp_interval_ns (DCQCN's notification point). In NDP mode a trimmed header gets a NACK, and
 * every arrival (header or data) queues one pull; the receiver sends its pulls paced at its own
 * link rate, one full segment's wire time apart, each granting one segment's bytes.
 */
#ifndef SIM_RECV_H
#define SIM_RECV_H

#include "sim.h"

#define SIM_RECV_WINDOW 16384u /**< out-of-order segments tracked past the cumack */

struct sim_recv_conf {
	uint32_t nflows;          /**< flow ids [0, nflows) */
	uint64_t cnp_interval_ns; /**< minimum gap between CNPs of one flow, ns */
	bool ndp;                 /**< NACK trimmed headers and send pulls */
};

struct sim_recv_flow_stats {
	uint64_t segs;       /**< distinct segments received */
	uint64_t bytes;      /**< distinct payload bytes received */
	uint64_t dup_segs;   /**< segments received again */
	uint64_t beyond_win; /**< segments too far past the cumack to track */
	uint64_t cnps;
	uint64_t nacks;
	uint64_t pulls;
	uint32_t cumack; /**< next segment expected */
};

struct sim_recv;

extern const struct sim_receiver_ops sim_recv_ops;

struct sim_recv *sim_recv_create(struct sim *s, const struct sim_recv_conf *c); /* NULL+errno */
void sim_recv_free(struct sim_recv *r);
/* Declare a flow and its segment size (the grant of one pull). 0 or -EINVAL. */
int sim_recv_add_flow(struct sim_recv *r, uint32_t flow, uint32_t seg_bytes);
const struct sim_recv_flow_stats *sim_recv_flow(const struct sim_recv *r, uint32_t flow);

#endif /* SIM_RECV_H */
