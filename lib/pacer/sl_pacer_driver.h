/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_pacer_driver.h - what a pacer implementation sees: the ops table, the shared flow FIFOs,
 * the modelled link and the release loop. Users include sl_pacer.h only.
 *
 * Shared parts, so that every implementation runs on the same flow queues and the same link:
 *   - struct sl_pacer_flow (64 B): rate, the head run of the FIFO (count x length), the chain
 *     of spare runs for packets of another length, and SL_PACER_FLOW_PRIV bytes of per-flow
 *     scratch for the implementation (static_assert in each implementation);
 *   - the link: busy until link_free_ns, each packet occupying (len + overhead) * 8 / link_bps
 *     ns with the sub-ns remainder carried (no drift: 64 B at 100 Gbps is 6.72 ns);
 *   - sl_pacer_release(): the loop that sends, while the link is free and no later than now,
 *     the packet the implementation picks at that instant, and stamps it with that instant.
 */
#ifndef SL_PACER_DRIVER_H
#define SL_PACER_DRIVER_H

#include <stdalign.h>
#include <stdint.h>

#include "sl_pacer.h"
#include "sl_time.h"
#include "sl_common.h"

#define SL_PACER_FLOW_PRIV 40u
#define SL_PACER_NONE UINT32_MAX

/*
 * Exact serialization times at one rate: ns for len at rate, with the remainder carried in
 * units of 1/rate_bps ns so a long run of packets never drifts. The last length's quotient and
 * remainder are cached so a repeated length costs no division.
 */
struct sl_pacer_gap {
	uint64_t rem;       /**< carried remainder, (bits * 1e9) mod rate: in 1/rate_bps ns */
	uint64_t len_rem;   /**< remainder for len_bytes, same unit */
	uint32_t len_ns;    /**< whole ns for len_bytes */
	uint32_t len_bytes; /**< cached wire length, bytes (0: none) */
};

static inline void
sl_pacer_gap_reset(struct sl_pacer_gap *g)
{
	g->rem = 0;
	g->len_bytes = 0;
}

/* ns to add for one packet of wire_bytes at rate_bps; wire_bytes * 8e9 / rate_bps < 2^32. */
static inline uint64_t
sl_pacer_gap_ns(struct sl_pacer_gap *g, uint32_t wire_bytes, uint64_t rate_bps)
{
	uint64_t ns;

	if (sl_unlikely(g->len_bytes != wire_bytes)) {
		uint64_t bits_ns = (uint64_t)wire_bytes * 8 * SL_NS_PER_S;

		g->len_bytes = wire_bytes;
		g->len_ns = (uint32_t)(bits_ns / rate_bps);
		g->len_rem = bits_ns % rate_bps;
	}
	ns = g->len_ns;
	g->rem += g->len_rem;
	if (g->rem >= rate_bps) {
		g->rem -= rate_bps;
		ns++;
	}
	return ns;
}

struct sl_pacer_flow {
	uint64_t rate_bps;    /**< rate, bps (0: never set) */
	uint32_t q_cnt;       /**< packets in the head run */
	uint32_t q_len;       /**< frame bytes of each head-run packet */
	uint32_t q_more;      /**< first spare run behind the head run, or SL_PACER_NONE */
	uint32_t q_more_tail; /**< last spare run, or SL_PACER_NONE */
	alignas(8) uint8_t priv[SL_PACER_FLOW_PRIV]; /**< implementation scratch */
};
static_assert(sizeof(struct sl_pacer_flow) == 64, "one cache line per flow");

/* Packets of one length behind a flow's head run. */
struct sl_pacer_run {
	uint32_t cnt;  /**< packets */
	uint32_t len;  /**< frame bytes each */
	uint32_t next; /**< next run of the flow, or free-list link */
};

struct sl_pacer_flow_ctr {
	uint64_t tx_pkts;  /**< packets dequeued */
	uint64_t tx_bytes; /**< frame bytes dequeued */
	uint64_t left_ns;  /**< departure time of the last one, ns */
};

