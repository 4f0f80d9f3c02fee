/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_xport.h - the transport endpoint: reliable, congestion-controlled queue pairs on the Tonic
 * scheduler (lib/sched), the MELO receiver (lib/recv) and the transport wire format (lib/wire).
 *
 * One endpoint per lcore owns local queue pairs [0, max_qps); nothing in it is shared, and it
 * never reads a clock (now_ns is an argument), never allocates after create and never sees an
 * mbuf: the daemon (lib/dp) and the tests drive the same code with bytes and opaque handles.
 *
 * A QP is one reliable connection to one peer QP. Its sender is a flow of the scheduler, with
 * the transport program chosen per QP by name; its receiver is a connection of lib/recv (MELO,
 * or go-back-N), which sends the feedback the program declares (struct sl_proto_ops.feedback).
 * A message posted on a QP is cut into packets of seg_bytes payload; the scheduler numbers them
 * (PSNs) and decides when each goes (or goes again); the peer's receiver hands them back in PSN
 * order, and the endpoint gives the application each message's bytes in order, segment by
 * segment (on_recv), then tells the sender when the whole message is acknowledged
 * (on_complete). docs/transport.md is the design.
 *
 * The run loop, per poll:
 *     sl_xport_rx_burst(x, now, frames, n);       // data -> receiver, feedback -> scheduler
 *     n = sl_xport_tx_burst(x, now, out, max);    // feedback first, then data: build and send
 * and a caller that sleeps wakes at sl_xport_next_deadline(x).
 *
 * Every packet of a message is a full scheduler segment, the last one included: the scheduler's
 * short-tail rule (Tonic appendix D, for byte streams) would let one message with a short last
 * packet stop the next until acknowledged, where RDMA-like messages each end short. The endpoint
 * keeps the real length of each packet; the scheduler's rate credit charges seg_bytes for each.
 *
 * Units: ns, bytes, bits/s; PSNs count packets (32-bit, wrapping).
 */
#ifndef SL_XPORT_H
#define SL_XPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "sl_common.h"
#include "sl_ec.h"
#include "sl_recv.h"
#include "sl_sched.h"
#include "sl_stats.h"
#include "sl_wire.h"

#define SL_XPORT_MSG_MAX (UINT32_C(1) << 30) /**< largest message, bytes */
#define SL_XPORT_SQ_DEFAULT 128u             /**< messages in flight per QP by default */
#define SL_XPORT_QP_TIMEOUT_NS                                                                     \
	(2 * SL_NS_PER_S)       /**< default QP timeout: above the link's                          \
				 *   stuck time and a few RTOs */
#define SL_XPORT_GRANT_SEGS 16u /**< grant programs' default initial tokens, pkts */
#define SL_XPORT_LINE_BPS_DEFAULT (100 * SL_BPS_PER_GBPS) /**< line rate by default, bits/s */
/* READs outstanding per QP, and answers a QP owes, at most (InfiniBand's max_rd_atomic and
 * max_dest_rd_atomic). */
#define SL_XPORT_READS_MAX 16u

/*
 * A QP's receive mode (struct sl_xport_qp_conf.recv_mode): lib/recv's two (enum sl_recv_mode:
 * SL_RECV_MELO, SL_RECV_GBN), and the endpoint-congestion target: go-back-N into the endpoint's
 * host queue (lib/ec, Chong and Krishnan's target; conf.ec), which a host stage drains at
 * conf.ec_drain_bps, answering with IACKs, DACKs and go-back-N NACKs (ec_recv.c, docs/ec.md).
 */
#define SL_XPORT_RECV_EC 2u
static_assert(SL_XPORT_RECV_EC == SL_RECV_GBN + 1, "receive modes follow lib/recv's");

