/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * encap.c - what carries a link frame between the Ethernet addresses and the link header: the
 * EtherType 0x88B5 alone (a back-to-back cable), or IPv4 / IPv6 and UDP (a routed fabric).
 * docs/wire-format.md section 1 is the specification, with worked examples.
 *
 * Why UDP/IP. A raw EtherType crosses one cable: no router forwards it, no switch marks it, and
 * ECMP cannot spread it. RoCEv2, eRPC, Machnet, Falcon and Ultra Ethernet carry their transports
 * in UDP for the same three reasons: routable, ECMP by the UDP source port, ECN in the IP header.
 * So the encoder writes ECT(0) on data frames (the lane decides which frames are data) and the
 * decoder returns the two ECN bits it read, for the lane to hand a CE mark to the transport.
 *
 * What is fixed here, as RoCEv2 fixes it (InfiniBand Architecture Specification, Annex A17):
 *   - the UDP checksum is sent as 0: the link's VCODE covers the headers the transport needs
 *     verified, the Ethernet FCS every byte on each hop, and a software checksum over the
 *     payload would cost as much as the CRC-12 does per frame. IPv4 allows 0 ("no checksum");
 *     for IPv6, RFC 6935 and RFC 6936 allow it to tunnel protocols that check their own frames,
 *     which a sluice link does. A frame that arrives with a non-zero checksum is verified;
 *   - no IPv4 options, no IPv6 extension headers, no fragments: a sluice frame always fits the
 *     path (the daemon sizes segments below the MTU), so a fragment or an option was put there
 *     by someone else;
 *   - IPv4: DF set (path MTU discovery would only ever shrink what fits), TTL and hop limit 64,
 *     identification 0 (RFC 6864: an atomic datagram's ID is not used), DSCP 0.
 *
 * The decoder checks every field of both headers against the port's settings (addresses, the
 * UDP destination port) and its own lengths, and never reads past the frame; each rejection has
 * a reason (enum sl_encap_reject) that the lane counts. The IP total length, not the Ethernet
 * frame, bounds the link frame, so the padding a short frame carries is cut off here.
 * Pure C, no DPDK: the simulator and the fuzz target run it as the daemon does.
 */
#include <string.h>

#include "sl_common.h"
#include "sl_wire.h"

#define IP4_HDR_LEN 20u
#define IP6_HDR_LEN 40u
#define UDP_HDR_LEN 8u
#define IP_PROTO_UDP 17u
#define IP_HOPS 64u
#define IP4_FLAG_DF 0x4000u
#define IP4_FRAG_MASK 0x3FFFu /**< MF and the fragment offset */
#define ETHERTYPE_IPV4 0x0800u
#define ETHERTYPE_IPV6 0x86DDu

static const char *const reject_names[SL_ENCAP_ERR__MAX] = {
	[SL_ENCAP_OK] = "ok",
	[SL_ENCAP_ERR_ETHERTYPE] = "ethertype",
	[SL_ENCAP_ERR_SHORT] = "short",
	[SL_ENCAP_ERR_IP_VERSION] = "ip_version",
	[SL_ENCAP_ERR_IP_OPTIONS] = "ip_options",
	[SL_ENCAP_ERR_IP_LENGTH] = "ip_length",
	[SL_ENCAP_ERR_IP_CHECKSUM] = "ip_checksum",
	[SL_ENCAP_ERR_IP_FRAGMENT] = "ip_fragment",
	[SL_ENCAP_ERR_IP_PROTO] = "ip_proto",
	[SL_ENCAP_ERR_IP_DST] = "ip_dst",
	[SL_ENCAP_ERR_IP_SRC] = "ip_src",
	[SL_ENCAP_ERR_UDP_PORT] = "udp_port",
	[SL_ENCAP_ERR_UDP_LENGTH] = "udp_length",
	[SL_ENCAP_ERR_UDP_CHECKSUM] = "udp_checksum",
};

const char *
sl_encap_reject_name(enum sl_encap_reject r)
{
	return (unsigned)r < SL_ENCAP_ERR__MAX ? reject_names[r] : "unknown";
}

uint16_t
sl_encap_ethertype(const struct sl_encap *e)
{
	switch (e->kind) {
	case SL_ENCAP_UDP4:
		return ETHERTYPE_IPV4;
	case SL_ENCAP_UDP6:
		return ETHERTYPE_IPV6;
	case SL_ENCAP_ETHERNET:
		break;
	}
	return SL_WIRE_ETHERTYPE;
}