struct sl_pacer_ops {
	/* Fast path. */
	/** (required) Packets due by now_ns; usually calls sl_pacer_release(). */
	unsigned (*dequeue)(struct sl_pacer *p, uint64_t now_ns, struct sl_pkt *out, unsigned max);
	/** (required) Earliest time dequeue can return a packet or has work; SL_PACER_NEVER. */
	uint64_t (*next_deadline)(const struct sl_pacer *p);
	/** (required) The flow's FIFO went from empty to non-empty. */
	void (*activate)(struct sl_pacer *p, uint32_t flow);
	/** (required) The flow's rate changed (f->rate_bps holds the new one). */
	void (*rate_changed)(struct sl_pacer *p, uint32_t flow, uint64_t old_bps);
	/** (optional) A new owner takes the flow: forget its history (sl_pacer_flow_reset). */
	void (*flow_reset)(struct sl_pacer *p, uint32_t flow);
	/** (optional) TX stall begins or ends (after the generic state is updated). */
	void (*pause)(struct sl_pacer *p, uint64_t now_ns, bool paused);
	/* Slow path. */
	/** (required) Allocate p->impl from p->conf; 0 or -errno. */
	int (*init)(struct sl_pacer *p);
	/** (required) Release p->impl. */
	void (*fini)(struct sl_pacer *p);
	/** (required) Bytes of implementation state. */
	size_t (*mem_bytes)(const struct sl_pacer *p);
	char name[SL_PACER_NAME_MAX];
};

struct sl_pacer {
	const struct sl_pacer_ops *ops;
	void *impl;                    /**< implementation state */
	struct sl_pacer_flow *flows;   /**< [max_flows], cache aligned */
	struct sl_pacer_flow_ctr *ctr; /**< [max_flows] */
	struct sl_pacer_run *runs;     /**< [n_runs] */
	uint32_t runs_free;            /**< free-list head or SL_PACER_NONE */
	uint32_t max_flows;
	uint32_t n_runs;
	uint32_t overhead_bytes;      /**< wire bytes per packet beyond its frame */
	uint64_t link_bps;            /**< modelled link rate, bps */
	uint64_t link_free_ns;        /**< the link is busy until then, ns */
	struct sl_pacer_gap link_gap; /**< exact serialization at link_bps */
	uint64_t last_now_ns;         /**< now_ns of the previous dequeue call */
	uint64_t clock_ns;            /**< the latest time sl_pacer_clock told, ns */
	uint64_t call_gap_sum_ns;     /**< dequeue call periods summed over this window, ns */
	uint32_t call_count;          /**< calls in this window */
	uint64_t lookahead_meas_ns;   /**< L measured over the last full window, ns */
	bool paused;                  /**< TX stalled */
	struct sl_pacer_conf conf;    /**< as given, defaults filled in */
	struct sl_pacer_stats stats;
};

/*
 * The caller's time as the pacer last heard it, ns: a dequeue's now_ns, or a later
 * sl_pacer_clock's. A flow that becomes active starts here (its activate hook's "now").
 */
static inline uint64_t
sl_pacer_now(const struct sl_pacer *p)
{
	return SL_MAX(p->last_now_ns, p->clock_ns);
}

static inline struct sl_pacer_flow *
sl_pacer_flow(const struct sl_pacer *p, uint32_t flow)
{
	return &p->flows[flow];
}

static inline uint32_t
sl_pacer_wire_bytes(const struct sl_pacer *p, uint32_t len_bytes)
{
	return len_bytes + p->overhead_bytes;
}

/*
 * Account a departure at tau_ns: stamp it, count it for its flow and occupy the link for its
 * wire time. Returns the instant the link is free again.
 */
static inline uint64_t
sl_pacer_emit(struct sl_pacer *p, struct sl_pkt *pkt, uint64_t tau_ns)
{
	struct sl_pacer_flow_ctr *c = &p->ctr[pkt->flow];

	pkt->tx_ns = tau_ns;
	c->tx_pkts++;
	c->tx_bytes += pkt->len_bytes;
	c->left_ns = tau_ns;
	p->stats.tx_pkts++;
	p->link_free_ns =
		tau_ns +
		sl_pacer_gap_ns(&p->link_gap, sl_pacer_wire_bytes(p, pkt->len_bytes), p->link_bps);
	return p->link_free_ns;
}

/* Remove the head packet of a non-empty FIFO; returns true when the FIFO is now empty. */
bool sl_pacer_q_pop(struct sl_pacer *p, struct sl_pacer_flow *f);

/*
 * The implementation's choice at instant tau_ns (the link is free then): fill *pkt (flow,
 * len_bytes) and return 0, or return the earliest instant > tau_ns at which a packet can be
 * eligible (SL_PACER_NEVER if none). Must not pick a packet that is not eligible at tau_ns.
 */
