/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * port.c - bringing a DPDK port up and down: find it by name, size its queues within what the
 * driver reports, place them and each lane's link on the device's NUMA node, start it, and take
 * it down cleanly, giving back every mbuf the links and lanes still hold.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_devargs.h>
#include <rte_ethdev.h>

#include "lane.h"
#include "dp_log.h"
#include "xdp.h"

void
sl_dp_port_list(char *buf, size_t len)
{
	uint16_t pid;
	size_t used = 0;

	buf[0] = '\0';
	RTE_ETH_FOREACH_DEV(pid)
	{
		char name[RTE_ETH_NAME_MAX_LEN];

		if (rte_eth_dev_get_name_by_port(pid, name) != 0)
			continue;
		used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s",
					 used ? ", " : "", name);
	}
	if (used == 0)
		snprintf(buf, len, "none");
}

bool
sl_dp_devarg(const char *args, const char *key, char *out, size_t len)
{
	size_t klen = strlen(key), n;
	const char *v = args;

	while (v != NULL && *v != '\0') {
		if (strncmp(v, key, klen) == 0 && v[klen] == '=') {
			v += klen + 1;
			n = strcspn(v, ",");
			if (n >= len)
				return false;
			memcpy(out, v, n);
			out[n] = '\0';
			return true;
		}
		v = strchr(v, ',');
		v = v != NULL ? v + 1 : NULL;
	}
	return false;
}

/*
 * What the port really is: its own driver, or, for net_impair, the driver of the port named by
 * its "dev=" (followed down at most depth stacked impairments). Fills the bottom port's name
 * (RTE_ETH_NAME_MAX_LEN bytes), driver name and devargs (args may be NULL); false if the
 * device cannot be read.
 */
static bool
port_bottom(uint16_t port_id, unsigned int depth, char *name, const char **driver,
	    const char **args)
{
	struct rte_eth_dev_info info;
	const struct rte_devargs *da;
	uint16_t under_id;

	if (depth == 0 || rte_eth_dev_info_get(port_id, &info) != 0 || info.driver_name == NULL ||
	    rte_eth_dev_get_name_by_port(port_id, name) != 0)
		return false;
	da = info.device != NULL ? rte_dev_devargs(info.device) : NULL;
	*driver = info.driver_name;
	*args = da != NULL ? da->args : NULL;
	if (strcmp(info.driver_name, "net_impair") != 0)
		return true;
	return *args != NULL && sl_dp_devarg(*args, "dev", name, RTE_ETH_NAME_MAX_LEN) &&
	       rte_eth_dev_get_port_by_name(name, &under_id) == 0 &&
	       port_bottom(under_id, depth - 1, name, driver, args);
}

/*
 * The AF_PACKET PMD ignores the descriptor counts of queue setup: each queue's ring (receive and
 * transmit alike) holds the framecnt devarg's frames, fixed when the device is probed, and its
 * default is 512 whatever [port] rx_desc says. The receive ring's size matters to the link
 * (lane_life.c: the replay ring must outlast it), so a port that is AF_PACKET itself and whose
 * --vdev sized no ring (no framecnt, framesz or blocksz) is probed again with
 * framecnt = rx_desc, rounded down to whole pages of the PMD's 2048-byte frames. Under
 * net_impair, or sized by its --vdev, it keeps what the --vdev says (af_packet_frames()).
 */
#define AF_PACKET_DEFAULT_FRAMES 512u /* frames per ring without framecnt (the PMD's default) */
#define AF_PACKET_FRAME_BYTES 2048u   /* bytes per frame without framesz (the PMD's default) */

