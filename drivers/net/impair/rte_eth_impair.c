/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rte_eth_impair.c - net_impair: a DPDK vdev PMD that impairs the traffic of another port.
 *
 *   --vdev net_ring0 --vdev 'net_impair0,dev=net_ring0,tx_loss=0.01,rx_delay_ns=100000'
 *
 * The device wraps one underlying port (named by dev=, probed before it), takes ownership of it
 * so applications see only the impaired port, and forwards configuration, queue setup, start,
 * stop, link, MTU and promiscuous mode to it. Each RX and TX queue runs its own impairment
 * engine (impair_engine.c): TX bursts pass the engine before the underlying port's TX, RX bursts
 * pass it after the underlying port's RX. Keys with a tx_ or rx_ prefix set one direction, bare
 * keys both; queue q of direction d seeds its engine with seed + (2q + d) * 0x9e3779b97f4a7c15
 * (d = 0 for TX), so TX queue 0 uses the seed as given. Time is the TSC in ns.
 *
 * With every impairment off and no frame held the burst functions call the underlying port
 * directly (one pointer load and branch more than the bare port). Frames held for delay, rate
 * or reordering on the TX side are released by later tx_burst calls on that queue (a call with
 * zero frames is enough), and also by rx_burst on the same queue index with tx_flush_on_rx=1
 * (for applications that poll a queue pair from one lcore); RX releases on every rx_burst.
 *
 * Counters: the basic stats are the underlying port's, with RX counting what the application
 * received (opackets: what left after TX impairments; ipackets: what was delivered after RX
 * impairments); each engine counter is an xstat named rx_impair_<counter> /
 * tx_impair_<counter>, summed over queues.
 * Runtime changes: telemetry command /sluice/impair/set,<port>,<key>=<value>[,...] (applied at
 * each queue's next burst), /sluice/impair/show,<port>. docs/impair.md has the full reference.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_kvargs.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_spinlock.h>
#include <rte_telemetry.h>

#include "impair_sdk.h"

#include "impair_engine.h"
#include "sl_time.h"

#define IMPAIR_DRIVER net_impair
#define IMPAIR_BURST 64u /**< frames moved per engine step */
#define SEED_STRIDE UINT64_C(0x9e3779b97f4a7c15)

RTE_LOG_REGISTER(impair_logtype, sluice.impair, INFO);
#define IMPAIR_LOG(level, fmt, ...)                                                                \
	rte_log(RTE_LOG_##level, impair_logtype, "net_impair: " fmt "\n", ##__VA_ARGS__)

enum impair_dir { DIR_TX, DIR_RX, DIR_COUNT };
static const char *const dir_name[DIR_COUNT] = {"tx", "rx"};

struct impair_port;

struct impair_queue {
	struct sl_impair *eng;
	struct impair_port *port;
	uint16_t under_port; /**< underlying port id */
	uint16_t qid;
	bool bypass;            /**< engine idle: call the underlying port directly */
	int64_t rx_delta_pkts;  /**< RX: frames delivered minus frames received from the port */
	int64_t rx_delta_bytes; /**< RX: the same in bytes */
	_Atomic(struct sl_impair_conf *) pending; /**< new parameters from telemetry */
};

struct impair_port {
	uint16_t port_id;
	uint16_t under_port;
	char name[RTE_ETH_NAME_MAX_LEN];
	struct rte_eth_dev_owner owner; /**< our ownership of the underlying port */
	struct sl_tsc_clock clock;
	rte_spinlock_t lock; /**< conf[] and queue lists: control thread vs telemetry */
	struct sl_impair_conf conf[DIR_COUNT];
	struct impair_queue *queues[DIR_COUNT][RTE_MAX_QUEUES_PER_PORT];
	bool tx_flush_on_rx; /**< rx_burst on queue q also releases TX queue q's due frames */
};

/* Impair ports by port id, for the telemetry commands. */
static struct impair_port *impair_ports[RTE_MAX_ETHPORTS];
static rte_spinlock_t impair_ports_lock = RTE_SPINLOCK_INITIALIZER;

/* ---- frame operations for the engine: mbufs ---- */

static void
mbuf_free(void *ctx, void *handle)
{
	(void)ctx;
	rte_pktmbuf_free(handle);
}

static void *
mbuf_clone(void *ctx, void *handle)
{
	struct rte_mbuf *m = handle;

	(void)ctx;
	return rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);
}

static bool
mbuf_private(const struct rte_mbuf *m)
{
	for (; m != NULL; m = m->next)
		if (!RTE_MBUF_DIRECT(m) || rte_mbuf_refcnt_read(m) != 1)
			return false;
	return true;
}

static void *
mbuf_corrupt(void *ctx, void *handle, const uint32_t *bit_off, unsigned n)
{
	struct rte_mbuf *m = handle;

	(void)ctx;
	if (!mbuf_private(m)) {
		struct rte_mbuf *copy = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);

		rte_pktmbuf_free(m);
		if (copy == NULL)
			return NULL;
		m = copy;
	}
	for (unsigned i = 0; i < n; i++) {
		uint32_t byte = bit_off[i] / 8;
		struct rte_mbuf *seg = m;

		while (seg != NULL && byte >= seg->data_len) {
			byte -= seg->data_len;
			seg = seg->next;
		}
		if (seg != NULL)
			*rte_pktmbuf_mtod_offset(seg, uint8_t *, byte) ^=
				(uint8_t)(0x80u >> (bit_off[i] % 8));
	}
	return m;
}

