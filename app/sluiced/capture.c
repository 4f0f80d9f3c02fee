/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * capture.c - see every frame a running sluiced sends and receives, in pcapng.
 *
 * Two ways, both off the fast path until asked for:
 *
 *  - DPDK's multi-process capture. sluiced calls rte_pdump_init(), so dpdk-dumpcap (or
 *    dpdk-pdump) attaches to a running daemon as a secondary process and captures any port:
 *        dpdk-dumpcap --file-prefix PREFIX -i PORT -w FILE.pcapng
 *    A secondary process maps the primary's memory, which EAL can share only when it is in
 *    hugepages: with --no-huge (this project's default on hugepage-less machines) dumpcap
 *    cannot attach, and --capture below is the way.
 *
 *  - --capture FILE. An RX and a TX callback on every queue of every port copy each frame
 *    (rte_pcapng_copy: the frame, its port, queue, direction and a timestamp) into a
 *    multi-producer ring; a control thread (never a worker lcore) writes the ring to FILE. A
 *    worker never waits: a frame that finds the copy pool or the ring full is counted in
 *    `dropped` and not captured. TX callbacks see what the driver is handed, so a frame the
 *    driver refuses is seen again when the lane resends it.
 *
 * At stop the counters (`captured`, `dropped`, `written`, in frames) are logged (sluice.capture).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_pcapng.h>
#include <rte_pdump.h>
#include <rte_ring.h>
#include <rte_version.h>

#include "capture.h"

RTE_LOG_REGISTER(capture_logtype, sluice.capture, INFO);

#define CAPTURE_RING_SIZE 8192 /* frames in flight from the workers to the writer */
#define CAPTURE_POOL_SIZE (2 * CAPTURE_RING_SIZE - 1)
#define CAPTURE_SNAPLEN 9728 /* bytes of each frame kept: a 9000 B MTU frame and more */
#define CAPTURE_BURST 64
#define CAPTURE_IDLE_US 200 /* the writer's sleep when the ring is empty */

struct capture_cb {
	const struct rte_eth_rxtx_callback *rx;
	const struct rte_eth_rxtx_callback *tx;
};

static struct {
	bool pdump; /* rte_pdump_init() succeeded */
	rte_pcapng_t *file;
	struct rte_ring *ring;
	struct rte_mempool *pool;
	pthread_t writer;
	bool writer_running;
	char path[256];
	volatile bool writer_stop;
	struct capture_cb cb[SL_DP_MAX_PORTS][SL_DP_MAX_QUEUES];
	uint64_t captured; /* frames copied into the ring, frames */
	uint64_t dropped;  /* frames not captured: copy pool or ring full, frames */
	uint64_t written;  /* frames written to the file, frames */
} cap;

static struct rte_mbuf *
copy_one(uint16_t port, uint16_t queue, struct rte_mbuf *m, enum rte_pcapng_direction dir)
{
#if RTE_VERSION >= RTE_VERSION_NUM(23, 11, 0, 0)
	return rte_pcapng_copy(port, queue, m, cap.pool, CAPTURE_SNAPLEN, dir, NULL);
#else
	return rte_pcapng_copy(port, queue, m, cap.pool, CAPTURE_SNAPLEN, rte_get_tsc_cycles(),
			       dir);
#endif
}

static void
capture_burst(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n,
	      enum rte_pcapng_direction dir)
{
	struct rte_mbuf *copy[CAPTURE_BURST];
	unsigned int done = 0, k, queued;

	while (done < n) {
		unsigned int chunk = RTE_MIN(n - done, (unsigned int)CAPTURE_BURST);

		k = 0;
		for (unsigned int i = 0; i < chunk; i++) {
			copy[k] = copy_one(port, queue, pkts[done + i], dir);
			if (copy[k] != NULL)
				k++;
		}
		queued = rte_ring_mp_enqueue_burst(cap.ring, (void **)copy, k, NULL);
		rte_pktmbuf_free_bulk(copy + queued, k - queued);
		__atomic_fetch_add(&cap.captured, queued, __ATOMIC_RELAXED);
		__atomic_fetch_add(&cap.dropped, chunk - queued, __ATOMIC_RELAXED);
		done += chunk;
	}
}

static uint16_t
on_rx(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n, uint16_t max, void *arg)
{
	(void)max;
	(void)arg;
	capture_burst(port, queue, pkts, n, RTE_PCAPNG_DIRECTION_IN);
	return n;
}

static uint16_t
on_tx(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n, void *arg)
{
	(void)arg;
	capture_burst(port, queue, pkts, n, RTE_PCAPNG_DIRECTION_OUT);
	return n;
}

/* Write what the ring holds; returns the frames written. */
static unsigned int
write_ring(void)
{
	struct rte_mbuf *m[CAPTURE_BURST];
	unsigned int n = rte_ring_sc_dequeue_burst(cap.ring, (void **)m, CAPTURE_BURST, NULL);

	if (n == 0)
		return 0;
	if (rte_pcapng_write_packets(cap.file, m, n) < 0)
		__atomic_fetch_add(&cap.dropped, n, __ATOMIC_RELAXED);
	else
		cap.written += n;
	rte_pktmbuf_free_bulk(m, n);
	return n;
}

static void *
writer_main(void *arg)
{
	(void)arg;
	while (!cap.writer_stop)
		if (write_ring() == 0)
			usleep(CAPTURE_IDLE_US);
	while (write_ring() > 0)
		;
	return NULL;
}

static int
open_file(const struct sluiced *d, const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0) {
		snprintf(err, errlen, "--capture %s: %s", path, strerror(errno));
		return -errno;
	}
	cap.file = rte_pcapng_fdopen(fd, NULL, NULL, "sluiced " SLUICE_VERSION, NULL);
	if (cap.file == NULL) {
		snprintf(err, errlen, "--capture %s: cannot start a pcapng file: %s", path,
			 rte_strerror(rte_errno));
		close(fd);
		return -EIO;
	}
#if RTE_VERSION >= RTE_VERSION_NUM(23, 11, 0, 0)
	/* Since 23.11 a pcapng file describes only the interfaces it is told of. */
	for (unsigned int p = 0; p < d->nb_ports; p++)
		rte_pcapng_add_interface(cap.file, d->port[p].port_id, d->port[p].name, NULL, NULL);
#else
	(void)d; /* before 23.11 the file describes every port by itself */
#endif
	return 0;
}

