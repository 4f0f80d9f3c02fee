/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lane.c - one poll of a lane: the glue between a NIC queue pair and its reliable link.
 *
 * RX. A burst from the RX queue; each frame is counted once: not of the port's encapsulation
 * (rx_drop_not_sluice: another EtherType; rx_drop_encap_<reason>: an IP or UDP field that
 * lib/wire/encap.c refuses; freed), chained mbuf (rx_drop_chained, freed), or handed to the link,
 * which delivers payload frames exactly once and in order and gives every other frame back
 * through its release callback (counted by the link by kind and reason). Delivered mbufs are
 * trimmed to their body and queued for the consumer; the queue is the link's flow-control
 * buffer (S_FC frames), and sl_link_rx_consumed() tells the link as the consumer takes them.
 *
 * TX. Frames the TX queue refused last time go first (in order, nothing else is sent until
 * they are out). Then the producer's new payloads are offered to the link, which takes what it
 * may and returns the frames to send: control and filler frames are built in fresh mbufs;
 * data frames (new or replayed) are sent zero-copy: the payload mbuf already sits in the
 * link's replay ring, its Ethernet, encapsulation and link headers are written into its headroom
 * (identical bytes on every send, since a replay carries the original frame ID), and it goes out
 * with one extra reference, so the driver's free and the ring's eviction each drop their own.
 *
 * Under encap = udp (docs/wire-format.md section 1.2) data frames go out ECT(0), control and
 * filler frames Not-ECT; a data frame that arrives marked CE keeps the mark in an mbuf flag
 * (port.c registers it) until the QP adapter, after the link has verified the frame, sets the
 * transport header's CE flag (qp.c). The UDP source port is the lane's, or under end-to-end
 * reliability the destination QP's, so that ECMP may spread QPs but never a link's in-order
 * frames.
 *
 * Every burst on a memif port holds the port's burst_lock (memif_guard.c), so that the PMD's
 * control thread cannot unmap a gone peer's rings under it, and runs only once the PMD has
 * connected, so that it cannot read a ring the handshake has not mapped yet.
 *
 * The peer's MAC is learned, when configured so, from the source of the first 0x88B5 frame the
 * lane itself receives: each lane writes only its own copy, so no two workers share a write.
 *
 * Which of these a poll does is up to the lane's state (lane_life.c): a running lane polls with
 * sl_dp_lane_run(), a stopping one drains with sl_dp_lane_drain() and says goodbye with
 * sl_dp_lane_goodbye(); a quiet one, whose backlog sl_dp_lane_silence() dropped, does none.
 */
#include <string.h>

#include <rte_ethdev.h>
#include <rte_memcpy.h>

#include "lane.h"
#include "dp_log.h"

