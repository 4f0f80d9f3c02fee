/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rte_sched_pacer.c - the rte_sched baseline: an adaptor that drives DPDK's real librte_sched
 * (lib/sched in DPDK, the hierarchical QoS scheduler) with one pipe per flow.
 *
 * Model (DPDK programmer's guide, "Quality of Service (QoS) Framework"): port -> one subport ->
 * max_flows pipes (rounded up to a power of two) -> best-effort traffic class, queue 0. Each
 * pipe is a byte token bucket (tb_rate = R / 8 B/s, tb_size = conf.bucket_bytes) refilled only
 * when a grinder visits it; the port is paced at the link rate with rte_sched's own 24 B frame
 * overhead (the same wire accounting as sluice). rte_sched shares a table of pipe profiles
 * among its pipes, so each rate is rounded to 3 significant digits (at most 0.05% off) and
 * distinct rounded rates become profiles added at run time (rte_sched_subport_pipe_profile_add);
 * a rate change is a profile switch.
 *
 * The adaptor keeps up to RTE_SCHED_INFLIGHT packets of each flow inside rte_sched as mbufs
 * with no data room (only pkt_len matters to the scheduler), tops the flow up after each
 * departure, and stamps departures on the modelled link in the order rte_sched returns them.
 *
 * rte_sched reads the TSC itself (rte_get_tsc_cycles) and has no notion of a caller's clock:
 * its decisions follow real time whatever now_ns says, so it is measured in real-clock mode
 * only, and next_deadline is "poll now" while it holds packets. It needs EAL (rte_zmalloc,
 * mempools): init fails with -ENODEV before rte_eal_init().
 *
 * Units: bps and ns at the sluice API, bytes/s and bytes at rte_sched's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
/* rte_sched.h pulls in rte_pie.h, whose inline helpers use experimental symbols. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <rte_sched.h>
#pragma GCC diagnostic pop

#include "sl_pacer_driver.h"

#define RTE_SCHED_INFLIGHT 2u        /**< packets per flow held inside rte_sched */
#define RTE_SCHED_QSIZE 16u          /**< best-effort queue size, packets (power of two) */
#define RTE_SCHED_PROFILES_MAX 8192u /**< distinct (rounded) rates */
#define RTE_SCHED_RATE_KEEP 1000u    /**< pipe rates keep 3 significant digits */
#define RTE_SCHED_BURST 64u
#define RTE_SCHED_TC_PERIOD_MS 1u /**< shortest TC period, ms */

struct rs_flow {
	uint32_t inflight; /**< packets inside rte_sched */
	uint32_t profile;  /**< pipe profile id */
};
static_assert(sizeof(struct rs_flow) <= SL_PACER_FLOW_PRIV, "flow scratch area");

struct rs {
	struct rte_sched_port *port;
	struct rte_mempool *pool;
	uint64_t profile_bps[RTE_SCHED_PROFILES_MAX]; /**< rate of each pipe profile, bps */
	uint32_t n_profiles;
	uint32_t held;    /**< packets inside rte_sched */
	uint32_t n_top;   /**< flows waiting to be topped up */
	size_t footprint; /**< rte_sched's memory, bytes */
	uint32_t *top;    /**< [max_flows] */
	struct rte_mbuf *mb[RTE_SCHED_BURST * RTE_SCHED_INFLIGHT];
};

static inline struct rs_flow *
rs_flow(const struct sl_pacer *p, uint32_t flow)
{
	return (struct rs_flow *)(void *)sl_pacer_flow(p, flow)->priv;
}

/*
 * A pipe's token bucket and traffic-class budget must each hold the largest frame, or a pipe
 * that only has jumbo frames never sends: tb_size is at least one SL_PACER_LEN_MAX frame, and
 * the TC period (whose budget, tc_rate x tc_period, is reset each period rather than
 * accumulated) is long enough for one such frame at the pipe's rate.
 */
static struct rte_sched_pipe_params
pipe_params(const struct sl_pacer *p, uint64_t rate_bps)
{
	uint64_t frame = SL_PACER_LEN_MAX + p->overhead_bytes, rate_Bps = SL_MAX(rate_bps / 8, 1u);
	struct rte_sched_pipe_params pp = {
		.tb_rate = rate_Bps,
		.tb_size = SL_MAX(p->conf.bucket_bytes, frame),
		.tc_period =
			SL_MAX(RTE_SCHED_TC_PERIOD_MS, SL_DIV_ROUND_UP(frame * 1000, rate_Bps)),
		.tc_ov_weight = 1,
		.wrr_weights = {1, 1, 1, 1},
	};

	for (unsigned i = 0; i < RTE_SCHED_TRAFFIC_CLASSES_PER_PIPE; i++)
		pp.tc_rate[i] = pp.tb_rate;
	return pp;
}

/* rate_bps rounded to 3 significant digits (RTE_SCHED_RATE_KEEP). */
static uint64_t
round_rate(uint64_t rate_bps)
{
	uint64_t unit = 1;

	while (rate_bps / unit >= RTE_SCHED_RATE_KEEP)
		unit *= 10;
	return (rate_bps + unit / 2) / unit * unit;
}

/* Profile id for rate_bps, adding one if new; -ENOSPC or rte_sched's error. */
static int
profile_for(struct sl_pacer *p, struct rs *r, uint64_t rate_bps)
{
	struct rte_sched_pipe_params pp;
	uint32_t id;
	int rc;

	rate_bps = round_rate(rate_bps);
	for (uint32_t i = 0; i < r->n_profiles; i++)
		if (r->profile_bps[i] == rate_bps)
			return (int)i;
	if (r->n_profiles == RTE_SCHED_PROFILES_MAX)
		return -ENOSPC;
	pp = pipe_params(p, rate_bps);
	rc = rte_sched_subport_pipe_profile_add(r->port, 0, &pp, &id);
	if (rc != 0)
		return rc;
	r->profile_bps[id] = rate_bps;
	r->n_profiles = SL_MAX(r->n_profiles, id + 1);
	return (int)id;
}

/* Move packets of the flows in r->top from their FIFOs into rte_sched. */
static void
top_up(struct sl_pacer *p, struct rs *r)
{
	unsigned n = 0;

	for (uint32_t i = 0; i < r->n_top; i++) {
		uint32_t flow = r->top[i];
		struct sl_pacer_flow *f = sl_pacer_flow(p, flow);
		struct rs_flow *rf = rs_flow(p, flow);

		while (rf->inflight < RTE_SCHED_INFLIGHT && f->q_cnt > 0 &&
		       n < SL_ARRAY_SIZE(r->mb)) {
			struct rte_mbuf *m = rte_pktmbuf_alloc(r->pool);

			if (m == NULL)
				break;
			m->pkt_len = f->q_len;
			rte_sched_port_pkt_write(r->port, m, 0, flow, RTE_SCHED_TRAFFIC_CLASS_BE, 0,
						 RTE_COLOR_GREEN);
			r->mb[n++] = m;
			rf->inflight++;
			(void)sl_pacer_q_pop(p, f);
		}
		if (n == SL_ARRAY_SIZE(r->mb)) {
			r->held += (uint32_t)rte_sched_port_enqueue(r->port, r->mb, n);
			n = 0;
		}
	}
	r->n_top = 0;
	if (n > 0)
		r->held += (uint32_t)rte_sched_port_enqueue(r->port, r->mb, n);
}

static unsigned
rs_dequeue(struct sl_pacer *p, uint64_t now_ns, struct sl_pkt *out, unsigned max)
{
	struct rs *r = p->impl;
	struct rte_mbuf *mb[RTE_SCHED_BURST];
	unsigned n = 0;

	top_up(p, r);
	while (n < max && r->held > 0) {
		int got = rte_sched_port_dequeue(r->port, mb, SL_MIN(max - n, RTE_SCHED_BURST));
		uint64_t tau = SL_MAX(p->link_free_ns, p->last_now_ns);

		if (got <= 0)
			break;
		p->stats.decisions++;
		r->held -= (uint32_t)got;
		for (int i = 0; i < got; i++) {
			uint32_t subport, pipe, tc, queue;
			struct rs_flow *rf;

			rte_sched_port_pkt_read_tree_path(r->port, mb[i], &subport, &pipe, &tc,
							  &queue);
			rf = rs_flow(p, pipe);
			out[n].flow = pipe;
			out[n].len_bytes = mb[i]->pkt_len;
			tau = sl_pacer_emit(p, &out[n], SL_MIN(tau, now_ns));
			n++;
			if (rf->inflight-- == RTE_SCHED_INFLIGHT &&
			    sl_pacer_flow(p, pipe)->q_cnt > 0)
				r->top[r->n_top++] = pipe;
		}
		rte_pktmbuf_free_bulk(mb, (unsigned)got);
		top_up(p, r);
	}
	return n;
}

static uint64_t
rs_next_deadline(const struct sl_pacer *p)
{
	const struct rs *r = p->impl;

	return r->held > 0 || r->n_top > 0 ? SL_MAX(p->link_free_ns, p->last_now_ns)
					   : SL_PACER_NEVER;
}

static void
rs_activate(struct sl_pacer *p, uint32_t flow)
{
	struct rs *r = p->impl;

	if (rs_flow(p, flow)->inflight < RTE_SCHED_INFLIGHT)
		r->top[r->n_top++] = flow;
}

static void
rs_rate_changed(struct sl_pacer *p, uint32_t flow, uint64_t old_bps)
{
	struct rs *r = p->impl;
	int id = profile_for(p, r, sl_pacer_flow(p, flow)->rate_bps);

	(void)old_bps;
	if (id < 0) {
		p->stats.bad_rate++; /* out of profiles: the pipe keeps its old rate */
		return;
	}
	if (rte_sched_pipe_config(r->port, 0, flow, id) == 0)
		rs_flow(p, flow)->profile = (uint32_t)id;
	else
		p->stats.bad_rate++;
}

static void
rs_fini(struct sl_pacer *p)
{
	struct rs *r = p->impl;

	if (r == NULL)
		return;
	if (r->port != NULL) {
		struct rte_mbuf *mb[RTE_SCHED_BURST];
		int got;

		/* Drain what rte_sched still holds back to the pool. */
		while (r->held > 0 &&
		       (got = rte_sched_port_dequeue(r->port, mb, RTE_SCHED_BURST)) > 0) {
			r->held -= (uint32_t)got;
			rte_pktmbuf_free_bulk(mb, (unsigned)got);
		}
		rte_sched_port_free(r->port);
	}
	rte_mempool_free(r->pool);
	free(r->top);
	free(r);
	p->impl = NULL;
}

static int
rs_init(struct sl_pacer *p)
{
	static unsigned instance;
	char name[RTE_MEMPOOL_NAMESIZE];
	struct rte_sched_pipe_params first;
	struct rte_sched_subport_profile_params sp = {
		.tb_rate = p->link_bps / 8,
		.tb_size = 1000000,
		.tc_period = 10,
	};
	uint32_t pipes = (uint32_t)sl_align_pow2(SL_MAX(p->max_flows, 2u));
	struct rte_sched_subport_params sub = {
		.n_pipes_per_subport_enabled = pipes,
		.pipe_profiles = &first,
		.n_pipe_profiles = 1,
		.n_max_pipe_profiles = RTE_SCHED_PROFILES_MAX,
	};
	struct rte_sched_port_params pp = {
		.name = name,
		.socket = (int)rte_socket_id(),
		.rate = p->link_bps / 8,
		.mtu = SL_PACER_LEN_MAX,
		.frame_overhead = p->overhead_bytes,
		.n_subports_per_port = 1,
		.n_pipes_per_subport = pipes,
		.subport_profiles = &sp,
		.n_subport_profiles = 1,
		.n_max_subport_profiles = 1,
	};
	struct rs *r;
	int rc = -ENOMEM;

	if (rte_lcore_count() == 0)
		return -ENODEV; /* EAL not initialized */
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return -ENOMEM;
	p->impl = r;
	for (unsigned i = 0; i < RTE_SCHED_TRAFFIC_CLASSES_PER_PIPE; i++)
		sp.tc_rate[i] = sp.tb_rate;
	sub.qsize[RTE_SCHED_TRAFFIC_CLASS_BE] = RTE_SCHED_QSIZE;
	for (unsigned i = 0; i < RTE_SCHED_TRAFFIC_CLASS_BE; i++)
		sub.qsize[i] = RTE_SCHED_QSIZE;
	first = pipe_params(p, p->link_bps);
	r->top = malloc(sizeof(*r->top) * p->max_flows);
	snprintf(name, sizeof(name), "slp_rs%u", instance++);
	r->pool = rte_pktmbuf_pool_create(name, p->max_flows * RTE_SCHED_INFLIGHT + 1024, 256, 0, 0,
					  SOCKET_ID_ANY);
	if (r->top == NULL || r->pool == NULL)
		goto fail;
	{
		struct rte_sched_subport_params *subs[1] = {&sub};

		r->footprint = rte_sched_port_get_memory_footprint(&pp, subs);
	}
	r->port = rte_sched_port_config(&pp);
	if (r->port == NULL)
		goto fail;
	rc = rte_sched_subport_config(r->port, 0, &sub, 0);
	if (rc != 0)
		goto fail;
	r->profile_bps[0] = p->link_bps;
	r->n_profiles = 1;
	for (uint32_t i = 0; i < p->max_flows; i++) {
		rc = rte_sched_pipe_config(r->port, 0, i, 0);
		if (rc != 0)
			goto fail;
	}
	return 0;
fail:
	rs_fini(p);
	return rc < 0 ? rc : -ENOMEM;
}

static size_t
rs_mem_bytes(const struct sl_pacer *p)
{
	const struct rs *r = p->impl;

	return sizeof(*r) + (size_t)p->max_flows * sizeof(*r->top) + r->footprint +
	       rte_mempool_calc_obj_size(sizeof(struct rte_mbuf), 0, NULL) *
		       (size_t)(p->max_flows * RTE_SCHED_INFLIGHT + 1024);
}

static const struct sl_pacer_ops rs_ops = {
	.dequeue = rs_dequeue,
	.next_deadline = rs_next_deadline,
	.activate = rs_activate,
	.rate_changed = rs_rate_changed,
	.init = rs_init,
	.fini = rs_fini,
	.mem_bytes = rs_mem_bytes,
	.name = "rte_sched",
};

SL_PACER_REGISTER(rs_ops)