static const struct sl_impair_ops mbuf_ops = {
	.free = mbuf_free,
	.clone = mbuf_clone,
	.corrupt = mbuf_corrupt,
};

/* ---- fast path ---- */

static void
queue_apply_pending(struct impair_queue *q)
{
	struct sl_impair_conf *c =
		atomic_exchange_explicit(&q->pending, NULL, memory_order_acquire);

	if (c == NULL)
		return;
	sl_impair_reconfigure(q->eng, c); /* checked by the telemetry handler */
	free(c);
	q->bypass = sl_impair_idle(q->eng);
}

static inline bool
queue_bypass(struct impair_queue *q)
{
	return q->bypass && atomic_load_explicit(&q->pending, memory_order_relaxed) == NULL;
}

/* Offer n mbufs to the engine; returns their bytes. */
static uint64_t
admit_mbufs(struct impair_queue *q, struct rte_mbuf **pkts, unsigned n, uint64_t now_ns)
{
	struct sl_impair_frame f[IMPAIR_BURST];
	uint64_t bytes = 0;

	for (unsigned i = 0; i < n; i += IMPAIR_BURST) {
		unsigned b = RTE_MIN(IMPAIR_BURST, n - i);

		for (unsigned j = 0; j < b; j++) {
			f[j].handle = pkts[i + j];
			f[j].len_bytes = pkts[i + j]->pkt_len;
			bytes += f[j].len_bytes;
		}
		sl_impair_admit(q->eng, f, b, now_ns);
	}
	return bytes;
}

/* Send the frames due at now_ns; false when the underlying port refused some. */
static bool
tx_flush(struct impair_queue *q, uint64_t now_ns)
{
	struct rte_mbuf *out[IMPAIR_BURST];
	unsigned due, sent;

	do {
		due = sl_impair_peek(q->eng, now_ns, (void **)out, IMPAIR_BURST);
		sent = due > 0 ? rte_eth_tx_burst(q->under_port, q->qid, out, (uint16_t)due) : 0;
		sl_impair_consume(q->eng, sent);
	} while (due == IMPAIR_BURST && sent == due);
	return sent == due;
}

/*
 * tx_flush_on_rx: release TX queue tq's due frames from the RX poll of the same queue index.
 * The application polls both queues from one lcore (it promised so by setting the devarg).
 */
static void
tx_poll(struct impair_queue *tq)
{
	if (tq == NULL || queue_bypass(tq))
		return;
	queue_apply_pending(tq);
	tx_flush(tq, sl_tsc_clock_now_ns(&tq->port->clock));
	tq->bypass = sl_impair_idle(tq->eng);
}

static uint16_t
impair_rx_burst(void *queue, struct rte_mbuf **pkts, uint16_t n)
{
	struct impair_queue *q = queue;
	struct rte_mbuf *in[IMPAIR_BURST];
	uint64_t now_ns;
	unsigned got;

	if (sl_unlikely(q->port->tx_flush_on_rx))
		tx_poll(q->port->queues[DIR_TX][q->qid]);
	if (sl_likely(queue_bypass(q)))
		return rte_eth_rx_burst(q->under_port, q->qid, pkts, n);
	queue_apply_pending(q);
	now_ns = sl_tsc_clock_now_ns(&q->port->clock);
	/* Frames already due go first; the port is read only for the room left. */
	got = sl_impair_peek(q->eng, now_ns, (void **)pkts, n);
	sl_impair_consume(q->eng, got);
	if (got < n) {
		unsigned k = rte_eth_rx_burst(q->under_port, q->qid, in,
					      (uint16_t)RTE_MIN(n - got, IMPAIR_BURST));
		unsigned more;

		q->rx_delta_pkts -= k;
		q->rx_delta_bytes -= (int64_t)admit_mbufs(q, in, k, now_ns);
		more = sl_impair_peek(q->eng, now_ns, (void **)pkts + got, n - got);
		sl_impair_consume(q->eng, more);
		got += more;
	}
	q->rx_delta_pkts += got;
	for (unsigned i = 0; i < got; i++)
		q->rx_delta_bytes += pkts[i]->pkt_len;
	q->bypass = sl_impair_idle(q->eng);
	return (uint16_t)got;
}

/*
 * Due frames go out first; while the underlying port refuses them, new frames are refused too
 * (the application keeps them, as with a full NIC queue), so the engine holds at most one burst
 * beyond what its delay and rate cap hold by design.
 */
