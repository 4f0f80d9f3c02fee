/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lane_priv.h - what the lane half's files share (lane.c: mailbox, rings, completions, QP
 * life; lane_rx.c: arrivals and the stash). Not part of any contract: sl_chan.h is.
 */
#ifndef SL_CHAN_LANE_PRIV_H
#define SL_CHAN_LANE_PRIV_H

#include "sl_chan.h"

#define LANE_MBOX 64u /**< commands queued at once, at most */

/*
 * A QP's life on its lane. Endpoint callbacks may not complete work, so a failure found in one
 * is only marked (lqp_failed(), lqp_refused()) and carried out by the next poll (lane.c,
 * qp_fail()):
 *
 *   FREE      -> CONNECTED  QP_CONNECT: its rings and CQs known, open on the endpoint
 *   CONNECTED -> FAILED     a completion in error or a bad ring index, in a callback
 *   CONNECTED -> REFUSED    it refused an arrival (no RECV, no access, too long), in a callback
 *   FAILED    -> ERROR      the next poll: closed on the endpoint, its work flushed
 *   REFUSED   -> REFUSING   the next poll: its work flushed, but it stays open on the endpoint,
 *                           whose receiver answers the peer's later packets with the refusal
 *                           (closing it would leave the peer to time out instead)
 *   CONNECTED, FAILED, REFUSED, REFUSING -> ERROR   destroyed, or a new link session (the
 *                           endpoint's QP belongs to the old one): closed and flushed
 *   any       -> FREE       QP_DESTROY, or its application gone
 */
enum lqp_state {
	LQP_FREE,
	LQP_CONNECTED,
	LQP_FAILED,
	LQP_REFUSED,
	LQP_REFUSING,
	LQP_ERROR,
};

/* The states in which a QP is open on the endpoint. */
#define LQP_ON_ENDPOINT                                                                            \
	((1u << LQP_CONNECTED) | (1u << LQP_FAILED) | (1u << LQP_REFUSED) | (1u << LQP_REFUSING))

/* Where the segments of the message arriving on a QP go. */
enum rx_to { RX_NONE, RX_RECV, RX_STASH, RX_WRITE };

/* A work request taken from a send queue and not completed. */
struct lwr {
	uint64_t wr_id;
	uint8_t *dst;   /**< READ: the destination, in the daemon's mapping */
	uint32_t len;   /**< bytes */
	uint8_t opcode; /**< enum sl_wr_opcode */
	uint8_t flags;  /**< SL_WR_F_* */
	bool done;
};

/* A RECV buffer taken from a receive queue. */
struct lrecv {
	uint64_t wr_id;
	uint8_t *ptr; /**< in the daemon's mapping */
	uint32_t len; /**< bytes */
};

struct stash_holder;

struct lqp {
	struct sl_chan_qp_conf *c;
	uint32_t qpn;
	uint8_t state; /**< enum lqp_state */
	bool ring_bad; /**< an index was out of range: its rings are not read any more */
	uint32_t sq_cons, rq_cons; /**< the lane's consumer indexes */
	/* work requests taken: [wr_head, wr_tail), masked by sq_depth; has_pend: the newest
	 * waits for endpoint room as pend */
	struct lwr *wr;
	uint32_t wr_head, wr_tail;
	bool has_pend;
	struct sl_xport_wr pend;
	/* RECVs held: [rcv_head, rcv_tail), masked by rq_depth */
	struct lrecv *rcv;
	uint32_t rcv_head, rcv_tail;
	uint32_t res_send, res_recv; /**< CQ slots reserved on send_cq, recv_cq */
	/* arrivals */
	uint32_t stashed;            /**< its messages in the stash, whole or arriving */
	uint32_t st_head, st_tail;   /**< its stash chunks, oldest and newest (when st_chunks) */
	uint32_t st_chunks;          /**< its stash chunks, STASH_CHUNK_BYTES each */
	struct stash_holder *holder; /**< its application's hold on the stash (not FREE) */
	uint8_t rx_to;               /**< enum rx_to of the arriving message */
	uint8_t *rx_ptr;             /**< WRITE: where its first byte goes */
	uint32_t rx_len;             /**< WRITE: its length, bytes */
};

#define STASH_CHUNK_BYTES 256u /**< the stash's unit of space (lane_rx.c) */

#define SE_LAST (1u << 0)      /**< the chunk ends its message */
#define SE_IMM (1u << 1)       /**< imm valid (on a last chunk) */
#define SE_WRITE_IMM (1u << 2) /**< a WRITE-with-immediate notice (no bytes) */

