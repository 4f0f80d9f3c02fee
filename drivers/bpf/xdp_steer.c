/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xdp_steer.c - the XDP program that the AF_XDP port loads (net_af_xdp's xdp_prog= argument).
 *
 * Frames of EtherType 0x88B5 (sluice's link frames) are redirected to the AF_XDP socket bound
 * to the receiving queue; every other frame - ARP, IP, anything the host's own stack needs - is
 * passed to the kernel unchanged. So sluice can share an interface with normal networking.
 * When no socket is bound to the queue, bpf_redirect_map() falls back to XDP_PASS.
 *
 * The map must be called xsks_map: the AF_XDP PMD finds it by that name and inserts its
 * sockets, one per queue.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>

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

SEC("xdp")
int
sl_xdp_steer(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;

	if ((void *)(eth + 1) > data_end || eth->h_proto != bpf_htons(SL_ETHERTYPE))
		return XDP_PASS;
	return bpf_redirect_map(&xsks_map, ctx->rx_queue_index, XDP_PASS);
}

char _license[] SEC("license") = "Dual BSD/GPL";