static uint16_t
impair_tx_burst(void *queue, struct rte_mbuf **pkts, uint16_t n)
{
	struct impair_queue *q = queue;
	uint64_t now_ns;

	if (sl_likely(queue_bypass(q)))
		return rte_eth_tx_burst(q->under_port, q->qid, pkts, n);
	queue_apply_pending(q);
	now_ns = sl_tsc_clock_now_ns(&q->port->clock);
	if (!tx_flush(q, now_ns))
		return 0;
	admit_mbufs(q, pkts, n, now_ns);
	tx_flush(q, now_ns);
	q->bypass = sl_impair_idle(q->eng);
	return n; /* the engine owns every frame it was offered */
}

/* ---- configuration ---- */

/* The engine parameters of queue qid in direction d. */
static void
queue_conf(const struct impair_port *p, enum impair_dir d, uint16_t qid, struct sl_impair_conf *out)
{
	*out = p->conf[d];
	out->seed += ((uint64_t)qid * 2 + d) * SEED_STRIDE;
}

/*
 * Apply "key=value": tx_/rx_ prefix for one direction, none for both. 0 or -errno with a
 * message in err that starts with the key as given.
 */
static int
conf_apply_kv(struct sl_impair_conf conf[DIR_COUNT], const char *key, const char *value, char *err,
	      size_t err_len)
{
	int first = DIR_TX, last = DIR_RX, rc = 0;
	const char *bare = key;
	char msg[160];

	if (strncmp(key, "tx_", 3) == 0 || strncmp(key, "rx_", 3) == 0) {
		first = last = key[0] == 't' ? DIR_TX : DIR_RX;
		bare = key + 3;
	}
	for (int d = first; d <= last && rc == 0; d++)
		rc = sl_impair_conf_set(&conf[d], bare, value, msg, sizeof(msg));
	if (rc == -ENOENT)
		snprintf(err, err_len, "unknown key '%s'", key);
	else if (rc != 0)
		snprintf(err, err_len, "%.*s%s", (int)(bare - key), key, msg);
	return rc;
}

static int
conf_check_both(const struct sl_impair_conf conf[DIR_COUNT], char *err, size_t err_len)
{
	for (int d = 0; d < DIR_COUNT; d++) {
		char msg[160];

		if (sl_impair_conf_check(&conf[d], msg, sizeof(msg)) != 0) {
			snprintf(err, err_len, "%s_%s", dir_name[d], msg);
			return -EINVAL;
		}
	}
	return 0;
}

/* ---- control path ---- */

static struct impair_port *
port_of(struct rte_eth_dev *dev)
{
	return dev->data->dev_private;
}

static int
impair_dev_configure(struct rte_eth_dev *dev)
{
	struct impair_port *p = port_of(dev);
	int rc = rte_eth_dev_configure(p->under_port, dev->data->nb_rx_queues,
				       dev->data->nb_tx_queues, &dev->data->dev_conf);

	if (rc != 0)
		IMPAIR_LOG(ERR, "%s: configuring the underlying port failed: %s", p->name,
			   rte_strerror(-rc));
	return rc;
}

static int
impair_dev_start(struct rte_eth_dev *dev)
{
	return rte_eth_dev_start(port_of(dev)->under_port);
}

static int
impair_dev_stop(struct rte_eth_dev *dev)
{
	return rte_eth_dev_stop(port_of(dev)->under_port);
}

static void
queue_free(struct impair_port *p, enum impair_dir d, uint16_t qid)
{
	struct impair_queue *q = p->queues[d][qid];

	if (q == NULL)
		return;
	rte_spinlock_lock(&p->lock);
	p->queues[d][qid] = NULL;
	rte_spinlock_unlock(&p->lock);
	sl_impair_free(q->eng);
	free(atomic_exchange(&q->pending, NULL));
	rte_free(q);
}

static int
impair_dev_close(struct rte_eth_dev *dev)
{
	struct impair_port *p = port_of(dev);

	if (rte_eal_process_type() != RTE_PROC_PRIMARY)
		return 0;
	for (int d = 0; d < DIR_COUNT; d++) {
		void **qs = d == DIR_TX ? dev->data->tx_queues : dev->data->rx_queues;

		for (uint16_t i = 0; i < RTE_MAX_QUEUES_PER_PORT; i++)
			queue_free(p, (enum impair_dir)d, i);
		for (uint16_t i = 0; qs != NULL && i < (d == DIR_TX ? dev->data->nb_tx_queues
								    : dev->data->nb_rx_queues);
		     i++)
			qs[i] = NULL;
	}
	rte_spinlock_lock(&impair_ports_lock);
	impair_ports[p->port_id] = NULL;
	rte_spinlock_unlock(&impair_ports_lock);
	rte_eth_dev_owner_unset(p->under_port, p->owner.id);
	return 0;
}

