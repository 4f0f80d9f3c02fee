/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * link_pair.c - the virtual-clock two-lane harness (see link_pair.h).
 *
 * Handles: a payload handed to a sending link is a struct payload (tag TAG_PAYLOAD); a frame
 * handed to a receiving link is the channel's struct wframe (tag TAG_WFRAME). One release
 * callback frees both. A re-initialization releases the ring's payloads: the harness notes them
 * (reinit_aborted grows during that call, or the link is being freed) as aborted, which the
 * accounting treats as "may or may not have been delivered" (the link never learns, NACK-only).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "link_pair.h"
#include "sl_rng.h"

#define PEND 8u      /**< payloads offered to tx_burst per slot, at most */
#define MIN_BODY 44u /**< link frame >= 46 B: no Ethernet padding on data frames */
#define ETH_MIN_LINK 46u
#define TXQ_MAX 256u /**< largest transmit queue, frames */

enum { TAG_PAYLOAD = 1, TAG_WFRAME = 2 };

struct payload {
	uint8_t tag;
	uint64_t seq;
	uint8_t body[];
};

struct wframe {
	uint8_t tag;
	uint16_t len;
	uint64_t arrive; /**< slot */
	uint8_t b[];
};

struct chan {
	struct wframe **q; /**< in flight, in arrival order */
	uint32_t cap, head, n;
	bool ge_bad;
	double bits_to_flip; /**< bits until the next bit error */
};

struct end {
	struct sl_link *link;
	struct sl_link_conf lconf;
	struct sl_link_stats base; /**< counters of freed instances */
	/* producer */
	uint64_t next_seq;
	double offer_acc;
	struct payload *pend[PEND];
	unsigned npend;
	/* release bookkeeping */
	bool collecting;
	uint64_t *rel_seq;
	uint32_t rel_n, rel_cap;
	/* consumer */
	uint64_t queue;
	double consume_acc;
	/* receive ring (rx_per_slot): arrivals wait here for the receiver's lcore */
	struct wframe **rxr;
	uint32_t rxr_head, rxr_n;
	double rx_acc;
	/* transmit queue (the NIC's TX ring): frames wait here, one leaves per slot */
	struct wframe **txq;
	uint32_t txq_head, txq_n;
	int idx;
};

struct lp_run_ctx {
	const struct lp_conf *c;
	struct lp_result *r;
	struct sl_rng rng;
	struct end e[2];
	struct chan ch[2];     /**< ch[d]: frames sent by end d */
	uint8_t *delivered[2]; /**< per direction, by sequence */
	uint8_t *aborted[2];
	uint64_t highest[2]; /**< highest sequence delivered + 1 */
	uint64_t now_slot;
};

static uint8_t
pattern(uint64_t seq, uint32_t i)
{
	return (uint8_t)(seq * 31 + i * 7 + (seq >> 8));
}

static void
fill_body(uint8_t *b, uint64_t seq, uint16_t len)
{
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(seq >> (56 - 8 * i));
	for (uint32_t i = 8; i < len; i++)
		b[i] = pattern(seq, i);
}

static void
release_cb(void *ctxp, void *const *handles, unsigned n)
{
	struct end *e = ctxp;

	for (unsigned i = 0; i < n; i++) {
		uint8_t tag = *(const uint8_t *)handles[i];

		if (tag == TAG_PAYLOAD && e->collecting && e->rel_n < e->rel_cap)
			e->rel_seq[e->rel_n++] = ((struct payload *)handles[i])->seq;
		free(handles[i]);
	}
}

static void
mark_aborted(struct lp_run_ctx *x, struct end *e)
{
	for (uint32_t i = 0; i < e->rel_n; i++) {
		uint64_t s = e->rel_seq[i];

		if (!x->delivered[e->idx][s] && !x->aborted[e->idx][s]) {
			x->aborted[e->idx][s] = 1;
			x->r->dir[e->idx].aborted++;
		}
	}
	e->rel_n = 0;
}

