/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * impair_engine.c - seeded, measurable impairment of one frame stream.
 *
 * The model. A frame offered at now_ns passes these stages, in this order; a stage that drops
 * it frees it through ops->free and counts the cause:
 *
 *   1. drop_idx   deterministic: the frame whose 0-based offer index is listed is dropped.
 *   2. loss       Bernoulli: dropped with probability `loss`.
 *   3. GE         Gilbert-Elliott two-state channel (Gilbert 1960, Elliott 1963). Per frame the
 *                 state moves good->bad with probability ge_p and bad->good with ge_r, then the
 *                 frame survives with probability ge_k (good) or ge_h (bad). Stationary loss is
 *                 (ge_p (1 - ge_h) + ge_r (1 - ge_k)) / (ge_p + ge_r); with ge_h = 0, ge_k = 1
 *                 (the defaults) loss bursts are the bad sojourns, of mean length 1 / ge_r.
 *   4. BER        every bit flips independently with probability `ber`. The gap to the next
 *                 flipped bit is drawn geometrically and carried across frames, so the cost is
 *                 one compare per clean frame. corrupt=drop drops a frame with any flip (a NIC
 *                 checking the FCS); corrupt=deliver flips the bits (ops->corrupt) and delivers.
 *   5. dup        with probability `dup` a copy (ops->clone) follows the frame.
 *   6. reorder    with probability `reorder` the frame is held back until reorder_gap later
 *                 frames have passed, then follows them.
 *   7. rate cap   token bucket of burst_bytes filled at rate_bps, FIFO: a frame departs when
 *                 the bucket holds its length. A frame finding more than queue_bytes (minus its
 *                 own length) still waiting for tokens is dropped. Bytes departing in any
 *                 interval T are at most rate_bps T / 8 + burst_bytes.
 *   8. delay      release = departure + delay_ns + U[-jitter_ns, +jitter_ns], then raised to
 *                 the previous release: jitter never reorders (only stage 6 does).
 *
 * State: one FIFO ring of held frames in release order (release times never decrease), a small
 * FIFO of frames held back for reordering, the token bucket (tokens in bit-nanoseconds so a
 * refill is one multiply, no rounding), the GE state bit and the BER gap. The owner offers frames
 * (sl_impair_admit) and takes the due ones (sl_impair_peek / sl_impair_consume, two steps so
 * a frame the next stage refuses stays queued). Each stage draws from its own xoshiro256**
 * stream seeded from `seed`, so enabling one impairment does not change another's decisions.
 *
 * Units: ns for time, bits/s for rates, bytes for lengths and queue limits.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "impair_engine.h"
#include "sl_time.h"

/* Token-bucket contents are in bit-ns: 1 byte is 8e9 bit-ns, rate_bps adds rate_bps per ns. */
#define BITNS_PER_BYTE (8 * (int64_t)SL_NS_PER_S)

struct ring_ent {
	void *handle;
	uint64_t depart_ns;  /**< leaves the rate cap, ns */
	uint64_t release_ns; /**< handed back to the owner, ns */
	uint32_t len_bytes;
};

struct held_ent {
	void *handle;
	uint64_t expire; /**< value of `passed` at which the frame follows, frames */
	uint32_t len_bytes;
};

struct sl_impair {
	struct sl_impair_conf conf;
	const struct sl_impair_ops *ops;
	void *ops_ctx;
	bool active; /**< any impairment configured */

	/* Probabilities as sl_rng thresholds. */
	uint64_t loss_thr;
	uint64_t ge_p_thr, ge_r_thr, ge_bad_loss_thr, ge_good_loss_thr;
	uint64_t dup_thr;
	uint64_t reorder_thr;
	double ber_log1m; /**< log(1 - ber) */
	struct sl_rng rng[SL_IMPAIR_RNG_COUNT];

	bool ge_bad;          /**< Gilbert-Elliott channel in the bad state */
	uint64_t ber_gap;     /**< clean bits before the next flipped bit */
	uint64_t offer_idx;   /**< index of the next frame offered (drop_idx counts these) */
	uint32_t drop_cursor; /**< first drop_idx entry not yet passed */