static const struct sl_stat_desc stat_desc[] = {
	SL_STAT(struct sl_dp_lane_stats, rx_pkts, "frames received"),
	SL_STAT(struct sl_dp_lane_stats, rx_bytes, "bytes received, Ethernet header included"),
	SL_STAT(struct sl_dp_lane_stats, tx_pkts, "frames sent"),
	SL_STAT(struct sl_dp_lane_stats, tx_bytes, "bytes sent, Ethernet header included"),
	SL_STAT(struct sl_dp_lane_stats, rx_drop_not_sluice,
		"dropped: another EtherType than the port's encapsulation (0x88B5, IPv4 or IPv6)"),
#define ENCAP_DROP(r, name_, h)                                                                    \
	{                                                                                          \
		.name = "rx_drop_encap_" name_, .help = "dropped: " h,                             \
		.offset = offsetof(struct sl_dp_lane_stats, rx_drop_encap) +                       \
			  ((r)-2) * sizeof(uint64_t)                                               \
	}
	ENCAP_DROP(SL_ENCAP_ERR_SHORT, "short", "shorter than its IP header"),
	ENCAP_DROP(SL_ENCAP_ERR_IP_VERSION, "ip_version", "IP version other than the port's"),
	ENCAP_DROP(SL_ENCAP_ERR_IP_OPTIONS, "ip_options", "IPv4 options or IPv6 extension headers"),
	ENCAP_DROP(SL_ENCAP_ERR_IP_LENGTH, "ip_length", "IP length beyond the frame or too short"),
	ENCAP_DROP(SL_ENCAP_ERR_IP_CHECKSUM, "ip_checksum", "IPv4 header checksum wrong"),
	ENCAP_DROP(SL_ENCAP_ERR_IP_FRAGMENT, "ip_fragment", "an IPv4 fragment"),
	ENCAP_DROP(SL_ENCAP_ERR_IP_PROTO, "ip_proto", "IP protocol other than UDP"),
	ENCAP_DROP(SL_ENCAP_ERR_IP_DST, "ip_dst", "IP destination other than local_ip"),
	ENCAP_DROP(SL_ENCAP_ERR_IP_SRC, "ip_src", "IP source other than peer_ip"),
	ENCAP_DROP(SL_ENCAP_ERR_UDP_PORT, "udp_port", "UDP destination port other than udp_port"),
	ENCAP_DROP(SL_ENCAP_ERR_UDP_LENGTH, "udp_length", "UDP length other than the IP payload's"),
	ENCAP_DROP(SL_ENCAP_ERR_UDP_CHECKSUM, "udp_checksum", "a non-zero UDP checksum, wrong"),
#undef ENCAP_DROP
	SL_STAT(struct sl_dp_lane_stats, rx_ce,
		"frames that arrived marked ECN CE (UDP), handed to the transport"),
	SL_STAT(struct sl_dp_lane_stats, rx_drop_chained, "dropped: multi-segment frame"),
	SL_STAT(struct sl_dp_lane_stats, rx_drop_no_consumer, "dropped: delivered, no consumer"),
	SL_STAT(struct sl_dp_lane_stats, tx_drop_refused,
		"not sent: TX queue refused, backlog full"),
	SL_STAT(struct sl_dp_lane_stats, tx_drop_nombuf, "not built: packet pool empty"),
	SL_STAT(struct sl_dp_lane_stats, tx_backlog_waits, "polls that found the TX queue full"),
	SL_STAT(struct sl_dp_lane_stats, tx_drop_quiet,
		"not sent: backlog when the lane went quiet"),
	SL_STAT(struct sl_dp_lane_stats, tx_drop_session,
		"not sent: payloads produced for a link session that ended first"),
	SL_STAT(struct sl_dp_lane_stats, tx_drop_unresolved,
		"not sent: the link's frames before the next hop answered ARP (peer_mac = "
		"resolve)"),
	SL_STAT(struct sl_dp_lane_stats, rx_arp, "ARP frames received (encap = udp, IPv4)"),
	SL_STAT(struct sl_dp_lane_stats, tx_arp_requests,
		"ARP requests sent for the next hop (peer_mac = resolve)"),
	SL_STAT(struct sl_dp_lane_stats, tx_arp_replies, "ARP replies sent for local_ip"),
	SL_STAT(struct sl_dp_lane_stats, quiet_entries,
		"peer left: port untouched until it cycles"),
	SL_STAT(struct sl_dp_lane_stats, poll_gaps,
		"polls more than 100 us after the previous one: the lcore was descheduled or "
		"stalled"),
	SL_STAT(struct sl_dp_lane_stats, poll_gap_ns,
		"ns between those polls and the previous ones"),
};
SL_STAT_TABLE_DEFINE(sl_dp_lane_stat_table, struct sl_dp_lane_stats, stat_desc);

/*
 * The headers before a link frame of link_len bytes at start: Ethernet, and the port's
 * encapsulation (lib/wire/encap.c) with ECN ecn and UDP source port src_port.
 */
