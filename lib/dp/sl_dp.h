/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_dp.h - the DPDK side of sluice: ports, lanes, packet pools and the per-lcore poll loop.
 *
 * The cores (lib/wire, lib/link, lib/sched, lib/pacer, lib/recv) never see an mbuf or a clock;
 * this module owns both. A port is any DPDK ethdev (a PCI NIC, net_af_xdp, net_af_packet,
 * net_memif, net_ring, or net_impair stacked on one of them). A lane is one RX/TX queue pair of
 * a port with the reliable link (lib/link) that runs over it. Each worker lcore owns queue pair
 * q of every port, so no lane is shared and no lock is taken on the fast path; a lane's
 * counters are written only by its owner and read (relaxed) by telemetry.
 *
 * Every frame received is counted once: not for sluice, chained (unsupported), or handed to the
 * link, which counts it as delivered, duplicate, control, filler or rejected by reason.
 *
 * A lane's life is one state machine (sl_dp_lane_life.h, lane_life.c; docs/link.md, "The lane's
 * life"): running; quiet after answering the peer's goodbye on a port whose memory it shares
 * with the peer (memif), untouched until the port has gone down and up again; and, once the
 * daemon stops, draining, leaving (the link's LEAVE, until the peer answers) and left.
 *
 * No worker writes what another reads: the peer's MAC is learned by each lane from the frames
 * it receives, and port fields are written only before the workers start.
 */
#ifndef SL_DP_H
#define SL_DP_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "sl_common.h"
#include "sl_dp_lane_life.h"
#include "sl_dp_xdp.h"
#include "sl_link.h"
#include "sl_stats.h"
#include "sl_xhdr.h"

#define SL_DP_MAX_PORTS 8
#define SL_DP_MAX_QUEUES 64
#define SL_DP_BURST 32
/* A poll this long after the lane's previous one counts as a gap: the lcore was descheduled
 * or stalled, and a paced sender lost that time (poll_gaps, poll_gap_ns). */
#define SL_DP_POLL_GAP_NS (100 * SL_NS_PER_US)
#define SL_ETHERTYPE SL_WIRE_ETHERTYPE
#define SL_DP_MIN_FRAME (RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN) /**< 60 bytes, FCS excluded */
/*
 * Body bytes VCODE covers in the "header" scope: the longest transport header (base, RETH, IMM
 * and timestamp: SL_XHDR_MAX_LEN), which also covers every feedback frame and the link test
 * traffic's 18-byte header. The payload after it is the FCS's to protect.
 */
#define SL_DP_VCODE_HDR_BYTES SL_XHDR_MAX_LEN
/*
 * Wire bytes of an Ethernet frame beyond its link header and body: the Ethernet header, FCS,
 * preamble with start delimiter (8) and the inter-frame gap (12). What a rate on the wire
 * charges per frame.
 */
#define SL_DP_ETH_WIRE_BYTES (RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN + 20)
/* Smallest link body that fills a minimum frame with a faithful header. */
#define SL_DP_MIN_BODY (SL_DP_MIN_FRAME - RTE_ETHER_HDR_LEN - SL_WIRE_HDR_LEN)

/* Per-lane counters of the glue, each described once in sl_dp_lane_stat_table
 * (docs/counters.md); written by the lane's lcore only. */
struct sl_dp_lane_stats {
	uint64_t rx_pkts;
	uint64_t rx_bytes;
	uint64_t tx_pkts;
	uint64_t tx_bytes;
	uint64_t rx_drop_not_sluice;
	uint64_t rx_drop_chained;
	uint64_t rx_drop_no_consumer;
	uint64_t tx_drop_refused;
	uint64_t tx_drop_nombuf;
	uint64_t tx_backlog_waits;
	uint64_t tx_drop_quiet;
	uint64_t tx_drop_session;
	uint64_t quiet_entries;
	uint64_t poll_gaps;
	uint64_t poll_gap_ns;
};

extern const struct sl_stat_table sl_dp_lane_stat_table;

struct sl_dp_port_conf {
	const char *device;         /**< DPDK device name */
	uint16_t nb_queues;         /**< RX/TX queue pairs (lanes) */
	uint16_t rx_desc;           /**< descriptors per RX queue */
	uint16_t tx_desc;           /**< descriptors per TX queue */
	bool learn_peer;            /**< take the peer MAC from its first sluice frame */
	struct rte_ether_addr peer; /**< when !learn_peer */
	uint64_t peer_timeout_ns;   /**< peer down after this long without a frame */
	struct sl_link_conf link;   /**< every lane's link; release/ctx are set by sl_dp */
};

/*
 * Payload producer and consumer of a lane (the link test traffic today, the transport later).
 * produce: fill up to max payload mbufs whose data is the link body (transport header +
 * payload, at least SL_DP_MIN_BODY bytes) with headroom for the Ethernet and link headers;
 * return the count. consume: take n delivered mbufs whose data starts at the body (ownership
 * passes), return how many it took (the rest are offered again later, in order).
 */
struct sl_dp_app {
	unsigned (*produce)(void *ctx, uint64_t now_ns, struct rte_mbuf **m, unsigned max);
	unsigned (*consume)(void *ctx, uint64_t now_ns, struct rte_mbuf **m, unsigned n);
	/* Optional: the lane's link began a new session (sl_link_sessions()); the lane has
	 * dropped the payloads produced for the old one that had not gone out. */
	void (*session)(void *ctx, uint64_t now_ns);
	/* Optional: called first on every poll, in every state of the lane's life, for work that
	 * touches no port ring (the applications' mailbox and rings, lib/chan): it goes on while
	 * the peer is away, the port is down or the TX queue is full. */
	void (*tick)(void *ctx, uint64_t now_ns);
	void *ctx;
};

/* One RX/TX queue pair with its reliable link. */
struct sl_dp_lane {
	struct sl_dp_port *port;
	uint16_t queue;
	struct sl_link *link;
	struct rte_mempool *pool; /**< for control and filler frames */
	struct sl_dp_app app;
	uint64_t last_rx_ns; /**< ns: last frame from the peer (atomic) */
	/* payloads produced, not yet taken by the link (offered again first) */
	struct rte_mbuf *pending[SL_DP_BURST];
	unsigned int n_pending;
	uint64_t session; /**< the link session the pending payloads and the app are in */
	/* frames built, refused by a full TX queue, sent first on the next poll */
	struct rte_mbuf *backlog[SL_DP_BURST];
	unsigned int n_backlog;
	/* delivered, not yet taken by the consumer (at most the link's fc_frames) */
	struct rte_mbuf **delivered;
	uint32_t deliv_head, deliv_count, deliv_cap;
	struct sl_dp_lane_life life; /**< state and timer (lane_life.c) */
	/* peer address: configured, or learned from the first 0x88B5 frame this lane receives
	 * (broadcast until then); written by the lane's lcore only, once */
	struct rte_ether_addr peer;
	bool peer_known; /**< peer holds the address (release store; sl_dp_port_peer acquires) */
	uint64_t last_poll_ns; /**< time of the previous poll (poll_gaps), 0 before the first */
	struct sl_dp_lane_stats stats sl_cache_aligned; /**< written by the lane's lcore only */
};

struct sl_dp_port {
	uint16_t port_id;
	int socket_id; /**< NUMA node of the device (SOCKET_ID_ANY if unknown) */
	uint16_t nb_queues;
	bool started;
	char name[RTE_ETH_NAME_MAX_LEN];
	struct rte_ether_addr mac;  /**< our address */
	bool shares_memory;         /**< memif (or impaired memif): see the lane's life above */
	rte_spinlock_t *burst_lock; /**< held across each burst (memif_guard.c), or NULL */
	char kernel_if[32];         /**< kernel interface under AF_XDP / AF_PACKET, or "" */
	uint32_t rx_ring_frames;    /**< frames each receive queue's ring holds (port.c) */
	bool af_xdp;                /**< the bottom port is AF_XDP (on kernel_if) */
	bool tx_chains;             /**< the device sends chained mbufs (TX MULTI_SEGS) */
	struct sl_dp_xdp_claim xdp_claim; /**< the interface's, while the port is open */
	uint64_t peer_timeout_ns;
	struct sl_dp_lane lane[SL_DP_MAX_QUEUES];
};

/*
 * A pool of n mbufs of data_room bytes (pool.c): rte_pktmbuf_pool_create()'s, or with umem its
 * objects packed in one memory chunk, all of which DPDK 22.11's AF_XDP PMD registers as its
 * UMEM. NULL with rte_errno set.
 */
struct rte_mempool *sl_dp_pool_create(const char *name, unsigned int n, unsigned int cache,
				      uint16_t data_room, int socket_id, bool umem);

/* 0 if the AF_XDP PMD's UMEM covers all of mp's memory; else -EINVAL and why (size len). */
int sl_dp_pool_umem_check(const struct rte_mempool *mp, char *why, size_t len);

/* Is ethdev port_id AF_XDP, itself or under its net_impair stack (its pool then wants umem)? */
bool sl_dp_port_id_af_xdp(uint16_t port_id);

/*
 * Find the device, configure nb_queues queue pairs on its NUMA node with packets from pool,
 * create a link per lane, start the port, enable promiscuous mode where the driver supports
 * it. 0 or -errno; on error a message naming the device is in err (size errlen).
 */
int sl_dp_port_open(struct sl_dp_port *p, const struct sl_dp_port_conf *conf,
		    struct rte_mempool *pool, char *err, size_t errlen);
/* (An AF_XDP port's pool must pass sl_dp_pool_umem_check(): else -EINVAL.) */

/* Stop and close the device and free its links and queued frames (idempotent). */
void sl_dp_port_close(struct sl_dp_port *p);

/*
 * The peer is up: lane 0's link is established (NORMAL, or replaying to repair a loss) and a
 * frame arrived within the timeout.
 */
bool sl_dp_port_peer_up(const struct sl_dp_port *p, uint64_t now_ns);

/* The peer's address as lane 0 knows it: configured, learned, or broadcast until learned. */
void sl_dp_port_peer(const struct sl_dp_port *p, struct rte_ether_addr *mac);

/*
 * A counter of the kernel interface under the port (AF_XDP, AF_PACKET, or net_impair over one):
 * /sys/class/net/<if>/statistics/<name>, e.g. rx_dropped, which counts frames the kernel
 * dropped before any DPDK counter saw them (a veth whose XDP ring was full). Slow path.
 * 0, -ENOENT (no kernel interface) or -errno.
 */
int sl_dp_port_kernel_counter(const struct sl_dp_port *p, const char *name, uint64_t *value);

/* Names of all ethdev ports, comma separated, for error messages. */
void sl_dp_port_list(char *buf, size_t len);

/*
 * Poll one lane once at now_ns: the work of its state (running: receive, run the link, deliver,
 * produce, transmit; quiet: read the port's link status only; draining, leaving: see the
 * states), then the events the poll saw (lane_life.c).
 */
void sl_dp_lane_poll(struct sl_dp_lane *l, uint64_t now_ns);

/* The daemon stops: a running lane starts draining, then says goodbye; a quiet one is left. */
void sl_dp_lane_stop(struct sl_dp_lane *l, uint64_t now_ns);

/* ns from which the lane's port may close; UINT64_MAX until the lane has left. */
uint64_t sl_dp_lane_close_ns(const struct sl_dp_lane *l);

/* The lane's link is established (NORMAL, RETRANS or SEND_RETRANS) and heard the peer within the
 * port's peer timeout. */
bool sl_dp_lane_peer_up(const struct sl_dp_lane *l, uint64_t now_ns);

/* One lcore's share of the dataplane: lane `queue` of every port. */
struct sl_dp_worker {
	struct sl_dp_port **ports;
	unsigned int nb_ports;
	uint16_t queue;
};

static inline void
sl_dp_worker_poll(struct sl_dp_worker *w, uint64_t now_ns)
{
	for (unsigned int i = 0; i < w->nb_ports; i++)
		sl_dp_lane_poll(&w->ports[i]->lane[w->queue], now_ns);
}

/* sl_dp_lane_stop() on each of the worker's lanes. */
void sl_dp_worker_stop(struct sl_dp_worker *w, uint64_t now_ns);

/* The latest sl_dp_lane_close_ns() of the worker's lanes: UINT64_MAX until all have left. */
uint64_t sl_dp_worker_close_ns(const struct sl_dp_worker *w);

#endif /* SL_DP_H */
