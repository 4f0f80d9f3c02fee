/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_xport_traffic.h - built-in message traffic for the queue pairs of one endpoint: a
 * generator that keeps each sending QP's send queue full of messages, and a checker that judges
 * every message a receiving QP delivers: exactly once, in order, of the right length, with the
 * right bytes. The daemon runs it until the application library lands; the tests run the same.
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
#ifndef SL_XPORT_TRAFFIC_H
#define SL_XPORT_TRAFFIC_H

#include <stdbool.h>
#include <stdint.h>

#include "sl_stats.h"
#include "sl_xport.h"

#define SL_XPORT_TRAFFIC_START_SPAN 4096u /**< message start offsets are below this, bytes */

struct sl_xport_traffic_conf {
	uint32_t max_qps;   /**< QPs [0, max_qps) of the endpoint */
	uint32_t min_bytes; /**< smallest message, bytes, >= 1 */
	uint32_t max_bytes; /**< largest message, bytes (= min_bytes: one size) */
	uint64_t msgs;      /**< messages each sending QP posts; 0: until stopped */
	uint64_t seed;      /**< sizes and content, the same on both ends */
	bool check;         /**< compare every received byte (false: lengths and order only) */
	/**
	 * The pattern's memory, sl_xport_traffic_pattern_bytes() of it, which the caller owns and
	 * keeps while frames may point into it (so it can be registered memory whose payload the
	 * frames carry by reference, not by copy); NULL: the traffic allocates and frees its own.
	 */
	uint8_t *pattern;
};

/* Bytes of the pattern buffer for conf: max_bytes + SL_XPORT_TRAFFIC_START_SPAN. */
static inline size_t
sl_xport_traffic_pattern_bytes(const struct sl_xport_traffic_conf *conf)
{
	return (size_t)conf->max_bytes + SL_XPORT_TRAFFIC_START_SPAN;
}

/* Counters, each described once in sl_xport_traffic_stat_table (docs/counters.md). */
struct sl_xport_traffic_stats {
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

extern const struct sl_stat_table sl_xport_traffic_stat_table;

struct sl_xport_traffic;

/* NULL and errno EINVAL (sizes out of order, 0, or above SL_XPORT_MSG_MAX) or ENOMEM. */
struct sl_xport_traffic *sl_xport_traffic_create(const struct sl_xport_traffic_conf *conf);
void sl_xport_traffic_free(struct sl_xport_traffic *t);

/* What the traffic does with a QP: sl_xport_traffic_qp()'s roles, bits of a word. */
enum sl_xport_traffic_role {
	SL_XPORT_TRAFFIC_SEND = 1u << 0,  /**< post messages to the peer's QP */
	SL_XPORT_TRAFFIC_CHECK = 1u << 1, /**< check the messages that arrive */
};

/*
 * QP qpn of the endpoint sends to the peer's QP peer_qpn and/or checks what it receives (roles:
 * enum sl_xport_traffic_role bits, at least one). The stream a QP receives is named by the
 * receiver's QP number, so both ends agree on it. 0 or -EINVAL.
 */
int sl_xport_traffic_qp(struct sl_xport_traffic *t, uint32_t qpn, uint32_t peer_qpn,
			unsigned roles);

/*
 * QP qpn starts a new session with its peer (the endpoint closed and reopened it: MSNs start
 * from 0 both ways). Messages posted from now on are sized and filled from MSN 0 again, the
 * count toward msgs going on (the QP posts again, even after a failure refused its posts), and
 * the checker expects the peer's stream from MSN 0.
 * 0 or -EINVAL (not a QP of this traffic).
 */
int sl_xport_traffic_qp_restart(struct sl_xport_traffic *t, uint32_t qpn);

/* Fill the send queues of the sending QPs (round robin from where the last call stopped, at most
 * budget messages). Returns the number posted. */
unsigned sl_xport_traffic_post(struct sl_xport_traffic *t, struct sl_xport *x, uint64_t now_ns,
			       unsigned budget);

/* The endpoint's on_recv and on_complete (struct sl_xport_conf), ctx = the traffic. */
int sl_xport_traffic_on_recv(void *ctx, const struct sl_xport_rx_seg *seg, uint64_t now_ns);
void sl_xport_traffic_on_complete(void *ctx, const struct sl_xport_cqe *c, uint64_t now_ns);

/* Every sending QP has posted its msgs and seen each complete, successfully or not (never with
 * msgs = 0). */
bool sl_xport_traffic_done(const struct sl_xport_traffic *t);

/* Done, and every receiving QP has had msgs messages delivered (checked or not). */
bool sl_xport_traffic_finished(const struct sl_xport_traffic *t);

void sl_xport_traffic_stats_get(const struct sl_xport_traffic *t,
				struct sl_xport_traffic_stats *st);
/* Messages checked by QP qpn so far (0 for a QP that does not receive). */
uint64_t sl_xport_traffic_qp_checked(const struct sl_xport_traffic *t, uint32_t qpn);
/* QP qpn's share of the counters (its delivery window included). 0 or -ENOENT. */
int sl_xport_traffic_qp_stats_get(const struct sl_xport_traffic *t, uint32_t qpn,
				  struct sl_xport_traffic_stats *st);
/* Post-to-completion latency of every completed message, ns (the owner's lcore reads it). */
const struct sl_hist *sl_xport_traffic_latency(const struct sl_xport_traffic *t);

#endif /* SL_XPORT_TRAFFIC_H */
