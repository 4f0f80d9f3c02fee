/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tsw.c - timestamp-wheel pacing (EDT), the engine of two baselines.
 *
 * Model (Carousel, Saeed et al., SIGCOMM'17, section 4; Eiffel, Saeed et al., NSDI'19,
 * section 4). Rate limiting becomes a timestamp per packet: a backlogged flow has its head
 * packet in the wheel, stamped ts = max(t_enqueue, ts_prev + len_prev / R) (earliest
 * departure time), and sits in a bucket of a circular array of FIFO buckets (cal.h) of
 * width g (slot_ns) covering the horizon H (horizon_ns), k = floor(ts / g), released once the
 * bucket's last ns has passed, so a packet is never early and up to g - 1 ns late. Released flows
 * leave in bucket order, FIFO within a bucket, each when the modelled link is free; its next packet
 * is stamped relative to its release instant, so lateness is not caught up later with a burst. A
 * timestamp beyond the horizon is parked in the last bucket and re-parked until it is due (counted
 * as beyond_horizon): a 9000 B packet at 100 Kbps is 720 ms away, 720K buckets of 1 us.
 *
 * The two baselines differ in how the next bucket is found:
 *   - Carousel visits the buckets one by one as time passes (its timer ticks per slot), so it
 *     pays for every empty bucket between two departures (for the idle wait of a lone flow
 *     too: only a wheel with no packet at all is skipped);
 *   - Eiffel's cFFS finds the next non-empty bucket with a hierarchical find-first-set bitmap
 *     in O(log_64 buckets) word operations.
 * Both arm their timer for the next non-empty bucket (next_deadline) through the bitmap, so a
 * virtual clock never ticks through empty buckets.
 *
 * Units: ns, bps, bytes. Per flow: 40 B scratch plus 4 B of bucket link.
 */
#include <errno.h>
#include <stdlib.h>

#include "cal.h"
#include "sl_pacer_driver.h"

#define TSW_SLOT_NS_DEFAULT SL_NS_PER_US

struct tsw_flow {
	uint64_t ts_ns;          /**< timestamp of the head packet in the wheel, ns */
	uint64_t next_ns;        /**< earliest timestamp of the flow's next packet, ns */
	struct sl_pacer_gap gap; /**< exact len / R */
};
static_assert(sizeof(struct tsw_flow) <= SL_PACER_FLOW_PRIV, "flow scratch area");

static inline struct tsw_flow *
tsw_flow(const struct sl_pacer *p, uint32_t flow)
{
	return (struct tsw_flow *)(void *)sl_pacer_flow(p, flow)->priv;
}

static void
insert(struct sl_pacer *p, uint32_t flow, uint64_t ts_ns)
{
	tsw_flow(p, flow)->ts_ns = ts_ns;
	if (sl_pacer_cal_insert(p->impl, flow, ts_ns))
		p->stats.beyond_horizon++;
}

static uint64_t
tsw_pick(struct sl_pacer *p, uint64_t tau_ns, struct sl_pkt *pkt)
{
	struct sl_pacer_cal *c = p->impl;
	uint32_t flow;
	uint64_t due;

	sl_pacer_cal_collect(c, tau_ns);
	while ((flow = sl_pacer_cal_pop(c)) != SL_PACER_CAL_NONE) {
		struct sl_pacer_flow *f = sl_pacer_flow(p, flow);
		struct tsw_flow *tf = tsw_flow(p, flow);

		if (sl_unlikely(tf->ts_ns > tau_ns)) { /* parked beyond the horizon */
			insert(p, flow, tf->ts_ns);
			continue;
		}
		pkt->flow = flow;
		pkt->len_bytes = f->q_len;
		tf->next_ns =
			tf->ts_ns +
			sl_pacer_gap_ns(&tf->gap, sl_pacer_wire_bytes(p, f->q_len), f->rate_bps);
		if (!sl_pacer_q_pop(p, f))
			insert(p, flow, SL_MAX(tau_ns, tf->next_ns));
		return 0;
	}
	due = sl_pacer_cal_next_due(c);
	return due == UINT64_MAX ? SL_PACER_NEVER : SL_MAX(due, tau_ns + 1);
}

unsigned
sl_pacer_tsw_dequeue(struct sl_pacer *p, uint64_t now_ns, struct sl_pkt *out, unsigned max)
{
	return sl_pacer_release(p, p->last_now_ns, now_ns, out, max, tsw_pick);
}

uint64_t
sl_pacer_tsw_next_deadline(const struct sl_pacer *p)
{
	const struct sl_pacer_cal *c = p->impl;
	uint64_t from = SL_MAX(p->link_free_ns, p->last_now_ns), due;

	if (sl_pacer_cal_ready(c))
		return from;
	due = sl_pacer_cal_next_due(c);
	return due == UINT64_MAX ? SL_PACER_NEVER : SL_MAX(due, from);
}

void
sl_pacer_tsw_activate(struct sl_pacer *p, uint32_t flow)
{
	insert(p, flow, SL_MAX(sl_pacer_now(p), tsw_flow(p, flow)->next_ns));
}

void
sl_pacer_tsw_rate_changed(struct sl_pacer *p, uint32_t flow, uint64_t old_bps)
{
	(void)old_bps;
	sl_pacer_gap_reset(&tsw_flow(p, flow)->gap);
}

void
sl_pacer_tsw_fini(struct sl_pacer *p)
{
	if (p->impl == NULL)
		return;
	sl_pacer_cal_fini(p->impl);
	free(p->impl);
	p->impl = NULL;
}

int
sl_pacer_tsw_init(struct sl_pacer *p, enum sl_pacer_tsw_find find)
{
	struct sl_pacer_cal *c = calloc(1, sizeof(*c));
	int rc;

	if (c == NULL)
		return -ENOMEM;
	p->impl = c;
	rc = sl_pacer_cal_init(c, p->conf.slot_ns ? p->conf.slot_ns : TSW_SLOT_NS_DEFAULT,
			       p->conf.horizon_ns, p->max_flows, find == SL_PACER_TSW_SCAN);
	if (rc != 0) {
		free(c);
		p->impl = NULL;
	}
	return rc;
}

size_t
sl_pacer_tsw_mem_bytes(const struct sl_pacer *p)
{
	return sizeof(struct sl_pacer_cal) + sl_pacer_cal_mem_bytes(p->impl, p->max_flows);
}
