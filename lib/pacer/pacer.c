/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pacer.c - the pacer API shared by every implementation: registry by name (lib/common's
 * sl_registry, where Tassel registers like any baseline), argument checks
 * (each refusal counted), the per-flow FIFOs of length runs, the modelled link and the release
 * loop. The scheduling itself lives in the implementation (tassel.c, drivers/pacer/<name>/).
 *
 * A flow's FIFO is its head run (q_cnt packets of q_len bytes, inside the flow's cache line)
 * followed by a chain of spare runs from a pool sized at create time, used only when a flow
 * queues packets of a new length behind packets of another (the short last segment of a
 * message, a mixed-size workload). Nothing is allocated after sl_pacer_create().
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sl_pacer_driver.h"
#include "sl_registry.h"

#define LOOKAHEAD_MAX_DEFAULT_NS (20 * SL_NS_PER_US)
#define LOOKAHEAD_MIN_NS SL_NS_PER_US
#define LOOKAHEAD_WINDOW_CALLS 256u /**< L is re-measured every this many dequeue calls */

static const size_t required_hooks[] = {
	offsetof(struct sl_pacer_ops, dequeue),   offsetof(struct sl_pacer_ops, next_deadline),
	offsetof(struct sl_pacer_ops, activate),  offsetof(struct sl_pacer_ops, rate_changed),
	offsetof(struct sl_pacer_ops, init),      offsetof(struct sl_pacer_ops, fini),
	offsetof(struct sl_pacer_ops, mem_bytes),
};
static const void *slots[16];
static struct sl_registry pacers =
	SL_REGISTRY_INIT(slots, struct sl_pacer_ops, name, SL_REGISTRY_REQUIRED(required_hooks));

static const struct sl_stat_desc stat_desc[] = {
	SL_STAT(struct sl_pacer_stats, tx_pkts, "packets dequeued"),
	SL_STAT(struct sl_pacer_stats, decisions, "flow-tier decisions (one sort each)"),
	SL_STAT(struct sl_pacer_stats, bad_flow, "calls naming a flow beyond max_flows"),
	SL_STAT(struct sl_pacer_stats, bad_rate, "set_rate outside [100 Kbps, link rate]"),
	SL_STAT(struct sl_pacer_stats, bad_len, "backlog with a bad length or count"),
	SL_STAT(struct sl_pacer_stats, no_rate, "backlog on a flow without a rate"),
	SL_STAT(struct sl_pacer_stats, runs_exhausted, "backlog refused: no spare length run"),
	SL_STAT(struct sl_pacer_stats, imminent_full, "admissions deferred: packet tier full"),
	SL_STAT(struct sl_pacer_stats, clock_backwards, "dequeue with now_ns below the last call"),
	SL_STAT(struct sl_pacer_stats, paused_calls, "dequeue calls while paused"),
	SL_STAT(struct sl_pacer_stats, beyond_horizon, "timestamps clamped to a wheel horizon"),
	SL_STAT(struct sl_pacer_stats, catchup_restarts,
		"Tassel: flows that ran dry behind their schedule (their caller stalled, or had "
		"no TX room for their packets) and restarted behind it, to catch up"),
	SL_STAT(struct sl_pacer_stats, catchup_lost_ns,
		"Tassel: ns of those flows' schedules given up, beyond catchup_ns: stalls longer "
		"than the catch-up"),
	SL_STAT(struct sl_pacer_stats, idle_ns,
		"Tassel: ns flows that ran dry on schedule stayed empty past it (no credit: "
		"nothing "
		"to send, or a window or send queue held them)"),
};
SL_STAT_TABLE_DEFINE(sl_pacer_stat_table, struct sl_pacer_stats, stat_desc);

const struct sl_pacer_ops *
sl_pacer_find(const char *name)
{
	return sl_registry_find(&pacers, name);
}

int
sl_pacer_register(const struct sl_pacer_ops *ops)
{
	return sl_registry_add(&pacers, ops);
}

void
sl_pacer_register_ctor(const struct sl_pacer_ops *ops)
{
	sl_registry_add_ctor(&pacers, ops);
}

unsigned
sl_pacer_register_failures(void)
{
	return pacers.ctor_failure;
}

static int
conf_fill(struct sl_pacer_conf *c)
{
	if (c->max_flows == 0 || c->max_flows >= SL_PACER_NONE / 2 ||
	    c->link_bps < SL_PACER_RATE_MIN_BPS || c->wire_overhead_bytes > 256)
		return -EINVAL;
	if (c->impl == NULL)
		c->impl = sl_pacer_tassel_ops.name; /* the reference also links tassel.o in */
	if (c->runs == 0)
		c->runs = c->max_flows / 4 + 64;
	if (c->lookahead_max_ns == 0)
		c->lookahead_max_ns = SL_MAX(LOOKAHEAD_MAX_DEFAULT_NS, c->lookahead_ns);
	if (c->lookahead_ns > c->lookahead_max_ns || c->lookahead_max_ns > SL_NS_PER_MS)
		return -EINVAL;
	if (c->catchup_ns > SL_NS_PER_S)
		return -EINVAL;
	if (c->horizon_ns == 0)
		c->horizon_ns = SL_NS_PER_S;
	if (c->bucket_bytes == 0)
		c->bucket_bytes = 1500 + c->wire_overhead_bytes;
	return 0;
}

