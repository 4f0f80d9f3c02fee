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
#include "sl_parse.h"
#include "sl_proto.h"

#define SLUICED_MAX_PORTS SL_DP_MAX_PORTS
#define SLUICED_NAME_MAX 64
#define SLUICED_API_ALLOW_MAX 16 /**< entries of [api] allow_users, allow_groups, at most */

/* An IP address from the configuration: family 0 (none given), 4 or 6; network order. */
struct sluiced_ip {
	uint8_t family;
	uint8_t addr[16];
};

enum sluiced_encap {
	SLUICED_ENCAP_ETHERNET = 0,
	SLUICED_ENCAP_UDP,
};

struct sluiced_port_conf {
	char section[SLUICED_NAME_MAX];    /**< "port.0": where the keys came from */
	char device[RTE_ETH_NAME_MAX_LEN]; /**< DPDK device name (PCI address or --vdev name) */
	unsigned int device_line;          /**< line of the device key, for late errors */
	enum sl_dp_peer_mode peer_mode;    /**< configured, learned or resolved (ARP) */
	struct rte_ether_addr peer_mac;    /**< SL_DP_PEER_STATIC */
	struct sluiced_ip gateway;         /**< encap = udp: the next hop, if not the peer */
	uint16_t rx_desc;                  /**< RX ring size, descriptors */
	uint16_t tx_desc;                  /**< TX ring size, descriptors */
	unsigned int encap;                /**< enum sluiced_encap */
	struct sluiced_ip local_ip;        /**< encap = udp: this port's address */
	struct sluiced_ip peer_ip;         /**< encap = udp: the peer's */
	uint16_t udp_port;                 /**< encap = udp: destination port, both ends */
};

enum sluiced_traffic_mode {
	SLUICED_TRAFFIC_OFF = 0,
	SLUICED_TRAFFIC_SEND,
	SLUICED_TRAFFIC_CHECK,
	SLUICED_TRAFFIC_BOTH,
};

/* [link] reliability, in the order of its choices. */
enum sluiced_reliability {
	SLUICED_RELIABILITY_LINK = 0,   /**< the link replays (RIFL) */
	SLUICED_RELIABILITY_END_TO_END, /**< no replay: the transport recovers */
};

/* [link] vcode_scope, in the order of its choices. */
enum sluiced_vcode_scope {
	SLUICED_VCODE_HEADER = 0, /**< link + transport header */
	SLUICED_VCODE_FRAME,      /**< the whole frame */
};

/* [link]: the reliable link of every lane (docs/link.md). */
struct sluiced_link_conf {
	unsigned int reliability;    /**< enum sluiced_reliability */
	unsigned int mode;           /**< enum sl_wire_mode */
	unsigned int vcode_scope;    /**< enum sluiced_vcode_scope */
	unsigned int replay;         /**< enum sl_link_replay */
	uint32_t ring_order;         /**< k of the 2^k-frame replay ring; 0 = from rate x RTT */
	uint64_t rate_bps;           /**< link rate for sizing, bits/s */
	uint64_t rtt_ns;             /**< round-trip time for sizing */
	uint32_t sizing_frame_bytes; /**< frame size assumed by the sizing rules, bytes */
	uint32_t fc_frames;          /**< S_FC, frames; 0 = SL_LINK_FC_RTTS x rate x RTT */
	uint32_t fc_on_frames;       /**< pause at this occupancy, frames; 0 = 2/3 S_FC */
	uint32_t fc_off_frames;      /**< resume at this occupancy, frames; 0 = 1/3 S_FC */
	uint64_t keepalive_ns;       /**< IDLE after this long without sending */
	uint64_t ctrl_interval_ns;   /**< gap between control runs */
	uint64_t stuck_ns; /**< error episode given up (link re-initialized); 0 = default */
	unsigned int line; /**< line of the [link] header (0: defaults) */
};

/* [traffic]: the link test traffic generator and checker (docs/link.md). */
struct sluiced_traffic_conf {
	unsigned int mode;      /**< enum sluiced_traffic_mode */
	uint32_t body_bytes;    /**< payload size, bytes */
	uint64_t rate_bps;      /**< generator rate, body bits/s; 0 = as fast as possible */
	uint64_t frames;        /**< payloads per lane; 0 = no limit */
	uint64_t consume_bps;   /**< checker consumption rate, body bits/s; 0 = unthrottled */
	unsigned int body_line; /**< line of body_bytes, for late errors */
};

enum sluiced_qp_direction {
	SLUICED_QP_SEND = 0, /**< post messages to the peer's QPs */
	SLUICED_QP_RECV,     /**< check the messages the peer's QPs post */
	SLUICED_QP_BOTH,
};