int
sluiced_capture_start(struct sluiced *d, const char *path, char *err, size_t errlen)
{
	char name[RTE_RING_NAMESIZE];
	int rc;

	cap.pdump = rte_pdump_init() == 0;
	if (path == NULL)
		return 0;
	snprintf(name, sizeof(name), "sl_cap_%d", getpid());
	cap.pool = rte_pktmbuf_pool_create(name, CAPTURE_POOL_SIZE, 0, 0,
					   rte_pcapng_mbuf_size(CAPTURE_SNAPLEN), SOCKET_ID_ANY);
	cap.ring = rte_ring_create(name, CAPTURE_RING_SIZE, SOCKET_ID_ANY, RING_F_SC_DEQ);
	if (cap.pool == NULL || cap.ring == NULL) {
		snprintf(err, errlen, "--capture: cannot allocate its pool and ring: %s",
			 rte_strerror(rte_errno));
		rc = -ENOMEM;
		goto fail;
	}
	snprintf(cap.path, sizeof(cap.path), "%s", path);
	rc = open_file(d, path, err, errlen);
	if (rc != 0)
		goto fail;
	rc = rte_ctrl_thread_create(&cap.writer, "sl-capture", NULL, writer_main, NULL);
	if (rc != 0) {
		snprintf(err, errlen, "--capture: cannot start its writer thread: %s",
			 strerror(rc));
		rc = -rc;
		goto fail;
	}
	cap.writer_running = true;
	for (unsigned int p = 0; p < d->nb_ports; p++)
		for (uint16_t q = 0; q < d->port[p].nb_queues; q++) {
			uint16_t id = d->port[p].port_id;

			cap.cb[p][q].rx = rte_eth_add_rx_callback(id, q, on_rx, NULL);
			cap.cb[p][q].tx = rte_eth_add_tx_callback(id, q, on_tx, NULL);
			if (cap.cb[p][q].rx == NULL || cap.cb[p][q].tx == NULL) {
				snprintf(err, errlen,
					 "--capture: port %s queue %u takes no callbacks: %s",
					 d->port[p].name, q, rte_strerror(rte_errno));
				rc = -ENOTSUP;
				goto fail;
			}
		}
	return 0;
fail:
	sluiced_capture_stop(d);
	return rc;
}

void
sluiced_capture_stop(struct sluiced *d)
{
	for (unsigned int p = 0; p < d->nb_ports; p++)
		for (uint16_t q = 0; q < d->port[p].nb_queues; q++) {
			struct capture_cb *cb = &cap.cb[p][q];

			/* Removal is safe while the workers run; the memory of a callback may be
			 * in use by a burst for a while after, so it is never freed here. */
			if (cb->rx != NULL)
				rte_eth_remove_rx_callback(d->port[p].port_id, q, cb->rx);
			if (cb->tx != NULL)
				rte_eth_remove_tx_callback(d->port[p].port_id, q, cb->tx);
			cb->rx = cb->tx = NULL;
		}
	if (cap.writer_running) {
		cap.writer_stop = true;
		pthread_join(cap.writer, NULL);
		cap.writer_running = false;
	}
	if (cap.file != NULL) {
		rte_pcapng_close(cap.file);
		cap.file = NULL;
		rte_log(RTE_LOG_INFO, capture_logtype,
			"sluiced: capture: %" PRIu64 " frames captured, %" PRIu64
			" dropped, %" PRIu64 " written to %s\n",
			cap.captured, cap.dropped, cap.written, cap.path);
	}
	rte_ring_free(cap.ring);
	cap.ring = NULL;
	rte_mempool_free(cap.pool);
	cap.pool = NULL;
	if (cap.pdump) {
		rte_pdump_uninit();
		cap.pdump = false;
	}
}
