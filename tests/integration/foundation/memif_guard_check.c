/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memif_guard_check.c - does DPDK's memif PMD keep a gone peer's memory mapped while a burst
 * holds the guard's lock (lib/dp/memif_guard.c)?
 *
 * One memif port, in one of two roles (usage: memif_guard_check [EAL args] -- client | server
 * [--no-guard]). The client polls until it is killed. The server waits for the link, takes
 * the guard's lock as a lane does around a burst, says "holding" on stdout, and waits for the
 * link to go down (the script kills the client with SIGKILL). memif_disconnect() sets the
 * link down before it takes the lock, and unmaps the shared regions after it; so while this
 * process still holds the lock, the regions must still be mapped here and a burst must return
 * nothing; once it lets go, they must be gone. The count is of this process's mappings of the
 * client's memfds ("memif_region_N" in /proc/self/maps). With the link up the lane's reading of
 * the PMD's connected flag (sl_dp_memif_connected) must say connected, with it down not. With
 * --no-guard the server does not take the lock, and the regions are gone as soon as the link is
 * down: the control that shows the check can fail. The server says "listening" once its port is up
 * (the client may start), then prints one JSON line; exit 0 when the expectations of the mode hold.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_spinlock.h>

#include "lane.h"

#define WAIT_S 10u

/* This process's mappings of memif shared-memory regions. */
static unsigned int
mapped_regions(void)
{
	char line[512];
	unsigned int n = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		n += strstr(line, "memif_region_") != NULL;
	fclose(f);
	return n;
}

/* Wait up to WAIT_S for the port's link to be up (or down); false on timeout. */
static bool
wait_link(uint16_t port, uint16_t status)
{
	struct rte_eth_link link;

	for (unsigned int i = 0; i < WAIT_S * 1000u; i++) {
		if (rte_eth_link_get_nowait(port, &link) == 0 && link.link_status == status)
			return true;
		usleep(1000);
	}
	return false;
}

/*
 * Configure and start the port. A memif client's start connects to the server's socket once
 * and fails if that connect is refused, which happened under ASan although the server had said
 * "listening"; so a failed start is tried again, START_TRIES times START_WAIT_US apart (the
 * script waits as long for "holding").
 */
#define START_TRIES 100
#define START_WAIT_US 100000u

static int
port_start(uint16_t port, struct rte_mempool *pool)
{
	struct rte_eth_conf conf = {0};
	int rc = -1;

	if (rte_eth_dev_configure(port, 1, 1, &conf) != 0 ||
	    rte_eth_rx_queue_setup(port, 0, 256, rte_socket_id(), NULL, pool) != 0 ||
	    rte_eth_tx_queue_setup(port, 0, 256, rte_socket_id(), NULL) != 0)
		return -1;
	for (int i = 0; i < START_TRIES && (rc = rte_eth_dev_start(port)) != 0; i++)
		usleep(START_WAIT_US);
	return rc;
}

static int
server(uint16_t port, const char *name, const char *args, bool guard)
{
	struct rte_mbuf *pkts[32];
	char why[160] = "";
	rte_spinlock_t *lock = sl_dp_memif_guard(name, args, why, sizeof(why));
	unsigned int before, held, after = 0;
	bool up_connected, down_connected;
	uint16_t n;

	if (lock == NULL) {
		fprintf(stderr, "memif_guard_check: %s unguarded: %s\n", name, why);
		return 1;
	}
	if (!wait_link(port, RTE_ETH_LINK_UP)) {
		fprintf(stderr, "memif_guard_check: the client never connected\n");
		return 1;
	}
	before = mapped_regions();
	if (guard)
		rte_spinlock_lock(lock);
	up_connected = sl_dp_memif_connected(lock);
	printf("holding\n");
	fflush(stdout);
	if (!wait_link(port, RTE_ETH_LINK_DOWN)) {
		fprintf(stderr, "memif_guard_check: the link never went down\n");
		return 1;
	}
	usleep(200 * 1000); /* time enough for the control thread to unmap, were it free to */
	held = mapped_regions();
	down_connected = sl_dp_memif_connected(lock);
	n = guard ? rte_eth_rx_burst(port, 0, pkts, 32) : 0;
	if (guard)
		rte_spinlock_unlock(lock);
	for (unsigned int i = 0; i < WAIT_S * 100u; i++) {
		after = mapped_regions();
		if (after == 0)
			break;
		usleep(10 * 1000);
	}
	printf("{\"guard\": %s, \"regions_before\": %u, \"regions_while_held\": %u, "
	       "\"burst_while_held\": %u, \"regions_after\": %u, \"connected_up\": %s, "
	       "\"connected_down\": %s}\n",
	       guard ? "true" : "false", before, held, n, after, up_connected ? "true" : "false",
	       down_connected ? "true" : "false");
	if (!up_connected || down_connected)
		return 1; /* the lane's reading of the PMD's connected flag */
	if (guard)
		return before > 0 && held == before && n == 0 && after == 0 ? 0 : 1;
	return before > 0 && held == 0 ? 0 : 1;
}

int
main(int argc, char **argv)
{
	int used = rte_eal_init(argc, argv);
	struct rte_eth_dev_info info;
	struct rte_mempool *pool;
	const struct rte_devargs *da;
	char name[RTE_ETH_NAME_MAX_LEN];
	uint16_t port = 0;

	if (used < 0 || argc - used < 2) {
		fprintf(stderr,
			"usage: memif_guard_check [EAL args] -- client | server [--no-guard]\n");
		return 2;
	}
	argv += used;
	pool = rte_pktmbuf_pool_create("guard_check", 1023, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       rte_socket_id());
	if (pool == NULL || rte_eth_dev_info_get(port, &info) != 0 ||
	    rte_eth_dev_get_name_by_port(port, name) != 0 || port_start(port, pool) != 0) {
		fprintf(stderr, "memif_guard_check: cannot start port 0\n");
		return 1;
	}
	if (strcmp(argv[1], "client") == 0) {
		for (;;) {
			struct rte_mbuf *pkts[32];
			uint16_t n = rte_eth_rx_burst(port, 0, pkts, 32);

			rte_pktmbuf_free_bulk(pkts, n);
			usleep(100);
		}
	}
	/* The PMD listens once its port is probed and started: the client may connect now (its
	 * PMD does not retry a socket that refuses it). */
	printf("listening\n");
	fflush(stdout);
	da = rte_dev_devargs(info.device);
	return server(port, name, da != NULL ? da->args : NULL,
		      !(argc - used > 2 && strcmp(argv[2], "--no-guard") == 0));
}
