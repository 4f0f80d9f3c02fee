/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lane.h - inside lib/dp only: what port.c, lane.c and lane_life.c ask of each other.
 * lane_life.c owns a lane's life (creation, states, teardown); lane.c does the work each state
 * polls with (the RX and TX bursts) and the actions that touch the TX backlog.
 */
#ifndef DP_LANE_H
#define DP_LANE_H

#include "sl_dp.h"

/* Give lane q of p its link and queues; 0 or -errno with a message naming the lane in err. */
int sl_dp_lane_init(struct sl_dp_port *p, uint16_t q, const struct sl_dp_port_conf *conf,
		    struct rte_mempool *pool, char *err, size_t errlen);

/* Free the lane's link and every frame it still holds (idempotent). */
void sl_dp_lane_fini(struct sl_dp_lane *l);

/* RUNNING: receive, deliver, send what the queue refused, produce, run the link's TX. */
void sl_dp_lane_run(struct sl_dp_lane *l, uint64_t now_ns);

/*
 * DRAINING: receive and deliver, send what the TX queue refused before, flush the driver; take
 * nothing new from the link or the producer, so frames a driver accepted leave before the port
 * stops.
 */
void sl_dp_lane_drain(struct sl_dp_lane *l, uint64_t now_ns);

/* LEAVING: receive and deliver, send what the queue refused, then the link's LEAVE runs (or its
 * answer to the peer's LEAVE); nothing from the producer. */
void sl_dp_lane_goodbye(struct sl_dp_lane *l, uint64_t now_ns);

/* Transmit frames[0, n) on the lane's queue; what it refuses waits in the backlog (lane.c). */
void sl_dp_lane_transmit(struct sl_dp_lane *l, struct rte_mbuf **frames, unsigned int n);

/* The lane's peer (its next hop) is mac from now on, published for telemetry (lane.c). */
void sl_dp_lane_set_peer(struct sl_dp_lane *l, const struct rte_ether_addr *mac);

/* An ARP frame m arrived on a UDP port: answer a request for local_ip, take the next hop's
 * reply (neigh.c). m stays the caller's. */
void sl_dp_neigh_rx(struct sl_dp_lane *l, const struct rte_mbuf *m);

/* May the lane send to its peer? Always, but under SL_DP_PEER_RESOLVE before the next hop has
 * answered: then an ARP request goes out when due, and false (neigh.c). */
bool sl_dp_neigh_resolved(struct sl_dp_lane *l, uint64_t now_ns);

/* SL_DP_LANE_ACT_SILENCE: drop the TX backlog (tx_drop_quiet) and count the quiet entry. */
void sl_dp_lane_silence(struct sl_dp_lane *l);

/* Copy the value of "key=" in a devargs string into out; false when absent or too long. */
bool sl_dp_devarg(const char *args, const char *key, char *out, size_t len);

/*
 * The lock a burst on the memif port name (devargs args) holds so that the PMD cannot unmap
 * the peer's memory under it (memif_guard.c), or NULL with the reason in why (size len).
 */
rte_spinlock_t *sl_dp_memif_guard(const char *name, const char *args, char *why, size_t len);

/*
 * With a memif port's guard lock (from sl_dp_memif_guard) held: has the PMD finished connecting,
 * so that a burst reads only rings it has mapped (memif_guard.c, "The connect")?
 */
bool sl_dp_memif_connected(const rte_spinlock_t *guard);

/*
 * Stop and close memif port port_id on the EAL interrupt thread, where the PMD handles its
 * peer's hang-up, and wait for it (memif_guard.c, "The close").
 */
void sl_dp_memif_close(uint16_t port_id);

#endif /* DP_LANE_H */
