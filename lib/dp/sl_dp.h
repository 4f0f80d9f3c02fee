/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_dp.h - the DPDK side of sluice: ports, queues, packet pools and the per-lcore poll loop.
 *
 * The cores (lib/wire, lib/link, lib/sched, lib/pacer, lib/recv) never see an mbuf or a clock;
 * this module owns both. A port is any DPDK ethdev (a PCI NIC, net_af_xdp, net_af_packet,
 * net_memif, net_ring, or net_impair stacked on one of them). Each worker lcore owns queue pair
 * q of every port, so no queue is shared and no lock is taken on the fast path; the queue's
 * counters are written only by its owner and read (relaxed) by telemetry.
 *
 * Every frame received is counted once: delivered to a consumer or dropped with a reason.
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
#include "sl_stats.h"

#define SL_DP_MAX_PORTS 8
#define SL_DP_MAX_QUEUES 64
#define SL_DP_BURST 32
#define SL_ETHERTYPE 0x88B5 /**< IEEE 802 local experimental EtherType 1 */

/* Per-queue counters: written by the queue's lcore only. */
struct sl_dp_queue_stats {
	uint64_t rx_pkts;            /**< frames received from the queue */
	uint64_t rx_bytes;           /**< bytes received, Ethernet header included */
	uint64_t tx_pkts;            /**< frames accepted by the TX queue */
	uint64_t tx_bytes;           /**< bytes accepted by the TX queue */
	uint64_t rx_drop_not_sluice; /**< EtherType other than 0x88B5 */
	uint64_t rx_drop_malformed;  /**< too short, or a link header that does not decode */
	uint64_t rx_drop_bad_vcode;  /**< control frame whose VCODE does not verify */
	uint64_t rx_drop_unhandled;  /**< valid frame of a kind no consumer takes yet */
	uint64_t tx_drop_refused;    /**< frames the TX queue refused (ring full, link down) */
	uint64_t tx_drop_nombuf;     /**< frames not built: packet pool empty */
	uint64_t keepalive_tx;       /**< IDLE keepalives sent */
	uint64_t keepalive_rx;       /**< valid IDLE keepalives received */
} sl_cache_aligned;

extern const struct sl_stat_desc sl_dp_queue_stat_desc[];
extern const unsigned int sl_dp_queue_stat_count;

struct sl_dp_port_conf {
	const char *device;          /**< DPDK device name */
	uint16_t nb_queues;          /**< RX/TX queue pairs */
	uint16_t rx_desc;            /**< descriptors per RX queue */
	uint16_t tx_desc;            /**< descriptors per TX queue */
	bool learn_peer;             /**< take the peer MAC from its first valid frame */
	struct rte_ether_addr peer;  /**< when !learn_peer */
	uint64_t peer_timeout_ns;    /**< peer down after this long without a valid frame */
};

struct sl_dp_port {
	uint16_t port_id;
	int socket_id;                /**< NUMA node of the device (SOCKET_ID_ANY if unknown) */
	uint16_t nb_queues;
	bool started;
	char name[RTE_ETH_NAME_MAX_LEN];
	struct rte_ether_addr mac;    /**< our address */
	struct rte_ether_addr peer;   /**< peer address (broadcast until learned) */
	bool learn_peer;
	uint64_t peer_timeout_ns;
	uint64_t peer_last_ns;        /**< time of the last valid frame from the peer (atomic) */
	uint64_t peer_up_count;       /**< down -> up transitions (atomic) */
	bool peer_seen;               /**< any valid frame ever (atomic) */
	struct sl_dp_queue_stats q[SL_DP_MAX_QUEUES];
};

/*
 * Find the device, configure nb_queues queue pairs on its NUMA node with packets from pool,
 * start it, enable promiscuous mode where the driver supports it. 0 or -errno; on error a
 * message naming the device is in err (size errlen).
 */
int sl_dp_port_open(struct sl_dp_port *p, const struct sl_dp_port_conf *conf,
		    struct rte_mempool *pool, char *err, size_t errlen);

/* Stop and close the device (idempotent). */
void sl_dp_port_close(struct sl_dp_port *p);

/* Peer state as seen from now_ns. */
bool sl_dp_port_peer_up(const struct sl_dp_port *p, uint64_t now_ns);

/* Names of all ethdev ports, comma separated, for error messages. */
void sl_dp_port_list(char *buf, size_t len);

/* One lcore's share of the dataplane: queue `queue` of every port. */
struct sl_dp_worker {
	struct sl_dp_port **ports;
	unsigned int nb_ports;
	uint16_t queue;
	bool sends_keepalive;         /**< the worker that owns queue 0 */
	struct rte_mempool *pool;
	uint64_t keepalive_ns;        /**< keepalive interval */
	uint64_t next_keepalive_ns[SL_DP_MAX_PORTS]; /**< per port, next keepalive due */
};

/* Poll every port's queue once at now_ns: receive, account, answer, send keepalives. */
void sl_dp_worker_poll(struct sl_dp_worker *w, uint64_t now_ns);

#endif /* SL_DP_H */