	/* Reorder: frames held back, FIFO (all wait the same number of frames). */
	struct held_ent held[SL_IMPAIR_REORDER_HELD];
	uint32_t held_head, n_held;
	uint64_t passed; /**< frames that went on past the reorder stage */

	/* Rate cap. */
	int64_t tokens_bitns;     /**< bucket contents at last_depart_ns, bit-ns (may be < 0) */
	uint64_t last_depart_ns;  /**< departure of the previous frame, ns */
	uint64_t backlog_bytes;   /**< bytes admitted that have not departed the rate cap */
	uint32_t sh_head;         /**< ring index of the first frame not departed (rate cap) */
	uint64_t last_release_ns; /**< release time of the newest queued frame, ns */

	/* Release ring. */
	struct ring_ent *ring;
	uint32_t mask, head, tail;
	uint32_t peeked; /**< handles returned by the last peek */

	struct sl_impair_stats st;
};

static const struct sl_stat_desc stat_desc[] = {
	SL_STAT(struct sl_impair_stats, frames, "frames offered"),
	SL_STAT(struct sl_impair_stats, drop_idx, "frames dropped by drop_idx"),
	SL_STAT(struct sl_impair_stats, drop_loss, "frames dropped by Bernoulli loss"),
	SL_STAT(struct sl_impair_stats, drop_ge, "frames dropped by the Gilbert-Elliott channel"),
	SL_STAT(struct sl_impair_stats, drop_corrupt, "frames dropped for flipped bits"),
	SL_STAT(struct sl_impair_stats, corrupted, "frames with flipped bits"),
	SL_STAT(struct sl_impair_stats, bits_flipped, "bits flipped"),
	SL_STAT(struct sl_impair_stats, duplicated, "duplicate frames made"),
	SL_STAT(struct sl_impair_stats, reordered, "frames held back for reordering"),
	SL_STAT(struct sl_impair_stats, delayed, "frames released later than offered"),
	SL_STAT(struct sl_impair_stats, queued, "frames that waited for rate-cap tokens"),
	SL_STAT(struct sl_impair_stats, drop_queue, "frames dropped: rate-cap backlog full"),
	SL_STAT(struct sl_impair_stats, drop_full, "frames dropped: engine queue full"),
	SL_STAT(struct sl_impair_stats, drop_nobuf, "copies not made: no buffer"),
	SL_STAT(struct sl_impair_stats, released, "frames released"),
	SL_STAT(struct sl_impair_stats, released_bytes, "bytes released"),
};
SL_STAT_TABLE_DEFINE(sl_impair_stat_table, struct sl_impair_stats, stat_desc);

/* Draw the number of clean bits before the next flip: geometric, P(flip) = ber per bit. */
static uint64_t
ber_draw_gap(struct sl_impair *e)
{
	double u = 1.0 - sl_rng_double(&e->rng[SL_IMPAIR_RNG_BER]); /* (0, 1] */
	double g = floor(log(u) / e->ber_log1m);

	return g >= 0x1p63 ? UINT64_C(1) << 63 : (uint64_t)g;
}

static void
seed_streams(struct sl_impair *e)
{
	for (unsigned i = 0; i < SL_IMPAIR_RNG_COUNT; i++)
		sl_rng_seed(&e->rng[i], e->conf.seed + UINT64_C(0x9e3779b97f4a7c15) * (i + 1));
}

/* First drop_idx entry >= the next offer index. */
static uint32_t
drop_cursor_at(const struct sl_impair_conf *c, uint64_t idx)
{
	uint32_t i = 0;

	while (i < c->n_drop_idx && c->drop_idx[i] < idx)
		i++;
	return i;
}