/* What a posted message asks of the peer (struct sl_xport_wr.op). */
enum sl_xport_op {
	SL_XPORT_OP_SEND,      /**< bytes for the peer's consumer (on_recv, op SEND) */
	SL_XPORT_OP_WRITE,     /**< bytes for the peer's memory at raddr / rkey: the peer's
				*   consumer checks the key and places them (on_recv, op WRITE) */
	SL_XPORT_OP_READ,      /**< len bytes of the peer's memory at raddr / rkey (read_src
				*   there): they come back through on_recv (op READ_RESP, with
				*   this request's cookie), and the READ completes once all have */
	SL_XPORT_OP_READ_RESP, /**< on_recv only: a piece of the answer to one of our READs */
};

/*
 * The peer refused a message (on_recv or read_src returned one of these): the receiving QP
 * answers every later packet with a NAK carrying the refused message's MSN and this syndrome
 * (docs/wire-format.md, "NAK"). For ACCESS, OP and INVALID it delivers nothing more; at the
 * sender that message completes with the status beside each, every later one with
 * -ECANCELED, and the QP fails. RNR is not final: the receiver forgets the message and
 * everything after it and waits for it again; the sender sends it again after a backoff
 * (SL_XPORT_RNR_MIN_NS, doubling to SL_XPORT_RNR_MAX_NS while the same message is refused),
 * as an RC QP with unlimited RNR retries does, until its timeout_ns without progress.
 */
enum sl_xport_syndrome {
	SL_XPORT_SYN_NONE = 0,
	SL_XPORT_SYN_ACCESS,  /**< key, range or access flag refused: -EACCES */
	SL_XPORT_SYN_OP,      /**< the consumer cannot take it (its buffer too short, it went
			       *   away): -EREMOTEIO */
	SL_XPORT_SYN_INVALID, /**< a request the peer does not serve: -EBADMSG */
	SL_XPORT_SYN_RNR,     /**< receiver not ready: no room for it now; sent again later (a
			       *   QP whose receiver is the endpoint-congestion target refuses
			       *   it as OP: that receiver cannot forget what it took) */
	SL_XPORT_SYN_MAX = SL_XPORT_SYN_RNR,
};

#define SL_XPORT_RNR_MIN_NS 10000u   /**< first resend after an RNR NAK, ns (10 us) */
#define SL_XPORT_RNR_MAX_NS 1000000u /**< backoff cap while one message is refused, ns (1 ms) */

/* One segment of a received message, in order (struct sl_xport_conf.on_recv). */
struct sl_xport_rx_seg {
	uint32_t qpn;        /**< local QP */
	uint32_t msn;        /**< message sequence number, from the QP's first message's 0 */
	uint8_t op;          /**< SL_XPORT_OP_SEND, WRITE or READ_RESP */
	uint32_t offset;     /**< bytes of this message before data */
	const uint8_t *data; /**< payload, valid during the call only */
	uint32_t len;        /**< payload bytes (0 for an empty message) */
	bool first;          /**< the message's first segment */
	bool last;           /**< the message's last segment: it is complete */
	bool has_imm;        /**< imm is valid (SEND or WRITE with immediate; on the last) */
	uint32_t imm;        /**< immediate data */
	uint64_t raddr;      /**< WRITE: where the first byte of the message goes (add offset) */
	uint32_t rkey;       /**< WRITE: the key it names */
	uint32_t total_len;  /**< WRITE: bytes of the whole message (the RETH length); READ_RESP:
			      *   of the whole answer; SEND: 0 (not known before the last) */
	uint64_t cookie;     /**< READ_RESP: the cookie of the READ it answers */
};

/*
 * A posted message finished (on_complete): every packet of a SEND or WRITE was acknowledged, or
 * the whole answer to a READ arrived (status 0); or not: the QP failed first (-ETIMEDOUT: the
 * peer acknowledged nothing for the QP's timeout; -EBUSY: nothing for that long either, but
 * the peer answered that it had no room, SL_XPORT_SYN_RNR), was closed (-ECANCELED), or the peer
 * refused it (-EACCES, -EREMOTEIO, -EBADMSG: enum sl_xport_syndrome). A message that failed
 * may or may not have been delivered, and was delivered at most once; one the peer refused
 * touched nothing there.
 */
