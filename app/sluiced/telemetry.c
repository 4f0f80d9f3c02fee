/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * telemetry.c - what sluiced shows of itself through DPDK telemetry (dpdk-telemetry.py -f
 * <file-prefix>). The values come from the walks of view.c, which the JSON lines at exit
 * (report.c) share, so the two can never disagree.
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

#include "view.h"
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
		sluiced_port_view(d, (unsigned int)i, "", &tel_ops, out);
		return 0;
	}
	for (unsigned int i = 0; i < d->nb_ports; i++) {
		snprintf(prefix, sizeof(prefix), "p%u/", i);
		sluiced_port_view(d, i, prefix, &tel_ops, out);
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
	sluiced_link_view(d, (unsigned int)i, "", true, &tel_ops, out);
	return 0;
}

static int
handle_traffic(const char *cmd, const char *params, struct rte_tel_data *out)
{
	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(out);
	sluiced_traffic_view(daemon_state, &tel_ops, out);
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
		for (uint32_t qpn = 0; qpn < sluiced_qpn_end(d) && listed < QPS_LISTED; qpn++) {
			uint16_t lane;
			const struct sl_dp_qp *a = sluiced_qp_adapter(d, i, qpn, &lane);
			struct qp_summary s;
			uint64_t v[SL_ARRAY_SIZE(cols)];

			if (a == NULL)
				continue;
			sluiced_qp_summary_get(d, i, lane, a, qpn, &s);
			v[0] = qpn, v[1] = i, v[2] = lane, v[3] = s.st.msgs_posted;
			v[4] = s.st.msgs_completed, v[5] = s.st.msgs_received, v[6] = s.checked;
			v[7] = s.st.pkts_rtx, v[8] = s.st.wire_bytes_received;
			tel_columns_row(&t, v, sluiced_qp_proto(d, a, qpn));
			listed++;
		}
	/* When these counters were read, on the daemon's clock: two replies give rates. */
	tel_dict_u64(out, "now_ns", sl_tsc_clock_now_ns(&d->clock));
	tel_dict_u64(out, "listed", listed);
	tel_columns_add(&t, out);
	sluiced_qp_totals_view(d, "totals/", false, &tel_ops, out);
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
	memset(&ls, 0, sizeof(ls));
	for (unsigned int q = 0; q < d->nb_chans; q++) {
		struct sl_chan_lane_stats one;

		sl_chan_lane_stats_get(d->chan[q], &one);
		sl_stats_accumulate(&ls, &one, &sl_chan_lane_stat_table);
	}
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
	a = sluiced_qp_adapter(d, (unsigned int)port, (uint32_t)qpn, &lane);
	if (a == NULL)
		return -EINVAL;
	rte_tel_data_start_dict(out);
	/* When these counters were read, on the daemon's clock: two replies give rates. */
	tel_dict_u64(out, "now_ns", sl_tsc_clock_now_ns(&d->clock));
	sluiced_qp_view(d, (unsigned int)port, (uint32_t)qpn, a, lane, &tel_ops, out);
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
