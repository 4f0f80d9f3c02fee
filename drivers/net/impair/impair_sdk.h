/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * impair_sdk.h - the DPDK driver interface net_impair uses.
 *
 * A PMD needs DPDK's driver headers (ethdev_driver.h, bus_vdev_driver.h). DPDK installs them
 * only when built with -Denable_driver_sdk=true, and Debian's libdpdk-dev (22.11) is not, so
 * when meson does not find them (SL_HAVE_DRIVER_SDK unset) this file declares the part of the
 * 22.11 driver ABI the PMD touches beyond lib/dp/sl_dp_driver.h (the leading members of
 * struct rte_eth_dev and struct rte_eth_dev_data): the full slot layout of struct eth_dev_ops
 * (unused slots as padding so every slot DPDK reads past ours is NULL), struct rte_vdev_driver
 * and the exported driver functions. These are ABI facts of DPDK 22.11 (ABI 23), so the
 * fallback is refused for any other release (sl_dp_driver.h); the probe also checks the
 * layout at run time (impair_abi_check in rte_eth_impair.c) before touching a port.
 */
#ifndef SL_IMPAIR_SDK_H
#define SL_IMPAIR_SDK_H

#include <rte_bus_vdev.h>
#include <rte_dev.h>
#include <rte_devargs.h>
#include <rte_ethdev.h>
#include <rte_version.h>

#include "sl_dp_driver.h"

#ifdef SL_HAVE_DRIVER_SDK

#include <bus_vdev_driver.h>

static inline struct rte_device *
impair_vdev_device(struct rte_vdev_device *vdev)
{
	return &vdev->device;
}

#else /* !SL_HAVE_DRIVER_SDK */

/* struct eth_dev_ops in 22.11 has 113 slots; the first 47 are named, the rest are padding. */
#define IMPAIR_ETH_DEV_OPS_SLOTS 113
#define IMPAIR_ETH_DEV_OPS_NAMED 47
typedef void (*impair_unused_op_t)(void);

struct eth_dev_ops {
	int (*dev_configure)(struct rte_eth_dev *dev);
	int (*dev_start)(struct rte_eth_dev *dev);
	int (*dev_stop)(struct rte_eth_dev *dev);
	impair_unused_op_t dev_set_link_up;
	impair_unused_op_t dev_set_link_down;
	int (*dev_close)(struct rte_eth_dev *dev);
	impair_unused_op_t dev_reset;
	int (*link_update)(struct rte_eth_dev *dev, int wait_to_complete);
	impair_unused_op_t is_removed;
	int (*promiscuous_enable)(struct rte_eth_dev *dev);
	int (*promiscuous_disable)(struct rte_eth_dev *dev);
	int (*allmulticast_enable)(struct rte_eth_dev *dev);
	int (*allmulticast_disable)(struct rte_eth_dev *dev);
	impair_unused_op_t mac_addr_remove;
	impair_unused_op_t mac_addr_add;
	impair_unused_op_t mac_addr_set;
	impair_unused_op_t set_mc_addr_list;
	int (*mtu_set)(struct rte_eth_dev *dev, uint16_t mtu);
	int (*stats_get)(struct rte_eth_dev *dev, struct rte_eth_stats *stats);
	int (*stats_reset)(struct rte_eth_dev *dev);
	int (*xstats_get)(struct rte_eth_dev *dev, struct rte_eth_xstat *stats, unsigned int n);
	int (*xstats_reset)(struct rte_eth_dev *dev);
	int (*xstats_get_names)(struct rte_eth_dev *dev, struct rte_eth_xstat_name *names,
				unsigned int size);
	impair_unused_op_t queue_stats_mapping_set;
	int (*dev_infos_get)(struct rte_eth_dev *dev, struct rte_eth_dev_info *info);
	impair_unused_op_t rxq_info_get;
	impair_unused_op_t txq_info_get;
	impair_unused_op_t rx_burst_mode_get;
	impair_unused_op_t tx_burst_mode_get;
	impair_unused_op_t fw_version_get;
	impair_unused_op_t dev_supported_ptypes_get;
	impair_unused_op_t dev_ptypes_set;
	impair_unused_op_t vlan_filter_set;
	impair_unused_op_t vlan_tpid_set;
	impair_unused_op_t vlan_strip_queue_set;
	impair_unused_op_t vlan_offload_set;
	impair_unused_op_t vlan_pvid_set;
	impair_unused_op_t rx_queue_start;
	impair_unused_op_t rx_queue_stop;
	impair_unused_op_t tx_queue_start;
	impair_unused_op_t tx_queue_stop;
	int (*rx_queue_setup)(struct rte_eth_dev *dev, uint16_t qid, uint16_t nb_desc,
			      unsigned int socket_id, const struct rte_eth_rxconf *conf,
			      struct rte_mempool *mp);
	void (*rx_queue_release)(struct rte_eth_dev *dev, uint16_t qid);
	impair_unused_op_t rx_queue_intr_enable;
	impair_unused_op_t rx_queue_intr_disable;
	int (*tx_queue_setup)(struct rte_eth_dev *dev, uint16_t qid, uint16_t nb_desc,
			      unsigned int socket_id, const struct rte_eth_txconf *conf);
	void (*tx_queue_release)(struct rte_eth_dev *dev, uint16_t qid);
	impair_unused_op_t unused[IMPAIR_ETH_DEV_OPS_SLOTS - IMPAIR_ETH_DEV_OPS_NAMED];
};
static_assert(sizeof(struct eth_dev_ops) == IMPAIR_ETH_DEV_OPS_SLOTS * sizeof(void *),
	      "eth_dev_ops slot count");