struct sl_xport_cqe {
	uint32_t qpn;     /**< local QP */
	uint32_t msn;     /**< its message sequence number */
	uint8_t op;       /**< enum sl_xport_op, as posted */
	uint32_t len;     /**< message bytes (READ: bytes read) */
	int status;       /**< 0, -ETIMEDOUT, -EBUSY, -ECANCELED, -EACCES, -EREMOTEIO or -EBADMSG */
	uint64_t cookie;  /**< as posted */
	uint64_t post_ns; /**< when it was posted, ns (completion latency = now - post_ns) */
};

struct sl_xport_conf {
	uint32_t max_qps;              /**< local QPs [0, max_qps), >= 1 */
	uint32_t sq_depth;             /**< messages posted and not completed per QP, power of two
					*   [SL_XPORT_SQ_DEFAULT] */
	uint32_t window_pkts;          /**< scheduler window W and receiver window, packets, power
					*   of two in [64, 4096] [SL_SCHED_WND_DEFAULT] */
	uint32_t min_frame_bytes;      /**< frames shorter than this are padded to it (the link
					*   body's minimum; 0: no padding) */
	uint64_t ack_delay_ns;         /**< coalesced ACKs wait at most this long [10 us] */
	uint32_t pool_bits;            /**< MELO bits pool, bits [1024] */
	uint64_t line_bps;             /**< the port's line rate, bits/s of wire bits: the link the
					*   QPs' pacer shares among them, and the default rate limit
					*   of every QP [SL_XPORT_LINE_BPS_DEFAULT] */
	uint32_t frame_overhead_bytes; /**< wire bytes of a frame beyond what the endpoint builds
					*   (link header, Ethernet header and FCS, preamble and
					*   gap), charged against rates with the transport
					*   header [0] */
	uint64_t pace_catchup_ns;      /**< how far behind its schedule a rate-limited QP may
					*   catch up after the lcore stalled (the pacer's
					*   catchup_ns) [0: none] */
	bool line_bypass;              /**< what drains the endpoint keeps line_bps itself (a
					*   link's rate): a QP paced at line_bps skips the pacer
					*   (SL_SCHED_F_LINE_BYPASS) [false] */
	uint64_t ec_drain_bps;         /**< the host behind the endpoint-congestion target takes
					*   packets from it at this rate, bits/s of wire bits
					*   (frame + frame_overhead_bytes) [0: no target, QPs with
					*   recv_mode SL_XPORT_RECV_EC are refused] */
	struct sl_ec_conf ec;          /**< that target, shared by those QPs (max_conns is
					*   max_qps; zeros take lib/ec's defaults; sr_pkts must be 0:
					*   delivery is in order) */
	/* Callbacks; ctx is their first argument. */
	/** The bytes of a received frame the endpoint holds (reorder buffer): required. */
	const uint8_t *(*frame)(void *ctx, void *handle, uint32_t *len);
	/** The endpoint is done with a received frame: required. */
	void (*release)(void *ctx, void *handle);
	/**
	 * A segment of a message, in order (NULL: counted and dropped). Returns 0, or a syndrome
	 * (enum sl_xport_syndrome) that refuses the message: nothing more of it or after it is
	 * delivered on that QP, and the peer is told (see enum sl_xport_syndrome).
	 */
	int (*on_recv)(void *ctx, const struct sl_xport_rx_seg *seg, uint64_t now_ns);
	/**
	 * A READ arrived for len bytes at raddr / rkey on QP qpn: point *src at them and return
	 * 0, or return a syndrome. The bytes must stay unchanged until the QP closes or the
	 * answer is acknowledged (NULL: every READ is refused with SL_XPORT_SYN_INVALID).
	 */
	int (*read_src)(void *ctx, uint32_t qpn, uint64_t raddr, uint32_t rkey, uint32_t len,
			const uint8_t **src);
	/** A posted message completed (NULL: counted only). */
	void (*on_complete)(void *ctx, const struct sl_xport_cqe *c, uint64_t now_ns);
	void *ctx;
};