static int
af_packet_size_ring(struct sl_dp_port *p, const struct sl_dp_port_conf *conf, char *err,
		    size_t errlen)
{
	unsigned int per_page = (unsigned int)getpagesize() / AF_PACKET_FRAME_BYTES, frames;
	char name[RTE_ETH_NAME_MAX_LEN], args[512], value[64];
	const char *driver, *old;
	int rc;

	/* depth 1: the port itself; a net_impair port, and what it stacks on, keep their rings */
	if (!port_bottom(p->port_id, 1, name, &driver, &old) ||
	    strcmp(driver, "net_af_packet") != 0 || old == NULL ||
	    sl_dp_devarg(old, "framecnt", value, sizeof(value)) ||
	    sl_dp_devarg(old, "framesz", value, sizeof(value)) ||
	    sl_dp_devarg(old, "blocksz", value, sizeof(value)))
		return 0;
	per_page = per_page ? per_page : 1;
	frames = SL_MAX(conf->rx_desc / per_page, 1u) * per_page;
	if (frames == AF_PACKET_DEFAULT_FRAMES)
		return 0;
	if ((size_t)snprintf(args, sizeof(args), "%s,framecnt=%u", old, frames) >= sizeof(args)) {
		snprintf(err, errlen, "%s: devargs too long to add framecnt=%u", p->name, frames);
		return -E2BIG;
	}
	rc = rte_eal_hotplug_remove("vdev", p->name);
	if (rc == 0)
		rc = rte_eal_hotplug_add("vdev", p->name, args);
	if (rc == 0)
		rc = rte_eth_dev_get_port_by_name(p->name, &p->port_id);
	if (rc != 0) {
		snprintf(err, errlen,
			 "%s: probing it again with framecnt=%u ([port] rx_desc) failed: %s",
			 p->name, frames, strerror(rc < 0 ? -rc : rc));
		return rc < 0 ? rc : -rc;
	}
	SL_DP_LOG(INFO, "%s: AF_PACKET probed again with framecnt=%u ([port] rx_desc)", p->name,
		  frames);
	return 0;
}

/* Frames in each receive ring of an AF_PACKET port with these devargs (af_packet_size_ring()). */
static uint32_t
af_packet_frames(const char *args)
{
	char value[16];
	unsigned long n;

	if (args == NULL || !sl_dp_devarg(args, "framecnt", value, sizeof(value)))
		return AF_PACKET_DEFAULT_FRAMES;
	n = strtoul(value, NULL, 10);
	return n ? (uint32_t)SL_MIN(n, UINT32_MAX) : AF_PACKET_DEFAULT_FRAMES;
}

/*
 * Two facts about the bottom port. Does its memory belong to its peer as much as to us? memif
 * maps the rings and buffers of both ends into both processes, and when one end closes the
 * other's control thread unmaps them while its lcore may be inside a burst on them: the
 * lanes' bursts then hold the lock memif_guard.c finds. And which kernel interface carries it
 * (AF_XDP, AF_PACKET: "iface="), whose own counters see drops no DPDK counter does?
 */
static void
port_identify(struct sl_dp_port *p)
{
	char bottom[RTE_ETH_NAME_MAX_LEN], why[160];
	const char *driver, *args;

	if (!port_bottom(p->port_id, 4, bottom, &driver, &args))
		return;
	p->shares_memory = strcmp(driver, "net_memif") == 0;
	p->af_xdp = strcmp(driver, "net_af_xdp") == 0;
	if ((strcmp(driver, "net_af_xdp") == 0 || strcmp(driver, "net_af_packet") == 0) &&
	    args != NULL && !sl_dp_devarg(args, "iface", p->kernel_if, sizeof(p->kernel_if)))
		p->kernel_if[0] = '\0';
	if (strcmp(driver, "net_af_packet") == 0)
		p->rx_ring_frames = af_packet_frames(args);
	if (!p->shares_memory)
		return;
	p->burst_lock = sl_dp_memif_guard(bottom, args, why, sizeof(why));
	if (p->burst_lock == NULL)
		SL_DP_LOG(WARNING,
			  "%s: memif port %s unguarded (%s): a peer that is killed may crash this "
			  "daemon inside the memif PMD",
			  p->name, bottom, why);
}

bool
sl_dp_port_id_af_xdp(uint16_t port_id)
{
	char bottom[RTE_ETH_NAME_MAX_LEN];
	const char *driver, *args;

	return port_bottom(port_id, 4, bottom, &driver, &args) && strcmp(driver, "net_af_xdp") == 0;
}

