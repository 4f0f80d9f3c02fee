/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ports.c - sluiced's ports from its configuration: each [port] device found among EAL's, the
 * packet pools sized for what the lanes hold and placed on the ports' NUMA nodes, the [link]
 * settings every lane's link takes, and the ports opened with them (lib/dp does the opening).
 * Each step returns 0, or -1 after a `file:line:` message on stderr (main.c exits 2 on those
 * that are configuration errors).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <numa.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "sluiced.h"

/* Map every configured device name to its ethdev port. 0, or -1 after a `file:line:` error. */
int
sluiced_resolve_ports(const struct sluiced *d, uint16_t *pid)
{
	char ports[512];

	for (unsigned int i = 0; i < d->conf.nb_ports; i++) {
		const struct sluiced_port_conf *pc = &d->conf.port[i];

		if (rte_eth_dev_get_port_by_name(pc->device, &pid[i]) == 0)
			continue;
		sl_dp_port_list(ports, sizeof(ports));
		fprintf(stderr, "%s:%u: device: no DPDK port named '%s' (ports: %s)\n",
			d->conf.path, pc->device_line, pc->device, ports);
		return -1;
	}
	return 0;
}

static unsigned int
node_of(int socket_id)
{
	return socket_id < 0 ? 0 : (unsigned int)socket_id;
}

/*
 * mbufs the lanes of the ports on one pool can hold at once: each lane keeps its replay ring
 * (2^k frames), its flow-control buffer (S_FC delivered frames), a full RX and TX ring, and a
 * burst each of pending and refused frames; every lcore caches mbuf_cache more.
 */
static uint64_t
mbufs_needed(const struct sluiced *d)
{
	uint64_t per_lane =
		(UINT64_C(1) << d->link.ring_order) + d->link.fc_frames + 2 * SL_DP_BURST;
	uint64_t total = (uint64_t)d->conf.mbuf_cache * rte_lcore_count();

	if (d->conf.qp.count || d->conf.api.enable)
		per_lane += SL_DP_BURST; /* the QP adapter's spare mbufs */

	for (unsigned int i = 0; i < d->conf.nb_ports; i++)
		total += (uint64_t)d->nb_workers *
			 (per_lane + d->conf.port[i].rx_desc + d->conf.port[i].tx_desc);
	return total;
}

/*
 * The pool size: the configured one, which must cover what the lanes hold (else a
 * `file:line: mbufs:` error), or with mbufs = 0 twice that, rounded to 2^n - 1 (the mempool's
 * best size). 0 or -1.
 */
int
sluiced_pool_size(struct sluiced *d)
{
	uint64_t need = mbufs_needed(d);

	if (d->conf.mbufs == 0) {
		d->conf.mbufs = (uint32_t)(sl_align_pow2(2 * need + 1) - 1);
		return 0;
	}
	if (d->conf.mbufs >= need)
		return 0;
	fprintf(stderr,
		"%s:%u: mbufs: %u cannot hold what the lanes keep (%" PRIu64 ": replay rings of "
		"2^%u, flow-control buffers of %u, NIC rings, caches); set at least that, or 0\n",
		d->conf.path, d->conf.mbufs_line, d->conf.mbufs, need, d->link.ring_order,
		d->link.fc_frames);
	return -1;
}

/* The pool port pid takes its packets from: its node's, packed for AF_XDP (lib/dp/pool.c). */
static struct rte_mempool **
port_pool(struct sluiced *d, uint16_t pid)
{
	unsigned int node = node_of(rte_eth_dev_socket_id(pid));

	return sl_dp_port_id_af_xdp(pid) ? &d->umem_pool[node] : &d->pool[node];
}