static void
apply_conf(struct sl_impair *e, const struct sl_impair_conf *c)
{
	uint32_t queue_frames = e->conf.queue_frames;
	bool reseed = e->ring == NULL || c->seed != e->conf.seed;
	bool new_ber = e->ring == NULL || c->ber != e->conf.ber || reseed;
	bool cap_was_on = e->ring != NULL && e->conf.rate_bps > 0;
	int64_t depth = (int64_t)c->burst_bytes * BITNS_PER_BYTE;

	e->conf = *c;
	if (e->ring != NULL)
		e->conf.queue_frames = queue_frames;
	if (reseed)
		seed_streams(e);
	e->loss_thr = sl_rng_threshold(c->loss);
	e->ge_p_thr = sl_rng_threshold(c->ge_p);
	e->ge_r_thr = sl_rng_threshold(c->ge_r);
	e->ge_bad_loss_thr = sl_rng_threshold(1.0 - c->ge_h);
	e->ge_good_loss_thr = sl_rng_threshold(1.0 - c->ge_k);
	if (c->ge_p == 0)
		e->ge_bad = false;
	e->dup_thr = sl_rng_threshold(c->dup);
	e->reorder_thr = sl_rng_threshold(c->reorder);
	if (new_ber) {
		e->ber_log1m = c->ber > 0 ? log1p(-c->ber) : 0;
		e->ber_gap = c->ber > 0 ? ber_draw_gap(e) : 0;
	}
	if (c->rate_bps == 0 || !cap_was_on) {
		/* A new cap starts with a full bucket and no backlog; without one nothing waits. */
		e->tokens_bitns = depth;
		e->last_depart_ns = 0;
		e->sh_head = e->tail;
		e->backlog_bytes = 0;
	} else if (e->tokens_bitns > depth) {
		e->tokens_bitns = depth;
	}
	e->drop_cursor = drop_cursor_at(c, e->offer_idx);
	e->active = c->loss > 0 || c->ge_p > 0 || c->ber > 0 || c->dup > 0 || c->reorder > 0 ||
		    c->delay_ns > 0 || c->rate_bps > 0 || c->n_drop_idx > 0;
}

struct sl_impair *
sl_impair_create(const struct sl_impair_conf *conf, const struct sl_impair_ops *ops, void *ops_ctx)
{
	struct sl_impair *e = NULL;
	char err[128];

	if (conf == NULL || ops == NULL || ops->free == NULL || ops->clone == NULL ||
	    ops->corrupt == NULL || sl_impair_conf_check(conf, err, sizeof(err)) != 0) {
		errno = EINVAL;
		goto fail;
	}
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		goto fail;
	e->ops = ops;
	e->ops_ctx = ops_ctx;
	e->conf.queue_frames = conf->queue_frames;
	apply_conf(e, conf);
	e->ring = calloc(conf->queue_frames, sizeof(*e->ring));
	if (e->ring == NULL)
		goto fail;
	e->mask = conf->queue_frames - 1;
	return e;
fail:
	free(e);
	return NULL;
}

void
sl_impair_free(struct sl_impair *e)
{
	if (e == NULL)
		return;
	for (; e->head != e->tail; e->head++)
		e->ops->free(e->ops_ctx, e->ring[e->head & e->mask].handle);
	for (; e->n_held > 0; e->n_held--, e->held_head++)
		e->ops->free(e->ops_ctx, e->held[e->held_head % SL_IMPAIR_REORDER_HELD].handle);
	free(e->ring);
	free(e);
}

int
sl_impair_reconfigure(struct sl_impair *e, const struct sl_impair_conf *conf)
{
	char err[128];

	if (sl_impair_conf_check(conf, err, sizeof(err)) != 0)
		return -EINVAL;
	apply_conf(e, conf);
	return 0;
}

bool
sl_impair_idle(const struct sl_impair *e)
{
	return !e->active && e->head == e->tail && e->n_held == 0;
}

static void
drop(struct sl_impair *e, void *handle, uint64_t *counter)
{
	(*counter)++;
	e->ops->free(e->ops_ctx, handle);
}

