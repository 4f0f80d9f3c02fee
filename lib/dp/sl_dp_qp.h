/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_dp_qp.h - queue pairs on a lane: the transport endpoint (lib/xport) and its built-in
 * message traffic (sl_xport_traffic.h) plugged into a lane as its producer and consumer
 * (struct sl_dp_app), on top of the reliable link ("reliability = link": every transport frame
 * is one link body, which the link delivers exactly once and in order).
 *
 * produce: post messages (a bounded budget; none before the lane has first seen its peer up,
 * so that no QP times out on a peer that is not there yet), then ask the endpoint for no more
 * frames than mbufs are at hand (taken from the pool in bulk, leftovers kept for the next poll),
 * and build each frame in its mbuf after RTE_PKTMBUF_HEADROOM, where the lane writes the Ethernet
 * and link headers: transport header, payload, zero padding (the endpoint pads to SL_DP_MIN_BODY).
 * consume: every delivered body goes to the endpoint with its mbuf as the handle; the endpoint
 * frees it (conf.release) when done, at once or after the reorder buffer held it.
 *
 * The endpoint is never asked for more frames than there are mbufs in hand (a short pool shows
 * in pool_short and only delays sending); a frame it handed out that could not be built (longer
 * than an mbuf's room) would be lost to the transport, its retransmission the only repair:
 * counted in tx_lost, which stays 0 when seg_bytes fits the mbufs (sluiced checks it).
 *
 * Applications' QPs (libsluice, lib/chan): an adapter given a lane half of the channel
 * (conf.chan) shares its endpoint between the built-in traffic's QPs and the applications' QP
 * range that the lane half owns. The endpoint's callbacks go to the lane half for its QPs
 * (sl_chan_lane_owns) and to the traffic for the rest; produce runs the lane half's poll (its
 * mailbox commands, its QPs' rings) before asking the endpoint for frames, whether or not the
 * peer is up, so that the control thread's commands are answered; a new link session fails
 * the applications' QPs (sl_chan_lane_session) as it restarts the traffic's.
 *
 * Telemetry runs on another thread: counters are written by the lane's lcore with relaxed
 * stores and read with sl_stats_snapshot(); sl_xport_qp_info_get() reads scheduler state that
 * is not atomic, so produce refreshes a snapshot of each QP's info every SL_DP_QP_INFO_NS (a
 * few QPs per poll), published under a sequence lock, which sl_dp_qp_info_get() reads.
 */
#ifndef SL_DP_QP_H
#define SL_DP_QP_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "sl_chan_srv.h"
#include "sl_common.h"
#include "sl_dp.h"
#include "sl_stats.h"
#include "sl_xport.h"
#include "sl_xport_traffic.h"

#define SL_DP_QP_INFO_NS (10 * SL_NS_PER_MS) /**< QP info snapshot period, ns */
#define SL_DP_QP_INFO_PER_POLL 4u            /**< QP info snapshots refreshed per produce call */
/*
 * Messages posted per produce call, at most: one transmit burst of one-packet messages. Posting
 * more than a poll can send only lengthens the send queues: with 1000 QPs, 64 a poll halved the
 * rate (0.7 - 0.8 Mpps of 64 B messages over memif against 1.8 at 32); 16 left a single QP
 * unable to fill a burst.
 */
#define SL_DP_QP_POST_BUDGET SL_DP_BURST

/*
 * Payload by reference (qp.c): a frame's payload of at least SL_DP_QP_ATTACH_MIN bytes goes as an
 * external buffer after a first mbuf of SL_DP_QP_HEAD_BYTES of body (transport header, then
 * payload). Below that size a copy costs less than a second mbuf's allocation, attach and free.
 */
#define SL_DP_QP_ATTACH_MIN 1024u
#define SL_DP_QP_HEAD_BYTES 64u

struct sl_dp_qp_conf {
	struct sl_dp_lane *lane;   /**< messages are posted once its peer is up (NULL: at once) */
	struct rte_mempool *pool;  /**< payload mbufs; bodies start after RTE_PKTMBUF_HEADROOM */
	int socket_id;             /**< NUMA node of the adapter's memory (SOCKET_ID_ANY) */
	uint32_t max_qps;          /**< QPNs [0, max_qps) may open on this lane: the traffic's and,
				    *   with chan, the applications' range above them */
	struct sl_chan_lane *chan; /**< the applications' QPs on this lane (NULL: none) */
	uint32_t window_pkts;      /**< endpoint window, packets (0: the endpoint's default) */
	uint32_t sq_depth;         /**< messages a QP may have posted and not completed, a power
				    *   of two (0: the endpoint's default) */
	uint64_t line_bps;         /**< the port's line rate, bits/s: the link the endpoint's pacer
				    *   shares among the QPs (0: the endpoint's default) */
	uint64_t pace_catchup_ns;  /**< the endpoint's pace_catchup_ns (0: none) */
	uint32_t frame_overhead_bytes;        /**< wire bytes of a frame beyond the transport's: the
					       *   link header, SL_DP_ETH_WIRE_BYTES */
	uint64_t ec_drain_bps;                /**< the endpoint's ec_drain_bps (0: no target) */
	struct sl_ec_conf ec;                 /**< the endpoint's ec */
	struct sl_xport_traffic_conf traffic; /**< message sizes, count, seed, check (its pattern
					       *   is the adapter's: traffic.pattern is ignored) */
	/**
	 * Large payloads go by reference (qp.c), in mbufs of a pool of this many the adapter makes
	 * (no data room: 128 B each); 0: every payload is copied. Only for a port that sends
	 * chained mbufs and a link whose check reads at most SL_DP_VCODE_HDR_BYTES of a body.
	 */
	uint32_t tx_attach_mbufs;
};