/*
 * The encapsulation: its header length, and under UDP the mbuf flag that carries a CE mark from
 * the receive burst to the delivery (lane.c), registered once per process.
 */
static int
port_encap(struct sl_dp_port *p, const struct sl_dp_port_conf *conf, char *err, size_t errlen)
{
	static const struct rte_mbuf_dynflag ce = {.name = "sluice_dynflag_ip_ce"};
	int bit;

	p->encap = conf->encap;
	p->src_port_per_qp = conf->src_port_per_qp;
	p->peer_mode = conf->peer_mode;
	memcpy(p->next_hop_ip, conf->next_hop_ip, sizeof(p->next_hop_ip));
	if (p->peer_mode == SL_DP_PEER_RESOLVE && p->encap.kind != SL_ENCAP_UDP4) {
		snprintf(err, errlen,
			 "%s: only an encap = udp port over IPv4 resolves its peer "
			 "(ARP)",
			 p->name);
		return -EINVAL;
	}
	p->hdr_bytes = (uint16_t)(RTE_ETHER_HDR_LEN + sl_encap_hdr_len(&p->encap));
	if (p->encap.kind == SL_ENCAP_ETHERNET)
		return 0;
	bit = rte_mbuf_dynflag_register(&ce);
	if (bit < 0) {
		snprintf(err, errlen, "%s: no mbuf flag left for ECN marks: %s", p->name,
			 rte_strerror(rte_errno));
		return -ENOSPC;
	}
	p->ce_flag = UINT64_C(1) << bit;
	return 0;
}

static int
port_setup(struct sl_dp_port *p, const struct sl_dp_port_conf *conf, struct rte_mempool *pool,
	   char *err, size_t errlen)
{
	struct rte_eth_conf eth_conf = {0};
	struct rte_eth_dev_info info;
	uint16_t nb_rxd = conf->rx_desc, nb_txd = conf->tx_desc;
	char why[256];
	int rc;

	memset(p, 0, sizeof(*p));
	p->xdp_claim.fd = -1;
	snprintf(p->name, sizeof(p->name), "%s", conf->device);
	if (rte_eth_dev_get_port_by_name(conf->device, &p->port_id) != 0) {
		char ports[512];

		sl_dp_port_list(ports, sizeof(ports));
		snprintf(err, errlen, "no DPDK port named '%s' (ports: %s)", conf->device, ports);
		return -ENODEV;
	}
	rc = af_packet_size_ring(p, conf, err, errlen);
	if (rc != 0)
		return rc;
	rc = rte_eth_dev_info_get(p->port_id, &info);
	if (rc != 0) {
		snprintf(err, errlen, "%s: cannot read device info: %s", p->name, strerror(-rc));
		return rc;
	}
	if (conf->nb_queues == 0 || conf->nb_queues > SL_DP_MAX_QUEUES ||
	    conf->nb_queues > info.max_rx_queues || conf->nb_queues > info.max_tx_queues) {
		snprintf(err, errlen, "%s: %u queue pairs requested, the device has %u RX / %u TX",
			 p->name, conf->nb_queues, info.max_rx_queues, info.max_tx_queues);
		return -EINVAL;
	}
	p->nb_queues = conf->nb_queues;
	p->socket_id = rte_eth_dev_socket_id(p->port_id);
	p->peer_timeout_ns = conf->peer_timeout_ns;
	rc = port_encap(p, conf, err, errlen);
	if (rc != 0)
		return rc;
	port_identify(p);
	if (p->af_xdp && sl_dp_pool_umem_check(pool, why, sizeof(why)) != 0) {
		snprintf(err, errlen, "%s: %s", p->name, why);
		return -EINVAL;
	}
	if (p->af_xdp && p->kernel_if[0] != '\0') {
		rc = sl_dp_xdp_claim(p->kernel_if, &p->xdp_claim, err, errlen);
		if (rc != 0)
			return rc;
	}

	/*
	 * No MBUF_FAST_FREE: ring frames are sent with a reference count above one. MULTI_SEGS
	 * where the device has it: QPs then send large payloads by reference, in a second mbuf
	 * (qp.c).
	 */
	p->tx_chains = (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) != 0;
	if (p->tx_chains)
		eth_conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	rc = rte_eth_dev_configure(p->port_id, p->nb_queues, p->nb_queues, &eth_conf);
	if (rc != 0) {
		snprintf(err, errlen, "%s: configure failed: %s", p->name, strerror(-rc));
		return rc;
	}
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(p->port_id, &nb_rxd, &nb_txd);
	if (rc != 0) {
		snprintf(err, errlen, "%s: descriptor counts rejected: %s", p->name, strerror(-rc));
		return rc;
	}
	if (p->rx_ring_frames == 0)
		p->rx_ring_frames = nb_rxd;
	for (uint16_t q = 0; q < p->nb_queues; q++) {
		rc = rte_eth_rx_queue_setup(p->port_id, q, nb_rxd, (unsigned int)p->socket_id, NULL,
					    pool);
		if (rc == 0)
			rc = rte_eth_tx_queue_setup(p->port_id, q, nb_txd,
						    (unsigned int)p->socket_id, NULL);
		if (rc != 0) {
			snprintf(err, errlen, "%s: queue %u setup failed: %s", p->name, q,
				 strerror(-rc));
			return rc;
		}
		rc = sl_dp_lane_init(p, q, conf, pool, err, errlen);
		if (rc != 0)
			return rc;
	}
	rc = rte_eth_dev_start(p->port_id);
	if (rc != 0) {
		snprintf(err, errlen, "%s: start failed: %s", p->name, strerror(-rc));
		return rc;
	}
	p->started = true;
	if (p->af_xdp && p->kernel_if[0] != '\0' && p->encap.kind != SL_ENCAP_ETHERNET) {
		rc = sl_dp_xdp_steer_udp(p->kernel_if, p->encap.udp_port, err, errlen);
		if (rc != 0)
			return rc;
	}
	rte_eth_macaddr_get(p->port_id, &p->mac);
	/* Unicast to the learned peer works without it; broadcast keepalives need no filter. */
	rte_eth_promiscuous_enable(p->port_id);
	return 0;
}

