/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xdp_steer.c - the XDP program that the AF_XDP port loads (net_af_xdp's xdp_prog= argument).
 *
 * sluice's frames are redirected to the AF_XDP socket bound to the receiving queue: EtherType
 * 0x88B5 (encap = ethernet), and IPv4 or IPv6 UDP datagrams to the port's UDP port
 * (encap = udp), which the daemon writes into sl_udp_port once the PMD has loaded the program
 * (lib/dp/xdp_udp.c). Every other frame - ARP, the host's own IP traffic, anything its stack
 * needs - is passed to the kernel unchanged, so sluice can share an interface with normal
 * networking. A datagram's IP header is not checked here beyond what finding its UDP port
 * needs: the daemon checks every field (lib/wire/encap.c) and counts what it refuses.
 * When no socket is bound to the queue, bpf_redirect_map() falls back to XDP_PASS.
 *
 * The map must be called xsks_map: the AF_XDP PMD finds it by that name and inserts its
 * sockets, one per queue.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define SL_ETHERTYPE 0x88B5
#define SL_XSK_MAX_QUEUES 64

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, SL_XSK_MAX_QUEUES);
	__type(key, __u32);
	__type(value, __u32);
} xsks_map SEC(".maps");

/* [0]: the UDP destination port steered to AF_XDP, host order; 0: none (encap = ethernet). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} sl_udp_port SEC(".maps");

/* Is the IP packet at l3 a UDP datagram to the steered port? */
static __always_inline int
udp_to_us(void *l3, void *data_end, __u16 proto)
{
	struct udphdr *udp;
	__u32 key = 0, *port;

	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = l3;

		if ((void *)(ip + 1) > data_end || ip->protocol != IPPROTO_UDP || ip->ihl != 5)
			return 0;
		udp = (void *)(ip + 1);
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = l3;

		if ((void *)(ip6 + 1) > data_end || ip6->nexthdr != IPPROTO_UDP)
			return 0;
		udp = (void *)(ip6 + 1);
	} else {
		return 0;
	}
	if ((void *)(udp + 1) > data_end)
		return 0;
	port = bpf_map_lookup_elem(&sl_udp_port, &key);
	return port != NULL && *port != 0 && udp->dest == bpf_htons((__u16)*port);
}

SEC("xdp")
int
sl_xdp_steer(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;

	if ((void *)(eth + 1) > data_end)
		return XDP_PASS;
	if (eth->h_proto != bpf_htons(SL_ETHERTYPE) && !udp_to_us(eth + 1, data_end, eth->h_proto))
		return XDP_PASS;
	return bpf_redirect_map(&xsks_map, ctx->rx_queue_index, XDP_PASS);
}

char _license[] SEC("license") = "Dual BSD/GPL";