static void
stats_add(struct sl_link_stats *dst, const struct sl_link_stats *src)
{
	uint64_t *d = (uint64_t *)dst;
	const uint64_t *s = (const uint64_t *)src;

	for (size_t i = 0; i < sizeof(*dst) / sizeof(uint64_t); i++)
		d[i] += s[i];
}

/* Free an end's link; on a restart (abort) its ring's undelivered payloads are aborted. */
static void
end_free_link(struct lp_run_ctx *x, struct end *e, bool abort)
{
	struct sl_link_stats st;

	sl_link_stats_get(e->link, &st);
	stats_add(&e->base, &st);
	sl_hist_merge(&x->r->dir[1 - e->idx].recovery_ns, sl_link_recovery_hist(e->link));
	e->collecting = abort;
	sl_link_free(e->link);
	e->collecting = false;
	mark_aborted(x, e);
	e->link = NULL;
}

/* The bytes of a frame as the glue puts them on the wire (padded to the Ethernet minimum). */
static struct wframe *
wframe_build(const struct sl_link_tx_frame *f)
{
	uint16_t len = f->hdr_len + (f->handle ? f->body_len : 0);
	uint16_t wire_len = SL_MAX(len, ETH_MIN_LINK);
	struct wframe *w = calloc(1, sizeof(*w) + wire_len);

	w->tag = TAG_WFRAME;
	w->len = wire_len;
	memcpy(w->b, f->hdr, f->hdr_len);
	if (f->handle)
		memcpy(w->b + f->hdr_len, f->body, f->body_len);
	return w;
}

/* Put w on direction d's channel, through its faults. */
static void
chan_send(struct lp_run_ctx *x, int d, struct wframe *w)
{
	const struct lp_fault *ft = &x->c->fault;
	struct chan *ch = &x->ch[d];
	bool drop = false, corrupt = false;
	double bits = (double)w->len * 8;

	if (ft->loss > 0 && sl_rng_double(&x->rng) < ft->loss)
		drop = true;
	if (ft->ge_good_bad > 0) {
		if (ch->ge_bad)
			ch->ge_bad = sl_rng_double(&x->rng) >= ft->ge_bad_good;
		else
			ch->ge_bad = sl_rng_double(&x->rng) < ft->ge_good_bad;
		if (ch->ge_bad && sl_rng_double(&x->rng) < ft->ge_bad_loss)
			drop = true;
	}
	if (ft->ber > 0) {
		while (ch->bits_to_flip < bits) {
			uint32_t bit = (uint32_t)ch->bits_to_flip;

			w->b[bit / 8] ^= (uint8_t)(0x80u >> (bit % 8));
			corrupt = true;
			ch->bits_to_flip += 1.0 + sl_rng_exponential(&x->rng, 1.0 / ft->ber);
		}
		ch->bits_to_flip -= bits;
	}
	if (corrupt)
		x->r->dir[d].frames_corrupted++;
	if (drop || (corrupt && !ft->corrupt_deliver)) {
		x->r->dir[d].frames_lost += drop;
		free(w);
		return;
	}
	w->arrive = x->now_slot + x->c->delay_slots;
	ch->q[(ch->head + ch->n++) % ch->cap] = w;
	if (ft->reorder > 0 && ch->n >= 2 && sl_rng_double(&x->rng) < ft->reorder) {
		struct wframe **a = &ch->q[(ch->head + ch->n - 2) % ch->cap];
		struct wframe **b = &ch->q[(ch->head + ch->n - 1) % ch->cap];
		struct wframe *t = *a;

		if (t->arrive > x->now_slot) {
			(*b)->arrive = t->arrive;
			*a = *b;
			*b = t;
		}
	}
}

