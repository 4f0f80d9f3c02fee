/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tbucket.c - the token-bucket baseline, as BESS's rate-limited traffic classes and most
 * software shapers do it: a token bucket per flow plus a min-heap of wake-up times.
 *
 * Model. Tokens are bits x 1e9 (so a refill of dt ns at R bps is exactly dt * R, no rounding),
 * capped at the depth b (conf.bucket_bytes, default one 1500 B frame plus overhead; or at one
 * head packet when that is larger, so a jumbo frame still leaves at the rate). A flow's
 * head packet of s wire bytes may leave once the bucket holds s * 8e9 tokens; the flow then
 * sits in the heap keyed on that instant (now if it already does). Flows leave in wake-up
 * order, each when the modelled link is idle, and pay for their packet; the bucket is refilled
 * lazily from its last update. A flow that idles fills its bucket and may send b bytes back to
 * back: that burst is the price of the design (the burst-excess metric shows it).
 *
 * Units: ns, bps, bytes, tokens = bits x 1e9. Per flow: 16 B scratch plus a heap slot.
 */
#include <errno.h>
#include <stdlib.h>

#include "sl_pacer_driver.h"

struct tb_flow {
	uint64_t tokens;  /**< bits x 1e9 at last_ns */
	uint64_t last_ns; /**< time of the last refill, ns */
};
static_assert(sizeof(struct tb_flow) <= SL_PACER_FLOW_PRIV, "flow scratch area");

struct tb {
	struct sl_pacer_heap wake; /**< key: time the head packet conforms, ns */
	uint64_t depth;            /**< bucket depth, tokens */
};

static inline struct tb_flow *
tb_flow(const struct sl_pacer *p, uint32_t flow)
{
	return (struct tb_flow *)(void *)sl_pacer_flow(p, flow)->priv;
}

/*
 * Refill up to the depth, or up to one head packet (need) when that is larger: a frame bigger
 * than the bucket still leaves, at the rate, instead of never conforming.
 */
static void
refill(const struct tb *t, struct tb_flow *tf, uint64_t rate_bps, uint64_t now_ns, uint64_t need)
{
	uint64_t cap = SL_MAX(t->depth, need), dt, room;

	tf->tokens = SL_MIN(tf->tokens, cap);
	dt = now_ns - tf->last_ns;
	room = cap - tf->tokens;

	tf->last_ns = now_ns;
	tf->tokens = dt >= room / rate_bps + 1 ? cap : tf->tokens + dt * rate_bps;
	tf->tokens = SL_MIN(tf->tokens, cap);
}

/* When the head packet of flow conforms, at or after now_ns. */
static uint64_t
conform_ns(struct sl_pacer *p, const struct tb *t, uint32_t flow, uint64_t now_ns)
{
	struct sl_pacer_flow *f = sl_pacer_flow(p, flow);
	struct tb_flow *tf = tb_flow(p, flow);
	uint64_t need = (uint64_t)sl_pacer_wire_bytes(p, f->q_len) * 8 * SL_NS_PER_S;

	refill(t, tf, f->rate_bps, now_ns, need);
	if (tf->tokens >= need)
		return now_ns;
	return now_ns + SL_DIV_ROUND_UP(need - tf->tokens, f->rate_bps);
}

static uint64_t
tb_pick(struct sl_pacer *p, uint64_t tau_ns, struct sl_pkt *pkt)
{
	struct tb *t = p->impl;

	while (!sl_pacer_heap_empty(&t->wake) && sl_pacer_heap_top(&t->wake)->key <= tau_ns) {
		uint32_t flow = sl_pacer_heap_top(&t->wake)->id;
		struct sl_pacer_flow *f = sl_pacer_flow(p, flow);
		struct tb_flow *tf = tb_flow(p, flow);
		uint64_t need = (uint64_t)sl_pacer_wire_bytes(p, f->q_len) * 8 * SL_NS_PER_S;

		refill(t, tf, f->rate_bps, tau_ns, need);
		if (sl_unlikely(tf->tokens < need)) { /* rate lowered since it was sorted */
			sl_pacer_heap_retop(&t->wake, conform_ns(p, t, flow, tau_ns));
			continue;
		}
		p->stats.decisions++;
		tf->tokens -= need;
		pkt->flow = flow;
		pkt->len_bytes = f->q_len;
		if (sl_pacer_q_pop(p, f))
			sl_pacer_heap_pop(&t->wake);
		else
			sl_pacer_heap_retop(&t->wake, conform_ns(p, t, flow, tau_ns));
		return 0;
	}
	return sl_pacer_heap_empty(&t->wake) ? SL_PACER_NEVER : sl_pacer_heap_top(&t->wake)->key;
}

static unsigned
tb_dequeue(struct sl_pacer *p, uint64_t now_ns, struct sl_pkt *out, unsigned max)
{
	return sl_pacer_release(p, p->last_now_ns, now_ns, out, max, tb_pick);
}

static uint64_t
tb_next_deadline(const struct sl_pacer *p)
{
	const struct tb *t = p->impl;

	if (sl_pacer_heap_empty(&t->wake))
		return SL_PACER_NEVER;
	return SL_MAX(sl_pacer_heap_top(&t->wake)->key, SL_MAX(p->link_free_ns, p->last_now_ns));
}

static void
tb_activate(struct sl_pacer *p, uint32_t flow)
{
	struct tb *t = p->impl;

	sl_pacer_heap_push(&t->wake, conform_ns(p, t, flow, sl_pacer_now(p)), flow);
}

static void
tb_rate_changed(struct sl_pacer *p, uint32_t flow, uint64_t old_bps)
{
	struct tb_flow *tf = tb_flow(p, flow);

	/* Tokens earned so far at the old rate; a new flow starts with a full bucket. */
	if (old_bps == 0) {
		tf->tokens = ((struct tb *)p->impl)->depth;
		tf->last_ns = sl_pacer_now(p);
	} else {
		refill(p->impl, tf, old_bps, SL_MAX(sl_pacer_now(p), tf->last_ns), 0);
	}
}

static void
tb_fini(struct sl_pacer *p)
{
	struct tb *t = p->impl;

	if (t == NULL)
		return;
	sl_pacer_heap_fini(&t->wake);
	free(t);
	p->impl = NULL;
}

static int
tb_init(struct sl_pacer *p)
{
	struct tb *t = calloc(1, sizeof(*t));
	int rc;

	if (t == NULL)
		return -ENOMEM;
	p->impl = t;
	if (p->conf.bucket_bytes > SL_PACER_LEN_MAX * 64) {
		tb_fini(p);
		return -EINVAL;
	}
	t->depth = p->conf.bucket_bytes * 8 * SL_NS_PER_S;
	rc = sl_pacer_heap_init(&t->wake, p->max_flows, 0);
	if (rc != 0)
		tb_fini(p);
	return rc;
}

static size_t
tb_mem_bytes(const struct sl_pacer *p)
{
	const struct tb *t = p->impl;

	return sizeof(*t) + sl_pacer_heap_mem_bytes(&t->wake, 0);
}

static const struct sl_pacer_ops tb_ops = {
	.dequeue = tb_dequeue,
	.next_deadline = tb_next_deadline,
	.activate = tb_activate,
	.rate_changed = tb_rate_changed,
	.init = tb_init,
	.fini = tb_fini,
	.mem_bytes = tb_mem_bytes,
	.name = "tbucket",
};

SL_PACER_REGISTER(tb_ops)
