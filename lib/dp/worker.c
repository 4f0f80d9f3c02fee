/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * worker.c - one poll of a worker's queues: receive a burst from every port, classify and
 * account for each frame, and send the IDLE keepalive that tells the peer this host is up.
 *
 * Classification of a received frame (each lands in exactly one counter):
 *   EtherType != 0x88B5                      -> rx_drop_not_sluice
 *   link header does not decode (lib/wire)   -> rx_drop_malformed
 *   IDLE control frame, VCODE verifies       -> keepalive_rx; the peer is up (and learned)
 *   IDLE control frame, VCODE fails          -> rx_drop_bad_vcode
 *   any other valid sluice frame             -> rx_drop_unhandled (no consumer on this build)
 * Keepalives carry frame ID 0: no data frame has been sent on the link, and control frames
 * carry the current ID without advancing it (docs/wire-format.md).
 */
#include <string.h>

#include <rte_ethdev.h>

#include "sl_dp.h"
#include "sl_wire.h"

static const struct sl_wire_fmt keepalive_fmt = {
	.mode = SL_WIRE_MODE_FAITHFUL,
	.scope_bytes = 0,
};

const struct sl_stat_desc sl_dp_queue_stat_desc[] = {
	SL_STAT(struct sl_dp_queue_stats, rx_pkts, "frames received"),
	SL_STAT(struct sl_dp_queue_stats, rx_bytes, "bytes received, Ethernet header included"),
	SL_STAT(struct sl_dp_queue_stats, tx_pkts, "frames sent"),
	SL_STAT(struct sl_dp_queue_stats, tx_bytes, "bytes sent, Ethernet header included"),
	SL_STAT(struct sl_dp_queue_stats, rx_drop_not_sluice, "dropped: EtherType is not 0x88B5"),
	SL_STAT(struct sl_dp_queue_stats, rx_drop_malformed, "dropped: link header malformed"),
	SL_STAT(struct sl_dp_queue_stats, rx_drop_bad_vcode, "dropped: VCODE does not verify"),
	SL_STAT(struct sl_dp_queue_stats, rx_drop_unhandled, "dropped: no consumer for the kind"),
	SL_STAT(struct sl_dp_queue_stats, tx_drop_refused, "not sent: TX queue refused (full, link down)"),
	SL_STAT(struct sl_dp_queue_stats, tx_drop_nombuf, "not built: packet pool empty"),
	SL_STAT(struct sl_dp_queue_stats, keepalive_tx, "IDLE keepalives sent"),
	SL_STAT(struct sl_dp_queue_stats, keepalive_rx, "valid IDLE keepalives received"),
};
const unsigned int sl_dp_queue_stat_count = SL_ARRAY_SIZE(sl_dp_queue_stat_desc);

static void
add(uint64_t *counter, uint64_t n)
{
	__atomic_store_n(counter, *counter + n, __ATOMIC_RELAXED);
}

static void
peer_seen(struct sl_dp_port *p, const struct rte_ether_hdr *eth, uint64_t now_ns)
{
	if (!sl_dp_port_peer_up(p, now_ns))
		add(&p->peer_up_count, 1);
	if (p->learn_peer && rte_is_broadcast_ether_addr(&p->peer))
		rte_ether_addr_copy(&eth->src_addr, &p->peer);
	__atomic_store_n(&p->peer_last_ns, now_ns, __ATOMIC_RELAXED);
	__atomic_store_n(&p->peer_seen, true, __ATOMIC_RELAXED);
}

static void
classify(struct sl_dp_port *p, struct sl_dp_queue_stats *qs, struct rte_mbuf *m, uint64_t now_ns)
{
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	struct sl_wire_frame f;

	if (m->data_len < sizeof(*eth) || eth->ether_type != rte_cpu_to_be_16(SL_ETHERTYPE)) {
		add(&qs->rx_drop_not_sluice, 1);
		return;
	}
	if (sl_wire_decode(&keepalive_fmt, (const uint8_t *)(eth + 1), m->data_len - sizeof(*eth),
			   &f) != SL_WIRE_OK) {
		add(&qs->rx_drop_malformed, 1);
		return;
	}
	if (f.syn != SL_WIRE_SYN_CTRL || f.key != SL_WIRE_KEY_IDLE) {
		add(&qs->rx_drop_unhandled, 1);
		return;
	}
	if (!sl_wire_vcode_ok(&f, 0)) {
		add(&qs->rx_drop_bad_vcode, 1);
		return;
	}
	add(&qs->keepalive_rx, 1);
	peer_seen(p, eth, now_ns);
}

static void
receive(struct sl_dp_port *p, uint16_t queue, uint64_t now_ns)
{
	struct sl_dp_queue_stats *qs = &p->q[queue];
	struct rte_mbuf *pkts[SL_DP_BURST];
	uint16_t n = rte_eth_rx_burst(p->port_id, queue, pkts, SL_DP_BURST);
	uint64_t bytes = 0;

	if (n == 0)
		return;
	for (uint16_t i = 0; i < n; i++) {
		bytes += pkts[i]->pkt_len;
		classify(p, qs, pkts[i], now_ns);
	}
	rte_pktmbuf_free_bulk(pkts, n);
	add(&qs->rx_pkts, n);
	add(&qs->rx_bytes, bytes);
}

static void
send_keepalive(struct sl_dp_port *p, uint16_t queue, struct rte_mempool *pool)
{
	struct sl_dp_queue_stats *qs = &p->q[queue];
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	struct rte_ether_hdr *eth;

	if (m == NULL) {
		add(&qs->tx_drop_nombuf, 1);
		return;
	}
	/* Minimum Ethernet frame without FCS; the tail is zero padding. */
	eth = (struct rte_ether_hdr *)rte_pktmbuf_append(m, RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN);
	memset(eth, 0, RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN);
	rte_ether_addr_copy(&p->peer, &eth->dst_addr);
	rte_ether_addr_copy(&p->mac, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(SL_ETHERTYPE);
	sl_wire_encode_ctrl(&keepalive_fmt, (uint8_t *)(eth + 1), 0, SL_WIRE_KEY_IDLE, 0);
	if (rte_eth_tx_burst(p->port_id, queue, &m, 1) == 0) {
		rte_pktmbuf_free(m);
		add(&qs->tx_drop_refused, 1);
		return;
	}
	add(&qs->tx_pkts, 1);
	add(&qs->tx_bytes, m->pkt_len);
	add(&qs->keepalive_tx, 1);
}

void
sl_dp_worker_poll(struct sl_dp_worker *w, uint64_t now_ns)
{
	for (unsigned int i = 0; i < w->nb_ports; i++) {
		struct sl_dp_port *p = w->ports[i];

		receive(p, w->queue, now_ns);
		if (w->sends_keepalive && now_ns >= w->next_keepalive_ns[i]) {
			send_keepalive(p, w->queue, w->pool);
			w->next_keepalive_ns[i] = now_ns + w->keepalive_ns;
		}
	}
}
