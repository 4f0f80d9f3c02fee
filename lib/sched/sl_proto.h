/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_proto.h - the transport-program ABI of the Tonic segment scheduler (lib/sched).
 *
 * Tonic (NSDI'20, section 3.5) splits a transport into a fixed engine and a small program. The
 * engine owns the window bitmaps, segment generation, credit and timers; a program only decides
 * loss recovery (which segments to mark for retransmission) and congestion control (window,
 * rate, RTO period), from three hooks, each optional (NULL: the engine's defaults alone):
 *
 *   incoming(f, priv, in, out)  after the engine's fixed stage has applied an ack/SACK/NACK/CNP/
 *                               PULL: `in` holds the event, old and new wnd_start and the count
 *                               of newly acked segments; `f` is the flow after the fixed stage.
 *   periodic(f, priv, p, out)   when the flow's RTO expired (the engine has disarmed it) or the
 *                               program's own timer fired.
 *   init(f, priv, fc, out)      once at sl_sched_flow_add(); priv is zeroed before.
 *
 * The engine owns RFC 6298's timer rules and pre-fills `out` with them before a hook runs, so a
 * program writes only where its transport differs (sl_proto_default_incoming/_periodic):
 *   - the RTO is armed when a segment is sent and none is running (5.1) and stopped when
 *     everything sent is acknowledged (5.2);
 *   - an ack that moves wnd_start with data still outstanding re-arms it (5.3): out->rto_rearm
 *     is true on entry to incoming(); a program that does not restart the timer on some acks
 *     (partial acks in recovery) clears it, one that restarts on more sets it;
 *   - on expiry with data outstanding, go-back-N: [wnd_start, snd_max) is marked and the RTO
 *     re-armed (5.4, 5.6, without 5.5's back-off, as in Tonic's code); a program that resends
 *     less (TCP: the head only) overwrites mark_from / mark_to.
 *
 * How a program is written (drivers/proto/<name>/<name>.c, < 200 lines, integer arithmetic):
 *   1. declare `struct <name>` for the per-flow variables and
 *      `static_assert(sizeof(struct <name>) <= SL_PROTO_PRIV_MAX, "...")`;
 *   2. write the hooks it needs; read state from `f` (read-only) and the event from `in`; write
 *      decisions into `out`, which the engine pre-fills with the current values (window, rate,
 *      RTO period) and its default actions, so a hook changes only what it decides;
 *   3. define `static const struct sl_proto_ops <name>_ops = {...}` with the credit scheme and
 *      `.priv_size = sizeof(struct <name>)`, the feedback it reads from the peer's receiver
 *      (`.feedback`, `.ack_every_pkts`), and register it: `SL_PROTO_REGISTER(<name>_ops);`;
 *   4. add its directory to drivers/proto/meson.build (test_registry checks each is registered).
 * Flows then select it by name in struct sl_flow_conf. docs/sched.md has a complete example.
 *
 * Sequence numbers are segment numbers (32-bit, wrapping: use sl_seq.h to compare). Windows are
 * in segments, rates in bits per second, credit and tokens in bytes, times in ns.
 */
#ifndef SL_PROTO_H
#define SL_PROTO_H

#include <stdbool.h>
#include <stdint.h>

#include "sl_bitmap.h"
#include "sl_common.h"
#include "sl_seq.h"

#define SL_PROTO_NAME_MAX 16 /**< bytes, including the NUL */
#define SL_PROTO_PRIV_MAX 64 /**< bytes of per-flow program state (Tonic's user context) */
#define SL_PROTO_MAX 32      /**< programs that can be registered */

struct sl_flow_conf; /* sl_sched.h */

/*
 * The feedback a program needs from its peer's receiver (lib/recv's SL_RECV_FB_* bits, which
 * lib/xport pins to these): the receiver of a connection is configured from the program that
 * sends on it, so the feedback is declared next to the logic that reads it.
 */
#define SL_PROTO_FB_SACK (1u << 0) /**< ACKs name the out-of-order PSN that caused them */
#define SL_PROTO_FB_ECHO (1u << 1) /**< ACKs echo the sender's tx_id and send timestamp */
#define SL_PROTO_FB_ECN (1u << 2)  /**< ACKs count the ECN-CE marked packets they cover */
#define SL_PROTO_FB_CNP (1u << 3)  /**< a CNP for ECN-CE data */
#define SL_PROTO_FB_PULL (1u << 4) /**< a PULL for every data arrival (NDP) */
#define SL_PROTO_FB_NACK (1u << 5) /**< a NACK for every new hole */

/* How a flow earns the right to send (Tonic section 3.3). */
enum sl_credit {
	SL_CREDIT_WINDOW = 0, /**< new segments only below wnd_start + wnd_segs */
	SL_CREDIT_RATE,       /**< the engine's pacer releases segments at R, to the ns */
	SL_CREDIT_GRANT,      /**< credit = tokens - bytes sent; PULLs and RTOs add tokens */
};

/* Incoming event types (the receiver's feedback). */
enum sl_event_type {
	SL_EV_ACK = 0, /**< cumulative ack and/or one SACKed segment */
	SL_EV_NACK,    /**< the receiver reports missing segments [nack_seq, nack_seq + nack_len) */
	SL_EV_CNP,     /**< congestion notification (DCQCN, ECN-marked data seen by the receiver) */
	SL_EV_PULL,    /**< grant: the receiver pulls grant_bytes more (NDP) */
	SL_EV_TYPES,
};

/* struct sl_event flags: which fields are valid. */
#define SL_EVF_CUMACK (1u << 0) /**< cumack valid: every segment before it was received */
#define SL_EVF_SACK (1u << 1)   /**< sack_seq and sack_tx_id valid */
#define SL_EVF_ECE (1u << 2)    /**< ECN echo: ce_segs of the acked segments carried CE */
#define SL_EVF_TS (1u << 3)     /**< echo_ts_ns valid (send time echoed by the receiver) */
/* SL_EV_NACK: [nack_seq, nack_seq + nack_len) is a hole the receiver holds packets past, to
 * resend alone; without it a NACK may name the receiver's expected segment (go back N). */
#define SL_EVF_HOLE (1u << 4)

/* One piece of receiver feedback for one flow, input of sl_sched_incoming(). */
struct sl_event {
	uint32_t flow;        /**< flow id */
	uint8_t type;         /**< enum sl_event_type */
	uint8_t flags;        /**< SL_EVF_* */
	uint8_t sack_tx_id;   /**< tx_id echoed with the SACKed segment (0..3) */
	uint8_t rsvd;         /**< zero */
	uint32_t cumack;      /**< segment number the receiver expects next (SL_EVF_CUMACK) */
	uint32_t sack_seq;    /**< one selectively acked segment (SL_EVF_SACK) */
	uint32_t nack_seq;    /**< first missing segment (SL_EV_NACK) */
	uint32_t nack_len;    /**< missing segments from nack_seq, >= 1 (SL_EV_NACK) */
	uint32_t grant_bytes; /**< bytes granted (SL_EV_PULL) */
	uint32_t ce_segs;     /**< segments covered by this ack that carried CE (SL_EVF_ECE) */
	uint64_t echo_ts_ns;  /**< send time of the acked segment, echoed (SL_EVF_TS) */
};

/*
 * The flow as a hook sees it (read-only; built by the engine for each call). Ring bitmaps are
 * indexed by seq & (max_wnd_segs - 1); use the helpers below rather than the raw words.
 */
struct sl_flow_view {
	uint32_t flow;               /**< flow id */
	uint32_t wnd_start;          /**< first unacked segment (after the fixed stage) */
	uint32_t snd_nxt;            /**< next new segment to generate (highest generated + 1) */
	uint32_t snd_max;            /**< highest transmitted segment + 1 */
	uint32_t tail;               /**< pushed tail: segments before it exist */
	uint32_t wnd_segs;           /**< enforced window, segments: new segments stay below
					  wnd_start + wnd_segs whatever the credit (IRN BDP-FC) */
	uint32_t max_wnd_segs;       /**< W, the ring size, segments */
	uint32_t queued;             /**< release slots the pacer owes a paced flow */
	uint32_t marked;             /**< segments currently marked for retransmission */
	uint32_t seg_bytes;          /**< segment size, bytes */
	uint64_t rate_bps;           /**< current rate (rate credit), bits/s */
	int64_t tokens_bytes;        /**< grant tokens left (grant credit), bytes */
	uint64_t rto_ns;             /**< current RTO period, ns */
	uint64_t rto_at_ns;          /**< RTO expiry, ns; 0 when disarmed */
	uint64_t total_sent;         /**< segments transmitted, new and retransmitted */
	uint64_t now_ns;             /**< time of the event, ns */
	const uint64_t *param;       /**< the 4 program parameters of struct sl_flow_conf */
	const uint64_t *acked_bits;  /**< SACKed segments in [wnd_start, wnd_start + W) */
	const uint64_t *marked_bits; /**< segments marked for retransmission */
};

/* Segments in flight as the paper's NewReno counts them: transmitted and not cumacked. */
static inline uint32_t
sl_flow_sent(const struct sl_flow_view *f)
{
	return f->snd_max - f->wnd_start;
}

/* Was seq SACKed? (false outside the window; below wnd_start everything is acked). */
static inline bool
sl_flow_is_acked(const struct sl_flow_view *f, uint32_t seq)
{
	if (sl_seq_lt(seq, f->wnd_start))
		return true;
	if (!sl_seq_in_window(seq, f->wnd_start, f->max_wnd_segs))
		return false;
	return sl_bitmap_test(f->acked_bits, seq & (f->max_wnd_segs - 1));
}

/* Is seq marked for retransmission and not yet regenerated? */
static inline bool
sl_flow_is_marked(const struct sl_flow_view *f, uint32_t seq)
{
	if (!sl_seq_in_window(seq, f->wnd_start, f->max_wnd_segs))
		return false;
	return sl_bitmap_test(f->marked_bits, seq & (f->max_wnd_segs - 1));
}

/* SACKed segments in [from, from + count), clipped to the window (RFC 6675 IsLost, DupThresh). */
static inline uint32_t
sl_flow_acked_count(const struct sl_flow_view *f, uint32_t from, uint32_t count)
{
	uint32_t W = f->max_wnd_segs;

	if (sl_seq_lt(from, f->wnd_start)) {
		uint32_t skip = f->wnd_start - from;

		if (skip >= count)
			return 0;
		from = f->wnd_start;
		count -= skip;
	}
	if (!sl_seq_in_window(from, f->wnd_start, W))
		return 0;
	count = SL_MIN(count, W - (from - f->wnd_start));
	return count ? sl_bitmap_count_range(f->acked_bits, W, from & (W - 1), count) : 0;
}

/* What the fixed incoming stage did, handed to the incoming hook. */
struct sl_incoming {
	const struct sl_event
		*ev;            /**< the raw event (type, flags, cumack, sack, nack, grant, ce) */
	uint32_t old_wnd_start; /**< wnd_start before the event */
	uint32_t new_wnd_start; /**< wnd_start after the event (== f->wnd_start) */
	uint32_t newly_acked;   /**< segments that became acked: cumack advance not already
				 *   SACKed, plus 1 for an accepted SACK */
	bool sack_accepted;     /**< the SACK was in the window and new; its bit is set */
	uint64_t rtt_ns;        /**< RTT sample from the echoed or stored send time; 0 none */
	uint64_t now_ns;        /**< time of the event, ns */
};

/* Why periodic() runs. */
struct sl_periodic {
	uint64_t now_ns;    /**< time of the sweep, ns */
	bool rto_expired;   /**< the RTO fired; the engine has disarmed it */
	bool timer_expired; /**< the program's timer (out->timer_ns) fired */
};

/*
 * A hook's decisions. The engine pre-fills wnd_segs, rate_bps and rto_ns with the current values,
 * mark_from / mark_to and rto_rearm with its defaults (the header comment) and everything else
 * with "no action"; the hook writes only what it changes.
 */
struct sl_proto_out {
	uint32_t wnd_segs;         /**< new window, segments; clamped to [1, W] (window credit) */
	uint32_t mark_from;        /**< mark [mark_from, mark_to) for retransmission: only */
	uint32_t mark_to;          /**< transmitted, unacked segments are marked; empty if equal */
	uint32_t add_tokens_bytes; /**< grant tokens to add, bytes (grant credit) */
	uint64_t rate_bps;         /**< new rate, bits/s, >= 1 (rate credit); the pacer applies
				    *   it capped and clamped to [100 Kbps, link_bps] */
	uint64_t rto_ns;           /**< RTO period, ns; used by rto_rearm and by later arming */
	uint64_t timer_ns;         /**< > 0: call periodic() with timer_expired at now + timer_ns */
	bool rto_rearm; /**< re-arm the RTO at now + rto_ns (default: RFC 6298 5.3/5.6) */
};

/* The engine's default decisions for an event, on top of out's current values (RFC 6298 5.3). */
void sl_proto_default_incoming(const struct sl_flow_view *f, const struct sl_incoming *in,
			       struct sl_proto_out *out);

/* The engine's default decisions for an expiry: go-back-N on an RTO with data outstanding. */
void sl_proto_default_periodic(const struct sl_flow_view *f, const struct sl_periodic *p,
			       struct sl_proto_out *out);

/*
 * A transport program. Fast-path hooks first. Registered by name; a const table lives for the
 * life of the process.
 */
struct sl_proto_ops {
	/** (optional) After the fixed incoming stage of each event for the flow. */
	void (*incoming)(const struct sl_flow_view *f, void *priv, const struct sl_incoming *in,
			 struct sl_proto_out *out);
	/** (optional) RTO expiry or the program's timer; see struct sl_periodic. */
	void (*periodic)(const struct sl_flow_view *f, void *priv, const struct sl_periodic *p,
			 struct sl_proto_out *out);
	/** (optional) Flow setup: priv is zeroed; set the initial state and out (window, rate,
	 *  RTO period, timer). Return 0 or -errno to refuse the flow. */
	int (*init)(const struct sl_flow_view *f, void *priv, const struct sl_flow_conf *fc,
		    struct sl_proto_out *out);
	enum sl_credit credit;        /**< the credit scheme of every flow of this program */
	uint16_t priv_size;           /**< bytes of per-flow state, <= SL_PROTO_PRIV_MAX */
	uint8_t feedback;             /**< SL_PROTO_FB_* the peer's receiver must send */
	uint8_t ack_every_pkts;       /**< one ACK per this many in-order packets; 0 means 1 */
	char name[SL_PROTO_NAME_MAX]; /**< unique, NUL-terminated, non-empty */
};

/*
 * Register a program. 0, -EINVAL (bad credit, priv_size too large, empty or
 * unterminated name), -EEXIST (name taken), -ENOSPC (SL_PROTO_MAX reached).
 */
int sl_proto_register(const struct sl_proto_ops *ops);

/* The program registered under name, or NULL. */
const struct sl_proto_ops *sl_proto_find(const char *name);

/* Registered programs, and the i-th of them in registration order (NULL past the end):
 * the one list of program names, which tools and tests iterate. */
unsigned sl_proto_count(void);
const struct sl_proto_ops *sl_proto_at(unsigned i);

/* Registrations that failed in SL_PROTO_REGISTER constructors (tests check it is 0). */
unsigned sl_proto_register_failures(void);

/* Register ops at program start (a constructor); failures are counted, see above. */
#define SL_PROTO_REGISTER(ops)                                                                     \
	__attribute__((constructor)) static void sl_proto_register_##ops(void)                     \
	{                                                                                          \
		sl_proto_register_ctor(&(ops));                                                    \
	}

/* Constructor helper behind SL_PROTO_REGISTER: registers and counts failures. */
void sl_proto_register_ctor(const struct sl_proto_ops *ops);

#endif /* SL_PROTO_H */