/* One stash chunk: its bytes are buf[index * STASH_CHUNK_BYTES, + len). */
struct stash_chunk {
	uint32_t next;     /**< the next chunk of its QP's list or of the free list */
	uint32_t imm;      /**< SE_IMM */
	uint32_t byte_len; /**< SE_WRITE_IMM: the WRITE's length, bytes */
	uint16_t len;      /**< bytes held, up to STASH_CHUNK_BYTES */
	uint8_t flags;     /**< SE_* */
};

/* One application's hold on a lane's stash: what its QPs there hold together (lane_rx.c). */
struct stash_holder {
	uint64_t client; /**< whose (while qps) */
	uint32_t qps;    /**< its QPs open on the lane (0: the entry is free) */
	uint32_t chunks; /**< its QPs' stash chunks together */
};

struct stash {
	uint8_t *buf;                /**< [n * STASH_CHUNK_BYTES] */
	struct stash_chunk *ch;      /**< [n] */
	uint32_t n;                  /**< chunks */
	uint32_t free, n_free;       /**< the free list: its first chunk (when n_free), chunks */
	uint32_t qp_chunks;          /**< chunks one QP may hold, at most */
	uint32_t client_chunks;      /**< chunks one application's QPs may hold together, at most */
	struct stash_holder *holder; /**< [qps]: an application has at most qps QPs here */
};

struct sl_chan_lane {
	struct sl_chan_lane_conf c;
	struct sl_chan_cmd *mbox[LANE_MBOX];
	_Atomic uint32_t mb_head; /**< lane: commands answered */
	_Atomic uint32_t mb_tail; /**< control thread: commands queued */
	struct lqp *qp;           /**< [qps] */
	uint32_t *active;         /**< QPs connected or in error, by index: [n_active] */
	uint32_t n_active;
	struct lwr *wr_mem;    /**< [qps * sq_depth_max] */
	struct lrecv *rcv_mem; /**< [qps * rq_depth_max] */
	struct stash st;
	struct sl_chan_lane_stats stats;
};

/* The QP qpn if it is this lane's and in one of states (a bit mask of 1 << state). */
static inline struct lqp *
lqp_of(struct sl_chan_lane *cl, uint32_t qpn, unsigned states)
{
	struct lqp *q;

	if (!sl_chan_lane_owns(cl, qpn))
		return NULL;
	q = &cl->qp[qpn - cl->c.qpn_base];
	return (states >> q->state) & 1 ? q : NULL;
}

#define LQP_LIVE (LQP_ON_ENDPOINT | (1u << LQP_ERROR)) /**< connected once, not destroyed */

/*
 * A message of len bytes is one q may carry: what the application posts (a SEND's or WRITE's
 * bytes, and the bytes a READ asks the peer for), what a peer's READ asks q to send back and
 * what a peer's WRITE brings are held to the same max_msg_bytes, by this one check (a peer's
 * SEND is held to the RECV that takes it, or to the QP's stash share).
 */
static inline bool
lqp_msg_fits(const struct lqp *q, uint32_t len)
{
	return len <= q->c->max_msg_bytes;
}

/* Mark q failed from inside an endpoint callback: the next poll closes and flushes it. */
static inline void
lqp_failed(struct lqp *q)
{
	if (q->state == LQP_CONNECTED)
		q->state = LQP_FAILED;
}

/*
 * Mark q failed from inside an endpoint callback for refusing an arrival: the next poll
 * flushes it, and the endpoint keeps it to go on telling the peer (REFUSING).
 */
static inline void
lqp_refused(struct lqp *q)
{
	if (q->state == LQP_CONNECTED)
		q->state = LQP_REFUSED;
}

/* Where sl_chan_lane_cq_put() writes a completion, and what it carries besides its length. */
enum sl_chan_put {
	SL_CHAN_PUT_SEND_CQ = 0,       /**< the QP's send CQ */
	SL_CHAN_PUT_RECV_CQ = 1u << 0, /**< the QP's receive CQ */
	SL_CHAN_PUT_IMM = 1u << 1,     /**< imm is the message's immediate (SL_WC_F_IMM) */
};

/* Write a completion into a slot of q's send or receive CQ promised earlier; put: enum
 * sl_chan_put bits. imm counts only with SL_CHAN_PUT_IMM. */
void sl_chan_lane_cq_put(struct sl_chan_lane *cl, struct lqp *q, unsigned put, uint64_t wr_id,
			 uint8_t status, uint8_t opcode, uint32_t byte_len, uint32_t imm);

/* Deliver q's stashed messages, oldest first, while it has RECVs (lane_rx.c). */
void sl_chan_lane_stash_drain(struct sl_chan_lane *cl, struct lqp *q);

/* Free all of q's stash chunks: its stashed messages, whole or arriving, are gone (lane_rx.c). */
void sl_chan_lane_stash_drop(struct sl_chan_lane *cl, struct lqp *q);

#endif /* SL_CHAN_LANE_PRIV_H */
