/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xport.c - the transport endpoint (sl_xport.h): queue pairs on lib/sched + lib/recv.
 *
 * Send side. A posted message takes the next slot of the QP's send queue (a ring: buffer,
 * length, operation, remote address and key, immediate, first PSN, packet count, MSN) and is
 * pushed to the scheduler at once as ceil(len / seg_bytes) full segments (one for an empty
 * message or a READ request). When the scheduler picks segment `psn`, the message holding it is
 * found by binary search over the ring's first PSNs (the ring is in PSN order), so no
 * per-packet map is kept; the packet's opcode (the operation's FIRST / MIDDLE / LAST / ONLY,
 * IMM on the last), length and payload address follow from its index in the message, and
 * RETH rides on a WRITE's first packet and the READ request. After each feedback frame the
 * QP's cumulative ACK (the scheduler's wnd_start) retires every message below it, oldest
 * first; a READ also waits for its whole answer.
 *
 * WRITE and READ. Where a WRITE's or an answer's bytes go, the answers a QP owes its peer and
 * the READs it waits on are read.c's (the model is there).
 *
 * Refusals. on_recv or read_src may refuse a message with a syndrome (a bad key, no consumer,
 * a request not served), and the requester refuses an answer that matches no READ. The
 * receive side then delivers nothing more and makes its feedback a sticky NAK (fbq.c) naming
 * the message (MSN, syndrome, cumulative ACK at its first PSN), repeated for every later packet
 * so a lost NAK is repaired. The sender completes what precedes the message, fails the message
 * with the syndrome's status, cancels the rest, and the QP fails until closed and reopened.
 *
 * Receive side. Data frames are decoded, checked against the QP table and handed to lib/recv in
 * bursts with the frame handle; the receiver's actions come back as deliveries in PSN order
 * (the frame is read again through conf->frame, given to on_recv as a segment, and released),
 * reorder-buffer stores (held), drops (released) and feedback, which goes to the feedback queue
 * (fbq.c: a ring of frames, and per QP what it had no room for, merged, never dropped) that
 * tx_burst empties before it sends any data. The MSN and opcode of every delivered
 * packet must continue the message in progress; a packet that does not (a peer that lost its
 * state, a forged frame) is counted in rx_bad_sequence and the message it breaks is not
 * delivered further.
 *
 * Feedback frames are decoded and turned into scheduler events by sl_xport_fb_events(), the same
 * code the simulator runs (fb.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fbq.h"
#include "xport_priv.h"
#include "sl_xport.h"

#define XP_RX_BATCH 32u   /**< data frames handed to the receiver per call */
#define XP_FBQ_SLOTS 256u /**< feedback frames the ring keeps (more are held per QP) */
#define XP_EVENTS_MAX 64u /**< scheduler events one NACK may become */
#define XP_SEGS 32u       /**< scheduler decisions asked for at a time */
static_assert(SL_XPORT_SYN_MAX == SL_XFB_SYN_MAX, "every syndrome fits a NAK");

static const struct sl_stat_desc stat_desc[] = {
	SL_STAT(struct sl_xport_stats, rx_data, "data frames taken by the receiver"),
	SL_STAT(struct sl_xport_stats, rx_fb, "feedback frames applied to a sender"),
	SL_STAT(struct sl_xport_stats, rx_bad_header,
		"refused: malformed header (by reason below)"),
	SL_STAT(struct sl_xport_stats, rx_bad_qpn,
		"refused: no such open QP (or feedback for a failed one)"),
	SL_STAT(struct sl_xport_stats, rx_bad_token,
		"refused: not the connection token of the QP it names (a frame from any QP but "
		"the connected one, or from the QP's predecessor)"),
	SL_STAT(struct sl_xport_stats, rx_fb_out_of_range,
		"refused: feedback naming PSNs never sent or long acked"),
	SL_STAT(struct sl_xport_stats, rx_bad_sequence,
		"delivered packets that do not continue their message"),
	SL_STAT(struct sl_xport_stats, rx_unsupported,
		"READ requests refused: no read_src (syndrome INVALID)"),
	SL_STAT(struct sl_xport_stats, rx_no_consumer, "segments delivered with no on_recv"),
	SL_STAT(struct sl_xport_stats, rx_bad_answer,
		"READ answers refused: no READ waiting, or not its length"),
	SL_STAT(struct sl_xport_stats, rx_refused,
		"messages refused (on_recv, read_src, a bad answer): the QP NAKs from then on"),
	SL_STAT(struct sl_xport_stats, rx_nak, "NAKs received for an open QP"),
	SL_STAT(struct sl_xport_stats, rx_rnr,
		"messages refused for now (receiver not ready): forgotten with what followed "
		"them, awaited again"),
	SL_STAT(struct sl_xport_stats, rx_rnr_discarded,
		"packets past an RNR refusal, discarded (their sender resends them)"),
	SL_STAT(struct sl_xport_stats, rx_rnr_nak,
		"of rx_nak, RNR NAKs: the peer had no room yet, the message is sent again"),
	SL_STAT(struct sl_xport_stats, rnr_resends,
		"QPs sending again from a message an RNR NAK named, after its backoff"),
	SL_STAT(struct sl_xport_stats, tx_data, "data packets built, first sends"),
	SL_STAT(struct sl_xport_stats, tx_rtx, "data packets built, retransmissions"),
	SL_STAT(struct sl_xport_stats, tx_fb, "feedback frames built"),
	SL_STAT(struct sl_xport_stats, tx_nak, "of those, NAKs"),
	SL_STAT(struct sl_xport_stats, tx_stale, "scheduler picks of a retired message, skipped"),
	SL_STAT(struct sl_xport_stats, fb_held,
		"feedback frames the queue's ring had no room for, held per QP"),
	SL_STAT(struct sl_xport_stats, fb_merged,
		"held feedback folded into a newer frame of its QP (counts kept)"),
	SL_STAT(struct sl_xport_stats, fb_coalesced,
		"in-order ACKs folded into the QP's unsent ACK in the ring (counts kept)"),
	SL_STAT(struct sl_xport_stats, fb_encode_errors, "feedback the wire encoder refused"),
	SL_STAT(struct sl_xport_stats, post_refused,
		"posts refused: send queue full, or SL_XPORT_READS_MAX READs out"),
	SL_STAT(struct sl_xport_stats, msgs_posted, "messages posted"),
	SL_STAT(struct sl_xport_stats, msgs_completed, "messages acknowledged whole"),
	SL_STAT(struct sl_xport_stats, msgs_failed, "messages completed with an error"),
	SL_STAT(struct sl_xport_stats, msgs_received,
		"messages delivered whole, in order (READ requests included)"),
	SL_STAT(struct sl_xport_stats, reads_served,
		"READ requests answered (read_src gave bytes)"),
	SL_STAT(struct sl_xport_stats, qps_failed,
		"QPs failed: nothing acknowledged for timeout_ns, or a NAK"),
};
SL_STAT_TABLE_DEFINE(sl_xport_stat_table, struct sl_xport_stats, stat_desc);

static const struct sl_stat_desc qp_stat_desc[] = {
	SL_STAT(struct sl_xport_qp_stats, msgs_posted, "messages posted"),
	SL_STAT(struct sl_xport_qp_stats, msgs_completed, "messages acknowledged whole"),
	SL_STAT(struct sl_xport_qp_stats, msgs_failed, "messages completed with an error"),
	SL_STAT(struct sl_xport_qp_stats, msgs_received,
		"messages delivered whole, in order (READ requests included)"),
	SL_STAT(struct sl_xport_qp_stats, bytes_posted, "message bytes posted"),
	SL_STAT(struct sl_xport_qp_stats, bytes_completed, "message bytes acknowledged"),
	SL_STAT(struct sl_xport_qp_stats, bytes_received, "message bytes delivered in order"),
	SL_STAT(struct sl_xport_qp_stats, pkts_sent, "data packets sent, first sends"),
	SL_STAT(struct sl_xport_qp_stats, pkts_rtx, "data packets retransmitted"),
	SL_STAT(struct sl_xport_qp_stats, pkts_relost,
		"PSNs NACKed again after their retransmission was lost (MELO, by send order)"),
	SL_STAT(struct sl_xport_qp_stats, acks, "ACKs received"),
	SL_STAT(struct sl_xport_qp_stats, nacks, "NACKs received"),
	SL_STAT(struct sl_xport_qp_stats, cnps, "CNPs received"),
	SL_STAT(struct sl_xport_qp_stats, pulls, "PULLs received"),
	SL_STAT(struct sl_xport_qp_stats, rx_bad_sequence,
		"delivered packets that do not continue their message"),
	SL_STAT(struct sl_xport_qp_stats, wire_bytes_received,
		"wire bytes of the data frames taken (frame_overhead_bytes included)"),
	SL_STAT(struct sl_xport_qp_stats, refusals, "messages this QP refused (0 or 1)"),
	SL_STAT(struct sl_xport_qp_stats, naks_sent, "NAK frames sent"),
	SL_STAT(struct sl_xport_qp_stats, naks_received, "NAK frames received"),
	SL_STAT(struct sl_xport_qp_stats, rnr_refusals,
		"messages this QP refused for now (receiver not ready), awaited again"),
	SL_STAT(struct sl_xport_qp_stats, rnr_naks_received,
		"of naks_received, RNR NAKs (repeats during a backoff included)"),
	SL_STAT(struct sl_xport_qp_stats, rnr_resends,
		"times this QP sent again from a message its peer refused for now"),
};
SL_STAT_TABLE_DEFINE(sl_xport_qp_stat_table, struct sl_xport_qp_stats, qp_stat_desc);

/* The buffer of a message with no bytes (a READ request, an empty SEND or WRITE). */
static const uint8_t no_bytes[1];

/* Where a packet sits in its message (the opcode tables' second index). */
enum { POS_FIRST, POS_MIDDLE, POS_LAST, POS_ONLY };

/* The opcode of a packet by operation and position; the "with immediate" one is the next. */
static const uint8_t xop_of[SL_XPORT_OP_READ_RESP + 1][POS_ONLY + 1] = {
	[SL_XPORT_OP_SEND] = {SL_XOP_SEND_FIRST, SL_XOP_SEND_MIDDLE, SL_XOP_SEND_LAST,
			      SL_XOP_SEND_ONLY},
	[SL_XPORT_OP_WRITE] = {SL_XOP_WRITE_FIRST, SL_XOP_WRITE_MIDDLE, SL_XOP_WRITE_LAST,
			       SL_XOP_WRITE_ONLY},
	[SL_XPORT_OP_READ] = {[POS_ONLY] = SL_XOP_READ_REQ},
	[SL_XPORT_OP_READ_RESP] = {SL_XOP_READ_RESP_FIRST, SL_XOP_READ_RESP_MIDDLE,
				   SL_XOP_READ_RESP_LAST, SL_XOP_READ_RESP_ONLY},
};

/* What a received data opcode is. */
struct op_info {
	uint8_t op; /**< enum sl_xport_op */
	bool first, last, imm;
};

static const struct op_info op_info[SL_XOP_READ_RESP_ONLY + 1] = {
	[SL_XOP_SEND_FIRST] = {SL_XPORT_OP_SEND, true, false, false},
	[SL_XOP_SEND_MIDDLE] = {SL_XPORT_OP_SEND, false, false, false},
	[SL_XOP_SEND_LAST] = {SL_XPORT_OP_SEND, false, true, false},
	[SL_XOP_SEND_LAST_IMM] = {SL_XPORT_OP_SEND, false, true, true},
	[SL_XOP_SEND_ONLY] = {SL_XPORT_OP_SEND, true, true, false},
	[SL_XOP_SEND_ONLY_IMM] = {SL_XPORT_OP_SEND, true, true, true},
	[SL_XOP_WRITE_FIRST] = {SL_XPORT_OP_WRITE, true, false, false},
	[SL_XOP_WRITE_MIDDLE] = {SL_XPORT_OP_WRITE, false, false, false},
	[SL_XOP_WRITE_LAST] = {SL_XPORT_OP_WRITE, false, true, false},
	[SL_XOP_WRITE_LAST_IMM] = {SL_XPORT_OP_WRITE, false, true, true},
	[SL_XOP_WRITE_ONLY] = {SL_XPORT_OP_WRITE, true, true, false},
	[SL_XOP_WRITE_ONLY_IMM] = {SL_XPORT_OP_WRITE, true, true, true},
	[SL_XOP_READ_REQ] = {SL_XPORT_OP_READ, true, true, false},
	[SL_XOP_READ_RESP_FIRST] = {SL_XPORT_OP_READ_RESP, true, false, false},
	[SL_XOP_READ_RESP_MIDDLE] = {SL_XPORT_OP_READ_RESP, false, false, false},
	[SL_XOP_READ_RESP_LAST] = {SL_XPORT_OP_READ_RESP, false, true, false},
	[SL_XOP_READ_RESP_ONLY] = {SL_XPORT_OP_READ_RESP, true, true, false},
};

/* A refused message's completion status at its sender, by syndrome. */
static const int syn_status[SL_XPORT_SYN_MAX + 1] = {
	[SL_XPORT_SYN_ACCESS] = -EACCES,
	[SL_XPORT_SYN_OP] = -EREMOTEIO,
	[SL_XPORT_SYN_INVALID] = -EBADMSG,
};

struct sl_xport *
sl_xport_create(const struct sl_xport_conf *conf)
{
	struct sl_xport_conf c = *conf;
	struct sl_recv_conf rc;
	struct sl_sched_conf sc = {0};
	struct sl_xport *x;
	int ec_rc;

	if (c.sq_depth == 0)
		c.sq_depth = SL_XPORT_SQ_DEFAULT;
	if (c.window_pkts == 0)
		c.window_pkts = SL_SCHED_WND_DEFAULT;
	if (c.ack_delay_ns == 0)
		c.ack_delay_ns = 10 * SL_NS_PER_US;
	if (c.pool_bits == 0)
		c.pool_bits = 1024;
	if (c.max_qps == 0 || c.max_qps > SL_XHDR_QPN_MAX + 1 || !sl_is_pow2(c.sq_depth) ||
	    !sl_is_pow2(c.window_pkts) || c.window_pkts < SL_SCHED_WND_MIN ||
	    c.window_pkts > SL_SCHED_WND_MAX || c.frame == NULL || c.release == NULL) {
		errno = EINVAL;
		return NULL;
	}
	x = calloc(1, sizeof(*x));
	if (x == NULL)
		return NULL;
	if (c.line_bps == 0)
		c.line_bps = SL_XPORT_LINE_BPS_DEFAULT;
	x->c = c;
	sc.max_flows = c.max_qps;
	sc.wnd_segs = c.window_pkts;
	sc.link_bps = c.line_bps;
	sc.wire_overhead_bytes = c.frame_overhead_bytes; /* each QP adds its transport header */
	sc.pace_catchup_ns = c.pace_catchup_ns;
	sc.flags = c.line_bypass ? SL_SCHED_F_LINE_BYPASS : 0;
	rc = SL_RECV_CONF_DEFAULT(c.max_qps);
	rc.window_pkts = c.window_pkts;
	rc.pool_bits = c.pool_bits;
	rc.ack_delay_ns = c.ack_delay_ns;
	x->e = sl_sched_create(&sc);
	x->r = x->e ? sl_recv_create(&rc) : NULL;
	x->rtx = x->r ? sl_recv_rtx_create(&(struct sl_recv_rtx_conf){
				.max_flows = c.max_qps,
				.window_pkts = c.window_pkts,
				.pool_bits = c.pool_bits,
				.block_bits = rc.block_bits,
			})
		      : NULL;
	if (x->rtx == NULL)
		goto fail;
	x->act_max = sl_recv_actions_max(x->r) + XP_RX_BATCH;
	x->act = calloc(x->act_max, sizeof(*x->act));
	x->qp = calloc(c.max_qps, sizeof(*x->qp));
	x->sq_mask = sl_align_pow2_u32(c.sq_depth + SL_XPORT_READS_MAX) - 1;
	x->sq_mem = calloc((size_t)c.max_qps * (x->sq_mask + 1), sizeof(*x->sq_mem));
	x->reading = (struct xp_qp_set){.qpn = calloc(c.max_qps, sizeof(uint32_t)),
					.at = calloc(c.max_qps, sizeof(uint32_t))};
	x->rnr_wait = (struct xp_qp_set){.qpn = calloc(c.max_qps, sizeof(uint32_t)),
					 .at = calloc(c.max_qps, sizeof(uint32_t))};
	x->rnr_act = calloc(c.window_pkts, sizeof(*x->rnr_act));
	x->fbq = sl_xport_fbq_create(c.max_qps, XP_FBQ_SLOTS, c.min_frame_bytes, &x->st);
	if (x->act == NULL || x->qp == NULL || x->sq_mem == NULL || x->reading.qpn == NULL ||
	    x->reading.at == NULL || x->rnr_wait.qpn == NULL || x->rnr_wait.at == NULL ||
	    x->rnr_act == NULL || x->fbq == NULL) {
		errno = ENOMEM;
		goto fail;
	}
	ec_rc = sl_xp_ec_create(x);
	if (ec_rc) {
		errno = -ec_rc;
		goto fail;
	}
	for (uint32_t q = 0; q < c.max_qps; q++)
		x->qp[q].sq = &x->sq_mem[(size_t)q * (x->sq_mask + 1)];
	sl_hist_reset(&x->recovery_ns);
	return x;
fail : {
	int err = errno ? errno : ENOMEM;

	sl_xport_free(x);
	errno = err;
}
	return NULL;
}

/*
 * Close QP qpn's receiver connection, releasing the frames its reorder buffer holds (an EC
 * QP's frames still queued at the target are released as the host reaches them).
 */
static void
close_receiver(struct sl_xport *x, uint32_t qpn)
{
	unsigned n;

	if (x->qp[qpn].recv_mode == SL_XPORT_RECV_EC) {
		sl_xp_ec_close(x, qpn);
		return;
	}
	n = sl_recv_conn_close(x->r, qpn, x->act, x->act_max);

	for (unsigned i = 0; i < n; i++)
		if (x->act[i].type == SL_RECV_ACT_DROP)
			x->c.release(x->c.ctx, x->act[i].data.handle);
}

/* Close every open QP's receiver connection. */
static void
release_stored(struct sl_xport *x)
{
	for (uint32_t q = 0; q < x->c.max_qps; q++)
		if (x->qp[q].open)
			close_receiver(x, q);
}

void
sl_xport_free(struct sl_xport *x)
{
	if (x == NULL)
		return;
	if (x->r && x->qp && x->act)
		release_stored(x);
	sl_xp_ec_free(x);
	sl_recv_rtx_free(x->rtx);
	sl_recv_free(x->r);
	sl_sched_free(x->e);
	sl_xport_fbq_free(x->fbq);
	free(x->sq_mem);
	free(x->reading.qpn);
	free(x->reading.at);
	free(x->rnr_wait.qpn);
	free(x->rnr_wait.at);
	free(x->rnr_act);
	free(x->qp);
	free(x->act);
	free(x);
}

int
sl_xport_qp_open(struct sl_xport *x, const struct sl_xport_qp_conf *qc, uint64_t now_ns)
{
	const struct sl_proto_ops *ops = qc->proto ? sl_proto_find(qc->proto) : NULL;
	struct sl_recv_conn_conf cc = {.isn = qc->recv_psn, .mode = qc->recv_mode};
	struct sl_flow_conf fc = {0};
	struct xqp *q;
	int rc;

	if (qc->qpn >= x->c.max_qps || qc->peer_qpn > SL_XHDR_QPN_MAX || qc->seg_bytes == 0 ||
	    qc->seg_bytes > UINT16_MAX || qc->recv_mode > SL_XPORT_RECV_EC ||
	    (qc->recv_mode == SL_XPORT_RECV_EC && x->ec == NULL))
		return -EINVAL;
	if (ops == NULL)
		return -ENOENT;
	if (ops->credit == SL_CREDIT_GRANT && qc->max_rate_bps)
		return -EINVAL; /* a grant program's receiver paces it */
	q = &x->qp[qc->qpn];
	if (q->open)
		return -EEXIST;
	rc = sl_xport_recv_conf_for_proto(qc->proto, &cc);
	if (rc)
		return rc;
	fc.proto = qc->proto;
	fc.seg_bytes = qc->seg_bytes;
	fc.init_wnd_segs = qc->init_wnd_segs;
	fc.init_credit_bytes = qc->init_credit_bytes;
	if (ops->credit == SL_CREDIT_GRANT && fc.init_credit_bytes == 0)
		fc.init_credit_bytes = SL_XPORT_GRANT_SEGS * qc->seg_bytes;
	fc.first_seq = qc->send_psn;
	if (ops->credit != SL_CREDIT_GRANT)
		fc.max_rate_bps = qc->max_rate_bps ? qc->max_rate_bps : x->c.line_bps;
	fc.init_rate_bps = qc->init_rate_bps ? qc->init_rate_bps : fc.max_rate_bps;
	fc.hdr_bytes = sl_xport_hdr_bytes(ops);
	fc.rto_ns = qc->rto_ns;
	fc.start_ns = now_ns;
	memcpy(fc.param, qc->param, sizeof(fc.param));
	rc = sl_sched_flow_add(x->e, qc->qpn, &fc);
	if (rc)
		return rc;
	rc = qc->recv_mode == SL_XPORT_RECV_EC ? sl_xp_ec_open(x, qc->qpn, qc->recv_psn)
					       : sl_recv_conn_open(x->r, qc->qpn, &cc);
	if (rc)
		goto undo_flow;
	memset(q, 0, offsetof(struct xqp, sq));
	q->rx_cc = cc;
	q->ops = ops;
	q->recv_mode = qc->recv_mode;
	q->peer_qpn = qc->peer_qpn;
	q->token = qc->token;
	q->peer_token = qc->peer_token;
	q->seg_bytes = qc->seg_bytes;
	q->ts = (ops->feedback & SL_PROTO_FB_ECHO) != 0;
	q->ff = (struct sl_xport_fb_flow){.seg_bytes = qc->seg_bytes,
					  .sack = (ops->feedback & SL_PROTO_FB_SACK) != 0,
					  .ts = q->ts,
					  .mark_psn = qc->send_psn,
					  .relost = &q->st.pkts_relost};
	if (qc->recv_mode == SL_RECV_MELO && (ops->feedback & SL_PROTO_FB_NACK)) {
		rc = sl_recv_rtx_flow_open(x->rtx, qc->qpn, qc->send_psn);
		if (rc)
			goto undo_conn;
		q->ff.tracked = true;
	}
	q->acked_psn = qc->send_psn;
	q->rx_max_psn = qc->recv_psn - 1;
	q->progress_ns = now_ns;
	q->timeout_ns = qc->timeout_ns ? qc->timeout_ns : SL_XPORT_QP_TIMEOUT_NS;
	q->next_psn = qc->send_psn;
	q->open = true;
	return 0;
undo_conn:
	close_receiver(x, qc->qpn);
undo_flow:
	sl_sched_flow_del(x->e, qc->qpn);
	return rc;
}

static struct xqp *
open_qp(const struct sl_xport *x, uint32_t qpn)
{
	return qpn < x->c.max_qps && x->qp[qpn].open ? &x->qp[qpn] : NULL;
}

uint32_t
sl_xport_sq_room(const struct sl_xport *x, uint32_t qpn)
{
	const struct xqp *q = open_qp(x, qpn);

	return q ? SL_MIN(x->c.sq_depth - q->posted, x->sq_mask + 1 - (q->sq_tail - q->sq_head))
		 : 0;
}

int
sl_xp_sq_push(struct sl_xport *x, uint32_t qpn, struct xqp *q, struct sq_ent *e, uint64_t now_ns)
{
	uint32_t npkts = e->len == 0 || e->op == SL_XPORT_OP_READ
				 ? 1
				 : (e->len + q->seg_bytes - 1) / q->seg_bytes;
	int rc = sl_sched_flow_push(x->e, qpn, npkts, (uint16_t)q->seg_bytes);

	if (rc)
		return rc == -EOVERFLOW ? -ENOBUFS : rc;
	if (q->sq_tail == q->sq_head)
		q->progress_ns = now_ns; /* the timeout counts from the first message out */
	e->first_psn = q->next_psn;
	e->npkts = npkts;
	e->msn = q->next_msn;
	e->post_ns = now_ns;
	q->sq[q->sq_tail & x->sq_mask] = *e;
	q->next_psn += npkts;
	q->next_msn++;
	q->sq_tail++;
	return 0;
}

static bool
wr_valid(const struct sl_xport_wr *wr)
{
	if (wr->len > SL_XPORT_MSG_MAX)
		return false;
	switch (wr->op) {
	case SL_XPORT_OP_SEND:
	case SL_XPORT_OP_WRITE:
		return wr->len == 0 || wr->buf != NULL;
	case SL_XPORT_OP_READ:
		return wr->len > 0 && !wr->has_imm;
	default:
		return false;
	}
}

uint32_t
sl_xport_hdr_bytes(const struct sl_proto_ops *ops)
{
	return (uint32_t)sl_xhdr_len(SL_XOP_SEND_ONLY,
				     (ops->feedback & SL_PROTO_FB_ECHO) ? SL_XHDR_F_TS : 0);
}

int
sl_xport_post(struct sl_xport *x, uint32_t qpn, const struct sl_xport_wr *wr, uint64_t now_ns)
{
	struct xqp *q = open_qp(x, qpn);
	bool read = wr->op == SL_XPORT_OP_READ;
	struct sq_ent e = {.op = wr->op,
			   .buf = read || wr->len == 0 ? no_bytes : wr->buf,
			   .len = wr->len,
			   .raddr = wr->raddr,
			   .rkey = wr->rkey,
			   .has_imm = wr->has_imm,
			   .imm = wr->imm,
			   .cookie = wr->cookie};
	int rc;

	if (q == NULL)
		return -ENOENT;
	if (!wr_valid(wr))
		return -EINVAL;
	if (q->failed)
		return -EPIPE;
	rc = sl_xport_sq_room(x, qpn) == 0 || (read && q->reads == SL_XPORT_READS_MAX)
		     ? -ENOBUFS
		     : sl_xp_sq_push(x, qpn, q, &e, now_ns);
	if (rc) {
		sl_stat_add(&x->st.post_refused, 1);
		return rc;
	}
	q->posted++;
	if (read) {
		q->reads++;
		q->rd[q->rd_tail++ & XP_RD_MASK] = q->sq_tail - 1;
		sl_xp_set_add(&x->reading, qpn);
	}
	sl_stat_add(&q->st.msgs_posted, 1);
	sl_stat_add(&q->st.bytes_posted, wr->len);
	sl_stat_add(&x->st.msgs_posted, 1);
	return 0;
}

int
sl_xport_post_send(struct sl_xport *x, uint32_t qpn, const void *buf, uint32_t len, uint64_t cookie,
		   uint64_t now_ns)
{
	struct sl_xport_wr wr = {.op = SL_XPORT_OP_SEND, .buf = buf, .len = len, .cookie = cookie};

	return sl_xport_post(x, qpn, &wr, now_ns);
}

/*
 * The message holding psn, NULL if it was retired: the message a packet was last built of or
 * the one after it (a QP sends its new packets in PSN order), else a binary search in PSN
 * order (a retransmission).
 */
static const struct sq_ent *
msg_of(const struct sl_xport *x, struct xqp *q, uint32_t psn)
{
	uint32_t mask = x->sq_mask, lo = q->sq_head, hi = q->sq_tail, base;

	for (uint32_t i = q->tx_hint; i - lo < hi - lo && i - q->tx_hint < 2; i++) {
		const struct sq_ent *m = &q->sq[i & mask];

		if (psn - m->first_psn < m->npkts) {
			q->tx_hint = i;
			return m;
		}
	}
	if (lo == hi)
		return NULL;
	base = q->sq[lo & mask].first_psn;
	if (psn - base >= q->next_psn - base)
		return NULL;
	while (hi - lo > 1) { /* invariant: sq[lo].first_psn <= psn < sq[hi].first_psn */
		uint32_t mid = lo + (hi - lo) / 2;

		if (q->sq[mid & mask].first_psn - base <= psn - base)
			lo = mid;
		else
			hi = mid;
	}
	q->tx_hint = lo;
	return &q->sq[lo & mask];
}

/* Hand the oldest message of the send queue back with status (an answer: silently). */
static void
retire(struct sl_xport *x, uint32_t qpn, struct xqp *q, int status, uint64_t now_ns)
{
	const struct sq_ent *m = &q->sq[q->sq_head & x->sq_mask];
	struct sl_xport_cqe c = {.qpn = qpn,
				 .msn = m->msn,
				 .op = m->op,
				 .len = m->len,
				 .status = status,
				 .cookie = m->cookie,
				 .post_ns = m->post_ns};

	q->sq_head++;
	if (c.op == SL_XPORT_OP_READ_RESP)
		return; /* the READ it answers completes at the peer */
	q->posted--;
	q->reads -= c.op == SL_XPORT_OP_READ;
	if (status == 0) {
		sl_stat_add(&q->st.msgs_completed, 1);
		sl_stat_add(&q->st.bytes_completed, c.len);
		sl_stat_add(&x->st.msgs_completed, 1);
	} else {
		sl_stat_add(&q->st.msgs_failed, 1);
		sl_stat_add(&x->st.msgs_failed, 1);
	}
	if (x->c.on_complete)
		x->c.on_complete(x->c.ctx, &c, now_ns);
}

void
sl_xp_complete(struct sl_xport *x, uint32_t qpn, struct xqp *q, uint64_t now_ns)
{
	uint32_t wnd_start, snd_max;

	if (sl_sched_flow_seqs(x->e, qpn, &wnd_start, &snd_max) != 0)
		return;
	if (wnd_start != q->acked_psn) {
		q->acked_psn = wnd_start;
		q->progress_ns = now_ns;
		if (q->rnr_state == XQP_RNR_RESENT && sl_seq_ge(wnd_start, q->rnr_fence_psn))
			q->rnr_state = XQP_RNR_NONE; /* all that was resent got through */
	}
	while (q->sq_head != q->sq_tail) {
		const struct sq_ent *m = &q->sq[q->sq_head & x->sq_mask];

		if (sl_seq_lt(wnd_start, m->first_psn + m->npkts) ||
		    (m->op == SL_XPORT_OP_READ && !m->answered))
			break;
		retire(x, qpn, q, 0, now_ns);
	}
	if (q->owed_n)
		sl_xp_serve_owed(x, qpn, q, now_ns);
}

/*
 * Stop the QP's sender: every message not completed completes with status (READs awaiting
 * answers included), answers in the send queue or owed are dropped.
 */
static void
stop_sender(struct sl_xport *x, uint32_t qpn, struct xqp *q, int status, uint64_t now_ns)
{
	while (q->sq_head != q->sq_tail)
		retire(x, qpn, q, status, now_ns);
	q->owed_n = 0;
	q->rd_head = q->rd_tail;
	sl_xp_set_del(&x->reading, qpn);
	sl_xp_set_del(&x->rnr_wait, qpn);
	q->rnr_state = XQP_RNR_NONE;
	sl_sched_flow_del(x->e, qpn);
	if (q->ff.tracked)
		sl_recv_rtx_flow_close(x->rtx, qpn);
	q->ff.tracked = false;
}

/* The QP fails (timeout, NAK): its sender stops, sends are refused until it is reopened. */
static void
fail_qp(struct sl_xport *x, uint32_t qpn, struct xqp *q, int status, uint64_t now_ns)
{
	stop_sender(x, qpn, q, status, now_ns);
	q->failed = true;
	sl_stat_add(&x->st.qps_failed, 1);
}

/*
 * Nothing acknowledged (and no answer segment) for timeout_ns with messages out (a peer that
 * restarted or died): the QP fails like an RC QP past its retry count. Its messages complete
 * with -ETIMEDOUT (each was delivered at most once), sends are refused, and the application
 * closes and reopens it.
 */
bool
sl_xp_timed_out(struct sl_xport *x, uint32_t qpn, struct xqp *q, uint64_t now_ns)
{
	if (q->failed || now_ns - q->progress_ns < q->timeout_ns)
		return q->failed;
	/* a peer that answered RNR all along had no room, it did not go away */
	fail_qp(x, qpn, q, q->rnr_state == XQP_RNR_NONE ? -ETIMEDOUT : -EBUSY, now_ns);
	return true;
}

unsigned
sl_xport_expire(struct sl_xport *x, uint64_t now_ns)
{
	unsigned n = 0;

	for (uint32_t qpn = 0; qpn < x->c.max_qps; qpn++) {
		struct xqp *q = &x->qp[qpn];

		if (q->open && !q->failed && q->sq_head != q->sq_tail &&
		    sl_xp_timed_out(x, qpn, q, now_ns))
			n++;
	}
	return n;
}

int
sl_xport_qp_close(struct sl_xport *x, uint32_t qpn, uint64_t now_ns)
{
	struct xqp *q = open_qp(x, qpn);

	if (q == NULL)
		return -ENOENT;
	if (!q->failed)
		stop_sender(x, qpn, q, -ECANCELED, now_ns);
	close_receiver(x, qpn);
	sl_xport_fbq_forget(x->fbq, qpn);
	q->open = false;
	q->failed = false;
	return 0;
}

/* --- receive ------------------------------------------------------------------------------ */

static void
queue_fb(struct sl_xport *x, const struct sl_recv_action *a)
{
	struct sl_xfb fb;

	if (sl_xport_fb_from_recv(a, &fb) != 0) {
		sl_stat_add(&x->st.fb_encode_errors, 1);
		return;
	}
	sl_xp_fb_to_peer(&x->qp[a->conn], &fb);
	sl_xport_fbq_push(x->fbq, a->conn, &fb);
}

/*
 * QP q refuses its message in progress with syndrome syn: it delivers nothing more, and its
 * feedback becomes the NAK naming that message, until it is closed.
 */
static void
refuse(struct sl_xport *x, uint32_t qpn, struct xqp *q, uint8_t syn)
{
	struct sl_xfb nak = {
		.opcode = SL_XOP_NAK, .ack_psn = q->rx_psn, .nak_msn = q->rx_msn, .syndrome = syn};

	sl_xp_fb_to_peer(q, &nak);
	q->rx_state = XQP_RX_REFUSED;
	sl_stat_add(&q->st.refusals, 1);
	sl_stat_add(&x->st.rx_refused, 1);
	sl_xport_fbq_nak(x->fbq, qpn, &nak);
}

/*
 * QP q's consumer has no room for its message in progress yet (SL_XPORT_SYN_RNR): the
 * receiver forgets the message and everything after it, as if none of it had arrived (its
 * connection reopens at the message's first PSN, what it stored is dropped), and its feedback
 * is the RNR NAK naming the message until that PSN is delivered again. Packets of the forgotten
 * stream still on their way to sl_xp_deliver are discarded there. An endpoint-congestion
 * receiver cannot forget what it took: its QP refuses the message for good (OP).
 */
static void
refuse_for_now(struct sl_xport *x, uint32_t qpn, struct xqp *q)
{
	struct sl_recv_conn_conf cc = q->rx_cc;
	struct sl_xfb nak = {.opcode = SL_XOP_NAK,
			     .ack_psn = q->rx_psn,
			     .nak_msn = q->rx_msn,
			     .syndrome = SL_XPORT_SYN_RNR};
	unsigned n;

	if (q->recv_mode == SL_XPORT_RECV_EC) {
		refuse(x, qpn, q, SL_XPORT_SYN_OP);
		return;
	}
	n = sl_recv_conn_close(x->r, qpn, x->rnr_act, x->c.window_pkts);
	for (unsigned i = 0; i < n; i++)
		if (x->rnr_act[i].type == SL_RECV_ACT_DROP)
			x->c.release(x->c.ctx, x->rnr_act[i].data.handle);
	cc.isn = q->rx_psn;
	if (sl_recv_conn_open(x->r, qpn, &cc) != 0) { /* cannot fail: it was open with cc */
		refuse(x, qpn, q, SL_XPORT_SYN_OP);
		return;
	}
	q->rx_off = 0;
	q->rx_state = XQP_RX_RNR;
	sl_xp_fb_to_peer(q, &nak);
	sl_stat_add(&q->st.rnr_refusals, 1);
	sl_stat_add(&x->st.rx_rnr, 1);
	sl_xport_fbq_nak(x->fbq, qpn, &nak);
}

/*
 * Segment seg (header h) continues the QP's message in order: a READ request goes to
 * serve_read, anything else (a WRITE's or an answer's placed first) to on_recv. Returns 0 or
 * the syndrome refusing it.
 */
static int
accept(struct sl_xport *x, uint32_t qpn, struct xqp *q, const struct sl_xhdr *h,
       struct sl_xport_rx_seg *seg, uint64_t now_ns)
{
	int syn = 0;

	if (seg->first) {
		q->rx_psn = h->psn;
		q->rx_op = seg->op;
	}
	if (sl_unlikely(seg->op != SL_XPORT_OP_SEND)) {
		syn = seg->op == SL_XPORT_OP_READ ? sl_xp_serve_read(x, qpn, q, h, now_ns)
						  : sl_xp_place(x, q, h, seg, now_ns);
		if (syn || seg->op == SL_XPORT_OP_READ)
			return syn;
	}
	if (x->c.on_recv)
		syn = x->c.on_recv(x->c.ctx, seg, now_ns);
	else
		sl_stat_add(&x->st.rx_no_consumer, 1);
	if (syn)
		return syn > 0 && syn <= SL_XPORT_SYN_MAX ? syn : SL_XPORT_SYN_OP;
	if (sl_unlikely(seg->op == SL_XPORT_OP_READ_RESP) && seg->last)
		sl_xp_answered(x, qpn, q, now_ns);
	return 0;
}

void
sl_xp_deliver(struct sl_xport *x, uint32_t qpn, void *handle, uint64_t now_ns)
{
	struct xqp *q = &x->qp[qpn];
	const struct op_info *oi;
	struct sl_xport_rx_seg seg;
	const uint8_t *buf;
	struct sl_xhdr h;
	uint32_t len;
	int hl, syn;

	if (q->rx_state == XQP_RX_REFUSED) { /* nothing after a refused message is delivered */
		x->c.release(x->c.ctx, handle);
		return;
	}
	buf = x->c.frame(x->c.ctx, handle, &len);
	hl = sl_xhdr_decode(buf, len, &h, NULL); /* decoded once already: cannot fail */
	if (q->rx_state == XQP_RX_RNR) {
		if (h.psn != q->rx_psn) { /* the forgotten stream, handed over before it was */
			sl_stat_add(&x->st.rx_rnr_discarded, 1);
			x->c.release(x->c.ctx, handle);
			return;
		}
		q->rx_state = XQP_RX_OPEN; /* the refused message is back */
		sl_xport_fbq_nak_end(x->fbq, qpn);
	}
	if (q->rx_gap && sl_seq_ge(h.psn, q->rx_gap_psn)) {
		q->rx_gap = false;
		sl_hist_add(&x->recovery_ns, now_ns - q->rx_gap_ns);
	}
	oi = &op_info[h.opcode];
	seg = (struct sl_xport_rx_seg){
		.qpn = qpn,
		.msn = h.msn,
		.op = oi->op,
		.offset = q->rx_off,
		.data = buf + hl,
		.len = len - (uint32_t)hl - h.pad_bytes,
		.first = oi->first,
		.last = oi->last,
		.has_imm = oi->imm,
		.imm = h.imm,
	};
	if (h.msn != q->rx_msn || oi->first != (q->rx_off == 0) ||
	    (!oi->last && seg.len != q->seg_bytes) || (!oi->first && oi->op != q->rx_op)) {
		/* The stream and the packet disagree: this message cannot be delivered whole. */
		sl_stat_add(&q->st.rx_bad_sequence, 1);
		sl_stat_add(&x->st.rx_bad_sequence, 1);
		q->rx_broken = true;
	} else if (!q->rx_broken) {
		syn = accept(x, qpn, q, &h, &seg, now_ns);
		if (syn == SL_XPORT_SYN_RNR) {
			refuse_for_now(x, qpn, q);
			x->c.release(x->c.ctx, handle);
			return;
		}
		if (syn) {
			refuse(x, qpn, q, (uint8_t)syn);
			x->c.release(x->c.ctx, handle);
			return;
		}
		q->rx_off += seg.len;
		sl_stat_add(&q->st.bytes_received, seg.len);
	}
	if (oi->last && h.msn == q->rx_msn) {
		if (!q->rx_broken) {
			sl_stat_add(&q->st.msgs_received, 1);
			sl_stat_add(&x->st.msgs_received, 1);
		}
		q->rx_msn++;
		q->rx_off = 0;
		q->rx_broken = false;
	}
	x->c.release(x->c.ctx, handle);
}

static void
apply_actions(struct sl_xport *x, unsigned n, uint64_t now_ns)
{
	for (unsigned i = 0; i < n; i++) {
		const struct sl_recv_action *a = &x->act[i];

		switch (a->type) {
		case SL_RECV_ACT_DELIVER:
			sl_xp_deliver(x, a->conn, a->data.handle, now_ns);
			break;
		case SL_RECV_ACT_STORE:
			break;
		case SL_RECV_ACT_DROP:
			x->c.release(x->c.ctx, a->data.handle);
			break;
		default:
			queue_fb(x, a);
			break;
		}
	}
}

static void
recv_batch(struct sl_xport *x, const struct sl_recv_pkt *pk, unsigned n, uint64_t now_ns)
{
	while (n) {
		unsigned used = 0, na;

		na = sl_recv_burst(x->r, pk, n, now_ns, x->act, x->act_max, &used);
		apply_actions(x, na, now_ns);
		pk += used;
		n -= used;
	}
}

/*
 * Feedback must name PSNs this sender has sent: a cumulative ACK in [wnd_start - W, snd_max]
 * (older ones are stale but harmless), holes inside [ack_psn, snd_max). Anything else is a
 * frame from a peer that lost its state, or forged: refused before it touches the QP.
 */
static bool
fb_in_range(const struct sl_xport *x, const struct sl_xfb *fb)
{
	uint32_t wnd_start, snd_max;

	if (sl_sched_flow_seqs(x->e, fb->qpn, &wnd_start, &snd_max) != 0 ||
	    sl_seq_gt(fb->ack_psn, snd_max) || sl_seq_lt(fb->ack_psn, wnd_start - x->c.window_pkts))
		return false;
	for (unsigned i = 0; i < fb->nholes; i++)
		if (sl_seq_gt(fb->hole[i].start_psn + fb->hole[i].len_pkts, snd_max))
			return false;
	return true;
}

/*
 * An RNR NAK for open QP q: the peer had no room for the message whose first PSN is ack_psn
 * and forgot it and what followed. The messages before it are acknowledged (the NAK's
 * cumulative ACK, given to the program only when it moves the window: a repeated NAK is no
 * duplicate ACK). The QP backs off, then sends again from that PSN (rnr_resend); repeats of the
 * NAK while it waits change nothing, and one after it sent again (the peer still had no room)
 * doubles the backoff, up to SL_XPORT_RNR_MAX_NS. timeout_ns without progress ends it.
 */
static void
rx_rnr_nak(struct sl_xport *x, uint32_t qpn, struct xqp *q, const struct sl_xfb *fb,
	   uint64_t now_ns)
{
	uint32_t wnd_start, snd_max, backoff = SL_XPORT_RNR_MIN_NS;

	sl_stat_add(&q->st.rnr_naks_received, 1);
	sl_stat_add(&x->st.rx_rnr_nak, 1);
	if (q->ops->credit == SL_CREDIT_GRANT) {
		/* the NAK stands for the PULL the peer made for a packet it dropped */
		struct sl_event pull = {
			.flow = qpn, .type = SL_EV_PULL, .grant_bytes = q->seg_bytes};

		sl_sched_incoming(x->e, &pull, 1, now_ns);
	}
	if (sl_sched_flow_seqs(x->e, qpn, &wnd_start, &snd_max) != 0)
		return;
	if (sl_seq_gt(fb->ack_psn, wnd_start)) {
		struct sl_xfb ack = {.opcode = SL_XOP_ACK, .qpn = qpn, .ack_psn = fb->ack_psn};
		struct sl_event ev[XP_EVENTS_MAX];
		unsigned n = sl_xport_fb_events(x->e, x->rtx, qpn, &q->ff, &ack, ev, XP_EVENTS_MAX);

		sl_sched_incoming(x->e, ev, n, now_ns);
		sl_xp_complete(x, qpn, q, now_ns);
	}
	if (q->rnr_psn == fb->ack_psn && q->rnr_state == XQP_RNR_WAIT)
		return;
	if (q->rnr_psn == fb->ack_psn && q->rnr_state == XQP_RNR_RESENT)
		backoff = SL_MIN(2 * q->rnr_backoff_ns, SL_XPORT_RNR_MAX_NS);
	q->rnr_state = XQP_RNR_WAIT;
	q->rnr_psn = fb->ack_psn;
	q->rnr_fence_psn = snd_max;
	q->rnr_backoff_ns = backoff;
	q->rnr_at_ns = now_ns + backoff;
	sl_sched_flow_rto_after(x->e, qpn, q->rnr_at_ns); /* the peer is there: no timeout */
	sl_xp_set_add(&x->rnr_wait, qpn);
}

/*
 * QP q's backoff after an RNR NAK is over: it sends again from the refused message (every
 * packet from it on, acknowledged selectively or not: the peer forgot them), unless an ACK
 * past it came meanwhile (a timeout's resend was taken).
 */
static void
rnr_resend(struct sl_xport *x, uint32_t qpn, struct xqp *q, uint64_t now_ns)
{
	uint32_t wnd_start, snd_max, from;

	sl_xp_set_del(&x->rnr_wait, qpn);
	q->rnr_state = XQP_RNR_RESENT;
	if (sl_sched_flow_seqs(x->e, qpn, &wnd_start, &snd_max) != 0)
		return;
	/* A resend (the RTO's) got through meanwhile: the peer still forgot what followed it,
	 * SACKed or not. */
	from = sl_seq_lt(q->rnr_psn, wnd_start) ? wnd_start : q->rnr_psn;
	if (from == snd_max || sl_sched_flow_rewind(x->e, qpn, from, now_ns) != 0) {
		q->rnr_state = XQP_RNR_NONE;
		return;
	}
	q->rnr_fence_psn = snd_max;
	if (q->ff.tracked) { /* MELO's marks: everything from the front goes again, as an RTO */
		sl_recv_rtx_rto(x->rtx, qpn, from);
		q->ff.mark_psn = snd_max;
	}
	sl_stat_add(&q->st.rnr_resends, 1);
	sl_stat_add(&x->st.rnr_resends, 1);
}

/* The QPs whose backoff after an RNR NAK is over by now_ns send again. */
static void
rnr_resend_due(struct sl_xport *x, uint64_t now_ns)
{
	for (uint32_t i = 0; i < x->rnr_wait.n;) {
		uint32_t qpn = x->rnr_wait.qpn[i];

		if (x->qp[qpn].rnr_at_ns > now_ns) {
			i++;
			continue;
		}
		rnr_resend(x, qpn, &x->qp[qpn],
			   now_ns); /* takes it off: index i holds another now */
	}
}

/* The earliest end of a backoff after an RNR NAK, ns (UINT64_MAX: none). */
static uint64_t
rnr_deadline(const struct sl_xport *x)
{
	uint64_t d = UINT64_MAX;

	for (uint32_t i = 0; i < x->rnr_wait.n; i++)
		d = SL_MIN(d, x->qp[x->rnr_wait.qpn[i]].rnr_at_ns);
	return d;
}

/*
 * A NAK for open QP q: the peer refused message nak_msn, whose first PSN is ack_psn. For RNR
 * see rx_rnr_nak. Otherwise every message before it completes (acknowledged by that cumulative
 * ACK; a READ still awaiting its answer is cancelled), it fails with the syndrome's status, and
 * the QP fails, cancelling the rest. A NAK naming no message in the send queue (or not its
 * first PSN) is refused; one for a QP that already failed is only counted (the peer repeats it
 * for every packet it gets).
 */
static void
rx_nak(struct sl_xport *x, uint32_t qpn, struct xqp *q, const struct sl_xfb *fb, uint64_t now_ns)
{
	uint32_t k = fb->nak_msn - q->sq[q->sq_head & x->sq_mask].msn;

	if (!q->failed && (k >= q->sq_tail - q->sq_head ||
			   q->sq[(q->sq_head + k) & x->sq_mask].first_psn != fb->ack_psn)) {
		sl_stat_add(&x->st.rx_fb_out_of_range, 1);
		return;
	}
	sl_stat_add(&q->st.naks_received, 1);
	sl_stat_add(&x->st.rx_nak, 1);
	if (q->failed)
		return;
	if (fb->syndrome == SL_XPORT_SYN_RNR) {
		rx_rnr_nak(x, qpn, q, fb, now_ns);
		return;
	}
	for (; k; k--) {
		const struct sq_ent *m = &q->sq[q->sq_head & x->sq_mask];

		retire(x, qpn, q, m->op == SL_XPORT_OP_READ && !m->answered ? -ECANCELED : 0,
		       now_ns);
	}
	retire(x, qpn, q, syn_status[fb->syndrome], now_ns);
	fail_qp(x, qpn, q, -ECANCELED, now_ns);
}

/* One feedback frame: scheduler events for the QP it names, then completions. */
static void
rx_feedback(struct sl_xport *x, const struct sl_xport_rx_frame *f, uint64_t now_ns)
{
	struct sl_event ev[XP_EVENTS_MAX];
	struct sl_xfb fb;
	struct xqp *q;
	unsigned n;

	if (sl_xfb_decode(f->buf, f->len, x->c.window_pkts, &fb, &x->rej) < 0) {
		sl_stat_add(&x->st.rx_bad_header, 1);
		return;
	}
	q = open_qp(x, fb.qpn);
	if (q != NULL && fb.token != q->token) {
		sl_stat_add(&x->st.rx_bad_token, 1);
		return;
	}
	if (q != NULL && fb.opcode == SL_XOP_NAK) {
		rx_nak(x, fb.qpn, q, &fb, now_ns);
		return;
	}
	if (q == NULL || q->failed) {
		sl_stat_add(&x->st.rx_bad_qpn, 1);
		return;
	}
	if ((fb.flags & SL_XFB_F_SACK) && q->rnr_state != XQP_RNR_NONE &&
	    sl_seq_ge(fb.sack_psn, q->rnr_psn))
		fb.flags &= (uint8_t)~SL_XFB_F_SACK; /* made before the peer forgot it, maybe */
	if (!fb_in_range(x, &fb)) {
		sl_stat_add(&x->st.rx_fb_out_of_range, 1);
		return;
	}
	sl_stat_add(fb.opcode == SL_XOP_ACK    ? &q->st.acks
		    : fb.opcode == SL_XOP_NACK ? &q->st.nacks
		    : fb.opcode == SL_XOP_CNP  ? &q->st.cnps
					       : &q->st.pulls,
		    1);
	n = sl_xport_fb_events(x->e, x->rtx, fb.qpn, &q->ff, &fb, ev, XP_EVENTS_MAX);
	sl_sched_incoming(x->e, ev, n, now_ns);
	sl_stat_add(&x->st.rx_fb, 1);
	sl_xp_complete(x, fb.qpn, q, now_ns);
}

/*
 * A data packet psn arrives at QP q: one beyond the highest arrived plus one shows a loss, and
 * opens the QP's gap (one at a time: a loss behind an open gap is not timed, so multi-loss
 * windows are left out of sl_xport_recovery_hist).
 */
static void
gap_watch(struct xqp *q, uint32_t psn, uint64_t now_ns)
{
	if (!q->rx_gap && sl_seq_gt(psn, q->rx_max_psn + 1)) {
		q->rx_gap = true;
		q->rx_gap_psn = q->rx_max_psn + 1;
		q->rx_gap_ns = now_ns;
	}
	if (sl_seq_gt(psn, q->rx_max_psn))
		q->rx_max_psn = psn;
}

void
sl_xport_rx_burst(struct sl_xport *x, uint64_t now_ns, const struct sl_xport_rx_frame *in,
		  unsigned n)
{
	struct sl_recv_pkt pk[XP_RX_BATCH];
	unsigned npk = 0;

	if (x->ec)
		sl_xp_ec_burst(x, in, n, now_ns);
	for (unsigned i = 0; i < n; i++) {
		const struct sl_xport_rx_frame *f = &in[i];
		struct sl_xhdr h;
		struct xqp *q;

		if (f->len == 0 || !sl_xhdr_op_is_data(f->buf[0])) {
			rx_feedback(x, f, now_ns);
			x->c.release(x->c.ctx, f->handle);
			continue;
		}
		if (sl_xhdr_decode(f->buf, f->len, &h, &x->rej) < 0) {
			sl_stat_add(&x->st.rx_bad_header, 1);
		} else if ((q = open_qp(x, h.qpn)) == NULL) {
			sl_stat_add(&x->st.rx_bad_qpn, 1);
		} else if (h.token != q->token) {
			sl_stat_add(&x->st.rx_bad_token, 1);
		} else {
			gap_watch(q, h.psn, now_ns);
			sl_stat_add(&q->st.wire_bytes_received, f->len + x->c.frame_overhead_bytes);
			sl_stat_add(&x->st.rx_data, 1);
			if (q->recv_mode == SL_XPORT_RECV_EC) {
				sl_xp_ec_arrive(x, h.qpn, h.psn, f);
				continue;
			}
			pk[npk++] = (struct sl_recv_pkt){
				.conn = h.qpn,
				.psn = h.psn,
				.flags = ((h.flags & SL_XHDR_F_CE) ? SL_RECV_F_ECN_CE : 0) |
					 ((h.flags & SL_XHDR_F_RTX) ? SL_RECV_F_RTX : 0) |
					 ((h.flags & SL_XHDR_F_ACKREQ) ? SL_RECV_F_ACK_REQ : 0) |
					 ((h.flags & SL_XHDR_F_TRIMMED) ? SL_RECV_F_TRIMMED : 0),
				.tx_id = h.tx_id,
				.tx_ns = h.ts_ns,
				.handle = f->handle,
			};
			if (npk == XP_RX_BATCH) {
				recv_batch(x, pk, npk, now_ns);
				npk = 0;
			}
			continue;
		}
		x->c.release(x->c.ctx, f->handle);
	}
	if (npk)
		recv_batch(x, pk, npk, now_ns);
}

/* --- transmit ----------------------------------------------------------------------------- */

/*
 * What a packet of anything but a plain SEND carries beyond the base header: the immediate on
 * the last packet (the "with immediate" opcode is the next one), RETH (the encoder writes it
 * where the opcode has it: a WRITE's first packet, a READ request), and for a READ request no
 * payload (*len 0).
 */
static void
extend(struct sl_xhdr *h, const struct sq_ent *m, bool last, uint32_t *len)
{
	h->opcode = (uint8_t)(h->opcode + (last && m->has_imm));
	h->imm = m->imm;
	h->raddr = m->raddr;
	h->rkey = m->rkey;
	h->rlen_bytes = m->len;
	if (m->op == SL_XPORT_OP_READ)
		*len = 0;
}

/* Zero bytes after a payload so that a frame of hdr_payload_bytes (header and payload) is min. */
static uint8_t
frame_pad(const struct sl_xport *x, uint32_t hdr_payload_bytes)
{
	return x->c.min_frame_bytes > hdr_payload_bytes
		       ? (uint8_t)(x->c.min_frame_bytes - hdr_payload_bytes)
		       : 0;
}

/*
 * The header of a packet of anything but a plain SEND, or of a QP that stamps its packets (TS):
 * the full encoder with its extensions. Its length.
 */
static uint16_t
encode_ext(const struct sl_xport *x, const struct xqp *q, const struct sq_ent *m,
	   const struct sl_seg *s, uint8_t opcode, uint8_t flags, bool last, uint64_t now_ns,
	   struct sl_xport_tx_frame *f)
{
	struct sl_xhdr h = {
		.opcode = opcode,
		.flags = (uint8_t)(flags | (q->ts ? SL_XHDR_F_TS : 0)),
		.tx_id = s->tx_id,
		.qpn = q->peer_qpn,
		.token = q->peer_token,
		.psn = s->seq,
		.msn = m->msn,
		.ts_ns = q->ts ? now_ns : 0,
	};
	uint32_t n;

	if (m->op != SL_XPORT_OP_SEND || m->has_imm)
		extend(&h, m, last, &f->payload_len);
	n = (uint32_t)sl_xhdr_len(h.opcode, h.flags);
	h.pad_bytes = frame_pad(x, n + f->payload_len);
	sl_xhdr_encode(&h, f->hdr, sizeof(f->hdr));
	f->pad_bytes = h.pad_bytes;
	return (uint16_t)n;
}

/*
 * Build the data frame of one scheduler decision; false if its message was retired. A plain
 * SEND's packet of a QP without timestamps, the common case, is the base header alone, written
 * in place.
 */
static bool
build_data(struct sl_xport *x, const struct sl_seg *s, uint64_t now_ns, struct sl_xport_tx_frame *f)
{
	struct xqp *q = &x->qp[s->flow];
	const struct sq_ent *m = msg_of(x, q, s->seq);
	uint32_t k, off;
	uint8_t opcode, flags;
	bool last;

	if (m == NULL)
		return false;
	k = s->seq - m->first_psn;
	off = k * q->seg_bytes;
	last = k + 1 == m->npkts;
	opcode = xop_of[m->op][m->npkts == 1 ? POS_ONLY
			       : k == 0      ? POS_FIRST
			       : last        ? POS_LAST
					     : POS_MIDDLE];
	flags = (uint8_t)((s->tx_id ? SL_XHDR_F_RTX : 0) | (last ? SL_XHDR_F_ACKREQ : 0));
	f->payload = m->buf + off;
	f->payload_len = SL_MIN(q->seg_bytes, m->len - off);
	f->qpn = s->flow;
	if (sl_likely(m->op == SL_XPORT_OP_SEND && !m->has_imm && !q->ts)) {
		f->pad_bytes = frame_pad(x, SL_XHDR_BASE_LEN + f->payload_len);
		sl_xhdr_put_base(f->hdr, opcode, flags, s->tx_id, f->pad_bytes, q->peer_qpn,
				 q->peer_token, s->seq, m->msn);
		f->hdr_len = SL_XHDR_BASE_LEN;
	} else {
		f->hdr_len = encode_ext(x, q, m, s, opcode, flags, last, now_ns, f);
	}
	if (s->tx_id) {
		sl_stat_add(&q->st.pkts_rtx, 1);
		sl_stat_add(&x->st.tx_rtx, 1);
	} else {
		sl_stat_add(&q->st.pkts_sent, 1);
		sl_stat_add(&x->st.tx_data, 1);
	}
	return true;
}

unsigned
sl_xport_tx_burst(struct sl_xport *x, uint64_t now_ns, struct sl_xport_tx_frame *out, unsigned max)
{
	struct sl_seg segs[XP_SEGS];
	unsigned n = 0, ns;

	if (sl_recv_next_deadline(x->r) <= now_ns)
		apply_actions(x, sl_recv_poll(x->r, now_ns, x->act, x->act_max), now_ns);
	if (x->drain_busy)
		sl_xp_ec_drain(x, now_ns);
	if (x->reading.n)
		sl_xp_reads_timeout(x, now_ns);
	if (x->rnr_wait.n)
		rnr_resend_due(x, now_ns);
	n = sl_xport_fbq_pop(x->fbq, out, max);
	if (n)
		sl_stat_add(&x->st.tx_fb, n);
	while (n < max) {
		ns = sl_sched_next_burst(x->e, now_ns, segs, SL_MIN(max - n, SL_ARRAY_SIZE(segs)));
		if (ns == 0)
			break;
		for (unsigned i = 0; i < ns; i++) {
			uint32_t qpn = segs[i].flow;

			/* A QP resending with nothing acknowledged for its timeout fails. */
			if (segs[i].tx_id && sl_xp_timed_out(x, qpn, &x->qp[qpn], now_ns))
				continue;
			if (build_data(x, &segs[i], now_ns, &out[n]))
				n++;
			else
				sl_stat_add(&x->st.tx_stale, 1);
		}
	}
	return n;
}

uint64_t
sl_xport_next_deadline(const struct sl_xport *x)
{
	uint64_t d;

	if (sl_xport_fbq_busy(x->fbq))
		return 0;
	d = SL_MIN(sl_sched_next_deadline(x->e), sl_recv_next_deadline(x->r));
	d = SL_MIN(d, sl_xp_ec_deadline(x));
	if (x->reading.n)
		d = SL_MIN(d, sl_xp_reads_deadline(x));
	if (x->rnr_wait.n)
		d = SL_MIN(d, rnr_deadline(x));
	return d;
}

/* --- counters and views ------------------------------------------------------------------- */

void
sl_xport_stats_get(const struct sl_xport *x, struct sl_xport_stats *st)
{
	sl_stats_snapshot(st, &x->st, sl_xport_stat_table.n);
}

void
sl_xport_rejects_get(const struct sl_xport *x, struct sl_xhdr_rejects *rej)
{
	sl_stats_snapshot(rej, &x->rej, SL_XREJ_MAX);
}

int
sl_xport_qp_stats_get(const struct sl_xport *x, uint32_t qpn, struct sl_xport_qp_stats *st)
{
	const struct xqp *q = open_qp(x, qpn);

	if (q == NULL)
		return -ENOENT;
	sl_stats_snapshot(st, &q->st, sl_xport_qp_stat_table.n);
	st->naks_sent = sl_xport_fbq_naks_sent(x->fbq, qpn); /* the queue counts what it makes */
	return 0;
}

int
sl_xport_qp_info_get(const struct sl_xport *x, uint32_t qpn, struct sl_xport_qp_info *info)
{
	const struct xqp *q = open_qp(x, qpn);
	struct sl_recv_conn_info ri;
	struct sl_flow_view v;
	struct sl_flow_stats fs;
	struct sl_pacer_flow_stats ps;

	memset(&v, 0, sizeof(v));
	if (q == NULL || (!q->failed && sl_sched_flow_view(x->e, qpn, &v) != 0))
		return -ENOENT;
	memset(info, 0, sizeof(*info));
	memcpy(info->proto, q->ops->name, sizeof(info->proto));
	info->failed = q->failed;
	info->peer_qpn = q->peer_qpn;
	info->seg_bytes = q->seg_bytes;
	info->recv_mode = q->recv_mode;
	info->sq_used = q->posted;
	info->inflight_pkts = v.snd_max - v.wnd_start;
	info->wnd_segs = v.wnd_segs;
	info->rate_bps = v.rate_bps;
	info->rto_ns = v.rto_ns;
	if (!q->failed && sl_sched_flow_stats_get(x->e, qpn, &fs) == 0)
		info->rto_fired = fs.rto_fired;
	if (!q->failed && q->ops->credit != SL_CREDIT_GRANT &&
	    sl_pacer_flow_stats_get(sl_sched_pacer(x->e), qpn, &ps) == 0) {
		info->pace_bps = ps.rate_bps;
		info->pace_slots = v.queued;
	}
	if (sl_recv_conn_info(x->r, qpn, &ri) == 0)
		info->recv_blocks = ri.blocks;
	return 0;
}

size_t
sl_xport_bytes_per_qp(const struct sl_xport *x)
{
	struct sl_recv_mem m;
	struct sl_recv_conf rc = SL_RECV_CONF_DEFAULT(x->c.max_qps);

	rc.window_pkts = x->c.window_pkts;
	sl_recv_mem(&rc, &m);
	return sizeof(struct xqp) + (size_t)(x->sq_mask + 1) * sizeof(struct sq_ent) +
	       sl_sched_bytes_per_flow(x->e) + m.conn_ctx_bytes + sl_recv_rtx_flow_bytes() +
	       sl_xport_fbq_bytes_per_qp();
}

void
sl_xport_sched_stats_get(const struct sl_xport *x, struct sl_sched_stats *st)
{
	sl_sched_stats_get(x->e, st);
}

void
sl_xport_pacer_stats_get(const struct sl_xport *x, struct sl_pacer_stats *st)
{
	sl_pacer_stats_get(sl_sched_pacer(x->e), st);
}

const struct sl_hist *
sl_xport_recovery_hist(const struct sl_xport *x)
{
	return &x->recovery_ns;
}

void
sl_xport_recv_stats_get(const struct sl_xport *x, struct sl_recv_stats *st)
{
	sl_recv_stats_get(x->r, st);
}