static void
write_headers(const struct sl_dp_lane *l, uint8_t *start, size_t link_len, uint16_t src_port,
	      uint8_t ecn)
{
	const struct sl_dp_port *p = l->port;
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)start;

	rte_ether_addr_copy(&l->peer, &eth->dst_addr);
	rte_ether_addr_copy(&p->mac, &eth->src_addr);
	if (p->encap.kind == SL_ENCAP_ETHERNET) {
		eth->ether_type = rte_cpu_to_be_16(SL_ETHERTYPE);
		return;
	}
	eth->ether_type = rte_cpu_to_be_16(sl_encap_ethertype(&p->encap));
	sl_encap_write(&p->encap, start + RTE_ETHER_HDR_LEN, link_len, src_port, ecn);
}

/*
 * A UDP source port for a data frame: the lane's, or under end-to-end reliability its
 * destination QP's (docs/wire-format.md section 1.2), read from the transport header.
 */
static uint16_t
data_src_port(const struct sl_dp_lane *l, const struct sl_link_tx_frame *f)
{
	if (!l->port->src_port_per_qp || f->body_len < SL_XHDR_BASE_LEN)
		return l->src_port;
	return sl_encap_src_port(sl_xhdr_qpn(f->body));
}

/*
 * An RX (or TX) burst on the lane's queues, holding the port's burst lock where it has one, and
 * there only once the PMD has connected (memif_guard.c, "The connect"): 0 frames before.
 */
static uint16_t
lane_burst(struct sl_dp_lane *l, bool rx, struct rte_mbuf **pkts, uint16_t n)
{
	rte_spinlock_t *lock = l->port->burst_lock;

	if (lock != NULL) {
		rte_spinlock_lock(lock);
		if (sl_unlikely(!sl_dp_memif_connected(lock))) {
			rte_spinlock_unlock(lock);
			return 0;
		}
	}
	n = rx ? rte_eth_rx_burst(l->port->port_id, l->queue, pkts, n)
	       : rte_eth_tx_burst(l->port->port_id, l->queue, pkts, n);
	if (lock != NULL)
		rte_spinlock_unlock(lock);
	return n;
}

/* --- RX ------------------------------------------------------------------------------------ */

/* Once: the peer's address, published for sl_dp_port_peer() (telemetry) by a release store. */
void
sl_dp_lane_set_peer(struct sl_dp_lane *l, const struct rte_ether_addr *mac)
{
	char text[RTE_ETHER_ADDR_FMT_SIZE];

	rte_ether_addr_copy(mac, &l->peer);
	__atomic_store_n(&l->peer_known, true, __ATOMIC_RELEASE);
	rte_ether_format_addr(text, sizeof(text), mac);
	SL_DP_LOG(INFO, "%s: lane %u: peer %s", l->port->name, l->queue, text);
}

static void
queue_delivery(struct sl_dp_lane *l, const struct sl_link_delivery *d)
{
	struct rte_mbuf *m = d->handle;

	rte_pktmbuf_adj(m, (uint16_t)(l->port->hdr_bytes + d->body_off));
	if (m->data_len > d->body_len) /* UDP: Ethernet padding after the IP datagram */
		rte_pktmbuf_trim(m, (uint16_t)(m->data_len - d->body_len));
	l->delivered[(l->deliv_head + l->deliv_count) % l->deliv_cap] = m;
	l->deliv_count++;
}

/*
 * A UDP port's frame: its IP and UDP headers checked (a drop counted by reason; another
 * EtherType is not a sluice frame, an ARP frame goes to neigh.c), a CE mark kept in the mbuf
 * for the QP adapter (qp.c).
 */
static bool
encap_ok(struct sl_dp_lane *l, struct rte_mbuf *m, struct sl_encap_rx *rx)
{
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	enum sl_encap_reject r;
	uint16_t type;

	if (m->data_len < RTE_ETHER_HDR_LEN) {
		sl_stat_add(&l->stats.rx_drop_not_sluice, 1);
		return false;
	}
	type = rte_be_to_cpu_16(eth->ether_type);
	if (type == SL_ARP_ETHERTYPE && l->port->encap.kind == SL_ENCAP_UDP4) {
		sl_dp_neigh_rx(l, m); /* not a sluice frame: answered or taken, then freed */
		return false;
	}
	r = sl_encap_read(&l->port->encap, type, (const uint8_t *)(eth + 1),
			  m->data_len - RTE_ETHER_HDR_LEN, rx);
	if (r == SL_ENCAP_ERR_ETHERTYPE) {
		sl_stat_add(&l->stats.rx_drop_not_sluice, 1);
		return false;
	}
	if (r != SL_ENCAP_OK) {
		sl_stat_add(&l->stats.rx_drop_encap[r - 2], 1);
		return false;
	}
	if (rx->ecn == SL_ENCAP_ECN_CE) {
		m->ol_flags |= l->port->ce_flag;
		sl_stat_add(&l->stats.rx_ce, 1);
	}
	return true;
}

