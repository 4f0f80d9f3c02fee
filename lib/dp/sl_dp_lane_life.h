/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_dp_lane_life.h - a lane's life as one state machine: the states, the events that move it,
 * the actions a move asks of the lane, and the transition function. Pure: no DPDK, no clock
 * (time is the event's now_ns), no port; lib/dp/lane_life.c feeds it events and performs the
 * actions. docs/link.md ("The lane's life") has the transition table; lane_life.c the essay.
 */
#ifndef SL_DP_LANE_LIFE_H
#define SL_DP_LANE_LIFE_H

#include <stdbool.h>
#include <stdint.h>

#include "sl_common.h"

#define SL_DP_DRAIN_NS (50 * SL_NS_PER_MS)       /**< a stop drains the lane this long */
#define SL_DP_LEAVE_WAIT_NS (500 * SL_NS_PER_MS) /**< longest wait for the peer's answer */
#define SL_DP_LEAVE_GRACE_NS (50 * SL_NS_PER_MS) /**< before closing after answering a peer */
#define SL_DP_QUIET_MAX_NS SL_NS_PER_S /**< a quiet lane wakes after this if the link stayed up */

enum sl_dp_lane_state {
	SL_DP_LANE_RUNNING,    /**< polled: receive, deliver, produce, transmit */
	SL_DP_LANE_QUIET,      /**< answered the peer's LEAVE on a shared-memory port: untouched */
	SL_DP_LANE_QUIET_DOWN, /**< quiet, and the port's link went down since (the peer closed) */
	SL_DP_LANE_DRAINING,   /**< stopping: receive, deliver, send what the queue refused */
	SL_DP_LANE_LEAVING,    /**< stopping: the link sends LEAVE until the peer answers */
	SL_DP_LANE_LEFT,       /**< stopped: the port is not touched again and may close */
};

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

struct sl_dp_lane_life {
	enum sl_dp_lane_state state;
	/**
	 * ns, the state's timer: DRAINING leaves then; LEAVING gives up on an answer then; QUIET
	 * may wake then; LEFT may close the port from then on. Unused in the other states.
	 */
	uint64_t timer_ns;
};

/*
 * Apply one event to a lane's life: life moves to the next state (and timer) and the return
 * value holds the SL_DP_LANE_ACT_* the lane must perform. An event without a row in the table
 * for the current state changes nothing and asks nothing.
 */
unsigned int sl_dp_lane_transition(struct sl_dp_lane_life *life, const struct sl_dp_lane_input *in);

/* The state's name in logs and telemetry ("running", "draining", ...). */
const char *sl_dp_lane_state_name(enum sl_dp_lane_state s);

#endif /* SL_DP_LANE_LIFE_H */
