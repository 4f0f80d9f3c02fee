/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * view.c - what sluiced shows of itself, walked once for both outputs (view.h): each port's
 * counters and its lanes' (sluiced_port_view), its links' (sluiced_link_view), the link test
 * traffic (sluiced_traffic_view), and the queue pairs, one (sluiced_qp_view) or all summed
 * (sluiced_qp_totals_view). Counters
 * are read with relaxed loads while the workers run: each value is exact, and a snapshot of
 * several is consistent to within the frames of one burst.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "view.h"

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
void
sluiced_port_view(const struct sluiced *d, unsigned int i, const char *prefix,
		  const struct view_ops *ops, void *ctx)
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
void
sluiced_link_view(const struct sluiced *d, unsigned int i, const char *prefix, bool lanes,
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
void
sluiced_traffic_view(const struct sluiced *d, const struct view_ops *ops, void *ctx)
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
uint32_t
sluiced_qpn_end(const struct sluiced *d)
{
	return d->nb_chans ? sluiced_app_qpn_base(&d->conf) + d->conf.api.qps : d->conf.qp.count;
}

/* The adapter that carries qpn on port i, with its lane; NULL when none does. */
const struct sl_dp_qp *
sluiced_qp_adapter(const struct sluiced *d, unsigned int i, uint32_t qpn, uint16_t *lane)
{
	const struct sl_dp_port *p = &d->port[i];
	const struct sl_dp_qp *a;

	if (i >= d->nb_ports || qpn >= sluiced_qpn_end(d) || p->nb_queues == 0)
		return NULL;
	if (qpn >= sluiced_app_qpn_base(&d->conf) && d->nb_chans) {
		/* an application's: on the port 0 lane it was placed on when it connected */
		for (uint16_t q = 0; i == 0 && q < d->nb_chans; q++) {
			a = d->qp[0][q];
			if (a && sl_dp_qp_has(a, qpn)) {
				*lane = q;
				return a;
			}
		}
		return NULL;
	}
	*lane = (uint16_t)(qpn % p->nb_queues);
	a = d->qp[i][*lane];
	return a && sl_dp_qp_has(a, qpn) ? a : NULL;
}

/* A QP's program: [qp]'s for its own, the info snapshot's for an application's ("?" before). */
const char *
sluiced_qp_proto(const struct sluiced *d, const struct sl_dp_qp *a, uint32_t qpn)
{
	static __thread struct sl_xport_qp_info info;

	if (qpn < d->conf.qp.count)
		return d->conf.qp.proto_name[qpn % d->conf.qp.nb_protos];
	return sl_dp_qp_info_get(a, qpn, &info) == 0 ? info.proto : "?";
}

/* The built-in message traffic on port i's lane (NULL: none there). */
const struct sl_traffic_msg *
sluiced_lane_msgs(const struct sluiced *d, unsigned int i, uint16_t lane)
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

void
sluiced_qp_summary_get(const struct sluiced *d, unsigned int i, uint16_t lane,
		       const struct sl_dp_qp *a, uint32_t qpn, struct qp_summary *s)
{
	const struct sl_traffic_msg *t = sluiced_lane_msgs(d, i, lane);

	memset(s, 0, sizeof(*s));
	sl_dp_qp_lifetime_stats(a, qpn, &s->st);
	s->checked = t != NULL ? sl_traffic_msg_qp_checked(t, qpn) : 0;
}

/* Everything of one QP: its counters, checked messages, info snapshot, its lane's counters. */
void
sluiced_qp_view(const struct sluiced *d, unsigned int i, uint32_t qpn, const struct sl_dp_qp *a,
		uint16_t lane, const struct view_ops *ops, void *ctx)
{
	struct qp_summary s;
	struct sl_xport_qp_info info;
	struct sl_traffic_msg_stats ts;
	struct sl_dp_qp_stats as;
	char key[96];

	sluiced_qp_summary_get(d, i, lane, a, qpn, &s);
	ops->u64(ctx, "qpn", qpn);
	ops->u64(ctx, "port", i);
	ops->u64(ctx, "lane", lane);
	ops->str(ctx, "proto", sluiced_qp_proto(d, a, qpn));
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
	msgs_stats_get(sluiced_lane_msgs(d, i, lane), &ts);
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
void
sluiced_qp_totals_view(const struct sluiced *d, const char *prefix, bool at_exit,
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
			const struct sl_traffic_msg *t = sluiced_lane_msgs(d, i, (uint16_t)q);
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

				sluiced_qp_summary_get(d, i, (uint16_t)q, a, qpn, &s);
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