static int
impair_link_update(struct rte_eth_dev *dev, int wait_to_complete)
{
	struct rte_eth_link link;
	int rc;

	rc = wait_to_complete ? rte_eth_link_get(port_of(dev)->under_port, &link)
			      : rte_eth_link_get_nowait(port_of(dev)->under_port, &link);
	if (rc != 0)
		return rc;
	return rte_eth_linkstatus_set(dev, &link);
}

static int
impair_promiscuous_enable(struct rte_eth_dev *dev)
{
	return rte_eth_promiscuous_enable(port_of(dev)->under_port);
}

static int
impair_promiscuous_disable(struct rte_eth_dev *dev)
{
	return rte_eth_promiscuous_disable(port_of(dev)->under_port);
}

static int
impair_allmulticast_enable(struct rte_eth_dev *dev)
{
	return rte_eth_allmulticast_enable(port_of(dev)->under_port);
}

static int
impair_allmulticast_disable(struct rte_eth_dev *dev)
{
	return rte_eth_allmulticast_disable(port_of(dev)->under_port);
}

static int
impair_mtu_set(struct rte_eth_dev *dev, uint16_t mtu)
{
	return rte_eth_dev_set_mtu(port_of(dev)->under_port, mtu);
}

/* counter + delta, floored at 0 (some ports, net_null for one, do not count bytes). */
static void
stats_adjust(uint64_t *counter, int64_t delta)
{
	*counter = delta < 0 && (uint64_t)-delta > *counter ? 0 : *counter + (uint64_t)delta;
}

/*
 * The underlying port's counters, with RX counting what the application received: opackets is
 * what left on the wire after TX impairments, ipackets what was delivered after RX impairments.
 */
static int
impair_stats_get(struct rte_eth_dev *dev, struct rte_eth_stats *stats)
{
	struct impair_port *p = port_of(dev);
	int rc = rte_eth_stats_get(p->under_port, stats);

	if (rc != 0)
		return rc;
	rte_spinlock_lock(&p->lock);
	for (uint16_t i = 0; i < RTE_MAX_QUEUES_PER_PORT; i++) {
		const struct impair_queue *q = p->queues[DIR_RX][i];

		if (q == NULL)
			continue;
		stats_adjust(&stats->ipackets, q->rx_delta_pkts);
		stats_adjust(&stats->ibytes, q->rx_delta_bytes);
		if (i < RTE_ETHDEV_QUEUE_STAT_CNTRS) {
			stats_adjust(&stats->q_ipackets[i], q->rx_delta_pkts);
			stats_adjust(&stats->q_ibytes[i], q->rx_delta_bytes);
		}
	}
	rte_spinlock_unlock(&p->lock);
	return 0;
}

static int
impair_xstats_reset(struct rte_eth_dev *dev)
{
	struct impair_port *p = port_of(dev);

	rte_spinlock_lock(&p->lock);
	for (int d = 0; d < DIR_COUNT; d++)
		for (uint16_t i = 0; i < RTE_MAX_QUEUES_PER_PORT; i++)
			if (p->queues[d][i] != NULL)
				sl_impair_stats_reset(p->queues[d][i]->eng);
	rte_spinlock_unlock(&p->lock);
	return 0;
}

static int
impair_stats_reset(struct rte_eth_dev *dev)
{
	struct impair_port *p = port_of(dev);

	impair_xstats_reset(dev);
	rte_spinlock_lock(&p->lock);
	for (uint16_t i = 0; i < RTE_MAX_QUEUES_PER_PORT; i++) {
		if (p->queues[DIR_RX][i] != NULL) {
			p->queues[DIR_RX][i]->rx_delta_pkts = 0;
			p->queues[DIR_RX][i]->rx_delta_bytes = 0;
		}
	}
	rte_spinlock_unlock(&p->lock);
	return rte_eth_stats_reset(p->under_port);
}

static int
impair_xstats_get_names(struct rte_eth_dev *dev, struct rte_eth_xstat_name *names,
			unsigned int size)
{
	unsigned n = DIR_COUNT * sl_impair_stat_table.n;

	(void)dev;
	if (names == NULL || size < n)
		return (int)n;
	for (unsigned d = 0; d < DIR_COUNT; d++)
		for (unsigned i = 0; i < sl_impair_stat_table.n; i++)
			snprintf(names[d * sl_impair_stat_table.n + i].name, sizeof(names[0].name),
				 "%s_impair_%s", dir_name[d], sl_impair_stat_table.desc[i].name);
	return (int)n;
}

