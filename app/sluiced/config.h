/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * config.h - sluiced's INI configuration: the schema (every section and key, with its default,
 * unit and help text, in one table that --help prints), loading through rte_cfgfile, and
 * validation that reports `file:line: key: what is wrong`.
 */
#ifndef SLUICED_CONFIG_H
#define SLUICED_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_ether.h>

#include "sl_dp.h"

#define SLUICED_MAX_PORTS SL_DP_MAX_PORTS
#define SLUICED_NAME_MAX 64

struct sluiced_port_conf {
	char section[SLUICED_NAME_MAX]; /**< "port.0": where the keys came from */
	char device[RTE_ETH_NAME_MAX_LEN]; /**< DPDK device name (PCI address or --vdev name) */
	unsigned int device_line;          /**< line of the device key, for late errors */
	bool learn_peer;                   /**< peer MAC learned from its first valid frame */
	struct rte_ether_addr peer_mac;    /**< when !learn_peer */
	uint16_t rx_desc;                  /**< RX ring size, descriptors */
	uint16_t tx_desc;                  /**< TX ring size, descriptors */
};

struct sluiced_conf {
	char path[256];                 /**< the file it was loaded from */
	char name[SLUICED_NAME_MAX];    /**< host name shown in telemetry and reports */
	unsigned int workers;           /**< worker lcores; 0 = single-lcore mode */
	unsigned int workers_line;
	uint32_t mbufs;                 /**< mbufs per pool */
	uint32_t mbuf_cache;            /**< per-lcore mempool cache, mbufs */
	uint16_t mbuf_data_room;        /**< data room per mbuf, bytes (incl. headroom) */
	uint64_t keepalive_ns;          /**< IDLE keepalive interval when idle */
	uint64_t peer_timeout_ns;       /**< peer is down after this long without a valid frame */
	unsigned int nb_ports;
	struct sluiced_port_conf port[SLUICED_MAX_PORTS];
};

/* Load and validate path. 0, or -1 after printing `file:line: key: problem` to err. */
int sluiced_conf_load(struct sluiced_conf *c, const char *path, FILE *err);

/* Print every section and key with its default and meaning (for --help). */
void sluiced_conf_print_keys(FILE *out);

#endif /* SLUICED_CONFIG_H */
