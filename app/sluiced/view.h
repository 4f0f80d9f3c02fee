/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * view.h - one walk over what sluiced shows of itself (view.c), which the two outputs share:
 * DPDK telemetry (telemetry.c) and the JSON lines at exit (report.c). A walk hands each value
 * to a small visitor, so the two can never disagree.
 */
#ifndef SLUICED_VIEW_H
#define SLUICED_VIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "sluiced.h"

struct view_ops {
	void (*u64)(void *ctx, const char *key, uint64_t v);
	void (*str)(void *ctx, const char *key, const char *v);
	void (*u64_array)(void *ctx, const char *key, const uint64_t *v, unsigned int n);
};

/* Per QP: what the exit report's line and /sluice/qps show. */
struct qp_summary {
	struct sl_xport_qp_stats st;
	uint64_t checked;
};

/* Every field of one port, with keys prefixed by prefix ("" or "p0/"). */
void sluiced_port_view(const struct sluiced *d, unsigned int i, const char *prefix,
		       const struct view_ops *ops, void *ctx);

/* The links of one port; with lanes, per-lane arrays too. */
void sluiced_link_view(const struct sluiced *d, unsigned int i, const char *prefix, bool lanes,
		       const struct view_ops *ops, void *ctx);

/* Test traffic summed over every lane of every port, as the checker's summary. */
void sluiced_traffic_view(const struct sluiced *d, const struct view_ops *ops, void *ctx);

/* QPNs a daemon may carry: [qp]'s, then the applications' ([api]). */
uint32_t sluiced_qpn_end(const struct sluiced *d);

/* The adapter that carries qpn on port i, with its lane; NULL when none does. */
const struct sl_dp_qp *sluiced_qp_adapter(const struct sluiced *d, unsigned int i, uint32_t qpn,
					  uint16_t *lane);

/* A QP's program: [qp]'s for its own, the info snapshot's for an application's ("?" before). */
const char *sluiced_qp_proto(const struct sluiced *d, const struct sl_dp_qp *a, uint32_t qpn);

/* The built-in message traffic on port i's lane (NULL: none there). */
const struct sl_traffic_msg *sluiced_lane_msgs(const struct sluiced *d, unsigned int i,
					       uint16_t lane);

/* QP qpn's counters over every session (sl_dp_qp_lifetime_stats()) and its checked messages. */
void sluiced_qp_summary_get(const struct sluiced *d, unsigned int i, uint16_t lane,
			    const struct sl_dp_qp *a, uint32_t qpn, struct qp_summary *s);

/* Everything of one QP: its counters, checked messages, info snapshot, its lane's counters. */
void sluiced_qp_view(const struct sluiced *d, unsigned int i, uint32_t qpn,
		     const struct sl_dp_qp *a, uint16_t lane, const struct view_ops *ops,
		     void *ctx);

/* Sums over every QP and every lane that carries QPs; at_exit adds the latency quantiles
 * (the histograms belong to the lanes' lcores while they run). */
void sluiced_qp_totals_view(const struct sluiced *d, const char *prefix, bool at_exit,
			    const struct view_ops *ops, void *ctx);

#endif /* SLUICED_VIEW_H */
