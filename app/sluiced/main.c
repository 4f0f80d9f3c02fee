/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * main.c - sluiced, the sluice transport daemon: EAL, configuration, ports, lcore loops,
 * telemetry and an orderly shutdown.
 *
 *   sluiced [EAL options] -- --config FILE [--duration-s N] [--exit-when-done] [--capture FILE]
 *
 * A stop drains the lanes, says goodbye to each peer (docs/link.md, "Leave") and closes the ports.
 * Exit status: 0 after a clean stop (SIGINT, SIGTERM, --duration-s or --exit-when-done), 1 on a
 * runtime failure, 2 on a usage or configuration error (`file:line: key: what is wrong` on stderr).
 * At exit the final port counters are printed on stdout as one JSON line; test traffic adds a
 * line of the checker's summary, queue pairs a line per QP and a line of totals.
 *
 * Applications ([api]): a control thread (plain POSIX) serves the unix socket (lib/chan's
 * control half) and hands QPs to the lane half on port 0's lane 0, which that lane's QP adapter
 * polls. At a stop the control thread frees the server first, which tells the lane every
 * client is gone and waits for its answers, so the lanes keep running until it is done
 * (lanes_stop()); then they drain and leave as without applications.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <numa.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_malloc.h>
#include <rte_mempool.h>
#include <rte_version.h>

#include "sl_dp_eal.h"
#include "capture.h"
#include "sluiced.h"

#define EXIT_CONFIG 2
#define SLUICED_CTL_POLL_MS 100 /**< the control thread sees a stop within this, ms */
#define SLUICED_TSC_CALIB_NS (50 * SL_NS_PER_MS) /**< the TSC calibration at start, ns */

