/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_eal.h - EAL start-up for the lib/dp unit tests: no hugepages, no PCI, one net_ring0 port
 * whose TX ring is its own RX ring, a file prefix unique to the process. Runs without root.
 * And the port settings the tests share: one lane, learning its peer, a 2^8-frame ring.
 */
#ifndef TEST_DP_EAL_H
#define TEST_DP_EAL_H

#include <stdio.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_mbuf.h>

#include "sl_dp.h"

static inline int
test_dp_eal_init(const char *name)
{
	char prefix[64];
	char *argv[] = {(char *)name,        "--no-huge", "-m",        "256",           "--no-pci",
			"--log-level=error", "--vdev",    "net_ring0", "--file-prefix", prefix};

	snprintf(prefix, sizeof(prefix), "sl-%s-%d", name, getpid());
	if (rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])), argv) < 0)
		return -1;
	sl_dp_eal_remove_on_signal();
	return 0;
}

/* EAL (test_dp_eal_init) and a packet pool of n mbufs of the default size; NULL on failure. */
static inline struct rte_mempool *
test_dp_eal_pool(const char *name, unsigned int n)
{
	if (test_dp_eal_init(name) != 0)
		return NULL;
	return rte_pktmbuf_pool_create(name, n, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
}

/* Free the pool and clean EAL up; 0. */
static inline int
test_dp_eal_pool_free(struct rte_mempool *pool)
{
	rte_mempool_free(pool);
	sl_dp_eal_cleanup();
	return 0;
}

/* One lane on device, control runs and keepalives every ctrl_ns (ns). */
static inline struct sl_dp_port_conf
test_dp_port_conf(const char *device, uint64_t ctrl_ns)
{
	return (struct sl_dp_port_conf){
		.device = device,
		.nb_queues = 1,
		.rx_desc = 512,
		.tx_desc = 512,
		.peer_mode = SL_DP_PEER_LEARN,
		.peer_timeout_ns = SL_NS_PER_S,
		.link =
			{
				.fmt = {.mode = SL_WIRE_MODE_FAITHFUL,
					.scope_bytes = SL_DP_VCODE_HDR_BYTES},
				.ring_order = 8,
				.keepalive_ns = ctrl_ns,
				.ctrl_interval_ns = ctrl_ns,
				.fc_frames = 256,
			},
	};
}

#endif /* TEST_DP_EAL_H */