/* Stages 7 and 8: rate cap and delay, then into the release ring. */
static inline __attribute__((always_inline)) void
schedule(struct sl_impair *e, void *handle, uint32_t len, uint64_t now_ns)
{
	const struct sl_impair_conf *c = &e->conf;
	uint64_t depart = now_ns, release;
	struct ring_ent *r;

	if (e->tail - e->head > e->mask) {
		drop(e, handle, &e->st.drop_full);
		return;
	}
	if (c->rate_bps > 0) {
		int64_t cap = (int64_t)c->burst_bytes * BITNS_PER_BYTE;
		int64_t need = (int64_t)len * BITNS_PER_BYTE;
		int64_t want = SL_MIN(need, cap);
		uint64_t dt;

		while (e->sh_head != e->tail && e->ring[e->sh_head & e->mask].depart_ns <= now_ns) {
			e->backlog_bytes -= e->ring[e->sh_head & e->mask].len_bytes;
			e->sh_head++;
		}
		if (e->backlog_bytes + len > c->queue_bytes && e->backlog_bytes > 0) {
			drop(e, handle, &e->st.drop_queue);
			return;
		}
		depart = SL_MAX(now_ns, e->last_depart_ns);
		/* Refill up to the bucket depth; dt is capped so the product cannot overflow. */
		dt = SL_MIN(depart - e->last_depart_ns, (uint64_t)cap / c->rate_bps + 1);
		e->tokens_bitns = SL_MIN(cap, e->tokens_bitns + (int64_t)(dt * c->rate_bps));
		if (e->tokens_bitns < want) {
			uint64_t wait =
				SL_DIV_ROUND_UP((uint64_t)(want - e->tokens_bitns), c->rate_bps);

			depart += wait;
			e->tokens_bitns += (int64_t)(wait * c->rate_bps);
		}
		e->tokens_bitns -= need;
		e->last_depart_ns = depart;
		e->backlog_bytes += len;
		if (depart > now_ns)
			e->st.queued++;
	}
	release = depart + c->delay_ns;
	if (c->jitter_ns > 0)
		release = release - c->jitter_ns +
			  sl_rng_below(&e->rng[SL_IMPAIR_RNG_JITTER], 2 * c->jitter_ns + 1);
	release = SL_MAX(release, e->last_release_ns);
	e->last_release_ns = release;
	if (release > now_ns)
		e->st.delayed++;
	r = &e->ring[e->tail++ & e->mask];
	r->handle = handle;
	r->depart_ns = depart;
	r->release_ns = release;
	r->len_bytes = len;
}

/* Held-back frames whose gap has passed follow the frame that just went on. */
static void
release_held(struct sl_impair *e, uint64_t now_ns, bool all)
{
	while (e->n_held > 0) {
		struct held_ent *h = &e->held[e->held_head % SL_IMPAIR_REORDER_HELD];

		if (!all && h->expire > e->passed)
			break;
		e->held_head++;
		e->n_held--;
		schedule(e, h->handle, h->len_bytes, now_ns);
	}
}

/* Stage 6, then on to the rate cap and delay. */
static inline __attribute__((always_inline)) void
pass(struct sl_impair *e, void *handle, uint32_t len, uint64_t now_ns)
{
	if (e->reorder_thr != 0 && e->n_held < SL_IMPAIR_REORDER_HELD &&
	    sl_rng_chance(&e->rng[SL_IMPAIR_RNG_REORDER], e->reorder_thr)) {
		struct held_ent *h = &e->held[(e->held_head + e->n_held) % SL_IMPAIR_REORDER_HELD];

		h->handle = handle;
		h->len_bytes = len;
		h->expire = e->passed + e->conf.reorder_gap;
		e->n_held++;
		e->st.reordered++;
		return;
	}
	schedule(e, handle, len, now_ns);
	e->passed++;
	if (e->n_held > 0)
		release_held(e, now_ns, false);
}

/* Stage 3: true when the Gilbert-Elliott channel loses this frame. */
static bool
ge_lost(struct sl_impair *e)
{
	struct sl_rng *r = &e->rng[SL_IMPAIR_RNG_GE];

	e->ge_bad = sl_rng_chance(r, e->ge_bad ? UINT64_MAX - e->ge_r_thr : e->ge_p_thr);
	return sl_rng_chance(r, e->ge_bad ? e->ge_bad_loss_thr : e->ge_good_loss_thr);
}

/*
 * Stage 4 on a frame of len bytes: the handle to go on with, or NULL when the frame was
 * dropped (corrupt=drop, or no private copy for corrupt=deliver).
 */
