/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_sched.h - the Tonic segment scheduler engine (NSDI'20, sections 3 and 4), one instance per
 * lcore, owning flows [0, max_flows).
 *
 * A flow is a stream of fixed-size segments numbered by 32-bit wrapping sequence numbers; only
 * the last segment of a push may be shorter (the "tonic tail"). The caller pushes data
 * (sl_sched_flow_push), feeds receiver feedback (sl_sched_incoming) and asks which segments to
 * send now (sl_sched_next_burst): each decision is (flow, seq, tx_id, len, flags). The engine
 * never reads a clock (time is now_ns) and never allocates after create.
 *
 * Run loop:
 *     sl_sched_incoming(s, events, n, now);
 *     n = sl_sched_next_burst(s, now, segs, max);   // build and send the n segments
 *     sleep/poll until sl_sched_next_deadline(s) or new input.
 * Incoming events and the following next_burst form one step: an RTO that expires in the step
 * in which an ack for the same flow arrived is dropped (Tonic section 3.4) and retried later.
 *
 * Programs (window/rate/grant credit, loss recovery) are described in sl_proto.h.
 *
 * Time-based release has one owner, the pacer (sl_pacer.h, Tassel by default), which the engine
 * creates and drives: a rate flow's segments, and a window flow's when it has a rate cap, are
 * generated ahead into the flow's queue, announced to the pacer and sent when it releases them.
 * The engine decides which segment goes (lost before new, window, grant tokens); the pacer
 * decides when.
 */
#ifndef SL_SCHED_H
#define SL_SCHED_H

#include <stdint.h>

#include "sl_common.h"
#include "sl_pacer.h"
#include "sl_proto.h"
#include "sl_stats.h"

#define SL_SCHED_WND_MIN 64u      /**< W lower bound, segments */
#define SL_SCHED_WND_MAX 4096u    /**< W upper bound, segments */
#define SL_SCHED_WND_DEFAULT 128u /**< W default (Tonic section 3.2.2) */
#define SL_SCHED_QUEUE_MAX 64u    /**< per-flow queue bound, segments */

/* struct sl_sched_conf flags */
/** Keep each segment's send time, so that acks without an echoed timestamp still give RTT
 *  samples (Karn's rule: only for segments sent once); costs 8 B x W per flow. */
#define SL_SCHED_F_TX_TS (1u << 0)
/* Flows whose pacing rate is link_bps skip the pacer (sched.c, "The line bypass"). */
#define SL_SCHED_F_LINE_BYPASS (1u << 1)

/* Engine configuration; zero fields take the default in brackets. */
struct sl_sched_conf {
	uint32_t max_flows;     /**< flows [0, max_flows), >= 1 */
	uint32_t wnd_segs;      /**< W: ring window, segments, power of two in [64, 4096] [128] */
	uint32_t queue_segs;    /**< N: bound on queue_stop, a power of two in [2, 64] [16] */
	uint32_t queue_stop;    /**< release slots a paced flow announces to the pacer ahead,
				 *   at most (Tonic's outstanding-cnt), <= N
				 *   [N - N/4 - 1 (+1 below N = 8): 11 for N = 16] */
	uint32_t queue_resume;  /**< and announces again below this many, <= queue_stop
				 *   [queue_stop - 1] */
	uint32_t visit_segs;    /**< segments emitted per flow visit at most, >= 1 [8] */
	uint32_t timer_tick_ns; /**< RTO / program-timer wheel slot, rounded down to a power of
				 *   two: the sweep delay bound [1000, i.e. 512 ns] */
	uint32_t timer_slots;   /**< timer wheel slots per level (2 levels), power of two, >= 64
				 *   [4096] */
	const char *pacer;      /**< pacer implementation, by name (sl_pacer.h) ["tassel"] */
	uint64_t link_bps;      /**< the pacer's link, bps of wire bits: paced flows share it,
				 *   each slowed alike when their rates sum above it [100 Gbps] */
	uint32_t wire_overhead_bytes; /**< bytes a segment costs on the wire beyond its payload
				       *   (headers, FCS, preamble and gap), charged against
				       *   rates [0] */
	uint64_t pace_catchup_ns;     /**< the pacer's catchup_ns (sl_pacer_conf): how far behind
				       *   its schedule a paced flow may catch up after its lcore
				       *   stalled [0: none] */
	uint32_t timer_budget; /**< timer expiries handled per next_burst call at most [1024] */
	uint32_t flags;        /**< SL_SCHED_F_* */
};

/* Per-flow configuration for sl_sched_flow_add(); zero fields take the default in brackets. */
struct sl_flow_conf {
	const char *proto;          /**< registered program name (required) */
	uint32_t seg_bytes;         /**< segment size, bytes, 1..65535 (required) */
	uint32_t init_wnd_segs;     /**< initial window, segments [W]; the program's init may
				     *   change it */
	uint64_t init_rate_bps;     /**< initial rate, bits/s (rate credit) [10 Gbps] */
	uint64_t max_rate_bps;      /**< rate cap, bits/s of wire bits: a rate flow is paced at
				     *   min(program rate, cap), a window flow with a cap is paced
				     *   at it; grant flows take none [0: no cap] */
	uint32_t init_credit_bytes; /**< initial tokens (grant credit), bytes [0] */
	uint32_t hdr_bytes;         /**< bytes each segment carries beyond its payload (its
				     *   headers), charged with it by the pacer on top of the
				     *   engine's wire_overhead_bytes [0] */
	uint32_t rto_credit_bytes;  /**< grant credit added when the RTO fires, bytes [16000] */
	uint32_t first_seq;         /**< first segment number (any 32-bit value) [0] */
	uint64_t rto_ns;            /**< initial RTO period, ns [1 ms] */
	uint64_t start_ns;          /**< time the flow starts: rate credit and the timers the
				     *   program's init sets count from it, ns [0] */
	uint64_t param[4];          /**< program parameters (see the program's header comment) */
};

/* sl_seg flags */
#define SL_SEG_F_RTX (1u << 0)  /**< a retransmission (tx_id > 0) */
#define SL_SEG_F_TAIL (1u << 1) /**< a short segment, or the last one pushed so far */

/* One decision: send segment seq of flow now. */
struct sl_seg {
	uint32_t flow; /**< flow id */
	uint32_t seq;  /**< segment number */
	uint16_t len;  /**< bytes */
	uint8_t tx_id; /**< transmission count of this segment - 1, saturating at 3; echo it */
	uint8_t flags; /**< SL_SEG_F_* */
};
static_assert(sizeof(struct sl_seg) == 12, "sl_seg is a 12-byte descriptor");

/* Engine counters (sl_sched_stats_get), described once in sl_sched_stat_table
 * (docs/counters.md). */
struct sl_sched_stats {
	uint64_t decisions;
	uint64_t visits;
	uint64_t generated;
	uint64_t generated_rtx;
	uint64_t events;
	uint64_t bad_events;
	uint64_t sacks_accepted;
	uint64_t sacks_ignored;
	uint64_t stale_acks;
	uint64_t rto_fired;
	uint64_t rto_dropped_by_ack;
	uint64_t sacks_forgotten;
	uint64_t timers_fired;
	uint64_t pace_released;
	uint64_t pace_unused;
	uint64_t pace_refused;
	uint64_t bypass_enters; /**< flows that reached the link's rate and left the pacer */
	uint64_t bypass_leaves; /**< flows that fell below it and went back to the pacer */
	uint64_t credit_waits;
	uint64_t push_refused;
};

/* Per-flow counters (sl_sched_flow_stats_get), described once in
 * sl_sched_flow_stat_table (docs/counters.md). */
struct sl_flow_stats {
	uint64_t segs_sent;
	uint64_t segs_rtx;
	uint64_t bytes_sent;
	uint64_t acks;
	uint64_t sacks;
	uint64_t nacks;
	uint64_t cnps;
	uint64_t pulls;
	uint64_t rto_fired;
	uint64_t credit_waits;
};

extern const struct sl_stat_table sl_sched_stat_table;
extern const struct sl_stat_table sl_sched_flow_stat_table;

struct sl_sched;

/* Create an engine. NULL + errno (EINVAL bad conf, ENOMEM). */
struct sl_sched *sl_sched_create(const struct sl_sched_conf *conf);
void sl_sched_free(struct sl_sched *s);

/* Bytes of engine memory per flow for this configuration, the pacer's share included. */
size_t sl_sched_bytes_per_flow(const struct sl_sched *s);

/*
 * Start flow `flow` with program fc->proto. 0, -EINVAL (bad id or conf, a cap on a grant flow),
 * -ENOENT (unknown program), -EEXIST (flow in use), or the program init's error.
 */
int sl_sched_flow_add(struct sl_sched *s, uint32_t flow, const struct sl_flow_conf *fc);

/* Stop a flow and forget its state. 0 or -ENOENT. */
int sl_sched_flow_del(struct sl_sched *s, uint32_t flow);

/*
 * Append nsegs segments; the last is last_len bytes (1..seg_bytes), the others seg_bytes.
 * 0, -ENOENT (no such flow), -EINVAL (nsegs 0, bad last_len), -EBUSY (a short tail would be
 * in flight twice: wait until the previous short segment is acked), -EOVERFLOW (more than 2^30
 * unacked segments).
 */
int sl_sched_flow_push(struct sl_sched *s, uint32_t flow, uint32_t nsegs, uint16_t last_len);

/*
 * Apply n events at now_ns: the fixed stage (cumack, SACK, bitmaps, newly acked, PULL tokens)
 * then the program's incoming hook. Returns the number accepted; refused ones are counted in
 * bad_events.
 */
unsigned sl_sched_incoming(struct sl_sched *s, const struct sl_event *ev, unsigned n,
			   uint64_t now_ns);

/*
 * Fire due timers (bounded by timer_budget), send what the pacer releases, then emit up to max
 * decisions in all, round-robin over ready flows, several per flow visit when credit allows.
 * Returns the count written to out. Ends the step (see above).
 */
unsigned sl_sched_next_burst(struct sl_sched *s, uint64_t now_ns, struct sl_seg *out, unsigned max);

/*
 * Earliest time next_burst can have work without new input: 0 when flows are ready now,
 * else the earliest timer or pacing release, UINT64_MAX when nothing is pending.
 */
uint64_t sl_sched_next_deadline(const struct sl_sched *s);

/* The flow as its program sees it (for traces: window, rate, sequence numbers). 0/-ENOENT. */
int sl_sched_flow_view(const struct sl_sched *s, uint32_t flow, struct sl_flow_view *v);

/*
 * Send flow's segments from seq on again, as if every one sent were lost: [seq, snd_max) is
 * marked for retransmission, selective acks inside it forgotten, and an armed RTO restarts
 * from now_ns. For a receiver that dropped what it had past seq (lib/xport's receiver not
 * ready); the program is not told (it is not a congestion signal). 0, -ENOENT, -ERANGE (seq
 * outside [wnd_start, snd_max]).
 */
int sl_sched_flow_rewind(struct sl_sched *s, uint32_t flow, uint32_t seq, uint64_t now_ns);

/*
 * The receiver answered and asked the flow to wait until t_ns (lib/xport's RNR backoff): an
 * armed RTO fires no sooner than one RTO period after t_ns. 0 or -ENOENT.
 */
int sl_sched_flow_rto_after(struct sl_sched *s, uint32_t flow, uint64_t t_ns);

/*
 * The two sequence numbers a caller checks feedback against, without building a whole view
 * (the fast path of every feedback frame): the first unacked segment and the highest sent + 1.
 * 0 or -ENOENT.
 */
int sl_sched_flow_seqs(const struct sl_sched *s, uint32_t flow, uint32_t *wnd_start,
		       uint32_t *snd_max);

/* The program state of a flow (read-only, priv_size bytes), or NULL. */
const void *sl_sched_flow_priv(const struct sl_sched *s, uint32_t flow);

/* The engine's pacer (read-only: its counters and per-flow view). */
const struct sl_pacer *sl_sched_pacer(const struct sl_sched *s);

/* Copy counters. Flow: 0 or -ENOENT. */
void sl_sched_stats_get(const struct sl_sched *s, struct sl_sched_stats *st);
int sl_sched_flow_stats_get(const struct sl_sched *s, uint32_t flow, struct sl_flow_stats *st);

#endif /* SL_SCHED_H */
