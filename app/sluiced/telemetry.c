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
 * Per-queue counters are arrays indexed by queue: q/<counter>.
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

static uint64_t
load64(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

/* Every field of one port, with keys prefixed by prefix ("" or "p0/"). */
static void
port_view(const struct sluiced *d, unsigned int i, const char *prefix,
	  const struct view_ops *ops, void *ctx)
{
	const struct sl_dp_port *p = &d->port[i];
	uint64_t now = sl_tsc_clock_now_ns(&d->clock);
	uint64_t perq[SL_DP_MAX_QUEUES];
	char key[96], mac[RTE_ETHER_ADDR_FMT_SIZE];
	struct rte_eth_stats es;

#define KEY(name) (snprintf(key, sizeof(key), "%s%s", prefix, name), key)
	ops->str(ctx, KEY("device"), p->name);
	ops->u64(ctx, KEY("port_id"), p->port_id);
	ops->u64(ctx, KEY("socket_id"), (uint64_t)(p->socket_id < 0 ? 0 : p->socket_id));
	ops->u64(ctx, KEY("queues"), p->nb_queues);
	rte_ether_format_addr(mac, sizeof(mac), &p->mac);
	ops->str(ctx, KEY("mac"), mac);
	rte_ether_format_addr(mac, sizeof(mac), &p->peer);
	ops->str(ctx, KEY("peer_mac"), mac);
	ops->str(ctx, KEY("peer_state"), sl_dp_port_peer_up(p, now) ? "up" : "down");
	ops->u64(ctx, KEY("peer_up_transitions"), load64(&p->peer_up_count));
	for (unsigned int s = 0; s < sl_dp_queue_stat_count; s++) {
		const struct sl_stat_desc *sd = &sl_dp_queue_stat_desc[s];
		uint64_t total = 0;

		for (unsigned int q = 0; q < p->nb_queues; q++) {
			perq[q] = load64((const uint64_t *)((const char *)&p->q[q] + sd->offset));
			total += perq[q];
		}
		ops->u64(ctx, KEY(sd->name), total);
		snprintf(key, sizeof(key), "%sq/%s", prefix, sd->name);
		ops->u64_array(ctx, key, perq, p->nb_queues);
	}
	if (p->started && rte_eth_stats_get(p->port_id, &es) == 0) {
		ops->u64(ctx, KEY("nic_rx_missed"), es.imissed);
		ops->u64(ctx, KEY("nic_rx_errors"), es.ierrors);
		ops->u64(ctx, KEY("nic_tx_errors"), es.oerrors);
		ops->u64(ctx, KEY("nic_rx_nombuf"), es.rx_nombuf);
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

static int
handle_ports(const char *cmd, const char *params, struct rte_tel_data *out)
{
	const struct sluiced *d = daemon_state;
	char prefix[16];

	(void)cmd;
	rte_tel_data_start_dict(out);
	if (params && *params) {
		char *end;
		unsigned long i = strtoul(params, &end, 10);

		if (*end != '\0' || i >= d->nb_ports)
			return -EINVAL;
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
	tel_dict_u64(out, "workers", d->nb_workers);
	tel_dict_u64(out, "lcores", rte_lcore_count());
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
	char prefix[16];

	fputc('{', f);
	json_str(&j, "name", d->conf.name);
	for (unsigned int i = 0; i < d->nb_ports; i++) {
		snprintf(prefix, sizeof(prefix), "p%u/", i);
		port_view(d, i, prefix, &json_ops, &j);
	}
	fputs("}\n", f);
	fflush(f);
}