static int
impair_xstats_get(struct rte_eth_dev *dev, struct rte_eth_xstat *xs, unsigned int n)
{
	struct impair_port *p = port_of(dev);
	unsigned total = DIR_COUNT * sl_impair_stat_table.n;

	if (xs == NULL || n < total)
		return (int)total;
	rte_spinlock_lock(&p->lock);
	for (unsigned d = 0; d < DIR_COUNT; d++) {
		for (unsigned i = 0; i < sl_impair_stat_table.n; i++) {
			struct rte_eth_xstat *x = &xs[d * sl_impair_stat_table.n + i];

			x->id = d * sl_impair_stat_table.n + i;
			x->value = 0;
			for (uint16_t q = 0; q < RTE_MAX_QUEUES_PER_PORT; q++) {
				struct sl_impair_stats st;

				if (p->queues[d][q] == NULL)
					continue;
				sl_impair_stats_get(p->queues[d][q]->eng, &st);
				x->value += sl_stat_get(&st, &sl_impair_stat_table.desc[i]);
			}
		}
	}
	rte_spinlock_unlock(&p->lock);
	return (int)total;
}

static int
impair_dev_infos_get(struct rte_eth_dev *dev, struct rte_eth_dev_info *info)
{
	struct rte_eth_dev_info u;
	int rc = rte_eth_dev_info_get(port_of(dev)->under_port, &u);

	if (rc != 0)
		return rc;
	info->max_rx_queues = u.max_rx_queues;
	info->max_tx_queues = u.max_tx_queues;
	info->max_rx_pktlen = u.max_rx_pktlen;
	info->min_rx_bufsize = u.min_rx_bufsize;
	info->min_mtu = u.min_mtu;
	info->max_mtu = u.max_mtu;
	info->max_mac_addrs = 1;
	info->rx_offload_capa = u.rx_offload_capa;
	info->tx_offload_capa = u.tx_offload_capa;
	info->rx_queue_offload_capa = u.rx_queue_offload_capa;
	info->tx_queue_offload_capa = u.tx_queue_offload_capa;
	info->flow_type_rss_offloads = u.flow_type_rss_offloads;
	info->hash_key_size = u.hash_key_size;
	info->reta_size = u.reta_size;
	info->rx_desc_lim = u.rx_desc_lim;
	info->tx_desc_lim = u.tx_desc_lim;
	info->default_rxconf = u.default_rxconf;
	info->default_txconf = u.default_txconf;
	info->default_rxportconf = u.default_rxportconf;
	info->default_txportconf = u.default_txportconf;
	info->speed_capa = u.speed_capa;
	return 0;
}

static int
queue_setup(struct rte_eth_dev *dev, enum impair_dir d, uint16_t qid, unsigned socket_id)
{
	struct impair_port *p = port_of(dev);
	void **slot = d == DIR_TX ? &dev->data->tx_queues[qid] : &dev->data->rx_queues[qid];
	struct sl_impair_conf c;
	struct impair_queue *q;

	queue_free(p, d, qid);
	*slot = NULL;
	q = rte_zmalloc_socket("impair_queue", sizeof(*q), RTE_CACHE_LINE_SIZE, (int)socket_id);
	if (q == NULL)
		return -ENOMEM;
	rte_spinlock_lock(&p->lock);
	queue_conf(p, d, qid, &c);
	rte_spinlock_unlock(&p->lock);
	q->eng = sl_impair_create(&c, &mbuf_ops, NULL);
	if (q->eng == NULL) {
		int rc = -errno;

		rte_free(q);
		return rc;
	}
	q->port = p;
	q->under_port = p->under_port;
	q->qid = qid;
	q->bypass = sl_impair_idle(q->eng);
	atomic_init(&q->pending, NULL);
	rte_spinlock_lock(&p->lock);
	p->queues[d][qid] = q;
	rte_spinlock_unlock(&p->lock);
	*slot = q;
	return 0;
}

static int
impair_rx_queue_setup(struct rte_eth_dev *dev, uint16_t qid, uint16_t nb_desc,
		      unsigned int socket_id, const struct rte_eth_rxconf *conf,
		      struct rte_mempool *mp)
{
	int rc =
		rte_eth_rx_queue_setup(port_of(dev)->under_port, qid, nb_desc, socket_id, conf, mp);

	return rc != 0 ? rc : queue_setup(dev, DIR_RX, qid, socket_id);
}

static int
impair_tx_queue_setup(struct rte_eth_dev *dev, uint16_t qid, uint16_t nb_desc,
		      unsigned int socket_id, const struct rte_eth_txconf *conf)
{
	int rc = rte_eth_tx_queue_setup(port_of(dev)->under_port, qid, nb_desc, socket_id, conf);

	return rc != 0 ? rc : queue_setup(dev, DIR_TX, qid, socket_id);
}

static void
impair_rx_queue_release(struct rte_eth_dev *dev, uint16_t qid)
{
	queue_free(port_of(dev), DIR_RX, qid);
	dev->data->rx_queues[qid] = NULL;
}

static void
impair_tx_queue_release(struct rte_eth_dev *dev, uint16_t qid)
{
	queue_free(port_of(dev), DIR_TX, qid);
	dev->data->tx_queues[qid] = NULL;
}