#define SLUICED_QP_PROTOS_MAX 16 /**< programs in [qp] proto's list */
#define SLUICED_QP_LIMITS_MAX 16 /**< rates in [qp] rate_limit_mbps's list */
#define SLUICED_QP_SQ_MAX 1024   /**< send-queue entries per QP of the built-in traffic */

/* [qp]: queue pairs of the transport endpoint with built-in message traffic (docs/sluiced.md). */
struct sluiced_qp_conf {
	uint32_t count;     /**< QPs per port, QPN 0..count-1; 0 = off */
	char proto[256];    /**< program name, or a comma-separated list (QPN i: the i mod n th) */
	unsigned int recv;  /**< struct sl_xport_qp_conf.recv_mode: melo, gbn or ec */
	uint32_t seg_bytes; /**< payload per packet, bytes */
	uint32_t msg_min_bytes;   /**< smallest message, bytes */
	uint32_t msg_max_bytes;   /**< largest message, bytes */
	uint64_t msgs;            /**< messages each sending QP posts; 0 = until stopped */
	unsigned int direction;   /**< enum sluiced_qp_direction */
	unsigned int check;       /**< 1: compare every byte received; 0: lengths and order only */
	uint64_t rate_bps;        /**< initial rate of rate programs, bits/s */
	char rate_limit[256];     /**< QPs' rate limits on the wire, a rate or a comma-separated
				   *   list (QPN i: the i mod n th); 0: the link's rate */
	uint32_t window_pkts;     /**< endpoint window, packets (power of two) */
	uint64_t catchup_ns;      /**< catch-up of a paced QP after a stall, ns */
	unsigned int line_bypass; /**< 1: a QP paced at the line skips the pacer */
	uint64_t rto_ns;          /**< initial retransmission timeout, ns */
	uint64_t timeout_ns;      /**< nothing acknowledged this long: the QP fails; 0 = default */
	uint64_t seed;            /**< message sizes and content, the same on both hosts */
	char params[128]; /**< program parameters, "a[,b[,c[,d]]]" (0: the program's default) */
	/* parsed from proto, params and rate_limit */
	uint64_t param[4]; /**< struct sl_xport_qp_conf.param */
	char proto_name[SLUICED_QP_PROTOS_MAX][SL_PROTO_NAME_MAX];
	unsigned int nb_protos;
	uint64_t rate_limit_bps[SLUICED_QP_LIMITS_MAX]; /**< bits/s, 0: the link's rate */
	unsigned int nb_limits;
	unsigned int count_line; /**< lines of keys, for late errors (0: default) */
	unsigned int seg_line;
};

/* [ec]: the endpoint-congestion target of the QPs with [qp] recv = ec (docs/ec.md). */
enum sluiced_ec_policy {
	SLUICED_EC_DACK,    /**< DACKs and held IACKs: the paper's target */
	SLUICED_EC_OPT,     /**< a plain go-back-N target (the opt baseline) */
	SLUICED_EC_AIMD,    /**< the same target (the aimd baseline) */
	SLUICED_EC_TIMEOUT, /**< go-back-N that never NACKs */
};

struct sluiced_ec_conf {
	unsigned int policy;      /**< enum sluiced_ec_policy */
	uint64_t drain_bps;       /**< the host's drain rate, wire bits/s; 0: the link's rate */
	uint32_t queue_bytes;     /**< the target queue, bytes */
	uint32_t threshold_bytes; /**< congested above, bytes */
	unsigned int iack_at;     /**< 0: IACK at acceptance, 1: at processing */
	uint64_t fair_period_ns;  /**< fairness sampling period, ns; 0: off */
	uint32_t fair_ratio_pct;  /**< "much higher", % of the slowest */
};

#define SLUICED_API_SEG_BYTES 4096u /**< [api] seg_bytes without [qp], bytes */

