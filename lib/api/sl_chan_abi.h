/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_chan_abi.h - the channel between libsluice and sluiced: control messages on the unix socket,
 * and the layout of the rings in the shared memory. Both sides include this file and nothing
 * else of each other; docs/api.md is the specification.
 *
 * Control. The socket is SOCK_SEQPACKET: one request, one response, each one struct, in
 * order, one outstanding at a time. HELLO carries the shared memory's fd (SCM_RIGHTS) and must
 * come first; CQ_CREATE's successful response carries the CQ's event fd, one end of a datagram
 * socket pair whose other end the daemon keeps (so that nothing the application does with it
 * can make the daemon's signal block). The daemon reads the peer's credentials
 * (SO_PEERCRED) for its log; the socket file's owner, group and mode decide who may connect.
 *
 * Shared memory. One memfd per context, mem_bytes long, mapped by the library at base_va
 * (told in HELLO) and by the daemon wherever it likes. The daemon maps only a memfd on tmpfs
 * (not MFD_HUGETLB) of exactly mem_bytes, sealed against shrinking: HELLO refuses other memory
 * (-EINVAL) and an unsealed memfd (-EPERM). A region (MR_REG) is named twice: by its
 * offset into the memory, which is where the daemon reads and writes, and by the virtual
 * address the application sees it at, which work requests name (a buffer, a peer's raddr) and
 * which the daemon only compares with the region's bounds. The two are independent: the
 * library maps pages of the file at the application's own addresses too (sl_mem_adopt), and
 * an address names no memory of the daemon's except through a region's offset. Rings are
 * named by their offset into the memory.
 *
 * Rings. A ring is a struct sl_chan_ring (producer and consumer indexes on their own cache
 * lines) followed by 2^k fixed-size entries; indexes count up freely and wrap at 2^32, the entry
 * of index i is i & (2^k - 1). One side produces, the other consumes:
 *     SQ  application -> daemon   struct sl_chan_sqe   send work requests
 *     RQ  application -> daemon   struct sl_chan_rqe   receive buffers
 *     CQ  daemon -> application   struct sl_chan_cqe   completions (one lane's lcore a ring)
 * The producer writes entries, then publishes prod with a release store; the consumer reads
 * prod with an acquire load, reads entries, then publishes cons with a release store.
 * A CQ is cq_rings rings of its depth, one after the other (HELLO tells cq_rings: the lanes
 * that serve applications), ring i produced by lane i alone, so that QPs on several lanes can
 * complete into one CQ with no lock between the lanes; a QP's completions are all in its lane's
 * ring, in order. The application polls every ring of the CQ.
 * A CQ's event: the application stores armed = 1 in the first ring and then loads every
 * ring's prod; a lane stores its ring's prod and then loads (and clears) the first ring's armed.
 * Each side keeps that store-then-load in order with a sequentially consistent store or a full
 * fence between them, so an arm never misses a completion that its next poll did not see.
 *
 * The daemon trusts nothing in the memory. It keeps its own copy of the index it owns and
 * never reads it back; it reads the other index once per poll and refuses a value more than a
 * ring's size away from its own (the QP fails: SL_CHAN_BAD_RING); it copies each entry out
 * before checking it, so the application cannot change it between check and use.
 */
#ifndef SL_CHAN_ABI_H
#define SL_CHAN_ABI_H

#include <assert.h>
#include <stdbool.h>
#include <stdint.h>

#include "sluice.h"

#define SL_CHAN_MAGIC 0x534C4348u /**< "SLCH": first field of every control message */
#define SL_CHAN_VERSION SL_API_VERSION
#define SL_CHAN_RING_MAX (1u << 16)         /**< entries of a ring, at most */
#define SL_CHAN_MEM_MAX (UINT64_C(1) << 34) /**< shared memory per context, bytes, at most */
#define SL_CHAN_HOST_MAX 32
#define SL_CHAN_CQ_RINGS_MAX 64u /**< rings of a CQ (lanes serving applications), at most */

/* --- rings -------------------------------------------------------------------------------- */

struct sl_chan_ring {
	_Alignas(64) uint32_t prod;  /**< entries produced (producer writes) */
	_Alignas(64) uint32_t cons;  /**< entries consumed (consumer writes) */
	_Alignas(64) uint32_t armed; /**< CQ: 1 = signal the event fd at the next completion (the
				      *   application sets it, the daemon clears it when it
				      *   signals); SQ, RQ: 0 */
	uint32_t rsvd[15];
};
static_assert(sizeof(struct sl_chan_ring) == 192, "three cache lines");

/* Bytes of a ring with entries of esize bytes. */
#define SL_CHAN_RING_BYTES(entries, esize)                                                         \
	(sizeof(struct sl_chan_ring) + (uint64_t)(entries) * (esize))

/* A send work request (struct sl_wr as the daemon sees it). */
struct sl_chan_sqe {
	uint64_t wr_id;
	uint64_t addr;  /**< application VA of the local buffer */
	uint64_t raddr; /**< WRITE, READ: peer VA */
	uint32_t len;   /**< bytes */
	uint32_t lkey;
	uint32_t rkey;
	uint32_t imm;
	uint8_t opcode; /**< enum sl_wr_opcode */
	uint8_t flags;  /**< SL_WR_F_* */
	uint8_t rsvd[22];
};
static_assert(sizeof(struct sl_chan_sqe) == 64, "one cache line");

/* A receive buffer. */
struct sl_chan_rqe {
	uint64_t wr_id;
	uint64_t addr; /**< application VA */
	uint32_t len;  /**< bytes */
	uint32_t lkey;
	uint64_t rsvd;
};
static_assert(sizeof(struct sl_chan_rqe) == 32, "half a cache line");

/* A completion (struct sl_wc as the daemon writes it). */
struct sl_chan_cqe {
	uint64_t wr_id;
	uint32_t qpn;
	uint32_t byte_len;
	uint32_t imm;
	uint8_t status; /**< enum sl_wc_status */
	uint8_t opcode; /**< enum sl_wc_opcode */
	uint16_t flags; /**< SL_WC_F_* */
	uint64_t rsvd;
};
static_assert(sizeof(struct sl_chan_cqe) == 32, "half a cache line");

static inline struct sl_chan_ring *
sl_chan_ring_at(void *mem, uint64_t off)
{
	return (struct sl_chan_ring *)((uint8_t *)mem + off);
}

static inline void *
sl_chan_ring_entry(struct sl_chan_ring *r, uint32_t idx, uint32_t entries, uint32_t esize)
{
	return (uint8_t *)(r + 1) + (uint64_t)(idx & (entries - 1)) * esize;
}

/* Ring i of a CQ whose rings of depth entries each start at first, one after the other. */
static inline struct sl_chan_ring *
sl_chan_cq_ring(struct sl_chan_ring *first, uint32_t depth, uint32_t i)
{
	return (struct sl_chan_ring *)(void *)((uint8_t *)first +
					       i * SL_CHAN_RING_BYTES(depth,
								      sizeof(struct sl_chan_cqe)));
}

/*
 * Wire bytes a message of msg_bytes is charged against its QP's rate limit: every packet a full
 * segment of seg_bytes plus pkt_wire_bytes (QP_CREATE's answer); an empty message is one packet.
 */
static inline uint64_t
sl_chan_wire_bytes(uint32_t seg_bytes, uint32_t pkt_wire_bytes, uint64_t msg_bytes)
{
	uint64_t pkts;

	if (seg_bytes == 0) /* not from a daemon that sends anything */
		return msg_bytes;
	pkts = msg_bytes ? (msg_bytes + seg_bytes - 1) / seg_bytes : 1;

	return pkts * ((uint64_t)seg_bytes + pkt_wire_bytes);
}

/* --- control ------------------------------------------------------------------------------ */

enum sl_chan_type {
	SL_CHAN_HELLO = 1, /**< + SCM_RIGHTS: the memfd */
	SL_CHAN_MR_REG,
	SL_CHAN_MR_DEREG,
	SL_CHAN_CQ_CREATE, /**< response + SCM_RIGHTS: the CQ's event fd */
	SL_CHAN_CQ_DESTROY,
	SL_CHAN_QP_CREATE,
	SL_CHAN_QP_CONNECT,
	SL_CHAN_QP_DESTROY,
	SL_CHAN_TYPE_MAX = SL_CHAN_QP_DESTROY,
};

struct sl_chan_req {
	uint32_t magic;   /**< SL_CHAN_MAGIC */
	uint16_t version; /**< SL_CHAN_VERSION */
	uint16_t type;    /**< enum sl_chan_type */
	uint32_t seq;     /**< echoed in the response */
	uint32_t rsvd;
	union {
		struct {
			uint64_t mem_bytes; /**< size of the memfd */
			uint64_t base_va;   /**< where the application mapped it */
		} hello;
		struct {
			uint64_t addr;   /**< application VA: what work requests name */
			uint64_t len;    /**< bytes */
			uint32_t access; /**< SL_ACCESS_* */
			uint32_t rsvd;
			uint64_t off; /**< where the region is in the memory, bytes */
		} mr_reg;
		struct {
			uint32_t lkey;
		} mr_dereg;
		struct {
			uint64_t ring_off; /**< the CQ's first ring (of HELLO's cq_rings),
					    *   struct sl_chan_cqe entries */
			uint32_t depth;    /**< entries, power of two */
		} cq_create;
		struct {
			uint32_t cq; /**< handle from CQ_CREATE */
		} cq_destroy;
		struct {
			uint32_t send_cq, recv_cq;
			uint64_t sq_off;             /**< SQ ring */
			uint64_t rq_off;             /**< RQ ring */
			uint32_t sq_depth, rq_depth; /**< entries, powers of two */
			char program[SL_NAME_MAX];
			char pacer[SL_NAME_MAX];
			uint8_t receiver; /**< enum sl_receiver */
			uint64_t rate_limit_bps;
			uint32_t max_msg_bytes;
			uint32_t rate_msg_bytes; /**< sl_qp_attr.rate_limit_msg_bytes */
		} qp_create;
		struct {
			uint32_t qpn;
			uint32_t peer_qpn;   /**< the peer's sl_qp_info: its QP, */
			uint32_t peer_psn;   /**< the PSN its first packet carries, */
			uint32_t peer_token; /**< and the token frames to it carry */
		} qp_connect;
		struct {
			uint32_t qpn;
		} qp_destroy;
		uint8_t raw[112];
	} u;
};
static_assert(sizeof(struct sl_chan_req) == 128, "requests are 128 bytes");

struct sl_chan_rsp {
	uint32_t magic;
	uint16_t version;
	uint16_t type;  /**< the request's */
	uint32_t seq;   /**< the request's */
	int32_t status; /**< 0 or -errno */
	union {
		struct {
			char host[SL_CHAN_HOST_MAX]; /**< [sluiced] name */
			uint64_t client;   /**< the daemon's number for this context, never
					    *   reused (64 bits: it cannot wrap) */
			uint32_t cq_rings; /**< rings a CQ has (1..SL_CHAN_CQ_RINGS_MAX): every
					    *   CQ_CREATE names that many, one after the other */
		} hello;
		struct {
			uint32_t lkey, rkey;
		} mr_reg;
		struct {
			uint32_t cq;
		} cq_create;
		struct {
			uint32_t qpn;
			uint32_t seg_bytes;      /**< payload bytes per packet */
			uint32_t pkt_wire_bytes; /**< wire bytes each packet is charged beyond
						  *   its segment (headers, FCS, gap) */
			uint32_t psn;            /**< the PSN of this QP's first packet (random) */
			uint32_t token;          /**< this QP's connection token (random): frames
						  *   for it must carry it */
		} qp_create;
		uint8_t raw[112];
	} u;
};
static_assert(sizeof(struct sl_chan_rsp) == 128, "responses are 128 bytes");

#endif /* SL_CHAN_ABI_H */