struct sl_xport_qp_conf {
	uint32_t qpn;               /**< local QP, < max_qps */
	uint32_t peer_qpn;          /**< the peer's QP, < 2^24: data and feedback name it */
	uint32_t token;             /**< this QP's connection token: a frame for it that
				     *   carries another is refused (rx_bad_token) */
	uint32_t peer_token;        /**< the peer QP's token, carried in every frame sent */
	const char *proto;          /**< transport program (drivers/proto), by name (required) */
	uint32_t seg_bytes;         /**< payload bytes per packet, 1..65535 (required) */
	uint8_t recv_mode;          /**< enum sl_recv_mode, or SL_XPORT_RECV_EC (needs the
				     *   endpoint's ec_drain_bps), of both ends [MELO] */
	uint32_t send_psn;          /**< PSN of this QP's first packet [0] */
	uint32_t recv_psn;          /**< PSN of the peer's first packet [0] */
	uint64_t init_rate_bps;     /**< rate programs' initial rate, bits/s [0: its rate limit] */
	uint32_t init_wnd_segs;     /**< window programs' initial window, packets [W] */
	uint32_t init_credit_bytes; /**< grant programs' tokens before the first PULL (about a
				     *   BDP), bytes [SL_XPORT_GRANT_SEGS x seg_bytes] */
	uint64_t max_rate_bps;      /**< the QP's rate limit, bits/s of wire bits: its packets
				     *   leave at most this fast whatever the program, window
				     *   programs included; grant programs take none (their
				     *   receiver's PULLs pace them) [line_bps, 0 for grant] */
	uint64_t rto_ns;            /**< initial RTO, ns [1 ms] */
	uint64_t timeout_ns;        /**< nothing acknowledged for this long with messages out:
				     *   the QP fails (IB: retry count x timeout)
				     *   [SL_XPORT_QP_TIMEOUT_NS] */
	uint64_t param[4];          /**< program parameters (struct sl_flow_conf.param) */
};

/* A frame to send: hdr, then payload, then pad zero bytes. */
struct sl_xport_tx_frame {
	uint8_t hdr[SL_XHDR_MAX_LEN]; /**< transport header or whole feedback frame */
	uint16_t hdr_len;             /**< bytes of hdr used */
	uint16_t pad_bytes;           /**< zeros after the payload (min_frame_bytes) */
	uint32_t payload_len;         /**< bytes at payload (0: feedback) */
	const uint8_t *payload;       /**< in the posted message's buffer; NULL for feedback */
	uint32_t qpn;                 /**< local QP it belongs to */
};
static_assert(SL_XHDR_MAX_LEN >= SL_XFB_MAX_LEN, "a feedback frame fits in hdr");

/* A received frame: the transport header onwards (padding included). */
struct sl_xport_rx_frame {
	const uint8_t *buf;
	uint32_t len;
	void *handle; /**< released exactly once through conf->release */
};

/* Endpoint counters, each described once in sl_xport_stat_table (docs/counters.md). */
struct sl_xport_stats {
	uint64_t rx_data;
	uint64_t rx_fb;
	uint64_t rx_bad_header;
	uint64_t rx_bad_qpn;
	uint64_t rx_bad_token;
	uint64_t rx_fb_out_of_range;
	uint64_t rx_bad_sequence;
	uint64_t rx_unsupported;
	uint64_t rx_no_consumer;
	uint64_t rx_bad_answer;
	uint64_t rx_refused;
	uint64_t rx_nak;
	uint64_t rx_rnr;
	uint64_t rx_rnr_discarded;
	uint64_t rx_rnr_nak;
	uint64_t rnr_resends;
	uint64_t tx_data;
	uint64_t tx_rtx;
	uint64_t tx_fb;
	uint64_t tx_nak;
	uint64_t tx_stale;
	uint64_t fb_held;
	uint64_t fb_merged;
	uint64_t fb_coalesced;
	uint64_t fb_encode_errors;
	uint64_t post_refused;
	uint64_t msgs_posted;
	uint64_t msgs_completed;
	uint64_t msgs_failed;
	uint64_t msgs_received;
	uint64_t reads_served;
	uint64_t qps_failed;
};

