/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * arp.c - ARP for IPv4 over Ethernet (RFC 826): how a UDP port finds its next hop's MAC and lets
 * a router find its own, where no kernel does it for the port (lib/dp/neigh.c).
 *
 * Only the one form that exists on an Ethernet carrying IPv4 is accepted: hardware type 1,
 * protocol 0x0800, address lengths 6 and 4, operation request or reply. Anything else is not an
 * error of a peer's, just not a question this port answers, so the reader says no without a
 * reason. Pure C, no DPDK.
 */
#include <string.h>

#include "sl_common.h"
#include "sl_wire.h"

#define ARP_HTYPE_ETHERNET 1u
#define ARP_PTYPE_IPV4 0x0800u

size_t
sl_arp_write(uint8_t *out, const struct sl_arp *a)
{
	sl_put_be16(out, ARP_HTYPE_ETHERNET);
	sl_put_be16(out + 2, ARP_PTYPE_IPV4);
	out[4] = 6;
	out[5] = 4;
	sl_put_be16(out + 6, a->op);
	memcpy(out + 8, a->sha, 6);
	memcpy(out + 14, a->spa, 4);
	memcpy(out + 18, a->tha, 6);
	memcpy(out + 24, a->tpa, 4);
	return SL_ARP_LEN;
}

bool
sl_arp_read(const uint8_t *buf, size_t len, struct sl_arp *a)
{
	if (len < SL_ARP_LEN || sl_get_be16(buf) != ARP_HTYPE_ETHERNET ||
	    sl_get_be16(buf + 2) != ARP_PTYPE_IPV4 || buf[4] != 6 || buf[5] != 4)
		return false;
	a->op = sl_get_be16(buf + 6);
	if (a->op != SL_ARP_REQUEST && a->op != SL_ARP_REPLY)
		return false;
	memcpy(a->sha, buf + 8, 6);
	memcpy(a->spa, buf + 14, 4);
	memcpy(a->tha, buf + 18, 6);
	memcpy(a->tpa, buf + 24, 4);
	return true;
}
