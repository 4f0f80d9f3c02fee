/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sim_ec.h - the endpoint-congestion target (lib/ec; Chong and Krishnan, "Addressing
 * Endpoint-induced Congestion for Accelerator Scale-Out in a Medium-Scale Domain") behind struct
 * sim_receiver_ops, with a model of the host that drains it: the simulator's third receiver, beside
 * the reference one (sim_recv.h) and lib/recv (sim_librecv.h).
 *
 * Model. Every receiving host has one sl_ec target queue (the NIC's buffer in front of a host
 * slower than the link) shared by its flows; a flow is connection `flow id` of its destination's
 * queue. A data packet goes to sl_ec_arrive, which accounts it as its payload bytes (the paper's
 * 81 KB queue = 9 x 9 KB packets) or, with queue_counts_wire, as its wire bytes (payload +
 * hdr_bytes). The host is one server: it takes the head packet when it is idle and a packet is
 * queued, and processes it in ceil(wire bytes x 8 / (r x link rate)) ns, r = drain_pct / 100, the
 * link being the host's own (the drain charges whole packets, headers included, so at r = 100 % the
 * host keeps up with its link exactly and the queue never holds more than the packet in service). A
 * packet whose processing ends at the ns another arrives leaves first. A processed packet is
 * delivered (goodput, payload bytes) and goes through sl_ec_process. Every action of the target
 * (IACK, DACK, NACK) becomes a control packet to the flow's sender, encoded as on the wire
 * (sim_fb.h): IACK and DACK as SL_XOP_ACK with their ack_psn (a DACK is an ACK whose ack_psn did
 * not move), NACK as SL_XOP_NACK without holes naming the expected PSN, which the sender
 * (sl_xport_fb_events) turns into SL_EV_NACK nack_seq = ack_psn.
 *
 * The policy names what runs on both ends (docs/sim.md, "[ec]"):
 *   dack     program dack, target policy on, NACKs on (the paper's scheme);
 *   opt      program opt,  policy off, NACKs on (OPT baseline);
 *   aimd     program aimd, policy off, NACKs on (TCP-like baseline);
 *   timeout  program opt,  policy off, NACKs off: out-of-order arrivals are dropped silently
 *            and only the RTO's go-back-N recovers (our extra baseline, not in the paper).
 *
 * Drain steps (beyond the paper, which never quantifies its "rapid recovery" goal, section II.B):
 * the host's rate may change at set times (step[], each from at_ns on; a packet already in service
 * keeps the rate it started with). With steps, each target host keeps the wire bytes that arrived
 * and that it processed per 1 us bin, and sim_ec_step_result() times the reaction to each step over
 * a sliding window of SIM_EC_STEP_WINDOW_NS (about one RTT of the paper's setting): after a fall,
 * until the arrival rate is within 10 % of the new drain rate (the initiators throttled); after a
 * rise, until the host processes at 90 % of it (they caught up, the host no longer idles).
 *
 * Measured per host: occupancy (time-weighted mean; the maximum is lib/ec's counter) and the
 * server's busy time, both from the later of measure_from_ns and the host's first arrival.
 * An optional trace (ec.csv) records every arrival verdict, processed packet and action.
 *
 * Units: ns, bytes, PSNs = segment numbers.
 */
#ifndef SIM_EC_H
#define SIM_EC_H

#include <stdio.h>

#include "sim.h"
#include "sim_recv.h"
#include "sim_sched.h"
#include "sl_ec.h"

#define SIM_EC_STEPS_MAX 8
#define SIM_EC_STEP_WINDOW_NS 8000 /**< the steps' rate window, ns */

/* From at_ns on, hosts drain at pct % of their link rate. */
struct sim_ec_step {
	uint64_t at_ns;
	uint32_t pct; /**< 1..10000 */
};

enum sim_ec_policy {
	SIM_EC_DACK = 0,
	SIM_EC_OPT,
	SIM_EC_AIMD,
	SIM_EC_TIMEOUT,
	SIM_EC_NPOLICIES,
};

struct sim_ec_conf {
	uint32_t nflows;          /**< flow ids [0, nflows) */
	uint8_t policy;           /**< enum sim_ec_policy */
	struct sl_ec_conf q;      /**< every target queue; max_conns, policy and nack are set
				   *   from nflows and the policy */
	uint32_t drain_pct;       /**< r x 100: the host drains at this % of its link rate,
				   *   1..10000 */
	bool queue_counts_wire;   /**< the queue accounts wire bytes, not payload bytes */
	uint32_t opt_pkts;        /**< OPT's outstanding packets, the programs' param[0]
				   *   (0: the engine's ring W) */
	uint32_t opt_bytes;       /**< OPT's outstanding payload bytes, param[1] (0: no limit) */
	uint32_t h1_iacks;        /**< dack's IACKs in H1 before H-infinity, param[3] (0: 6) */
	uint64_t measure_from_ns; /**< occupancy and busy time count from here, ns */
	uint32_t nsteps;          /**< drain rate changes, at_ns increasing */
	struct sim_ec_step step[SIM_EC_STEPS_MAX];
	uint64_t duration_ns; /**< the run's length: sizes the rate bins kept with steps */
};

/* The reaction to one drain step (sim_ec_step_result). */
struct sim_ec_step_result {
	uint64_t at_ns;
	uint32_t from_pct, to_pct;
	int64_t settle_ns; /**< from at_ns until the rate window met the criterion, ns; -1: never */
};

/* Per-flow counters: the reference-shaped ones first (delivered = processed by the host). */
struct sim_ec_flow_stats {
	struct sim_recv_flow_stats rx; /**< segs, bytes (payload), nacks; cumack = the newest
					*   processed PSN + 1 */
	uint64_t iacks;                /**< IACKs sent */
	uint64_t dacks;                /**< DACKs sent */
	uint64_t drop_full;            /**< in-order arrivals dropped for room (EC drops) */
	uint64_t drop_order;           /**< out-of-order arrivals dropped */
	uint64_t drop_dup;             /**< selective repeat: repeats of accepted PSNs dropped */
	uint64_t first_dack_ns;        /**< time of the first DACK, ns (SIM_NEVER: none) */
};

/* One target host, from the later of measure_from_ns and its first arrival until now. */
struct sim_ec_host_stats {
	struct sl_ec_stats q;    /**< lib/ec's counters (whole run) */
	uint64_t active_ns;      /**< time measured, ns */
	uint64_t busy_ns;        /**< of it, time the host was processing, ns */
	double queue_mean_bytes; /**< occupancy averaged over active_ns, bytes */
};

struct sim_ec;

extern const struct sim_receiver_ops sim_ec_ops;

/* The policy called name, or -1; and a policy's name ("dack", ...). */
int sim_ec_policy_parse(const char *name);
const char *sim_ec_policy_name(uint8_t policy);

/* The sender's half of c's policy: the program and its OPT / dack parameters, into sp. */
void sim_ec_flow_spec(const struct sim_ec_conf *c, struct sim_flow_spec *sp);

/* NULL + errno (EINVAL for a bad conf, ENOMEM). */
struct sim_ec *sim_ec_create(struct sim *s, const struct sim_ec_conf *c);
void sim_ec_free(struct sim_ec *ec);

/* Open flow as connection `flow` of host sp->dst's queue (created with its first flow). 0,
 * -EINVAL, or the error of sl_ec_create / sl_ec_conn_open. */
int sim_ec_add_flow(struct sim_ec *ec, uint32_t flow, const struct sim_flow_spec *sp);

/* Write every arrival verdict, processed packet and action to f (ec.csv; NULL: none). */
void sim_ec_set_trace(struct sim_ec *ec, FILE *f);
#define SIM_EC_TRACE_HEAD "t_ns,host,flow,event,psn,queue_bytes"

const struct sim_ec_flow_stats *sim_ec_flow(const struct sim_ec *ec, uint32_t flow);

/* Host h's figures up to now_ns. 0, or -ENOENT when h has no queue. */
int sim_ec_host_stats(const struct sim_ec *ec, uint32_t h, uint64_t now_ns,
		      struct sim_ec_host_stats *st);

/* Host h's reaction to step k. 0, or -ENOENT (no such host or step). */
int sim_ec_step_result(const struct sim_ec *ec, uint32_t h, uint32_t k,
		       struct sim_ec_step_result *r);

/* Actions that could not be encoded (must stay 0). */
uint64_t sim_ec_encode_errors(const struct sim_ec *ec);

#endif /* SIM_EC_H */