/* Per-QP counters (sl_xport_qp_stats_get), described once in sl_xport_qp_stat_table. */
struct sl_xport_qp_stats {
	uint64_t msgs_posted;
	uint64_t msgs_completed;
	uint64_t msgs_failed;
	uint64_t msgs_received;
	uint64_t bytes_posted;
	uint64_t bytes_completed;
	uint64_t bytes_received;
	uint64_t pkts_sent;
	uint64_t pkts_rtx;
	uint64_t pkts_relost;
	uint64_t acks;
	uint64_t nacks;
	uint64_t cnps;
	uint64_t pulls;
	uint64_t rx_bad_sequence;
	uint64_t wire_bytes_received;
	uint64_t refusals;
	uint64_t naks_sent;
	uint64_t naks_received;
	uint64_t rnr_refusals;
	uint64_t rnr_naks_received;
	uint64_t rnr_resends;
};

extern const struct sl_stat_table sl_xport_stat_table;
extern const struct sl_stat_table sl_xport_qp_stat_table;

/* What telemetry shows of a QP beyond its counters. */
struct sl_xport_qp_info {
	char proto[SL_PROTO_NAME_MAX];
	bool failed; /**< timed out, or the peer refused a message (NAK): sends refused until
		      *   closed and opened again */
	uint32_t peer_qpn;
	uint32_t seg_bytes;
	uint8_t recv_mode;
	uint32_t sq_used;       /**< messages posted, not completed */
	uint32_t inflight_pkts; /**< sent, not cumulatively acknowledged */
	uint32_t wnd_segs;      /**< the program's window */
	uint64_t rate_bps;      /**< the program's rate (rate programs) */
	uint64_t pace_bps;      /**< the rate the pacer holds the QP to (0: unpaced, grant) */
	uint32_t pace_slots;    /**< releases the pacer owes the QP (its pacing backlog) */
	uint64_t rto_ns;        /**< current RTO */
	uint64_t rto_fired;     /**< RTOs that expired */
	uint32_t recv_blocks;   /**< MELO pool blocks the receiver holds */
};

struct sl_xport;

/* An endpoint for conf; NULL and errno EINVAL (bad conf) or ENOMEM. */
struct sl_xport *sl_xport_create(const struct sl_xport_conf *conf);

/* Free it; every frame handle it still holds is released first. */
void sl_xport_free(struct sl_xport *x);

/*
 * Open a QP at now_ns. 0, -EINVAL (bad field), -ENOENT (no such program), -EEXIST (open), or
 * the scheduler's or receiver's error.
 */
int sl_xport_qp_open(struct sl_xport *x, const struct sl_xport_qp_conf *qc, uint64_t now_ns);

/*
 * Close a QP (open or failed) at now_ns: its messages not yet completed complete with status
 * -ECANCELED, and the frames its receiver holds are released. 0 or -ENOENT.
 */
int sl_xport_qp_close(struct sl_xport *x, uint32_t qpn, uint64_t now_ns);

/*
 * Post a SEND of len bytes (0..SL_XPORT_MSG_MAX) at buf, which must stay unchanged until its
 * completion. 0, -ENOENT (no such QP), -EINVAL (bad length), -EPIPE (the QP failed),
 * -ENOBUFS (send queue full: retry after a completion; counted in post_refused).
 */
int sl_xport_post_send(struct sl_xport *x, uint32_t qpn, const void *buf, uint32_t len,
		       uint64_t cookie, uint64_t now_ns);

/* A message to post (sl_xport_post). */
struct sl_xport_wr {
	uint8_t op;      /**< SL_XPORT_OP_SEND, WRITE or READ */
	bool has_imm;    /**< SEND, WRITE: with immediate data */
	uint32_t imm;    /**< immediate data */
	const void *buf; /**< SEND, WRITE: the bytes, unchanged until completion; READ: NULL */
	uint32_t len;    /**< bytes: 0..SL_XPORT_MSG_MAX (READ: 1..) */
	uint64_t raddr;  /**< WRITE, READ: the peer's address */
	uint32_t rkey;   /**< WRITE, READ: the peer's key */
	uint64_t cookie; /**< given back in the completion (and, READ, with the answer) */
};

