/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_traffic.h - sluiced's built-in traffic, testpmd's txonly of this project: generators and
 * checkers that drive the lane and the transport endpoint through their public APIs, as any
 * application would, and judge every byte that arrives. Three parts:
 *
 *   message traffic (sl_traffic_msg_*, msg.c): messages on an endpoint's QPs ([qp]);
 *   link test traffic (sl_traffic_link_*, payload.c): numbered payloads straight on a lane's
 *   link ([traffic]);
 *   the built-in QPs of a lane (sl_traffic_qps_*, qps.c): message traffic as the user of a
 *   lane's QP adapter (sl_dp_qp_serve()), and whether it has finished, which
 *   sluiced --exit-when-done waits for.
 */
#ifndef SL_TRAFFIC_H
#define SL_TRAFFIC_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "sl_common.h"
#include "sl_dp.h"
#include "sl_stats.h"
#include "sl_xport.h"

/*
 * Message traffic (sl_traffic_msg_*), for the queue pairs of one endpoint: a
 * generator that keeps each sending QP's send queue full of messages, and a checker that judges
 * every message a receiving QP delivers: exactly once, in order, of the right length, with the
 * right bytes.
 *
 * Like perftest, the generator measures the transport, not the making of content: every
 * message is a slice of one pattern buffer filled once from the seed. Message msn of the stream
 * received by QP r is size(seed, r, msn) bytes (log-uniform in [min_bytes, max_bytes], or fixed)
 * taken from the pattern at start(r, msn) (a multiple of 8 below 4096): both ends compute both,
 * so the checker compares every byte against the pattern with no per-message state from the
 * sender, and a byte shifted, misplaced between messages or between QPs, or damaged is caught.
 *
 * The checker's verdict per delivered segment: in order (msn and offset continue the stream),
 * or out of order (counted; the stream follows the sender's msn from there); every message
 * whose bytes all match and whose length is size(msn) counts as checked. A message's latency is
 * post to completion at the sender (every packet acknowledged), in a histogram per endpoint; a
 * message that completes with an error (its QP failed or closed) counts as failed.
 */
#define SL_TRAFFIC_MSG_START_SPAN 4096u /**< message start offsets are below this, bytes */

struct sl_traffic_msg_conf {
	uint32_t max_qps;   /**< QPs [0, max_qps) of the endpoint */
	uint32_t min_bytes; /**< smallest message, bytes, >= 1 */
	uint32_t max_bytes; /**< largest message, bytes (= min_bytes: one size) */
	uint64_t msgs;      /**< messages each sending QP posts; 0: until stopped */
	uint64_t seed;      /**< sizes and content, the same on both ends */
	bool check;         /**< compare every received byte (false: lengths and order only) */
	/**
	 * The pattern's memory, sl_traffic_msg_pattern_bytes() of it, which the caller owns and
	 * keeps while frames may point into it (so it can be registered memory whose payload the
	 * frames carry by reference, not by copy); NULL: the traffic allocates and frees its own.
	 */
	uint8_t *pattern;
};

/* Bytes of the pattern buffer for conf: max_bytes + SL_TRAFFIC_MSG_START_SPAN. */
static inline size_t
sl_traffic_msg_pattern_bytes(const struct sl_traffic_msg_conf *conf)
{
	return (size_t)conf->max_bytes + SL_TRAFFIC_MSG_START_SPAN;
}

/* Counters, each described once in sl_traffic_msg_stat_table (docs/counters.md). */
struct sl_traffic_msg_stats {
	uint64_t posted;
	uint64_t completed;
	uint64_t failed;
	uint64_t bytes_completed;
	uint64_t received;
	uint64_t checked;
	uint64_t bytes_received;
	uint64_t out_of_order;
	uint64_t bad_length;
	uint64_t bad_content;
	uint64_t first_rx_ns;
	uint64_t last_rx_ns;
};

extern const struct sl_stat_table sl_traffic_msg_stat_table;

struct sl_traffic_msg;

/* NULL and errno EINVAL (sizes out of order, 0, or above SL_XPORT_MSG_MAX) or ENOMEM. */
struct sl_traffic_msg *sl_traffic_msg_create(const struct sl_traffic_msg_conf *conf);
void sl_traffic_msg_free(struct sl_traffic_msg *t);

