/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sched.c - the Tonic segment scheduler engine in software (NSDI'20 sections 3 and 4).
 *
 * Model. Each flow is a stream of fixed-size segments [first_seq, tail) (32-bit wrapping
 * numbers; only the last segment of a push may be short). Per flow the engine keeps Table 2's
 * state: a ring window of W segments starting at wnd_start with two ring bitmaps, `acked`
 * (SACKed) and `marked` (lost, to resend), a 2-bit transmission count per segment (tx_id, kept
 * as two bit planes), snd_nxt (next new segment to generate), snd_max (highest sent + 1), the
 * enforced window, the RTO, and the program's private scratch area. Bit i of every plane is
 * segment seq with (seq & (W - 1)) == i, so the ring head is wnd_start & (W - 1).
 *
 * Two engines, as in Figure 2:
 *   data delivery: generation takes the first marked bit after the head (sl_bitmap_ffs_from,
 *     the appendix C find-first-set with wrap; its tx count is bumped), else snd_nxt if it is
 *     below the pushed tail, below wnd_start + wnd (window credit) or wnd_start + W (other
 *     credit), and not past an unacked short tail (appendix D: later data waits).
 *   credit: window (the generation check is the credit check), rate (time-based release,
 *     owned by the engine's pacer, below), grant (tokens - bytes sent; PULLs and RTO expiries
 *     add tokens, and a flow whose every segment is acked has at least an RTO's worth: with
 *     nothing in flight no PULL comes, and a PULL lost, or a packet its receiver discarded,
 *     would otherwise leave the flow waiting for tokens for ever). A segment is chosen when it
 *     goes, never generated ahead, so lost segments always go before new ones, even new ones
 *     whose release was arranged before the loss was known.
 *
 * Sets. Two FIFOs of flow ids, round-robin, each flow at most once in each (membership flags):
 *   active: paced flows with fewer than queue_resume release slots outstanding and more to
 *     send. Its stage announces slots to the pacer, up to queue_stop (11/10 for N = 16 in
 *     Tonic's public code, github.com/minmit/tonic): Tonic's outstanding count, with the
 *     pacer's FIFO in the place of the credit engine's queue of generated segments.
 *   ready: unpaced flows (window without a cap, grant) with something to send and the credit
 *     for it. A visit pops the head and emits up to visit_segs segments while credit lasts,
 *     lost ones first, then new ones (generation +1 and transmission -1 net out, section 3.4);
 *     the flow goes back to the tail if it still has something to send and credit for it. The
 *     common case - nothing marked - emits the whole run of new segments in one tight loop
 *     (serve_run).
 *
 * Pacing. A paced flow - rate credit, or window credit with a cap (max_rate_bps) - never enters
 * the ready FIFO: it announces one slot per segment generation could give (sl_pacer_backlog,
 * charged that segment's length plus wire_overhead_bytes), and each slot the pacer releases
 * sends what generation gives at that moment. The pacer owns the flow's rate (min(program
 * rate, cap) for rate credit, the cap for window credit), its exact departure times and the
 * sharing of link_bps; the engine owns which segment goes. A release with nothing left to send
 * (acked meanwhile) is counted (pace_unused).
 *
 * The line bypass (SL_SCHED_F_LINE_BYPASS). A paced flow whose rate is the link's - an
 * uncongested rate program, a window program capped at the line - gains nothing from the pacer
 * that whoever drains the engine does not already do (the link below keeps the line rate, and
 * the lane asks the engine for no more than the link sends at once, so nothing is generated
 * ahead of the line that feedback could still have held back): it is served from the ready
 * FIFO like an unpaced flow instead, runs of segments at a time, and costs no pacer departure a
 * segment (the rate limiter bypass of uncongested sessions in eRPC, "Datacenter RPCs can be
 * General and Fast", NSDI 2019). The first rate below the link puts it back under the pacer,
 * which starts it afresh (sl_pacer_flow_reset: it earned no catch-up while it was away); slots
 * it had announced are released unused. A flow's pacing is one state (enum pacing).
 *
 * Timers. One entry per flow for min(RTO, program timer) in a two-level timing wheel (slots of
 * timer_tick_ns, then of timer_slots ticks), swept at the start of next_burst: an expiry is
 * handled within one tick (the bounded sweep delay), at most timer_budget per call. Re-arming
 * later is a field write (the entry is re-filed when its old slot comes up); earlier moves the
 * entry. The RTO is armed at the first transmission while disarmed, disarmed when everything
 * sent is cumacked (RFC 6298 5.2) and on expiry, and re-armed by the program. An expiry also
 * forgets the flow's selective acks (RFC 2018 section 8: the receiver may have discarded what
 * it SACKed, as lib/xport's receiver does when it is not ready), so go-back-N resends them too.
 *
 * Steps. sl_sched_incoming() calls followed by one sl_sched_next_burst() form a step; an RTO
 * that expires in a step in which an ack (cumack or SACK) for the flow arrived is dropped and
 * retried in the next step (section 3.4: the ack wins; the window and RTO are written by one
 * event only). Per-flow events are applied one at a time in arrival order (single writer).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sl_bitmap.h"
#include "sl_sched.h"
#include "sl_seq.h"
#include "wheel.h"

#define UNACKED_MAX (UINT32_C(1) << 30)
#define DEFAULT_RATE_BPS (10 * SL_BPS_PER_GBPS)
#define DEFAULT_LINK_BPS (100 * SL_BPS_PER_GBPS)
#define RELEASE_CHUNK 32u /* pacer releases fetched per dequeue call */
#define DEFAULT_RTO_NS SL_NS_PER_MS
#define DEFAULT_RTO_CREDIT_BYTES 16000u /* timeout-retransmit credit, Tonic's public code */
#define PREFETCH_AHEAD 6 /* flows (ready FIFO) or events ahead: ~100 ns of work at 1M flows */

/* How a flow's segments are released (struct flow.pacing; the essay's Pacing). */
enum pacing {
	PACING_NONE,   /**< window without a cap, grant: the ready FIFO */
	PACING_PACER,  /**< rate credit or a cap below the link: the pacer's releases */
	PACING_BYPASS, /**< rate credit or a cap at the link's rate: the ready FIFO */
};

/* fifo membership and wait flags (struct flow.sets), kept across flow_del/flow_add */
#define IN_ACTIVE (1u << 0)
#define IN_READY (1u << 1)

/* ---- per-flow state ---- */

struct flow {
	/* hot: generation and transmission */
	uint32_t wnd_start; /**< first unacked segment */
	uint32_t snd_nxt;   /**< next new segment to generate */
	uint32_t snd_max;   /**< highest transmitted + 1 */
	uint32_t tail;      /**< pushed tail */
	uint32_t wnd_segs;  /**< enforced window, segments */
	uint32_t short_seq; /**< the short tail segment, valid while short_len != 0 */
	uint16_t short_len; /**< its length, bytes; 0: none pending */
	uint16_t seg_bytes; /**< segment size, bytes */
	uint16_t marked;    /**< set bits in the marked plane (<= W) */
	uint16_t sacked;    /**< set bits in the acked plane (<= W) */
	uint16_t hdr_bytes; /**< headers charged with each segment, bytes */
	uint8_t sets;       /**< IN_ACTIVE | IN_READY */
	uint8_t in_use;     /**< flow added */
	uint8_t credit;     /**< enum sl_credit */
	uint8_t txd;        /**< some tx count in the window may be non-zero */
	uint8_t pacing;     /**< enum pacing */
	uint8_t announced;  /**< release slots the pacer owes the flow, Tonic's
			     *   outstanding-cnt (kept across del / add: the pacer's FIFO
			     *   outlives the flow) */
	uint64_t rate_bps;  /**< rate credit: the program's R, bits/s */
	uint64_t cap_bps;   /**< rate cap, bits/s; 0: none */
	uint64_t pace_bps;  /**< the rate the pacer applies, bits/s (PACER and BYPASS flows) */
	/* second line: credit, timers, program */
	int64_t tokens_bytes;           /**< grant credit: tokens - bytes sent, bytes */
	uint64_t rto_ns;                /**< RTO period, ns */
	uint64_t rto_at_ns;             /**< RTO expiry, ns; 0 disarmed */
	uint64_t timer_at_ns;           /**< program timer expiry, ns; 0 none */
	uint64_t total_sent;            /**< segments transmitted (segs_sent) */
	const struct sl_proto_ops *ops; /**< program */
	uint32_t ack_step;              /**< step of the last ack (cumack or SACK), modulo 2^32 */
	uint32_t acks_lo; /**< events with a cumack, low 32 bits (carry into st.acks) */
	/* cold: a visit or an ack of a loss-free flow touches only the two lines above */
	uint32_t rto_credit_bytes; /**< grant credit added on RTO expiry, bytes */
	uint64_t short_bytes;      /**< bytes short segments left out: bytes_sent = total_sent x
				    *   seg_bytes - short_bytes */
	uint64_t param[4];         /**< program parameters */
	struct sl_flow_stats st;   /**< the other counters (segs_sent, bytes_sent unused) */
} sl_cache_aligned;
static_assert(offsetof(struct flow, rto_credit_bytes) <= 2 * SL_CACHE_LINE,
	      "the fast-path state of a flow is two cache lines");

struct sl_sched {
	struct flow *flows;
	uint64_t *planes;   /**< per flow: acked, marked, tx count low, high; wW words each */
	uint8_t *priv;      /**< per flow: SL_PROTO_PRIV_MAX bytes */
	uint64_t *tx_ts_ns; /**< per flow: W send times (SL_SCHED_F_TX_TS), else NULL */
	uint32_t *active;   /**< FIFO of flow ids */
	uint32_t *ready;    /**< FIFO of flow ids */
	uint32_t fifo_mask; /**< FIFO capacity - 1 (>= max_flows - 1) */
	uint32_t act_head, act_count;
	uint32_t rdy_head, rdy_count;
	uint32_t resume_flow;   /**< flow pushed back to the ready head mid-visit, or NOWHERE */
	uint32_t resume_left;   /**< segments left in its visit */
	struct wheel timers;    /**< RTO and program timers */
	struct sl_pacer *pacer; /**< time-based release of paced flows */
	uint64_t link_bps;      /**< the pacer's link, bps */
	uint32_t overhead;      /**< wire bytes per segment beyond its payload */
	uint64_t step;          /**< current step number, from 1 */
	uint32_t max_flows;     /**< flows [0, max_flows) */
	uint32_t W;             /**< window ring, segments */
	uint32_t wW;            /**< words per plane */
	uint32_t q_stop;        /**< release slots announced ahead per paced flow, at most */
	uint32_t q_resume;      /**< and announced again below this many */
	uint32_t visit_segs;    /**< segments per visit at most */
	uint32_t timer_budget;  /**< timer expiries per sweep at most */
	uint32_t flags;         /**< SL_SCHED_F_* */
	struct sl_sched_stats st;
};

#define STAT(m, h) SL_STAT(struct sl_sched_stats, m, h)
static const struct sl_stat_desc sched_stat_desc[] = {
	STAT(decisions, "segments emitted"),
	STAT(visits, "ready-set pops"),
	STAT(generated, "segments generated (queued ahead of credit or sent in place)"),
	STAT(generated_rtx, "retransmissions generated"),
	STAT(events, "events processed"),
	STAT(bad_events, "events refused: bad flow, type or fields"),
	STAT(sacks_accepted, "SACKs in window and new"),
	STAT(sacks_ignored, "SACKs outside the window or already known"),
	STAT(stale_acks, "cumacks below wnd_start"),
	STAT(rto_fired, "RTO expiries handed to periodic()"),
	STAT(rto_dropped_by_ack, "RTO expiries dropped for a same-step ack"),
	STAT(sacks_forgotten, "SACKed segments forgotten (an RTO, a receiver's rewind): acked "
			      "again, and counted newly acked again, when the receiver has them"),
	STAT(timers_fired, "program timers handed to periodic()"),
	STAT(pace_released, "releases the pacer handed back (one segment each)"),
	STAT(pace_unused, "releases that found nothing to send (acked while queued)"),
	STAT(pace_refused, "announcements the pacer refused (its counters say why); retried"),
	STAT(bypass_enters, "paced flows that reached the link's rate and left the pacer for the "
			    "ready FIFO (SL_SCHED_F_LINE_BYPASS)"),
	STAT(bypass_leaves, "flows back under the pacer: their rate fell below the link's"),
	STAT(credit_waits, "visits ended for lack of grant credit"),
	STAT(push_refused, "pushes refused"),
};
#undef STAT
SL_STAT_TABLE_DEFINE(sl_sched_stat_table, struct sl_sched_stats, sched_stat_desc);

#define STAT(m, h) SL_STAT(struct sl_flow_stats, m, h)
static const struct sl_stat_desc flow_stat_desc[] = {
	STAT(segs_sent, "segments transmitted"),
	STAT(segs_rtx, "retransmissions transmitted"),
	STAT(bytes_sent, "bytes transmitted"),
	STAT(acks, "events with a cumack"),
	STAT(sacks, "accepted SACKs"),
	STAT(nacks, "NACK events"),
	STAT(cnps, "CNP events"),
	STAT(pulls, "PULL events"),
	STAT(rto_fired, "RTO expiries"),
	STAT(credit_waits, "visits ended for lack of grant credit"),
};
#undef STAT
SL_STAT_TABLE_DEFINE(sl_sched_flow_stat_table, struct sl_flow_stats, flow_stat_desc);

/* ---- helpers ---- */

static inline uint64_t *
plane(const struct sl_sched *s, uint32_t fi, unsigned which)
{
	return s->planes + ((size_t)fi * 4 + which) * s->wW;
}
enum { P_ACKED = 0, P_MARKED, P_TX_LO, P_TX_HI };

static inline void *
fpriv(const struct sl_sched *s, uint32_t fi)
{
	return s->priv + (size_t)fi * SL_PROTO_PRIV_MAX;
}

/* The lines a visit or an ack touches: the flow's two hot ones, its timer entry. */
static inline void
prefetch_flow(const struct sl_sched *s, uint32_t fi)
{
	const char *f = (const char *)&s->flows[fi];

	__builtin_prefetch(f);
	__builtin_prefetch(f + SL_CACHE_LINE);
	__builtin_prefetch(&s->timers.e[fi]);
}

static inline uint8_t
tx_count(const struct sl_sched *s, uint32_t fi, uint32_t idx)
{
	return (uint8_t)(sl_bitmap_test(plane(s, fi, P_TX_LO), idx) |
			 (sl_bitmap_test(plane(s, fi, P_TX_HI), idx) << 1));
}

static inline void
tx_count_bump(struct sl_sched *s, uint32_t fi, uint32_t idx)
{
	uint64_t *lo = plane(s, fi, P_TX_LO), *hi = plane(s, fi, P_TX_HI);
	unsigned c = tx_count(s, fi, idx);

	if (c == 3)
		return;
	c++;
	if (c & 1)
		sl_bitmap_set(lo, idx);
	else
		sl_bitmap_clear(lo, idx);
	if (c & 2)
		sl_bitmap_set(hi, idx);
}

static inline uint16_t
seg_len(const struct flow *f, uint32_t seq)
{
	return (f->short_len && seq == f->short_seq) ? f->short_len : f->seg_bytes;
}

static inline uint32_t
fifo_pop(const uint32_t *ring, uint32_t mask, uint32_t *head, uint32_t *count)
{
	uint32_t fi = ring[*head];

	*head = (*head + 1) & mask;
	(*count)--;
	return fi;
}

static inline void
ready_push(struct sl_sched *s, struct flow *f, uint32_t fi)
{
	f->sets |= IN_READY;
	s->ready[(s->rdy_head + s->rdy_count++) & s->fifo_mask] = fi;
}

static inline void
ready_push_front(struct sl_sched *s, struct flow *f, uint32_t fi)
{
	f->sets |= IN_READY;
	s->rdy_head = (s->rdy_head - 1) & s->fifo_mask;
	s->ready[s->rdy_head] = fi;
	s->rdy_count++;
}

static inline void
active_push(struct sl_sched *s, struct flow *f, uint32_t fi)
{
	f->sets |= IN_ACTIVE;
	s->active[(s->act_head + s->act_count++) & s->fifo_mask] = fi;
}

/* Can a new segment be generated now? */
static inline bool
new_ok(const struct flow *f)
{
	if (f->snd_nxt == f->tail || !sl_seq_lt(f->snd_nxt, f->wnd_start + f->wnd_segs))
		return false;
	/* appendix D: data after a short tail waits until the short segment is acked */
	return !(f->short_len && sl_seq_gt(f->snd_nxt, f->short_seq));
}

/* Anything to generate: a marked segment or a new one? */
static inline bool
can_gen(const struct flow *f)
{
	return f->marked || new_ok(f);
}

/* The next segment generation would produce (f->marked or new_ok must hold). */
static inline uint32_t
gen_peek(const struct sl_sched *s, const struct flow *f, uint32_t fi, uint32_t *idx)
{
	uint32_t mask = s->W - 1, head = f->wnd_start & mask;

	if (!f->marked)
		return f->snd_nxt;
	*idx = sl_bitmap_ffs_from(plane(s, fi, P_MARKED), s->W, head);
	return f->wnd_start + ((*idx - head) & mask);
}

/* Commit what gen_peek returned: clear the mark and count the retransmission, or advance. */
static inline void
gen_commit(struct sl_sched *s, struct flow *f, uint32_t fi, uint32_t idx)
{
	if (f->marked) {
		sl_bitmap_clear(plane(s, fi, P_MARKED), idx);
		f->marked--;
		tx_count_bump(s, fi, idx);
		f->txd = 1;
		s->st.generated_rtx++;
	} else {
		f->snd_nxt++;
	}
	s->st.generated++;
}

/*
 * Segments generation could give now: the marked ones and the new ones the window, the pushed
 * tail and a pending short tail (appendix D) allow.
 */
static uint32_t
gen_avail(const struct flow *f)
{
	uint32_t end = f->tail, lim = f->wnd_start + f->wnd_segs;

	if (sl_seq_lt(lim, end))
		end = lim;
	if (f->short_len && sl_seq_lt(f->short_seq + 1, end))
		end = f->short_seq + 1;
	return f->marked + (sl_seq_lt(f->snd_nxt, end) ? end - f->snd_nxt : 0);
}

/*
 * The active stage of a paced flow: announce release slots to the pacer, one per segment
 * generation could give, up to queue_stop outstanding. Slot j (after the outstanding ones)
 * is charged the length of the j-th segment generation would give: a full segment, or the
 * short tail.
 */
static void
announce(struct sl_sched *s, struct flow *f, uint32_t fi)
{
	uint32_t want = SL_MIN(gen_avail(f), s->q_stop), full, tail = 0;

	if (f->announced >= want)
		return;
	full = want - f->announced;
	if (f->short_len && sl_seq_ge(f->short_seq, f->snd_nxt)) {
		uint32_t j = f->marked + (f->short_seq - f->snd_nxt); /* the short one's turn */

		if (j >= f->announced && j < want) {
			full = j - f->announced;
			tail = 1;
		}
	}
	if ((full && sl_pacer_backlog(s->pacer, fi, full, f->seg_bytes + f->hdr_bytes)) ||
	    (tail && sl_pacer_backlog(s->pacer, fi, 1, f->short_len + f->hdr_bytes))) {
		s->st.pace_refused++; /* retried at the flow's next event or release */
		return;
	}
	f->announced = (uint8_t)want;
}

/*
 * Give the pacer the flow's rate: the program's (rate credit) or none, capped, clamped; and
 * with the line bypass, move the flow between the pacer (below the link's rate) and the ready
 * FIFO (at it). Its next kick() puts it where it now belongs.
 */
static void
pace_set(struct sl_sched *s, struct flow *f, uint32_t fi)
{
	uint64_t r = f->credit == SL_CREDIT_RATE ? f->rate_bps : UINT64_MAX;
	enum pacing want;

	if (f->cap_bps)
		r = SL_MIN(r, f->cap_bps);
	r = SL_MIN(SL_MAX(r, SL_PACER_RATE_MIN_BPS), s->link_bps);
	if (r != f->pace_bps && sl_pacer_set_rate(s->pacer, fi, r) == 0)
		f->pace_bps = r;
	want = (s->flags & SL_SCHED_F_LINE_BYPASS) && r == s->link_bps ? PACING_BYPASS
								       : PACING_PACER;
	if (want == f->pacing)
		return;
	if (want == PACING_PACER) {
		sl_pacer_flow_reset(s->pacer, fi); /* nothing earned while it was away */
		s->st.bypass_leaves++;
	} else {
		s->st.bypass_enters++;
	}
	f->pacing = (uint8_t)want;
}

/* An unpaced flow with something to send joins the ready FIFO if its credit covers it. */
static void
qualify(struct sl_sched *s, struct flow *f, uint32_t fi)
{
	uint32_t idx;

	if ((f->sets & IN_READY) || !can_gen(f))
		return;
	if (f->credit == SL_CREDIT_GRANT &&
	    f->tokens_bytes < (int64_t)seg_len(f, gen_peek(s, f, fi, &idx)))
		return; /* a PULL or an RTO brings tokens */
	ready_push(s, f, fi);
}

/*
 * After any change to a flow. An unpaced flow qualifies at once (generation is the credit
 * check). A paced flow goes through the active FIFO when it has fewer than queue_resume slots
 * outstanding and could use more; releases drive the rest.
 */
static void
kick(struct sl_sched *s, struct flow *f, uint32_t fi)
{
	if (f->pacing != PACING_PACER) {
		qualify(s, f, fi);
		return;
	}
	if (!(f->sets & IN_ACTIVE) && f->announced < s->q_resume && f->announced < gen_avail(f))
		active_push(s, f, fi);
}

static void
timer_refile(struct sl_sched *s, struct flow *f, uint32_t fi)
{
	uint64_t want = f->rto_at_ns;

	if (f->timer_at_ns && (!want || f->timer_at_ns < want))
		want = f->timer_at_ns;
	if (!want) {
		wheel_remove(&s->timers, fi);
		return;
	}
	if (wheel_filed(&s->timers, fi)) {
		if (s->timers.e[fi].due_ns <= want)
			return; /* fires early, finds nothing due, re-files itself */
		wheel_remove(&s->timers, fi);
	}
	wheel_insert(&s->timers, fi, want);
}

static void
fill_view(const struct sl_sched *s, const struct flow *f, uint32_t fi, uint64_t now_ns,
	  struct sl_flow_view *v)
{
	*v = (struct sl_flow_view){
		.flow = fi,
		.wnd_start = f->wnd_start,
		.snd_nxt = f->snd_nxt,
		.snd_max = f->snd_max,
		.tail = f->tail,
		.wnd_segs = f->wnd_segs,
		.max_wnd_segs = s->W,
		.queued = f->announced,
		.marked = f->marked,
		.seg_bytes = f->seg_bytes,
		.rate_bps = f->rate_bps,
		.tokens_bytes = f->tokens_bytes,
		.rto_ns = f->rto_ns,
		.rto_at_ns = f->rto_at_ns,
		.total_sent = f->total_sent,
		.now_ns = now_ns,
		.param = f->param,
		.acked_bits = plane(s, fi, P_ACKED),
		.marked_bits = plane(s, fi, P_MARKED),
	};
}

static void
out_prefill(const struct flow *f, struct sl_proto_out *o)
{
	*o = (struct sl_proto_out){
		.wnd_segs = f->wnd_segs,
		.rate_bps = f->rate_bps,
		.rto_ns = f->rto_ns,
	};
}

void
sl_proto_default_incoming(const struct sl_flow_view *f, const struct sl_incoming *in,
			  struct sl_proto_out *out)
{
	/* RFC 6298 5.3: new data acknowledged, more outstanding: restart the timer. */
	out->rto_rearm =
		sl_seq_gt(in->new_wnd_start, in->old_wnd_start) && f->snd_max != f->wnd_start;
}

void
sl_proto_default_periodic(const struct sl_flow_view *f, const struct sl_periodic *p,
			  struct sl_proto_out *out)
{
	if (!p->rto_expired || f->snd_max == f->wnd_start)
		return;
	/* RFC 6298 5.4 and 5.6, go-back-N: resend everything unacked, restart the timer. */
	out->mark_from = f->wnd_start;
	out->mark_to = f->snd_max;
	out->rto_rearm = true;
}

/*
 * Forget the selective acks of [seq, snd_max): the receiver may have discarded what it
 * acknowledged (a receiver not ready forgets everything past the message it refused).
 */
static void
sacks_forget(struct sl_sched *s, struct flow *f, uint32_t fi, uint32_t seq)
{
	uint64_t *acked = plane(s, fi, P_ACKED);
	uint32_t head = seq & (s->W - 1), d = f->snd_max - seq, n;

	if (f->sacked && d) {
		n = sl_bitmap_count_range(acked, s->W, head, d);
		sl_bitmap_clear_range(acked, s->W, head, d);
		f->sacked -= n;
		s->st.sacks_forgotten += n;
	}
}

/* Mark [from, to) clipped to [wnd_start, snd_max), skipping acked and already marked. */
static void
mark_range(struct sl_sched *s, struct flow *f, uint32_t fi, uint32_t from, uint32_t to)
{
	uint64_t *m = plane(s, fi, P_MARKED);
	const uint64_t *a = plane(s, fi, P_ACKED);

	if (sl_seq_lt(from, f->wnd_start))
		from = f->wnd_start;
	if (sl_seq_gt(to, f->snd_max))
		to = f->snd_max;
	for (uint32_t seq = from; sl_seq_lt(seq, to); seq++) {
		uint32_t idx = seq & (s->W - 1);

		if (!sl_bitmap_test(a, idx) && !sl_bitmap_test(m, idx)) {
			sl_bitmap_set(m, idx);
			f->marked++;
		}
	}
}

/* Apply a hook's decisions (section 3.5 outputs), then re-qualify the flow. */
static void
apply_out(struct sl_sched *s, struct flow *f, uint32_t fi, const struct sl_proto_out *o,
	  uint64_t now_ns)
{
	uint32_t wnd = SL_MIN(SL_MAX(o->wnd_segs, 1u), s->W);
	uint64_t rate = SL_MAX(o->rate_bps, 1u);

	f->wnd_segs = wnd;
	f->rate_bps = rate;
	if (f->pacing != PACING_NONE)
		pace_set(s, f, fi); /* the pacer times the flow's next packet at the new rate */
	if (sl_seq_lt(o->mark_from, o->mark_to))
		mark_range(s, f, fi, o->mark_from, o->mark_to);
	if (o->add_tokens_bytes)
		f->tokens_bytes += o->add_tokens_bytes;
	f->rto_ns = o->rto_ns;
	if (o->rto_rearm)
		f->rto_at_ns = now_ns + o->rto_ns;
	if (o->timer_ns)
		f->timer_at_ns = now_ns + o->timer_ns;
	timer_refile(s, f, fi);
	kick(s, f, fi);
}

/* ---- create / free ---- */

static uint32_t
conf_or(uint32_t v, uint32_t dflt)
{
	return v ? v : dflt;
}

struct sl_sched *
sl_sched_create(const struct sl_sched_conf *c)
{
	struct sl_sched *s = NULL;
	uint32_t W, N, stop, resume, tslots, ttick, fifo;
	struct sl_pacer_conf pc;
	int rc;

	if (c == NULL || c->max_flows == 0 || c->max_flows > (UINT32_C(1) << 28))
		goto einval;
	W = conf_or(c->wnd_segs, SL_SCHED_WND_DEFAULT);
	N = conf_or(c->queue_segs, 16);
	stop = conf_or(c->queue_stop, N - N / 4 - 1 + (N < 8)); /* 11 for N = 16 */
	resume = conf_or(c->queue_resume, stop - 1);
	tslots = conf_or(c->timer_slots, 4096);
	ttick = conf_or(c->timer_tick_ns, 1000);
	if (!sl_is_pow2(W) || W < SL_SCHED_WND_MIN || W > SL_SCHED_WND_MAX)
		goto einval;
	if (!sl_is_pow2(N) || N < 2 || N > SL_SCHED_QUEUE_MAX || stop > N || resume > stop)
		goto einval;
	if (!sl_is_pow2(tslots) || tslots < 64)
		goto einval;
	if (c->flags & ~(SL_SCHED_F_TX_TS | SL_SCHED_F_LINE_BYPASS))
		goto einval;

	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	s->max_flows = c->max_flows;
	s->W = W;
	s->wW = W / 64;
	s->q_stop = stop;
	s->q_resume = resume;
	s->visit_segs = conf_or(c->visit_segs, 8);
	s->timer_budget = conf_or(c->timer_budget, 1024);
	s->flags = c->flags;
	s->link_bps = c->link_bps ? c->link_bps : DEFAULT_LINK_BPS;
	s->step = 1;
	s->resume_flow = NOWHERE;
	fifo = (uint32_t)sl_align_pow2(c->max_flows);
	s->fifo_mask = fifo - 1;
	s->flows = aligned_alloc(SL_CACHE_LINE, sizeof(struct flow) * c->max_flows);
	s->planes = calloc((size_t)c->max_flows * 4 * s->wW, sizeof(uint64_t));
	s->priv = aligned_alloc(SL_CACHE_LINE, (size_t)c->max_flows * SL_PROTO_PRIV_MAX);
	s->active = malloc(sizeof(uint32_t) * fifo);
	s->ready = malloc(sizeof(uint32_t) * fifo);
	if (c->flags & SL_SCHED_F_TX_TS)
		s->tx_ts_ns = calloc((size_t)c->max_flows * W, sizeof(uint64_t));
	if (!s->flows || !s->planes || !s->priv || !s->active || !s->ready ||
	    ((c->flags & SL_SCHED_F_TX_TS) && !s->tx_ts_ns))
		goto enomem;
	memset(s->flows, 0, sizeof(struct flow) * c->max_flows);
	rc = wheel_init(&s->timers, c->max_flows, tslots, ttick);
	if (rc)
		goto enomem;
	pc = (struct sl_pacer_conf){.impl = c->pacer,
				    .max_flows = c->max_flows,
				    .link_bps = s->link_bps,
				    .wire_overhead_bytes = c->wire_overhead_bytes,
				    .catchup_ns = c->pace_catchup_ns};
	s->pacer = sl_pacer_create(&pc);
	if (s->pacer == NULL) {
		rc = errno;
		sl_sched_free(s);
		errno = rc;
		return NULL;
	}
	return s;

enomem:
	sl_sched_free(s);
	errno = ENOMEM;
	return NULL;
einval:
	errno = EINVAL;
	return NULL;
}

void
sl_sched_free(struct sl_sched *s)
{
	if (s == NULL)
		return;
	wheel_free(&s->timers);
	sl_pacer_free(s->pacer);
	free(s->flows);
	free(s->planes);
	free(s->priv);
	free(s->tx_ts_ns);
	free(s->active);
	free(s->ready);
	free(s);
}

size_t
sl_sched_bytes_per_flow(const struct sl_sched *s)
{
	size_t b = sizeof(struct flow) + 4 * s->wW * sizeof(uint64_t) + SL_PROTO_PRIV_MAX +
		   2 * sizeof(uint32_t) /* fifos */ + sizeof(struct wentry) /* timer entry */ +
		   SL_DIV_ROUND_UP(sl_pacer_mem_bytes(s->pacer), s->max_flows);

	if (s->tx_ts_ns)
		b += (size_t)s->W * sizeof(uint64_t);
	return b;
}

/* ---- flows ---- */

static struct flow *
flow_get(const struct sl_sched *s, uint32_t fi)
{
	if (fi >= s->max_flows || !s->flows[fi].in_use)
		return NULL;
	return &s->flows[fi];
}

int
sl_sched_flow_add(struct sl_sched *s, uint32_t fi, const struct sl_flow_conf *fc)
{
	const struct sl_proto_ops *ops;
	struct sl_flow_view v;
	struct sl_proto_out o;
	struct flow *f;
	uint8_t sets, announced;
	bool paced;
	int rc;

	if (s == NULL || fc == NULL || fi >= s->max_flows || fc->seg_bytes == 0 ||
	    fc->seg_bytes > UINT16_MAX || fc->init_wnd_segs > s->W)
		return -EINVAL;
	ops = sl_proto_find(fc->proto);
	if (ops == NULL)
		return -ENOENT;
	paced = ops->credit == SL_CREDIT_RATE ||
		(ops->credit == SL_CREDIT_WINDOW && fc->max_rate_bps);
	if ((ops->credit == SL_CREDIT_GRANT && fc->max_rate_bps) ||
	    (paced && fc->seg_bytes + (uint64_t)fc->hdr_bytes > SL_PACER_LEN_MAX))
		return -EINVAL;
	f = &s->flows[fi];
	if (f->in_use)
		return -EEXIST;
	sets = f->sets;           /* FIFO membership outlives a deleted flow until it is popped, */
	announced = f->announced; /* and the pacer's FIFO until it is released */
	memset(f, 0, sizeof(*f));
	f->sets = sets;
	f->announced = announced;
	memset(plane(s, fi, 0), 0, 4 * s->wW * sizeof(uint64_t));
	memset(fpriv(s, fi), 0, SL_PROTO_PRIV_MAX);
	f->wnd_start = f->snd_nxt = f->snd_max = f->tail = fc->first_seq;
	f->seg_bytes = (uint16_t)fc->seg_bytes;
	f->hdr_bytes = (uint16_t)fc->hdr_bytes;
	f->wnd_segs = conf_or(fc->init_wnd_segs, s->W);
	f->credit = (uint8_t)ops->credit;
	f->ops = ops;
	f->rate_bps = fc->init_rate_bps ? fc->init_rate_bps : DEFAULT_RATE_BPS;
	f->cap_bps = fc->max_rate_bps;
	f->pacing = PACING_NONE;
	if (paced) {
		sl_pacer_flow_reset(s->pacer, fi); /* nothing earned or owed by a predecessor */
		f->pacing = PACING_PACER;
		pace_set(s, f, fi);
	}
	if (ops->credit == SL_CREDIT_GRANT)
		f->tokens_bytes = fc->init_credit_bytes;
	f->rto_ns = fc->rto_ns ? fc->rto_ns : DEFAULT_RTO_NS;
	f->rto_credit_bytes = conf_or(fc->rto_credit_bytes, DEFAULT_RTO_CREDIT_BYTES);
	memcpy(f->param, fc->param, sizeof(f->param));

	fill_view(s, f, fi, fc->start_ns, &v);
	out_prefill(f, &o);
	rc = ops->init ? ops->init(&v, fpriv(s, fi), fc, &o) : 0;
	if (rc)
		return rc;
	f->in_use = 1;
	apply_out(s, f, fi, &o, fc->start_ns);
	return 0;
}

int
sl_sched_flow_del(struct sl_sched *s, uint32_t fi)
{
	struct flow *f = flow_get(s, fi);

	if (f == NULL)
		return -ENOENT;
	wheel_remove(&s->timers, fi);
	f->in_use = 0;
	return 0;
}

int
sl_sched_flow_push(struct sl_sched *s, uint32_t fi, uint32_t nsegs, uint16_t last_len)
{
	struct flow *f = flow_get(s, fi);
	bool short_pending;

	if (f == NULL)
		return -ENOENT;
	if (nsegs == 0 || last_len == 0 || last_len > f->seg_bytes)
		return -EINVAL;
	short_pending = f->short_len && sl_seq_ge(f->short_seq, f->wnd_start);
	if (f->tail - f->wnd_start + (uint64_t)nsegs > UNACKED_MAX) {
		s->st.push_refused++;
		return -EOVERFLOW;
	}
	if (last_len < f->seg_bytes && short_pending) {
		s->st.push_refused++;
		return -EBUSY;
	}
	f->tail += nsegs;
	if (last_len < f->seg_bytes) {
		f->short_seq = f->tail - 1;
		f->short_len = last_len;
	} else if (!short_pending) {
		f->short_len = 0;
	}
	kick(s, f, fi);
	return 0;
}

/* ---- incoming: fixed stage, then the program ---- */

static bool
event_valid(const struct sl_event *e, const struct flow *f)
{
	if (f == NULL || e->type >= SL_EV_TYPES || e->sack_tx_id > 3)
		return false;
	if ((e->flags & SL_EVF_CUMACK) && sl_seq_gt(e->cumack, f->snd_max))
		return false; /* acks data never sent */
	if (e->type == SL_EV_NACK && e->nack_len == 0)
		return false;
	return true;
}

/* Slide the window to cumack c (wnd_start < c <= snd_max); returns segments newly acked. */
static uint32_t
window_slide(struct sl_sched *s, struct flow *f, uint32_t fi, uint32_t c)
{
	uint32_t d = c - f->wnd_start, head = f->wnd_start & (s->W - 1), already = 0;

	/* the planes are only touched when they can hold bits: no loss, no work */
	if (f->sacked) {
		already = sl_bitmap_count_range(plane(s, fi, P_ACKED), s->W, head, d);
		f->sacked -= already;
		sl_bitmap_clear_range(plane(s, fi, P_ACKED), s->W, head, d);
	}
	if (f->marked) {
		f->marked -= sl_bitmap_count_range(plane(s, fi, P_MARKED), s->W, head, d);
		sl_bitmap_clear_range(plane(s, fi, P_MARKED), s->W, head, d);
	}
	if (f->txd) {
		sl_bitmap_clear_range(plane(s, fi, P_TX_LO), s->W, head, d);
		sl_bitmap_clear_range(plane(s, fi, P_TX_HI), s->W, head, d);
		f->txd = c != f->snd_max; /* nothing in flight: every count is gone */
	}
	f->wnd_start = c;
	if (f->short_len && sl_seq_gt(c, f->short_seq))
		f->short_len = 0;
	return d - already;
}

/*
 * RTT sample from the echoed send time, or from the stored one of segment seq if it was sent
 * once (Karn; a SACK must also echo tx_id 0). Called before the window slides past seq.
 */
static uint64_t
rtt_sample(const struct sl_sched *s, const struct sl_event *e, const struct flow *f, uint32_t fi,
	   uint32_t seq, bool sack, uint64_t now_ns)
{
	uint32_t idx = seq & (s->W - 1);
	uint64_t t;

	if (e->flags & SL_EVF_TS)
		return e->echo_ts_ns <= now_ns ? now_ns - e->echo_ts_ns : 0;
	if (s->tx_ts_ns == NULL || (sack && e->sack_tx_id) || (f->txd && tx_count(s, fi, idx)))
		return 0;
	t = s->tx_ts_ns[(size_t)fi * s->W + idx];
	return t && t <= now_ns ? now_ns - t : 0;
}

static void
incoming_one(struct sl_sched *s, const struct sl_event *e, uint64_t now_ns)
{
	uint32_t fi = e->flow;
	struct flow *f = &s->flows[fi];
	struct sl_incoming in = {.ev = e, .old_wnd_start = f->wnd_start, .now_ns = now_ns};
	struct sl_flow_view v;
	struct sl_proto_out o;

	if (e->flags & SL_EVF_CUMACK) {
		if (++f->acks_lo == 0)
			f->st.acks += UINT64_C(1) << 32;
		f->ack_step = (uint32_t)s->step;
		if (sl_seq_gt(e->cumack, f->wnd_start)) {
			in.rtt_ns = rtt_sample(s, e, f, fi, e->cumack - 1, false, now_ns);
			in.newly_acked = window_slide(s, f, fi, e->cumack);
		} else if (sl_seq_lt(e->cumack, f->wnd_start)) {
			s->st.stale_acks++;
		}
	}
	if (e->flags & SL_EVF_SACK) {
		uint32_t q = e->sack_seq, idx = q & (s->W - 1);

		f->ack_step = (uint32_t)s->step;
		if (sl_seq_ge(q, f->wnd_start) && sl_seq_lt(q, f->snd_max) &&
		    !sl_bitmap_test(plane(s, fi, P_ACKED), idx)) {
			sl_bitmap_set(plane(s, fi, P_ACKED), idx);
			f->sacked++;
			if (sl_bitmap_test(plane(s, fi, P_MARKED), idx)) {
				sl_bitmap_clear(plane(s, fi, P_MARKED), idx);
				f->marked--;
			}
			in.sack_accepted = true;
			in.newly_acked++;
			if (!in.rtt_ns)
				in.rtt_ns = rtt_sample(s, e, f, fi, q, true, now_ns);
			s->st.sacks_accepted++;
			f->st.sacks++;
		} else {
			s->st.sacks_ignored++;
		}
	}
	if (!in.rtt_ns && (e->flags & SL_EVF_TS))
		in.rtt_ns = e->echo_ts_ns <= now_ns ? now_ns - e->echo_ts_ns : 0;
	switch (e->type) {
	case SL_EV_NACK:
		f->st.nacks++;
		break;
	case SL_EV_CNP:
		f->st.cnps++;
		break;
	case SL_EV_PULL:
		f->st.pulls++;
		f->tokens_bytes += e->grant_bytes;
		break;
	default:
		break;
	}
	if (f->wnd_start == f->snd_max) {
		f->rto_at_ns = 0; /* RFC 6298 5.2: all sent data acked */
		if (f->credit == SL_CREDIT_GRANT && f->wnd_start != in.old_wnd_start &&
		    f->tokens_bytes < (int64_t)f->rto_credit_bytes)
			f->tokens_bytes = f->rto_credit_bytes; /* the pipe drained: no more PULLs */
	}
	in.new_wnd_start = f->wnd_start;
	fill_view(s, f, fi, now_ns, &v);
	out_prefill(f, &o);
	sl_proto_default_incoming(&v, &in, &o);
	if (f->ops->incoming)
		f->ops->incoming(&v, fpriv(s, fi), &in, &o);
	apply_out(s, f, fi, &o, now_ns);
}

unsigned
sl_sched_incoming(struct sl_sched *s, const struct sl_event *ev, unsigned n, uint64_t now_ns)
{
	unsigned ok = 0;

	for (unsigned i = 0; i < n; i++) {
		const struct sl_event *e = &ev[i];

		if (i + PREFETCH_AHEAD < n && ev[i + PREFETCH_AHEAD].flow < s->max_flows)
			prefetch_flow(s, ev[i + PREFETCH_AHEAD].flow);
		if (!event_valid(e, flow_get(s, e->flow))) {
			s->st.bad_events++;
			continue;
		}
		incoming_one(s, e, now_ns);
		ok++;
	}
	s->st.events += ok;
	return ok;
}

/* ---- timers ---- */

static void
timer_fire(struct sl_sched *s, uint32_t fi, uint64_t now_ns)
{
	struct flow *f = &s->flows[fi];
	struct sl_periodic p = {.now_ns = now_ns};
	struct sl_flow_view v;
	struct sl_proto_out o;

	p.rto_expired = f->rto_at_ns && f->rto_at_ns <= now_ns;
	p.timer_expired = f->timer_at_ns && f->timer_at_ns <= now_ns;
	if (p.rto_expired && f->ack_step == (uint32_t)s->step) {
		/* section 3.4: an ack in the same step wins; retry in the next step */
		s->st.rto_dropped_by_ack++;
		p.rto_expired = false;
		if (!p.timer_expired) {
			wheel_insert(&s->timers, fi, now_ns + 1);
			return;
		}
	}
	if (!p.rto_expired && !p.timer_expired) {
		timer_refile(s, f, fi); /* re-armed later since it was filed */
		return;
	}
	if (p.rto_expired) {
		f->rto_at_ns = 0;
		s->st.rto_fired++;
		f->st.rto_fired++;
		if (f->credit == SL_CREDIT_GRANT)
			f->tokens_bytes += f->rto_credit_bytes;
		/* RFC 2018 section 8: SACKs are advisory; after a timeout they are turned off,
		 * as the receiver may have discarded what they named */
		sacks_forget(s, f, fi, f->wnd_start);
	}
	if (p.timer_expired) {
		f->timer_at_ns = 0;
		s->st.timers_fired++;
	}
	fill_view(s, f, fi, now_ns, &v);
	out_prefill(f, &o);
	sl_proto_default_periodic(&v, &p, &o);
	if (f->ops->periodic)
		f->ops->periodic(&v, fpriv(s, fi), &p, &o);
	apply_out(s, f, fi, &o, now_ns);
}

static void
sweep(struct sl_sched *s, uint64_t now_ns)
{
	for (uint32_t n = 0; n < s->timer_budget; n++) {
		uint32_t fi = wheel_pop_due(&s->timers, now_ns);

		if (fi == NOWHERE)
			break;
		timer_fire(s, fi, now_ns);
	}
}

/* ---- transmission ---- */

/* Write the decision to send segment seq (just taken from the queue or generated) to out. */
static void
emit(struct sl_sched *s, struct flow *f, uint32_t fi, uint32_t seq, uint64_t now_ns,
     struct sl_seg *out)
{
	uint32_t idx = seq & (s->W - 1);
	uint16_t len = seg_len(f, seq);

	*out = (struct sl_seg){
		.flow = fi,
		.seq = seq,
		.len = len,
		.flags = (uint8_t)(len != f->seg_bytes || seq == f->tail - 1 ? SL_SEG_F_TAIL : 0),
	};
	if (sl_seq_lt(seq, f->snd_max)) {
		out->tx_id = tx_count(s, fi, idx);
		out->flags |= SL_SEG_F_RTX;
		f->st.segs_rtx++;
	} else {
		f->snd_max = seq + 1;
	}
	if (s->tx_ts_ns)
		s->tx_ts_ns[(size_t)fi * s->W + idx] = now_ns;
	if (len != f->seg_bytes)
		f->short_bytes += f->seg_bytes - len;
}

/* n segments of the flow went out: count them, and arm the RTO at transmit if disarmed. */
static void
sent(struct sl_sched *s, struct flow *f, uint32_t fi, unsigned n, uint64_t now_ns)
{
	f->total_sent += n;
	s->st.decisions += n;
	if (n && !f->rto_at_ns) {
		f->rto_at_ns = now_ns + f->rto_ns;
		timer_refile(s, f, fi);
	}
}

/*
 * The fast path of a visit: the run of new full-size segments the flow may send now, when
 * nothing is marked, written in one tight loop (no per-segment state reloads). The run stops
 * before a short tail, at the window, at the pushed tail, at room, and at the grant tokens for
 * full segments. Returns the segments written.
 */
static unsigned
serve_run(struct sl_sched *s, struct flow *f, uint32_t fi, uint64_t now_ns, struct sl_seg *out,
	  unsigned room)
{
	uint32_t seq = f->snd_nxt, end = f->tail, lim, k;
	uint16_t len = f->seg_bytes;

	lim = f->wnd_start + f->wnd_segs;
	if (sl_seq_lt(lim, end))
		end = lim;
	if (f->short_len && sl_seq_le(f->short_seq, end))
		end = sl_seq_lt(seq, f->short_seq) ? f->short_seq : seq;
	if (!sl_seq_lt(seq, end))
		return 0;
	k = SL_MIN(end - seq, room);
	if (f->credit == SL_CREDIT_GRANT) {
		int64_t can = f->tokens_bytes > 0 ? f->tokens_bytes / len : 0;

		k = (uint32_t)SL_MIN((int64_t)k, can);
		f->tokens_bytes -= (int64_t)k * len;
	}
	for (uint32_t i = 0; i < k; i++)
		out[i] = (struct sl_seg){.flow = fi, .seq = seq + i, .len = len};
	if (k && seq + k == f->tail)
		out[k - 1].flags = SL_SEG_F_TAIL;
	if (s->tx_ts_ns)
		for (uint32_t i = 0; i < k; i++)
			s->tx_ts_ns[(size_t)fi * s->W + ((seq + i) & (s->W - 1))] = now_ns;
	f->snd_nxt = f->snd_max = seq + k;
	s->st.generated += k;
	return k;
}

/*
 * Serve one ready (unpaced) flow, the credit engine's Transmit: emit up to visit_segs
 * segments while credit lasts, lost ones first, generated in place (generation +1 and
 * transmission -1 net out, section 3.4), then requeue it at the tail, park it on grant credit,
 * or let it go idle. Returns segments written.
 */
static unsigned
serve(struct sl_sched *s, uint32_t fi, uint64_t now_ns, struct sl_seg *out, unsigned room)
{
	struct flow *f = &s->flows[fi];
	unsigned visit = fi == s->resume_flow ? s->resume_left : s->visit_segs;
	unsigned n = 0, lim = SL_MIN(room, visit);
	bool starved = false; /* stopped for grant credit */

	f->sets &= (uint8_t)~IN_READY;
	s->resume_flow = NOWHERE;
	if (!f->in_use)
		return 0;
	if (f->pacing == PACING_PACER) { /* paced again (re-added, or below the line) meanwhile */
		kick(s, f, fi);
		return 0;
	}
	s->st.visits++;
	if (!f->marked)
		n = serve_run(s, f, fi, now_ns, out, lim);
	while (n < lim && can_gen(f)) {
		uint32_t idx = 0, seq = gen_peek(s, f, fi, &idx);
		uint16_t len = seg_len(f, seq);

		if (f->credit == SL_CREDIT_GRANT) {
			if (f->tokens_bytes < (int64_t)len) {
				starved = true;
				break;
			}
			f->tokens_bytes -= len;
		}
		gen_commit(s, f, fi, idx);
		emit(s, f, fi, seq, now_ns, &out[n++]);
	}
	sent(s, f, fi, n, now_ns);
	if (starved) {
		s->st.credit_waits++;
		f->st.credit_waits++;
	}
	if (n == room && n < visit && !starved && can_gen(f)) {
		ready_push_front(s, f, fi); /* the burst is full: finish the visit next call */
		s->resume_flow = fi;
		s->resume_left = visit - n;
		return n;
	}
	qualify(s, f, fi);
	return n;
}

/*
 * One release of a paced flow: what generation gives now, lost first (so a resend never waits
 * behind new data announced before the loss was known). false when there is nothing to send.
 */
static bool
release_one(struct sl_sched *s, struct flow *f, uint32_t fi, uint64_t now_ns, struct sl_seg *out)
{
	uint32_t idx = 0, seq;

	if (!can_gen(f))
		return false;
	seq = gen_peek(s, f, fi, &idx);
	gen_commit(s, f, fi, idx);
	emit(s, f, fi, seq, now_ns, out);
	sent(s, f, fi, 1, now_ns);
	return true;
}

/* Send what the pacer releases by now_ns, one segment per release, at most room. */
static unsigned
release(struct sl_sched *s, uint64_t now_ns, struct sl_seg *out, unsigned room)
{
	struct sl_pkt pk[RELEASE_CHUNK];
	unsigned n = 0, k, ask;

	do {
		ask = SL_MIN(room - n, RELEASE_CHUNK);
		k = sl_pacer_dequeue_burst(s->pacer, now_ns, pk, ask);
		s->st.pace_released += k;
		for (unsigned i = 0; i < k; i++) {
			uint32_t fi = pk[i].flow;
			struct flow *f = &s->flows[fi];

			if (f->announced)
				f->announced--;
			if (f->in_use && f->pacing == PACING_PACER &&
			    release_one(s, f, fi, now_ns, &out[n]))
				n++;
			else
				s->st.pace_unused++;
			if (f->in_use)
				kick(s, f, fi);
		}
	} while (k == ask && n < room); /* a short answer: nothing more is due */
	return n;
}

/* Active stage: announce release slots for one paced flow. */
static void
activate(struct sl_sched *s)
{
	uint32_t fi = fifo_pop(s->active, s->fifo_mask, &s->act_head, &s->act_count);
	struct flow *f = &s->flows[fi];

	f->sets &= (uint8_t)~IN_ACTIVE;
	if (!f->in_use)
		return;
	if (f->pacing != PACING_PACER) { /* unpaced (re-added, or at the line) meanwhile */
		qualify(s, f, fi);
		return;
	}
	announce(s, f, fi);
}

static void
activate_all(struct sl_sched *s)
{
	while (s->act_count)
		activate(s);
}

unsigned
sl_sched_next_burst(struct sl_sched *s, uint64_t now_ns, struct sl_seg *out, unsigned max)
{
	unsigned n;

	sweep(s, now_ns);
	/* Flows that got work since the last call start now, however long ago that call was. */
	sl_pacer_clock(s->pacer, now_ns);
	activate_all(s); /* flows the timers and events woke: their first packets may be due */
	n = release(s, now_ns, out, max);
	activate_all(s); /* flows the releases drained below queue_resume */
	while (n < max && s->rdy_count) {
		uint32_t fi = fifo_pop(s->ready, s->fifo_mask, &s->rdy_head, &s->rdy_count);

		if (s->rdy_count > PREFETCH_AHEAD)
			prefetch_flow(s, s->ready[(s->rdy_head + PREFETCH_AHEAD) & s->fifo_mask]);
		n += serve(s, fi, now_ns, out + n, max - n);
	}
	s->step++;
	return n;
}

uint64_t
sl_sched_next_deadline(const struct sl_sched *s)
{
	if (s->act_count || s->rdy_count)
		return 0;
	return SL_MIN(wheel_next_ns(&s->timers), sl_pacer_next_deadline(s->pacer));
}

const struct sl_pacer *
sl_sched_pacer(const struct sl_sched *s)
{
	return s->pacer;
}

/* ---- introspection ---- */

int
sl_sched_flow_view(const struct sl_sched *s, uint32_t fi, struct sl_flow_view *v)
{
	const struct flow *f = flow_get(s, fi);

	if (f == NULL)
		return -ENOENT;
	fill_view(s, f, fi, 0, v);
	return 0;
}

int
sl_sched_flow_rewind(struct sl_sched *s, uint32_t fi, uint32_t seq, uint64_t now_ns)
{
	struct flow *f;

	if (flow_get(s, fi) == NULL)
		return -ENOENT;
	f = &s->flows[fi];
	if (sl_seq_lt(seq, f->wnd_start) || sl_seq_gt(seq, f->snd_max))
		return -ERANGE;
	sacks_forget(s, f, fi, seq);
	mark_range(s, f, fi, seq, f->snd_max);
	if (f->rto_at_ns) {
		f->rto_at_ns = now_ns + f->rto_ns;
		timer_refile(s, f, fi);
	}
	kick(s, f, fi);
	return 0;
}

int
sl_sched_flow_rto_after(struct sl_sched *s, uint32_t fi, uint64_t t_ns)
{
	struct flow *f;

	if (flow_get(s, fi) == NULL)
		return -ENOENT;
	f = &s->flows[fi];
	if (f->rto_at_ns && f->rto_at_ns < t_ns + f->rto_ns) {
		f->rto_at_ns = t_ns + f->rto_ns;
		timer_refile(s, f, fi);
	}
	return 0;
}

int
sl_sched_flow_seqs(const struct sl_sched *s, uint32_t fi, uint32_t *wnd_start, uint32_t *snd_max)
{
	const struct flow *f = flow_get(s, fi);

	if (f == NULL)
		return -ENOENT;
	*wnd_start = f->wnd_start;
	*snd_max = f->snd_max;
	return 0;
}

const void *
sl_sched_flow_priv(const struct sl_sched *s, uint32_t fi)
{
	return flow_get(s, fi) ? fpriv(s, fi) : NULL;
}

void
sl_sched_stats_get(const struct sl_sched *s, struct sl_sched_stats *st)
{
	*st = s->st;
}

int
sl_sched_flow_stats_get(const struct sl_sched *s, uint32_t fi, struct sl_flow_stats *st)
{
	const struct flow *f = flow_get(s, fi);

	if (f == NULL)
		return -ENOENT;
	*st = f->st;
	st->segs_sent = f->total_sent;
	st->bytes_sent = f->total_sent * f->seg_bytes - f->short_bytes;
	st->acks += f->acks_lo;
	return 0;
}