struct sl_pacer *
sl_pacer_create(const struct sl_pacer_conf *conf)
{
	struct sl_pacer *p = NULL;
	int rc = -EINVAL;

	if (conf == NULL)
		goto fail;
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	p->conf = *conf;
	rc = conf_fill(&p->conf);
	if (rc)
		goto fail;
	p->ops = sl_pacer_find(p->conf.impl);
	if (p->ops == NULL) {
		rc = -ENOENT;
		goto fail;
	}
	p->conf.impl = p->ops->name;
	p->max_flows = p->conf.max_flows;
	p->n_runs = p->conf.runs;
	p->overhead_bytes = p->conf.wire_overhead_bytes;
	p->link_bps = p->conf.link_bps;
	p->runs_free = SL_PACER_NONE;
	p->lookahead_meas_ns = SL_MIN(LOOKAHEAD_MIN_NS, p->conf.lookahead_max_ns);
	p->flows = aligned_alloc(SL_CACHE_LINE, sizeof(*p->flows) * p->max_flows);
	p->ctr = calloc(p->max_flows, sizeof(*p->ctr));
	p->runs = calloc(p->n_runs, sizeof(*p->runs));
	if (p->flows == NULL || p->ctr == NULL || p->runs == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	memset(p->flows, 0, sizeof(*p->flows) * p->max_flows);
	for (uint32_t i = 0; i < p->max_flows; i++)
		p->flows[i].q_more = p->flows[i].q_more_tail = SL_PACER_NONE;
	for (uint32_t i = p->n_runs; i-- > 0;) {
		p->runs[i].next = p->runs_free;
		p->runs_free = i;
	}
	rc = p->ops->init(p);
	if (rc) {
		p->ops = NULL;
		goto fail;
	}
	return p;
fail:
	if (p != NULL) {
		free(p->flows);
		free(p->ctr);
		free(p->runs);
		free(p);
	}
	errno = -rc;
	return NULL;
}

void
sl_pacer_free(struct sl_pacer *p)
{
	if (p == NULL)
		return;
	p->ops->fini(p);
	free(p->flows);
	free(p->ctr);
	free(p->runs);
	free(p);
}

int
sl_pacer_set_rate(struct sl_pacer *p, uint32_t flow, uint64_t rate_bps)
{
	struct sl_pacer_flow *f;
	uint64_t old;

	if (sl_unlikely(flow >= p->max_flows)) {
		p->stats.bad_flow++;
		return -EINVAL;
	}
	if (sl_unlikely(rate_bps < SL_PACER_RATE_MIN_BPS || rate_bps > p->link_bps)) {
		p->stats.bad_rate++;
		return -ERANGE;
	}
	f = sl_pacer_flow(p, flow);
	old = f->rate_bps;
	if (old == rate_bps)
		return 0;
	f->rate_bps = rate_bps;
	p->ops->rate_changed(p, flow, old);
	return 0;
}

int
sl_pacer_flow_reset(struct sl_pacer *p, uint32_t flow)
{
	if (sl_unlikely(flow >= p->max_flows)) {
		p->stats.bad_flow++;
		return -EINVAL;
	}
	if (p->ops->flow_reset)
		p->ops->flow_reset(p, flow);
	return 0;
}

int
sl_pacer_backlog(struct sl_pacer *p, uint32_t flow, uint32_t npkts, uint32_t len_bytes)
{
	struct sl_pacer_flow *f;
	uint32_t *tail_cnt, tail_len, r;

	if (sl_unlikely(flow >= p->max_flows)) {
		p->stats.bad_flow++;
		return -EINVAL;
	}
	if (sl_unlikely(npkts == 0 || len_bytes == 0 || len_bytes > SL_PACER_LEN_MAX)) {
		p->stats.bad_len++;
		return -EINVAL;
	}
	f = sl_pacer_flow(p, flow);
	if (sl_unlikely(f->rate_bps == 0)) {
		p->stats.no_rate++;
		return -ENOEXEC;
	}
	if (f->q_cnt == 0) {
		f->q_cnt = npkts;
		f->q_len = len_bytes;
		p->ops->activate(p, flow);
		return 0;
	}
	if (f->q_more_tail == SL_PACER_NONE) {
		tail_cnt = &f->q_cnt;
		tail_len = f->q_len;
	} else {
		tail_cnt = &p->runs[f->q_more_tail].cnt;
		tail_len = p->runs[f->q_more_tail].len;
	}
	if (tail_len == len_bytes) {
		if (sl_unlikely(*tail_cnt > UINT32_MAX - npkts)) {
			p->stats.bad_len++;
			return -EINVAL;
		}
		*tail_cnt += npkts;
		return 0;
	}
	r = p->runs_free;
	if (sl_unlikely(r == SL_PACER_NONE)) {
		p->stats.runs_exhausted++;
		return -ENOBUFS;
	}
	p->runs_free = p->runs[r].next;
	p->runs[r] = (struct sl_pacer_run){.cnt = npkts, .len = len_bytes, .next = SL_PACER_NONE};
	if (f->q_more_tail == SL_PACER_NONE)
		f->q_more = r;
	else
		p->runs[f->q_more_tail].next = r;
	f->q_more_tail = r;
	return 0;
}

bool
sl_pacer_q_pop(struct sl_pacer *p, struct sl_pacer_flow *f)
{
	uint32_t r;

	if (--f->q_cnt != 0)
		return false;
	r = f->q_more;
	if (r == SL_PACER_NONE)
		return true;
	f->q_cnt = p->runs[r].cnt;
	f->q_len = p->runs[r].len;
	f->q_more = p->runs[r].next;
	if (f->q_more == SL_PACER_NONE)
		f->q_more_tail = SL_PACER_NONE;
	p->runs[r].next = p->runs_free;
	p->runs_free = r;
	return false;
}

unsigned
sl_pacer_release(struct sl_pacer *p, uint64_t from_ns, uint64_t now_ns, struct sl_pkt *out,
		 unsigned max, sl_pacer_pick_t pick)
{
	return sl_pacer_release_inline(p, from_ns, now_ns, out, max, pick);
}

void
sl_pacer_clock(struct sl_pacer *p, uint64_t now_ns)
{
	p->clock_ns = SL_MAX(p->clock_ns, now_ns);
}

unsigned
sl_pacer_dequeue_burst(struct sl_pacer *p, uint64_t now_ns, struct sl_pkt *out, unsigned max)
{
	unsigned n;

	if (sl_unlikely(now_ns < p->last_now_ns)) {
		p->stats.clock_backwards++;
		now_ns = p->last_now_ns;
	}
	if (sl_unlikely(p->paused)) {
		p->stats.paused_calls++;
		return 0;
	}
	p->call_gap_sum_ns += now_ns - p->last_now_ns;
	if (sl_unlikely(++p->call_count == LOOKAHEAD_WINDOW_CALLS)) {
		/* Twice the mean call period covers one late call; held for a whole window. */
		p->lookahead_meas_ns = SL_MIN(
			SL_MAX(2 * p->call_gap_sum_ns / LOOKAHEAD_WINDOW_CALLS, LOOKAHEAD_MIN_NS),
			p->conf.lookahead_max_ns);
		p->call_gap_sum_ns = 0;
		p->call_count = 0;
	}
	n = p->ops->dequeue(p, now_ns, out, max);
	p->last_now_ns = now_ns;
	return n;
}

uint64_t
sl_pacer_next_deadline(const struct sl_pacer *p)
{
	return p->paused ? SL_PACER_NEVER : p->ops->next_deadline(p);
}

void
sl_pacer_pause(struct sl_pacer *p, uint64_t now_ns, bool paused)
{
	if (p->paused == paused)
		return;
	now_ns = SL_MAX(now_ns, p->last_now_ns);
	p->paused = paused;
	if (!paused) {
		/* The link carried nothing of ours while stalled. */
		p->link_free_ns = SL_MAX(p->link_free_ns, now_ns);
	}
	p->last_now_ns = now_ns;
	if (p->ops->pause != NULL)
		p->ops->pause(p, now_ns, paused);
}

int
sl_pacer_flow_stats_get(const struct sl_pacer *p, uint32_t flow, struct sl_pacer_flow_stats *st)
{
	const struct sl_pacer_flow *f;

	if (flow >= p->max_flows || st == NULL)
		return -EINVAL;
	f = sl_pacer_flow(p, flow);
	st->rate_bps = f->rate_bps;
	st->tx_pkts = p->ctr[flow].tx_pkts;
	st->tx_bytes = p->ctr[flow].tx_bytes;
	st->queued_pkts = f->q_cnt;
	for (uint32_t r = f->q_more; r != SL_PACER_NONE; r = p->runs[r].next)
		st->queued_pkts += p->runs[r].cnt;
	return 0;
}

void
sl_pacer_stats_get(const struct sl_pacer *p, struct sl_pacer_stats *out)
{
	*out = p->stats;
}

const char *
sl_pacer_impl_name(const struct sl_pacer *p)
{
	return p->ops->name;
}

size_t
sl_pacer_mem_bytes(const struct sl_pacer *p)
{
	return sizeof(*p) + (size_t)p->max_flows * (sizeof(*p->flows) + sizeof(*p->ctr)) +
	       (size_t)p->n_runs * sizeof(*p->runs) + p->ops->mem_bytes(p);
}

uint64_t
sl_pacer_lookahead_ns(const struct sl_pacer *p)
{
	return p->conf.lookahead_ns != 0 ? p->conf.lookahead_ns : p->lookahead_meas_ns;
}