int
sl_dp_port_open(struct sl_dp_port *p, const struct sl_dp_port_conf *conf, struct rte_mempool *pool,
		char *err, size_t errlen)
{
	int rc = port_setup(p, conf, pool, err, errlen);

	if (rc != 0)
		sl_dp_port_close(p);
	return rc;
}

void
sl_dp_port_close(struct sl_dp_port *p)
{
	if (p->started && p->shares_memory) {
		sl_dp_memif_close(p->port_id);
	} else if (p->started) {
		rte_eth_dev_stop(p->port_id);
		rte_eth_dev_close(p->port_id);
	}
	p->started = false;
	for (uint16_t q = 0; q < p->nb_queues; q++)
		sl_dp_lane_fini(&p->lane[q]);
	if (p->af_xdp) /* (a port never opened is all zeros: no claim, no fd 0) */
		sl_dp_xdp_release(&p->xdp_claim); /* its steering program went with the port */
}

bool
sl_dp_port_peer_up(const struct sl_dp_port *p, uint64_t now_ns)
{
	return sl_dp_lane_peer_up(&p->lane[0], now_ns);
}

void
sl_dp_port_peer(const struct sl_dp_port *p, struct rte_ether_addr *mac)
{
	const struct sl_dp_lane *l = &p->lane[0];

	if (__atomic_load_n(&l->peer_known, __ATOMIC_ACQUIRE))
		rte_ether_addr_copy(&l->peer, mac);
	else
		memset(mac, 0xff, sizeof(*mac));
}

int
sl_dp_port_kernel_counter(const struct sl_dp_port *p, const char *name, uint64_t *value)
{
	char path[128];
	FILE *f;
	int rc;

	if (p->kernel_if[0] == '\0')
		return -ENOENT;
	snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/%s", p->kernel_if, name);
	f = fopen(path, "r");
	if (f == NULL)
		return -errno;
	rc = fscanf(f, "%" SCNu64, value) == 1 ? 0 : -EIO;
	fclose(f);
	return rc;
}
