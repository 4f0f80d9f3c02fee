/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * link_pair.h - two sl_link lanes joined by a simulated channel on a virtual clock (test and
 * benchmark glue, no DPDK).
 *
 * Time advances in slots; in each slot each end may put one frame on its direction (RIFL's
 * model: every frame, control or data, takes one slot). With txq_frames > 1 the link fills a
 * transmit queue of that depth (as DPDK glue fills the NIC's TX ring with as many frames as it
 * has free descriptors) and one frame leaves it per slot, so bursts of control frames queue
 * up as they do in software. A frame arrives delay_slots after it leaves,
 * after the channel's faults: Bernoulli loss, Gilbert-Elliott burst loss, bit errors over a
 * continuous bit stream (corrupted frames delivered so VCODE must catch them, or dropped as a
 * NIC with a bad FCS would), and reordering (a frame overtakes the previous one in flight).
 * Each end has a producer offering numbered payloads (sequence number + a pattern derived
 * from it) and a checker/consumer that takes delivered frames at a bounded rate and reports
 * each delivery's fate: in order, duplicated, out of order, corrupted. One end can be
 * restarted (its link freed and created again) mid-run.
 */
#ifndef LINK_PAIR_H
#define LINK_PAIR_H

#include <stdbool.h>
#include <stdint.h>

#include "sl_link.h"
#include "sl_stats.h"

struct lp_fault {
	double loss;          /**< probability a frame is dropped */
	double ge_good_bad;   /**< Gilbert-Elliott: P(good -> bad) per frame */
	double ge_bad_good;   /**< P(bad -> good) per frame */
	double ge_bad_loss;   /**< loss probability in the bad state */
	double ber;           /**< bit error rate */
	bool corrupt_deliver; /**< corrupted frames are delivered (else dropped) */
	double reorder;       /**< probability a frame overtakes the previous one */
};

struct lp_conf {
	struct sl_wire_fmt fmt;
	enum sl_link_replay replay;
	uint16_t body_bytes;      /**< bytes per payload body, >= 16 */
	uint64_t slot_ns;         /**< ns per slot (one frame time) */
	uint32_t delay_slots;     /**< one-way delay */
	double offered;           /**< new payloads offered per slot per direction, <= 1 */
	double consume;           /**< payloads the consumer takes per slot (per direction) */
	uint64_t frames;          /**< payloads to send per direction */
	uint64_t restart_slot;    /**< restart end 1 at this slot (0: never) */
	bool one_way;             /**< only end 0 sends payloads; end 1 sends link frames only */
	uint32_t keepalive_slots; /**< keepalive interval */
	uint32_t ctrl_slots;      /**< gap between control runs */
	uint32_t txq_frames;      /**< transmit queue (NIC TX ring) depth, <= 256 (0: 1, none) */
	double rx_per_slot;       /**< frames each receiver processes per slot: below 1, a receiver
				   *   slower than the line (its lcore); 0: every arrival at once */
	uint32_t rx_ring_frames;  /**< its receive ring (an XDP or NIC ring), with rx_per_slot:
				   *   a frame that finds it full is dropped (frames_overrun) */
	bool slot_clock;          /**< the links keep the channel's line: line_bps = one data frame
				   *   per slot, adapt_rate (link_rate.c; else line_bps = 0) */
	uint64_t max_slots;       /**< give up after this many slots (0: 400 x frames + 10^5) */
	uint64_t seed;
	struct lp_fault fault;
};

struct lp_dir {
	uint64_t submitted;          /**< payloads taken by the sending link */
	uint64_t delivered;          /**< distinct payloads delivered */
	uint64_t lost;               /**< submitted, never delivered, not aborted by a restart */
	uint64_t duplicated;         /**< deliveries of a payload already delivered */
	uint64_t reordered;          /**< deliveries below the highest delivered sequence */
	uint64_t corrupted_accepted; /**< deliveries whose bytes differ from what was sent */
	uint64_t aborted;            /**< released by a re-initialization, never delivered */
	uint64_t max_occupancy;      /**< frames: largest consumer queue seen */
	uint64_t last_delivery_slot; /**< slot of the last delivery */
	uint64_t frames_lost;        /**< frames the channel dropped */
	uint64_t frames_corrupted;   /**< frames the channel corrupted */
	uint64_t frames_overrun;     /**< frames dropped at the receiver's full receive ring */
	struct sl_link_stats tx;     /**< sending link's counters (summed over restarts) */
	struct sl_link_stats rx;     /**< receiving link's counters (summed over restarts) */
	struct sl_hist recovery_ns;  /**< receiving link's recovery times */
};

struct lp_result {
	uint64_t slots;       /**< slots simulated */
	uint8_t ring_order;   /**< k used */
	uint32_t fc_frames;   /**< S_FC used */
	bool finished;        /**< everything delivered or aborted before max_slots */
	struct lp_dir dir[2]; /**< dir[0]: end 0 -> end 1, dir[1]: end 1 -> end 0 */
};

/* Run one experiment; 0, or -errno when a link cannot be created. */
int lp_run(const struct lp_conf *c, struct lp_result *r);

/* A reasonable configuration: 256 B bodies, 8-slot delay, faithful mode, whole-ring replay. */
void lp_conf_default(struct lp_conf *c);

#endif /* LINK_PAIR_H */