static const struct eth_dev_ops impair_dev_ops = {
	.dev_configure = impair_dev_configure,
	.dev_start = impair_dev_start,
	.dev_stop = impair_dev_stop,
	.dev_close = impair_dev_close,
	.link_update = impair_link_update,
	.promiscuous_enable = impair_promiscuous_enable,
	.promiscuous_disable = impair_promiscuous_disable,
	.allmulticast_enable = impair_allmulticast_enable,
	.allmulticast_disable = impair_allmulticast_disable,
	.mtu_set = impair_mtu_set,
	.stats_get = impair_stats_get,
	.stats_reset = impair_stats_reset,
	.xstats_get = impair_xstats_get,
	.xstats_reset = impair_xstats_reset,
	.xstats_get_names = impair_xstats_get_names,
	.dev_infos_get = impair_dev_infos_get,
	.rx_queue_setup = impair_rx_queue_setup,
	.rx_queue_release = impair_rx_queue_release,
	.tx_queue_setup = impair_tx_queue_setup,
	.tx_queue_release = impair_tx_queue_release,
};

/* ---- telemetry: runtime parameter changes ---- */

/* Push the port's current parameters to every queue (applied at its next burst). */
static int
port_push_conf(struct impair_port *p)
{
	for (int d = 0; d < DIR_COUNT; d++) {
		for (uint16_t i = 0; i < RTE_MAX_QUEUES_PER_PORT; i++) {
			struct impair_queue *q = p->queues[d][i];
			struct sl_impair_conf *c;

			if (q == NULL)
				continue;
			c = malloc(sizeof(*c));
			if (c == NULL)
				return -ENOMEM;
			queue_conf(p, (enum impair_dir)d, i, c);
			free(atomic_exchange_explicit(&q->pending, c, memory_order_release));
		}
	}
	return 0;
}

static int
port_conf_dict(const struct impair_port *p, struct rte_tel_data *d)
{
	char buf[DIR_COUNT][4096];

	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_int(d, "port", p->port_id);
	rte_tel_data_add_dict_int(d, "underlying_port", p->under_port);
	for (int k = 0; k < DIR_COUNT; k++) {
		sl_impair_conf_format(&p->conf[k], buf[k], sizeof(buf[k]));
		rte_tel_data_add_dict_string(d, dir_name[k], buf[k]);
	}
	return 0;
}

/* Split "<port>,<rest>" and find the impair port. NULL with a message in err. */
static struct impair_port *
telemetry_port(const char *params, const char **rest, char *err, size_t err_len)
{
	struct impair_port *p = NULL;
	unsigned long id;
	char *end;

	if (params == NULL || *params < '0' || *params > '9') {
		snprintf(err, err_len, "expected <port>[,<key>=<value>...]");
		return NULL;
	}
	id = strtoul(params, &end, 10);
	if (id < RTE_MAX_ETHPORTS)
		p = impair_ports[id];
	if (p == NULL) {
		snprintf(err, err_len, "port %lu is not a net_impair port", id);
		return NULL;
	}
	*rest = *end == ',' ? end + 1 : end;
	return p;
}

static int
telemetry_reply_error(struct rte_tel_data *d, const char *err)
{
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "error", err);
	return 0;
}

static int
impair_telemetry_set(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct sl_impair_conf conf[DIR_COUNT];
	char err[192] = "", args[1024], *save = NULL;
	struct impair_port *p;
	const char *rest;
	int rc = 0;

	(void)cmd;
	rte_spinlock_lock(&impair_ports_lock);
	p = telemetry_port(params, &rest, err, sizeof(err));
	if (p == NULL)
		goto out;
	if (*rest == '\0' || strlen(rest) >= sizeof(args)) {
		snprintf(err, sizeof(err), "expected <port>,<key>=<value>[,...]");
		goto out;
	}
	strcpy(args, rest);
	rte_spinlock_lock(&p->lock);
	memcpy(conf, p->conf, sizeof(conf));
	for (char *kv = strtok_r(args, ",", &save); kv != NULL && rc == 0;
	     kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');

		if (eq == NULL) {
			snprintf(err, sizeof(err), "%s: expected <key>=<value>", kv);
			rc = -EINVAL;
			break;
		}
		*eq = '\0';
		if (strcmp(kv, "dev") == 0 || strcmp(kv, "tx_flush_on_rx") == 0 ||
		    strstr(kv, "queue_frames") != NULL) {
			snprintf(err, sizeof(err), "%s: fixed when the port is set up", kv);
			rc = -EINVAL;
			break;
		}
		rc = conf_apply_kv(conf, kv, eq + 1, err, sizeof(err));
	}
	if (rc == 0)
		rc = conf_check_both(conf, err, sizeof(err));
	if (rc == 0) {
		memcpy(p->conf, conf, sizeof(conf));
		rc = port_push_conf(p);
		if (rc != 0)
			snprintf(err, sizeof(err), "out of memory");
	}
	rte_spinlock_unlock(&p->lock);
	if (rc == 0)
		port_conf_dict(p, d);
out:
	rte_spinlock_unlock(&impair_ports_lock);
	return err[0] != '\0' ? telemetry_reply_error(d, err) : 0;
}