/* Is m a sluice frame of the port's encapsulation? Each one that is not counted once. */
static inline bool
frame_ok(struct sl_dp_lane *l, struct rte_mbuf *m, struct sl_encap_rx *rx)
{
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);

	if (l->port->encap.kind != SL_ENCAP_ETHERNET)
		return encap_ok(l, m, rx);
	if (m->data_len >= RTE_ETHER_HDR_LEN && eth->ether_type == rte_cpu_to_be_16(SL_ETHERTYPE))
		return true;
	sl_stat_add(&l->stats.rx_drop_not_sluice, 1);
	return false;
}

static void
receive(struct sl_dp_lane *l, uint64_t now_ns)
{
	struct rte_mbuf *pkts[SL_DP_BURST], *drop[SL_DP_BURST];
	struct sl_link_rx_frame in[SL_DP_BURST];
	struct sl_link_delivery out[SL_DP_BURST];
	uint16_t n = lane_burst(l, true, pkts, SL_DP_BURST);
	unsigned int n_in = 0, n_drop = 0, n_out;
	uint64_t bytes = 0;

	if (n == 0)
		return;
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
		struct sl_encap_rx rx = {.link_len = (uint16_t)(m->data_len - RTE_ETHER_HDR_LEN)};

		bytes += m->pkt_len;
		if (!frame_ok(l, m, &rx)) {
			drop[n_drop++] = m;
			continue;
		}
		if (m->nb_segs > 1) {
			sl_stat_add(&l->stats.rx_drop_chained, 1);
			drop[n_drop++] = m;
			continue;
		}
		if (sl_unlikely(!l->peer_known) && l->port->peer_mode == SL_DP_PEER_LEARN)
			sl_dp_lane_set_peer(l, &eth->src_addr);
		in[n_in++] = (struct sl_link_rx_frame){
			.buf = (const uint8_t *)(eth + 1) + rx.link_off,
			.len = rx.link_len,
			.handle = m,
		};
	}
	rte_pktmbuf_free_bulk(drop, n_drop);
	sl_stat_add(&l->stats.rx_pkts, n);
	sl_stat_add(&l->stats.rx_bytes, bytes);
	if (n_in == 0)
		return;
	__atomic_store_n(&l->last_rx_ns, now_ns, __ATOMIC_RELAXED);
	n_out = sl_link_rx_burst(l->link, now_ns, in, n_in, out);
	for (unsigned int i = 0; i < n_out; i++)
		queue_delivery(l, &out[i]);
}

/* Offer delivered frames to the consumer, oldest first. */
static void
deliver(struct sl_dp_lane *l, uint64_t now_ns)
{
	while (l->deliv_count) {
		uint32_t chunk = SL_MIN(l->deliv_count, l->deliv_cap - l->deliv_head);
		struct rte_mbuf **m = &l->delivered[l->deliv_head];
		unsigned int taken;

		if (l->app.consume) {
			taken = l->app.consume(l->app.ctx, now_ns, m, chunk);
		} else {
			rte_pktmbuf_free_bulk(m, chunk);
			sl_stat_add(&l->stats.rx_drop_no_consumer, chunk);
			taken = chunk;
		}
		if (taken == 0)
			return;
		l->deliv_head = (l->deliv_head + taken) % l->deliv_cap;
		l->deliv_count -= taken;
		sl_link_rx_consumed(l->link, taken);
		if (taken < chunk)
			return;
	}
}