static void
check_delivery(struct lp_run_ctx *x, int d, const struct sl_link_delivery *dl)
{
	struct wframe *w = dl->handle;
	struct lp_dir *r = &x->r->dir[d];
	const uint8_t *b = w->b + dl->body_off;
	uint64_t seq = 0;
	bool ok = dl->body_len == x->c->body_bytes;

	for (int i = 0; ok && i < 8; i++)
		seq = seq << 8 | b[i];
	ok = ok && seq < x->c->frames;
	for (uint32_t i = 8; ok && i < dl->body_len; i++)
		ok = b[i] == pattern(seq, i);
	if (!ok) {
		r->corrupted_accepted++;
	} else if (x->delivered[d][seq]) {
		r->duplicated++;
	} else {
		x->delivered[d][seq] = 1;
		r->delivered++;
		if (x->aborted[d][seq]) {
			x->aborted[d][seq] = 0;
			r->aborted--;
		}
		if (seq + 1 < x->highest[d])
			r->reordered++;
		x->highest[d] = SL_MAX(x->highest[d], seq + 1);
		r->last_delivery_slot = x->now_slot;
	}
	free(w);
}

/* The receiving link takes in[0, n); its deliveries are checked and queued for the consumer. */
static void
rx_feed(struct lp_run_ctx *x, struct end *e, struct wframe *const *w, unsigned n)
{
	struct sl_link_rx_frame in[16];
	struct sl_link_delivery out[16];
	int d = 1 - e->idx;
	unsigned nd;

	for (unsigned i = 0; i < n; i++)
		in[i] = (struct sl_link_rx_frame){w[i]->b, w[i]->len, w[i]};
	nd = sl_link_rx_burst(e->link, x->now_slot * x->c->slot_ns, in, n, out);
	for (unsigned i = 0; i < nd; i++)
		check_delivery(x, d, &out[i]);
	e->queue += nd;
	x->r->dir[d].max_occupancy = SL_MAX(x->r->dir[d].max_occupancy, e->queue);
}

/*
 * Frames that have arrived go to the link at once, or, with rx_per_slot, into the receive ring
 * (dropped when it is full, as a kernel drops at a full XDP ring) and from there to the link at
 * rx_per_slot frames per slot.
 */
static void
end_rx(struct lp_run_ctx *x, struct end *e)
{
	struct chan *ch = &x->ch[1 - e->idx];
	struct wframe *w[16];
	unsigned n = 0;

	while (ch->n && ch->q[ch->head]->arrive <= x->now_slot) {
		struct wframe *f = ch->q[ch->head];

		ch->head = (ch->head + 1) % ch->cap;
		ch->n--;
		if (x->c->rx_per_slot > 0) {
			if (e->rxr_n < x->c->rx_ring_frames) {
				e->rxr[(e->rxr_head + e->rxr_n++) % x->c->rx_ring_frames] = f;
			} else {
				x->r->dir[1 - e->idx].frames_overrun++;
				free(f);
			}
			continue;
		}
		w[n++] = f;
		if (n == 16) {
			rx_feed(x, e, w, n);
			n = 0;
		}
	}
	if (x->c->rx_per_slot > 0) {
		e->rx_acc = SL_MIN(e->rx_acc + x->c->rx_per_slot, x->c->rx_per_slot + 1.0);
		for (; e->rx_acc >= 1.0 && e->rxr_n && n < 16; e->rx_acc -= 1.0) {
			w[n++] = e->rxr[e->rxr_head];
			e->rxr_head = (e->rxr_head + 1) % x->c->rx_ring_frames;
			e->rxr_n--;
		}
	}
	if (n)
		rx_feed(x, e, w, n);
}

static void
end_consume(struct lp_run_ctx *x, struct end *e)
{
	uint64_t take;

	e->consume_acc = SL_MIN(e->consume_acc + x->c->consume, x->c->consume + 1.0);
	take = SL_MIN((uint64_t)e->consume_acc, e->queue);
	if (take) {
		e->consume_acc -= (double)take;
		e->queue -= take;
		sl_link_rx_consumed(e->link, (unsigned)take);
	}
}