/* [api]: applications on libsluice, through the channel (lib/chan, docs/api.md). */
struct sluiced_api_conf {
	unsigned int enable;             /**< 0 = no, 1 = yes */
	char socket[108];                /**< the control socket's path (sun_path's size) */
	char mode[8];                    /**< the socket file's mode, octal */
	char owner[SLUICED_NAME_MAX];    /**< user name, "-": the daemon's */
	char group[SLUICED_NAME_MAX];    /**< group name, "-": the daemon's */
	char allow_users[256];           /**< users (names or uids, commas) who may attach; "-" */
	char allow_groups[256];          /**< groups (names or gids, commas) who may attach; "-" */
	uint32_t qps;                    /**< application QPNs, on port 0's lanes */
	uint32_t clients;                /**< applications at once */
	uint32_t mrs;                    /**< memory regions, all applications together */
	uint32_t cqs;                    /**< CQs, all applications together */
	uint32_t client_mrs;             /**< MRs one application may hold; 0: mrs / 4 */
	uint64_t client_mr_bytes;        /**< the sum of one application's MR lengths, bytes */
	uint32_t client_cqs;             /**< CQs one application may hold; 0: cqs / 4 */
	uint32_t client_qps;             /**< QPs one application may hold; 0: qps / 4 */
	uint32_t uid_clients;            /**< applications of one user at once; 0: clients / 4 */
	uint64_t hello_timeout_ns;       /**< a connection's HELLO is due within this, ns */
	char program[SL_PROTO_NAME_MAX]; /**< program of a QP that names none */
	uint32_t seg_bytes;      /**< payload per packet, bytes; 0: resolved at load (see keys[]) */
	uint64_t stash_bytes;    /**< SENDs held before their RECV, per lane, bytes */
	uint64_t stash_qp_bytes; /**< of stash_bytes, one QP's share, bytes; 0 = all */
	uint64_t client_stash_bytes; /**< of stash_bytes, one application's share, bytes */
	uint64_t rto_ns;             /**< application QPs' initial RTO, ns */
	uint64_t timeout_ns; /**< application QPs' timeout, ns; 0 = the endpoint's default */
	/* resolved from the strings */
	uint32_t mode_bits; /**< mode as a number */
	int64_t uid, gid;   /**< -1: the daemon's */
	uint32_t allow_uids[SLUICED_API_ALLOW_MAX], n_allow_uids;
	uint32_t allow_gids[SLUICED_API_ALLOW_MAX], n_allow_gids;
	unsigned int seg_line; /**< lines of keys, for late errors (0: default) */
	unsigned int line;     /**< the [api] header's */
};

struct sluiced_conf {
	char path[256];              /**< the file it was loaded from */
	char name[SLUICED_NAME_MAX]; /**< host name shown in telemetry and reports */
	unsigned int workers;        /**< worker lcores; 0 = single-lcore mode */
	unsigned int workers_line;
	uint32_t mbufs; /**< mbufs per pool; 0 = sized from the lanes */
	unsigned int mbufs_line;
	uint32_t mbuf_cache;      /**< per-lcore mempool cache, mbufs */
	uint16_t mbuf_data_room;  /**< data room per mbuf, bytes (incl. headroom) */
	uint64_t peer_timeout_ns; /**< peer is down after this long without a valid frame */
	struct sluiced_link_conf link;
	struct sluiced_traffic_conf traffic;
	struct sluiced_qp_conf qp;
	struct sluiced_ec_conf ec;
	struct sluiced_api_conf api;
	unsigned int nb_ports;
	struct sluiced_port_conf port[SLUICED_MAX_PORTS];
};

enum sluiced_key_type {
	SLUICED_KEY_STRING,   /**< char[] member, size is the array size */
	SLUICED_KEY_UINT,     /**< unsigned member of `size` bytes, a quantity (sl_parse.h) */
	SLUICED_KEY_ENUM,     /**< unsigned int member: index of the value in choices ("a|b|c") */
	SLUICED_KEY_PEER_MAC, /**< "learn", "resolve" or aa:bb:cc:dd:ee:ff */
	SLUICED_KEY_IP,       /**< struct sluiced_ip member: an IPv4 or IPv6 address, or "none" */
};

/* One configuration key: the schema the parser, the defaults and --help all read. */
struct sluiced_key {
	const char *section; /**< "sluiced", "link", "traffic", "qp", "ec", "api" or "port"
				([port.N]) */
	const char *name;
	enum sluiced_key_type type;
	size_t offset;       /**< in struct sluiced_conf, or in struct sluiced_port_conf */
	size_t size;         /**< bytes of the member */
	enum sl_qty qty;     /**< UINT: count, bytes, bit/s or ns */
	uint64_t scale;      /**< UINT: base units (ns, bit/s, bytes) per unit of the key */
	uint64_t min, max;   /**< UINT: bounds, in the key's own unit */
	const char *choices; /**< ENUM: "a|b|c" */
	const char *def;     /**< default as written in the file; NULL = required */
	const char *help;
	const char *zero; /**< UINT: what 0 stands for, or NULL */
};

/* The schema: every key of every section, in --help's order. */
const struct sluiced_key *sluiced_conf_keys(size_t *n);

/* Load and validate path. 0, or -1 after printing `file:line: key: problem` to err. */
int sluiced_conf_load(struct sluiced_conf *c, const char *path, FILE *err);

/*
 * Print every section and key for --help, from the schema: "    key = default" (or
 * "(required)"), then an indented line with its meaning, range, units, choices and what 0
 * stands for.
 */
void sluiced_conf_print_keys(FILE *out);

#endif /* SLUICED_CONFIG_H */
