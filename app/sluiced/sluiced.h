/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sluiced.h - the daemon's state, shared by main.c (lifecycle), ports.c and serve.c (start-up),
 * telemetry.c (read-only views) and the worker loops.
 */
#ifndef SLUICED_H
#define SLUICED_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_log.h>

#include "config.h"
#include "sl_chan.h"
#include "sl_dp.h"
#include "sl_traffic.h"
#include "sl_time.h"

struct sluiced {
	struct sluiced_conf conf;
	struct sl_tsc_clock clock; /**< TSC -> ns, calibrated at start (SLUICED_TSC_CALIB_NS) */
	uint64_t start_ns;         /**< clock time when the ports came up */
	struct rte_mempool *pool[RTE_MAX_NUMA_NODES]; /**< packet pools, one per NUMA node used */
	struct rte_mempool
		*umem_pool[RTE_MAX_NUMA_NODES]; /**< the same for AF_XDP ports, packed
						 *   as their UMEM needs (lib/dp/pool.c) */
	struct sl_dp_port port[SL_DP_MAX_PORTS];
	unsigned int nb_ports;
	struct sl_link_conf link;                         /**< every lane's link settings */
	struct sl_traffic_link *traffic[SL_DP_MAX_PORTS]; /**< per port, one per lane; NULL: off */
	/** [qp] or [api]: the QP adapter per port and lane (NULL: none on that lane) */
	struct sl_dp_qp *qp[SL_DP_MAX_PORTS][SL_DP_MAX_QUEUES];
	/** [qp]: the built-in traffic on each adapter's QPs (NULL: none on that lane) */
	struct sl_traffic_qps *msgs[SL_DP_MAX_PORTS][SL_DP_MAX_QUEUES];
	/* [api]: applications (NULL: off) */
	struct sl_chan_mrs *mrs; /**< the key table of every application's memory regions */
	struct sl_chan_lane *chan[SL_DP_MAX_QUEUES]; /**< the lane half on each of port 0's lanes */
	unsigned int nb_chans;                       /**< port 0's lanes: 0 without [api] */
	struct sl_chan_srv *srv; /**< the control half; the control thread frees it at stop */
	pthread_t ctl;           /**< the control thread */
	bool ctl_started;
	bool lanes_may_stop; /**< after stop: the control thread is done with the lanes (atomic) */
	struct sl_dp_worker worker[RTE_MAX_LCORE]; /**< indexed by worker number */
	struct sl_dp_port *port_ptr[SL_DP_MAX_PORTS];
	unsigned int nb_workers; /**< worker loops (1 in single-lcore mode) */
	unsigned int numa_nodes; /**< NUMA nodes libnuma reports (1 without NUMA) */
	volatile bool stop;      /**< set by SIGINT/SIGTERM or --duration-s */
};

/* The daemon's log lines (main.c registers the type). */
extern int sluiced_logtype;
#define LOG(level, fmt, ...)                                                                       \
	rte_log(RTE_LOG_##level, sluiced_logtype, "sluiced: " fmt "\n", ##__VA_ARGS__)

/*
 * Start-up, in main()'s order; each returns 0, or -1 after a `file:line:` message on stderr.
 * ports.c: map every [port] device to its ethdev port (pid[], indexed as conf.port); the
 * [link] settings every lane takes; the pools' size, then the pools; open every port.
 */
int sluiced_resolve_ports(const struct sluiced *d, uint16_t *pid);
int sluiced_link_settings(struct sluiced *d);
int sluiced_pool_size(struct sluiced *d);
int sluiced_create_pools(struct sluiced *d, const uint16_t *pid);
int sluiced_open_ports(struct sluiced *d, const uint16_t *pid);
/* Warn when a worker lcore sits on another NUMA node than a port it polls. */
void sluiced_check_numa(struct sluiced *d);
/* serve.c: the link test traffic ([traffic]), the built-in QPs ([qp]), the applications' server
 * ([api]). */
int sluiced_setup_traffic(struct sluiced *d);
int sluiced_setup_qps(struct sluiced *d);
int sluiced_setup_srv(struct sluiced *d);

/* telemetry.c: register /sluice/info, /sluice/ports, /sluice/link, /sluice/traffic, /sluice/qps,
 * /sluice/qp and, with [api], /sluice/api and /sluice/clients. 0 or -errno. */
int sluiced_telemetry_register(struct sluiced *d);

/*
 * report.c: the exit report: one JSON line with every port (and its links' totals); with test
 * traffic, a second line with the checker's summary; with queue pairs, one line per QP and a totals
 * line.
 */
void sluiced_report_json(const struct sluiced *d, FILE *f);

/*
 * QPNs of a lane: [qp]'s built-in QPs [0, count), their exchange QP at count (lib/dp's
 * exchange.c: both daemons agree on their tokens and first PSNs there), then the applications'
 * ([api], on port 0's lanes) from sluiced_app_qpn_base().
 */
static inline uint32_t
sluiced_exchange_qpn(const struct sluiced_conf *c)
{
	return c->qp.count; /* 0 without [qp] QPs: no exchange */
}

static inline uint32_t
sluiced_app_qpn_base(const struct sluiced_conf *c)
{
	return c->qp.count ? c->qp.count + 1 : 0;
}

#endif /* SLUICED_H */
