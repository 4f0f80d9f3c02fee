/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sim_sched.h - a simulated host's sender running the real lib/sched engine and the
 * registered transport programs (drivers/proto), behind struct sim_sender_ops.
 *
 * One engine per sending host. A flow starts at its start time (sl_sched_flow_add with
 * start_ns, then a push); a backlogged flow (size 0) is topped up in chunks so its pushed
 * tail never runs dry. Each time the host's link goes idle the host asks for one decision
 * (sl_sched_next_burst with max 1): the wire, not a batch, sets the pace. Receiver feedback
 * becomes struct sl_event: an ACK carries the cumack, a SACK for an out-of-order segment
 * (if the flow uses SACK), the ECN echo and the echoed send time (if the flow uses
 * timestamps); a NACK, PULL or CNP maps to its event type.
 *
 * Feedback from lib/recv (a control packet with fb bytes) is decoded with sl_xfb_decode
 * (sl_wire.h). For a MELO flow (recovery SL_RECV_MELO, with the rtx tracker on) a NACK goes through
 * lib/recv's sender-side tracker (sl_recv.h): its holes rebuild the receiver's bitmap in the
 * tracker's own pool, PSNs already marked by an earlier NACK are not marked again, and the newly
 * marked ranges are taken at once and handed to the engine as one SL_EV_NACK event each, which the
 * program (drivers/proto/melo "melo") marks for retransmission; cumulative ACKs shrink the
 * tracker's bitmap; an RTO the engine fired since the last NACK clears it first. A go-back-N
 * NACK (no holes) becomes one SL_EV_NACK naming the expected PSN ("gbn" rewinds to it).
 */
#ifndef SIM_SCHED_H
#define SIM_SCHED_H

#include "sim.h"
#include "sl_recv.h"
#include "sl_sched.h"

/* What a simulated flow is: endpoints, program, size and what its acks carry. */
struct sim_flow_spec {
	uint32_t src;       /**< sending host */
	uint32_t dst;       /**< receiving host */
	uint64_t start_ns;  /**< start time, ns */
	uint64_t size_segs; /**< segments to send; 0 = backlogged for the whole run */
	bool sack;          /**< acks carry the SACK block to the engine */
	bool ts;            /**< data carries its send time and acks echo it */
	uint8_t recovery;   /**< lib/recv receiver: enum sl_recv_mode (MELO or go-back-N) */
	char proto[SL_PROTO_NAME_MAX];
	struct sl_flow_conf fc; /**< fc.proto is set from proto at flow start */
};

struct sim_sched_host;

extern const struct sim_sender_ops sim_sched_sender_ops;

/*
 * A sender for host `host` of s: an engine with room for conf->max_flows flows, serving global
 * flow ids [0, nflows). NULL + errno.
 */
struct sim_sched_host *sim_sched_host_create(struct sim *s, uint32_t host,
					     const struct sl_sched_conf *conf, uint32_t nflows);
void sim_sched_host_free(struct sim_sched_host *h);

/*
 * Schedule global flow gflow to start at spec->start_ns. 0, -EINVAL (bad id, not this host),
 * -ENOSPC (engine full). An sl_sched_flow_add error surfaces at the start time and is counted
 * in start_failures.
 */
int sim_sched_host_add_flow(struct sim_sched_host *h, uint32_t gflow,
			    const struct sim_flow_spec *spec);

/*
 * Turn on lib/recv's sender-side NACK tracker for this host's MELO flows (call before the flows
 * start; conf->max_flows is set to the engine's capacity). window_pkts also bounds the holes the
 * decoder accepts. 0, -EINVAL or -ENOMEM.
 */
int sim_sched_host_use_rtx(struct sim_sched_host *h, const struct sl_recv_rtx_conf *conf);
/* The tracker's counters (zeros without one), and feedback bodies that failed to decode. */
void sim_sched_host_rtx_stats(const struct sim_sched_host *h, struct sl_recv_rtx_stats *st);
uint64_t sim_sched_host_fb_bad(const struct sim_sched_host *h);

/* The engine's view and counters of global flow gflow. 0 or -ENOENT (not started here). */
int sim_sched_host_view(const struct sim_sched_host *h, uint32_t gflow, struct sl_flow_view *v);
int sim_sched_host_flow_stats(const struct sim_sched_host *h, uint32_t gflow,
			      struct sl_flow_stats *st);
const void *sim_sched_host_priv(const struct sim_sched_host *h, uint32_t gflow);
/* Time the finite flow gflow had every segment acked, SIM_NEVER while not done. */
uint64_t sim_sched_host_done_ns(const struct sim_sched_host *h, uint32_t gflow);
void sim_sched_host_stats(const struct sim_sched_host *h, struct sl_sched_stats *st);
/* Flows whose sl_sched_flow_add or first push failed. */
uint32_t sim_sched_host_start_failures(const struct sim_sched_host *h);

#endif /* SIM_SCHED_H */
