/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_dp_traffic.h - link test traffic: a generator of numbered, checksummed payloads at a chosen
 * size and rate, and a checker on the peer that counts every payload as delivered, lost,
 * duplicated, reordered or corrupted. It plugs into a lane as its producer and consumer
 * (struct sl_dp_app), so it exercises exactly the path a transport will use.
 *
 * Payload (the link body, body_bytes long, >= SL_DP_TRAFFIC_MIN_BODY):
 *   0  magic     u32  'SLT1'
 *   4  crc       u32  CRC32C of bytes [8, body_bytes)
 *   8  seq       u64  0, 1, 2, ... per lane
 *   16 len       u16  body_bytes
 *   18 pattern   xorshift64 words seeded from seq, 8 bytes at a time (the last in part)
 * Byte order is the host's: both ends run sluice on the same kind of machine. Counters are
 * written by the lane's lcore and read by telemetry with relaxed loads.
 *
 * The checker's rules: the first payload delivered sets first_seq and the expectation (a
 * receiver restarted mid-stream judges from there; a fresh stream must show first_seq 0).
 * seq == expected: delivered. seq > expected: the gap is lost (for now).
 * seq < expected: a duplicate if that seq was seen, else reordered (and no longer lost), judged
 * over the last SL_DP_TRAFFIC_WINDOW sequence numbers. A bad magic, length or CRC is
 * corrupted_accepted: the link let a damaged payload through.
 */
#ifndef SL_DP_TRAFFIC_H
#define SL_DP_TRAFFIC_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "sl_common.h"
#include "sl_dp.h"
#include "sl_stats.h"

#define SL_DP_TRAFFIC_MIN_BODY SL_DP_MIN_BODY /**< bytes: fills a minimum Ethernet frame */
#define SL_DP_TRAFFIC_WINDOW 4096u            /**< sequence numbers remembered for dup / reorder */

struct sl_dp_traffic_conf {
	bool send;            /**< generate payloads */
	bool check;           /**< check delivered payloads */
	uint16_t body_bytes;  /**< payload (link body) size, bytes */
	uint64_t rate_bps;    /**< generator rate in body bits/s; 0 = as fast as the link takes */
	uint64_t frames;      /**< payloads to generate; 0 = no limit */
	uint64_t consume_bps; /**< checker's consumption rate in body bits/s; 0 = unthrottled */
	struct rte_mempool *pool; /**< payload mbufs; bodies start after RTE_PKTMBUF_HEADROOM */
};

/* Counters, each described once in sl_dp_traffic_stat_table (docs/counters.md). */
struct sl_dp_traffic_stats {
	uint64_t generated;
	uint64_t gen_nombuf;
	uint64_t delivered;
	uint64_t first_seq;
	uint64_t lost;
	uint64_t duplicated;
	uint64_t reordered;
	uint64_t corrupted_accepted;
	uint64_t bytes;
	uint64_t first_ns;
	uint64_t last_ns;
};

extern const struct sl_stat_table sl_dp_traffic_stat_table;

/*
 * A rate cap on payloads: credit accrues at the rate since anchor_ns, and at most
 * SL_DP_BURST payloads of it may be owed at once (a token bucket one burst deep). A side held
 * back for long (a flow-control pause, a descheduled lcore) forgets the rest, so it never
 * answers a stall with a line-rate burst of what it "owes".
 */
struct sl_dp_throttle {
	uint64_t anchor_ns; /**< ns: credit counts from here; 0 before the first call */
	uint64_t taken;     /**< payloads taken since anchor_ns */
};

struct sl_dp_traffic {
	struct sl_dp_traffic_conf conf;
	struct sl_dp_throttle gen;  /**< the generator's rate_bps cap */
	struct sl_dp_throttle take; /**< the checker's consume_bps cap */
	uint64_t next_seq;
	uint64_t expected;                        /**< next sequence number the checker expects */
	uint64_t seen[SL_DP_TRAFFIC_WINDOW / 64]; /**< seq % window received */
	struct sl_dp_traffic_stats stats;
};

/*
 * 0, or -EINVAL when body_bytes is below SL_DP_TRAFFIC_MIN_BODY or does not fit in one mbuf
 * after RTE_PKTMBUF_HEADROOM (which leaves room for the Ethernet and link headers).
 */
int sl_dp_traffic_init(struct sl_dp_traffic *t, const struct sl_dp_traffic_conf *conf);

/* struct sl_dp_app callbacks; ctx is the struct sl_dp_traffic. */
unsigned sl_dp_traffic_produce(void *ctx, uint64_t now_ns, struct rte_mbuf **m, unsigned max);
unsigned sl_dp_traffic_consume(void *ctx, uint64_t now_ns, struct rte_mbuf **m, unsigned n);

/*
 * Goodput of checked payloads over the window [first delivery, until_ns], bits/s of body: with
 * until_ns = s->last_ns the rate while payloads arrived, with until_ns = now one that falls
 * while none do. 0 for an empty window (nothing delivered, or until_ns not after the first).
 */
uint64_t sl_dp_traffic_goodput_bps(const struct sl_dp_traffic_stats *s, uint64_t until_ns);

#endif /* SL_DP_TRAFFIC_H */
