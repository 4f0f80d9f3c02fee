/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * neigh.c - a UDP port's neighbours over IPv4, where no kernel finds them for it (a NIC under
 * DPDK; an AF_XDP or AF_PACKET interface whose kernel does not hold the daemon's address).
 *
 * Answering. A router forwarding to this host asks by ARP who holds local_ip: every lane that
 * sees the request answers with the port's MAC (RFC 826), so no static neighbour entry is
 * needed on the way. Requests for any other address are not this daemon's to answer.
 *
 * Asking (peer_mac = resolve). The lane's frames go to its next hop: the gateway, or the peer
 * itself on one subnet. Until the next hop has answered, the lane sends nothing but the question
 * - one ARP request every ARP_INTERVAL_NS - and drops the link's frames (tx_drop_unresolved;
 * before the link is up they are its handshake, which repeats): unlike a learning port, nothing
 * goes to the broadcast address. A reply from the next hop's address fixes the MAC for the
 * lane's life, published as a learned one is (lane.c). A next hop that never answers leaves the
 * link down, so the QPs on it fail by their own timeouts; the log says why once
 * ARP_WARN_ASKED requests have gone unanswered.
 */
#include <string.h>

#include <rte_ethdev.h>

#include "lane.h"
#include "dp_log.h"

#define ARP_INTERVAL_NS (100 * SL_NS_PER_MS)
#define ARP_WARN_ASKED 20u /**< 2 s of requests */

static const struct rte_ether_addr broadcast = {.addr_bytes = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff}};

/* Send an ARP frame of a to dst from the port's MAC, counted in *counter; dropped if no mbuf. */
static void
send_arp(struct sl_dp_lane *l, const struct rte_ether_addr *dst, const struct sl_arp *a,
	 uint64_t *counter)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(l->pool);
	struct rte_ether_hdr *eth;

	if (m == NULL) {
		sl_stat_add(&l->stats.tx_drop_nombuf, 1);
		return;
	}
	eth = (struct rte_ether_hdr *)rte_pktmbuf_append(m, SL_DP_MIN_FRAME);
	memset(eth, 0, SL_DP_MIN_FRAME);
	rte_ether_addr_copy(dst, &eth->dst_addr);
	rte_ether_addr_copy(&l->port->mac, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(SL_ARP_ETHERTYPE);
	sl_arp_write((uint8_t *)(eth + 1), a);
	sl_stat_add(counter, 1);
	sl_dp_lane_transmit(l, &m, 1);
}

void
sl_dp_neigh_rx(struct sl_dp_lane *l, const struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	const struct sl_dp_port *p = l->port;
	struct sl_arp a;

	sl_stat_add(&l->stats.rx_arp, 1);
	if (m->data_len < RTE_ETHER_HDR_LEN ||
	    !sl_arp_read((const uint8_t *)(eth + 1), m->data_len - RTE_ETHER_HDR_LEN, &a))
		return;
	if (a.op == SL_ARP_REQUEST && memcmp(a.tpa, p->encap.local_ip, 4) == 0) {
		struct sl_arp reply = {.op = SL_ARP_REPLY};

		memcpy(reply.sha, p->mac.addr_bytes, 6);
		memcpy(reply.spa, p->encap.local_ip, 4);
		memcpy(reply.tha, a.sha, 6);
		memcpy(reply.tpa, a.spa, 4);
		send_arp(l, &eth->src_addr, &reply, &l->stats.tx_arp_replies);
	}
	if (p->peer_mode == SL_DP_PEER_RESOLVE && !l->peer_known && a.op == SL_ARP_REPLY &&
	    memcmp(a.spa, p->next_hop_ip, 4) == 0)
		sl_dp_lane_set_peer(l, (const struct rte_ether_addr *)a.sha);
}

bool
sl_dp_neigh_resolved(struct sl_dp_lane *l, uint64_t now_ns)
{
	const struct sl_dp_port *p = l->port;
	struct sl_arp ask = {.op = SL_ARP_REQUEST};

	if (p->peer_mode != SL_DP_PEER_RESOLVE || l->peer_known)
		return true;
	if (now_ns < l->arp_next_ns)
		return false;
	memcpy(ask.sha, p->mac.addr_bytes, 6);
	memcpy(ask.spa, p->encap.local_ip, 4);
	memcpy(ask.tpa, p->next_hop_ip, 4);
	send_arp(l, &broadcast, &ask, &l->stats.tx_arp_requests);
	l->arp_next_ns = now_ns + ARP_INTERVAL_NS;
	if (++l->arp_asked == ARP_WARN_ASKED)
		SL_DP_LOG(WARNING,
			  "%s: lane %u: no ARP answer from the next hop %u.%u.%u.%u after %u "
			  "requests: "
			  "nothing is sent until it answers",
			  p->name, l->queue, p->next_hop_ip[0], p->next_hop_ip[1],
			  p->next_hop_ip[2], p->next_hop_ip[3], ARP_WARN_ASKED);
	return false;
}