/*
 * Post a message (sl_xport_post_send is a SEND without immediate). 0, -ENOENT (no such QP),
 * -EINVAL (bad op or length), -EPIPE (the QP failed), -ENOBUFS (send queue full, or
 * SL_XPORT_READS_MAX READs outstanding: retry after a completion; counted in post_refused).
 */
int sl_xport_post(struct sl_xport *x, uint32_t qpn, const struct sl_xport_wr *wr, uint64_t now_ns);

/*
 * Transport header bytes the pacer charges with each packet of a QP running ops (its data
 * header: the send time rides along when the program reads echoes). A message of n bytes is
 * charged ceil(n / seg_bytes) x (seg_bytes + this + frame_overhead_bytes) wire bytes against
 * the QP's rate limit (every packet counts as a full segment).
 */
uint32_t sl_xport_hdr_bytes(const struct sl_proto_ops *ops);

/* Messages the QP can still take before post_send says -ENOBUFS (0 for no such QP). */
uint32_t sl_xport_sq_room(const struct sl_xport *x, uint32_t qpn);

/*
 * Take n received frames at now_ns: data goes to the QP's receiver (and, in order, to on_recv),
 * feedback to its sender. Every frame is counted once: data, feedback, or refused by reason.
 */
void sl_xport_rx_burst(struct sl_xport *x, uint64_t now_ns, const struct sl_xport_rx_frame *in,
		       unsigned n);

/* Up to max frames to send now: feedback first (including delayed ACKs due), then data. */
unsigned sl_xport_tx_burst(struct sl_xport *x, uint64_t now_ns, struct sl_xport_tx_frame *out,
			   unsigned max);

/* Earliest time tx_burst may have work without new input, ns: 0 now, UINT64_MAX never. */
uint64_t sl_xport_next_deadline(const struct sl_xport *x);

/*
 * Fail every QP with messages out and nothing acknowledged for its timeout_ns, as tx_burst does
 * when it builds such a QP's resend: for a caller that cannot call tx_burst (its port has no
 * room: the link's replay ring full of frames a peer that went away will never acknowledge,
 * the port down), so that its QPs still end. A walk of the QPs: the caller bounds how often.
 * Returns how many failed.
 */
unsigned sl_xport_expire(struct sl_xport *x, uint64_t now_ns);

void sl_xport_stats_get(const struct sl_xport *x, struct sl_xport_stats *st);
/* rx_bad_header by reason. */
void sl_xport_rejects_get(const struct sl_xport *x, struct sl_xhdr_rejects *rej);
/* 0, or -ENOENT for a QP that is not open. */
int sl_xport_qp_stats_get(const struct sl_xport *x, uint32_t qpn, struct sl_xport_qp_stats *st);
int sl_xport_qp_info_get(const struct sl_xport *x, uint32_t qpn, struct sl_xport_qp_info *info);

/* Bytes of endpoint memory per QP for this configuration (scheduler, receiver, send queue). */
size_t sl_xport_bytes_per_qp(const struct sl_xport *x);

/* The counters of the engines underneath (for telemetry). */
void sl_xport_sched_stats_get(const struct sl_xport *x, struct sl_sched_stats *st);
void sl_xport_pacer_stats_get(const struct sl_xport *x, struct sl_pacer_stats *st);
void sl_xport_recv_stats_get(const struct sl_xport *x, struct sl_recv_stats *st);
/*
 * Loss to delivery, ns, of every gap the QPs' receivers repaired: from the arrival of a packet
 * beyond a missing one (the loss is visible) to the in-order delivery of that missing one
 * (reordering shows as short gaps). Recorded on the endpoint's lcore: read it there, or once
 * the endpoint has stopped.
 */
const struct sl_hist *sl_xport_recovery_hist(const struct sl_xport *x);