static int
impair_telemetry_show(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct impair_port *p;
	const char *rest;
	char err[128] = "";

	(void)cmd;
	rte_spinlock_lock(&impair_ports_lock);
	p = telemetry_port(params, &rest, err, sizeof(err));
	if (p != NULL) {
		rte_spinlock_lock(&p->lock);
		port_conf_dict(p, d);
		rte_spinlock_unlock(&p->lock);
	}
	rte_spinlock_unlock(&impair_ports_lock);
	return p == NULL ? telemetry_reply_error(d, err) : 0;
}

RTE_INIT(impair_telemetry_init)
{
	rte_telemetry_register_cmd("/sluice/impair/set", impair_telemetry_set,
				   "Change net_impair parameters. Parameters: int port_id, "
				   "then [tx_|rx_]<key>=<value>,... (docs/impair.md)");
	rte_telemetry_register_cmd("/sluice/impair/show", impair_telemetry_show,
				   "Show net_impair parameters. Parameters: int port_id");
}

/* ---- probe / remove ---- */

/* Parse devargs into p (underlying port name in under). 0 or -EINVAL, logged with the key. */
static int
parse_devargs(const char *name, const char *args, struct impair_port *p, char *under,
	      size_t under_len)
{
	struct rte_kvargs *kv = rte_kvargs_parse(args, NULL);
	char err[192];
	int rc = 0;

	if (kv == NULL) {
		IMPAIR_LOG(ERR, "%s: cannot parse devargs '%s' (expected key=value,...)", name,
			   args);
		return -EINVAL;
	}
	under[0] = '\0';
	for (unsigned i = 0; i < kv->count && rc == 0; i++) {
		const char *k = kv->pairs[i].key, *v = kv->pairs[i].value;

		if (v == NULL) {
			IMPAIR_LOG(ERR, "%s: devarg %s: expected %s=<value>", name, k, k);
			rc = -EINVAL;
		} else if (strcmp(k, "dev") == 0) {
			if (strlen(v) >= under_len) {
				IMPAIR_LOG(ERR, "%s: devarg dev=%s: name too long", name, v);
				rc = -EINVAL;
			}
			snprintf(under, under_len, "%s", v);
		} else if (strcmp(k, "tx_flush_on_rx") == 0) {
			if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0) {
				IMPAIR_LOG(ERR,
					   "%s: invalid devarg tx_flush_on_rx=%s: expected 0 or 1",
					   name, v);
				rc = -EINVAL;
			}
			p->tx_flush_on_rx = v[0] == '1';
		} else if (conf_apply_kv(p->conf, k, v, err, sizeof(err)) != 0) {
			IMPAIR_LOG(ERR, "%s: invalid devarg %s", name, err);
			rc = -EINVAL;
		}
	}
	rte_kvargs_free(kv);
	if (rc == 0 && under[0] == '\0') {
		IMPAIR_LOG(ERR, "%s: devarg dev=<underlying port name> is required", name);
		rc = -EINVAL;
	}
	if (rc == 0 && conf_check_both(p->conf, err, sizeof(err)) != 0) {
		IMPAIR_LOG(ERR, "%s: invalid devargs: %s", name, err);
		rc = -EINVAL;
	}
	return rc;
}

/*
 * The driver ABI as declared matches the running DPDK: a freshly allocated port's data holds
 * its name, a port id and the default MTU at the offsets we use (the MTU sits after the large
 * struct rte_eth_conf, so it also checks that struct's size).
 */
static int
impair_abi_check(const struct rte_eth_dev *eth_dev, const char *name)
{
	if (strcmp(eth_dev->data->name, name) != 0 || eth_dev->data->port_id >= RTE_MAX_ETHPORTS ||
	    eth_dev->data->mtu != RTE_ETHER_MTU) {
		IMPAIR_LOG(ERR, "%s: ethdev driver ABI mismatch with this DPDK (%s)", name,
			   rte_version());
		return -ENOTSUP;
	}
	return 0;
}

