/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rtx.c - MELO's sender-side bitmap (section 3.2.4 of the paper; model in sl_recv.h).
 *
 * Per flow: head_psn (no mark lies before it: the take cursor), nack_high (one past the highest
 * PSN a NACK marked), the chain start_ptr..end_ptr in the tracker's bits pool, and the count of
 * marks. The chain is non-empty exactly while marks exist, and then covers the PSN-aligned blocks
 * from head_psn's block to (nack_high - 1)'s block. A NACK marks [max(hole start, nack_high,
 * head_psn), hole end) for each hole, oldest first, growing the chain at the tail only; take and
 * cumulative ACKs move head_psn forward and pop blocks at the head only. Units: PSNs (packets).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pool.h"
#include "sl_recv.h"
#include "sl_seq.h"

struct sl_recv_rtx_flow {
	uint32_t head_psn;    /**< PSN: no mark before it */
	uint32_t nack_high;   /**< PSN: one past the highest PSN ever marked by a NACK */
	uint16_t start_ptr;   /**< block of head_psn's bit; NIL when nothing is marked */
	uint16_t end_ptr;     /**< block of (nack_high - 1)'s bit */
	uint16_t marked_pkts; /**< marks not yet taken (<= window <= 32768) */
	uint8_t open;         /**< 1 between flow_open and flow_close */
	uint8_t pad;
};
static_assert(sizeof(struct sl_recv_rtx_flow) == 16, "sender tracker state is 16 B");

struct sl_recv_rtx {
	struct sl_recv_rtx_conf conf;
	uint32_t block_mask; /**< block_bits - 1 */
	struct sl_recv_pool *pool;
	struct sl_recv_rtx_flow *flows;
	struct sl_recv_rtx_stats st;
};

#define STAT(m, h) SL_STAT(struct sl_recv_rtx_stats, m, h)
static const struct sl_stat_desc stat_desc[] = {
	STAT(nacks, "NACKs processed"),
	STAT(holes, "holes in processed NACKs"),
	STAT(bad_holes, "holes refused: empty, behind the ACK or beyond the window"),
	STAT(bad_nacks, "NACKs refused: unknown flow or more than 3 holes"),
	STAT(pkts_marked, "PSNs newly marked for retransmission"),
	STAT(pkts_repeated, "PSNs in holes already marked by an earlier NACK"),
	STAT(pkts_pool_exhausted, "PSNs left unmarked for lack of pool blocks"),
	STAT(pkts_taken, "PSNs handed to the scheduler for retransmission"),
	STAT(pkts_acked_marked, "marks removed by a cumulative ACK before being taken"),
	STAT(rtos, "RTOs: bitmap cleared, resend from the front"),
	STAT(pool_peak_blocks, "most pool blocks in use at once"),
	STAT(pool_blocks_freed, "blocks returned to the bits pool"),
	STAT(pool_next_hops, "next_ptr reads (only to shrink at the head)"),
};
SL_STAT_TABLE_DEFINE(sl_recv_rtx_stat_table, struct sl_recv_rtx_stats, stat_desc);

struct sl_recv_rtx *
sl_recv_rtx_create(const struct sl_recv_rtx_conf *conf)
{
	struct sl_recv_pool_conf pc;
	struct sl_recv_rtx *t;
	int err = EINVAL;

	if (conf == NULL || conf->max_flows == 0 || !sl_is_pow2(conf->window_pkts) ||
	    conf->window_pkts > SL_RECV_WINDOW_MAX)
		goto fail_errno;
	err = ENOMEM;
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		goto fail_errno;
	t->conf = *conf;
	pc = (struct sl_recv_pool_conf){conf->pool_bits, conf->block_bits};
	t->pool = sl_recv_pool_create(&pc);
	if (t->pool == NULL) {
		err = errno;
		goto fail;
	}
	t->block_mask = conf->block_bits - 1;
	t->flows = calloc(conf->max_flows, sizeof(*t->flows));
	if (t->flows == NULL)
		goto fail;
	return t;
fail:
	sl_recv_rtx_free(t);
fail_errno:
	errno = err;
	return NULL;
}

void
sl_recv_rtx_free(struct sl_recv_rtx *t)
{
	if (t == NULL)
		return;
	sl_recv_pool_free(t->pool);
	free(t->flows);
	free(t);
}

static struct sl_recv_rtx_flow *
flow_get(const struct sl_recv_rtx *t, uint32_t flow)
{
	if (flow >= t->conf.max_flows || !t->flows[flow].open)
		return NULL;
	return &t->flows[flow];
}

static void
flow_clear(struct sl_recv_rtx *t, struct sl_recv_rtx_flow *f)
{
	sl_recv_pool_chain_release(t->pool, &f->start_ptr, &f->end_ptr);
	f->marked_pkts = 0;
}

