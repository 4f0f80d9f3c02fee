/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * heap.c - the monolithic WF2Q+ baseline: one packet per sort over all flows, the design of
 * SENIC with a PIEO-style sorter ("SE-PIEO", which Tassel beats 3.6x; Tassel section 2.3).
 *
 * Model (WF2Q+, Bennett and Zhang): each backlogged flow offers only its head packet, with
 * start S = max(F_prev, V) when the flow becomes backlogged, S = F_prev afterwards, and finish
 * F = S + len / R. V is real time (no oversubscription scaling). A packet is eligible when
 * S <= V; the eligible packet with the smallest F leaves when the modelled link is idle.
 * Two 4-ary heaps over all flows hold the state: flows waiting for eligibility keyed on S, and
 * eligible flows keyed on F (PIEO's "smallest rank whose predicate holds"). Every packet costs
 * a push and a pop in each heap of up to max_flows entries: one sort per packet.
 *
 * Units: ns, bps, bytes. Per flow: 32 B scratch plus two heap slots of 16 B.
 */
#include <errno.h>
#include <stdlib.h>

#include "sl_pacer_driver.h"

struct wfq_flow {
	uint64_t next_ns;        /**< S of the head packet; F once it is eligible, ns */
	struct sl_pacer_gap gap; /**< exact len / R */
};
static_assert(sizeof(struct wfq_flow) <= SL_PACER_FLOW_PRIV, "flow scratch area");

struct wfq {
	struct sl_pacer_heap waiting;  /**< key S, flows whose head is not yet eligible */
	struct sl_pacer_heap eligible; /**< key F, flows whose head is eligible */
};

static inline struct wfq_flow *
wfq_flow(const struct sl_pacer *p, uint32_t flow)
{
	return (struct wfq_flow *)(void *)sl_pacer_flow(p, flow)->priv;
}

/* The head packet of flow becomes eligible: compute its F and sort it. */
static void
make_eligible(struct sl_pacer *p, struct wfq *w, uint32_t flow)
{
	struct sl_pacer_flow *f = sl_pacer_flow(p, flow);
	struct wfq_flow *wf = wfq_flow(p, flow);

	wf->next_ns += sl_pacer_gap_ns(&wf->gap, sl_pacer_wire_bytes(p, f->q_len), f->rate_bps);
	sl_pacer_heap_push(&w->eligible, wf->next_ns, flow);
}

static uint64_t
wfq_pick(struct sl_pacer *p, uint64_t tau_ns, struct sl_pkt *pkt)
{
	struct wfq *w = p->impl;
	struct sl_pacer_flow *f;
	uint32_t flow;

	while (!sl_pacer_heap_empty(&w->waiting) && sl_pacer_heap_top(&w->waiting)->key <= tau_ns) {
		flow = sl_pacer_heap_top(&w->waiting)->id;
		sl_pacer_heap_pop(&w->waiting);
		make_eligible(p, w, flow);
	}
	if (sl_pacer_heap_empty(&w->eligible))
		return sl_pacer_heap_empty(&w->waiting) ? SL_PACER_NEVER
							: sl_pacer_heap_top(&w->waiting)->key;
	p->stats.decisions++;
	flow = sl_pacer_heap_top(&w->eligible)->id;
	sl_pacer_heap_pop(&w->eligible);
	f = sl_pacer_flow(p, flow);
	pkt->flow = flow;
	pkt->len_bytes = f->q_len;
	if (!sl_pacer_q_pop(p, f)) /* next head starts at this F */
		sl_pacer_heap_push(&w->waiting, wfq_flow(p, flow)->next_ns, flow);
	return 0;
}

static unsigned
wfq_dequeue(struct sl_pacer *p, uint64_t now_ns, struct sl_pkt *out, unsigned max)
{
	return sl_pacer_release(p, p->last_now_ns, now_ns, out, max, wfq_pick);
}

static uint64_t
wfq_next_deadline(const struct sl_pacer *p)
{
	const struct wfq *w = p->impl;
	uint64_t from = SL_MAX(p->link_free_ns, p->last_now_ns);

	if (!sl_pacer_heap_empty(&w->eligible))
		return from;
	if (sl_pacer_heap_empty(&w->waiting))
		return SL_PACER_NEVER;
	return SL_MAX(sl_pacer_heap_top(&w->waiting)->key, from);
}

static void
wfq_activate(struct sl_pacer *p, uint32_t flow)
{
	struct wfq_flow *wf = wfq_flow(p, flow);

	wf->next_ns = SL_MAX(wf->next_ns, sl_pacer_now(p));
	sl_pacer_heap_push(&((struct wfq *)p->impl)->waiting, wf->next_ns, flow);
}

static void
wfq_rate_changed(struct sl_pacer *p, uint32_t flow, uint64_t old_bps)
{
	(void)old_bps;
	sl_pacer_gap_reset(&wfq_flow(p, flow)->gap);
}

static void
wfq_fini(struct sl_pacer *p)
{
	struct wfq *w = p->impl;

	if (w == NULL)
		return;
	sl_pacer_heap_fini(&w->waiting);
	sl_pacer_heap_fini(&w->eligible);
	free(w);
	p->impl = NULL;
}

static int
wfq_init(struct sl_pacer *p)
{
	struct wfq *w = calloc(1, sizeof(*w));
	int rc;

	if (w == NULL)
		return -ENOMEM;
	p->impl = w;
	rc = sl_pacer_heap_init(&w->waiting, p->max_flows, 0);
	if (rc == 0)
		rc = sl_pacer_heap_init(&w->eligible, p->max_flows, 0);
	if (rc != 0)
		wfq_fini(p);
	return rc;
}

static size_t
wfq_mem_bytes(const struct sl_pacer *p)
{
	const struct wfq *w = p->impl;

	return sizeof(*w) + sl_pacer_heap_mem_bytes(&w->waiting, 0) +
	       sl_pacer_heap_mem_bytes(&w->eligible, 0);
}

static const struct sl_pacer_ops wfq_ops = {
	.dequeue = wfq_dequeue,
	.next_deadline = wfq_next_deadline,
	.activate = wfq_activate,
	.rate_changed = wfq_rate_changed,
	.init = wfq_init,
	.fini = wfq_fini,
	.mem_bytes = wfq_mem_bytes,
	.name = "heap",
};

SL_PACER_REGISTER(wfq_ops)
