/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * telemetry.c - what sluiced shows of itself: /sluice/info and /sluice/ports through DPDK
 * telemetry (dpdk-telemetry.py -f <file-prefix>), and the same port view as a JSON line at exit.
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
	rte_ether_format_addr(mac, sizeof(mac), &p->mac);
	ops->str(ctx, KEY("mac"), mac);
	sl_dp_port_peer(p, &peer);
	rte_ether_format_addr(mac, sizeof(mac), &peer);
	ops->str(ctx, KEY("peer_mac"), mac);
	ops->str(ctx, KEY("peer_state"), sl_dp_port_peer_up(p, now) ? "up" : "down");
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

	snprintf(key, sizeof(key), "%sstate", prefix);
	ops->str(ctx, key, sl_link_state_name(sl_link_state(p->lane[0].link)));
	for (unsigned int q = 0; q < p->nb_queues; q++)
		sl_link_stats_get(p->lane[q].link, &snap[q]);
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
}

/* Test traffic summed over every lane of every port, as the checker's summary. */
static void
traffic_view(const struct sluiced *d, const struct view_ops *ops, void *ctx)
{
	static const char *const modes[] = {"off", "send", "check", "both"};
	struct sl_dp_traffic_stats sum = {0};
	struct sl_hist h;
	uint64_t replays = 0, now;

	sl_hist_reset(&h);
	for (unsigned int i = 0; i < d->nb_ports; i++) {
		const struct sl_dp_port *p = &d->port[i];

		for (unsigned int q = 0; q < p->nb_queues && d->traffic[i]; q++) {
			struct sl_dp_traffic_stats t;

			sl_stats_snapshot(&t, &d->traffic[i][q].stats, sl_dp_traffic_stat_table.n);
			for (unsigned int s = 0; s < sl_dp_traffic_stat_table.n; s++) {
				size_t off = sl_dp_traffic_stat_table.desc[s].offset;
				uint64_t *dst = (uint64_t *)((char *)&sum + off);
				uint64_t v = sl_stat_get(&t, &sl_dp_traffic_stat_table.desc[s]);
				const char *name = sl_dp_traffic_stat_table.desc[s].name;

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
	for (unsigned int s = 0; s < sl_dp_traffic_stat_table.n; s++)
		ops->u64(ctx, sl_dp_traffic_stat_table.desc[s].name,
			 sl_stat_get(&sum, &sl_dp_traffic_stat_table.desc[s]));
	ops->u64(ctx, "replays", replays);
	/* Rates are numbers in bit/s, each with its window: first to last delivery (what the
	 * link carried while payloads came), and first delivery to now (falls in a stall). */
	now = sl_tsc_clock_now_ns(&d->clock);
	ops->u64(ctx, "goodput_bps", sl_dp_traffic_goodput_bps(&sum, sum.last_ns));
	ops->u64(ctx, "goodput_window_ns", sum.delivered ? sum.last_ns - sum.first_ns : 0);
	ops->u64(ctx, "goodput_to_now_bps", sl_dp_traffic_goodput_bps(&sum, now));
	ops->u64(ctx, "goodput_to_now_window_ns", sum.delivered ? now - sum.first_ns : 0);
	ops->u64(ctx, "recovery_us_p50", sl_hist_quantile(&h, 0.50) / SL_NS_PER_US);
	ops->u64(ctx, "recovery_us_p99", sl_hist_quantile(&h, 0.99) / SL_NS_PER_US);
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
	}
	fputs("}\n", f);
	if (d->conf.traffic.mode != SLUICED_TRAFFIC_OFF) {
		j.first = true;
		fputc('{', f);
		traffic_view(d, &json_ops, &j);
		fputs("}\n", f);
	}
	fflush(f);
}