int
sl_recv_rtx_flow_open(struct sl_recv_rtx *t, uint32_t flow, uint32_t isn)
{
	struct sl_recv_rtx_flow *f;

	if (flow >= t->conf.max_flows)
		return -EINVAL;
	f = &t->flows[flow];
	if (f->open)
		return -EEXIST;
	*f = (struct sl_recv_rtx_flow){.head_psn = isn,
				       .nack_high = isn,
				       .start_ptr = SL_RECV_POOL_NIL,
				       .end_ptr = SL_RECV_POOL_NIL,
				       .open = 1};
	return 0;
}

void
sl_recv_rtx_flow_close(struct sl_recv_rtx *t, uint32_t flow)
{
	struct sl_recv_rtx_flow *f = flow_get(t, flow);

	if (f == NULL)
		return;
	flow_clear(t, f);
	f->open = 0;
}

/*
 * Walk the head forward (at most to `to`, and at most max_pkts marks), unmarking; the marks
 * passed are appended to out as ranges when out is not NULL. Returns the ranges written.
 */
static unsigned
head_walk(struct sl_recv_rtx *t, struct sl_recv_rtx_flow *f, uint32_t to, uint32_t max_pkts,
	  struct sl_recv_range *out, unsigned max, uint32_t *taken)
{
	unsigned n = 0;

	*taken = 0;
	while (f->marked_pkts && *taken < max_pkts && sl_seq_lt(f->head_psn, to)) {
		uint32_t psn = f->head_psn, off = psn & t->block_mask;

		if (sl_recv_pool_test(t->pool, f->start_ptr, off)) {
			if (out != NULL) {
				if (n && out[n - 1].start_psn + out[n - 1].len_pkts == psn)
					out[n - 1].len_pkts++;
				else if (n < max)
					out[n++] = (struct sl_recv_range){psn, 1};
				else
					break;
			}
			sl_recv_pool_clear(t->pool, f->start_ptr, off);
			f->marked_pkts--;
			(*taken)++;
		}
		f->head_psn++;
		if (f->marked_pkts && (f->head_psn & t->block_mask) == 0)
			sl_recv_pool_chain_pop(t->pool, &f->start_ptr, &f->end_ptr);
	}
	if (f->marked_pkts == 0)
		flow_clear(t, f);
	return n;
}

int
sl_recv_rtx_ack(struct sl_recv_rtx *t, uint32_t flow, uint32_t ack_psn)
{
	struct sl_recv_rtx_flow *f = flow_get(t, flow);
	uint32_t dropped;

	if (f == NULL)
		return -EINVAL;
	head_walk(t, f, ack_psn, UINT32_MAX, NULL, 0, &dropped);
	t->st.pkts_acked_marked += dropped;
	if (sl_seq_lt(f->head_psn, ack_psn) && f->marked_pkts == 0)
		f->head_psn = ack_psn;
	if (sl_seq_lt(f->nack_high, f->head_psn))
		f->nack_high = f->head_psn;
	return 0;
}

/* Mark [lo, hi) at the tail: all or nothing. Returns 0 or -ENOSPC. */
static int
mark_tail(struct sl_recv_rtx *t, struct sl_recv_rtx_flow *f, uint32_t lo, uint32_t hi)
{
	uint32_t shift = t->pool->block_shift, base, have, need;

	if (f->marked_pkts == 0)
		f->head_psn = lo;
	base = f->head_psn & ~t->block_mask;
	have = f->marked_pkts ? ((f->nack_high - 1 - base) >> shift) + 1 : 0;
	need = ((hi - 1 - base) >> shift) + 1 - have;
	if (need > sl_recv_pool_avail(t->pool))
		return -ENOSPC;
	for (uint32_t p = lo; p != hi; p++) {
		uint32_t off_blk = (p - base) >> shift;

		if (off_blk >= have) {
			sl_recv_pool_chain_extend(t->pool, &f->start_ptr, &f->end_ptr,
						  off_blk + 1 - have);
			have = off_blk + 1;
		}
		sl_recv_pool_set(t->pool, f->end_ptr, p & t->block_mask);
	}
	f->marked_pkts = (uint16_t)(f->marked_pkts + (hi - lo));
	f->nack_high = hi;
	return 0;
}