RTE_LOG_REGISTER(sluiced_logtype, sluice.daemon, INFO);
#define LOG(level, fmt, ...)                                                                       \
	rte_log(RTE_LOG_##level, sluiced_logtype, "sluiced: " fmt "\n", ##__VA_ARGS__)

static struct sluiced sluiced_state;

static_assert(RTE_LOG_ERR == LOG_ERR + 1 && RTE_LOG_DEBUG == LOG_DEBUG + 1,
	      "lib/chan logs at syslog's levels, DPDK's are one above");

static void
usage(FILE *out)
{
	fprintf(out,
		"sluiced %s: the sluice transport daemon\n"
		"\n"
		"usage: sluiced [EAL options] -- --config FILE [--duration-s N] "
		"[--exit-when-done]\n"
		"                                  [--capture FILE]\n"
		"\n"
		"EAL options come first (see the DPDK EAL documentation). Typical ones:\n"
		"  -l 0[,1..]                 lcores: the main lcore, then one per worker\n"
		"  --vdev net_af_xdp0,iface=IF  a port over AF_XDP (also net_af_packet, "
		"net_memif,\n"
		"                             net_ring, net_impair); PCI NICs are found by "
		"address\n"
		"  --no-huge -m 512 --no-pci  run without hugepages or PCI devices\n"
		"  --file-prefix NAME         unique per process; dpdk-telemetry.py -f NAME reads\n"
		"                             /sluice/info and /sluice/ports\n"
		"  --log-level 'sluice.*:debug'  log levels by type: sluice.daemon, sluice.dp "
		"(lane\n"
		"                             states, peers), sluice.capture, sluice.impair;\n"
		"                             default info\n"
		"\n"
		"sluiced options (after --):\n"
		"  -c, --config FILE          INI configuration (required); keys below\n"
		"  -d, --duration-s N         stop after N seconds (default: run until "
		"SIGINT/SIGTERM)\n"
		"  -x, --exit-when-done       stop as on SIGINT once every lane's [qp] traffic\n"
		"                             has finished (each sending QP's msgs messages\n"
		"                             completed, each receiving QP's delivered; needs\n"
		"                             [qp] msgs) and the peer left, or sent nothing for\n"
		"                             200 ms (end to end: 4 x rto_us, at least 200 ms)\n"
		"  -w, --capture FILE         write every frame of every port to FILE (pcapng);\n"
		"                             when the writer falls behind, TX waits for it\n"
		"                             (no frame sent uncaptured); with hugepages,\n"
		"                             dpdk-dumpcap --file-prefix NAME also captures a\n"
		"                             running sluiced\n"
		"  -h, --help                 this text\n"
		"  -V, --version              print the version\n"
		"\n"
		"Configuration keys (';' starts a comment). A rate, size or duration may\n"
		"carry a unit (rtt_us = 2ms, rate_mbps = 2.5Gbps); a bare number is in the\n"
		"key's unit:",
		SLUICE_VERSION);
	sluiced_conf_print_keys(out);
	fprintf(out,
		"\n"
		"On SIGINT/SIGTERM the lanes drain for %u ms, then each says goodbye to its peer\n"
		"(LEAVE; up to %u ms for the answer) before the ports close.\n",
		(unsigned)(SL_DP_DRAIN_NS / SL_NS_PER_MS),
		(unsigned)(SL_DP_LEAVE_WAIT_NS / SL_NS_PER_MS));
	fprintf(out,
		"Exit status: 0 clean stop, 1 runtime failure, 2 usage or configuration error.\n"
		"At exit, the final counters of every port are printed on stdout as one JSON "
		"line;\n"
		"[traffic] adds a line of the checker's summary, [qp] a line per QP and a line\n"
		"of totals, --capture a line of the capture's counters (frames captured,\n"
		"dropped, held back for TX, written).\n");
}

static void
on_signal(int sig)
{
	(void)sig;
	sluiced_state.stop = true;
}

/*
 * The lanes may stop: a stop was asked and the control thread, if any, let go of them (its
 * goodbyes to the lane half need a running lane to answer them).
 */
static bool
lanes_stop(const struct sluiced *d)
{
	return d->stop && __atomic_load_n(&d->lanes_may_stop, __ATOMIC_ACQUIRE);
}

/*
 * After a stop, the lanes end their life (docs/link.md, "The lane's life"): each drains for
 * SL_DP_DRAIN_NS, then says goodbye (LEAVE until the peer answers, at most SL_DP_LEAVE_WAIT_NS;
 * a peer that leaves at the same time gets an answer and SL_DP_LEAVE_GRACE_NS to see it), and
 * the worker returns once every lane has left and its port may close.
 */
static void
stop_lanes(struct sl_dp_worker *w)
{
	uint64_t now = sl_tsc_clock_now_ns(&sluiced_state.clock), close_ns;

	sl_dp_worker_stop(w, now);
	while ((close_ns = sl_dp_worker_close_ns(w)) == UINT64_MAX) {
		now = sl_tsc_clock_now_ns(&sluiced_state.clock);
		sl_dp_worker_poll(w, now);
	}
	if (close_ns > now)
		usleep((useconds_t)((close_ns - now) / SL_NS_PER_US));
}

static int
worker_main(void *arg)
{
	struct sl_dp_worker *w = arg;

	while (!lanes_stop(&sluiced_state))
		sl_dp_worker_poll(w, sl_tsc_clock_now_ns(&sluiced_state.clock));
	stop_lanes(w);
	return 0;
}

/* Parse the options after "--". Returns 0, or exits for --help/--version/usage errors. */
static void
parse_args(int argc, char **argv, const char **config, unsigned long *duration_s,
	   const char **capture, bool *exit_when_done)
{
	static const struct option opts[] = {
		{"capture", required_argument, NULL, 'w'},
		{"config", required_argument, NULL, 'c'},
		{"duration-s", required_argument, NULL, 'd'},
		{"exit-when-done", no_argument, NULL, 'x'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	int c;
	char *end;

	optind = 1;
	while ((c = getopt_long(argc, argv, "c:d:hVw:x", opts, NULL)) != -1) {
		switch (c) {
		case 'x':
			*exit_when_done = true;
			break;
		case 'w':
			*capture = optarg;
			break;
		case 'c':
			*config = optarg;
			break;
		case 'd':
			errno = 0;
			*duration_s = strtoul(optarg, &end, 10);
			if (errno || *end || *optarg == '\0' || *optarg == '-') {
				fprintf(stderr,
					"sluiced: --duration-s: expected seconds, got '%s'\n",
					optarg);
				exit(EXIT_CONFIG);
			}
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("sluiced %s (DPDK %s)\n", SLUICE_VERSION, rte_version());
			exit(0);
		default:
			fprintf(stderr, "sluiced: see sluiced --help\n");
			exit(EXIT_CONFIG);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "sluiced: unexpected argument '%s' (see sluiced --help)\n",
			argv[optind]);
		exit(EXIT_CONFIG);
	}
	if (*config == NULL) {
		fprintf(stderr, "sluiced: --config FILE is required (see sluiced --help)\n");
		exit(EXIT_CONFIG);
	}
}

/* Map every configured device name to its ethdev port. 0, or -1 after a `file:line:` error. */
static int
resolve_ports(const struct sluiced *d, uint16_t *pid)
{
	char ports[512];

	for (unsigned int i = 0; i < d->conf.nb_ports; i++) {
		const struct sluiced_port_conf *pc = &d->conf.port[i];

		if (rte_eth_dev_get_port_by_name(pc->device, &pid[i]) == 0)
			continue;
		sl_dp_port_list(ports, sizeof(ports));
		fprintf(stderr, "%s:%u: device: no DPDK port named '%s' (ports: %s)\n",
			d->conf.path, pc->device_line, pc->device, ports);
		return -1;
	}
	return 0;
}

static unsigned int
node_of(int socket_id)
{
	return socket_id < 0 ? 0 : (unsigned int)socket_id;
}

/*
 * mbufs the lanes of the ports on one pool can hold at once: each lane keeps its replay ring
 * (2^k frames), its flow-control buffer (S_FC delivered frames), a full RX and TX ring, and a
 * burst each of pending and refused frames; every lcore caches mbuf_cache more.
 */
static uint64_t
mbufs_needed(const struct sluiced *d)
{
	uint64_t per_lane =
		(UINT64_C(1) << d->link.ring_order) + d->link.fc_frames + 2 * SL_DP_BURST;
	uint64_t total = (uint64_t)d->conf.mbuf_cache * rte_lcore_count();

	if (d->conf.qp.count || d->conf.api.enable)
		per_lane += SL_DP_BURST; /* the QP adapter's spare mbufs */

	for (unsigned int i = 0; i < d->conf.nb_ports; i++)
		total += (uint64_t)d->nb_workers *
			 (per_lane + d->conf.port[i].rx_desc + d->conf.port[i].tx_desc);
	return total;
}

/*
 * The mbufs port p's QP adapters attach payloads to (lib/dp/qp.c), per lane: as many as a lane
 * can hold frames (its replay ring, a TX ring, the adapter's and the lane's bursts), each an
 * mbuf with no data room, 128 B. 0 (every payload copied) unless the port sends chains and the
 * link's check reads no more of a body than the first mbuf of a chain holds.
 */
static uint32_t
attach_mbufs(const struct sluiced *d, const struct sl_dp_port *p,
	     const struct sluiced_port_conf *pc)
{
	if (!p->tx_chains || d->link.fmt.scope_bytes > SL_DP_VCODE_HDR_BYTES)
		return 0;
	return (UINT32_C(1) << d->link.ring_order) + pc->tx_desc + 3 * SL_DP_BURST;
}

/*
 * The pool size: the configured one, which must cover what the lanes hold (else a
 * `file:line: mbufs:` error), or with mbufs = 0 twice that, rounded to 2^n - 1 (the mempool's
 * best size). 0 or -1.
 */
static int
pool_size(struct sluiced *d)
{
	uint64_t need = mbufs_needed(d);

	if (d->conf.mbufs == 0) {
		d->conf.mbufs = (uint32_t)(sl_align_pow2(2 * need + 1) - 1);
		return 0;
	}
	if (d->conf.mbufs >= need)
		return 0;
	fprintf(stderr,
		"%s:%u: mbufs: %u cannot hold what the lanes keep (%" PRIu64 ": replay rings of "
		"2^%u, flow-control buffers of %u, NIC rings, caches); set at least that, or 0\n",
		d->conf.path, d->conf.mbufs_line, d->conf.mbufs, need, d->link.ring_order,
		d->link.fc_frames);
	return -1;
}

/* The pool port pid takes its packets from: its node's, packed for AF_XDP (lib/dp/pool.c). */
static struct rte_mempool **
port_pool(struct sluiced *d, uint16_t pid)
{
	unsigned int node = node_of(rte_eth_dev_socket_id(pid));

	return sl_dp_port_id_af_xdp(pid) ? &d->umem_pool[node] : &d->pool[node];
}

/* A pool on every NUMA node that a port sits on, per kind of pool. 0 or -1 after a message. */
static int
create_pools(struct sluiced *d, const uint16_t *pid)
{
	for (unsigned int i = 0; i < d->conf.nb_ports; i++) {
		int sock = rte_eth_dev_socket_id(pid[i]);
		struct rte_mempool **pool = port_pool(d, pid[i]);
		bool umem = pool == &d->umem_pool[node_of(sock)];
		char name[RTE_MEMPOOL_NAMESIZE];

		if (*pool)
			continue;
		snprintf(name, sizeof(name), "sl_%spool_%u", umem ? "umem_" : "", node_of(sock));
		*pool = sl_dp_pool_create(name, d->conf.mbufs, d->conf.mbuf_cache,
					  d->conf.mbuf_data_room, sock < 0 ? SOCKET_ID_ANY : sock,
					  umem);
		if (*pool == NULL) {
			LOG(ERR, "cannot create a pool of %u mbufs on NUMA node %u: %s",
			    d->conf.mbufs, node_of(sock), rte_strerror(rte_errno));
			return -1;
		}
	}
	return 0;
}

/*
 * The link settings from [link]: sizes derived from rate x RTT where left at 0 (RIFL's rules).
 * 0, or -1 after a `file:line:` message.
 */
static int
link_settings(struct sluiced *d)
{
	const struct sluiced_link_conf *lc = &d->conf.link;
	struct sl_link_conf *l = &d->link;
	unsigned order_max;
	int order;

	/* [link] mode and replay hold the index of their choice ("faithful|extended",
	 * "ring|missing"): the enums' values. */
	static_assert(SL_WIRE_MODE_FAITHFUL == 0 && SL_WIRE_MODE_EXTENDED == 1,
		      "[link] mode's choices in enum sl_wire_mode's order");
	static_assert(SL_LINK_REPLAY_RING == 0 && SL_LINK_REPLAY_MISSING == 1,
		      "[link] replay's choices in enum sl_link_replay's order");
	memset(l, 0, sizeof(*l));
	l->fmt.mode = (enum sl_wire_mode)lc->mode;
	l->line_bps = lc->rate_bps; /* every frame the link sends keeps to the line */
	l->wire_overhead_bytes = SL_DP_ETH_WIRE_BYTES;
	l->fmt.scope_bytes =
		lc->vcode_scope == SLUICED_VCODE_FRAME ? SL_WIRE_SCOPE_ALL : SL_DP_VCODE_HDR_BYTES;
	l->replay = (enum sl_link_replay)lc->replay;
	if (lc->reliability == SLUICED_RELIABILITY_END_TO_END) {
		/* End to end: the transport recovers; the link verifies each frame by its ID. */
		if (l->fmt.mode != SL_WIRE_MODE_EXTENDED || l->replay != SL_LINK_REPLAY_RING) {
			fprintf(stderr,
				"%s:%u: reliability: 'end-to-end' needs mode = extended (frames "
				"are verified against their own ID) and no replay setting (nothing "
				"is replayed)\n",
				d->conf.path, lc->line);
			return -1;
		}
		l->replay = SL_LINK_REPLAY_NONE;
	}
	if (l->replay == SL_LINK_REPLAY_MISSING && l->fmt.mode != SL_WIRE_MODE_EXTENDED) {
		fprintf(stderr,
			"%s:%u: replay: 'missing' needs mode = extended (the NACK must "
			"carry the frame ID)\n",
			d->conf.path, lc->line);
		return -1;
	}
	order = (int)lc->ring_order;
	if (order == 0 && lc->reliability == SLUICED_RELIABILITY_END_TO_END)
		order = SL_LINK_ORDER_MIN; /* the ring only holds frames until evicted */
	else if (order == 0)
		order = sl_link_ring_order(&l->fmt, lc->rate_bps, lc->rtt_ns,
					   lc->sizing_frame_bytes);
	order_max = l->fmt.mode == SL_WIRE_MODE_EXTENDED ? SL_LINK_ORDER_MAX_EXTENDED
							 : SL_LINK_ORDER_MAX_FAITHFUL;
	if (order < (int)SL_LINK_ORDER_MIN || order > (int)order_max) {
		fprintf(stderr, "%s:%u: ring_order: %s; the %s mode allows 2^%u to 2^%u frames\n",
			d->conf.path, lc->line,
			lc->ring_order ? "out of range" : "rate x RTT needs a larger ring",
			l->fmt.mode == SL_WIRE_MODE_EXTENDED ? "extended" : "faithful",
			SL_LINK_ORDER_MIN, order_max);
		return -1;
	}
	l->ring_order = (uint8_t)order;
	l->silent_frames = (UINT32_C(1) << order) / 2; /* lib/dp caps it per port */
	l->adapt_rate = true;                          /* lib/dp: not over memif */
	l->fc_frames =
		lc->fc_frames ? lc->fc_frames
			      : sl_link_fc_frames(lc->rate_bps, lc->rtt_ns, lc->sizing_frame_bytes);
	l->fc_on_frames = lc->fc_on_frames;
	l->fc_off_frames = lc->fc_off_frames;
	l->keepalive_ns = lc->keepalive_ns;
	l->ctrl_interval_ns = lc->ctrl_interval_ns;
	/* Only a transport above can recover what a re-initialization loses. */
	l->stuck_ns =
		lc->stuck_ns
			? lc->stuck_ns
			: (d->conf.qp.count || d->conf.api.enable ? SL_LINK_STUCK_NS_TRANSPORT : 0);
	return 0;
}

/* Configure and start every port. 0, or -1 after a `file:line: device:` message. */
static int
open_ports(struct sluiced *d, const uint16_t *pid)
{
	for (unsigned int i = 0; i < d->conf.nb_ports; i++) {
		const struct sluiced_port_conf *pc = &d->conf.port[i];
		struct sl_dp_port_conf c = {
			.device = pc->device,
			.nb_queues = (uint16_t)d->nb_workers,
			.rx_desc = pc->rx_desc,
			.tx_desc = pc->tx_desc,
			.learn_peer = pc->learn_peer,
			.peer = pc->peer_mac,
			.peer_timeout_ns = d->conf.peer_timeout_ns,
			.link = d->link,
		};
		char err[640];

		if (sl_dp_port_open(&d->port[i], &c, *port_pool(d, pid[i]), err, sizeof(err)) !=
		    0) {
			fprintf(stderr, "%s:%u: device: %s\n", d->conf.path, pc->device_line, err);
			return -1;
		}
		d->port_ptr[i] = &d->port[i];
		d->nb_ports = i + 1;
	}
	return 0;
}

/* Warn when a worker lcore sits on another NUMA node than a port it polls. */
static void
check_numa(struct sluiced *d)
{
	unsigned int lcore;

	d->numa_nodes = numa_available() < 0 ? 1 : (unsigned int)numa_num_configured_nodes();
	RTE_LCORE_FOREACH(lcore)
	{
		int node = numa_available() < 0
				   ? 0
				   : numa_node_of_cpu((int)rte_lcore_to_cpu_id((int)lcore));

		for (unsigned int i = 0; i < d->nb_ports; i++)
			if (d->port[i].socket_id >= 0 && node >= 0 && node != d->port[i].socket_id)
				LOG(WARNING, "lcore %u is on NUMA node %d, port %s on node %d",
				    lcore, node, d->port[i].name, d->port[i].socket_id);
	}
}

/* Test traffic on every lane of every port, when [traffic] mode is not off. 0 or -1. */
static int
setup_traffic(struct sluiced *d)
{
	const struct sluiced_traffic_conf *tc = &d->conf.traffic;

	if (tc->mode == SLUICED_TRAFFIC_OFF)
		return 0;
	for (unsigned int i = 0; i < d->nb_ports; i++) {
		struct sl_dp_port *p = &d->port[i];
		struct sl_dp_traffic_conf c = {
			.send = tc->mode == SLUICED_TRAFFIC_SEND ||
				tc->mode == SLUICED_TRAFFIC_BOTH,
			.check = tc->mode == SLUICED_TRAFFIC_CHECK ||
				 tc->mode == SLUICED_TRAFFIC_BOTH,
			.body_bytes = (uint16_t)tc->body_bytes,
			.rate_bps = tc->rate_bps,
			.frames = tc->frames,
			.consume_bps = tc->consume_bps,
			.pool = p->lane[0].pool,
		};

		d->traffic[i] =
			rte_zmalloc_socket("sl_traffic", sizeof(*d->traffic[i]) * p->nb_queues,
					   RTE_CACHE_LINE_SIZE, p->socket_id);
		if (d->traffic[i] == NULL) {
			LOG(ERR, "no memory for test traffic state");
			return -1;
		}
		for (uint16_t q = 0; q < p->nb_queues; q++) {
			if (sl_dp_traffic_init(&d->traffic[i][q], &c) != 0) {
				fprintf(stderr,
					"%s:%u: body_bytes: %u bytes do not fit in one mbuf "
					"of mbuf_data_room = %u after %u bytes of headroom\n",
					d->conf.path, tc->body_line, tc->body_bytes,
					d->conf.mbuf_data_room, RTE_PKTMBUF_HEADROOM);
				return -1;
			}
			p->lane[q].app = (struct sl_dp_app){
				.produce = sl_dp_traffic_produce,
				.consume = sl_dp_traffic_consume,
				.ctx = &d->traffic[i][q],
			};
		}
	}
	return 0;
}

/* What the built-in traffic does with each QP of a [qp] direction (enum sl_xport_traffic_role). */
static unsigned
qp_roles(unsigned int direction)
{
	switch ((enum sluiced_qp_direction)direction) {
	case SLUICED_QP_SEND:
		return SL_XPORT_TRAFFIC_SEND;
	case SLUICED_QP_RECV:
		return SL_XPORT_TRAFFIC_CHECK;
	case SLUICED_QP_BOTH:
		break;
	}
	return SL_XPORT_TRAFFIC_SEND | SL_XPORT_TRAFFIC_CHECK;
}

/* The QP conf of qpn from [qp]. */
static struct sl_xport_qp_conf
qp_conf(const struct sluiced_qp_conf *qc, uint32_t qpn)
{
	const struct sl_proto_ops *ops = sl_proto_find(qc->proto_name[qpn % qc->nb_protos]);
	bool grant = ops != NULL && ops->credit == SL_CREDIT_GRANT;

	return (struct sl_xport_qp_conf){
		.qpn = qpn,
		.peer_qpn = qpn,
		.proto = qc->proto_name[qpn % qc->nb_protos],
		.seg_bytes = qc->seg_bytes,
		.recv_mode = (uint8_t)qc->recv, /* melo|gbn|ec: SL_RECV_MELO, SL_RECV_GBN,
						 * SL_XPORT_RECV_EC */
		.init_rate_bps = qc->rate_bps,
		.max_rate_bps = grant ? 0 : qc->rate_limit_bps[qpn % qc->nb_limits],
		.rto_ns = qc->rto_ns,
		.timeout_ns = qc->timeout_ns,
		.param = {qc->param[0], qc->param[1], qc->param[2], qc->param[3]},
	};
}

/*
 * seg_bytes of payload and a transport header of up to SL_XHDR_MAX_LEN fit one mbuf after its
 * headroom. 0, or -1 after a `file:line: seg_bytes:` message.
 */
static int
seg_fits(const struct sluiced *d, uint32_t seg_bytes, unsigned int line)
{
	uint32_t room = (uint32_t)d->conf.mbuf_data_room - RTE_PKTMBUF_HEADROOM;

	if (room >= SL_XHDR_MAX_LEN && seg_bytes <= room - SL_XHDR_MAX_LEN)
		return 0;
	fprintf(stderr,
		"%s:%u: seg_bytes: %u payload bytes and a transport header of up to %u do not fit "
		"in one mbuf of mbuf_data_room = %u after %u bytes of headroom\n",
		d->conf.path, line, seg_bytes, SL_XHDR_MAX_LEN, d->conf.mbuf_data_room,
		RTE_PKTMBUF_HEADROOM);
	return -1;
}

/*
 * [api]: the key table and the lane half of port 0's lane 0, whose QPNs follow [qp]'s.
 * 0, or -1 after a message.
 */
static int
setup_chan(struct sluiced *d)
{
	const struct sluiced_api_conf *ac = &d->conf.api;
	struct sl_chan_lane_conf c = {
		.qpn_base = d->conf.qp.count,
		.qps = ac->qps,
		.sq_depth_max = SL_CHAN_QP_DEPTH_MAX,
		.rq_depth_max = SL_CHAN_QP_DEPTH_MAX,
		.stash_bytes = ac->stash_bytes,
		.stash_qp_bytes = ac->stash_qp_bytes,
	};

	if (seg_fits(d, ac->seg_bytes, ac->seg_line ? ac->seg_line : ac->line) != 0)
		return -1;
	d->mrs = sl_chan_mrs_create(ac->mrs);
	c.mrs = d->mrs;
	d->chan = d->mrs ? sl_chan_lane_create(&c) : NULL;
	if (d->chan == NULL) {
		fprintf(stderr, "%s:%u: [api]: cannot create the lane half: %s\n", d->conf.path,
			ac->line, strerror(errno));
		return -1;
	}
	return 0;
}

/* [ec]'s drain rate, bits/s: the link's rate when 0. */
static uint64_t
ec_drain_bps(const struct sluiced *d)
{
	return d->conf.ec.drain_bps ? d->conf.ec.drain_bps : d->conf.link.rate_bps;
}

/* The endpoint-congestion target of [ec] (max_conns is the endpoint's). */
static struct sl_ec_conf
ec_conf(const struct sluiced_ec_conf *ec)
{
	return (struct sl_ec_conf){
		.queue_bytes = ec->queue_bytes,
		.threshold_bytes = ec->threshold_bytes,
		.policy = ec->policy == SLUICED_EC_DACK,
		.nack = ec->policy != SLUICED_EC_TIMEOUT,
		.iack_at_processing = ec->iack_at == 1,
		.fair_period_ns = ec->fair_period_ns,
		.fair_ratio_pct = ec->fair_ratio_pct,
	};
}

/*
 * The send queue of the built-in traffic's QPs: messages one may have posted and not completed.
 * A paced QP that runs dry on schedule restarts at the pacer's system time, idling earns no
 * credit (docs/pacer.md, "Catch-up"), so a QP whose messages are all in flight while its peer's
 * lcore is descheduled, holding the acknowledgments, loses that time for good. Enough messages
 * that the fastest QP limited below the line has pace_catchup_us plus the link's RTT of them in
 * flight (at the mean message size) keep it sending through such a stall; at least the
 * endpoint's default, at most SLUICED_QP_SQ_MAX (memory: that many send-queue entries per QP).
 */
static uint32_t
qp_sq_depth(const struct sluiced *d)
{
	const struct sluiced_qp_conf *qc = &d->conf.qp;
	uint64_t msg_bytes = ((uint64_t)qc->msg_min_bytes + qc->msg_max_bytes + 1) / 2, fastest = 0;
	uint64_t in_flight_bytes, msgs;

	for (unsigned int i = 0; i < qc->nb_limits; i++)
		if (qc->rate_limit_bps[i] < d->conf.link.rate_bps)
			fastest = SL_MAX(fastest, qc->rate_limit_bps[i]);
	in_flight_bytes = fastest / 8 * ((qc->catchup_ns + d->conf.link.rtt_ns) / SL_NS_PER_US) /
			  (SL_NS_PER_S / SL_NS_PER_US);
	msgs = (in_flight_bytes + msg_bytes - 1) / msg_bytes;
	return (uint32_t)sl_align_pow2(
		SL_MIN(SL_MAX(msgs, SL_XPORT_SQ_DEFAULT), SLUICED_QP_SQ_MAX));
}

/*
 * Queue pairs: with [qp] count, on every port, lane q of a port gets an endpoint with the QPNs
 * that are q modulo the lanes, each talking to the peer's QP of the same number; with [api],
 * port 0's lane 0 gets one in any case, whose QPNs [count, count + qps) are the applications'.
 * 0, or -1 after a message (configuration errors name the file and line).
 */
static int
setup_qps(struct sluiced *d)
{
	const struct sluiced_qp_conf *qc = &d->conf.qp;
	uint64_t now = sl_tsc_clock_now_ns(&d->clock);

	if (qc->count && seg_fits(d, qc->seg_bytes, qc->seg_line) != 0)
		return -1;
	if (d->conf.api.enable && setup_chan(d) != 0)
		return -1;
	for (unsigned int i = 0; i < d->nb_ports; i++) {
		struct sl_dp_port *p = &d->port[i];

		for (uint16_t q = 0; q < p->nb_queues; q++) {
			struct sl_chan_lane *chan = i == 0 && q == 0 ? d->chan : NULL;
			uint32_t max_qps = qc->count + (chan ? d->conf.api.qps : 0);
			struct sl_dp_qp_conf c = {
				.lane = &p->lane[q],
				.pool = p->lane[q].pool,
				.socket_id = p->socket_id,
				.max_qps = max_qps,
				.chan = chan,
				.window_pkts = qc->window_pkts,
				.sq_depth = qp_sq_depth(d),
				.line_bps = d->conf.link.rate_bps,
				.pace_catchup_ns = qc->catchup_ns,
				.frame_overhead_bytes =
					sl_wire_hdr_len(&d->link.fmt) + SL_DP_ETH_WIRE_BYTES,
				.ec_drain_bps = qc->recv == SL_XPORT_RECV_EC ? ec_drain_bps(d) : 0,
				.ec = ec_conf(&d->conf.ec),
				.tx_attach_mbufs = attach_mbufs(d, p, &d->conf.port[i]),
				.traffic =
					{
						.max_qps = max_qps,
						.min_bytes = qc->msg_min_bytes,
						.max_bytes = qc->msg_max_bytes,
						.msgs = qc->msgs,
						.seed = qc->seed,
						.check = qc->check != 0,
					},
			};
			struct sl_dp_qp *a;

			if (q >= qc->count && chan == NULL)
				continue;
			a = sl_dp_qp_create(&c);
			if (a == NULL) {
				fprintf(stderr,
					"%s:%u: count: %s: cannot create the endpoint of lane "
					"%u: %s\n",
					d->conf.path, qc->count_line, p->name, q, strerror(errno));
				return -1;
			}
			d->qp[i][q] = a;
			for (uint32_t qpn = q; qpn < qc->count; qpn += p->nb_queues) {
				struct sl_xport_qp_conf xc = qp_conf(qc, qpn);
				int rc = sl_dp_qp_open(a, &xc, qp_roles(qc->direction), now);

				if (rc != 0) {
					fprintf(stderr, "%s:%u: count: %s: QP %u (%s): %s\n",
						d->conf.path, qc->count_line, p->name, qpn,
						xc.proto, strerror(-rc));
					return -1;
				}
			}
			p->lane[q].app = (struct sl_dp_app){
				.produce = sl_dp_qp_produce,
				.consume = sl_dp_qp_consume,
				.session = sl_dp_qp_session,
				.tick = sl_dp_qp_tick,
				.ctx = a,
			};
		}
	}
	return 0;
}

/* lib/chan's log lines, at its syslog level, into sluice.daemon's log. */
static void
api_log(void *ctx, int level, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	(void)ctx;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	rte_log((uint32_t)level + 1, sluiced_logtype, "sluiced: api: %s\n", buf);
}

/* [api]: listen on the control socket (the thread starts with the lanes). 0 or -1. */
static int
setup_srv(struct sluiced *d)
{
	const struct sluiced_api_conf *ac = &d->conf.api;
	struct sl_chan_srv_conf c = {
		.socket_path = ac->socket,
		.mode = (mode_t)ac->mode_bits,
		.uid = ac->uid < 0 ? (uid_t)-1 : (uid_t)ac->uid,
		.gid = ac->gid < 0 ? (gid_t)-1 : (gid_t)ac->gid,
		.n_allow_uids = ac->n_allow_uids,
		.n_allow_gids = ac->n_allow_gids,
		.max_clients = ac->clients,
		.max_mrs = ac->mrs,
		.max_cqs = ac->cqs,
		.client_mrs = ac->client_mrs,
		.client_mr_bytes = ac->client_mr_bytes,
		.client_cqs = ac->client_cqs,
		.client_qps = ac->client_qps,
		.uid_clients = ac->uid_clients,
		.hello_timeout_ns = ac->hello_timeout_ns,
		.host = d->conf.name,
		.default_program = ac->program,
		.seg_bytes = ac->seg_bytes,
		.stash_bytes = ac->stash_bytes,
		.frame_overhead_bytes = sl_wire_hdr_len(&d->link.fmt) + SL_DP_ETH_WIRE_BYTES,
		.rto_ns = ac->rto_ns,
		.timeout_ns = ac->timeout_ns,
		.qpn_base = d->conf.qp.count,
		.qps = ac->qps,
		.log = api_log,
	};

	static_assert(SLUICED_API_ALLOW_MAX == SL_CHAN_ALLOW_MAX, "the allow lists' bound");
	if (!ac->enable)
		return 0;
	for (uint32_t i = 0; i < ac->n_allow_uids; i++)
		c.allow_uids[i] = (uid_t)ac->allow_uids[i];
	for (uint32_t i = 0; i < ac->n_allow_gids; i++)
		c.allow_gids[i] = (gid_t)ac->allow_gids[i];
	d->srv = sl_chan_srv_create(&c, &d->chan, 1, d->mrs);
	if (d->srv == NULL) {
		fprintf(stderr, "%s:%u: socket: cannot listen at '%s': %s\n", d->conf.path,
			ac->line, ac->socket, strerror(errno));
		return -1;
	}
	LOG(INFO, "api: applications attach at %s (QPN %u..%u)", ac->socket, c.qpn_base,
	    c.qpn_base + c.qps - 1);
	return 0;
}

/*
 * The control thread: serve the socket until a stop, then free the server (goodbyes to the
 * running lane) and let the lanes stop.
 */
static void *
control_main(void *arg)
{
	struct sluiced *d = arg;
	struct sl_chan_srv *srv = d->srv;
	int rc = 0;

	while (!d->stop && rc == 0)
		rc = sl_chan_srv_poll(srv, SLUICED_CTL_POLL_MS);
	if (rc != 0) {
		LOG(ERR, "api: serving the control socket failed: %s; stopping", strerror(-rc));
		d->stop = true;
	}
	__atomic_store_n(&d->srv, NULL, __ATOMIC_RELEASE); /* telemetry stops reading it */
	sl_chan_srv_free(srv);
	__atomic_store_n(&d->lanes_may_stop, true, __ATOMIC_RELEASE);
	return NULL;
}

/* Start the control thread, when [api] is on. 0 or -1 after a message. */
static int
start_control(struct sluiced *d)
{
	int rc;

	d->lanes_may_stop = d->srv == NULL;
	if (d->srv == NULL)
		return 0;
	rc = pthread_create(&d->ctl, NULL, control_main, d);
	if (rc != 0) {
		LOG(ERR, "api: cannot start the control thread: %s", strerror(rc));
		return -1;
	}
	d->ctl_started = true;
	return 0;
}

static void
setup_workers(struct sluiced *d)
{
	for (unsigned int w = 0; w < d->nb_workers; w++) {
		struct sl_dp_worker *wk = &d->worker[w];

		wk->ports = d->port_ptr;
		wk->nb_ports = d->nb_ports;
		wk->queue = (uint16_t)w;
	}
}

/*
 * --exit-when-done: every lane's [qp] traffic has finished, and the peer needs us no more. Our
 * last acknowledgments may still be in the endpoint (delayed, or held while the port was busy)
 * or lost on the wire, and a draining lane sends nothing new and replays nothing: so the host
 * runs on until each port's peer has left (it finished too: the normal end), or no transport
 * frame has arrived for SLUICED_DONE_QUIET_MIN_NS (both finished at once, or a peer stopped
 * otherwise). End to end a lost acknowledgment is repaired only by the peer's retransmission,
 * so the quiet time is at least SLUICED_DONE_QUIET_RTOS x [qp] rto_us there.
 */
#define SLUICED_DONE_QUIET_RTOS 4
#define SLUICED_DONE_QUIET_MIN_NS (200 * SL_NS_PER_MS)

struct done_watch {
	uint64_t rx_frames; /**< transport frames received, all lanes, when last seen */
	uint64_t quiet_ns;  /**< since then, ns */
};

static bool
traffic_done(const struct sluiced *d, struct done_watch *w, uint64_t now)
{
	uint64_t rx = 0;
	bool peers_gone = true;

	for (unsigned int i = 0; i < d->nb_ports; i++) {
		for (unsigned int q = 0; q < d->port[i].nb_queues; q++) {
			const struct sl_dp_qp *a = d->qp[i][q];

			if (a != NULL && !sl_dp_qp_finished(a))
				return false;
			if (a != NULL)
				rx += SL_STAT_READ(sl_dp_qp_stats_get, struct sl_dp_qp_stats, a,
						   rx_frames);
		}
		peers_gone = peers_gone && !sl_dp_port_peer_up(&d->port[i], now);
	}
	if (peers_gone)
		return true;
	if (rx != w->rx_frames || w->quiet_ns == 0) {
		w->rx_frames = rx;
		w->quiet_ns = now;
	}
	return now - w->quiet_ns >= (d->conf.link.reliability == SLUICED_RELIABILITY_END_TO_END
					     ? SL_MAX(SLUICED_DONE_QUIET_MIN_NS,
						      SLUICED_DONE_QUIET_RTOS * d->conf.qp.rto_ns)
					     : SLUICED_DONE_QUIET_MIN_NS);
}

/* --exit-when-done looks this often in single-lcore mode (the main lcore polls the lanes), ns;
 * with workers, each time the main lcore wakes (10 ms) */
#define SLUICED_DONE_CHECK_NS SL_NS_PER_MS

static void
run(struct sluiced *d, unsigned long duration_s, bool exit_when_done)
{
	uint64_t end_ns = duration_s ? d->start_ns + duration_s * SL_NS_PER_S : UINT64_MAX;
	uint64_t check_ns = d->start_ns;
	struct done_watch done = {0};
	unsigned int lcore, w = 1;

	if (d->conf.workers == 0) {
		struct sl_dp_worker *wk = &d->worker[0];

		while (!lanes_stop(d)) {
			uint64_t now = sl_tsc_clock_now_ns(&d->clock);

			sl_dp_worker_poll(wk, now);
			if (now >= end_ns)
				d->stop = true;
			if (exit_when_done && now >= check_ns) {
				check_ns = now + SLUICED_DONE_CHECK_NS;
				if (traffic_done(d, &done, now))
					d->stop = true;
			}
		}
		stop_lanes(wk);
		return;
	}
	/* Worker 0 runs on the first worker lcore, and so on; the main lcore only waits. */
	RTE_LCORE_FOREACH_WORKER(lcore)
	{
		if (w > d->nb_workers)
			break;
		rte_eal_remote_launch(worker_main, &d->worker[w - 1], lcore);
		w++;
	}
	while (!d->stop) {
		usleep(10000);
		uint64_t now = sl_tsc_clock_now_ns(&d->clock);

		if (now >= end_ns || (exit_when_done && traffic_done(d, &done, now)))
			d->stop = true;
	}
	rte_eal_mp_wait_lcore();
}

static void
shutdown_all(struct sluiced *d)
{
	if (d->ctl_started)
		pthread_join(d->ctl, NULL);
	d->ctl_started = false;
	sl_chan_srv_free(d->srv); /* set up, never served: no client to say goodbye to */
	d->srv = NULL;
	for (unsigned int i = 0; i < d->nb_ports; i++) {
		sl_dp_port_close(&d->port[i]);
		rte_free(d->traffic[i]);
		d->traffic[i] = NULL;
		for (unsigned int q = 0; q < SL_DP_MAX_QUEUES; q++) {
			sl_dp_qp_free(d->qp[i][q]);
			d->qp[i][q] = NULL;
		}
	}
	sl_chan_lane_free(d->chan);
	d->chan = NULL;
	sl_chan_mrs_free(d->mrs);
	d->mrs = NULL;
	for (unsigned int n = 0; n < RTE_MAX_NUMA_NODES; n++) {
		rte_mempool_free(d->pool[n]);
		rte_mempool_free(d->umem_pool[n]);
		d->pool[n] = d->umem_pool[n] = NULL;
	}
}

int
main(int argc, char **argv)
{
	struct sluiced *d = &sluiced_state;
	uint16_t pid[SL_DP_MAX_PORTS];
	const char *config = NULL, *capture = NULL;
	unsigned long duration_s = 0;
	bool exit_when_done = false;
	char err[256];
	int eal_args, rc = 1;

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return 0;
		}
	eal_args = rte_eal_init(argc, argv);
	if (eal_args < 0) {
		fprintf(stderr, "sluiced: EAL initialization failed: %s (see sluiced --help)\n",
			rte_strerror(rte_errno));
		return EXIT_CONFIG;
	}
	atexit(sl_dp_eal_cleanup); /* also when an option error exits */
	argv[eal_args] = argv[0];
	parse_args(argc - eal_args, argv + eal_args, &config, &duration_s, &capture,
		   &exit_when_done);
	if (sluiced_conf_load(&d->conf, config, stderr) != 0) {
		rc = EXIT_CONFIG;
		goto out;
	}
	if (exit_when_done && (d->conf.qp.count == 0 || d->conf.qp.msgs == 0)) {
		fprintf(stderr,
			"%s: --exit-when-done needs [qp] count and msgs (the built-in traffic "
			"must end)\n",
			d->conf.path);
		rc = EXIT_CONFIG;
		goto out;
	}
	d->nb_workers = d->conf.workers ? d->conf.workers : 1;
	if (d->conf.workers + 1 > rte_lcore_count()) {
		fprintf(stderr,
			"%s:%u: workers: %u worker lcores need %u EAL lcores (-l), EAL has %u\n",
			d->conf.path, d->conf.workers_line, d->conf.workers, d->conf.workers + 1,
			rte_lcore_count());
		rc = EXIT_CONFIG;
		goto out;
	}
	/* Our own calibration, not rte_get_tsc_hz(): DPDK rounds a measured frequency to 10 MHz,
	 * and every rate the pacers keep is off by that error (lib/common/time.c). */
	if (sl_tsc_clock_init(&d->clock, SLUICED_TSC_CALIB_NS) != 0) {
		fprintf(stderr, "sluiced: the TSC does not advance: no clock to pace by\n");
		goto out;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	if (resolve_ports(d, pid) != 0 || link_settings(d) != 0 || pool_size(d) != 0) {
		rc = EXIT_CONFIG;
		goto out;
	}
	if (create_pools(d, pid) != 0 || open_ports(d, pid) != 0)
		goto out;
	if (setup_traffic(d) != 0 || setup_qps(d) != 0) {
		rc = EXIT_CONFIG;
		goto out;
	}
	if (setup_srv(d) != 0)
		goto out;
	if (sluiced_capture_start(d, capture, err, sizeof(err)) != 0) {
		fprintf(stderr, "sluiced: %s\n", err);
		goto out;
	}
	check_numa(d);
	setup_workers(d);
	if (sluiced_telemetry_register(d) != 0)
		LOG(WARNING, "telemetry commands not registered (telemetry disabled?)");
	if (start_control(d) != 0)
		goto out;
	d->start_ns = sl_tsc_clock_now_ns(&d->clock);
	LOG(INFO, "%s: %u port(s), %s, %u worker(s)", d->conf.name, d->nb_ports,
	    d->conf.workers ? "worker lcores" : "single-lcore mode", d->nb_workers);
	run(d, duration_s, exit_when_done);
	sluiced_capture_stop(d);
	sluiced_report_json(d, stdout);
	sluiced_capture_report(stdout);
	rc = 0;
out:
	sluiced_capture_stop(d);
	shutdown_all(d);
	sl_dp_eal_cleanup();
	return rc;
}