/* --- TX ------------------------------------------------------------------------------------ */

void
sl_dp_lane_transmit(struct sl_dp_lane *l, struct rte_mbuf **frames, unsigned int n)
{
	uint16_t sent = lane_burst(l, false, frames, (uint16_t)n);
	uint64_t bytes = 0;

	for (uint16_t i = 0; i < sent; i++)
		bytes += frames[i]->pkt_len;
	sl_stat_add(&l->stats.tx_pkts, sent);
	sl_stat_add(&l->stats.tx_bytes, bytes);
	if (sent == n)
		return;
	sl_stat_add(&l->stats.tx_backlog_waits, 1);
	for (unsigned int i = sent; i < n; i++) {
		if (l->n_backlog < SL_DP_BURST) {
			l->backlog[l->n_backlog++] = frames[i];
		} else {
			/* A lost frame to the link: the peer's NACK brings it back. */
			rte_pktmbuf_free(frames[i]);
			sl_stat_add(&l->stats.tx_drop_refused, 1);
		}
	}
}

/* Put a data frame's headers in its headroom; NULL if the mbuf has no room for them. */
static struct rte_mbuf *
build_data(struct sl_dp_lane *l, const struct sl_link_tx_frame *f)
{
	struct rte_mbuf *m = f->handle;
	uint16_t hlen = (uint16_t)(l->port->hdr_bytes + f->hdr_len);
	uint8_t *start = (uint8_t *)(uintptr_t)f->body - hlen;

	if (rte_pktmbuf_mtod(m, uint8_t *) != start && rte_pktmbuf_prepend(m, hlen) == NULL)
		return NULL;
	write_headers(l, start, (size_t)f->hdr_len + f->body_len, data_src_port(l, f),
		      SL_ENCAP_ECN_ECT0);
	rte_memcpy(start + l->port->hdr_bytes, f->hdr, f->hdr_len);
	/* On every segment of a chain: the PMD frees the chain, the ring keeps it. */
	rte_pktmbuf_refcnt_update(m, 1);
	return m;
}

/* A control or filler frame: the headers, the link's whole frame, zero padding. */
static struct rte_mbuf *
build_small(struct sl_dp_lane *l, const struct sl_link_tx_frame *f)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(l->pool);
	uint16_t len = (uint16_t)SL_MAX(SL_DP_MIN_FRAME, l->port->hdr_bytes + f->hdr_len);
	uint8_t *buf;

	if (m == NULL)
		return NULL;

	buf = (uint8_t *)rte_pktmbuf_append(m, len);
	memset(buf, 0, len);
	write_headers(l, buf, f->hdr_len, l->src_port, SL_ENCAP_ECN_NOT_ECT);
	memcpy(buf + l->port->hdr_bytes, f->hdr, f->hdr_len);
	return m;
}

static void
send_link_frames(struct sl_dp_lane *l, uint64_t now_ns)
{
	struct sl_link_tx_desc in[SL_DP_BURST];
	struct sl_link_tx_frame out[SL_DP_BURST];
	struct rte_mbuf *frames[SL_DP_BURST];
	unsigned int n_out, taken = 0, n = 0;

	/* A chain's first mbuf holds all the link reads of a body (sl_dp.h); the rest counts. */
	for (unsigned int i = 0; i < l->n_pending; i++) {
		struct rte_mbuf *m = l->pending[i];

		in[i] = (struct sl_link_tx_desc){
			.handle = m,
			.body = rte_pktmbuf_mtod(m, const uint8_t *),
			.body_len = (uint16_t)m->pkt_len,
			.meta = SL_WIRE_META_EOM_FULL,
		};
	}
	n_out = sl_link_tx_burst(l->link, now_ns, in, l->n_pending, &taken, out, SL_DP_BURST);
	if (taken) {
		l->n_pending -= taken;
		memmove(l->pending, l->pending + taken, l->n_pending * sizeof(l->pending[0]));
	}
	for (unsigned int i = 0; i < n_out; i++) {
		struct rte_mbuf *m =
			out[i].handle ? build_data(l, &out[i]) : build_small(l, &out[i]);

		if (m == NULL) {
			sl_stat_add(&l->stats.tx_drop_nombuf, 1);
			continue;
		}
		frames[n++] = m;
	}
	if (n)
		sl_dp_lane_transmit(l, frames, n);
}