int
sl_recv_rtx_nack(struct sl_recv_rtx *t, uint32_t flow, const struct sl_recv_fb *fb)
{
	struct sl_recv_rtx_flow *f = flow_get(t, flow);
	int marked = 0;

	if (f == NULL || fb == NULL || fb->nholes > SL_RECV_NACK_HOLES) {
		t->st.bad_nacks++;
		return -EINVAL;
	}
	t->st.nacks++;
	sl_recv_rtx_ack(t, flow, fb->ack_psn);
	/* Oldest first, so that the bitmap grows at its tail. */
	for (int i = fb->nholes - 1; i >= 0; i--) {
		uint32_t s = fb->hole[i].start_psn, len = fb->hole[i].len_pkts;
		uint32_t hi = s + len, lo;

		t->st.holes++;
		if (len == 0 || sl_seq_lt(s, fb->ack_psn) ||
		    hi - fb->ack_psn > t->conf.window_pkts) {
			t->st.bad_holes++;
			continue;
		}
		lo = sl_seq_max(s, sl_seq_max(f->nack_high, f->head_psn));
		if (sl_seq_ge(lo, hi)) {
			t->st.pkts_repeated += len;
			continue;
		}
		t->st.pkts_repeated += lo - s;
		if (mark_tail(t, f, lo, hi) < 0) {
			/* Newer holes lie beyond this one: leave them to a later NACK or RTO. */
			for (; i >= 0; i--)
				t->st.pkts_pool_exhausted += fb->hole[i].len_pkts;
			break;
		}
		t->st.pkts_marked += hi - lo;
		marked += (int)(hi - lo);
	}
	if (t->pool->peak_blocks > t->st.pool_peak_blocks)
		t->st.pool_peak_blocks = t->pool->peak_blocks;
	return marked;
}

unsigned
sl_recv_rtx_take(struct sl_recv_rtx *t, uint32_t flow, struct sl_recv_range *out, unsigned max,
		 uint32_t max_pkts)
{
	struct sl_recv_rtx_flow *f = flow_get(t, flow);
	uint32_t taken;
	unsigned n;

	if (f == NULL || max == 0)
		return 0;
	n = head_walk(t, f, f->nack_high, max_pkts, out, max, &taken);
	t->st.pkts_taken += taken;
	return n;
}

int
sl_recv_rtx_rto(struct sl_recv_rtx *t, uint32_t flow, uint32_t snd_una_psn)
{
	struct sl_recv_rtx_flow *f = flow_get(t, flow);

	if (f == NULL)
		return -EINVAL;
	flow_clear(t, f);
	f->head_psn = snd_una_psn;
	if (sl_seq_lt(f->nack_high, snd_una_psn))
		f->nack_high = snd_una_psn;
	t->st.rtos++;
	return 0;
}

uint32_t
sl_recv_rtx_nack_high(const struct sl_recv_rtx *t, uint32_t flow)
{
	const struct sl_recv_rtx_flow *f = flow_get(t, flow);

	return f == NULL ? 0 : f->nack_high;
}

uint32_t
sl_recv_rtx_marked(const struct sl_recv_rtx *t, uint32_t flow)
{
	const struct sl_recv_rtx_flow *f = flow_get(t, flow);

	return f == NULL ? 0 : f->marked_pkts;
}

uint32_t
sl_recv_rtx_pool_used_blocks(const struct sl_recv_rtx *t)
{
	return sl_recv_pool_in_use(t->pool);
}

void
sl_recv_rtx_stats_get(const struct sl_recv_rtx *t, struct sl_recv_rtx_stats *st)
{
	*st = t->st;
	st->pool_blocks_freed = t->pool->puts;
	st->pool_next_hops = t->pool->next_hops;
}

uint32_t
sl_recv_rtx_flow_bytes(void)
{
	return sizeof(struct sl_recv_rtx_flow);
}

/* Chain length and set-bit count of one flow against its counters. */
static int
audit_flow(const struct sl_recv_rtx *t, const struct sl_recv_rtx_flow *f, uint8_t *seen)
{
	uint32_t shift = t->pool->block_shift, base = f->head_psn & ~t->block_mask, bits = 0;
	int len = sl_recv_pool_chain_mark(t->pool, f->start_ptr, f->end_ptr, seen);
	uint16_t b = f->start_ptr;

	if (len < 0)
		return len;
	if (f->marked_pkts == 0)
		return len == 0 ? 0 : -EFAULT;
	if ((uint32_t)len != ((f->nack_high - 1 - base) >> shift) + 1)
		return -EFAULT;
	for (int k = 0; k < len; k++, b = sl_recv_pool_peek_next(t->pool, b))
		for (uint32_t off = 0; off < t->pool->block_bits; off++)
			bits += sl_recv_pool_test(t->pool, b, off);
	return bits == f->marked_pkts ? 0 : -EFAULT;
}

int
sl_recv_rtx_audit(const struct sl_recv_rtx *t)
{
	uint8_t *seen = calloc(t->pool->nblocks, 1);
	int rc = 0;

	if (seen == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->conf.max_flows && rc == 0; i++)
		if (t->flows[i].open)
			rc = audit_flow(t, &t->flows[i], seen);
	if (rc == 0)
		rc = sl_recv_pool_check(t->pool, seen);
	free(seen);
	return rc;
}
