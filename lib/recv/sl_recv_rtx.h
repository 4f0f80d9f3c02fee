/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_recv_rtx.h - MELO's sender side (Lu et al., APNet'17, section 3.2.4): rebuild the receiver's
 * bitmap from its NACKs and hand the scheduler only the holes to resend.
 *
 * Each flow keeps a bitmap of PSNs "marked for retransmission", drawn from the tracker's own
 * shared bits pool (the same pool design and size as the receiver's: the sender's bitmap is
 * never larger than the receiver's). A NACK carries the cumulative ACK and up to 3 recent holes,
 * newest first. Holes grow the bitmap only at its tail; the scheduler takes marked PSNs from the
 * head as ranges (for lib/sched's marked_for_rtx), and cumulative ACKs shrink it at the head.
 *
 * A NACK repeats older holes for redundancy, so a PSN below nack_high (one past the highest PSN
 * any NACK marked) is never marked twice: without retransmission loss every resend is needed.
 * A lost retransmission is therefore not resent on a NACK; the RTO resends from the front
 * (sl_recv_rtx_rto clears the bitmap and the scheduler goes back to snd_una), as in the paper.
 * When the pool has no block for a hole, the hole is left unmarked (counted) and nack_high stays,
 * so a later NACK that repeats it can still mark it.
 */
#ifndef SL_RECV_RTX_H
#define SL_RECV_RTX_H

#include <stdint.h>

#include "sl_common.h"
#include "sl_recv.h"
#include "sl_stats.h"

struct sl_recv_rtx_conf {
	uint32_t max_flows;   /**< flows [0, max_flows) */
	uint32_t window_pkts; /**< largest distance from the cumulative ACK to a hole's end, pkts */
	uint32_t pool_bits;   /**< bits pool size, bits (paper: 1024, same as the receiver's) */
	uint32_t block_bits;  /**< block size, bits (paper: 8) */
};

/** PSNs [start_psn, start_psn + len_pkts) to retransmit. */
struct sl_recv_range {
	uint32_t start_psn;
	uint32_t len_pkts;
};

/* Counters, each described once in sl_recv_rtx_stat_table (docs/counters.md). */
struct sl_recv_rtx_stats {
	uint64_t nacks;
	uint64_t holes;
	uint64_t bad_holes;
	uint64_t bad_nacks;
	uint64_t pkts_marked;
	uint64_t pkts_repeated;
	uint64_t pkts_pool_exhausted;
	uint64_t pkts_taken;
	uint64_t pkts_acked_marked;
	uint64_t rtos;
	uint64_t pool_peak_blocks;
	uint64_t pool_blocks_freed;
	uint64_t pool_next_hops;
};

extern const struct sl_stat_table sl_recv_rtx_stat_table;

struct sl_recv_rtx;

/* Tracker for conf; NULL and errno EINVAL or ENOMEM. */
struct sl_recv_rtx *sl_recv_rtx_create(const struct sl_recv_rtx_conf *conf);
void sl_recv_rtx_free(struct sl_recv_rtx *t);

/* Start tracking flow, whose first PSN is isn: 0, -EINVAL, -EEXIST. */
int sl_recv_rtx_flow_open(struct sl_recv_rtx *t, uint32_t flow, uint32_t isn);
/* Stop tracking flow; its blocks go back to the pool. */
void sl_recv_rtx_flow_close(struct sl_recv_rtx *t, uint32_t flow);

/*
 * A NACK for flow (fb of an SL_RECV_ACT_NACK, after the wire decode): applies its cumulative ACK,
 * then marks the new part of each hole. Returns the PSNs newly marked, or -EINVAL.
 */
int sl_recv_rtx_nack(struct sl_recv_rtx *t, uint32_t flow, const struct sl_recv_fb *fb);

/* A cumulative ACK: marks before ack_psn are dropped, blocks freed at the head. 0 or -EINVAL. */
int sl_recv_rtx_ack(struct sl_recv_rtx *t, uint32_t flow, uint32_t ack_psn);

/*
 * Take marked PSNs from the head, at most max_pkts of them, as up to max ranges in PSN order;
 * they are unmarked. Returns the number of ranges.
 */
unsigned sl_recv_rtx_take(struct sl_recv_rtx *t, uint32_t flow, struct sl_recv_range *out,
			  unsigned max, uint32_t max_pkts);

/* RTO: clear the flow's bitmap; the scheduler resends from snd_una_psn. 0 or -EINVAL. */
int sl_recv_rtx_rto(struct sl_recv_rtx *t, uint32_t flow, uint32_t snd_una_psn);

/* One past the highest PSN a NACK of flow ever marked (0 for a flow not open). */
uint32_t sl_recv_rtx_nack_high(const struct sl_recv_rtx *t, uint32_t flow);

/* PSNs marked and not yet taken (0 for a flow not open). */
uint32_t sl_recv_rtx_marked(const struct sl_recv_rtx *t, uint32_t flow);

uint32_t sl_recv_rtx_pool_used_blocks(const struct sl_recv_rtx *t);
void sl_recv_rtx_stats_get(const struct sl_recv_rtx *t, struct sl_recv_rtx_stats *st);

/* Bytes of one flow's tracker state (the sender's share of the per-connection memory). */
uint32_t sl_recv_rtx_flow_bytes(void);

/*
 * Invariant audit (tests): free + allocated = pool size, no block in two flows, each chain
 * exactly covers its marks, the count of set bits equals marked. 0 or -EFAULT.
 */
int sl_recv_rtx_audit(const struct sl_recv_rtx *t);

#endif /* SL_RECV_RTX_H */
