/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * report.c - sluiced's JSON lines at exit: the port view (view.c) of every port with every
 * ethdev xstat (p<N>/xstats/<name>, which telemetry does not repeat), its links' totals, the
 * link test traffic's checker, and with [qp] one line per QP and a line of totals.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>

#include "view.h"

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
			const struct sl_dp_qp *a = sluiced_qp_adapter(d, i, qpn, &lane);
			const struct sl_traffic_msg *t;
			struct sl_traffic_msg_stats ts;
			struct sl_xport_qp_info info;
			struct qp_summary s;

			if (a == NULL)
				continue;
			t = sluiced_lane_msgs(d, i, lane);
			sluiced_qp_summary_get(d, i, lane, a, qpn, &s);
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
			/* The lanes have stopped: their scheduler state may be read here (a QP
			 * waiting for its connection exchange: its last session's snapshot). */
			if (sl_xport_qp_info_get(sl_dp_qp_xport(a), qpn, &info) == 0 ||
			    sl_dp_qp_info_get(a, qpn, &info) == 0) {
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
	sluiced_qp_totals_view(d, "qps/", true, &json_ops, &j);
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
		sluiced_port_view(d, i, prefix, &json_ops, &j);
		snprintf(prefix, sizeof(prefix), "p%u/link/", i);
		sluiced_link_view(d, i, prefix, false, &json_ops, &j);
		snprintf(prefix, sizeof(prefix), "p%u/", i);
		xstats_view(d, i, prefix, &j);
	}
	fputs("}\n", f);
	if (d->conf.traffic.mode != SLUICED_TRAFFIC_OFF) {
		j.first = true;
		fputc('{', f);
		sluiced_traffic_view(d, &json_ops, &j);
		fputs("}\n", f);
	}
	if (d->conf.qp.count)
		qp_report_json(d, f);
	fflush(f);
}
