/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xport_priv.h - the transport endpoint's own state, shared by its sources and no one else:
 * xport.c (QPs, send queues, the RX and TX bursts), read.c (WRITE placement, READ requests,
 * answers and the READs awaiting them) and ec_recv.c (the endpoint-congestion receive mode). Not
 * installed; callers use sl_xport.h.
 */
#ifndef XPORT_XPORT_PRIV_H
#define XPORT_XPORT_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "sl_recv.h"
#include "sl_xport.h"

#define XP_RD_MASK (SL_XPORT_READS_MAX - 1)

static_assert((SL_XPORT_READS_MAX & XP_RD_MASK) == 0, "READ rings are masked");

/* One message of the send queue: posted (SEND, WRITE, READ), or an answer owed to the peer. */
struct sq_ent {
	const uint8_t *buf; /**< the bytes (none: no_bytes) */
	uint64_t raddr;     /**< WRITE, READ: the peer's address */
	uint64_t cookie;
	uint64_t post_ns;
	uint32_t len;       /**< bytes (READ: bytes asked for) */
	uint32_t first_psn; /**< PSN of its first packet */
	uint32_t npkts;     /**< packets */
	uint32_t msn;
	uint32_t rkey; /**< WRITE, READ: the peer's key */
	uint32_t imm;
	uint8_t op; /**< enum sl_xport_op; READ_RESP: an answer (no completion here) */
	bool has_imm;
	bool answered; /**< READ: its whole answer was delivered */
};

/* An answer owed to the peer, waiting for a send-queue slot. */
struct owed {
	const uint8_t *src;
	uint32_t len;
};

/* A QP's receive side (struct xqp.rx_state). */
enum xqp_rx_state {
	XQP_RX_OPEN,    /**< delivering in order */
	XQP_RX_RNR,     /**< refused its message in progress for now (receiver not ready): it
			 *   forgot the message and what followed, and waits for its first PSN */
	XQP_RX_REFUSED, /**< refused a message for good: it delivers nothing more */
};

/* A QP's send side after an RNR NAK (struct xqp.rnr_state). */
enum xqp_rnr_state {
	XQP_RNR_NONE,   /**< no message of it refused for now */
	XQP_RNR_WAIT,   /**< backing off: at rnr_at_ns it sends again from rnr_psn (in
			 *   x->rnr_wait); repeats of the NAK meanwhile change nothing */
	XQP_RNR_RESENT, /**< sent again from rnr_psn, until the cumulative ACK reaches
			 *   rnr_fence_psn: another RNR NAK for it backs off twice as long, one
			 *   that names a later message starts over */
};

/*
 * A set of QPs a poll walks (those awaiting READ answers; those backing off after an RNR NAK):
 * the members' QPNs packed in an array, and each QP's place in it, so that adding, removing
 * and asking cost O(1) and a walk only the members. Removing moves the last member into the
 * hole, so a walk that removes the member it stands on looks at the same index again.
 */
struct xp_qp_set {
	uint32_t *qpn; /**< [n] the members, in no order */
	uint32_t *at;  /**< [max_qps] 1 + a QP's index in qpn; 0: not a member */
	uint32_t n;
};

static inline void
sl_xp_set_add(struct xp_qp_set *s, uint32_t qpn)
{
	if (s->at[qpn])
		return;
	s->qpn[s->n++] = qpn;
	s->at[qpn] = s->n;
}

static inline void
sl_xp_set_del(struct xp_qp_set *s, uint32_t qpn)
{
	uint32_t at = s->at[qpn], last;

	if (!at)
		return;
	last = s->qpn[--s->n];
	s->qpn[at - 1] = last;
	s->at[last] = at;
	s->at[qpn] = 0;
}

