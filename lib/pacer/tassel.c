/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tassel.c - the Tassel two-tier pacer (Wang et al., "Fast, Scalable, and Accurate Rate Limiter
 * for RDMA NICs", SIGCOMM'24, section 3), the default sluice pacer.
 *
 * Model. One sort over all flows yields several packets (multiple-packet-per-sorting):
 *
 *   flow tier (section 3.2.1)             packet tier (section 3.2.2)
 *   calendar of S_flow    --N pkts-->  WF2Q+ S,F --> timing wheel on S --> heap on F --> link
 *   (one entry per backlogged flow)     (only S <= V + L is admitted)  (S <= V)   (link idle)
 *
 *   - V is the system (virtual) time. It follows the caller's now_ns at a rate of
 *     1 / max(1, Phi), Phi = (sum of backlogged flows' rates) / link rate, so when the flows
 *     oversubscribe the link every one of them is slowed by the same factor and no queue builds
 *     (the paper writes T(t + d) = T(t) + d * max(1, Phi) for a timer counting in units of the
 *     scaled time; slowing V is the same thing). A TX stall freezes V (sl_pacer_pause), so no
 *     flow accumulates credit and nothing bursts on resume.
 *   - Flow tier: each backlogged flow waits under S_flow, the start time of its head packet,
 *     in an FFS calendar of 256 ns buckets ("tassel", Eiffel's cFFS) or a 4-ary heap, the
 *     P-heap analogue ("tassel-heap"); the calendar decides a bucket once its last ns is due.
 *     When V + L >= S_flow (L: the scheduling lookahead, the software counterpart of the NIC's
 *     scheduling latency) the flow is decided: its first N packets are peeked in order,
 *     N = max(1, floor(R * L / len)) (adaptive batching; the fraction is carried to the next
 *     decision so the long-run batch is exactly R * L / len; packets already due when a
 *     decision comes late are taken on top), and each gets the exact WF2Q+ times
 *     S_0 = S_flow, S_j = F_(j-1), F_j = S_j + len_j / R (sub-ns remainder carried, no drift).
 *     Packets with S <= V + L are imminent and enter the packet tier; the first one that is
 *     not sets the flow's new S_flow (packet filtering). Nothing is dropped and re-fetched: the
 *     FIFO is peeked, which is what software can do and PCIe cannot. A decision takes one L to
 *     complete and a flow is not decided again before that (section 3.2.1: "a flow must wait
 *     for its last scheduling decision to be fully executed"), so a high-rate flow is sorted
 *     once per L for N packets, and with N forced to 1 it gets len / L (Fig. 8; with the
 *     calendar the period is L less up to one bucket, see admit()).
 *   - Packet tier: a timing wheel of slot_ns-wide slots spanning more than L_max holds imminent
 *     packets by S; a slot moves to a min-heap on F once V has passed its last ns (so a packet is
 *     never early and at most slot_ns - 1 late; 1 ns slots make it exact). A packet that
 *     becomes eligible with the smallest or the largest F, the common cases, joins a run kept
 *     sorted on F beside the heap instead (see elig_push()), so it costs no heap operation;
 *     one that becomes eligible alone at a pick with the smallest F leaves without entering
 *     either (see drain_pick()).
 *     The eligible packet with the smallest F leaves only when the modelled link is idle; leaving
 *     earlier could let it overtake a packet with a smaller F that becomes eligible meanwhile.
 *     The tier holds at most W = imminent_max packets; an admission that finds it full waits
 *     and is counted (imminent_full), which with W >= link packet rate x L never happens.
 *   - Rates change at any time; the next packet decided uses the new rate.
 *   - Catch-up (conf.catchup_ns, 0 by default). A flow announces only a few packets ahead (the
 *     engine's queue_stop), so when the caller stalls (a descheduled lcore, not a TX stall) the
 *     flow runs dry on the first dequeue after it and, restarting at V, loses the rest of the
 *     stall: its rate over a run falls short by the share of time its lcore was away. A flow
 *     that runs dry late (the F of its last packet behind V: only a stall or an oversubscribed
 *     link leaves it so) restarts at max(F, V - catchup_ns) instead: its packets are already
 *     due and go back to back (the modelled link and WF2Q+'s finish order still apply) until
 *     it is on schedule; the part of the lateness beyond catchup_ns is lost and counted
 *     (catchup_lost_ns). Lateness also accrues after a flow's FIFO ran out on time while its
 *     admitted packets wait in the packet tier past their F (the caller's TX room held them:
 *     a slow peer): the engine announces more only as packets leave, so the flow looks dry
 *     though it never stopped sending. Its next activation counts the lag up to when its last
 *     packet left as late (without this, each such wait cost a low-rate flow up to a packet's
 *     time). A flow that runs dry on time (nothing more to send) restarts at
 *     V, so idling earns no credit and a new flow does not burst; one that ran dry late and
 *     then idles keeps at most catchup_ns of credit. No flow gets more than catchup_ns x R
 *     ahead of where a stall left it. The credit is its owner's: a flow handed to a new one
 *     (sl_pacer_flow_reset, a QP opened in a closed one's slot) starts afresh.
 *
 * Units: V, S, F, L in ns (64-bit, never wrap), rates in bps of wire bits, lengths in bytes.
 * Per-flow state is 40 B in the flow's scratch area; the packet tier is W entries of 24 B for
 * the packets in the wheel, the heap and the sorted run of 16 B per entry (F, flow and length:
 * an eligible packet needs nothing else, and its wheel entry is free once it is eligible) and
 * the wheel, independent of the number of flows.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cal.h"
#include "ffs.h"
#include "sl_pacer_driver.h"

#define TASSEL_SLOT_NS_DEFAULT 1u
#define TASSEL_FLOW_SLOT_NS 256u                   /**< flow calendar bucket, ns */
#define TASSEL_FLOW_HORIZON_NS (64 * SL_NS_PER_MS) /**< flow calendar span, ns */
#define TASSEL_W_MIN 64u
#define TASSEL_W_MAX (UINT32_C(1) << 20)
#define TASSEL_CARRY_BITS 16u
#define TASSEL_CARRY_ONE (UINT32_C(1) << TASSEL_CARRY_BITS)
#define TASSEL_RUN_SHIFT_MAX 32u /**< packets moved at most to insert into the sorted run */

/* A flow's life in the tiers (the essay's Catch-up). */
enum tassel_flow_state {
	TF_DRY,    /**< out of the tiers, ran dry on schedule or never in: restarts at max(F, V) */
	TF_ACTIVE, /**< in the flow tier */
	TF_LATE,   /**< out of the tiers, ran dry behind V: restarts behind V, to catch up */
};

struct tassel_flow {
	uint64_t next_ns;        /**< S_flow: virtual start of the head packet, ns */
	struct sl_pacer_gap gap; /**< exact len / R with carried remainder */
	uint32_t admitted;       /**< packets it put in the packet tier, mod 2^32: with the
				  *   packets dequeued, says whether some are still there */
	uint16_t carry;          /**< batch fraction carried, 1/65536 packet */
	uint16_t state;          /**< enum tassel_flow_state */
};
static_assert(sizeof(struct tassel_flow) <= SL_PACER_FLOW_PRIV, "flow scratch area");

/*
 * A packet waiting in the wheel; its S only chose the slot it waits in. Once eligible it is an
 * entry of the eligible set (key F, id flow, aux length) and this entry is free again.
 */
struct tassel_pkt {
	uint64_t f_ns; /**< WF2Q+ virtual finish time, ns */
	uint32_t flow;
	uint32_t len;  /**< frame bytes */
	uint32_t next; /**< next packet in the same wheel slot, or free-list link */
};
static_assert(sizeof(struct tassel_pkt) == 24, "packet-tier entry");

struct tassel {
	struct sl_pacer_cal fcal;      /**< flow tier (default): calendar of S_flow, id flow */
	struct sl_pacer_heap flows;    /**< flow tier ("tassel-heap"): heap of S_flow, id flow */
	bool flow_heap;                /**< which of the two holds the flow tier */
	struct sl_pacer_heap elig;     /**< eligible packets: key F, id flow, aux length */
	struct sl_pacer_heap_ent *run; /**< [run_mask + 1] eligible packets sorted on F, a ring */
	uint32_t run_mask;             /**< ring size - 1, ring size >= w */
	uint32_t run_head;             /**< ring index of the smallest F */
	uint32_t run_n;                /**< packets in the run */
	struct tassel_pkt *pkt;        /**< [w] entries of the packets in the wheel */
	uint32_t pkt_free;             /**< free-list head */
	uint32_t pkt_used;             /**< packets in the packet tier (wheel and eligible set) */
	uint32_t w;                    /**< W, packet-tier capacity */
	uint32_t wheel_mask;           /**< slots - 1 */
	uint32_t *slot_head;           /**< [slots] packets per slot, SL_PACER_NONE when empty */
	struct sl_pacer_ffs wheel;     /**< non-empty slots */
	uint64_t slot_ns;              /**< wheel slot width, ns (a power of two) */
	unsigned slot_shift;           /**< log2(slot_ns) */
	uint64_t wheel_min;            /**< earliest occupied slot number; UINT64_MAX: empty */
	uint64_t t_base_ns;            /**< real time at which V was v_base_ns */
	uint64_t v_base_ns;            /**< V at t_base_ns */
	uint64_t scale_bps;            /**< max(link, active_bps): V runs at link / scale_bps */
	uint64_t active_bps;           /**< sum of the rates of flows in the flow tier, bps */
	bool rescale;                  /**< active_bps changed since the last rebase */
};

static inline struct tassel_flow *
tflow(const struct sl_pacer *p, uint32_t flow)
{
	return (struct tassel_flow *)(void *)sl_pacer_flow(p, flow)->priv;
}

/* Put a flow in the flow tier with key_ns (its S_flow, or later while a decision completes). */
static inline void
ft_insert(struct sl_pacer *p, struct tassel *t, uint32_t flow, uint64_t key_ns)
{
	if (t->flow_heap)
		sl_pacer_heap_push(&t->flows, key_ns, flow);
	else if (sl_pacer_cal_insert(&t->fcal, flow, key_ns))
		p->stats.beyond_horizon++;
}

/* Whether a flow is due at horizon_ns (the calendar was collected up to it). */
static inline bool
ft_due(const struct tassel *t, uint64_t horizon_ns)
{
	if (t->flow_heap)
		return !sl_pacer_heap_empty(&t->flows) &&
		       sl_pacer_heap_top(&t->flows)->key <= horizon_ns;
	return sl_pacer_cal_ready(&t->fcal);
}

/* Remove and return a flow due at horizon_ns; ft_due() was true. */
static inline uint32_t
ft_pop(struct tassel *t)
{
	uint32_t flow;

	if (!t->flow_heap)
		return sl_pacer_cal_pop(&t->fcal);
	flow = sl_pacer_heap_top(&t->flows)->id;
	sl_pacer_heap_pop(&t->flows);
	return flow;
}

/* Smallest key in the flow tier (0: some flow is already due); SL_PACER_NEVER if empty. */
static inline uint64_t
ft_next_key(const struct tassel *t)
{
	uint64_t due;

	if (t->flow_heap)
		return sl_pacer_heap_empty(&t->flows) ? SL_PACER_NEVER
						      : sl_pacer_heap_top(&t->flows)->key;
	if (sl_pacer_cal_ready(&t->fcal))
		return 0;
	due = sl_pacer_cal_next_due(&t->fcal);
	return due == UINT64_MAX ? SL_PACER_NEVER : due;
}

/* dt ns of real time in V at the current scale. */
static inline uint64_t
vspan(const struct sl_pacer *p, const struct tassel *t, uint64_t dt)
{
	if (sl_likely(t->scale_bps == p->link_bps))
		return dt;
	return (uint64_t)((unsigned __int128)dt * p->link_bps / t->scale_bps);
}

/* V at real time t_ns >= t_base_ns. */
static inline uint64_t
vtime(const struct sl_pacer *p, const struct tassel *t, uint64_t t_ns)
{
	return t->v_base_ns + vspan(p, t, t_ns - t->t_base_ns);
}

/*
 * V at an instant t_ns that may precede the last rebase: before it, V is taken back at the
 * current scale (exact while the link is not oversubscribed, else close), never below 0.
 */
static inline uint64_t
vtime_past(const struct sl_pacer *p, const struct tassel *t, uint64_t t_ns)
{
	uint64_t dv;

	if (t_ns >= t->t_base_ns)
		return vtime(p, t, t_ns);
	dv = vspan(p, t, t->t_base_ns - t_ns);
	return t->v_base_ns > dv ? t->v_base_ns - dv : 0;
}

/* Earliest real time at which V reaches v_ns. */
static inline uint64_t
rtime(const struct sl_pacer *p, const struct tassel *t, uint64_t v_ns)
{
	uint64_t dv;

	if (v_ns <= t->v_base_ns)
		return t->t_base_ns;
	dv = v_ns - t->v_base_ns;
	if (sl_likely(t->scale_bps == p->link_bps))
		return t->t_base_ns + dv;
	return t->t_base_ns +
	       (uint64_t)(((unsigned __int128)dv * t->scale_bps + p->link_bps - 1) / p->link_bps);
}

static void
rebase(struct sl_pacer *p, struct tassel *t, uint64_t now_ns)
{
	t->v_base_ns = vtime(p, t, now_ns);
	t->t_base_ns = now_ns;
	t->scale_bps = SL_MAX(p->link_bps, t->active_bps);
	t->rescale = false;
}

/* Earliest real time at which the earliest wheel slot becomes eligible (its last ns). */
static inline uint64_t
first_slot_rtime(const struct sl_pacer *p, const struct tassel *t)
{
	return rtime(p, t, (t->wheel_min + 1) * t->slot_ns - 1);
}

/*
 * The eligible set is a run sorted on F (a ring: the smallest F at run_head) plus the heap on F
 * for what the run does not take. A packet whose F is at least the run's largest is appended
 * (at 1M flows all of them: flows are decided in S order and share one rate); one among the
 * run's TASSEL_RUN_SHIFT_MAX smallest is inserted there by moving those towards the head (at
 * 16K flows half of the packets have the smallest F and a third go in between); only the others
 * cost a heap push. The packet that leaves is the smaller of the run's head and the heap's top.
 */
static inline bool
elig_empty(const struct tassel *t)
{
	return t->run_n == 0 && sl_pacer_heap_empty(&t->elig);
}

/*
 * elig_push() on a copy of the ring's head and count (*h, *n) and its base and mask, so that a
 * drain that pushes several packets keeps them in registers: stores into the ring cannot change
 * them.
 */
static inline void
run_push(struct tassel *t, struct sl_pacer_heap_ent *r, uint32_t m, uint32_t *h_io, uint32_t *n_io,
	 struct sl_pacer_heap_ent v)
{
	uint64_t f_ns = v.key;
	uint32_t h = *h_io, n = *n_io, k;

	if (n != 0 && f_ns < r[h].key) { /* the smallest F */
		h = (h - 1) & m;
		r[h] = v;
		*h_io = h;
		*n_io = n + 1;
		return;
	}
	if (n == 0 || f_ns >= r[(h + n - 1) & m].key) { /* the largest */
		r[(h + n) & m] = v;
		*n_io = n + 1;
		return;
	}
	/* Its place is among the run's TASSEL_RUN_SHIFT_MAX smallest, unless their last is <= F. */
	if (n >= TASSEL_RUN_SHIFT_MAX && r[(h + TASSEL_RUN_SHIFT_MAX - 1) & m].key <= f_ns) {
		sl_pacer_heap_push_ent(&t->elig, v);
		return;
	}
	/* Move those with F <= f_ns (equal F leave first) towards the head, then place it. */
	*h_io = (h - 1) & m;
	*n_io = n + 1;
	for (k = h; r[k].key <= f_ns; k = (k + 1) & m)
		r[(k - 1) & m] = r[k];
	r[(k - 1) & m] = v;
}

static inline void
elig_push(struct tassel *t, struct sl_pacer_heap_ent v)
{
	uint32_t h = t->run_head, n = t->run_n;

	run_push(t, t->run, t->run_mask, &h, &n, v);
	t->run_head = h;
	t->run_n = n;
}

/*
 * Remove the eligible packet with the smallest F (the run's head when it ties with the heap's
 * top) into *pkt; false when the set is empty.
 */
static inline bool
elig_pop(struct tassel *t, struct sl_pkt *pkt)
{
	const struct sl_pacer_heap_ent *e;

	if (sl_likely(sl_pacer_heap_empty(&t->elig))) {
		if (sl_unlikely(t->run_n == 0))
			return false;
	} else if (t->run_n == 0 || t->run[t->run_head].key > sl_pacer_heap_top(&t->elig)->key) {
		e = sl_pacer_heap_top(&t->elig);
		pkt->flow = e->id;
		pkt->len_bytes = e->aux;
		sl_pacer_heap_pop(&t->elig);
		return true;
	}
	e = &t->run[t->run_head];
	pkt->flow = e->id;
	pkt->len_bytes = e->aux;
	t->run_head = (t->run_head + 1) & t->run_mask;
	t->run_n--;
	return true;
}

/* The eligible-set entry of a packet leaving the wheel. */
static inline struct sl_pacer_heap_ent
pkt_ent(const struct tassel_pkt *e)
{
	return (struct sl_pacer_heap_ent){.key = e->f_ns, .id = e->flow, .aux = e->len};
}

/* Move the wheel slots [wheel_min, lim) to the eligible set, freeing their entries. */
static void
drain_slots(struct tassel *t, uint64_t lim)
{
	struct sl_pacer_heap_ent *r = t->run;
	struct tassel_pkt *pkt = t->pkt;
	uint32_t *slot_head = t->slot_head;
	uint32_t m = t->run_mask, wm = t->wheel_mask, h = t->run_head, n = t->run_n;
	uint64_t s = t->wheel_min;

	while (s < lim) {
		uint32_t idx = (uint32_t)(s & wm), next, i = slot_head[idx];

		for (;;) {
			run_push(t, r, m, &h, &n, pkt_ent(&pkt[i]));
			if (pkt[i].next == SL_PACER_NONE)
				break;
			i = pkt[i].next;
		}
		pkt[i].next = t->pkt_free; /* the slot's list joins the free list whole */
		t->pkt_free = slot_head[idx];
		slot_head[idx] = SL_PACER_NONE;
		next = sl_pacer_ffs_clear_next(&t->wheel, idx);
		s = next == SL_PACER_FFS_NONE ? UINT64_MAX : s + ((next - idx) & wm);
	}
	t->wheel_min = s;
	t->run_head = h;
	t->run_n = n;
}

/*
 * When the first occupied wheel slot holds one packet, take it out of the wheel into *v (its
 * entry freed, the slot emptied, the next occupied slot found) and return true.
 */
static inline bool
take_lone(struct tassel *t, struct sl_pacer_heap_ent *v)
{
	uint64_t s = t->wheel_min;
	uint32_t idx = (uint32_t)(s & t->wheel_mask), i = t->slot_head[idx], next;

	if (t->pkt[i].next != SL_PACER_NONE)
		return false;
	*v = pkt_ent(&t->pkt[i]);
	t->pkt[i].next = t->pkt_free;
	t->pkt_free = i;
	t->slot_head[idx] = SL_PACER_NONE;
	next = sl_pacer_ffs_clear_next(&t->wheel, idx);
	t->wheel_min = next == SL_PACER_FFS_NONE ? UINT64_MAX : s + ((next - idx) & t->wheel_mask);
	return true;
}

/*
 * Move the wheel slots [wheel_min, lim) to the eligible set: lone packets, the common case, here,
 * and from the first slot that holds several on, drain_slots(), whose call and loop cost more.
 */
static inline void
drain_lone(struct tassel *t, uint64_t lim)
{
	struct sl_pacer_heap_ent v;

	while (t->wheel_min < lim) {
		if (!take_lone(t, &v)) {
			drain_slots(t, lim);
			return;
		}
		elig_push(t, v);
	}
}

/*
 * Move every wheel slot whose last ns is <= v_ns to the eligible set and return the first slot
 * number not moved. The earliest occupied slot is cached, so the common call (nothing due yet)
 * is one compare, inline. V only grows (now_ns does, and V is continuous across a rebase and
 * frozen by a pause), so the slots below the returned one stay moved: a packet admitted into
 * one of them is eligible at once.
 */
static inline uint64_t
drain(struct tassel *t, uint64_t v_ns)
{
	uint64_t lim = (v_ns + 1) >> t->slot_shift;

	drain_lone(t, lim);
	return lim;
}

/*
 * drain() for a pick (lim: the first slot not due at its V). When the first due slot holds one
 * packet, no other slot is due and that packet has the smallest F of the eligible set (below the
 * run's head, not above the heap's top), it is the pick: it is returned without the push into the
 * run and the pop out of it, which would leave the run as it was (an empty run's head moves on by
 * one, as the pop would move it). Else the due slots are drained (drain_lone()) and false is
 * returned.
 */
static bool
drain_pick(struct tassel *t, uint64_t lim, struct sl_pkt *pkt)
{
	struct sl_pacer_heap_ent v;

	if (!take_lone(t, &v)) {
		drain_slots(t, lim);
		return false;
	}
	if (t->wheel_min >= lim && (t->run_n == 0 || v.key < t->run[t->run_head].key) &&
	    (sl_pacer_heap_empty(&t->elig) || v.key <= sl_pacer_heap_top(&t->elig)->key)) {
		if (t->run_n == 0)
			t->run_head = (t->run_head + 1) & t->run_mask;
		pkt->flow = v.id;
		pkt->len_bytes = v.aux;
		return true;
	}
	elig_push(t, v); /* the first of those due: drained first */
	drain_lone(t, lim);
	return false;
}

static inline __attribute__((always_inline)) uint64_t
tassel_pick(struct sl_pacer *p, uint64_t tau_ns, struct sl_pkt *pkt)
{
	struct tassel *t = p->impl;
	uint64_t lim = (vtime(p, t, tau_ns) + 1) >> t->slot_shift; /* first slot not due */

	if (!(t->wheel_min < lim && drain_pick(t, lim, pkt)) && sl_unlikely(!elig_pop(t, pkt)))
		return t->pkt_used == 0 ? SL_PACER_NEVER
					: SL_MAX(first_slot_rtime(p, t), tau_ns + 1);
	t->pkt_used--;
	return 0;
}

/* Packets the flow may send in one lookahead: max(1, floor(R * L / len)) with carry. */
static inline uint32_t
batch(struct sl_pacer *p, struct tassel_flow *tf, uint64_t rate_bps, uint32_t wire_bytes,
      uint64_t l_ns)
{
	uint64_t one = (uint64_t)wire_bytes * 8 * SL_NS_PER_S; /* one packet, bits * ns / s */
	uint64_t rl64, units;
	uint32_t n;

	/* R * L in the same unit: in 64 bits unless it overflows, which only a large batch does */
	if (!__builtin_mul_overflow(rate_bps, l_ns, &rl64) && rl64 < one) {
		tf->carry = 0;
		return 1;
	}
	units = (uint64_t)((((unsigned __int128)rate_bps * l_ns) << TASSEL_CARRY_BITS) / one) +
		tf->carry;
	n = (uint32_t)SL_MIN(units >> TASSEL_CARRY_BITS, (uint64_t)UINT32_MAX);
	tf->carry = (uint16_t)(units & (TASSEL_CARRY_ONE - 1));
	if (p->conf.batch_max != 0 && n > p->conf.batch_max)
		n = p->conf.batch_max;
	return n;
}

/* A flow runs dry at V = v_ns: late if its schedule (F of its last packet) is behind V. */
static void
flow_leave(struct tassel *t, struct sl_pacer_flow *f, struct tassel_flow *tf, uint64_t v_ns)
{
	tf->state = tf->next_ns < v_ns ? TF_LATE : TF_DRY;
	t->active_bps -= f->rate_bps;
	t->rescale = true;
}

/* Flow tier: decide every flow whose S_flow <= V + L whose last decision has completed. */
static void
admit(struct sl_pacer *p, struct tassel *t, uint64_t now_ns)
{
	uint64_t v = vtime(p, t, now_ns);
	uint64_t l_ns = sl_pacer_lookahead_ns(p);
	uint64_t horizon = v + l_ns;
	uint64_t next_slot = drain(t, v); /* admitted below it: eligible at once */

	if (!t->flow_heap) {
		/*
		 * The calendar has released every bucket up to its cursor, possibly for a longer
		 * L than now (L is re-measured): flows released then are decided at that horizon,
		 * so none goes back to the ready list and comes out again in this loop.
		 */
		sl_pacer_cal_collect(&t->fcal, horizon);
		horizon = SL_MAX(horizon, t->fcal.cur * TASSEL_FLOW_SLOT_NS - 1);
	}
	while (ft_due(t, horizon)) {
		uint32_t flow, n;
		struct sl_pacer_flow *f;
		struct tassel_flow *tf;
		bool caught_up = false;

		if (sl_unlikely(t->pkt_used == t->w)) {
			p->stats.imminent_full++;
			return;
		}
		flow = ft_pop(t);
		f = sl_pacer_flow(p, flow);
		tf = tflow(p, flow);
		if (sl_unlikely(tf->next_ns > horizon)) { /* parked beyond the calendar */
			ft_insert(p, t, flow, tf->next_ns);
			continue;
		}
		p->stats.decisions++;
		n = batch(p, tf, f->rate_bps, sl_pacer_wire_bytes(p, f->q_len), l_ns);
		/*
		 * The first packet is imminent (not parked), has room (checked above) and is within
		 * the batch (N >= 1), so the tests come after each packet, for the next one.
		 */
		for (;;) {
			uint64_t s = tf->next_ns, slot = s >> t->slot_shift, f_ns;

			/*
			 * The batch counts packets still ahead of V. One already due (the decision
			 * came late: a slow loop, a stall of the caller) is caught up without
			 * counting, unless batch_max caps every fetch (the "N = 1" experiment).
			 */
			if (s >= v || p->conf.batch_max != 0)
				n--;
			f_ns = s + sl_pacer_gap_ns(&tf->gap, sl_pacer_wire_bytes(p, f->q_len),
						   f->rate_bps);
			t->pkt_used++;
			__builtin_prefetch(&p->ctr[flow], 1); /* counted when it leaves */
			tf->next_ns = f_ns;
			tf->admitted++;
			if (slot < next_slot) {
				elig_push(t, (struct sl_pacer_heap_ent){
						     .key = f_ns, .id = flow, .aux = f->q_len});
			} else {
				uint32_t idx = (uint32_t)(slot & t->wheel_mask), i = t->pkt_free;
				struct tassel_pkt *e = &t->pkt[i];

				t->pkt_free = e->next;
				e->f_ns = f_ns;
				e->flow = flow;
				e->len = f->q_len;
				e->next = t->slot_head[idx];
				t->slot_head[idx] = i;
				sl_pacer_ffs_set(&t->wheel, idx);
				t->wheel_min = SL_MIN(t->wheel_min, slot);
			}
			if (sl_likely(f->q_cnt > 1)) /* sl_pacer_q_pop() within the head run */
				f->q_cnt--;
			else if (sl_pacer_q_pop(p, f)) {
				flow_leave(t, f, tf, v);
				goto next_flow;
			}
			if (f_ns > horizon || t->pkt_used == t->w) {
				caught_up = f_ns > horizon;
				break;
			}
			if (n == 0 && (f_ns >= v || p->conf.batch_max != 0))
				break;
		}
		if (caught_up)
			tf->carry = 0;
		/*
		 * Next decision when the first packet not admitted enters the window, but not
		 * before this decision has completed, one L from now: key - L >= v + L. (The
		 * calendar decides a bucket once its last ns is due, so the key is moved back by
		 * a bucket less one ns: the decision period stays L, not L plus a bucket.)
		 */
		ft_insert(p, t, flow,
			  SL_MAX(tf->next_ns,
				 horizon + l_ns - (t->flow_heap ? 0 : TASSEL_FLOW_SLOT_NS - 1)));
	next_flow:;
	}
}

static unsigned
tassel_dequeue(struct sl_pacer *p, uint64_t now_ns, struct sl_pkt *out, unsigned max)
{
	struct tassel *t = p->impl;
	unsigned n = sl_pacer_release_inline(p, p->last_now_ns, now_ns, out, max, tassel_pick);

	if (t->rescale)
		rebase(p, t, now_ns);
	admit(p, t, now_ns);
	return n + sl_pacer_release_inline(p, now_ns, now_ns, out + n, max - n, tassel_pick);
}

static uint64_t
tassel_next_deadline(const struct sl_pacer *p)
{
	const struct tassel *t = p->impl;
	uint64_t from = SL_MAX(p->link_free_ns, p->last_now_ns), d = SL_PACER_NEVER;

	if (!elig_empty(t)) {
		d = from;
	} else if (t->pkt_used > 0) {
		d = SL_MAX(first_slot_rtime(p, t), from);
	}
	if (t->pkt_used < t->w) {
		uint64_t key = ft_next_key(t), l_ns = sl_pacer_lookahead_ns(p);

		if (key != SL_PACER_NEVER)
			d = SL_MIN(d, SL_MAX(rtime(p, t, key > l_ns ? key - l_ns : 0),
					     p->last_now_ns));
	}
	return d;
}

static void
tassel_activate(struct sl_pacer *p, uint32_t flow)
{
	struct tassel *t = p->impl;
	struct tassel_flow *tf = tflow(p, flow);
	uint64_t v = vtime(p, t, SL_MAX(sl_pacer_now(p), t->t_base_ns));

	/*
	 * WF2Q+: an idle flow restarts at max(F of its last packet, V), no credit for idling; one
	 * that ran dry late, at max(F, V - catchup_ns) (see the essay). Late, too, is the part of
	 * its lag it spent with packets still in the packet tier: up to when its last one left
	 * (now, if one is still there).
	 */
	uint64_t behind_ns = tf->next_ns < v ? v - tf->next_ns : 0, late_ns = 0, credit_ns;

	if (tf->state == TF_LATE) {
		late_ns = behind_ns;
	} else if (tf->next_ns != 0) { /* 0: it never sent */
		bool in_tier = tf->admitted != (uint32_t)p->ctr[flow].tx_pkts;
		uint64_t left_v = in_tier ? v : SL_MIN(vtime_past(p, t, p->ctr[flow].left_ns), v);

		late_ns = left_v > tf->next_ns ? left_v - tf->next_ns : 0;
		p->stats.idle_ns += behind_ns - late_ns;
	}
	credit_ns = SL_MIN(p->conf.catchup_ns, late_ns);
	if (late_ns != 0) {
		p->stats.catchup_restarts++;
		p->stats.catchup_lost_ns += late_ns - credit_ns;
	}
	tf->next_ns = SL_MAX(tf->next_ns, v - credit_ns);
	tf->state = TF_ACTIVE;
	ft_insert(p, t, flow, tf->next_ns);
	t->active_bps += sl_pacer_flow(p, flow)->rate_bps;
	t->rescale = true;
}

/*
 * A new owner: no catch-up from the old owner's stall; and, unless packets of the old one are
 * still in the tiers, no schedule either: it starts at V like a flow that never sent.
 */
static void
tassel_flow_reset(struct sl_pacer *p, uint32_t flow)
{
	struct tassel_flow *tf = tflow(p, flow);

	if (tf->state != TF_ACTIVE) {
		tf->state = TF_DRY;
		tf->next_ns = 0;
		tf->carry = 0;
	}
}

static void
tassel_rate_changed(struct sl_pacer *p, uint32_t flow, uint64_t old_bps)
{
	struct tassel *t = p->impl;
	struct tassel_flow *tf = tflow(p, flow);

	sl_pacer_gap_reset(&tf->gap);
	tf->carry = 0;
	if (tf->state == TF_ACTIVE) {
		t->active_bps += sl_pacer_flow(p, flow)->rate_bps - old_bps;
		t->rescale = true;
	}
}

static void
tassel_pause(struct sl_pacer *p, uint64_t now_ns, bool paused)
{
	struct tassel *t = p->impl;

	if (paused) {
		rebase(p, t, now_ns); /* V stops here */
	} else {
		t->t_base_ns = now_ns; /* and resumes from the same V */
	}
}

static void
tassel_fini(struct sl_pacer *p)
{
	struct tassel *t = p->impl;

	if (t == NULL)
		return;
	sl_pacer_cal_fini(&t->fcal);
	sl_pacer_heap_fini(&t->flows);
	sl_pacer_heap_fini(&t->elig);
	sl_pacer_ffs_fini(&t->wheel);
	free(t->pkt);
	free(t->run);
	free(t->slot_head);
	free(t);
	p->impl = NULL;
}

static int
tassel_init(struct sl_pacer *p, bool flow_heap)
{
	struct tassel *t = calloc(1, sizeof(*t));
	uint64_t slots, w;
	int rc = -ENOMEM;

	if (t == NULL)
		return -ENOMEM;
	p->impl = t;
	t->flow_heap = flow_heap;
	t->slot_ns = p->conf.slot_ns ? p->conf.slot_ns : TASSEL_SLOT_NS_DEFAULT;
	t->slot_shift = (unsigned)__builtin_ctzll(t->slot_ns);
	slots = sl_align_pow2(SL_MAX(p->conf.lookahead_max_ns / t->slot_ns + 3, 64));
	w = p->conf.imminent_max;
	if (w == 0) /* packets of 64 B at link rate within L_max */
		w = p->link_bps / ((64 + p->overhead_bytes) * 8) * p->conf.lookahead_max_ns /
		    SL_NS_PER_S;
	w = SL_MIN(SL_MAX(w, TASSEL_W_MIN), TASSEL_W_MAX);
	if (slots > (UINT64_C(1) << 24) || !sl_is_pow2(t->slot_ns)) {
		rc = -EINVAL;
		goto fail;
	}
	t->w = (uint32_t)w;
	t->wheel_mask = (uint32_t)slots - 1;
	t->wheel_min = UINT64_MAX;
	t->scale_bps = p->link_bps;
	t->pkt = calloc(t->w, sizeof(*t->pkt));
	t->run_mask = (uint32_t)sl_align_pow2(t->w) - 1;
	t->run = malloc(sizeof(*t->run) * ((size_t)t->run_mask + 1));
	t->slot_head = malloc(sizeof(*t->slot_head) * slots);
	if (t->pkt == NULL || t->run == NULL || t->slot_head == NULL)
		goto fail;
	memset(t->slot_head, 0xff, sizeof(*t->slot_head) * slots);
	for (uint32_t i = 0; i < t->w; i++)
		t->pkt[i].next = i + 1 < t->w ? i + 1 : SL_PACER_NONE;
	rc = sl_pacer_ffs_init(&t->wheel, (uint32_t)slots);
	if (rc == 0 && flow_heap)
		rc = sl_pacer_heap_init(&t->flows, p->max_flows, 0);
	if (rc == 0 && !flow_heap)
		rc = sl_pacer_cal_init(&t->fcal, TASSEL_FLOW_SLOT_NS, TASSEL_FLOW_HORIZON_NS,
				       p->max_flows, false);
	if (rc == 0)
		rc = sl_pacer_heap_init(&t->elig, t->w, 0);
	if (rc == 0)
		return 0;
fail:
	tassel_fini(p);
	return rc;
}

static size_t
tassel_mem_bytes(const struct sl_pacer *p)
{
	const struct tassel *t = p->impl;

	return sizeof(*t) +
	       (t->flow_heap ? sl_pacer_heap_mem_bytes(&t->flows, 0)
			     : sl_pacer_cal_mem_bytes(&t->fcal, p->max_flows)) +
	       sl_pacer_heap_mem_bytes(&t->elig, 0) + (size_t)t->w * sizeof(*t->pkt) +
	       ((size_t)t->run_mask + 1) * sizeof(*t->run) +
	       (size_t)(t->wheel_mask + 1) * sizeof(*t->slot_head) +
	       sl_pacer_ffs_mem_bytes(&t->wheel);
}

static int
tassel_init_cal(struct sl_pacer *p)
{
	return tassel_init(p, false);
}

static int
tassel_init_heap(struct sl_pacer *p)
{
	return tassel_init(p, true);
}

/* The default: the flow tier is an FFS calendar. */
const struct sl_pacer_ops sl_pacer_tassel_ops = {
	.dequeue = tassel_dequeue,
	.next_deadline = tassel_next_deadline,
	.activate = tassel_activate,
	.rate_changed = tassel_rate_changed,
	.flow_reset = tassel_flow_reset,
	.pause = tassel_pause,
	.init = tassel_init_cal,
	.fini = tassel_fini,
	.mem_bytes = tassel_mem_bytes,
	.name = "tassel",
};

/* The same pacer with the flow tier in a 4-ary heap (the P-heap analogue), for comparison. */
static const struct sl_pacer_ops tassel_heap_ops = {
	.dequeue = tassel_dequeue,
	.next_deadline = tassel_next_deadline,
	.activate = tassel_activate,
	.rate_changed = tassel_rate_changed,
	.flow_reset = tassel_flow_reset,
	.pause = tassel_pause,
	.init = tassel_init_heap,
	.fini = tassel_fini,
	.mem_bytes = tassel_mem_bytes,
	.name = "tassel-heap",
};

SL_PACER_REGISTER(sl_pacer_tassel_ops)
SL_PACER_REGISTER(tassel_heap_ops)