size_t
sl_encap_hdr_len(const struct sl_encap *e)
{
	switch (e->kind) {
	case SL_ENCAP_UDP4:
		return IP4_HDR_LEN + UDP_HDR_LEN;
	case SL_ENCAP_UDP6:
		return IP6_HDR_LEN + UDP_HDR_LEN;
	case SL_ENCAP_ETHERNET:
		break;
	}
	return 0;
}

/*
 * A source port from 32 bits of entropy: RFC 6335's dynamic range 49152-65535, as RoCEv2 and
 * VXLAN choose theirs, folded so that nearby QPNs land on unrelated ports (an ECMP hash sees
 * only the port).
 */
uint16_t
sl_encap_src_port(uint32_t entropy)
{
	uint32_t h = entropy * 0x9E3779B1u; /* Fibonacci hashing: the top bits mix all of them */

	return (uint16_t)(0xC000u | h >> 18);
}

/* RFC 1071: the one's-complement sum of 16-bit words, folded, not yet inverted. */
static uint32_t
csum_add(uint32_t sum, const uint8_t *p, size_t len)
{
	for (; len >= 2; p += 2, len -= 2)
		sum += sl_get_be16(p);
	if (len)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

static uint16_t
csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xFFFFu) + (sum >> 16);
	return (uint16_t)sum;
}

static void
put_udp(const struct sl_encap *e, uint8_t *udp, size_t link_len, uint16_t src_port)
{
	sl_put_be16(udp, src_port);
	sl_put_be16(udp + 2, e->udp_port);
	sl_put_be16(udp + 4, (uint16_t)(UDP_HDR_LEN + link_len));
	sl_put_be16(udp + 6, 0); /* no checksum: see the essay */
}

size_t
sl_encap_write(const struct sl_encap *e, uint8_t *out, size_t link_len, uint16_t src_port,
	       uint8_t ecn)
{
	switch (e->kind) {
	case SL_ENCAP_UDP4:
		out[0] = 0x45; /* version 4, IHL 5 */
		out[1] = ecn & SL_ENCAP_ECN_MASK;
		sl_put_be16(out + 2, (uint16_t)(IP4_HDR_LEN + UDP_HDR_LEN + link_len));
		sl_put_be32(out + 4, IP4_FLAG_DF); /* ID 0, DF, offset 0 */
		out[8] = IP_HOPS;
		out[9] = IP_PROTO_UDP;
		sl_put_be16(out + 10, 0);
		memcpy(out + 12, e->local_ip, 4);
		memcpy(out + 16, e->peer_ip, 4);
		sl_put_be16(out + 10, (uint16_t)~csum_fold(csum_add(0, out, IP4_HDR_LEN)));
		put_udp(e, out + IP4_HDR_LEN, link_len, src_port);
		return IP4_HDR_LEN + UDP_HDR_LEN;
	case SL_ENCAP_UDP6:
		/* version 6, traffic class (DSCP 0, ECN), flow label 0 */
		sl_put_be32(out, UINT32_C(6) << 28 | (uint32_t)(ecn & SL_ENCAP_ECN_MASK) << 20);
		sl_put_be16(out + 4, (uint16_t)(UDP_HDR_LEN + link_len));
		out[6] = IP_PROTO_UDP;
		out[7] = IP_HOPS;
		memcpy(out + 8, e->local_ip, 16);
		memcpy(out + 24, e->peer_ip, 16);
		put_udp(e, out + IP6_HDR_LEN, link_len, src_port);
		return IP6_HDR_LEN + UDP_HDR_LEN;
	case SL_ENCAP_ETHERNET:
		break;
	}
	return 0;
}

/* The UDP header at udp, len bytes of UDP datagram (header included); sum: pseudo-header. */
static enum sl_encap_reject
read_udp(const struct sl_encap *e, const uint8_t *udp, size_t len, uint32_t pseudo,
	 struct sl_encap_rx *rx)
{
	uint16_t csum;