struct xqp {
	const struct sl_proto_ops *ops;
	bool open;
	bool failed;         /**< timed out or NAKed: the sender is gone, sends are refused */
	bool ts;             /**< data carries its send time (the program reads echoes) */
	uint8_t recv_mode;   /**< enum sl_recv_mode or SL_XPORT_RECV_EC */
	uint32_t peer_qpn;   /**< the peer's QP: data and feedback we send name it */
	uint32_t peer_token; /**< the peer QP's connection token: every frame we send carries it */
	uint32_t token;      /**< ours: a frame for this QP carrying another is refused */
	uint32_t seg_bytes;  /**< payload bytes per packet */
	struct sl_xport_fb_flow ff;
	/* send queue: [sq_head, sq_tail) posted or owed, not completed; indexes count up, masked */
	uint32_t sq_head, sq_tail;
	uint32_t tx_hint;     /**< send-queue index of the message a packet was last built of */
	uint32_t posted;      /**< posted messages in the send queue (<= sq_depth) */
	uint32_t next_psn;    /**< PSN of the next message's first packet */
	uint32_t next_msn;    /**< MSN of the next message posted */
	uint32_t acked_psn;   /**< the cumulative ACK last seen */
	uint64_t progress_ns; /**< last time the peer acknowledged something (or the send queue
			       *   went from empty to busy), ns */
	uint64_t timeout_ns;  /**< no progress for this long with messages out: the QP fails */
	/* READs we posted: rd[] holds the send-queue indexes of those awaiting their answer */
	uint32_t reads; /**< READs posted, not completed */
	uint32_t rd_head, rd_tail;
	uint32_t rd[SL_XPORT_READS_MAX];
	/* answers we owe, waiting for a send-queue slot */
	uint32_t owed_head, owed_n;
	struct owed owed[SL_XPORT_READS_MAX];
	/* receive side: the message in progress */
	uint32_t rx_msn;    /**< MSN expected next */
	uint32_t rx_off;    /**< bytes of it delivered */
	uint32_t rx_psn;    /**< PSN of its first packet */
	uint32_t rx_total;  /**< WRITE: its RETH length; READ_RESP: the READ's length */
	uint32_t rx_rkey;   /**< WRITE: its RETH key */
	uint64_t rx_raddr;  /**< WRITE: its RETH address */
	uint64_t rx_cookie; /**< READ_RESP: the cookie of the READ it answers */
	uint8_t rx_op;      /**< enum sl_xport_op */
	/* receive side: the loss the transport is repairing (sl_xport_recovery_hist) */
	bool rx_gap;                    /**< a packet arrived beyond one missing: the gap is open */
	uint32_t rx_max_psn;            /**< highest PSN arrived (recv_psn - 1 at open) */
	uint32_t rx_gap_psn;            /**< rx_gap: the first PSN that was missing */
	uint64_t rx_gap_ns;             /**< rx_gap: when the packet beyond it arrived, ns */
	uint8_t rx_state;               /**< enum xqp_rx_state */
	bool rx_broken;                 /**< its sequence broke: the rest of it is not delivered */
	struct sl_recv_conn_conf rx_cc; /**< its receiver connection, as opened (RNR reopens it) */
	/* send side: the peer's receiver not ready */
	uint8_t rnr_state;       /**< enum xqp_rnr_state */
	uint32_t rnr_psn;        /**< first PSN of the message an RNR NAK named last */
	uint32_t rnr_backoff_ns; /**< the backoff taken for it, ns */
	uint32_t rnr_fence_psn;  /**< snd_max when it resent (or was NAKed): until the cumulative
				  *   ACK reaches it, SACKs from rnr_psn on are ignored (made before
				  *   the peer forgot those packets, they may name what it lost) */
	uint64_t rnr_at_ns;      /**< XQP_RNR_WAIT: when it sends again, ns */
	struct sl_xport_qp_stats st;
	struct sq_ent *sq; /**< [sq_mask + 1]; last: sl_xport_qp_open clears what precedes it */
};

struct sl_xport {
	struct sl_xport_conf c;
	struct sl_sched *e;
	struct sl_recv *r;
	struct sl_recv_rtx *rtx;
	struct xqp *qp;             /**< [max_qps] */
	struct sq_ent *sq_mem;      /**< [max_qps * (sq_mask + 1)] */
	uint32_t sq_mask;           /**< send-queue ring slots - 1: sq_depth + SL_XPORT_READS_MAX,
				     *   rounded up to a power of two */
	struct xp_qp_set reading;   /**< QPs with READs awaiting answers */
	struct sl_recv_action *act; /**< [act_max] */
	unsigned act_max;
	struct sl_recv_action *rnr_act; /**< [window_pkts]: what an RNR refusal's reopen drops */
	struct xp_qp_set rnr_wait;      /**< QPs backing off after an RNR NAK (XQP_RNR_WAIT) */
	struct sl_xport_fbq *fbq;       /**< feedback to send */
	struct sl_hist recovery_ns; /**< loss to delivery of the QPs' gaps (written on the lcore) */
	/* the endpoint-congestion target and its host (ec_recv.c; NULL without ec_drain_bps) */
	struct sl_ec *ec;
	struct sl_ec_action *ec_act; /**< [ec_act_max] */
	unsigned ec_act_max;
	bool drain_busy;        /**< the host is working on the target's head packet */
	uint64_t drain_done_ns; /**< drain_busy: when it is done, ns */
	uint64_t arrival_ns;    /**< when the last data frame arrived at the port (modelled), ns */
	struct sl_xhdr_rejects rej;
	struct sl_xport_stats st;
};

