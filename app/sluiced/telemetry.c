/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * telemetry.c - what sluiced shows of itself: /sluice/info and /sluice/ports through DPDK
 * telemetry (dpdk-telemetry.py -f <file-prefix>), and the same port view as a JSON line at exit
 * (with every ethdev xstat of each port, p<N>/xstats/<name>, which telemetry does not repeat).
 *
 * One walk over a port (port_view) feeds both outputs through a small visitor, so the two can
 * never disagree. Counters are read with relaxed loads while the workers run: each value is
 * exact, and a snapshot of several is consistent to within the frames of one burst.
 *
 * /sluice/ports        every port; keys prefixed p<N>/ (telemetry dicts are flat in DPDK 22.11)
 * /sluice/ports,<N>    port N only, unprefixed
 * /sluice/link[,<N>]   port N's links (default 0): state of each lane, every link counter
 *                      summed over lanes, per lane as arrays lane/<counter>, recovery quantiles
 * /sluice/traffic      link test traffic, summed over every lane of every port
 * /sluice/qps          queue pairs: per QP arrays (qpn, port, lane, proto, messages posted,
 *                      completed, received, checked, retransmitted packets, wire bytes
 *                      received), now_ns (the daemon's clock as it read them: two replies give
 *                      each QP's rate), and totals/<name>
 *                      (with [qp] recv = ec, totals/ec/<counter>: the lanes' targets summed)
 * /sluice/qp,<qpn>[,<port>]  one QP (port 0 unless given): now_ns (the daemon's clock as
 *                      it read them), every counter of
 *                      sl_xport_qp_stat_table, its checked messages, info/<field> (the lane's
 *                      latest snapshot, sl_dp.h), lane/<counter> of its endpoint's traffic
 *                      and adapter
 * /sluice/api         applications ([api]): the socket, every counter of the control half
 *                      (sl_chan_srv_stat_table) and lane/<counter> of the lane half serving them
 * /sluice/clients     applications ([api]), one row each (arrays: id, state, pid, uid, mrs,
 *                      mr_bytes, cqs, qps, requests, refused), at most 64, and listed
 * Per-lane counters of the glue are arrays indexed by queue: q/<counter>.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_telemetry.h>
#include <rte_version.h>

#include "sluiced.h"

#if RTE_VERSION >= RTE_VERSION_NUM(23, 3, 0, 0)
#define tel_dict_u64 rte_tel_data_add_dict_uint
#define tel_array_u64 rte_tel_data_add_array_uint
#define TEL_U64_VAL RTE_TEL_UINT_VAL
#else
#define tel_dict_u64 rte_tel_data_add_dict_u64
#define tel_array_u64 rte_tel_data_add_array_u64
#define TEL_U64_VAL RTE_TEL_U64_VAL
#endif

static struct sluiced *daemon_state;

struct view_ops {
	void (*u64)(void *ctx, const char *key, uint64_t v);
	void (*str)(void *ctx, const char *key, const char *v);
	void (*u64_array)(void *ctx, const char *key, const uint64_t *v, unsigned int n);
};

/*
 * Counter d of every lane's snapshot (snap[q], stride bytes apart) into perq[], and their sum.
 */
static uint64_t
lane_counter(const void *snap, size_t stride, unsigned int nb_queues, const struct sl_stat_desc *d,
	     uint64_t *perq)
{
	uint64_t total = 0;

	for (unsigned int q = 0; q < nb_queues; q++) {
		perq[q] = sl_stat_get((const char *)snap + q * stride, d);
		total += perq[q];
	}
	return total;
}

/* Counters of the kernel interface under an AF_XDP or AF_PACKET port, reported as kernel_<name>. */
static const char *const kernel_counters[] = {"rx_dropped", "tx_dropped"};

/* Every field of one port, with keys prefixed by prefix ("" or "p0/"). */
static void
port_view(const struct sluiced *d, unsigned int i, const char *prefix, const struct view_ops *ops,
	  void *ctx)
{
	const struct sl_dp_port *p = &d->port[i];
	uint64_t now = sl_tsc_clock_now_ns(&d->clock);
	uint64_t perq[SL_DP_MAX_QUEUES];
	struct sl_dp_lane_stats glue[SL_DP_MAX_QUEUES];
	char key[96], mac[RTE_ETHER_ADDR_FMT_SIZE];
	struct rte_ether_addr peer;
	struct rte_eth_stats es;

#define KEY(name) (snprintf(key, sizeof(key), "%s%s", prefix, name), key)
	ops->str(ctx, KEY("device"), p->name);
	ops->u64(ctx, KEY("port_id"), p->port_id);
	ops->u64(ctx, KEY("socket_id"), (uint64_t)(p->socket_id < 0 ? 0 : p->socket_id));
	ops->u64(ctx, KEY("queues"), p->nb_queues);
	ops->u64(ctx, KEY("rx_ring_frames"), p->rx_ring_frames);
	rte_ether_format_addr(mac, sizeof(mac), &p->mac);
	ops->str(ctx, KEY("mac"), mac);
	sl_dp_port_peer(p, &peer);
	rte_ether_format_addr(mac, sizeof(mac), &peer);
	ops->str(ctx, KEY("peer_mac"), mac);
	ops->str(ctx, KEY("peer_state"), sl_dp_port_peer_up(p, now) ? "up" : "down");
	if (p->shares_memory)
		ops->str(ctx, KEY("memif_guard"), p->burst_lock != NULL ? "on" : "off");
	for (unsigned int q = 0; q < p->nb_queues; q++)
		sl_stats_snapshot(&glue[q], &p->lane[q].stats, sl_dp_lane_stat_table.n);
	for (unsigned int s = 0; s < sl_dp_lane_stat_table.n; s++) {
		const struct sl_stat_desc *sd = &sl_dp_lane_stat_table.desc[s];

		ops->u64(ctx, KEY(sd->name),
			 lane_counter(glue, sizeof(glue[0]), p->nb_queues, sd, perq));
		snprintf(key, sizeof(key), "%sq/%s", prefix, sd->name);
		ops->u64_array(ctx, key, perq, p->nb_queues);
	}
	if (p->started && rte_eth_stats_get(p->port_id, &es) == 0) {
		ops->u64(ctx, KEY("nic_rx_missed"), es.imissed);
		ops->u64(ctx, KEY("nic_rx_errors"), es.ierrors);
		ops->u64(ctx, KEY("nic_tx_errors"), es.oerrors);
		ops->u64(ctx, KEY("nic_rx_nombuf"), es.rx_nombuf);
	}
	for (unsigned int k = 0; k < SL_ARRAY_SIZE(kernel_counters); k++) {
		uint64_t v;

		snprintf(key, sizeof(key), "%skernel_%s", prefix, kernel_counters[k]);
		if (sl_dp_port_kernel_counter(p, kernel_counters[k], &v) == 0)
			ops->u64(ctx, key, v);
	}
#undef KEY
}

/* Recovery time quantile over every lane of p, microseconds. */
static uint64_t
recovery_us(const struct sl_dp_port *p, double q)
{
	struct sl_hist h;

	sl_hist_reset(&h);
	for (unsigned int i = 0; i < p->nb_queues; i++)
		sl_hist_merge(&h, sl_link_recovery_hist(p->lane[i].link));
	return sl_hist_quantile(&h, q) / SL_NS_PER_US;
}

/* The largest of a link's learnt waits (sl_link_replay_tail_ns ...) over p's lanes, ns. */
static uint64_t
lanes_max_ns(const struct sl_dp_port *p, uint64_t (*wait_ns)(const struct sl_link *))
{
	uint64_t max = 0;

	for (unsigned int i = 0; i < p->nb_queues; i++)
		max = SL_MAX(max, wait_ns(p->lane[i].link));
	return max;
}

/* The links of one port; with lanes, per-lane arrays too. */
static void
link_view(const struct sluiced *d, unsigned int i, const char *prefix, bool lanes,
	  const struct view_ops *ops, void *ctx)
{
	const struct sl_dp_port *p = &d->port[i];
	const struct sl_stat_desc *descs = sl_link_stat_table.desc;
	struct sl_link_stats snap[SL_DP_MAX_QUEUES]; /* ~27 KiB; telemetry and exit both call */
	uint64_t perq[SL_DP_MAX_QUEUES];
	char key[96];

	uint64_t send_bps = 0;

	snprintf(key, sizeof(key), "%sstate", prefix);
	ops->str(ctx, key, sl_link_state_name(sl_link_state(p->lane[0].link)));
	for (unsigned int q = 0; q < p->nb_queues; q++) {
		sl_link_stats_get(p->lane[q].link, &snap[q]);
		send_bps += sl_link_send_bps(p->lane[q].link);
	}
	/* The lanes' slot clocks together: [link] rate_mbps x lanes, less after rate_cuts. */
	snprintf(key, sizeof(key), "%ssend_bps", prefix);
	ops->u64(ctx, key, send_bps);
	for (unsigned int s = 0; s < sl_link_stat_table.n; s++) {
		snprintf(key, sizeof(key), "%s%s", prefix, descs[s].name);
		ops->u64(ctx, key,
			 lane_counter(snap, sizeof(snap[0]), p->nb_queues, &descs[s], perq));
		if (lanes) {
			snprintf(key, sizeof(key), "%slane/%s", prefix, descs[s].name);
			ops->u64_array(ctx, key, perq, p->nb_queues);
		}
	}
	snprintf(key, sizeof(key), "%srecovery_us_p50", prefix);
	ops->u64(ctx, key, recovery_us(p, 0.50));
	snprintf(key, sizeof(key), "%srecovery_us_p99", prefix);
	ops->u64(ctx, key, recovery_us(p, 0.99));
	/* The longest measured replay tail and NACK wait of the lanes (0: none measured). */
	snprintf(key, sizeof(key), "%sreplay_tail_us", prefix);
	ops->u64(ctx, key, lanes_max_ns(p, sl_link_replay_tail_ns) / SL_NS_PER_US);
	snprintf(key, sizeof(key), "%snack_wait_us", prefix);
	ops->u64(ctx, key, lanes_max_ns(p, sl_link_nack_wait_ns) / SL_NS_PER_US);
}

/* Test traffic summed over every lane of every port, as the checker's summary. */
static void
traffic_view(const struct sluiced *d, const struct view_ops *ops, void *ctx)
{
	static const char *const modes[] = {"off", "send", "check", "both"};
	struct sl_traffic_link_stats sum = {0};
	struct sl_hist h;
	uint64_t replays = 0, now;

	sl_hist_reset(&h);
	for (unsigned int i = 0; i < d->nb_ports; i++) {
		const struct sl_dp_port *p = &d->port[i];

		for (unsigned int q = 0; q < p->nb_queues && d->traffic[i]; q++) {
			struct sl_traffic_link_stats t;

			sl_stats_snapshot(&t, &d->traffic[i][q].stats,
					  sl_traffic_link_stat_table.n);
			for (unsigned int s = 0; s < sl_traffic_link_stat_table.n; s++) {
				size_t off = sl_traffic_link_stat_table.desc[s].offset;
				uint64_t *dst = (uint64_t *)((char *)&sum + off);
				uint64_t v = sl_stat_get(&t, &sl_traffic_link_stat_table.desc[s]);
				const char *name = sl_traffic_link_stat_table.desc[s].name;

				/* Times: the earliest start and the latest end; first_seq: the
				 * latest start, so any lane that began mid-stream shows. */
				if (strcmp(name, "first_ns") == 0)
					*dst = *dst && *dst < v ? *dst : v;
				else if (strcmp(name, "last_ns") == 0 ||
					 strcmp(name, "first_seq") == 0)
					*dst = SL_MAX(*dst, v);
				else
					*dst += v;
			}
		}
		for (unsigned int q = 0; q < p->nb_queues; q++) {
			replays += sl_link_stat(p->lane[q].link, replays);
			sl_hist_merge(&h, sl_link_recovery_hist(p->lane[q].link));
		}
	}
	ops->str(ctx, "traffic", modes[d->conf.traffic.mode]);
	for (unsigned int s = 0; s < sl_traffic_link_stat_table.n; s++)
		ops->u64(ctx, sl_traffic_link_stat_table.desc[s].name,
			 sl_stat_get(&sum, &sl_traffic_link_stat_table.desc[s]));
	ops->u64(ctx, "replays", replays);
	/* Rates are numbers in bit/s, each with its window: first to last delivery (what the
	 * link carried while payloads came), and first delivery to now (falls in a stall). */
	now = sl_tsc_clock_now_ns(&d->clock);
	ops->u64(ctx, "goodput_bps", sl_traffic_link_goodput_bps(&sum, sum.last_ns));
	ops->u64(ctx, "goodput_window_ns", sum.delivered ? sum.last_ns - sum.first_ns : 0);
	ops->u64(ctx, "goodput_to_now_bps", sl_traffic_link_goodput_bps(&sum, now));
	ops->u64(ctx, "goodput_to_now_window_ns", sum.delivered ? now - sum.first_ns : 0);
	ops->u64(ctx, "recovery_us_p50", sl_hist_quantile(&h, 0.50) / SL_NS_PER_US);
	ops->u64(ctx, "recovery_us_p99", sl_hist_quantile(&h, 0.99) / SL_NS_PER_US);
}

/* --- queue pairs ---------------------------------------------------------------------------- */

/* struct sl_xport_qp_info.recv_mode, as [qp] recv names it */
static const char *const recv_modes[] = {
	[SL_RECV_MELO] = "melo", [SL_RECV_GBN] = "gbn", [SL_XPORT_RECV_EC] = "ec"};

/* QPNs a daemon may carry: [qp]'s, then the applications' ([api]). */
static uint32_t
qpn_end(const struct sluiced *d)
{
	return d->conf.qp.count + (d->chan ? d->conf.api.qps : 0);
}

/* The adapter that carries qpn on port i, with its lane; NULL when none does. */
static const struct sl_dp_qp *
qp_adapter(const struct sluiced *d, unsigned int i, uint32_t qpn, uint16_t *lane)
{
	const struct sl_dp_port *p = &d->port[i];
	const struct sl_dp_qp *a;

	if (i >= d->nb_ports || qpn >= qpn_end(d) || p->nb_queues == 0)
		return NULL;
	if (qpn >= d->conf.qp.count) { /* an application's: port 0's lane 0 */
		*lane = 0;
		a = i == 0 ? d->qp[0][0] : NULL;
		return a && sl_dp_qp_has(a, qpn) ? a : NULL;
	}
	*lane = (uint16_t)(qpn % p->nb_queues);
	a = d->qp[i][*lane];
	return a && sl_dp_qp_has(a, qpn) ? a : NULL;
}

/* A QP's program: [qp]'s for its own, the info snapshot's for an application's ("?" before). */
static const char *
qp_proto(const struct sluiced *d, const struct sl_dp_qp *a, uint32_t qpn)
{
	static __thread struct sl_xport_qp_info info;

	if (qpn < d->conf.qp.count)
		return d->conf.qp.proto_name[qpn % d->conf.qp.nb_protos];
	return sl_dp_qp_info_get(a, qpn, &info) == 0 ? info.proto : "?";
}

/* Per QP: what the exit report's line and /sluice/qps show. */
struct qp_summary {
	struct sl_xport_qp_stats st;
	uint64_t checked;
};

/* The built-in message traffic on port i's lane (NULL: none there). */
static const struct sl_traffic_msg *
lane_msgs(const struct sluiced *d, unsigned int i, uint16_t lane)
{
	return d->msgs[i][lane] != NULL ? sl_traffic_qps_msgs(d->msgs[i][lane]) : NULL;
}

/* The message traffic's counters (all 0 without it). */
static void
msgs_stats_get(const struct sl_traffic_msg *t, struct sl_traffic_msg_stats *ts)
{
	memset(ts, 0, sizeof(*ts));
	if (t != NULL)
		sl_traffic_msg_stats_get(t, ts);
}

static void
qp_summary_get(const struct sluiced *d, unsigned int i, uint16_t lane, const struct sl_dp_qp *a,
	       uint32_t qpn, struct qp_summary *s)
{
	const struct sl_traffic_msg *t = lane_msgs(d, i, lane);

	memset(s, 0, sizeof(*s));
	sl_dp_qp_lifetime_stats(a, qpn, &s->st);
	s->checked = t != NULL ? sl_traffic_msg_qp_checked(t, qpn) : 0;
}

/* Everything of one QP: its counters, checked messages, info snapshot, its lane's counters. */
static void
qp_view(const struct sluiced *d, unsigned int i, uint32_t qpn, const struct sl_dp_qp *a,
	uint16_t lane, const struct view_ops *ops, void *ctx)
{
	struct qp_summary s;
	struct sl_xport_qp_info info;
	struct sl_traffic_msg_stats ts;
	struct sl_dp_qp_stats as;
	char key[96];

	qp_summary_get(d, i, lane, a, qpn, &s);
	ops->u64(ctx, "qpn", qpn);
	ops->u64(ctx, "port", i);
	ops->u64(ctx, "lane", lane);
	ops->str(ctx, "proto", qp_proto(d, a, qpn));
	for (unsigned int k = 0; k < sl_xport_qp_stat_table.n; k++)
		ops->u64(ctx, sl_xport_qp_stat_table.desc[k].name,
			 sl_stat_get(&s.st, &sl_xport_qp_stat_table.desc[k]));
	ops->u64(ctx, "checked", s.checked);
	if (sl_dp_qp_info_get(a, qpn, &info) == 0) {
		ops->str(ctx, "info/proto", info.proto);
		ops->u64(ctx, "info/failed", info.failed);
		ops->u64(ctx, "info/peer_qpn", info.peer_qpn);
		ops->u64(ctx, "info/seg_bytes", info.seg_bytes);
		ops->str(ctx, "info/recv_mode",
			 info.recv_mode < SL_ARRAY_SIZE(recv_modes) ? recv_modes[info.recv_mode]
								    : "?");
		ops->u64(ctx, "info/sq_used", info.sq_used);
		ops->u64(ctx, "info/inflight_pkts", info.inflight_pkts);
		ops->u64(ctx, "info/wnd_segs", info.wnd_segs);
		ops->u64(ctx, "info/rate_bps", info.rate_bps);
		ops->u64(ctx, "info/pace_bps", info.pace_bps);
		ops->u64(ctx, "info/pace_slots", info.pace_slots);
		ops->u64(ctx, "info/rto_ns", info.rto_ns);
		ops->u64(ctx, "info/rto_fired", info.rto_fired);
		ops->u64(ctx, "info/recv_blocks", info.recv_blocks);
	}
	msgs_stats_get(lane_msgs(d, i, lane), &ts);
	for (unsigned int k = 0; k < sl_traffic_msg_stat_table.n; k++) {
		snprintf(key, sizeof(key), "lane/%s", sl_traffic_msg_stat_table.desc[k].name);
		ops->u64(ctx, key, sl_stat_get(&ts, &sl_traffic_msg_stat_table.desc[k]));
	}
	sl_dp_qp_stats_get(a, &as);
	for (unsigned int k = 0; k < sl_dp_qp_stat_table.n; k++) {
		snprintf(key, sizeof(key), "lane/%s", sl_dp_qp_stat_table.desc[k].name);
		ops->u64(ctx, key, sl_stat_get(&as, &sl_dp_qp_stat_table.desc[k]));
	}
}

/* Sums over every QP and every lane that carries QPs; at_exit adds the latency quantiles
 * (the histograms belong to the lanes' lcores while they run). */
static void
qp_totals_view(const struct sluiced *d, const char *prefix, bool at_exit,
	       const struct view_ops *ops, void *ctx)
{
	struct sl_traffic_msg_stats sum = {0};
	struct sl_dp_qp_stats asum = {0};
	struct sl_xport_qp_stats qsum = {0};
	struct sl_xport_stats xsum = {0};
	struct sl_pacer_stats psum = {0};
	struct sl_ec_stats ecsum = {0};
	bool ec = false;
	uint64_t checked = 0, qps = 0, first = 0, last = 0;
	struct sl_hist h, rh;
	char key[96];

#define KEY(name) (snprintf(key, sizeof(key), "%s%s", prefix, name), key)
	sl_hist_reset(&h);
	sl_hist_reset(&rh);
	for (unsigned int i = 0; i < d->nb_ports; i++)
		for (unsigned int q = 0; q < d->port[i].nb_queues; q++) {
			const struct sl_dp_qp *a = d->qp[i][q];
			const struct sl_traffic_msg *t = lane_msgs(d, i, (uint16_t)q);
			struct sl_traffic_msg_stats ts;
			struct sl_dp_qp_stats as;
			struct sl_xport_stats xs;
			struct sl_pacer_stats ps;
			struct sl_ec_stats es;

			if (a == NULL)
				continue;
			if (sl_xport_ec_stats_get(sl_dp_qp_xport(a), &es) == 0) {
				uint64_t deepest =
					SL_MAX(ecsum.max_queue_bytes, es.max_queue_bytes);

				sl_stats_accumulate(&ecsum, &es, &sl_ec_stat_table);
				ecsum.max_queue_bytes = deepest; /* the deepest lane's, not a sum */
				ec = true;
			}
			sl_xport_pacer_stats_get(sl_dp_qp_xport(a), &ps);
			sl_stats_accumulate(&psum, &ps, &sl_pacer_stat_table);
			sl_xport_stats_get(sl_dp_qp_xport(a), &xs);
			sl_stats_accumulate(&xsum, &xs, &sl_xport_stat_table);
			for (uint32_t qpn = q; qpn < d->conf.qp.count;
			     qpn += d->port[i].nb_queues) {
				struct qp_summary s;

				qp_summary_get(d, i, (uint16_t)q, a, qpn, &s);
				sl_stats_accumulate(&qsum, &s.st, &sl_xport_qp_stat_table);
				checked += s.checked;
				qps++;
			}
			msgs_stats_get(t, &ts);
			sl_stats_accumulate(&sum, &ts, &sl_traffic_msg_stat_table);
			if (ts.first_rx_ns && (first == 0 || ts.first_rx_ns < first))
				first = ts.first_rx_ns;
			last = SL_MAX(last, ts.last_rx_ns);
			sl_dp_qp_stats_get(a, &as);
			sl_stats_accumulate(&asum, &as, &sl_dp_qp_stat_table);
			if (at_exit) {
				if (t != NULL)
					sl_hist_merge(&h, sl_traffic_msg_latency(t));
				sl_hist_merge(&rh, sl_xport_recovery_hist(sl_dp_qp_xport(a)));
			}
		}
	ops->u64(ctx, KEY("qps"), qps);
	ops->u64(ctx, KEY("checked"), checked);
	for (unsigned int k = 0; k < sl_xport_qp_stat_table.n; k++)
		ops->u64(ctx, KEY(sl_xport_qp_stat_table.desc[k].name),
			 sl_stat_get(&qsum, &sl_xport_qp_stat_table.desc[k]));
	for (unsigned int k = 0; k < sl_traffic_msg_stat_table.n; k++) {
		const char *name = sl_traffic_msg_stat_table.desc[k].name;

		if (strcmp(name, "first_rx_ns") == 0 || strcmp(name, "last_rx_ns") == 0)
			continue;
		snprintf(key, sizeof(key), "%straffic/%s", prefix, name);
		ops->u64(ctx, key, sl_stat_get(&sum, &sl_traffic_msg_stat_table.desc[k]));
	}
	for (unsigned int k = 0; k < sl_dp_qp_stat_table.n; k++) {
		snprintf(key, sizeof(key), "%slane/%s", prefix, sl_dp_qp_stat_table.desc[k].name);
		ops->u64(ctx, key, sl_stat_get(&asum, &sl_dp_qp_stat_table.desc[k]));
	}
	for (unsigned int k = 0; k < sl_xport_stat_table.n; k++) {
		snprintf(key, sizeof(key), "%sxport/%s", prefix, sl_xport_stat_table.desc[k].name);
		ops->u64(ctx, key, sl_stat_get(&xsum, &sl_xport_stat_table.desc[k]));
	}
	for (unsigned int k = 0; k < sl_pacer_stat_table.n; k++) {
		snprintf(key, sizeof(key), "%spacer/%s", prefix, sl_pacer_stat_table.desc[k].name);
		ops->u64(ctx, key, sl_stat_get(&psum, &sl_pacer_stat_table.desc[k]));
	}
	for (unsigned int k = 0; ec && k < sl_ec_stat_table.n; k++) {
		snprintf(key, sizeof(key), "%sec/%s", prefix, sl_ec_stat_table.desc[k].name);
		ops->u64(ctx, key, sl_stat_get(&ecsum, &sl_ec_stat_table.desc[k]));
	}
	/* Goodput of message bytes delivered in order, over first to last delivery. */
	ops->u64(ctx, KEY("goodput_bps"),
		 last > first ? sl_rate_bps(sum.bytes_received, last - first) : 0);
	ops->u64(ctx, KEY("goodput_window_ns"), last > first ? last - first : 0);
	if (at_exit) {
		ops->u64(ctx, KEY("latency_p50_ns"), sl_hist_quantile(&h, 0.50));
		ops->u64(ctx, KEY("latency_p99_ns"), sl_hist_quantile(&h, 0.99));
		/* the transport's loss to delivery (sl_xport_recovery_hist) */
		ops->u64(ctx, KEY("gaps_repaired"), rh.count);
		ops->u64(ctx, KEY("recovery_us_p50"), sl_hist_quantile(&rh, 0.50) / SL_NS_PER_US);
		ops->u64(ctx, KEY("recovery_us_p99"), sl_hist_quantile(&rh, 0.99) / SL_NS_PER_US);
	}
#undef KEY
}

/* --- DPDK telemetry ---------------------------------------------------------------------- */

static void
tel_u64(void *ctx, const char *key, uint64_t v)
{
	tel_dict_u64(ctx, key, v);
}

static void
tel_str(void *ctx, const char *key, const char *v)
{
	rte_tel_data_add_dict_string(ctx, key, v);
}

static void
tel_u64_array(void *ctx, const char *key, const uint64_t *v, unsigned int n)
{
	struct rte_tel_data *a = rte_tel_data_alloc();

	if (a == NULL)
		return;
	rte_tel_data_start_array(a, TEL_U64_VAL);
	for (unsigned int i = 0; i < n; i++)
		tel_array_u64(a, v[i]);
	if (rte_tel_data_add_dict_container(ctx, key, a, 0) != 0)
		rte_tel_data_free(a);
}

static const struct view_ops tel_ops = {tel_u64, tel_str, tel_u64_array};

/* Port index from params (empty: 0); -EINVAL when it is not a port. */
static int
port_param(const struct sluiced *d, const char *params)
{
	char *end;
	unsigned long i;

	if (params == NULL || *params == '\0')
		return 0;
	i = strtoul(params, &end, 10);
	return *end == '\0' && i < d->nb_ports ? (int)i : -EINVAL;
}

static int
handle_ports(const char *cmd, const char *params, struct rte_tel_data *out)
{
	const struct sluiced *d = daemon_state;
	char prefix[16];

	(void)cmd;
	rte_tel_data_start_dict(out);
	if (params && *params) {
		int i = port_param(d, params);

		if (i < 0)
			return i;
		port_view(d, (unsigned int)i, "", &tel_ops, out);
		return 0;
	}
	for (unsigned int i = 0; i < d->nb_ports; i++) {
		snprintf(prefix, sizeof(prefix), "p%u/", i);
		port_view(d, i, prefix, &tel_ops, out);
	}
	return 0;
}

static int
handle_link(const char *cmd, const char *params, struct rte_tel_data *out)
{
	const struct sluiced *d = daemon_state;
	int i = port_param(d, params);

	(void)cmd;
	if (i < 0)
		return i;
	rte_tel_data_start_dict(out);
	link_view(d, (unsigned int)i, "", true, &tel_ops, out);
	return 0;
}

static int
handle_traffic(const char *cmd, const char *params, struct rte_tel_data *out)
{
	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(out);
	traffic_view(daemon_state, &tel_ops, out);
	return 0;
}

/* Arrays of at most this many QPs: nine arrays of 128 values fit in DPDK telemetry's 16 KiB
 * answer (/sluice/qp,<qpn> shows any QP). */
#define QPS_LISTED 128u

static void
tel_array_add(struct rte_tel_data *out, const char *key, struct rte_tel_data *a)
{
	if (a && rte_tel_data_add_dict_container(out, key, a, 0) != 0)
		rte_tel_data_free(a);
}

/*
 * A table sent as one array per column (telemetry dicts are flat): n columns of u64 and one of
 * strings, filled a row at a time. An array telemetry could not allocate is left out.
 */
struct tel_columns {
	const char *const *names; /**< [n] */
	const char *str_name;
	unsigned int n;
	struct rte_tel_data *col[16];
	struct rte_tel_data *str;
};

static void
tel_columns_start(struct tel_columns *t)
{
	t->str = rte_tel_data_alloc();
	if (t->str)
		rte_tel_data_start_array(t->str, RTE_TEL_STRING_VAL);
	for (unsigned int c = 0; c < t->n; c++) {
		t->col[c] = rte_tel_data_alloc();
		if (t->col[c])
			rte_tel_data_start_array(t->col[c], TEL_U64_VAL);
	}
}

/* One row: v[n] and the string. */
static void
tel_columns_row(struct tel_columns *t, const uint64_t *v, const char *str)
{
	for (unsigned int c = 0; c < t->n; c++)
		if (t->col[c])
			tel_array_u64(t->col[c], v[c]);
	if (t->str)
		rte_tel_data_add_array_string(t->str, str);
}

/* The columns into out, under their names. */
static void
tel_columns_add(struct tel_columns *t, struct rte_tel_data *out)
{
	for (unsigned int c = 0; c < t->n; c++)
		tel_array_add(out, t->names[c], t->col[c]);
	tel_array_add(out, t->str_name, t->str);
}

static int
handle_qps(const char *cmd, const char *params, struct rte_tel_data *out)
{
	static const char *const cols[] = {"qpn",     "port",      "lane",
					   "posted",  "completed", "received",
					   "checked", "pkts_rtx",  "wire_bytes_received"};
	const struct sluiced *d = daemon_state;
	struct tel_columns t = {.names = cols, .n = SL_ARRAY_SIZE(cols), .str_name = "proto"};
	unsigned int listed = 0;

	static_assert(SL_ARRAY_SIZE(cols) <= SL_ARRAY_SIZE(t.col), "columns");
	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(out);
	tel_columns_start(&t);
	for (unsigned int i = 0; i < d->nb_ports; i++)
		for (uint32_t qpn = 0; qpn < qpn_end(d) && listed < QPS_LISTED; qpn++) {
			uint16_t lane;
			const struct sl_dp_qp *a = qp_adapter(d, i, qpn, &lane);
			struct qp_summary s;
			uint64_t v[SL_ARRAY_SIZE(cols)];

			if (a == NULL)
				continue;
			qp_summary_get(d, i, lane, a, qpn, &s);
			v[0] = qpn, v[1] = i, v[2] = lane, v[3] = s.st.msgs_posted;
			v[4] = s.st.msgs_completed, v[5] = s.st.msgs_received, v[6] = s.checked;
			v[7] = s.st.pkts_rtx, v[8] = s.st.wire_bytes_received;
			tel_columns_row(&t, v, qp_proto(d, a, qpn));
			listed++;
		}
	/* When these counters were read, on the daemon's clock: two replies give rates. */
	tel_dict_u64(out, "now_ns", sl_tsc_clock_now_ns(&d->clock));
	tel_dict_u64(out, "listed", listed);
	tel_columns_add(&t, out);
	qp_totals_view(d, "totals/", false, &tel_ops, out);
	return 0;
}

/* Every counter of table in the snapshot st, each key prefixed. */
static void
stats_view(const struct sl_stat_table *table, const void *st, const char *prefix,
	   const struct view_ops *ops, void *ctx)
{
	char key[96];

	for (unsigned int k = 0; k < table->n; k++) {
		snprintf(key, sizeof(key), "%s%s", prefix, table->desc[k].name);
		ops->u64(ctx, key, sl_stat_get(st, &table->desc[k]));
	}
}

static int
handle_api(const char *cmd, const char *params, struct rte_tel_data *out)
{
	const struct sluiced *d = daemon_state;
	struct sl_chan_srv *srv = __atomic_load_n(&daemon_state->srv, __ATOMIC_ACQUIRE);
	struct sl_chan_srv_stats ss;
	struct sl_chan_lane_stats ls;

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(out);
	rte_tel_data_add_dict_string(out, "socket", d->conf.api.socket);
	if (srv != NULL) {
		sl_chan_srv_stats_get(srv, &ss);
		stats_view(&sl_chan_srv_stat_table, &ss, "", &tel_ops, out);
	}
	sl_chan_lane_stats_get(d->chan, &ls);
	stats_view(&sl_chan_lane_stat_table, &ls, "lane/", &tel_ops, out);
	return 0;
}

/* Rows of at most this many applications: ten arrays of 64 fit in a telemetry answer. */
#define CLIENTS_LISTED 64u

static int
handle_clients(const char *cmd, const char *params, struct rte_tel_data *out)
{
	static const char *const cols[] = {"id",  "pid", "uid",      "mrs",    "mr_bytes",
					   "cqs", "qps", "requests", "refused"};
	struct sl_chan_srv *srv = __atomic_load_n(&daemon_state->srv, __ATOMIC_ACQUIRE);
	struct sl_chan_client_view v[CLIENTS_LISTED];
	struct tel_columns t = {.names = cols, .n = SL_ARRAY_SIZE(cols), .str_name = "state"};
	unsigned n = srv != NULL ? sl_chan_srv_clients(srv, v, CLIENTS_LISTED) : 0;

	static_assert(SL_ARRAY_SIZE(cols) <= SL_ARRAY_SIZE(t.col), "columns");
	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(out);
	tel_dict_u64(out, "listed", n);
	tel_columns_start(&t);
	for (unsigned i = 0; i < n; i++) {
		const uint64_t row[] = {v[i].id,  v[i].pid,      v[i].uid,
					v[i].mrs, v[i].mr_bytes, v[i].cqs,
					v[i].qps, v[i].requests, v[i].refused};

		static_assert(SL_ARRAY_SIZE(row) == SL_ARRAY_SIZE(cols), "a value per column");
		tel_columns_row(&t, row,
				sl_chan_client_state_name((enum sl_chan_client_state)v[i].state));
	}
	tel_columns_add(&t, out);
	return 0;
}

/* "<qpn>" or "<qpn>,<port>". */
static int
handle_qp(const char *cmd, const char *params, struct rte_tel_data *out)
{
	const struct sluiced *d = daemon_state;
	unsigned long qpn, port = 0;
	const struct sl_dp_qp *a;
	uint16_t lane;
	char *end;

	(void)cmd;
	if (params == NULL || *params == '\0')
		return -EINVAL;
	qpn = strtoul(params, &end, 10);
	if (*end == ',')
		port = strtoul(end + 1, &end, 10);
	if (*end != '\0' || port >= d->nb_ports || qpn > UINT32_MAX)
		return -EINVAL;
	a = qp_adapter(d, (unsigned int)port, (uint32_t)qpn, &lane);
	if (a == NULL)
		return -EINVAL;
	rte_tel_data_start_dict(out);
	/* When these counters were read, on the daemon's clock: two replies give rates. */
	tel_dict_u64(out, "now_ns", sl_tsc_clock_now_ns(&d->clock));
	qp_view(d, (unsigned int)port, (uint32_t)qpn, a, lane, &tel_ops, out);
	return 0;
}

static int
handle_info(const char *cmd, const char *params, struct rte_tel_data *out)
{
	const struct sluiced *d = daemon_state;

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(out);
	rte_tel_data_add_dict_string(out, "name", d->conf.name);
	rte_tel_data_add_dict_string(out, "version", SLUICE_VERSION);
	rte_tel_data_add_dict_string(out, "dpdk", rte_version());
	rte_tel_data_add_dict_string(out, "config", d->conf.path);
	rte_tel_data_add_dict_string(out, "mode", d->conf.workers ? "workers" : "single-lcore");
	tel_dict_u64(out, "workers", d->conf.workers); /* as configured: 0 is single-lcore */
	tel_dict_u64(out, "poll_loops", d->nb_workers);
	tel_dict_u64(out, "lcores_used", d->conf.workers ? d->conf.workers + 1 : 1);
	tel_dict_u64(out, "eal_lcores", rte_lcore_count());
	tel_dict_u64(out, "numa_nodes", d->numa_nodes);
	tel_dict_u64(out, "ports", d->nb_ports);
	tel_dict_u64(out, "tsc_hz", d->clock.hz);
	tel_dict_u64(out, "uptime_ns", sl_tsc_clock_now_ns(&d->clock) - d->start_ns);
	return 0;
}

int
sluiced_telemetry_register(struct sluiced *d)
{
	int rc;

	daemon_state = d;
	rc = rte_telemetry_register_cmd("/sluice/info", handle_info,
					"Daemon identity, mode, lcores, uptime. No parameters");
	if (rc == 0)
		rc = rte_telemetry_register_cmd(
			"/sluice/ports", handle_ports,
			"Per-port and per-queue counters, drops by reason, peer state. "
			"Parameter: port index (optional)");
	if (rc == 0)
		rc = rte_telemetry_register_cmd(
			"/sluice/link", handle_link,
			"Reliable link state and counters, per lane and summed, recovery time "
			"quantiles. Parameter: port index (default 0)");
	if (rc == 0)
		rc = rte_telemetry_register_cmd(
			"/sluice/traffic", handle_traffic,
			"Link test traffic: generated, delivered, lost, duplicated, reordered, "
			"corrupted_accepted, goodput (bit/s). No parameters");
	if (rc == 0)
		rc = rte_telemetry_register_cmd(
			"/sluice/qps", handle_qps,
			"Queue pairs: qpn, port, lane, proto, messages posted/completed/received/"
			"checked, retransmissions; totals");
	if (rc == 0 && d->conf.api.enable)
		rc = rte_telemetry_register_cmd(
			"/sluice/api", handle_api,
			"Applications: socket, control counters, lane half's (lane/...). No "
			"parameters");
	if (rc == 0 && d->conf.api.enable)
		rc = rte_telemetry_register_cmd("/sluice/clients", handle_clients,
						"Applications, one row each: id, state, pid, uid, "
						"MRs and their bytes, CQs, "
						"QPs, requests served and refused. No parameters");
	if (rc == 0)
		rc = rte_telemetry_register_cmd(
			"/sluice/qp", handle_qp,
			"One queue pair: counters, checked, info (window, rate, RTO), its lane's. "
			"Parameter: qpn[,port]");
	return rc;
}

/* --- JSON at exit ------------------------------------------------------------------------ */

struct json_ctx {
	FILE *f;
	bool first;
};

static void
json_key(struct json_ctx *j, const char *key)
{
	fprintf(j->f, "%s\"%s\":", j->first ? "" : ",", key);
	j->first = false;
}

static void
json_u64(void *ctx, const char *key, uint64_t v)
{
	json_key(ctx, key);
	fprintf(((struct json_ctx *)ctx)->f, "%" PRIu64, v);
}

static void
json_str(void *ctx, const char *key, const char *v)
{
	json_key(ctx, key);
	fprintf(((struct json_ctx *)ctx)->f, "\"%s\"", v);
}

static void
json_u64_array(void *ctx, const char *key, const uint64_t *v, unsigned int n)
{
	FILE *f = ((struct json_ctx *)ctx)->f;

	json_key(ctx, key);
	fputc('[', f);
	for (unsigned int i = 0; i < n; i++)
		fprintf(f, "%s%" PRIu64, i ? "," : "", v[i]);
	fputc(']', f);
}

static const struct view_ops json_ops = {json_u64, json_str, json_u64_array};

/*
 * One line per QP: its counters (failed: messages completed as failed, its QP having timed out),
 * RTOs fired and whether the QP failed (sl_xport_qp_info_get(), which the lanes' lcores no longer
 * call: they have stopped), checked messages, with its lane's checker verdicts and the
 * latency quantiles of its lane's endpoint (post to completion; the checker keeps them per
 * endpoint, not per QP); then a line of totals (keys qps/<name>).
 */
static void
qp_report_json(const struct sluiced *d, FILE *f)
{
	struct json_ctx j = {f, true};

	for (unsigned int i = 0; i < d->nb_ports; i++)
		for (uint32_t qpn = 0; qpn < d->conf.qp.count; qpn++) {
			uint16_t lane;
			const struct sl_dp_qp *a = qp_adapter(d, i, qpn, &lane);
			const struct sl_traffic_msg *t;
			struct sl_traffic_msg_stats ts;
			struct sl_xport_qp_info info;
			struct qp_summary s;

			if (a == NULL)
				continue;
			t = lane_msgs(d, i, lane);
			qp_summary_get(d, i, lane, a, qpn, &s);
			j.first = true;
			fputc('{', f);
			json_u64(&j, "qp", qpn);
			json_u64(&j, "port", i);
			json_u64(&j, "lane", lane);
			json_str(&j, "proto", d->conf.qp.proto_name[qpn % d->conf.qp.nb_protos]);
			json_u64(&j, "posted", s.st.msgs_posted);
			json_u64(&j, "completed", s.st.msgs_completed);
			json_u64(&j, "received", s.st.msgs_received);
			json_u64(&j, "checked", s.checked);
			json_u64(&j, "failed", s.st.msgs_failed);
			json_u64(&j, "bytes_completed", s.st.bytes_completed);
			json_u64(&j, "bytes_received", s.st.bytes_received);
			json_u64(&j, "pkts_sent", s.st.pkts_sent);
			json_u64(&j, "pkts_rtx", s.st.pkts_rtx);
			json_u64(&j, "nacks", s.st.nacks);
			json_u64(&j, "wire_bytes_received", s.st.wire_bytes_received);
			/* The lanes have stopped: their scheduler state may be read here. */
			if (sl_xport_qp_info_get(sl_dp_qp_xport(a), qpn, &info) == 0) {
				json_u64(&j, "rto_fired", info.rto_fired);
				json_u64(&j, "qp_failed", info.failed);
				json_u64(&j, "pace_bps", info.pace_bps);
			}
			sl_traffic_msg_qp_stats_get(t, qpn, &ts);
			json_u64(&j, "out_of_order", ts.out_of_order);
			json_u64(&j, "bad_content", ts.bad_content);
			json_u64(&j, "bad_length", ts.bad_length);
			json_u64(&j, "goodput_bps",
				 ts.last_rx_ns > ts.first_rx_ns
					 ? sl_rate_bps(ts.bytes_received,
						       ts.last_rx_ns - ts.first_rx_ns)
					 : 0);
			json_u64(&j, "lane_latency_p50_ns",
				 sl_hist_quantile(sl_traffic_msg_latency(t), 0.50));
			json_u64(&j, "lane_latency_p99_ns",
				 sl_hist_quantile(sl_traffic_msg_latency(t), 0.99));
			fputs("}\n", f);
		}
	j.first = true;
	fputc('{', f);
	qp_totals_view(d, "qps/", true, &json_ops, &j);
	fputs("}\n", f);
}

/*
 * Every ethdev xstat of port i as <prefix>xstats/<name> (the exit report only: a NIC has
 * hundreds). A driver's own drops and faults (net_impair's rx_impair_*, tx_impair_*) are there.
 */
static void
xstats_view(const struct sluiced *d, unsigned int i, const char *prefix, void *ctx)
{
	uint16_t port_id = d->port[i].port_id;
	int n = rte_eth_xstats_get_names(port_id, NULL, 0);
	struct rte_eth_xstat_name *names;
	struct rte_eth_xstat *vals;
	char key[RTE_ETH_XSTATS_NAME_SIZE + 48]; /* prefix[32] + "xstats/" + a name */

	if (n <= 0)
		return;
	names = calloc((size_t)n, sizeof(*names));
	vals = calloc((size_t)n, sizeof(*vals));
	if (names != NULL && vals != NULL && rte_eth_xstats_get_names(port_id, names, n) == n &&
	    rte_eth_xstats_get(port_id, vals, n) == n)
		for (int k = 0; k < n; k++) {
			snprintf(key, sizeof(key), "%sxstats/%s", prefix, names[vals[k].id].name);
			json_u64(ctx, key, vals[k].value);
		}
	free(names);
	free(vals);
}

void
sluiced_report_json(const struct sluiced *d, FILE *f)
{
	struct json_ctx j = {f, true};
	char prefix[32];

	fputc('{', f);
	json_str(&j, "name", d->conf.name);
	for (unsigned int i = 0; i < d->nb_ports; i++) {
		snprintf(prefix, sizeof(prefix), "p%u/", i);
		port_view(d, i, prefix, &json_ops, &j);
		snprintf(prefix, sizeof(prefix), "p%u/link/", i);
		link_view(d, i, prefix, false, &json_ops, &j);
		snprintf(prefix, sizeof(prefix), "p%u/", i);
		xstats_view(d, i, prefix, &j);
	}
	fputs("}\n", f);
	if (d->conf.traffic.mode != SLUICED_TRAFFIC_OFF) {
		j.first = true;
		fputc('{', f);
		traffic_view(d, &json_ops, &j);
		fputs("}\n", f);
	}
	if (d->conf.qp.count)
		qp_report_json(d, f);
	fflush(f);
}