/* What the traffic does with a QP: sl_traffic_msg_qp()'s roles, bits of a word. */
enum sl_traffic_msg_role {
	SL_TRAFFIC_MSG_SEND = 1u << 0,  /**< post messages to the peer's QP */
	SL_TRAFFIC_MSG_CHECK = 1u << 1, /**< check the messages that arrive */
};

/*
 * QP qpn of the endpoint sends to the peer's QP peer_qpn and/or checks what it receives (roles:
 * enum sl_traffic_msg_role bits, at least one). The stream a QP receives is named by the
 * receiver's QP number, so both ends agree on it. 0 or -EINVAL.
 */
int sl_traffic_msg_qp(struct sl_traffic_msg *t, uint32_t qpn, uint32_t peer_qpn, unsigned roles);

/*
 * QP qpn starts a new session with its peer (the endpoint closed and reopened it: MSNs start
 * from 0 both ways). Messages posted from now on are sized and filled from MSN 0 again, the
 * count toward msgs going on (the QP posts again, even after a failure refused its posts), and
 * the checker expects the peer's stream from MSN 0.
 * 0 or -EINVAL (not a QP of this traffic).
 */
int sl_traffic_msg_qp_restart(struct sl_traffic_msg *t, uint32_t qpn);

/* Fill the send queues of the sending QPs (round robin from where the last call stopped, at most
 * budget messages). Returns the number posted. */
unsigned sl_traffic_msg_post(struct sl_traffic_msg *t, struct sl_xport *x, uint64_t now_ns,
			     unsigned budget);

/* The endpoint's on_recv and on_complete (struct sl_xport_conf), ctx = the traffic. */
int sl_traffic_msg_on_recv(void *ctx, const struct sl_xport_rx_seg *seg, uint64_t now_ns);
void sl_traffic_msg_on_complete(void *ctx, const struct sl_xport_cqe *c, uint64_t now_ns);

/* Every sending QP has posted its msgs and seen each complete, successfully or not (never with
 * msgs = 0). */
bool sl_traffic_msg_done(const struct sl_traffic_msg *t);

/* Done, and every receiving QP has had msgs messages delivered (checked or not). */
bool sl_traffic_msg_finished(const struct sl_traffic_msg *t);

void sl_traffic_msg_stats_get(const struct sl_traffic_msg *t, struct sl_traffic_msg_stats *st);
/* Messages checked by QP qpn so far (0 for a QP that does not receive). */
uint64_t sl_traffic_msg_qp_checked(const struct sl_traffic_msg *t, uint32_t qpn);
/* QP qpn's share of the counters (its delivery window included). 0 or -ENOENT. */
int sl_traffic_msg_qp_stats_get(const struct sl_traffic_msg *t, uint32_t qpn,
				struct sl_traffic_msg_stats *st);
/* Post-to-completion latency of every completed message, ns (the owner's lcore reads it). */
const struct sl_hist *sl_traffic_msg_latency(const struct sl_traffic_msg *t);

/*
 * Link test traffic (sl_traffic_link_*): a generator of numbered, checksummed payloads at a
 * chosen size and rate, and a checker on the peer that counts every payload as delivered, lost,
 * duplicated, reordered or corrupted. It plugs into a lane as its producer and consumer
 * (struct sl_dp_app), so it exercises exactly the path a transport will use.
 *
 * Payload (the link body, body_bytes long, >= SL_TRAFFIC_LINK_MIN_BODY):
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
 * over the last SL_TRAFFIC_LINK_WINDOW sequence numbers. A bad magic, length or CRC is
 * corrupted_accepted: the link let a damaged payload through.
 */
#define SL_TRAFFIC_LINK_MIN_BODY SL_DP_MIN_BODY /**< bytes: fills a minimum Ethernet frame */
#define SL_TRAFFIC_LINK_WINDOW 4096u /**< sequence numbers remembered for dup / reorder */

struct sl_traffic_link_conf {
	bool send;            /**< generate payloads */
	bool check;           /**< check delivered payloads */
	uint16_t body_bytes;  /**< payload (link body) size, bytes */
	uint64_t rate_bps;    /**< generator rate in body bits/s; 0 = as fast as the link takes */
	uint64_t frames;      /**< payloads to generate; 0 = no limit */
	uint64_t consume_bps; /**< checker's consumption rate in body bits/s; 0 = unthrottled */
	struct rte_mempool *pool; /**< payload mbufs; bodies start after RTE_PKTMBUF_HEADROOM */
};