static int
impair_probe(struct rte_vdev_device *vdev)
{
	struct rte_device *dev = impair_vdev_device(vdev);
	const char *name = rte_dev_name(dev);
	const struct rte_devargs *da = rte_dev_devargs(dev);
	const char *args = da != NULL && da->args != NULL ? da->args : "";
	struct rte_eth_dev *eth_dev = NULL;
	struct impair_port *p;
	char under[RTE_ETH_NAME_MAX_LEN];
	uint16_t id;
	int rc;

	if (rte_eal_process_type() != RTE_PROC_PRIMARY) {
		IMPAIR_LOG(ERR, "%s: secondary processes are not supported", name);
		return -ENOTSUP;
	}
	p = rte_zmalloc_socket(name, sizeof(*p), RTE_CACHE_LINE_SIZE, rte_socket_id());
	if (p == NULL)
		return -ENOMEM;
	rte_spinlock_init(&p->lock);
	snprintf(p->name, sizeof(p->name), "%s", name);
	for (int d = 0; d < DIR_COUNT; d++)
		sl_impair_conf_init(&p->conf[d]);
	rc = parse_devargs(name, args, p, under, sizeof(under));
	if (rc != 0)
		goto fail;
	rc = rte_eth_dev_get_port_by_name(under, &p->under_port);
	if (rc != 0) {
		IMPAIR_LOG(ERR, "%s: dev=%s: no such port (give its --vdev or -a before %s)", name,
			   under, name);
		goto fail;
	}
	rc = sl_tsc_clock_init_hz(&p->clock, rte_get_tsc_hz());
	if (rc != 0)
		goto fail;
	p->clock.tsc0 = rte_get_tsc_cycles();
	rc = rte_eth_dev_owner_new(&p->owner.id);
	if (rc == 0) {
		snprintf(p->owner.name, sizeof(p->owner.name), "%s", name);
		rc = rte_eth_dev_owner_set(p->under_port, &p->owner);
	}
	if (rc != 0) {
		IMPAIR_LOG(ERR, "%s: dev=%s: cannot take the port (owned by another driver?)", name,
			   under);
		goto fail;
	}
	eth_dev = rte_eth_dev_allocate(name);
	if (eth_dev == NULL) {
		rc = -ENOMEM;
		goto fail_owner;
	}
	rc = impair_abi_check(eth_dev, name);
	if (rc != 0)
		goto fail_owner;
	eth_dev->data->mac_addrs = rte_zmalloc(name, sizeof(struct rte_ether_addr), 0);
	if (eth_dev->data->mac_addrs == NULL) {
		rc = -ENOMEM;
		goto fail_owner;
	}
	rte_eth_macaddr_get(p->under_port, eth_dev->data->mac_addrs);
	p->port_id = eth_dev->data->port_id;
	eth_dev->data->dev_private = p;
	eth_dev->dev_ops = &impair_dev_ops;
	eth_dev->device = dev;
	eth_dev->rx_pkt_burst = impair_rx_burst;
	eth_dev->tx_pkt_burst = impair_tx_burst;
	rte_spinlock_lock(&impair_ports_lock);
	impair_ports[p->port_id] = p;
	rte_spinlock_unlock(&impair_ports_lock);
	rte_eth_dev_probing_finish(eth_dev);
	if (rte_eth_dev_get_port_by_name(name, &id) != 0 || id != p->port_id) {
		IMPAIR_LOG(ERR, "%s: ethdev driver ABI mismatch with this DPDK (%s)", name,
			   rte_version());
		rte_eth_dev_close(p->port_id);
		return -ENOTSUP;
	}
	IMPAIR_LOG(INFO, "%s: port %u impairs port %u (%s)", name, p->port_id, p->under_port,
		   under);
	return 0;
fail_owner:
	rte_eth_dev_owner_unset(p->under_port, p->owner.id);
	/* dev_private is not set yet; release_port frees mac_addrs. */
	if (eth_dev != NULL)
		rte_eth_dev_release_port(eth_dev);
fail:
	IMPAIR_LOG(ERR, "%s: probe failed: %s", name, rte_strerror(-rc));
	rte_free(p);
	return rc;
}

static int
impair_remove(struct rte_vdev_device *vdev)
{
	const char *name = rte_dev_name(impair_vdev_device(vdev));
	uint16_t id;

	if (rte_eth_dev_get_port_by_name(name, &id) != 0)
		return 0;
	return rte_eth_dev_close(id);
}

static struct rte_vdev_driver impair_vdev_driver = {
	.probe = impair_probe,
	.remove = impair_remove,
};

RTE_PMD_REGISTER_VDEV(IMPAIR_DRIVER, impair_vdev_driver);
RTE_PMD_REGISTER_PARAM_STRING(
	IMPAIR_DRIVER, "dev=<port name> tx_flush_on_rx=0|1 "
		       "[tx_|rx_]seed=<u64> "
		       "[tx_|rx_]loss=<p> "
		       "[tx_|rx_]ge_p=<p> [tx_|rx_]ge_r=<p> [tx_|rx_]ge_h=<p> [tx_|rx_]ge_k=<p> "
		       "[tx_|rx_]ber=<p> [tx_|rx_]corrupt=drop|deliver "
		       "[tx_|rx_]dup=<p> "
		       "[tx_|rx_]reorder=<p> [tx_|rx_]reorder_gap=<frames> "
		       "[tx_|rx_]delay_ns=<ns> [tx_|rx_]jitter_ns=<ns> "
		       "[tx_|rx_]rate_bps=<bps> [tx_|rx_]burst_bytes=<bytes> "
		       "[tx_|rx_]queue_bytes=<bytes> [tx_|rx_]queue_frames=<frames> "
		       "[tx_|rx_]drop_idx=<i>[:<j>-<k>...]");