static void
end_tx(struct lp_run_ctx *x, struct end *e)
{
	struct sl_link_tx_desc in[PEND];
	struct sl_link_tx_frame out[TXQ_MAX];
	uint32_t cap = SL_MAX(x->c->txq_frames, 1u);
	unsigned taken, n;
	uint64_t aborted0 = sl_link_stat(e->link, reinit_aborted);

	e->offer_acc = SL_MIN(e->offer_acc + x->c->offered, (double)PEND);
	while (e->offer_acc >= 1.0 && e->npend < PEND && e->next_seq < x->c->frames &&
	       (e->idx == 0 || !x->c->one_way)) {
		struct payload *p = malloc(sizeof(*p) + x->c->body_bytes);

		p->tag = TAG_PAYLOAD;
		p->seq = e->next_seq++;
		fill_body(p->body, p->seq, x->c->body_bytes);
		e->pend[e->npend++] = p;
		e->offer_acc -= 1.0;
	}
	for (unsigned i = 0; i < e->npend; i++) {
		in[i].handle = e->pend[i];
		in[i].body = e->pend[i]->body;
		in[i].body_len = x->c->body_bytes;
		in[i].meta = SL_WIRE_META_EOM_FULL;
	}
	e->collecting = true;
	n = sl_link_tx_burst(e->link, x->now_slot * x->c->slot_ns, in, e->npend, &taken, out,
			     cap - e->txq_n);
	e->collecting = false;
	if (sl_link_stat(e->link, reinit_aborted) != aborted0)
		mark_aborted(x, e);
	else
		e->rel_n = 0;
	x->r->dir[e->idx].submitted += taken;
	memmove(e->pend, e->pend + taken, (e->npend - taken) * sizeof(e->pend[0]));
	e->npend -= taken;
	for (unsigned i = 0; i < n; i++)
		e->txq[(e->txq_head + e->txq_n++) % cap] = wframe_build(&out[i]);
	if (e->txq_n) {
		chan_send(x, e->idx, e->txq[e->txq_head]);
		e->txq_head = (e->txq_head + 1) % cap;
		e->txq_n--;
	}
}

/* A restarting host loses what its NIC queue held. */
static void
end_txq_flush(struct end *e, uint32_t cap)
{
	while (e->txq_n) {
		free(e->txq[e->txq_head]);
		e->txq_head = (e->txq_head + 1) % cap;
		e->txq_n--;
	}
}

static bool
dir_done(const struct lp_run_ctx *x, int d)
{
	const struct lp_dir *r = &x->r->dir[d];

	if (d == 1 && x->c->one_way)
		return true;
	return r->submitted == x->c->frames && r->delivered + r->aborted == x->c->frames;
}

void
lp_conf_default(struct lp_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->fmt.mode = SL_WIRE_MODE_FAITHFUL;
	c->fmt.scope_bytes = SL_WIRE_SCOPE_ALL;
	c->replay = SL_LINK_REPLAY_RING;
	c->body_bytes = 256;
	c->slot_ns = 200;
	c->delay_slots = 8;
	c->offered = 1.0;
	c->consume = 2.0;
	c->frames = 20000;
	c->keepalive_slots = 32;
	c->ctrl_slots = 24;
	c->seed = 1;
}

static int
end_create(struct end *e)
{
	e->link = sl_link_create(&e->lconf);
	return e->link ? 0 : -errno;
}