/* Counters, each described once in sl_traffic_link_stat_table (docs/counters.md). */
struct sl_traffic_link_stats {
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

extern const struct sl_stat_table sl_traffic_link_stat_table;

/*
 * A rate cap on payloads: credit accrues at the rate since anchor_ns, and at most
 * SL_DP_BURST payloads of it may be owed at once (a token bucket one burst deep). A side held
 * back for long (a flow-control pause, a descheduled lcore) forgets the rest, so it never
 * answers a stall with a line-rate burst of what it "owes".
 */
struct sl_traffic_throttle {
	uint64_t anchor_ns; /**< ns: credit counts from here; 0 before the first call */
	uint64_t taken;     /**< payloads taken since anchor_ns */
};

struct sl_traffic_link {
	struct sl_traffic_link_conf conf;
	struct sl_traffic_throttle gen;  /**< the generator's rate_bps cap */
	struct sl_traffic_throttle take; /**< the checker's consume_bps cap */
	uint64_t next_seq;
	uint64_t expected;                          /**< next sequence number the checker expects */
	uint64_t seen[SL_TRAFFIC_LINK_WINDOW / 64]; /**< seq % window received */
	struct sl_traffic_link_stats stats;
};

/*
 * 0, or -EINVAL when body_bytes is below SL_TRAFFIC_LINK_MIN_BODY or does not fit in one mbuf
 * after RTE_PKTMBUF_HEADROOM (which leaves room for the Ethernet and link headers).
 */
int sl_traffic_link_init(struct sl_traffic_link *t, const struct sl_traffic_link_conf *conf);

/* struct sl_dp_app callbacks; ctx is the struct sl_traffic_link. */
unsigned sl_traffic_link_produce(void *ctx, uint64_t now_ns, struct rte_mbuf **m, unsigned max);
unsigned sl_traffic_link_consume(void *ctx, uint64_t now_ns, struct rte_mbuf **m, unsigned n);

/*
 * Goodput of checked payloads over the window [first delivery, until_ns], bits/s of body: with
 * until_ns = s->last_ns the rate while payloads arrived, with until_ns = now one that falls
 * while none do. 0 for an empty window (nothing delivered, or until_ns not after the first).
 */
uint64_t sl_traffic_link_goodput_bps(const struct sl_traffic_link_stats *s, uint64_t until_ns);

/*
 * The built-in QPs of a lane: message traffic serving the QPs of a QP adapter that are not the
 * applications' (sl_dp_qp_serve()). Its poll posts at most SL_TRAFFIC_POST_BUDGET messages a
 * call, once the lane has seen its peer (the adapter calls it then); a new link session restarts
 * each QP's stream (sl_traffic_msg_qp_restart()). Finished is published for other threads.
 */
#define SL_TRAFFIC_POST_BUDGET SL_DP_BURST /**< messages posted per poll, at most */

struct sl_traffic_qps;

/*
 * Message traffic of conf (its pattern is the adapter's region, sl_dp_qp_region(), when it has
 * one: conf->pattern is ignored) serving adapter a, which outlives it. Before the lane runs.
 * NULL and errno: EINVAL (a is NULL, or the traffic refuses conf) or ENOMEM.
 */
struct sl_traffic_qps *sl_traffic_qps_create(struct sl_dp_qp *a,
					     const struct sl_traffic_msg_conf *conf);
/* After the adapter's lane has stopped; before the adapter is freed. */
void sl_traffic_qps_free(struct sl_traffic_qps *q);

/*
 * Open QP xc->qpn on the adapter's endpoint at now_ns (sl_dp_qp_open()) and give it traffic:
 * it sends messages to the peer's xc->peer_qpn and/or checks what it receives (roles: enum
 * sl_traffic_msg_role bits). 0 or the endpoint's or the traffic's -errno. Before the lane runs.
 */
int sl_traffic_qps_open(struct sl_traffic_qps *q, const struct sl_xport_qp_conf *xc, unsigned roles,
			uint64_t now_ns);

/* The message traffic: its *_stats_get are safe from any thread. */
const struct sl_traffic_msg *sl_traffic_qps_msgs(const struct sl_traffic_qps *q);

/* The traffic has finished (sl_traffic_msg_finished(), as the lane's lcore last saw it); safe
 * from any thread. */
bool sl_traffic_qps_finished(const struct sl_traffic_qps *q);

#endif /* SL_TRAFFIC_H */