typedef uint64_t (*sl_pacer_pick_t)(struct sl_pacer *p, uint64_t tau_ns, struct sl_pkt *pkt);

/*
 * Send packets at successive link-free instants in [from_ns, now_ns], each chosen by pick at
 * its instant; counts them and advances the link. Returns the number written to out.
 * sl_pacer_release() is this loop out of line; an implementation that calls the inline form
 * with its own pick gets the pick inlined into the loop, with the same result.
 */
static inline unsigned
sl_pacer_release_inline(struct sl_pacer *p, uint64_t from_ns, uint64_t now_ns, struct sl_pkt *out,
			unsigned max, sl_pacer_pick_t pick)
{
	uint64_t tau = SL_MAX(p->link_free_ns, from_ns);
	struct sl_pkt *o = out, *end = out + max;

	if (max == 0)
		return 0;
	while (tau <= now_ns) {
		uint64_t next = pick(p, tau, o);

		if (next != 0) {
			tau = next;
			continue;
		}
		tau = sl_pacer_emit(p, o, tau);
		if (++o == end)
			break;
	}
	return (unsigned)(o - out);
}

unsigned sl_pacer_release(struct sl_pacer *p, uint64_t from_ns, uint64_t now_ns, struct sl_pkt *out,
			  unsigned max, sl_pacer_pick_t pick);

/*
 * Register a pacer: 0, -EINVAL (NULL, a required hook missing, an empty or unterminated name),
 * -EEXIST (name taken), -ENOSPC (table full). Built-in and baseline pacers register alike.
 */
int sl_pacer_register(const struct sl_pacer_ops *ops);
const struct sl_pacer_ops *sl_pacer_find(const char *name);

/* Registrations that failed in SL_PACER_REGISTER constructors (tests check it is 0). */
unsigned sl_pacer_register_failures(void);

/* Constructor helper behind SL_PACER_REGISTER: registers and counts failures. */
void sl_pacer_register_ctor(const struct sl_pacer_ops *ops);

/* Register ops at program start (a constructor); failures are counted, see above. */
#define SL_PACER_REGISTER(ops)                                                                     \
	__attribute__((constructor)) static void sl_pacer_register_##ops(void)                     \
	{                                                                                          \
		sl_pacer_register_ctor(&(ops));                                                    \
	}

/* The default implementation (tassel.c), registered like any other. */
extern const struct sl_pacer_ops sl_pacer_tassel_ops;

/*
 * A 4-ary min-heap of (key, id), the software stand-in for Tassel's pipelined
 * P-heap and the sorter of the one-packet-per-sort baselines.
 *
 * Four children per node halve the depth of a binary heap (10 levels at 1M entries) and the
 * four child keys share one 64 B line when the node index is aligned, so a sift-down costs
 * about one cache miss per level. Entries are 16 B. An optional position array (one uint32_t
 * per id) supports changing or removing an arbitrary id; without it only the top moves.
 * Capacity is fixed at init: nothing allocates after that.
 */
#define SL_PACER_HEAP_ARITY 4u
#define SL_PACER_HEAP_NPOS UINT32_MAX

struct sl_pacer_heap_ent {
	uint64_t key; /**< ordering key, in the owner's unit (ns) */
	uint32_t id;  /**< owner's identifier */
	uint32_t aux; /**< a second word the owner may carry with id (0 unless given) */
};

struct sl_pacer_heap {
	struct sl_pacer_heap_ent *e; /**< [cap], cache aligned */
	uint32_t *pos;               /**< [n_ids] index of each id, or NULL */
	uint32_t n;                  /**< entries */
	uint32_t cap;                /**< capacity, entries */
};

/* 0 or -ENOMEM; n_ids 0 means no position array. */
int sl_pacer_heap_init(struct sl_pacer_heap *h, uint32_t cap, uint32_t n_ids);
void sl_pacer_heap_fini(struct sl_pacer_heap *h);
size_t sl_pacer_heap_mem_bytes(const struct sl_pacer_heap *h, uint32_t n_ids);

static inline void
sl_pacer_heap_place(struct sl_pacer_heap *h, uint32_t i, struct sl_pacer_heap_ent v)
{
	h->e[i] = v;
	if (h->pos != NULL)
		h->pos[v.id] = i;
}

