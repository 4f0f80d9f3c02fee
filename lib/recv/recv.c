/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * recv.c - the MELO receiver (Lu et al., APNet'17, section 3.2), go-back-N as a mode.
 *
 * Model. Per connection the "on-chip" state is struct sl_recv_melo (24 B): RCV.NXT (next PSN to
 * deliver), RCV.HIGH (highest PSN received), start_ptr/end_ptr (the head and tail blocks of the
 * connection's bitmap in the shared bits pool) and the 3 most recent holes. Out-of-order payload
 * handles go "off-chip" to a reorder buffer of window_pkts slots indexed by PSN mod window,
 * stored with their application address. A connection holds bits and a reorder buffer only
 * while it has out-of-order data: RCV.HIGH >= RCV.NXT <=> its chain is not empty <=> it owns a
 * reorder buffer. Blocks are PSN-aligned, so the chain covers the blocks from RCV.NXT's block to
 * RCV.HIGH's block and a PSN's block offset is (psn - (RCV.NXT & ~mask)) >> log2(block_bits).
 *
 * Per arriving PSN p (MELO mode; "window" is the reorder buffer size):
 *
 *   p < RCV.NXT                          duplicate: drop, ACK at once
 *   p >= RCV.NXT + window                drop (out of window)
 *   p == RCV.NXT, RCV.HIGH == p - 1      fast path: deliver, RCV.NXT++; no bits touched
 *   p > RCV.HIGH                         tail: extend the chain to p's block (pool empty: drop,
 *                                        the paper's fallback to go-back-N recovery); a gap
 *                                        [RCV.HIGH+1, p-1] is a new hole: remember it as the
 *                                        newest of 3 and NACK at once; set p's bit, store p
 *   RCV.NXT <= p <= RCV.HIGH             retransmission: p's block must be the head or the tail
 *                                        block, else drop (middle access: a retransmission was
 *                                        lost, the RTO will resend from the front); bit set:
 *                                        duplicate. p == RCV.NXT: deliver p and then the whole
 *                                        consecutive run from the reorder buffer, returning each
 *                                        block RCV.NXT leaves and, once RCV.NXT passes RCV.HIGH,
 *                                        the chain and the reorder buffer; ACK at once.
 *                                        Otherwise set the bit and store. The hole list shrinks
 *                                        or splits around p (keeping the 3 newest).
 *
 * Two options go beyond the paper: conn_max_blocks caps one connection's share of the pool (a
 * packet that would need more is dropped and counted), and middle_walk, an ablation, reaches a
 * middle block by walking next_ptr from the head instead of dropping the packet.
 *
 * Go-back-N mode (RoCE): p == RCV.NXT delivers, p < RCV.NXT is a duplicate, anything else is
 * dropped and the first such drop of a gap episode sends one NACK naming RCV.NXT. With
 * nack_interval_ns > 0 (the DCQCN authors' ns-3 RDMA model, which MELO's evaluation ran on)
 * a drop NACKs again once that long has passed since the last NACK for the same RCV.NXT, so a
 * lost retransmission of RCV.NXT (or a lost NACK) waits the interval; with 0 it never repeats
 * and the sender's RTO recovers.
 *
 * Feedback. ACKs are cumulative (RCV.NXT). In-order data is acknowledged once per
 * ack_every_pkts packets or ack_delay_ns after the first unacknowledged one (a FIFO of
 * connections with an ACK due, swept by sl_recv_poll), whichever comes first. Duplicates, hole
 * fills that move RCV.NXT, SL_RECV_F_ACK_REQ and (with SACK) out-of-order arrivals are ACKed at
 * once; a new hole is NACKed at once. Units: PSNs are packets, times ns.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sl_recv.h"
#include "pool.h"
#include "sl_seq.h"

/** The paper's on-chip fields with 32-bit PSNs: 24 B (the paper's 20 B uses 24-bit PSNs). */
struct sl_recv_melo {
	uint32_t rcv_nxt;   /**< PSN: next to deliver; every PSN before it was delivered */
	uint32_t rcv_high;  /**< PSN: highest received; rcv_nxt - 1 when nothing is out of order */
	uint16_t start_ptr; /**< pool block holding rcv_nxt's bit; NIL when no bits are held */
	uint16_t end_ptr;   /**< pool block holding rcv_high's bit */
	union {
		struct {
			uint16_t start_lo;  /**< low 16 bits of the hole's first PSN */
			uint16_t len_pkts;  /**< missing PSNs; 0: unused entry */
		} hole[SL_RECV_NACK_HOLES]; /**< MELO: the most recent holes, newest first */
		struct {
			uint32_t nacked_psn; /**< PSN: RCV.NXT when the last NACK went out */
			uint32_t nack_ns_lo; /**< when it went out, ns: low 32 bits */
			uint32_t nack_ns_hi; /**< ... and high 32 bits (the union is 4-aligned) */
		} gbn; /**< go-back-N: one NACK per RCV.NXT, repeated after nack_interval_ns */
	};
};
static_assert(sizeof(struct sl_recv_melo) == 24, "MELO fields must fit in 24 B");

/* struct sl_recv_conn.flags */
#define CONN_OPEN 0x01       /**< opened, not closed */
#define CONN_IN_ACKQ 0x02    /**< has an entry in the ACK-delay FIFO */
#define CONN_CNP_SENT 0x04   /**< last_cnp_ns is valid */
#define CONN_GBN_NACKED 0x08 /**< go-back-N: melo.gbn holds the last NACK */

/** The whole per-connection receive context: one cache line (docs/recv.md, byte by byte). */
struct sl_recv_conn {
	struct sl_recv_melo melo; /**< 0..23 */
	uint64_t echo_tx_ns;      /**< 24: tx_ns of the newest packet not yet acknowledged */
	uint64_t last_cnp_ns;     /**< 32: when the last CNP was sent, ns */
	uint64_t ack_due_ns;      /**< 40: deadline of this connection's ACK-FIFO entry, ns */
	uint32_t pull_seq;        /**< 48: PULLs sent */
	uint16_t rob;             /**< 52: reorder buffer id, NIL when none */
	uint16_t echo_tx_id;      /**< 54: tx_id of the newest packet not yet acknowledged */
	uint16_t unacked_pkts;    /**< 56: packets accepted since the last ACK */
	uint16_t ce_pkts;         /**< 58: of those, ECN-CE marked */
	uint8_t mode;             /**< 60: enum sl_recv_mode */
	uint8_t fb;               /**< 61: SL_RECV_FB_* */
	uint8_t ack_every_pkts;   /**< 62: ACK per this many in-order packets */
	uint8_t flags;            /**< 63: CONN_* */
};
static_assert(sizeof(struct sl_recv_conn) == SL_CACHE_LINE, "receive context is one line");
/* docs/recv.md lays the context out byte by byte; keep the two in step. */
static_assert(offsetof(struct sl_recv_conn, melo.start_ptr) == 8 &&
		      offsetof(struct sl_recv_conn, melo.hole) == 12 &&
		      offsetof(struct sl_recv_conn, echo_tx_ns) == 24 &&
		      offsetof(struct sl_recv_conn, last_cnp_ns) == 32 &&
		      offsetof(struct sl_recv_conn, ack_due_ns) == 40 &&
		      offsetof(struct sl_recv_conn, pull_seq) == 48 &&
		      offsetof(struct sl_recv_conn, rob) == 52 &&
		      offsetof(struct sl_recv_conn, echo_tx_id) == 54 &&
		      offsetof(struct sl_recv_conn, unacked_pkts) == 56 &&
		      offsetof(struct sl_recv_conn, ce_pkts) == 58 &&
		      offsetof(struct sl_recv_conn, mode) == 60 &&
		      offsetof(struct sl_recv_conn, fb) == 61 &&
		      offsetof(struct sl_recv_conn, ack_every_pkts) == 62 &&
		      offsetof(struct sl_recv_conn, flags) == 63,
	      "per-connection context layout (docs/recv.md)");

/** One reorder-buffer slot ("off-chip"). */
struct sl_recv_slot {
	void *handle;      /**< stored payload handle; NULL when empty */
	uint64_t app_addr; /**< its application address */
};

#define ROB_NIL UINT16_MAX

struct sl_recv {
	struct sl_recv_conf conf;
	uint32_t win_mask;    /**< window_pkts - 1 */
	uint32_t block_mask;  /**< block_bits - 1 */
	uint32_t block_shift; /**< log2(block_bits) */
	struct sl_recv_pool *pool;
	struct sl_recv_conn *conns; /**< max_conns contexts */
	struct sl_recv_slot **robs; /**< rob_max buffers, each allocated on first use */
	uint16_t *rob_stack;        /**< reorder-buffer ids; entries >= rob_top are free */
	uint32_t rob_top;           /**< reorder buffers in use */
	uint32_t *ackq;             /**< FIFO of connections with an ACK due, max_conns entries */
	uint32_t ackq_head;         /**< index of the oldest entry */
	uint32_t ackq_len;          /**< entries */
	uint64_t delivered_front_pkts; /**< slow path: the arriving PSN itself was RCV.NXT */
	uint64_t pool_last_ns;         /**< time of the last burst or poll, ns */
	uint64_t pool_puts_base;       /**< pool->puts at the last stats reset */
	uint64_t pool_hops_base;       /**< pool->next_hops at the last stats reset */
	struct sl_recv_stats st;
};

#define STAT(m, h) SL_STAT(struct sl_recv_stats, m, h)
#define STAT_HOLES(i)                                                                              \
	{                                                                                          \
		.name = "nack_holes_" #i, .help = "NACKs carrying " #i " holes",                   \
		.offset = offsetof(struct sl_recv_stats, nack_holes) + (i) * sizeof(uint64_t)      \
	}

static const struct sl_stat_desc stat_desc[] = {
	STAT(rx_pkts, "data packets given to the receiver"),
	STAT(delivered_pkts, "data packets delivered in order, exactly once"),
	STAT(delivered_fast_pkts, "delivered in order with no bits held (fast path)"),
	STAT(delivered_rob_pkts, "delivered out of a reorder buffer"),
	STAT(stored_pkts, "stored in a reorder buffer"),
	STAT(drop_duplicate, "dropped: already received"),
	STAT(drop_out_of_window, "dropped: PSN at or beyond RCV.NXT + window"),
	STAT(drop_middle_access, "dropped: bit in neither the head nor the tail block"),
	STAT(drop_pool_exhausted, "dropped: no free block in the bits pool"),
	STAT(drop_no_rob, "dropped: no free reorder buffer"),
	STAT(drop_out_of_order, "dropped: out of order in go-back-N mode"),
	STAT(drop_trimmed, "header-only packets whose payload was trimmed"),
	STAT(drop_bad_conn, "dropped: connection id out of range or not open"),
	STAT(drop_closed, "stored packets dropped when their connection closed"),
	STAT(holes_formed, "new holes beyond RCV.HIGH"),
	STAT(holes_untracked, "holes pushed out of the 3 most recent"),
	STAT(acks, "ACKs emitted"),
	STAT(acks_delayed, "ACKs emitted by the ACK-delay timer"),
	STAT(nacks, "NACKs emitted"),
	STAT(nacks_repeated, "go-back-N: NACKs repeating one for the same RCV.NXT"),
	STAT(nacks_suppressed, "go-back-N: drops inside a NACK interval (no NACK)"),
	STAT_HOLES(0),
	STAT_HOLES(1),
	STAT_HOLES(2),
	STAT_HOLES(3),
	STAT(cnps, "CNPs emitted"),
	STAT(cnps_suppressed, "ECN-CE packets inside a CNP interval"),
	STAT(pulls, "PULLs emitted"),
	STAT(robs_allocated, "reorder buffers allocated"),
	STAT(pool_peak_blocks, "most bits-pool blocks in use at once"),
	STAT(pool_block_ns, "pool blocks in use integrated over time, block x ns (mean usage = "
			    "pool_block_ns / elapsed ns / pool blocks)"),
	STAT(rtx_redundant_pkts, "retransmissions (SL_RECV_F_RTX) of PSNs already received"),
	STAT(drop_conn_cap, "dropped: the connection would hold more than conn_max_blocks"),
	STAT(middle_walks, "middle_walk ablation: middle blocks reached by walking the chain"),
	STAT(middle_walk_blocks, "middle_walk ablation: next_ptr hops taken by those walks"),
	STAT(pool_blocks_freed, "blocks returned to the bits pool"),
	STAT(pool_next_hops, "next_ptr reads: <= pool_blocks_freed unless middle_walk (MELO reads "
			     "next_ptr only to shrink at the head)"),
};
SL_STAT_TABLE_DEFINE(sl_recv_stat_table, struct sl_recv_stats, stat_desc);

static int
conf_check(const struct sl_recv_conf *conf)
{
	struct sl_recv_pool_conf pc;

	if (conf == NULL || conf->max_conns == 0 || conf->max_conns > UINT32_MAX / 2 ||
	    !sl_is_pow2(conf->window_pkts) || conf->window_pkts > SL_RECV_WINDOW_MAX ||
	    conf->rob_max >= ROB_NIL)
		return -EINVAL;
	pc = (struct sl_recv_pool_conf){conf->pool_bits, conf->block_bits};
	return sl_recv_pool_bytes(&pc) ? 0 : -EINVAL;
}

struct sl_recv *
sl_recv_create(const struct sl_recv_conf *conf)
{
	struct sl_recv_pool_conf pc;
	struct sl_recv *r;
	int err = -conf_check(conf);

	if (err)
		goto fail_errno;
	err = ENOMEM;
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		goto fail_errno;
	r->conf = *conf;
	pc = (struct sl_recv_pool_conf){conf->pool_bits, conf->block_bits};
	r->pool = sl_recv_pool_create(&pc);
	if (r->pool == NULL)
		goto fail;
	if (r->conf.rob_max == 0)
		r->conf.rob_max = SL_MIN(conf->max_conns, r->pool->nblocks);
	r->win_mask = conf->window_pkts - 1;
	r->block_mask = conf->block_bits - 1;
	r->block_shift = r->pool->block_shift;
	r->conns = aligned_alloc(SL_CACHE_LINE, (size_t)conf->max_conns * sizeof(*r->conns));
	r->robs = calloc(r->conf.rob_max, sizeof(*r->robs));
	r->rob_stack = calloc(r->conf.rob_max, sizeof(*r->rob_stack));
	r->ackq = calloc(conf->max_conns, sizeof(*r->ackq));
	if (r->conns == NULL || r->robs == NULL || r->rob_stack == NULL || r->ackq == NULL)
		goto fail;
	memset(r->conns, 0, (size_t)conf->max_conns * sizeof(*r->conns));
	for (uint32_t i = 0; i < r->conf.rob_max; i++)
		r->rob_stack[i] = (uint16_t)i;
	return r;
fail:
	sl_recv_free(r);
fail_errno:
	errno = err;
	return NULL;
}

void
sl_recv_free(struct sl_recv *r)
{
	if (r == NULL)
		return;
	if (r->robs != NULL)
		for (uint32_t i = 0; i < r->conf.rob_max; i++)
			free(r->robs[i]);
	free(r->robs);
	free(r->rob_stack);
	free(r->ackq);
	free(r->conns);
	sl_recv_pool_free(r->pool);
	free(r);
}

int
sl_recv_conn_open(struct sl_recv *r, uint32_t conn, const struct sl_recv_conn_conf *cc)
{
	struct sl_recv_conn *c;

	if (conn >= r->conf.max_conns || cc == NULL || cc->mode > SL_RECV_GBN ||
	    cc->ack_every_pkts == 0 || (cc->fb & ~0x3fu))
		return -EINVAL;
	c = &r->conns[conn];
	if (c->flags & CONN_OPEN)
		return -EEXIST;
	memset(&c->melo, 0, sizeof(c->melo));
	c->melo.rcv_nxt = cc->isn;
	c->melo.rcv_high = cc->isn - 1;
	c->melo.start_ptr = c->melo.end_ptr = SL_RECV_POOL_NIL;
	c->echo_tx_ns = 0;
	c->last_cnp_ns = 0;
	c->pull_seq = 0;
	c->rob = ROB_NIL;
	c->echo_tx_id = 0;
	c->unacked_pkts = 0;
	c->ce_pkts = 0;
	c->mode = cc->mode;
	c->fb = cc->fb;
	c->ack_every_pkts = cc->ack_every_pkts;
	/* A stale ACK-FIFO entry may survive a close; keep the flag that says so. */
	c->flags = (uint8_t)(CONN_OPEN | (c->flags & CONN_IN_ACKQ));
	return 0;
}

/* ---- reorder buffers -------------------------------------------------------------------- */

static uint16_t
rob_take(struct sl_recv *r)
{
	uint16_t id;

	if (r->rob_top == r->conf.rob_max)
		return ROB_NIL;
	id = r->rob_stack[r->rob_top];
	if (r->robs[id] == NULL) {
		r->robs[id] = calloc(r->conf.window_pkts, sizeof(struct sl_recv_slot));
		if (r->robs[id] == NULL)
			return ROB_NIL;
		r->st.robs_allocated++;
	}
	r->rob_top++;
	return id;
}

static void
rob_put(struct sl_recv *r, uint16_t id)
{
	r->rob_stack[--r->rob_top] = id;
}

/* ---- actions ---------------------------------------------------------------------------- */

static inline void
act_data(struct sl_recv_action *a, uint8_t type, uint8_t reason, uint32_t conn, uint32_t psn,
	 void *handle, uint64_t app_addr)
{
	a->type = type;
	a->reason = reason;
	a->conn = conn;
	a->psn = psn;
	a->data.handle = handle;
	a->data.app_addr = app_addr;
}

static inline void
act_drop(struct sl_recv_action *a, const struct sl_recv_pkt *pkt, enum sl_recv_drop reason,
	 uint64_t *counter)
{
	(*counter)++;
	act_data(a, SL_RECV_ACT_DROP, (uint8_t)reason, pkt->conn, pkt->psn, pkt->handle,
		 pkt->app_addr);
}

/*
 * A feedback action of type for connection c. Every field is written (no stale data reaches the
 * wire encoder); hole[] is meaningful for nholes entries only. ACK and NACK consume the pending
 * counts; the echo and ECN flags have the same bits as the SL_RECV_FB_ features.
 */
static inline void
act_fb(struct sl_recv_conn *c, uint32_t conn, uint8_t type, struct sl_recv_action *a)
{
	struct sl_recv_fb *fb = &a->fb;

	static_assert(SL_RECV_FBF_ECHO == SL_RECV_FB_ECHO && SL_RECV_FBF_ECN == SL_RECV_FB_ECN,
		      "feedback flags mirror the feature bits");
	a->type = type;
	a->reason = 0;
	a->conn = conn;
	a->psn = 0;
	fb->ack_psn = c->melo.rcv_nxt;
	fb->sack_psn = 0;
	fb->echo_tx_ns = c->echo_tx_ns;
	fb->echo_tx_id = c->echo_tx_id;
	fb->acked_pkts = c->unacked_pkts;
	fb->ce_pkts = c->ce_pkts;
	fb->flags = c->fb & (SL_RECV_FB_ECHO | SL_RECV_FB_ECN);
	fb->nholes = 0;
	fb->pull_seq = 0;
	if (type == SL_RECV_ACT_ACK || type == SL_RECV_ACT_NACK) {
		c->unacked_pkts = 0;
		c->ce_pkts = 0;
	}
}

/* Immediate ACK; with SACK, it names psn when psn is out of order. */
static unsigned
ack_now(struct sl_recv *r, struct sl_recv_conn *c, uint32_t conn, uint32_t psn,
	struct sl_recv_action *a)
{
	act_fb(c, conn, SL_RECV_ACT_ACK, a);
	r->st.acks++;
	if ((c->fb & SL_RECV_FB_SACK) && sl_seq_ge(psn, c->melo.rcv_nxt)) {
		a->fb.flags |= SL_RECV_FBF_SACK;
		a->fb.sack_psn = psn;
	}
	return 1;
}

/* Coalesced ACK: now when ack_every_pkts are pending, else no later than ack_delay_ns. */
static inline unsigned
ack_coalesce(struct sl_recv *r, struct sl_recv_conn *c, uint32_t conn, uint64_t now_ns,
	     struct sl_recv_action *a)
{
	if (c->unacked_pkts >= c->ack_every_pkts) {
		act_fb(c, conn, SL_RECV_ACT_ACK, a);
		r->st.acks++;
		return 1;
	}
	if (!(c->flags & CONN_IN_ACKQ)) {
		uint32_t tail = r->ackq_head + r->ackq_len++;

		if (tail >= r->conf.max_conns)
			tail -= r->conf.max_conns;
		r->ackq[tail] = conn;
		c->ack_due_ns = now_ns + r->conf.ack_delay_ns;
		c->flags |= CONN_IN_ACKQ;
	}
	return 0;
}

/*
 * An accepted (or duplicate) packet: counted in the next ACK, its timestamps echoed. Every path
 * that counts one ACKs at once or through ack_coalesce, so unacked_pkts stays <= 255.
 */
static inline void
note_arrival(struct sl_recv_conn *c, const struct sl_recv_pkt *pkt)
{
	c->unacked_pkts++;
	if (pkt->flags & SL_RECV_F_ECN_CE)
		c->ce_pkts++;
	c->echo_tx_ns = pkt->tx_ns;
	c->echo_tx_id = pkt->tx_id;
}

/* Already received: drop, count (a redundant retransmission when so flagged), ACK at once. */
static unsigned
dup_drop(struct sl_recv *r, struct sl_recv_conn *c, const struct sl_recv_pkt *pkt,
	 struct sl_recv_action *act)
{
	act_drop(act, pkt, SL_RECV_DROP_DUPLICATE, &r->st.drop_duplicate);
	if (pkt->flags & SL_RECV_F_RTX)
		r->st.rtx_redundant_pkts++;
	note_arrival(c, pkt);
	return 1 + ack_now(r, c, pkt->conn, pkt->psn, &act[1]);
}

/* ---- the 3 most recent holes -------------------------------------------------------------- */

static inline uint32_t
hole_start(const struct sl_recv_conn *c, unsigned i)
{
	return c->melo.rcv_nxt + (uint16_t)(c->melo.hole[i].start_lo - (uint16_t)c->melo.rcv_nxt);
}

static void
hole_set(struct sl_recv_conn *c, unsigned i, uint32_t start, uint32_t len)
{
	c->melo.hole[i].start_lo = (uint16_t)start;
	c->melo.hole[i].len_pkts = (uint16_t)len;
}

/* Insert [start, start + len) at position i, pushing older entries down; the oldest may go. */
static void
hole_insert(struct sl_recv *r, struct sl_recv_conn *c, unsigned i, uint32_t start, uint32_t len)
{
	if (c->melo.hole[SL_RECV_NACK_HOLES - 1].len_pkts)
		r->st.holes_untracked++;
	for (unsigned k = SL_RECV_NACK_HOLES - 1; k > i; k--)
		c->melo.hole[k] = c->melo.hole[k - 1];
	hole_set(c, i, start, len);
}

static void
hole_remove(struct sl_recv_conn *c, unsigned i)
{
	for (unsigned k = i; k + 1 < SL_RECV_NACK_HOLES; k++)
		c->melo.hole[k] = c->melo.hole[k + 1];
	hole_set(c, SL_RECV_NACK_HOLES - 1, 0, 0);
}

/* psn arrived: shrink, split or remove the tracked hole holding it. Call before RCV.NXT moves. */
static void
holes_fill(struct sl_recv *r, struct sl_recv_conn *c, uint32_t psn)
{
	for (unsigned i = 0; i < SL_RECV_NACK_HOLES; i++) {
		uint32_t len = c->melo.hole[i].len_pkts, s = hole_start(c, i);

		if (len == 0 || psn - s >= len)
			continue;
		if (psn == s) {
			hole_set(c, i, s + 1, len - 1);
		} else if (psn == s + len - 1) {
			hole_set(c, i, s, len - 1);
		} else {
			/* Split: the upper part stays the newer entry, the lower one follows. */
			hole_set(c, i, psn + 1, s + len - psn - 1);
			if (i + 1 < SL_RECV_NACK_HOLES)
				hole_insert(r, c, i + 1, s, psn - s);
			else
				r->st.holes_untracked++;
		}
		if (c->melo.hole[i].len_pkts == 0)
			hole_remove(c, i);
		return;
	}
}

static unsigned
nack_now(struct sl_recv *r, struct sl_recv_conn *c, uint32_t conn, struct sl_recv_action *a)
{
	unsigned n = 0;

	act_fb(c, conn, SL_RECV_ACT_NACK, a);
	if (c->mode == SL_RECV_MELO) {
		for (unsigned i = 0; i < SL_RECV_NACK_HOLES && c->melo.hole[i].len_pkts; i++) {
			a->fb.hole[i].start_psn = hole_start(c, i);
			a->fb.hole[i].len_pkts = c->melo.hole[i].len_pkts;
			n++;
		}
	}
	a->fb.nholes = (uint8_t)n;
	r->st.nacks++;
	r->st.nack_holes[n]++;
	return 1;
}

/* Out-of-order news: a NACK when the program takes NACKs, else an ACK (with SACK if enabled). */
static unsigned
nack_or_ack(struct sl_recv *r, struct sl_recv_conn *c, uint32_t conn, uint32_t psn,
	    struct sl_recv_action *a)
{
	if (c->fb & SL_RECV_FB_NACK)
		return nack_now(r, c, conn, a);
	return ack_now(r, c, conn, psn, a);
}

/* ---- MELO slow path ------------------------------------------------------------------------ */

/* Return the chain and the reorder buffer once nothing is out of order. */
static void
conn_drain_done(struct sl_recv *r, struct sl_recv_conn *c)
{
	sl_recv_pool_chain_release(r->pool, &c->melo.start_ptr, &c->melo.end_ptr);
	if (c->rob != ROB_NIL) {
		rob_put(r, c->rob);
		c->rob = ROB_NIL;
	}
	memset(c->melo.hole, 0, sizeof(c->melo.hole));
}

/* p > RCV.HIGH: grow the chain to p's block, remember a new hole, store p. */
static unsigned
melo_tail(struct sl_recv *r, struct sl_recv_conn *c, const struct sl_recv_pkt *pkt,
	  struct sl_recv_action *act, uint64_t now_ns)
{
	uint32_t psn = pkt->psn, base = c->melo.rcv_nxt & ~r->block_mask;
	uint32_t want = (psn - base) >> r->block_shift, need;
	bool new_hole = psn != c->melo.rcv_high + 1;
	struct sl_recv_slot *slot;
	unsigned n = 0;

	if (c->melo.start_ptr == SL_RECV_POOL_NIL)
		need = want + 1;
	else
		need = want - ((c->melo.rcv_high - base) >> r->block_shift);
	if (r->conf.conn_max_blocks && want >= r->conf.conn_max_blocks) {
		act_drop(act, pkt, SL_RECV_DROP_CONN_CAP, &r->st.drop_conn_cap);
		return 1;
	}
	if (need > sl_recv_pool_avail(r->pool)) {
		act_drop(act, pkt, SL_RECV_DROP_POOL_EXHAUSTED, &r->st.drop_pool_exhausted);
		return 1;
	}
	if (c->rob == ROB_NIL) {
		c->rob = rob_take(r);
		if (c->rob == ROB_NIL) {
			act_drop(act, pkt, SL_RECV_DROP_NO_ROB, &r->st.drop_no_rob);
			return 1;
		}
	}
	sl_recv_pool_chain_extend(r->pool, &c->melo.start_ptr, &c->melo.end_ptr, need);
	sl_recv_pool_set(r->pool, c->melo.end_ptr, psn & r->block_mask);
	slot = &r->robs[c->rob][psn & r->win_mask];
	slot->handle = pkt->handle;
	slot->app_addr = pkt->app_addr;
	if (new_hole) {
		hole_insert(r, c, 0, c->melo.rcv_high + 1, psn - c->melo.rcv_high - 1);
		r->st.holes_formed++;
	}
	c->melo.rcv_high = psn;
	r->st.stored_pkts++;
	act_data(&act[n++], SL_RECV_ACT_STORE, 0, pkt->conn, psn, pkt->handle, pkt->app_addr);
	note_arrival(c, pkt);
	if (new_hole)
		n += nack_or_ack(r, c, pkt->conn, psn, &act[n]);
	else if (c->fb & SL_RECV_FB_SACK)
		n += ack_now(r, c, pkt->conn, psn, &act[n]);
	else
		n += ack_coalesce(r, c, pkt->conn, now_ns, &act[n]);
	return n;
}

/*
 * For RCV.NXT <= psn <= RCV.HIGH: the head or the tail block holding psn's bit, or NIL for a
 * middle block; *blk_idx is the block's position in the chain.
 */
static inline uint16_t
edge_block(const struct sl_recv *r, const struct sl_recv_conn *c, uint32_t psn, uint32_t *blk_idx)
{
	uint32_t base = c->melo.rcv_nxt & ~r->block_mask;

	*blk_idx = (psn - base) >> r->block_shift;
	if (*blk_idx == 0)
		return c->melo.start_ptr;
	if (*blk_idx == (c->melo.rcv_high - base) >> r->block_shift)
		return c->melo.end_ptr;
	return SL_RECV_POOL_NIL;
}

/* RCV.NXT <= p <= RCV.HIGH: a retransmission into the head or the tail block. */
static unsigned
melo_fill(struct sl_recv *r, struct sl_recv_conn *c, const struct sl_recv_pkt *pkt,
	  struct sl_recv_action *act, uint64_t now_ns)
{
	uint32_t psn = pkt->psn, blk_idx;
	struct sl_recv_slot *rob = r->robs[c->rob];
	uint16_t blk = edge_block(r, c, psn, &blk_idx);
	unsigned n = 0;
	uint32_t p;

	if (blk == SL_RECV_POOL_NIL && r->conf.middle_walk) {
		/* The ablation: what MELO avoids, a walk of blk_idx next_ptr hops. */
		blk = c->melo.start_ptr;
		for (uint32_t k = 0; k < blk_idx; k++)
			blk = sl_recv_pool_next(r->pool, blk);
		r->st.middle_walks++;
		r->st.middle_walk_blocks += blk_idx;
	} else if (blk == SL_RECV_POOL_NIL) {
		act_drop(act, pkt, SL_RECV_DROP_MIDDLE_ACCESS, &r->st.drop_middle_access);
		return 1;
	}
	if (sl_recv_pool_test(r->pool, blk, psn & r->block_mask))
		return dup_drop(r, c, pkt, act);
	holes_fill(r, c, psn);
	note_arrival(c, pkt);
	if (psn != c->melo.rcv_nxt) {
		sl_recv_pool_set(r->pool, blk, psn & r->block_mask);
		rob[psn & r->win_mask] = (struct sl_recv_slot){pkt->handle, pkt->app_addr};
		r->st.stored_pkts++;
		act_data(&act[n++], SL_RECV_ACT_STORE, 0, pkt->conn, psn, pkt->handle,
			 pkt->app_addr);
		if (c->fb & SL_RECV_FB_SACK)
			return n + ack_now(r, c, pkt->conn, psn, &act[n]);
		return n + ack_coalesce(r, c, pkt->conn, now_ns, &act[n]);
	}
	/* The front hole filled: deliver p and the consecutive run behind it, freeing blocks. */
	act_data(&act[n++], SL_RECV_ACT_DELIVER, 0, pkt->conn, psn, pkt->handle, pkt->app_addr);
	r->st.delivered_pkts++;
	r->delivered_front_pkts++;
	/* Block by block: the run of set bits from p, on into the next block if it ends there. */
	for (p = psn + 1; sl_seq_le(p, c->melo.rcv_high);) {
		uint32_t off = p & r->block_mask, run;

		if (off == 0)
			sl_recv_pool_chain_pop(r->pool, &c->melo.start_ptr, &c->melo.end_ptr);
		run = sl_recv_pool_run(r->pool, c->melo.start_ptr, off);
		for (uint32_t k = 0; k < run; k++, p++) {
			struct sl_recv_slot *s = &rob[p & r->win_mask];

			act_data(&act[n++], SL_RECV_ACT_DELIVER, 0, pkt->conn, p, s->handle,
				 s->app_addr);
			s->handle = NULL;
		}
		r->st.delivered_pkts += run;
		r->st.delivered_rob_pkts += run;
		if (off + run < r->pool->block_bits)
			break; /* a missing PSN (or past RCV.HIGH) inside this block */
	}
	c->melo.rcv_nxt = p;
	if (sl_seq_gt(p, c->melo.rcv_high))
		conn_drain_done(r, c);
	return n + ack_now(r, c, pkt->conn, psn, &act[n]);
}

static unsigned
melo_slow(struct sl_recv *r, struct sl_recv_conn *c, const struct sl_recv_pkt *pkt,
	  struct sl_recv_action *act, uint64_t now_ns)
{
	uint32_t d = pkt->psn - c->melo.rcv_nxt;

	if (d >= r->conf.window_pkts) {
		if ((int32_t)d < 0)
			return dup_drop(r, c, pkt, act);
		act_drop(act, pkt, SL_RECV_DROP_OUT_OF_WINDOW, &r->st.drop_out_of_window);
		return 1;
	}
	if (sl_seq_gt(pkt->psn, c->melo.rcv_high))
		return melo_tail(r, c, pkt, act, now_ns);
	return melo_fill(r, c, pkt, act, now_ns);
}

/* ---- go-back-N ---------------------------------------------------------------------------- */

/*
 * Is a NACK of RCV.NXT due? Yes for a new RCV.NXT; for the one already NACKed only when
 * nack_interval_ns > 0 and that long has passed (ns-3's "now >= nack timer || last NACK !=
 * expected"). Notes the NACK's PSN and time when it is.
 */
static inline bool
gbn_nack_due(struct sl_recv *r, struct sl_recv_conn *c, uint64_t now_ns)
{
	uint64_t last_ns = (uint64_t)c->melo.gbn.nack_ns_hi << 32 | c->melo.gbn.nack_ns_lo;

	if ((c->flags & CONN_GBN_NACKED) && c->melo.gbn.nacked_psn == c->melo.rcv_nxt) {
		if (r->conf.nack_interval_ns == 0 || now_ns - last_ns < r->conf.nack_interval_ns) {
			r->st.nacks_suppressed++;
			return false;
		}
		r->st.nacks_repeated++;
	}
	c->flags |= CONN_GBN_NACKED;
	c->melo.gbn.nacked_psn = c->melo.rcv_nxt;
	c->melo.gbn.nack_ns_lo = (uint32_t)now_ns;
	c->melo.gbn.nack_ns_hi = (uint32_t)(now_ns >> 32);
	return true;
}

static unsigned
gbn_slow(struct sl_recv *r, struct sl_recv_conn *c, const struct sl_recv_pkt *pkt,
	 struct sl_recv_action *act, uint64_t now_ns)
{
	if (sl_seq_lt(pkt->psn, c->melo.rcv_nxt))
		return dup_drop(r, c, pkt, act);
	act_drop(act, pkt, SL_RECV_DROP_OUT_OF_ORDER, &r->st.drop_out_of_order);
	if (!gbn_nack_due(r, c, now_ns))
		return 1;
	if (c->fb & SL_RECV_FB_NACK)
		return 1 + nack_now(r, c, pkt->conn, &act[1]);
	/* A duplicate ACK: no SACK, the packet was not kept. */
	act_fb(c, pkt->conn, SL_RECV_ACT_ACK, &act[1]);
	r->st.acks++;
	return 2;
}

/* ---- per packet --------------------------------------------------------------------------- */

/*
 * NDP: the payload was trimmed; NACK that one PSN so the sender resends it at once (programs
 * with PULL or NACK feedback), unless it is known to be here already or lies outside the
 * window. A PSN in a middle block cannot be checked without a walk: it is not NACKed.
 */
static unsigned
trimmed(struct sl_recv *r, struct sl_recv_conn *c, const struct sl_recv_pkt *pkt,
	struct sl_recv_action *act)
{
	uint32_t psn = pkt->psn, blk_idx;

	act_drop(act, pkt, SL_RECV_DROP_TRIMMED, &r->st.drop_trimmed);
	if (!(c->fb & (SL_RECV_FB_NACK | SL_RECV_FB_PULL)) ||
	    psn - c->melo.rcv_nxt >= r->conf.window_pkts)
		return 1;
	if (sl_seq_le(psn, c->melo.rcv_high)) {
		uint16_t blk = edge_block(r, c, psn, &blk_idx);

		if (blk == SL_RECV_POOL_NIL || sl_recv_pool_test(r->pool, blk, psn & r->block_mask))
			return 1;
	}
	act_fb(c, pkt->conn, SL_RECV_ACT_NACK, &act[1]);
	act[1].fb.nholes = 1;
	act[1].fb.hole[0] = (struct sl_recv_hole){pkt->psn, 1};
	r->st.nacks++;
	r->st.nack_holes[1]++;
	return 2;
}

/* CNP (DCQCN, rate-limited per connection) and PULL (NDP) after the packet's own actions. */
static inline unsigned
fb_tail(struct sl_recv *r, struct sl_recv_conn *c, const struct sl_recv_pkt *pkt, uint64_t now_ns,
	struct sl_recv_action *act)
{
	unsigned n = 0;

	if ((pkt->flags & SL_RECV_F_ECN_CE) && (c->fb & SL_RECV_FB_CNP)) {
		if (!(c->flags & CONN_CNP_SENT) ||
		    now_ns - c->last_cnp_ns >= r->conf.cnp_interval_ns) {
			act_fb(c, pkt->conn, SL_RECV_ACT_CNP, &act[n++]);
			c->last_cnp_ns = now_ns;
			c->flags |= CONN_CNP_SENT;
			r->st.cnps++;
		} else {
			r->st.cnps_suppressed++;
		}
	}
	if (c->fb & SL_RECV_FB_PULL) {
		act_fb(c, pkt->conn, SL_RECV_ACT_PULL, &act[n]);
		act[n++].fb.pull_seq = ++c->pull_seq;
		r->st.pulls++;
	}
	return n;
}

static inline unsigned
recv_one(struct sl_recv *r, const struct sl_recv_pkt *pkt, uint64_t now_ns,
	 struct sl_recv_action *act)
{
	struct sl_recv_conn *c;
	unsigned n;

	r->st.rx_pkts++;
	if (sl_unlikely(pkt->conn >= r->conf.max_conns) ||
	    sl_unlikely(!(r->conns[pkt->conn].flags & CONN_OPEN))) {
		act_drop(act, pkt, SL_RECV_DROP_BAD_CONN, &r->st.drop_bad_conn);
		return 1;
	}
	c = &r->conns[pkt->conn];
	if (sl_likely(pkt->psn == c->melo.rcv_nxt && c->melo.rcv_high == pkt->psn - 1 &&
		      !(pkt->flags & SL_RECV_F_TRIMMED))) {
		/* Fast path: in order, nothing held out of order, no bits touched. */
		act_data(act, SL_RECV_ACT_DELIVER, 0, pkt->conn, pkt->psn, pkt->handle,
			 pkt->app_addr);
		c->melo.rcv_nxt = pkt->psn + 1;
		c->melo.rcv_high = pkt->psn;
		r->st.delivered_pkts++;
		note_arrival(c, pkt);
		if (pkt->flags & SL_RECV_F_ACK_REQ)
			n = 1 + ack_now(r, c, pkt->conn, pkt->psn, &act[1]);
		else
			n = 1 + ack_coalesce(r, c, pkt->conn, now_ns, &act[1]);
	} else if (pkt->flags & SL_RECV_F_TRIMMED) {
		n = trimmed(r, c, pkt, act);
	} else if (c->mode == SL_RECV_GBN) {
		n = gbn_slow(r, c, pkt, act, now_ns);
	} else {
		n = melo_slow(r, c, pkt, act, now_ns);
		if (r->pool->peak_blocks > r->st.pool_peak_blocks)
			r->st.pool_peak_blocks = r->pool->peak_blocks;
	}
	if (sl_unlikely(c->fb & (SL_RECV_FB_CNP | SL_RECV_FB_PULL)))
		n += fb_tail(r, c, pkt, now_ns, &act[n]);
	return n;
}

/*
 * Pool usage over time: blocks in use only change inside a burst, at one now_ns, so adding
 * in_use x (now - last) at each call integrates exactly (block x ns).
 */
static inline void
pool_account(struct sl_recv *r, uint64_t now_ns)
{
	if (now_ns > r->pool_last_ns) {
		uint64_t dt_ns = now_ns - r->pool_last_ns;

		r->st.pool_block_ns += (uint64_t)sl_recv_pool_in_use(r->pool) * dt_ns;
		r->pool_last_ns = now_ns;
	}
}

unsigned
sl_recv_actions_max(const struct sl_recv *r)
{
	/* window deliveries (the run, p included) + ACK or NACK + CNP + PULL */
	return r->conf.window_pkts + 3;
}

unsigned
sl_recv_burst(struct sl_recv *r, const struct sl_recv_pkt *pkts, unsigned n, uint64_t now_ns,
	      struct sl_recv_action *act, unsigned max, unsigned *consumed)
{
	unsigned i, out = 0, need = sl_recv_actions_max(r);

	pool_account(r, now_ns);
	for (i = 0; i < n && max - out >= need; i++)
		out += recv_one(r, &pkts[i], now_ns, &act[out]);
	if (consumed != NULL)
		*consumed = i;
	return out;
}

unsigned
sl_recv_poll(struct sl_recv *r, uint64_t now_ns, struct sl_recv_action *act, unsigned max)
{
	unsigned n = 0;

	pool_account(r, now_ns);
	while (n < max && r->ackq_len) {
		uint32_t conn = r->ackq[r->ackq_head];
		struct sl_recv_conn *c = &r->conns[conn];

		if (c->ack_due_ns > now_ns)
			break;
		if (++r->ackq_head == r->conf.max_conns)
			r->ackq_head = 0;
		r->ackq_len--;
		c->flags &= (uint8_t)~CONN_IN_ACKQ;
		if ((c->flags & CONN_OPEN) && c->unacked_pkts) {
			act_fb(c, conn, SL_RECV_ACT_ACK, &act[n++]);
			r->st.acks++;
			r->st.acks_delayed++;
		}
	}
	return n;
}

uint64_t
sl_recv_next_deadline(const struct sl_recv *r)
{
	if (r->ackq_len == 0)
		return UINT64_MAX;
	return r->conns[r->ackq[r->ackq_head]].ack_due_ns;
}

unsigned
sl_recv_conn_close(struct sl_recv *r, uint32_t conn, struct sl_recv_action *act, unsigned max)
{
	struct sl_recv_conn *c;
	unsigned n = 0;

	if (conn >= r->conf.max_conns || !(r->conns[conn].flags & CONN_OPEN))
		return 0;
	c = &r->conns[conn];
	if (c->rob != ROB_NIL) {
		struct sl_recv_slot *rob = r->robs[c->rob];

		for (uint32_t i = 0; i < r->conf.window_pkts; i++) {
			if (rob[i].handle == NULL)
				continue;
			if (n < max)
				act_data(&act[n++], SL_RECV_ACT_DROP, SL_RECV_DROP_CLOSED, conn,
					 c->melo.rcv_nxt + ((i - c->melo.rcv_nxt) & r->win_mask),
					 rob[i].handle, rob[i].app_addr);
			rob[i].handle = NULL;
			r->st.drop_closed++;
		}
	}
	conn_drain_done(r, c);
	c->flags &= (uint8_t)~CONN_OPEN;
	return n;
}

int
sl_recv_conn_info(const struct sl_recv *r, uint32_t conn, struct sl_recv_conn_info *info)
{
	const struct sl_recv_conn *c;
	uint8_t *seen;
	int len;

	if (conn >= r->conf.max_conns || info == NULL)
		return -EINVAL;
	c = &r->conns[conn];
	memset(info, 0, sizeof(*info));
	info->open = c->flags & CONN_OPEN;
	info->rcv_nxt = c->melo.rcv_nxt;
	info->rcv_high = c->melo.rcv_high;
	info->has_rob = c->rob != ROB_NIL;
	for (unsigned i = 0;
	     c->mode == SL_RECV_MELO && i < SL_RECV_NACK_HOLES && c->melo.hole[i].len_pkts; i++) {
		info->hole[i].start_psn = hole_start(c, i);
		info->hole[i].len_pkts = c->melo.hole[i].len_pkts;
		info->nholes++;
	}
	seen = calloc(r->pool->nblocks, 1);
	if (seen == NULL)
		return -ENOMEM;
	len = sl_recv_pool_chain_mark(r->pool, c->melo.start_ptr, c->melo.end_ptr, seen);
	free(seen);
	if (len < 0)
		return len;
	info->blocks = (uint32_t)len;
	return 0;
}

uint32_t
sl_recv_pool_used_blocks(const struct sl_recv *r)
{
	return sl_recv_pool_in_use(r->pool);
}

uint32_t
sl_recv_pool_total_blocks(const struct sl_recv *r)
{
	return r->pool->nblocks;
}

void
sl_recv_stats_get(const struct sl_recv *r, struct sl_recv_stats *st)
{
	*st = r->st;
	/* Not counted on the fast path: every delivery that is neither of the other two kinds. */
	st->delivered_fast_pkts =
		st->delivered_pkts - st->delivered_rob_pkts - r->delivered_front_pkts;
	if (r->pool->peak_blocks > st->pool_peak_blocks)
		st->pool_peak_blocks = r->pool->peak_blocks;
	st->pool_blocks_freed = r->pool->puts - r->pool_puts_base;
	st->pool_next_hops = r->pool->next_hops - r->pool_hops_base;
}

void
sl_recv_stats_reset(struct sl_recv *r)
{
	memset(&r->st, 0, sizeof(r->st));
	r->delivered_front_pkts = 0;
	r->pool_puts_base = r->pool->puts;
	r->pool_hops_base = r->pool->next_hops;
	r->pool->peak_blocks = r->pool->avail_ptr;
}

/* One connection's share of the audit: chain length, reorder buffer, holes. */
static int
audit_conn(const struct sl_recv *r, const struct sl_recv_conn *c, uint8_t *seen, uint8_t *rob_seen)
{
	uint32_t base = c->melo.rcv_nxt & ~r->block_mask, want = 0;
	bool ooo = sl_seq_ge(c->melo.rcv_high, c->melo.rcv_nxt);
	int len = sl_recv_pool_chain_mark(r->pool, c->melo.start_ptr, c->melo.end_ptr, seen);

	if (ooo)
		want = ((c->melo.rcv_high - base) >> r->block_shift) + 1;
	if (len < 0 || (uint32_t)len != want || ooo != (c->rob != ROB_NIL) ||
	    sl_seq_lt(c->melo.rcv_high + 1, c->melo.rcv_nxt) ||
	    c->melo.rcv_high - c->melo.rcv_nxt + 1 > r->conf.window_pkts)
		return -EFAULT;
	if (c->rob != ROB_NIL) {
		if (c->rob >= r->conf.rob_max || rob_seen[c->rob]++)
			return -EFAULT;
	}
	for (unsigned i = 0; c->mode == SL_RECV_MELO && i < SL_RECV_NACK_HOLES; i++) {
		uint32_t s = hole_start(c, i), l = c->melo.hole[i].len_pkts;

		if (l && (!ooo || s + l - 1 - c->melo.rcv_nxt > c->melo.rcv_high - c->melo.rcv_nxt))
			return -EFAULT;
	}
	return 0;
}

int
sl_recv_audit(const struct sl_recv *r)
{
	uint8_t *seen = calloc(r->pool->nblocks, 1);
	uint8_t *rob_seen = calloc(r->conf.rob_max, 1);
	uint32_t robs = 0;
	int rc = 0;

	if (seen == NULL || rob_seen == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < r->conf.max_conns && rc == 0; i++)
		if (r->conns[i].flags & CONN_OPEN)
			rc = audit_conn(r, &r->conns[i], seen, rob_seen);
	if (rc == 0)
		rc = sl_recv_pool_check(r->pool, seen);
	for (uint32_t i = 0; i < r->conf.rob_max; i++)
		robs += rob_seen[i];
	if (rc == 0 && robs != r->rob_top)
		rc = -EFAULT;
out:
	free(seen);
	free(rob_seen);
	return rc;
}

void
sl_recv_mem(const struct sl_recv_conf *conf, struct sl_recv_mem *m)
{
	struct sl_recv_pool_conf pc = {conf->pool_bits, conf->block_bits};

	m->melo_fields_bytes = sizeof(struct sl_recv_melo);
	m->conn_ctx_bytes = sizeof(struct sl_recv_conn);
	m->pool_bytes = sl_recv_pool_bytes(&pc);
	m->rob_bytes = (uint64_t)conf->window_pkts * sizeof(struct sl_recv_slot);
}