/* A pool on every NUMA node that a port sits on, per kind of pool. 0 or -1 after a message. */
int
sluiced_create_pools(struct sluiced *d, const uint16_t *pid)
{
	for (unsigned int i = 0; i < d->conf.nb_ports; i++) {
		int sock = rte_eth_dev_socket_id(pid[i]);
		struct rte_mempool **pool = port_pool(d, pid[i]);
		bool umem = pool == &d->umem_pool[node_of(sock)];
		char name[RTE_MEMPOOL_NAMESIZE];

		if (*pool)
			continue;
		snprintf(name, sizeof(name), "sl_%spool_%u", umem ? "umem_" : "", node_of(sock));
		*pool = sl_dp_pool_create(name, d->conf.mbufs, d->conf.mbuf_cache,
					  d->conf.mbuf_data_room, sock < 0 ? SOCKET_ID_ANY : sock,
					  umem);
		if (*pool == NULL) {
			LOG(ERR, "cannot create a pool of %u mbufs on NUMA node %u: %s",
			    d->conf.mbufs, node_of(sock), rte_strerror(rte_errno));
			return -1;
		}
	}
	return 0;
}

/*
 * The link settings from [link]: sizes derived from rate x RTT where left at 0 (RIFL's rules).
 * 0, or -1 after a `file:line:` message.
 */
int
sluiced_link_settings(struct sluiced *d)
{
	const struct sluiced_link_conf *lc = &d->conf.link;
	struct sl_link_conf *l = &d->link;
	unsigned order_max;
	int order;

	/* [link] mode and replay hold the index of their choice ("faithful|extended",
	 * "ring|missing"): the enums' values. */
	static_assert(SL_WIRE_MODE_FAITHFUL == 0 && SL_WIRE_MODE_EXTENDED == 1,
		      "[link] mode's choices in enum sl_wire_mode's order");
	static_assert(SL_LINK_REPLAY_RING == 0 && SL_LINK_REPLAY_MISSING == 1,
		      "[link] replay's choices in enum sl_link_replay's order");
	memset(l, 0, sizeof(*l));
	l->fmt.mode = (enum sl_wire_mode)lc->mode;
	l->line_bps = lc->rate_bps; /* every frame the link sends keeps to the line */
	l->wire_overhead_bytes = SL_DP_ETH_WIRE_BYTES;
	l->fmt.scope_bytes =
		lc->vcode_scope == SLUICED_VCODE_FRAME ? SL_WIRE_SCOPE_ALL : SL_DP_VCODE_HDR_BYTES;
	l->replay = (enum sl_link_replay)lc->replay;
	if (lc->reliability == SLUICED_RELIABILITY_END_TO_END) {
		/* End to end: the transport recovers; the link verifies each frame by its ID. */
		if (l->fmt.mode != SL_WIRE_MODE_EXTENDED || l->replay != SL_LINK_REPLAY_RING) {
			fprintf(stderr,
				"%s:%u: reliability: 'end-to-end' needs mode = extended (frames "
				"are verified against their own ID) and no replay setting (nothing "
				"is replayed)\n",
				d->conf.path, lc->line);
			return -1;
		}
		l->replay = SL_LINK_REPLAY_NONE;
	}
	if (l->replay == SL_LINK_REPLAY_MISSING && l->fmt.mode != SL_WIRE_MODE_EXTENDED) {
		fprintf(stderr,
			"%s:%u: replay: 'missing' needs mode = extended (the NACK must "
			"carry the frame ID)\n",
			d->conf.path, lc->line);
		return -1;
	}
	order = (int)lc->ring_order;
	if (order == 0 && lc->reliability == SLUICED_RELIABILITY_END_TO_END)
		order = SL_LINK_ORDER_MIN; /* the ring only holds frames until evicted */
	else if (order == 0)
		order = sl_link_ring_order(&l->fmt, lc->rate_bps, lc->rtt_ns,
					   lc->sizing_frame_bytes);
	order_max = l->fmt.mode == SL_WIRE_MODE_EXTENDED ? SL_LINK_ORDER_MAX_EXTENDED
							 : SL_LINK_ORDER_MAX_FAITHFUL;
	if (order < (int)SL_LINK_ORDER_MIN || order > (int)order_max) {
		fprintf(stderr, "%s:%u: ring_order: %s; the %s mode allows 2^%u to 2^%u frames\n",
			d->conf.path, lc->line,
			lc->ring_order ? "out of range" : "rate x RTT needs a larger ring",
			l->fmt.mode == SL_WIRE_MODE_EXTENDED ? "extended" : "faithful",
			SL_LINK_ORDER_MIN, order_max);
		return -1;
	}
	l->ring_order = (uint8_t)order;
	l->silent_frames = (UINT32_C(1) << order) / 2; /* lib/dp caps it per port */
	l->adapt_rate = true;                          /* lib/dp: not over memif */
	l->fc_frames =
		lc->fc_frames ? lc->fc_frames
			      : sl_link_fc_frames(lc->rate_bps, lc->rtt_ns, lc->sizing_frame_bytes);
	l->fc_on_frames = lc->fc_on_frames;
	l->fc_off_frames = lc->fc_off_frames;
	l->keepalive_ns = lc->keepalive_ns;
	l->ctrl_interval_ns = lc->ctrl_interval_ns;
	/* Only a transport above can recover what a re-initialization loses. */
	l->stuck_ns =
		lc->stuck_ns
			? lc->stuck_ns
			: (d->conf.qp.count || d->conf.api.enable ? SL_LINK_STUCK_NS_TRANSPORT : 0);
	return 0;
}

