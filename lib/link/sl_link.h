/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_link.h - RIFL-like reliable link, one instance per lane (a TX/RX queue pair to one peer).
 *
 * Pure C: no DPDK, no clock (time is the now_ns argument), no allocation after create. Frames
 * are described by opaque handles (the glue's mbufs) and byte pointers; the link never copies a
 * payload. docs/link.md explains the protocol and how the glue drives it; this header is the
 * contract.
 *
 * Contract for the glue (one lcore owns a link; calls are not thread-safe):
 *
 * TX  sl_link_tx_burst(l, now_ns, in, n_in, &taken, out, max)
 *     - in[0, n_in) are new payloads in order. The link takes in[0, taken) (taken <= n_in) and
 *       from then on holds one reference to each handle in its replay ring; the rest stay the
 *       glue's and must be offered again, first, on a later call (the link takes nothing while
 *       paused, replaying, initializing or when out[] is full).
 *     - out[0, ret) are frames to put on the wire, in this order. For out[i].handle != NULL the
 *       frame is: Ethernet header, out[i].hdr[0, hdr_len), then the payload body the handle was
 *       submitted with. The ring keeps its reference, so the glue must send with a reference of
 *       its own (rte_mbuf_refcnt_update(m, 1) or an indirect clone), never the ring's. For
 *       out[i].handle == NULL (control and filler frames) hdr[0, hdr_len) is the whole link
 *       frame; the glue adds the Ethernet header and pads to the 60-byte minimum.
 *     - The body bytes of a taken payload must stay unchanged while its handle is in the ring:
 *       replays re-send them and VCODE covers them.
 *     - Call it whenever the queue has room, with or without new payloads: control runs, replays,
 *       fillers and keepalives come out of it. sl_link_next_tx_ns() says when it next has
 *       something to send with no input.
 *
 * RX  sl_link_rx_burst(l, now_ns, in, n, out)
 *     - in[0, n) are received frames (bytes starting at the link header, i.e. after the 14-byte
 *       Ethernet header; length excluding the FCS; the glue's handle). out must have room for n.
 *     - Returns the number of frames delivered, exactly once and in order; each out[i] names
 *       the handle and where its body (transport header + payload) starts. Ownership of
 *       delivered handles passes back to the glue. Every other input handle (control, filler,
 *       duplicate, bad, malformed) is given to the release callback before the call returns.
 *     - Delivered frames sit in the consumer's queue until the glue reports them consumed with
 *       sl_link_rx_consumed(); that occupancy drives on/off flow control (S_FC = fc_frames).
 *
 * Leave (an orderly goodbye; sluice's, not RIFL's). An end about to close its port calls
 * sl_link_leave(): tx_burst then sends only runs of LEAVE, and the glue keeps polling until
 * sl_link_leave_acked() (the peer answered) or a timeout. The other end, on 8 consecutive
 * LEAVE, sends one run of LEAVE_ACK and re-initializes (the peer's ring and IDs are gone);
 * sl_link_peer_left() is true once, after the tx_burst that handed out the last LEAVE_ACK. From
 * then on the peer may close its port at any moment: a glue whose port shares memory with the
 * peer (memif) stops touching it until the port has gone down and up again.
 *
 * Release: conf.release(ctx, handles, n) is called from inside tx_burst (ring evictions),
 * rx_burst (frames not delivered) and free/reset (ring contents) with the link's reference;
 * the glue frees it (rte_pktmbuf_free_bulk). It must not call back into the link.
 */
#ifndef SL_LINK_H
#define SL_LINK_H

#include <stdbool.h>
#include <stdint.h>

#include "sl_common.h"
#include "sl_stats.h"
#include "sl_wire.h"

#define SL_LINK_ROLLBACK 16u      /**< frames: RX warm-up and rollback distance (RIFL Listing 1) */
#define SL_LINK_CTRL_ACCEPT 8u    /**< consecutive identical control frames to raise a flag */
#define SL_LINK_REGULAR_CLEAR 16u /**< consecutive regular frames that lower the flags (RTL) */
#define SL_LINK_CTRL_RUN 16u      /**< control frames sent back to back per run */
/** line time a burst may take ahead of the slot clock, ns: about one poll's worth of frames */
#define SL_LINK_SLOT_BURST_NS (20 * SL_NS_PER_US)
/*
 * The slot clock's rate with conf.adapt_rate (link_rate.c): it starts at the line /
 * SL_LINK_RATE_STEP_DIV, halves each time a replay repeats (not below the line /
 * SL_LINK_RATE_FLOOR_DIV), and rises by the line / SL_LINK_RATE_STEP_DIV every
 * SL_LINK_RATE_STEP_NS the link spends in NORMAL.
 */
#define SL_LINK_RATE_FLOOR_DIV 64u
#define SL_LINK_RATE_STEP_DIV 64u
#define SL_LINK_RATE_STEP_NS (1 * SL_NS_PER_MS)
#define SL_LINK_RING_MARGIN 32u /**< frames added to rate x RTT when sizing the ring (RIFL) */
#define SL_LINK_ORDER_MIN 5u    /**< smallest ring: 32 frames (> rollback + control run) */
#define SL_LINK_ORDER_MAX_FAITHFUL 11u /**< 12-bit IDs must not alias over ring + rollback */
#define SL_LINK_ORDER_MAX_EXTENDED 20u /**< 1 Mi frames */
#define SL_LINK_FC_RTTS 3 /**< S_FC in round trips of frames, by default (sl_link_fc_frames()) */
/** stuck_ns where a transport above recovers what the rings held (sluiced with [qp]) */
#define SL_LINK_STUCK_NS_TRANSPORT (250 * SL_NS_PER_MS)

/*
 * The TX state: what the link's next slot is sent from. It is read off the link's own machines
 * (its receive state, its session and goodbye, its answer to the peer's goodbye) and the peer's
 * flags, in RIFL's priority order, highest first below (link.c's essay has the transitions).
 */
enum sl_link_state {
	SL_LINK_INIT = 0,     /**< ring being (re)initialized */
	SL_LINK_SEND_PAUSE,   /**< local RX not up yet: runs of PAUSE_REQ */
	SL_LINK_PAUSE,        /**< peer sent PAUSE_REQ x 8: runs of IDLE, no data */
	SL_LINK_SEND_RETRANS, /**< local RX saw a bad frame: runs of RETRANS_REQ (the NACK) */
	SL_LINK_RETRANS,      /**< peer sent RETRANS_REQ x 8: replaying the ring */
	SL_LINK_NORMAL,       /**< data, FC frames, fillers, keepalives */
	SL_LINK_LEAVE,        /**< sl_link_leave() called: runs of LEAVE, nothing else */
	SL_LINK_ACK_LEAVE,    /**< peer sent LEAVE x 8: one run of LEAVE_ACK, then INIT */
	SL_LINK_STATE__MAX
};

enum sl_link_replay {
	SL_LINK_REPLAY_RING = 0,    /**< whole ring, oldest first (RIFL) */
	SL_LINK_REPLAY_MISSING = 1, /**< from the ID the NACK names (extended mode only) */
	/**
	 * End-to-end reliability (extended mode only): nothing is replayed and nothing NACKed. A
	 * data frame that verifies against its explicit ID is delivered wherever it falls; gaps
	 * are counted (rx_lost), and the transport above recovers them.
	 */
	SL_LINK_REPLAY_NONE = 2,
};

typedef void (*sl_link_release_t)(void *ctx, void *const *handles, unsigned n);

struct sl_link_conf {
	struct sl_wire_fmt fmt;     /**< mode and VCODE scope; both ends must agree */
	uint8_t ring_order;         /**< k: the ring holds 2^k frames (sl_link_ring_order()) */
	enum sl_link_replay replay; /**< replay start policy */
	uint64_t keepalive_ns;      /**< ns: IDLE after this long without sending (> 0) */
	uint64_t ctrl_interval_ns;  /**< ns: gap between control runs (> 0) */
	uint64_t stuck_ns;          /**< ns: an error episode in which nothing verifies for this
				     *   long is given up and the link re-initialized, losing what
				     *   the rings held; 0: never (RIFL), for a link with nothing
				     *   above it to recover (SL_LINK_STUCK_NS_TRANSPORT) */
	uint32_t silent_frames;     /**< frames: new data waits once this many new frames went out
				     *   with nothing from the peer meanwhile (its lcore or the
				     *   path stalled: more would outrun the ring before the peer
				     *   could NACK them); 0: never (RIFL). sluiced: 2^k / 2 */
	uint32_t fc_frames;         /**< frames: S_FC, consumer queue size (sl_link_fc_frames()) */
	uint32_t fc_on_frames;      /**< frames: send pause at this occupancy (0: 2/3 S_FC) */
	uint32_t fc_off_frames;     /**< frames: send resume at this occupancy (0: 1/3 S_FC) */
	uint64_t line_bps;          /**< bits/s: the wire's line, RIFL's slot clock: no frame
				     *   leaves before the ones before it have had their time on a
				     *   line this fast (or slower with adapt_rate), bursts of
				     *   SL_LINK_SLOT_BURST_NS aside; 0: as fast as the glue takes
				     *   them */
	uint32_t wire_overhead_bytes; /**< bytes a frame costs on the wire beyond its link header
				       *   and body (Ethernet header, FCS, preamble, gap) */
	bool adapt_rate;              /**< with line_bps: the slot clock starts low, halves its
				       *   rate when a replay repeats and climbs back in NORMAL
				       *   (link_rate.c), for a path whose receiver drops what it
				       *   cannot take (a NIC or kernel ring); false: the line
				       *   always (RIFL; a path that holds the sender back) */
	sl_link_release_t release;    /**< (required) gives handles back to the glue */
	void *release_ctx;
};

/* A new payload: body is the transport header + payload as it will appear on the wire. */
struct sl_link_tx_desc {
	void *handle;        /**< opaque; the glue's mbuf */
	const uint8_t *body; /**< first body byte (right after where the link header goes) */
	uint16_t body_len;   /**< bytes, including any padding the glue adds for the 60 B minimum */
	uint8_t meta;        /**< SL_WIRE_META_VALID, _EOM_PARTIAL or _EOM_FULL */
};

enum sl_link_frame_kind {
	SL_LINK_FRAME_DATA = 0, /**< payload frame: hdr + the handle's body */
	SL_LINK_FRAME_FILLER,   /**< filler / FC frame: hdr is the whole frame */
	SL_LINK_FRAME_CTRL,     /**< control frame: hdr is the whole frame */
};

/* A frame to transmit. */
struct sl_link_tx_frame {
	void *handle;                  /**< payload handle, NULL for filler and control */
	const uint8_t *body;           /**< payload body (data frames) */
	uint16_t body_len;             /**< bytes */
	uint8_t hdr_len;               /**< bytes of hdr[] to send */
	uint8_t kind;                  /**< enum sl_link_frame_kind */
	bool is_replay;                /**< a ring frame sent again */
	uint32_t id;                   /**< frame ID (data/filler) or current ID (control) */
	uint8_t hdr[SL_WIRE_CTRL_MAX]; /**< link header, or the whole frame when handle is NULL */
};

/* A received frame. */
struct sl_link_rx_frame {
	const uint8_t *buf; /**< first byte after the Ethernet header */
	uint16_t len;       /**< bytes from buf to the end of the frame, FCS excluded */
	void *handle;       /**< opaque */
};

/* A delivered frame. */
struct sl_link_delivery {
	void *handle;
	uint16_t body_off; /**< bytes from the link header to the body */
	uint16_t body_len; /**< bytes */
	uint8_t meta;      /**< SL_WIRE_META_* as sent */
};

/* Counters: every state entry, replay, rejection reason and flow-control event, each described
 * once in sl_link_stat_table (docs/counters.md). */
struct sl_link_stats {
	uint64_t enter_state[SL_LINK_STATE__MAX];
	uint64_t tx_data;
	uint64_t tx_filler;
	uint64_t tx_fc_pause;
	uint64_t tx_fc_resume;
	uint64_t tx_replayed;
	uint64_t tx_idle;
	uint64_t tx_keepalive;
	uint64_t tx_pause_req;
	uint64_t tx_retrans_req;
	uint64_t tx_leave;
	uint64_t tx_leave_ack;
	uint64_t replays;
	uint64_t replay_repeats;
	uint64_t rate_cuts;
	uint64_t silent_holds;
	uint64_t nack_outside_ring;
	uint64_t ring_evictions;
	uint64_t reinit_aborted;
	uint64_t peer_restarts;
	uint64_t stuck_reinits;
	uint64_t rx_frames;
	uint64_t rx_delivered;
	uint64_t rx_duplicates;
	uint64_t rx_not_up;
	uint64_t rx_stale;
	uint64_t rx_resyncs;
	uint64_t rx_malformed[SL_WIRE_ERR__MAX - 1]; /**< [r - 1]: rejections for reason r */
	uint64_t rx_bad_data;
	uint64_t rx_bad_ctrl;
	uint64_t rx_errors;
	uint64_t rx_rollbacks;
	uint64_t rx_recoveries;
	uint64_t rx_fc_overflow;
	uint64_t rx_lost;
	uint64_t rx_late;
	uint64_t rx_fc_pause;
	uint64_t rx_fc_resume;
	uint64_t rx_ctrl[5];
	uint64_t flag_pause;
	uint64_t flag_retrans;
	uint64_t peer_leaves;
	uint64_t leave_acks;
};

/* Every counter of struct sl_link_stats, described once (sl_stats.h). */
extern const struct sl_stat_table sl_link_stat_table;

const char *sl_link_state_name(enum sl_link_state s);

/*
 * Smallest k with 2^k >= rate x RTT / frame + SL_LINK_RING_MARGIN (RIFL sizing: the ring
 * outlives a round trip plus the rollback), at least SL_LINK_ORDER_MIN; -ERANGE when the
 * mode's maximum is exceeded. frame_bytes counts one data frame on the wire.
 */
int sl_link_ring_order(const struct sl_wire_fmt *fmt, uint64_t rate_bps, uint64_t rtt_ns,
		       uint32_t frame_bytes);

/*
 * S_FC in frames: 3 x ceil(rate x RTT / frame), at least 3. RIFL (sec. 3) requires at least
 * 1.5 x rate x RTT; the factor 3 leaves a full RTT of frames between Thr_ON = 2/3 S_FC and
 * S_FC, which is what arrives after a pause is sent (link.c).
 */
uint32_t sl_link_fc_frames(uint64_t rate_bps, uint64_t rtt_ns, uint32_t frame_bytes);

/* NULL + errno (EINVAL: bad conf, ENOMEM). */
struct sl_link *sl_link_create(const struct sl_link_conf *conf);

/* Releases every handle the link still holds. NULL is a no-op. */
void sl_link_free(struct sl_link *l);

unsigned sl_link_tx_burst(struct sl_link *l, uint64_t now_ns, const struct sl_link_tx_desc *in,
			  unsigned n_in, unsigned *taken, struct sl_link_tx_frame *out,
			  unsigned max);

unsigned sl_link_rx_burst(struct sl_link *l, uint64_t now_ns, const struct sl_link_rx_frame *in,
			  unsigned n, struct sl_link_delivery *out);

/* The consumer took n delivered frames (n <= occupancy). */
void sl_link_rx_consumed(struct sl_link *l, unsigned n);

/* Earliest time tx_burst has something to send with no new input (now or earlier: at once). */
uint64_t sl_link_next_tx_ns(const struct sl_link *l);

/*
 * Data frames the link's slot clock lets leave by now_ns (conf.line_bps at its current rate,
 * its burst credit included, frames of the last data frame's size): what a producer may hand
 * it in this poll and see go at once; UINT32_MAX with no clock (line_bps 0). A producer that
 * gives no more keeps nothing queued ahead of the line, so what it decides late (a window
 * closed by feedback) is not already committed to the wire.
 */
uint32_t sl_link_tx_budget(const struct sl_link *l, uint64_t now_ns);

enum sl_link_state sl_link_state(const struct sl_link *l);

/*
 * Sessions begun: the times the link entered INIT (at create, and at each re-initialization:
 * the peer restarted or left, or this end gave up a stuck episode). Each starts with an empty
 * ring and IDs from 0 on both ends, so what the previous session held is gone; a layer above
 * with state shared with the peer (queue pairs) starts afresh when this changes.
 */
uint64_t sl_link_sessions(const struct sl_link *l);
/* A snapshot of the counters. */
void sl_link_stats_get(const struct sl_link *l, struct sl_link_stats *out);

/* One counter, for tests and slow paths: sl_link_stat(l, replays). */
#define sl_link_stat(l, member) SL_STAT_READ(sl_link_stats_get, struct sl_link_stats, l, member)

/* Recovery time, ns: first bad frame of an episode to the next in-order frame. */
const struct sl_hist *sl_link_recovery_hist(const struct sl_link *l);

/*
 * Extended mode with a slot clock: how long a replay's tail waits for the peer's flag, measured
 * on earlier tails (their smoothed wait plus four deviations), ns, before tail_ns()'s floor of
 * 32 slots and cap of RIFL's 2^k / 2; 0 until a tail was measured, and always in faithful mode.
 * Safe to read from any thread.
 */
uint64_t sl_link_replay_tail_ns(const struct sl_link *l);

/*
 * How long a NACK run waits for its answer (the first replayed frame verifying) before it is
 * sent again, measured on earlier episodes (smoothed wait plus four deviations), ns; each
 * repeat in an episode doubles it, up to ctrl_interval_ns. 0 until measured (the runs repeat
 * every ctrl_interval_ns). Safe to read from any thread.
 */
uint64_t sl_link_nack_wait_ns(const struct sl_link *l);

/* bits/s: the slot clock's rate now (line_bps, or less after rate_cuts); 0 without a clock. */
uint64_t sl_link_send_bps(const struct sl_link *l);

/* Frames delivered and not yet consumed. */
uint32_t sl_link_rx_occupancy(const struct sl_link *l);

/* True while the peer's flow control forbids new data. */
bool sl_link_tx_fc_paused(const struct sl_link *l);

/* This end will close its port: send only LEAVE from now on, take no new payloads. */
void sl_link_leave(struct sl_link *l);

/* The peer answered this end's LEAVE: it no longer touches the port. */
bool sl_link_leave_acked(const struct sl_link *l);

/*
 * True once after the peer's LEAVE was answered (the last LEAVE_ACK went out of tx_burst); the
 * link has re-initialized. The caller clears it by asking.
 */
bool sl_link_peer_left(struct sl_link *l);

#endif /* SL_LINK_H */