int
lp_run(const struct lp_conf *c, struct lp_result *r)
{
	struct lp_run_ctx *x = calloc(1, sizeof(*x));
	uint32_t frame_bytes = c->body_bytes + (uint32_t)sl_wire_hdr_len(&c->fmt);
	uint64_t rate_bps = (uint64_t)frame_bytes * 8 * SL_NS_PER_S / c->slot_ns;
	uint32_t txq = SL_MAX(c->txq_frames, 1u);
	uint64_t rtt_ns = (2 * ((uint64_t)c->delay_slots + txq) + 2) * c->slot_ns;
	uint64_t max_slots = c->max_slots ? c->max_slots : 400 * c->frames + 100000;
	int k, rc = -ENOMEM;

	if (x == NULL)
		return -ENOMEM;
	memset(r, 0, sizeof(*r));
	k = sl_link_ring_order(&c->fmt, rate_bps, rtt_ns, frame_bytes);
	if (k < 0 || c->body_bytes < MIN_BODY || txq > TXQ_MAX ||
	    (c->rx_per_slot > 0 && c->rx_ring_frames == 0)) {
		free(x);
		return k < 0 ? k : -EINVAL;
	}
	x->c = c;
	x->r = r;
	sl_rng_seed(&x->rng, c->seed);
	r->ring_order = (uint8_t)k;
	r->fc_frames = sl_link_fc_frames(rate_bps, rtt_ns, frame_bytes);
	for (int d = 0; d < 2; d++) {
		struct end *e = &x->e[d];

		sl_hist_reset(&r->dir[d].recovery_ns);
		x->ch[d].cap = c->delay_slots + 4;
		x->ch[d].q = calloc(x->ch[d].cap, sizeof(*x->ch[d].q));
		x->ch[d].bits_to_flip =
			c->fault.ber > 0 ? sl_rng_exponential(&x->rng, 1.0 / c->fault.ber) : 0;
		x->delivered[d] = calloc(c->frames, 1);
		x->aborted[d] = calloc(c->frames, 1);
		e->idx = d;
		e->rel_cap = (1u << k) + 64;
		e->rel_seq = calloc(e->rel_cap, sizeof(*e->rel_seq));
		e->txq = calloc(txq, sizeof(*e->txq));
		e->rxr = calloc(SL_MAX(c->rx_ring_frames, 1u), sizeof(*e->rxr));
		if (!x->ch[d].q || !x->delivered[d] || !x->aborted[d] || !e->rel_seq || !e->txq ||
		    !e->rxr)
			goto fail;
		e->lconf.fmt = c->fmt;
		e->lconf.ring_order = (uint8_t)k;
		e->lconf.replay = c->replay;
		e->lconf.keepalive_ns = c->keepalive_slots * c->slot_ns;
		e->lconf.ctrl_interval_ns = c->ctrl_slots * c->slot_ns;
		e->lconf.fc_frames = r->fc_frames;
		e->lconf.line_bps = c->slot_clock ? rate_bps : 0;
		e->lconf.adapt_rate = c->slot_clock;
		e->lconf.release = release_cb;
		e->lconf.release_ctx = e;
		rc = end_create(e);
		if (rc)
			goto fail;
	}
	for (x->now_slot = 0; x->now_slot < max_slots; x->now_slot++) {
		if (c->restart_slot && x->now_slot == c->restart_slot) {
			end_txq_flush(&x->e[1], txq);
			end_free_link(x, &x->e[1], true);
			rc = end_create(&x->e[1]);
			if (rc)
				goto fail;
		}
		for (int d = 0; d < 2; d++) {
			end_rx(x, &x->e[d]);
			end_consume(x, &x->e[d]);
			end_tx(x, &x->e[d]);
		}
		if (dir_done(x, 0) && dir_done(x, 1)) {
			r->finished = true;
			break;
		}
	}
	r->slots = x->now_slot;
	rc = 0;
fail:
	for (int d = 0; d < 2; d++) {
		struct end *e = &x->e[d];

		if (e->link)
			end_free_link(x, e, false);
		r->dir[d].tx = e->base;
		while (e->npend)
			free(e->pend[--e->npend]);
		if (e->txq)
			end_txq_flush(e, txq);
		free(e->txq);
		while (e->rxr && e->rxr_n) {
			free(e->rxr[e->rxr_head]);
			e->rxr_head = (e->rxr_head + 1) % c->rx_ring_frames;
			e->rxr_n--;
		}
		free(e->rxr);
		while (x->ch[d].q && x->ch[d].n) {
			free(x->ch[d].q[x->ch[d].head]);
			x->ch[d].head = (x->ch[d].head + 1) % x->ch[d].cap;
			x->ch[d].n--;
		}
		free(x->ch[d].q);
		free(e->rel_seq);
	}
	for (int d = 0; d < 2; d++) {
		r->dir[d].rx = x->e[1 - d].base;
		r->dir[d].lost = r->dir[d].submitted - r->dir[d].delivered - r->dir[d].aborted;
		free(x->delivered[d]);
		free(x->aborted[d]);
	}
	free(x);
	return rc;
}
