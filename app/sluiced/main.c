/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * main.c - sluiced, the sluice transport daemon: EAL, configuration, start-up (ports.c: ports,
 * pools and links; serve.c: what the lanes carry), lcore loops, telemetry and an orderly
 * shutdown.
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
 * control half) and hands each QP, when it connects, to the lane half on one of port 0's
 * lanes, which that lane's QP adapter polls. At a stop the control thread frees the server first,
 * which tells the lane every client is gone and waits for its answers, so the lanes keep running
 * until it is done (lanes_stop()); then they drain and leave as without applications.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

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

#include "sl_dp.h"
#include "capture.h"
#include "sluiced.h"

#define EXIT_CONFIG 2
#define SLUICED_CTL_POLL_MS 100 /**< the control thread sees a stop within this, ms */
#define SLUICED_TSC_CALIB_NS (50 * SL_NS_PER_MS) /**< the TSC calibration at start, ns */

RTE_LOG_REGISTER(sluiced_logtype, sluice.daemon, INFO);

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

			if (d->msgs[i][q] != NULL && !sl_traffic_qps_finished(d->msgs[i][q]))
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
			sl_traffic_qps_free(d->msgs[i][q]);
			d->msgs[i][q] = NULL;
			sl_dp_qp_free(d->qp[i][q]);
			d->qp[i][q] = NULL;
		}
	}
	for (unsigned int q = 0; q < d->nb_chans; q++) {
		sl_chan_lane_free(d->chan[q]);
		d->chan[q] = NULL;
	}
	d->nb_chans = 0;
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

	if (sluiced_resolve_ports(d, pid) != 0 || sluiced_link_settings(d) != 0 ||
	    sluiced_pool_size(d) != 0) {
		rc = EXIT_CONFIG;
		goto out;
	}
	if (sluiced_create_pools(d, pid) != 0 || sluiced_open_ports(d, pid) != 0)
		goto out;
	if (sluiced_setup_traffic(d) != 0 || sluiced_setup_qps(d) != 0) {
		rc = EXIT_CONFIG;
		goto out;
	}
	if (sluiced_setup_srv(d) != 0)
		goto out;
	if (sluiced_capture_start(d, capture, err, sizeof(err)) != 0) {
		fprintf(stderr, "sluiced: %s\n", err);
		goto out;
	}
	sluiced_check_numa(d);
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