/* The endpoint-congestion target's: 0, or -ENOENT without one (ec_drain_bps 0). */
int sl_xport_ec_stats_get(const struct sl_xport *x, struct sl_ec_stats *st);

/*
 * Where the receiver's feedback meets the wire: lib/recv decides what to
 * answer (struct sl_recv_action, struct sl_recv_fb) and lib/wire owns how it looks on the wire
 * (struct sl_xfb, sl_wire.h); neither includes the other, and the transport endpoint, which
 * uses both, converts between them here. Field for field; nothing is computed.
 */
/*
 * The wire form of a feedback action (type ACK, NACK, CNP or PULL; conn is the QPN).
 * 0, or -EINVAL for a data action.
 */
int sl_xport_fb_from_recv(const struct sl_recv_action *a, struct sl_xfb *fb);

/*
 * The wire form of an endpoint-congestion target's action (lib/ec), naming QP qpn: IACK and
 * DACK as ACKs, a NACK as a NACK naming the expected PSN, with its one hole when it is selective
 * (hole_len > 0). The endpoint then addresses it to the connection's peer (QPN and token).
 */
void sl_xport_fb_from_ec(const struct sl_ec_action *a, uint32_t qpn, struct sl_xfb *fb);

/* The receiver's form of a decoded feedback frame, as lib/recv's sender-side tracker takes it. */
void sl_xport_fb_to_recv(const struct sl_xfb *fb, struct sl_recv_fb *out);

/* How a sending flow reads its peer's feedback (sl_xport_fb_events). */
struct sl_xport_fb_flow {
	uint32_t seg_bytes; /**< a PULL grants one segment, bytes */
	bool sack;          /**< hand ACKs' SACK blocks to the program */
	bool ts;            /**< hand ACKs' echoed send times to the program */
	bool tracked;       /**< NACKs go through the MELO tracker (the flow is open in it) */
	uint64_t rto_seen;  /**< the engine's RTO count when the tracker last looked */
	uint32_t mark_psn;  /**< the engine's snd_max when a NACK last marked PSNs: a packet at or
			     *   beyond it was first sent after every retransmission marked then */
	uint64_t *relost;   /**< tracked: PSNs NACKed again because their retransmission was
			     *   lost are counted here (NULL: not counted) */
};

/*
 * The scheduler events of one decoded feedback frame for flow of engine e, at most max (>= 1):
 * an ACK is one event (cumulative ACK, the SACK, ECN count and echoed send time the flow
 * reads); a CNP or PULL maps to its event type. A NACK of a tracked flow goes through lib/recv's
 * sender-side tracker rtx (sl_recv.h): an RTO the engine fired since the last NACK clears the
 * tracker first, the holes mark only PSNs no earlier NACK marked, and each newly marked range
 * becomes one SL_EV_NACK event (at least one event, for the cumulative ACK); so does each hole an
 * earlier NACK marked when the receiver has since received a packet first sent after that
 * marking (fb.c, "Lost retransmissions"); an untracked NACK
 * names its newest hole, or the expected PSN for go-back-N. ACKs of a tracked flow shrink the
 * tracker. An untracked NACK that names a hole carries SL_EVF_HOLE. Returns the number of events
 * written.
 */
unsigned sl_xport_fb_events(struct sl_sched *e, struct sl_recv_rtx *rtx, uint32_t flow,
			    struct sl_xport_fb_flow *ff, const struct sl_xfb *x,
			    struct sl_event *ev, unsigned max);

/*
 * Where a transport program meets its peer's receiver: the feedback a
 * program reads is declared in its ops table (lib/sched), the receiver that sends it is
 * configured per connection (lib/recv); the transport endpoint, which uses both, joins them.
 */
/*
 * Feedback for the registered program proto (struct sl_proto_ops.feedback and
 * .ack_every_pkts): fills cc->fb and cc->ack_every_pkts, leaves isn and mode.
 * 0, -EINVAL (NULL argument) or -ENOENT (no such program).
 */
int sl_xport_recv_conf_for_proto(const char *proto, struct sl_recv_conn_conf *cc);

#endif /* SL_XPORT_H */
