/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pool.c - packet pools, and the one an AF_XDP port needs.
 *
 * The hazard, in DPDK 22.11's net_af_xdp. The PMD registers its port's mempool as the AF_XDP
 * socket's UMEM (shared UMEM, unaligned chunks), from the page holding the pool's first object
 * for populated_size x object size bytes (drivers/net/af_xdp/rte_eth_af_xdp.c,
 * xdp_umem_configure()). rte_pktmbuf_pool_create() keeps every object inside one page, so each
 * page ends with a gap, and the pool's memory is longer than that: with --no-huge, a 4 KiB page
 * holds one 2368 B mbuf, and 65535 mbufs span 268 MB of which the UMEM covers 155 MB. To the
 * kernel an mbuf past the UMEM's end is an invalid descriptor: sent, it is dropped without a
 * trace, and so is every replay of it, so the reliable link livelocks on it (seen over veth
 * after a few peer restarts had cycled the pool into its upper part: the same 20-odd frames
 * never reached the peer in a minute of replays); put in the fill ring, it is discarded.
 *
 * The remedy. An AF_XDP port's pool packs its objects back to back (RTE_MEMPOOL_F_NO_IOVA_CONTIG
 * lifts the page constraint) in one memory chunk, so its memory is exactly what the PMD
 * registers. The kernel takes a frame that crosses a page in copy mode, and in zero-copy mode
 * where the pages are contiguous (hugepages). sl_dp_pool_umem_check() verifies the layout, and
 * sl_dp_port_open() refuses an AF_XDP port whose pool fails it, so the hazard cannot come back
 * silently. Other ports keep rte_pktmbuf_pool_create()'s pools: a NIC that DMAs into mbufs may
 * need each one IOVA-contiguous. The right fix is in the PMD (register the chunk's real
 * length); this file's second kind of pool goes when DPDK has it.
 */
#include <inttypes.h>
#include <stdio.h>

#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>

#include "sl_dp.h"

struct rte_mempool *
sl_dp_pool_create(const char *name, unsigned int n, unsigned int cache, uint16_t data_room,
		  int socket_id, bool umem)
{
	struct rte_pktmbuf_pool_private priv = {.mbuf_data_room_size = data_room};
	struct rte_mempool *mp;

	if (!umem)
		return rte_pktmbuf_pool_create(name, n, cache, 0, data_room, socket_id);
	mp = rte_mempool_create_empty(name, n, sizeof(struct rte_mbuf) + data_room, cache,
				      sizeof(priv), socket_id, RTE_MEMPOOL_F_NO_IOVA_CONTIG);
	if (mp == NULL)
		return NULL;
	if (rte_mempool_set_ops_byname(mp, rte_mbuf_best_mempool_ops(), NULL) != 0)
		goto fail;
	rte_pktmbuf_pool_init(mp, &priv);
	if (rte_mempool_populate_default(mp) < 0)
		goto fail;
	rte_mempool_obj_iter(mp, rte_pktmbuf_init, NULL);
	return mp;
fail : {
	int err = rte_errno;

	rte_mempool_free(mp);
	rte_errno = err;
}
	return NULL;
}

int
sl_dp_pool_umem_check(const struct rte_mempool *mp, char *why, size_t len)
{
	const struct rte_mempool_memhdr *h = STAILQ_FIRST(&mp->mem_list);
	uint64_t obj = (uint64_t)mp->header_size + mp->elt_size + mp->trailer_size;
	uint64_t covered = obj * mp->populated_size;

	if (mp->nb_mem_chunks != 1 || h == NULL) {
		snprintf(why, len, "pool %s is in %u memory chunks, the AF_XDP UMEM covers one",
			 mp->name, mp->nb_mem_chunks);
		return -EINVAL;
	}
	if (h->len > covered) {
		snprintf(why, len,
			 "pool %s spans %zu bytes, the AF_XDP UMEM covers %" PRIu64
			 " (%u mbufs of %" PRIu64 " B): mbufs past it would be lost; create it "
			 "packed (sl_dp_pool_create)",
			 mp->name, h->len, covered, mp->populated_size, obj);
		return -EINVAL;
	}
	return 0;
}