/* [port.N]'s encapsulation in lib/wire's terms. */
static struct sl_encap
port_encap(const struct sluiced_port_conf *pc)
{
	struct sl_encap e = {.kind = SL_ENCAP_ETHERNET};

	if (pc->encap != SLUICED_ENCAP_UDP)
		return e;
	e.kind = pc->local_ip.family == 6 ? SL_ENCAP_UDP6 : SL_ENCAP_UDP4;
	memcpy(e.local_ip, pc->local_ip.addr, sizeof(e.local_ip));
	memcpy(e.peer_ip, pc->peer_ip.addr, sizeof(e.peer_ip));
	e.udp_port = pc->udp_port;
	return e;
}

/* Whose MAC ARP asks for: the gateway, or the peer on one subnet (peer_mac = resolve). */
static void
next_hop(const struct sluiced_port_conf *pc, uint8_t ip[4])
{
	memcpy(ip, pc->gateway.family ? pc->gateway.addr : pc->peer_ip.addr, 4);
}

/* Configure and start every port. 0, or -1 after a `file:line: device:` message. */
int
sluiced_open_ports(struct sluiced *d, const uint16_t *pid)
{
	for (unsigned int i = 0; i < d->conf.nb_ports; i++) {
		const struct sluiced_port_conf *pc = &d->conf.port[i];
		struct sl_dp_port_conf c = {
			.device = pc->device,
			.nb_queues = (uint16_t)d->nb_workers,
			.rx_desc = pc->rx_desc,
			.tx_desc = pc->tx_desc,
			.peer_mode = pc->peer_mode,
			.peer = pc->peer_mac,
			.peer_timeout_ns = d->conf.peer_timeout_ns,
			.link = d->link,
			.encap = port_encap(pc),
			.src_port_per_qp =
				d->conf.link.reliability == SLUICED_RELIABILITY_END_TO_END,
		};
		char err[640];

		next_hop(pc, c.next_hop_ip);
		if (sl_dp_port_open(&d->port[i], &c, *port_pool(d, pid[i]), err, sizeof(err)) !=
		    0) {
			fprintf(stderr, "%s:%u: device: %s\n", d->conf.path, pc->device_line, err);
			return -1;
		}
		d->port_ptr[i] = &d->port[i];
		d->nb_ports = i + 1;
	}
	return 0;
}

/* Warn when a worker lcore sits on another NUMA node than a port it polls. */
void
sluiced_check_numa(struct sluiced *d)
{
	unsigned int lcore;

	d->numa_nodes = numa_available() < 0 ? 1 : (unsigned int)numa_num_configured_nodes();
	RTE_LCORE_FOREACH(lcore)
	{
		int node = numa_available() < 0
				   ? 0
				   : numa_node_of_cpu((int)rte_lcore_to_cpu_id((int)lcore));

		for (unsigned int i = 0; i < d->nb_ports; i++)
			if (d->port[i].socket_id >= 0 && node >= 0 && node != d->port[i].socket_id)
				LOG(WARNING, "lcore %u is on NUMA node %d, port %s on node %d",
				    lcore, node, d->port[i].name, d->port[i].socket_id);
	}
}