/* Counters of the adapter, each described once in sl_dp_qp_stat_table (docs/counters.md). */
struct sl_dp_qp_stats {
	uint64_t tx_frames;
	uint64_t tx_bytes;
	uint64_t tx_attached;
	uint64_t tx_lost;
	uint64_t pool_short;
	uint64_t rx_frames;
	uint64_t rx_bytes;
	uint64_t info_refreshes;
	uint64_t qp_restarts;
	uint64_t qp_restart_failed;
};

extern const struct sl_stat_table sl_dp_qp_stat_table;

struct sl_dp_qp;

/* An adapter with its endpoint and traffic; NULL and errno (EINVAL, ENOMEM, or the endpoint's). */
struct sl_dp_qp *sl_dp_qp_create(const struct sl_dp_qp_conf *conf);

/*
 * Free the endpoint (releasing every frame it holds), the traffic and the spare mbufs; call it
 * once every frame it built is freed (its lane's port closed). A frame still out keeps the
 * pattern it points into (which its free releases) and the pool of its attach mbuf, which is
 * then never freed (logged).
 */
void sl_dp_qp_free(struct sl_dp_qp *a);

/*
 * Open QP qc->qpn on the endpoint at now_ns and give it traffic: it sends messages to the
 * peer's qc->peer_qpn and/or checks what it receives (roles: enum sl_xport_traffic_role bits).
 * 0 or the endpoint's or the traffic's -errno. Before the lane runs. qc is copied (a new link
 * session reopens the QP from it); the program name it points to must outlive the adapter.
 */
int sl_dp_qp_open(struct sl_dp_qp *a, const struct sl_xport_qp_conf *qc, unsigned roles,
		  uint64_t now_ns);

/* struct sl_dp_app callbacks; ctx is the struct sl_dp_qp. */
unsigned sl_dp_qp_produce(void *ctx, uint64_t now_ns, struct rte_mbuf **m, unsigned max);
unsigned sl_dp_qp_consume(void *ctx, uint64_t now_ns, struct rte_mbuf **m, unsigned n);
/* The lane's link began a new session: every QP restarts with it (qp.c, "Sessions"). */
void sl_dp_qp_session(void *ctx, uint64_t now_ns);
/* Every poll, every state: the applications' lane half (commands, rings), if any. */
void sl_dp_qp_tick(void *ctx, uint64_t now_ns);

/* The adapter's counters (any thread). */
void sl_dp_qp_stats_get(const struct sl_dp_qp *a, struct sl_dp_qp_stats *st);

/*
 * QP qpn's counters over every session of the lane's link (any thread): the endpoint's for the
 * session now, plus those of the sessions that ended (qp.c, "Sessions"; the close's cancelled
 * messages counted as failed). The endpoint's return code: -ENOENT if not open now.
 */
int sl_dp_qp_lifetime_stats(const struct sl_dp_qp *a, uint32_t qpn, struct sl_xport_qp_stats *st);

/*
 * The latest snapshot of QP qpn's info (any thread): 0, -ENOENT (not open here) or -EAGAIN (no
 * snapshot yet, or the lane kept rewriting it while this read).
 */
int sl_dp_qp_info_get(const struct sl_dp_qp *a, uint32_t qpn, struct sl_xport_qp_info *info);

/* The QP is open on this adapter: one of its own, or an application's while it is open on the
 * endpoint (any thread). */
bool sl_dp_qp_has(const struct sl_dp_qp *a, uint32_t qpn);

/* The endpoint and the traffic: their *_stats_get are safe from any thread; the rest (the
 * latency histogram) belongs to the lane's lcore, or to anyone once the lane has stopped. */
const struct sl_xport *sl_dp_qp_xport(const struct sl_dp_qp *a);
const struct sl_xport_traffic *sl_dp_qp_traffic(const struct sl_dp_qp *a);

/*
 * The built-in traffic has finished (sl_xport_traffic_finished(), as the lane's lcore last saw
 * it; any thread): never with [qp] msgs = 0.
 */
bool sl_dp_qp_finished(const struct sl_dp_qp *a);

#endif /* SL_DP_QP_H */