static void *
ber_apply(struct sl_impair *e, void *handle, uint32_t len)
{
	uint64_t bits = (uint64_t)len * 8, pos;
	uint32_t off[SL_IMPAIR_FLIP_CHUNK];
	unsigned n = 0;

	if (sl_likely(e->ber_gap >= bits)) {
		e->ber_gap -= bits;
		return handle;
	}
	e->st.corrupted++;
	for (pos = e->ber_gap; pos < bits; pos += 1 + ber_draw_gap(e)) {
		e->st.bits_flipped++;
		if (e->conf.corrupt == SL_IMPAIR_CORRUPT_DROP)
			continue;
		off[n++] = (uint32_t)pos;
		if (n == SL_IMPAIR_FLIP_CHUNK && handle != NULL) {
			handle = e->ops->corrupt(e->ops_ctx, handle, off, n);
			n = 0;
		}
	}
	e->ber_gap = pos - bits;
	if (e->conf.corrupt == SL_IMPAIR_CORRUPT_DROP) {
		drop(e, handle, &e->st.drop_corrupt);
		return NULL;
	}
	if (n > 0 && handle != NULL)
		handle = e->ops->corrupt(e->ops_ctx, handle, off, n);
	if (handle == NULL)
		e->st.drop_nobuf++;
	return handle;
}

void
sl_impair_admit(struct sl_impair *e, const struct sl_impair_frame *frames, unsigned n,
		uint64_t now_ns)
{
	const struct sl_impair_conf *c = &e->conf;

	for (unsigned i = 0; i < n; i++) {
		void *h = frames[i].handle;
		uint32_t len = frames[i].len_bytes;
		uint64_t idx = e->offer_idx++;

		e->st.frames++;

		if (e->drop_cursor < c->n_drop_idx && c->drop_idx[e->drop_cursor] == idx) {
			e->drop_cursor++;
			drop(e, h, &e->st.drop_idx);
			continue;
		}
		if (e->loss_thr != 0 && sl_rng_chance(&e->rng[SL_IMPAIR_RNG_LOSS], e->loss_thr)) {
			drop(e, h, &e->st.drop_loss);
			continue;
		}
		if (e->ge_p_thr != 0 && ge_lost(e)) {
			drop(e, h, &e->st.drop_ge);
			continue;
		}
		if (c->ber > 0) {
			h = ber_apply(e, h, len);
			if (h == NULL)
				continue;
		}
		pass(e, h, len, now_ns);
		if (e->dup_thr != 0 && sl_rng_chance(&e->rng[SL_IMPAIR_RNG_DUP], e->dup_thr)) {
			void *copy = e->ops->clone(e->ops_ctx, h);

			if (copy == NULL) {
				e->st.drop_nobuf++;
				continue;
			}
			e->st.duplicated++;
			pass(e, copy, len, now_ns);
		}
	}
}

unsigned
sl_impair_peek(struct sl_impair *e, uint64_t now_ns, void **out, unsigned max)
{
	unsigned n = 0;
	uint32_t i;

	if (e->conf.reorder == 0 && e->n_held > 0)
		release_held(e, now_ns, true);
	for (i = e->head; i != e->tail && n < max; i++) {
		const struct ring_ent *r = &e->ring[i & e->mask];

		if (r->release_ns > now_ns)
			break;
		out[n++] = r->handle;
	}
	e->peeked = n;
	return n;
}

void
sl_impair_consume(struct sl_impair *e, unsigned n)
{
	n = SL_MIN(n, e->peeked);
	e->peeked = 0;
	for (unsigned k = 0; k < n; k++, e->head++) {
		const struct ring_ent *r = &e->ring[e->head & e->mask];

		e->st.released++;
		e->st.released_bytes += r->len_bytes;
		if (e->conf.rate_bps > 0 && e->sh_head == e->head) {
			e->backlog_bytes -= r->len_bytes;
			e->sh_head++;
		}
	}
}

uint64_t
sl_impair_next_due_ns(const struct sl_impair *e)
{
	return e->head == e->tail ? UINT64_MAX : e->ring[e->head & e->mask].release_ns;
}

unsigned
sl_impair_held(const struct sl_impair *e)
{
	return e->tail - e->head + e->n_held;
}

void
sl_impair_stats_get(const struct sl_impair *e, struct sl_impair_stats *out)
{
	*out = e->st;
}

void
sl_impair_stats_reset(struct sl_impair *e)
{
	memset(&e->st, 0, sizeof(e->st));
}
