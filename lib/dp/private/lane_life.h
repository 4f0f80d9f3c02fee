/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lane_life.h - a lane's life as one state machine: the events that move it, the actions a
 * move asks of the lane, and the transition function (the states and their timers are in
 * sl_dp.h, which embeds them in every lane). No DPDK call, no clock (time is the event's
 * now_ns), no port; lib/dp/lane_life.c feeds it events and performs the
 * actions. docs/link.md ("The lane's life") has the transition table; lane_life.c the essay.
 */
#ifndef DP_LANE_LIFE_H
#define DP_LANE_LIFE_H

#include <stdbool.h>
#include <stdint.h>

#include "sl_common.h"
#include "sl_dp.h"

enum sl_dp_lane_event {
	SL_DP_LANE_EV_STOP,      /**< the daemon stops */
	SL_DP_LANE_EV_TICK,      /**< a poll of a stopping lane is done: its timer may be due */
	SL_DP_LANE_EV_PEER_LEFT, /**< the burst just sent carried the answer to the peer's LEAVE */
	SL_DP_LANE_EV_LEAVE_ACKED, /**< the peer answered this end's LEAVE */
	SL_DP_LANE_EV_LINK_DOWN,   /**< the port's link status reads down */
	SL_DP_LANE_EV_LINK_UP,     /**< the port's link status reads up */
};

/* An event and what its guards read, as the lane saw them when it happened. */
struct sl_dp_lane_input {
	enum sl_dp_lane_event event;
	uint64_t now_ns;    /**< ns: when it happened */
	bool peer_up;       /**< the lane's link is established and heard the peer in time */
	bool shares_memory; /**< the port's memory is its peer's too (memif) */
};

/* Actions a transition asks of the lane, performed in this order. */
#define SL_DP_LANE_ACT_LINK_LEAVE 0x1u /**< sl_link_leave(): LEAVE only, no new payloads */
#define SL_DP_LANE_ACT_SILENCE 0x2u    /**< drop the TX backlog (tx_drop_quiet), quiet_entries++ */

/*
 * Apply one event to a lane's life: life moves to the next state (and timer) and the return
 * value holds the SL_DP_LANE_ACT_* the lane must perform. An event without a row in the table
 * for the current state changes nothing and asks nothing.
 */
unsigned int sl_dp_lane_transition(struct sl_dp_lane_life *life, const struct sl_dp_lane_input *in);

/* The state's name in logs and telemetry ("running", "draining", ...). */
const char *sl_dp_lane_state_name(enum sl_dp_lane_state s);

#endif /* DP_LANE_LIFE_H */