struct rte_driver {
	RTE_TAILQ_ENTRY(rte_driver) next;
	const char *name;
	const char *alias;
};

/* struct rte_vdev_device: list linkage, then the generic struct rte_device (opaque here). */
struct rte_vdev_device {
	RTE_TAILQ_ENTRY(rte_vdev_device) next;
};

static inline struct rte_device *
impair_vdev_device(struct rte_vdev_device *vdev)
{
	return (struct rte_device *)(vdev + 1);
}

struct rte_vdev_driver {
	RTE_TAILQ_ENTRY(rte_vdev_driver) next;
	struct rte_driver driver;
	int (*probe)(struct rte_vdev_device *dev);
	int (*remove)(struct rte_vdev_device *dev);
	int (*dma_map)(struct rte_vdev_device *dev, void *addr, uint64_t iova, size_t len);
	int (*dma_unmap)(struct rte_vdev_device *dev, void *addr, uint64_t iova, size_t len);
	uint32_t drv_flags;
};

void rte_vdev_register(struct rte_vdev_driver *driver);
struct rte_eth_dev *rte_eth_dev_allocate(const char *name);
int rte_eth_dev_release_port(struct rte_eth_dev *eth_dev);
void rte_eth_dev_probing_finish(struct rte_eth_dev *dev);

/* As DPDK 22.11's bus_vdev_driver.h registers a vdev driver. */
#define RTE_PMD_REGISTER_VDEV(nm, vdrv)                                                            \
	RTE_INIT(vdrvinitfn_##vdrv)                                                                \
	{                                                                                          \
		(vdrv).driver.name = RTE_STR(nm);                                                  \
		rte_vdev_register(&vdrv);                                                          \
	}                                                                                          \
	RTE_PMD_EXPORT_NAME(nm, __COUNTER__)

static inline int
rte_eth_linkstatus_set(struct rte_eth_dev *dev, const struct rte_eth_link *new_link)
{
	union {
		uint64_t v;
		struct rte_eth_link link;
	} old, cur = {.link = *new_link};

	static_assert(sizeof(struct rte_eth_link) == sizeof(uint64_t), "link is one word");
	old.v = __atomic_exchange_n((uint64_t *)&dev->data->dev_link, cur.v, __ATOMIC_SEQ_CST);
	return old.link.link_status == new_link->link_status ? -1 : 0;
}

#endif /* SL_HAVE_DRIVER_SDK */

#endif /* SL_IMPAIR_SDK_H */
