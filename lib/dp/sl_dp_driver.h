/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_dp_driver.h - the part of DPDK's ethdev driver interface sluice reads: a device's
 * struct rte_eth_dev and struct rte_eth_dev_data, found by name.
 *
 * Two users: the net_impair PMD (drivers/net/impair), which is a driver, and lib/dp's memif
 * guard (memif_guard.c), which needs the memif device's private data. DPDK installs its driver
 * headers only when built with -Denable_driver_sdk=true, and Debian's libdpdk-dev (22.11) is
 * not; when meson finds them (SL_HAVE_DRIVER_SDK) they are used, and otherwise this file
 * declares the leading members of the two structs as DPDK 22.11 (ABI 23) lays them out, up to
 * the last one used. These are ABI facts of 22.11, so the fallback is refused for any other
 * release, and each user checks the layout at run time before trusting it (impair_abi_check in
 * rte_eth_impair.c, memif_guard_check in memif_guard.c).
 */
#ifndef SL_DP_DRIVER_H
#define SL_DP_DRIVER_H

#include <rte_ethdev.h>
#include <rte_version.h>

#ifdef SL_HAVE_DRIVER_SDK

#include <ethdev_driver.h>

#else /* !SL_HAVE_DRIVER_SDK */

#if RTE_VERSION < RTE_VERSION_NUM(22, 11, 0, 0) || RTE_VERSION >= RTE_VERSION_NUM(23, 0, 0, 0)
#error "DPDK driver headers not installed: rebuild DPDK with -Denable_driver_sdk=true"
#endif

/* struct rte_eth_dev: per-process fast-path pointers, then the shared data. */
struct rte_eth_dev {
	eth_rx_burst_t rx_pkt_burst;
	eth_tx_burst_t tx_pkt_burst;
	eth_tx_prep_t tx_pkt_prepare;
	eth_rx_queue_count_t rx_queue_count;
	eth_rx_descriptor_status_t rx_descriptor_status;
	eth_tx_descriptor_status_t tx_descriptor_status;
	struct rte_eth_dev_data *data;
	void *process_private;
	const struct eth_dev_ops *dev_ops;
	struct rte_device *device;
	/* members after `device` are not used here */
};

/* struct rte_eth_dev_data: shared device data. */
struct rte_eth_dev_data {
	char name[RTE_ETH_NAME_MAX_LEN];
	void **rx_queues;
	void **tx_queues;
	uint16_t nb_rx_queues;
	uint16_t nb_tx_queues;
	struct rte_eth_dev_sriov sriov;
	void *dev_private;
	struct rte_eth_link dev_link;
	struct rte_eth_conf dev_conf;
	uint16_t mtu;
	uint32_t min_rx_buf_size;
	uint64_t rx_mbuf_alloc_failed;
	struct rte_ether_addr *mac_addrs;
	uint64_t mac_pool_sel[RTE_ETH_NUM_RECEIVE_MAC_ADDR];
	struct rte_ether_addr *hash_mac_addrs;
	uint16_t port_id;
	/* members after `port_id` are not used here */
};

/* The device named name (its rte_eth_dev_get_name_by_port name), or NULL. */
struct rte_eth_dev *rte_eth_dev_allocated(const char *name);

#endif /* SL_HAVE_DRIVER_SDK */

#endif /* SL_DP_DRIVER_H */