/* Address feedback fb of QP q to q's peer: the peer's QPN and its connection token. */
static inline void
sl_xp_fb_to_peer(const struct xqp *q, struct sl_xfb *fb)
{
	fb->qpn = q->peer_qpn;
	fb->token = q->peer_token;
}

/* --- xport.c ------------------------------------------------------------------------------- */

/*
 * Append message e (op, buf, len, raddr, rkey, imm, cookie) to QP q's send queue, which has a
 * slot, and hand its packets to the scheduler: 0 or the scheduler's error (-ENOBUFS for too
 * many). It takes the next PSNs and MSN.
 */
int sl_xp_sq_push(struct sl_xport *x, uint32_t qpn, struct xqp *q, struct sq_ent *e,
		  uint64_t now_ns);

/*
 * Retire, oldest first, every message the cumulative ACK covers (a READ once answered too);
 * note the progress; let owed answers into the slots freed.
 */
void sl_xp_complete(struct sl_xport *x, uint32_t qpn, struct xqp *q, uint64_t now_ns);

/* QP q had no progress for its timeout: it fails now (true), or it had failed already. */
bool sl_xp_timed_out(struct sl_xport *x, uint32_t qpn, struct xqp *q, uint64_t now_ns);

/*
 * A data frame (handle) that QP qpn's receiver hands over in order: the next piece of the QP's
 * message in progress, to the consumer; the handle is released.
 */
void sl_xp_deliver(struct sl_xport *x, uint32_t qpn, void *handle, uint64_t now_ns);

/* --- ec_recv.c ----------------------------------------------------------------------------- */

/* The target, with conf.ec_drain_bps (else nothing): 0 or -errno (freed by sl_xp_ec_free). */
int sl_xp_ec_create(struct sl_xport *x);

/* Release every frame still queued, free the target. */
void sl_xp_ec_free(struct sl_xport *x);

/* QP qpn receives through the target from first_psn: 0, or -EINVAL (no target). */
int sl_xp_ec_open(struct sl_xport *x, uint32_t qpn, uint32_t first_psn);

/* QP qpn closed: its frames still queued are released undelivered when they come out. */
void sl_xp_ec_close(struct sl_xport *x, uint32_t qpn);

/* A burst in[0..n) reaches the endpoint at now_ns: its data frames' arrival times begin. */
void sl_xp_ec_burst(struct sl_xport *x, const struct sl_xport_rx_frame *in, unsigned n,
		    uint64_t now_ns);

/*
 * Data frame f (PSN psn) of EC QP qpn, the next of the burst, arrives on the arrival clock: the
 * host catches up to that time, then f is queued or released, and its feedback queued.
 */
void sl_xp_ec_arrive(struct sl_xport *x, uint32_t qpn, uint32_t psn,
		     const struct sl_xport_rx_frame *f);

/* The host finishes every packet whose time is up by now_ns. */
void sl_xp_ec_drain(struct sl_xport *x, uint64_t now_ns);

/* When the host finishes its current packet, ns (UINT64_MAX: idle). */
uint64_t sl_xp_ec_deadline(const struct sl_xport *x);

/* --- read.c -------------------------------------------------------------------------------- */

/* Answers QP q owes into its send queue, in request order, while it has slots. */
void sl_xp_serve_owed(struct sl_xport *x, uint32_t qpn, struct xqp *q, uint64_t now_ns);

/* A READ request (header h) delivered in order: owe its answer (0) or refuse it (a syndrome). */
int sl_xp_serve_read(struct sl_xport *x, uint32_t qpn, struct xqp *q, const struct sl_xhdr *h,
		     uint64_t now_ns);

/*
 * A segment of a WRITE or of an answer to our READ: fill in what its message's first packet
 * said (RETH; the READ it answers, oldest first) and check that the bytes end exactly there.
 * 0, or the syndrome refusing it.
 */
int sl_xp_place(struct sl_xport *x, struct xqp *q, const struct sl_xhdr *h,
		struct sl_xport_rx_seg *seg, uint64_t now_ns);

/* The answer to QP q's oldest READ awaiting one was delivered whole: it completes once acked. */
void sl_xp_answered(struct sl_xport *x, uint32_t qpn, struct xqp *q, uint64_t now_ns);

/* QPs whose READs await answers, no ACK and no answer segment for their timeout, fail. */
void sl_xp_reads_timeout(struct sl_xport *x, uint64_t now_ns);

/* The earliest of those QPs' timeouts, ns. */
uint64_t sl_xp_reads_deadline(const struct sl_xport *x);

#endif /* XPORT_XPORT_PRIV_H */