static inline void
sl_pacer_heap_sift_up(struct sl_pacer_heap *h, uint32_t i, struct sl_pacer_heap_ent v)
{
	while (i > 0) {
		uint32_t parent = (i - 1) / SL_PACER_HEAP_ARITY;

		if (h->e[parent].key <= v.key)
			break;
		sl_pacer_heap_place(h, i, h->e[parent]);
		i = parent;
	}
	sl_pacer_heap_place(h, i, v);
}

static inline void
sl_pacer_heap_sift_down(struct sl_pacer_heap *h, uint32_t i, struct sl_pacer_heap_ent v)
{
	for (;;) {
		uint32_t c = i * SL_PACER_HEAP_ARITY + 1,
			 end = SL_MIN(c + SL_PACER_HEAP_ARITY, h->n);
		uint32_t best = i;
		uint64_t best_key = v.key;

		for (; c < end; c++) {
			if (h->e[c].key < best_key) {
				best = c;
				best_key = h->e[c].key;
			}
		}
		if (best == i)
			break;
		sl_pacer_heap_place(h, i, h->e[best]);
		i = best;
	}
	sl_pacer_heap_place(h, i, v);
}

static inline bool
sl_pacer_heap_empty(const struct sl_pacer_heap *h)
{
	return h->n == 0;
}

static inline const struct sl_pacer_heap_ent *
sl_pacer_heap_top(const struct sl_pacer_heap *h)
{
	return &h->e[0];
}

/* The caller keeps n < cap. */
static inline void
sl_pacer_heap_push_ent(struct sl_pacer_heap *h, struct sl_pacer_heap_ent v)
{
	sl_pacer_heap_sift_up(h, h->n++, v);
}

static inline void
sl_pacer_heap_push(struct sl_pacer_heap *h, uint64_t key, uint32_t id)
{
	sl_pacer_heap_push_ent(h, (struct sl_pacer_heap_ent){.key = key, .id = id});
}

static inline void
sl_pacer_heap_pop(struct sl_pacer_heap *h)
{
	struct sl_pacer_heap_ent last = h->e[--h->n];

	if (h->pos != NULL)
		h->pos[h->e[0].id] = SL_PACER_HEAP_NPOS;
	if (h->n > 0)
		sl_pacer_heap_sift_down(h, 0, last);
}

/* Give the top a new key (a pop plus a push in one sift). */
static inline void
sl_pacer_heap_retop(struct sl_pacer_heap *h, uint64_t key)
{
	struct sl_pacer_heap_ent v = h->e[0];

	v.key = key;
	sl_pacer_heap_sift_down(h, 0, v);
}

static inline bool
sl_pacer_heap_has(const struct sl_pacer_heap *h, uint32_t id)
{
	return h->pos[id] != SL_PACER_HEAP_NPOS;
}

/* Change the key of a present id (needs the position array). */
void sl_pacer_heap_update(struct sl_pacer_heap *h, uint32_t id, uint64_t key);

/* Remove a present id (needs the position array). */
void sl_pacer_heap_remove(struct sl_pacer_heap *h, uint32_t id);

/*
 * The timestamp-wheel pacing engine shared by the Carousel and Eiffel cFFS
 * baselines (drivers/pacer/carousel, drivers/pacer/cffs); see tsw.c for the model.
 */
enum sl_pacer_tsw_find {
	SL_PACER_TSW_SCAN, /**< Carousel: visit every slot as time passes */
	SL_PACER_TSW_FFS,  /**< Eiffel cFFS: jump to the next non-empty bucket */
};

/* ops->init for a wheel with conf.slot_ns slots over conf.horizon_ns; 0 or -errno. */
int sl_pacer_tsw_init(struct sl_pacer *p, enum sl_pacer_tsw_find find);

unsigned sl_pacer_tsw_dequeue(struct sl_pacer *p, uint64_t now_ns, struct sl_pkt *out,
			      unsigned max);
uint64_t sl_pacer_tsw_next_deadline(const struct sl_pacer *p);
void sl_pacer_tsw_activate(struct sl_pacer *p, uint32_t flow);
void sl_pacer_tsw_rate_changed(struct sl_pacer *p, uint32_t flow, uint64_t old_bps);
void sl_pacer_tsw_fini(struct sl_pacer *p);
size_t sl_pacer_tsw_mem_bytes(const struct sl_pacer *p);

#endif /* SL_PACER_DRIVER_H */
