/* SPDX-License-Identifier: BSD-3-Clause */
/* sim_recv.c - the reference receiver (see sim_recv.h). */
#include <errno.h>
#include <stdlib.h>

#include "sim_recv.h"
#include "sl_bitmap.h"
#include "sl_seq.h"
#include "sl_time.h"

struct recv_flow {
	struct sim_recv_flow_stats st;
	uint64_t *ooo;        /**< ring bitmap of segments received past the cumack */
	uint64_t last_cnp_ns; /**< time of the last CNP, SIM_NEVER before the first */
	uint32_t seg_bytes;   /**< one pull's grant, bytes */
	uint16_t src;         /**< the sending host, learned from its data */
};

/* NDP pulls waiting at one receiving host: a FIFO of flow ids, grown on demand. */
struct pull_queue {
	uint32_t *flow;
	uint32_t cap;     /**< power of two */
	uint32_t head;    /**< next to send */
	uint32_t n;       /**< queued */
	bool armed;       /**< a pull-send event is pending */
	uint64_t next_ns; /**< earliest time of the next pull (pacing), ns */
};

struct sim_recv {
	struct sim *s;
	struct sim_recv_conf c;
	struct recv_flow *f;
	struct pull_queue pq[SIM_MAX_HOSTS];
};

struct sim_recv *
sim_recv_create(struct sim *s, const struct sim_recv_conf *c)
{
	struct sim_recv *r;

	if (s == NULL || c == NULL || c->nflows == 0) {
		errno = EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return NULL;
	r->s = s;
	r->c = *c;
	r->f = calloc(c->nflows, sizeof(*r->f));
	if (r->f == NULL)
		goto fail;
	return r;
fail:
	sim_recv_free(r);
	errno = ENOMEM;
	return NULL;
}

void
sim_recv_free(struct sim_recv *r)
{
	if (r == NULL)
		return;
	for (uint32_t i = 0; r->f && i < r->c.nflows; i++)
		free(r->f[i].ooo);
	for (uint32_t h = 0; h < SIM_MAX_HOSTS; h++)
		free(r->pq[h].flow);
	free(r->f);
	free(r);
}

int
sim_recv_add_flow(struct sim_recv *r, uint32_t flow, uint32_t seg_bytes)
{
	struct recv_flow *f;

	if (flow >= r->c.nflows || seg_bytes == 0 || r->f[flow].ooo != NULL)
		return -EINVAL;
	f = &r->f[flow];
	f->ooo = calloc(SL_BITMAP_WORDS(SIM_RECV_WINDOW), sizeof(uint64_t));
	if (f->ooo == NULL)
		return -ENOMEM;
	f->seg_bytes = seg_bytes;
	f->last_cnp_ns = SIM_NEVER;
	return 0;
}

const struct sim_recv_flow_stats *
sim_recv_flow(const struct sim_recv *r, uint32_t flow)
{
	return flow < r->c.nflows ? &r->f[flow].st : NULL;
}

static void
send_ctrl(struct sim_recv *r, const struct sim_pkt *data, enum sim_pkt_type type,
	  uint32_t pull_bytes)
{
	struct sim_pkt *p = sim_pkt_alloc(r->s);

	if (p == NULL)
		return;
	p->type = (uint8_t)type;
	p->dst = data->src;
	p->flow = data->flow;
	p->seq = data->seq;
	p->tx_id = data->tx_id;
	p->ecn_ce = data->ecn_ce;
	p->ts_ns = data->ts_ns;
	p->cumack = r->f[data->flow].st.cumack;
	p->pull_bytes = pull_bytes;
	sim_host_send_ctrl(r->s, data->dst, p);
}

/* Send one queued pull and re-arm one full segment's wire time later. */
static void
pull_send(struct sim *s, void *obj, uint64_t host)
{
	struct sim_recv *r = obj;
	struct pull_queue *q = &r->pq[host];
	struct recv_flow *f;
	struct sim_pkt *p;

	q->armed = false;
	if (q->n == 0)
		return;
	f = &r->f[q->flow[q->head]];
	q->head = (q->head + 1) & (q->cap - 1);
	q->n--;
	p = sim_pkt_alloc(s);
	if (p == NULL)
		return;
	p->type = SIM_PKT_PULL;
	p->flow = (uint32_t)(f - r->f);
	p->dst = f->src;
	p->cumack = f->st.cumack;
	p->pull_bytes = f->seg_bytes;
	f->st.pulls++;
	sim_host_send_ctrl(s, (uint32_t)host, p);
	q->next_ns = sim_now(s) + sl_tx_ns_ceil(f->seg_bytes + sim_conf(s)->hdr_bytes,
						sim_conf(s)->switch_port[host].rate_bps);
	if (q->n > 0) {
		q->armed = true;
		sim_schedule(s, q->next_ns, pull_send, r, host);
	}
}

static void
pull_queue(struct sim_recv *r, uint32_t host, uint32_t flow)
{
	struct pull_queue *q = &r->pq[host];

	if (q->n == q->cap) {
		uint32_t cap = q->cap ? q->cap * 2 : 256;
		uint32_t *nf = malloc(cap * sizeof(*nf));

		if (nf == NULL)
			return; /* the pull is lost; the sender's timeout recovers */
		for (uint32_t i = 0; i < q->n; i++)
			nf[i] = q->flow[(q->head + i) & (q->cap - 1)];
		free(q->flow);
		q->flow = nf;
		q->cap = cap;
		q->head = 0;
	}
	q->flow[(q->head + q->n) & (q->cap - 1)] = flow;
	q->n++;
	if (!q->armed) {
		q->armed = true;
		sim_schedule(r->s, SL_MAX(q->next_ns, sim_now(r->s)), pull_send, r, host);
	}
}

/* Record a segment; true when it is new. Moves the cumack over every segment now in order. */
static bool
accept_seg(struct recv_flow *f, uint32_t seq)
{
	uint32_t off = seq - f->st.cumack;

	if (sl_seq_lt(seq, f->st.cumack))
		return false;
	if (off >= SIM_RECV_WINDOW) {
		f->st.beyond_win++;
		return false;
	}
	if (off > 0) {
		if (sl_bitmap_test(f->ooo, seq % SIM_RECV_WINDOW))
			return false;
		sl_bitmap_set(f->ooo, seq % SIM_RECV_WINDOW);
		return true;
	}
	f->st.cumack++;
	while (sl_bitmap_test(f->ooo, f->st.cumack % SIM_RECV_WINDOW)) {
		sl_bitmap_clear(f->ooo, f->st.cumack % SIM_RECV_WINDOW);
		f->st.cumack++;
	}
	return true;
}

static void
recv_input(void *ctx, struct sim_pkt *d, uint64_t now_ns)
{
	struct sim_recv *r = ctx;
	struct recv_flow *f;

	if (d->flow >= r->c.nflows || r->f[d->flow].ooo == NULL)
		return;
	f = &r->f[d->flow];
	f->src = d->src;
	if (d->trimmed) {
		if (r->c.ndp) {
			f->st.nacks++;
			send_ctrl(r, d, SIM_PKT_NACK, 0);
			pull_queue(r, d->dst, d->flow);
		}
		return;
	}
	if (accept_seg(f, d->seq)) {
		f->st.segs++;
		f->st.bytes += d->len_bytes;
	} else {
		f->st.dup_segs++;
	}
	send_ctrl(r, d, SIM_PKT_ACK, 0);
	if (d->ecn_ce && r->c.cnp_interval_ns &&
	    (f->last_cnp_ns == SIM_NEVER || now_ns - f->last_cnp_ns >= r->c.cnp_interval_ns)) {
		f->last_cnp_ns = now_ns;
		f->st.cnps++;
		send_ctrl(r, d, SIM_PKT_CNP, 0);
	}
	if (r->c.ndp)
		pull_queue(r, d->dst, d->flow);
}

const struct sim_receiver_ops sim_recv_ops = {
	.input = recv_input,
};
