/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dp_eal.h - EAL start-up for the lib/dp unit tests: no hugepages, no PCI, one net_ring0 port
 * whose TX ring is its own RX ring, a file prefix unique to the process. Runs without root.
 */
#ifndef TEST_DP_EAL_H
#define TEST_DP_EAL_H

#include <stdio.h>
#include <unistd.h>

#include <rte_eal.h>

static inline int
test_dp_eal_init(const char *name)
{
	char prefix[64];
	char *argv[] = {(char *)name,        "--no-huge", "-m",        "256",           "--no-pci",
			"--log-level=error", "--vdev",    "net_ring0", "--file-prefix", prefix};

	snprintf(prefix, sizeof(prefix), "sl-%s-%d", name, getpid());
	return rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])), argv) < 0 ? -1 : 0;
}

#endif /* TEST_DP_EAL_H */
