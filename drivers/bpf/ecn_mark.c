/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ecn_mark.c - a tc-BPF program (clsact egress, direct action) that marks ECN where a switch
 * would: the test beds' router runs it on the egress of its bottleneck, beside the shaping qdisc
 * that makes the real queue (tbf), for kernels without RED or fq_codel. Not part of the daemon.
 *
 * The marking is HULL's phantom queue (M. Alizadeh et al., "Less Is More: Trading a Little
 * Bandwidth for Ultra-Low Latency in the Data Center", NSDI 2012, section 3.1): a counter of
 * bytes that every packet leaving through the port adds to and that drains at drain_bps, set a
 * little below the bottleneck's rate (HULL: 95 %). When the counter is above mark_bytes the
 * packet is marked CE if it is ECN-capable (bpf_skb_ecn_set_ce() leaves a Not-ECT packet
 * alone). Because the phantom drains slower than the line, it fills before the real queue does,
 * so senders that react to marks (DCQCN, DCTCP) keep the real queue near empty; senders that
 * ignore them fill it until tbf drops.
 *
 * The map sl_phantom_queue holds the settings (written by the loader before it attaches the
 * program: tests/integration/lib/ecn_marker.c), the phantom's state and the counters the loader
 * reads back. One entry under a spin lock: the router's egress may run on any CPU.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>

#include <bpf/bpf_helpers.h>

#include "sl_ecn_mark.h"

#define NS_PER_S 1000000000ull
#define GAP_MAX_NS 100000000ull /**< 100 ms: an idle phantom is empty well before */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sl_phantom_queue);
} sl_phantom_queue SEC(".maps");

SEC("tc")
int
sl_ecn_mark(struct __sk_buff *skb)
{
	__u64 now = bpf_ktime_get_ns(), gap, drained, vq;
	struct sl_phantom_queue *q;
	__u32 key = 0;
	int over;

	q = bpf_map_lookup_elem(&sl_phantom_queue, &key);
	if (q == NULL || q->drain_bps == 0)
		return TC_ACT_OK;
	bpf_spin_lock(&q->lock);
	gap = now - q->last_ns;
	if (gap > GAP_MAX_NS)
		gap = GAP_MAX_NS;
	drained = gap * (q->drain_bps / 8) / NS_PER_S;
	vq = q->vq_bytes > drained ? q->vq_bytes - drained : 0;
	vq += skb->len;
	q->vq_bytes = vq;
	q->last_ns = now;
	q->pkts++;
	if (vq > q->vq_max)
		q->vq_max = vq;
	over = vq > q->mark_bytes;
	bpf_spin_unlock(&q->lock);
	if (over && bpf_skb_ecn_set_ce(skb))
		__sync_fetch_and_add(&q->marks, 1);
	return TC_ACT_OK;
}

char _license[] SEC("license") = "Dual BSD/GPL";