/* Send what the TX queue refused before, in order. True when nothing is left waiting. */
static bool
resend_backlog(struct sl_dp_lane *l)
{
	unsigned int n = l->n_backlog;

	if (n == 0)
		return true;
	l->n_backlog = 0;
	sl_dp_lane_transmit(l, l->backlog, n);
	return l->n_backlog == 0;
}

/* --- The work of each state (lane_life.c chooses) ------------------------------------------ */

void
sl_dp_lane_silence(struct sl_dp_lane *l)
{
	rte_pktmbuf_free_bulk(l->backlog, l->n_backlog);
	sl_stat_add(&l->stats.tx_drop_quiet, l->n_backlog);
	l->n_backlog = 0;
	sl_stat_add(&l->stats.quiet_entries, 1);
}

void
sl_dp_lane_goodbye(struct sl_dp_lane *l, uint64_t now_ns)
{
	receive(l, now_ns);
	deliver(l, now_ns);
	if (resend_backlog(l))
		send_link_frames(l, now_ns);
}

void
sl_dp_lane_drain(struct sl_dp_lane *l, uint64_t now_ns)
{
	receive(l, now_ns);
	deliver(l, now_ns);
	resend_backlog(l);
	/* An empty burst lets drivers that batch (AF_XDP's kick) push out what they hold. */
	lane_burst(l, false, NULL, 0);
}

/*
 * The link began a new session: the peer restarted or left, or this end gave up a stuck episode.
 * What the link delivered from the old one goes up first; payloads produced for it and not yet
 * taken by the link would reach the peer's new state as if they were new, so they are dropped;
 * then the app starts afresh (queue pairs reopen). The check runs before the poll receives: a
 * frame of the new session needs the handshake that began at INIT, a round trip later.
 */
static void
new_session(struct sl_dp_lane *l, uint64_t session, uint64_t now_ns)
{
	deliver(l, now_ns);
	rte_pktmbuf_free_bulk(l->pending, l->n_pending);
	sl_stat_add(&l->stats.tx_drop_session, l->n_pending);
	l->n_pending = 0;
	l->session = session;
	if (l->app.session)
		l->app.session(l->app.ctx, now_ns);
}

/*
 * The next hop has not answered ARP yet (neigh.c): the link's frames (its handshake, repeated
 * until answered) are built and dropped, so that nothing goes to a broadcast address.
 */
static void
unresolved(struct sl_dp_lane *l, uint64_t now_ns)
{
	struct sl_link_tx_frame out[SL_DP_BURST];
	unsigned int taken = 0, n;

	n = sl_link_tx_burst(l->link, now_ns, NULL, 0, &taken, out, SL_DP_BURST);
	sl_stat_add(&l->stats.tx_drop_unresolved, n);
}

void
sl_dp_lane_run(struct sl_dp_lane *l, uint64_t now_ns)
{
	uint64_t session = sl_link_sessions(l->link);
	uint32_t want;

	if (sl_unlikely(session != l->session))
		new_session(l, session, now_ns);
	receive(l, now_ns);
	deliver(l, now_ns);
	if (!resend_backlog(l))
		return;
	if (sl_unlikely(!sl_dp_neigh_resolved(l, now_ns))) {
		unresolved(l, now_ns);
		return;
	}
	/* no more than the link's slot clock sends now: nothing waits ahead of the line */
	want = SL_MIN(sl_link_tx_budget(l->link, now_ns), SL_DP_BURST);
	if (l->app.produce && l->n_pending < want)
		l->n_pending += l->app.produce(l->app.ctx, now_ns, l->pending + l->n_pending,
					       want - l->n_pending);
	if (l->n_pending || now_ns >= sl_link_next_tx_ns(l->link))
		send_link_frames(l, now_ns);
}
