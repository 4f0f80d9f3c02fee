/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_newreno.h - the per-flow state of the newreno program, public so that traces and the
 * RFC 6582 fidelity test can read a flow's congestion window (sl_sched_flow_priv()).
 */
#ifndef SL_NEWRENO_H
#define SL_NEWRENO_H

#include <stdint.h>

#define NEWRENO_DUPTHRESH 3 /**< dupacks that trigger fast retransmit (RFC 5681) */

struct newreno {
	uint32_t cwnd;     /**< congestion window, segments */
	uint32_t ssthresh; /**< slow-start threshold, segments */
	uint32_t recover;  /**< highest segment sent when recovery started (RFC 6582 "recover") */
	uint32_t prev_hi;  /**< wnd_start before the last new ack, segment (RFC 6582 s4.1) */
	uint16_t ai;       /**< new acks counted toward the next +1 in congestion avoidance */
	uint8_t dupacks;   /**< duplicate acks since the last new ack */
	uint8_t inrec : 1; /**< in fast recovery */
	uint8_t in_to : 1; /**< recovering after a timeout */
};

#endif /* SL_NEWRENO_H */