	if (len < UDP_HDR_LEN)
		return SL_ENCAP_ERR_UDP_LENGTH;
	csum = sl_get_be16(udp + 6);
	if (sl_get_be16(udp + 2) != e->udp_port)
		return SL_ENCAP_ERR_UDP_PORT;
	if (sl_get_be16(udp + 4) != len)
		return SL_ENCAP_ERR_UDP_LENGTH;
	/* A sum of all ones (0xFFFF, sent for a computed 0) checks the same way. */
	if (csum != 0 &&
	    csum_fold(csum_add(pseudo + IP_PROTO_UDP + (uint32_t)len, udp, len)) != 0xFFFFu)
		return SL_ENCAP_ERR_UDP_CHECKSUM;
	rx->src_port = sl_get_be16(udp);
	rx->link_len = (uint16_t)(len - UDP_HDR_LEN);
	return SL_ENCAP_OK;
}

static enum sl_encap_reject
read_ip4(const struct sl_encap *e, const uint8_t *ip, size_t len, struct sl_encap_rx *rx)
{
	size_t total;

	if (len < IP4_HDR_LEN)
		return SL_ENCAP_ERR_SHORT;
	if (ip[0] >> 4 != 4)
		return SL_ENCAP_ERR_IP_VERSION;
	if ((ip[0] & 0xF) != 5)
		return SL_ENCAP_ERR_IP_OPTIONS;
	total = sl_get_be16(ip + 2);
	if (total < IP4_HDR_LEN || total > len)
		return SL_ENCAP_ERR_IP_LENGTH;
	if (csum_fold(csum_add(0, ip, IP4_HDR_LEN)) != 0xFFFFu)
		return SL_ENCAP_ERR_IP_CHECKSUM;
	if (sl_get_be16(ip + 6) & IP4_FRAG_MASK)
		return SL_ENCAP_ERR_IP_FRAGMENT;
	if (ip[9] != IP_PROTO_UDP)
		return SL_ENCAP_ERR_IP_PROTO;
	if (memcmp(ip + 16, e->local_ip, 4) != 0)
		return SL_ENCAP_ERR_IP_DST;
	if (memcmp(ip + 12, e->peer_ip, 4) != 0)
		return SL_ENCAP_ERR_IP_SRC;
	rx->ecn = ip[1] & SL_ENCAP_ECN_MASK;
	rx->link_off = IP4_HDR_LEN + UDP_HDR_LEN;
	return read_udp(e, ip + IP4_HDR_LEN, total - IP4_HDR_LEN, csum_add(0, ip + 12, 8), rx);
}

static enum sl_encap_reject
read_ip6(const struct sl_encap *e, const uint8_t *ip, size_t len, struct sl_encap_rx *rx)
{
	size_t payload;

	if (len < IP6_HDR_LEN)
		return SL_ENCAP_ERR_SHORT;
	if (ip[0] >> 4 != 6)
		return SL_ENCAP_ERR_IP_VERSION;
	payload = sl_get_be16(ip + 4);
	if (payload > len - IP6_HDR_LEN)
		return SL_ENCAP_ERR_IP_LENGTH;
	if (ip[6] != IP_PROTO_UDP) /* an extension header, or another protocol */
		return ip[6] == 0 || ip[6] == 43 || ip[6] == 44 || ip[6] == 60
			       ? SL_ENCAP_ERR_IP_OPTIONS
			       : SL_ENCAP_ERR_IP_PROTO;
	if (memcmp(ip + 24, e->local_ip, 16) != 0)
		return SL_ENCAP_ERR_IP_DST;
	if (memcmp(ip + 8, e->peer_ip, 16) != 0)
		return SL_ENCAP_ERR_IP_SRC;
	rx->ecn = (uint8_t)(sl_get_be16(ip) >> 4) & SL_ENCAP_ECN_MASK;
	rx->link_off = IP6_HDR_LEN + UDP_HDR_LEN;
	return read_udp(e, ip + IP6_HDR_LEN, payload, csum_add(0, ip + 8, 32), rx);
}

enum sl_encap_reject
sl_encap_read(const struct sl_encap *e, uint16_t ethertype, const uint8_t *buf, size_t len,
	      struct sl_encap_rx *rx)
{
	memset(rx, 0, sizeof(*rx));
	if (ethertype != sl_encap_ethertype(e))
		return SL_ENCAP_ERR_ETHERTYPE;
	switch (e->kind) {
	case SL_ENCAP_UDP4:
		return read_ip4(e, buf, len, rx);
	case SL_ENCAP_UDP6:
		return read_ip6(e, buf, len, rx);
	case SL_ENCAP_ETHERNET:
		break;
	}
	rx->link_len = (uint16_t)SL_MIN(len, (size_t)UINT16_MAX);
	return SL_ENCAP_OK;
}
