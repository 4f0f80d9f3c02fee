/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sim_core.c - event heap, virtual clock, packet pool, ports, switch and hosts (see sim.h for
 * the model). Nothing here knows about transports: senders and receivers plug in through
 * their ops.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "sl_time.h"

#define SIM_PKT_CHUNK 4096u

struct sim_event {
	uint64_t t_ns;  /**< when it runs */
	uint64_t order; /**< scheduling counter: the tie-break that keeps runs deterministic */
	sim_event_fn fn;
	void *obj;
	uint64_t arg;
};

struct sim_fifo {
	struct sim_pkt *head;
	struct sim_pkt *tail;
};

struct sim_port {
	struct sim_port_conf c;
	struct sim_fifo data;     /**< data packets */
	struct sim_fifo ctrl;     /**< control packets and trimmed headers, served first */
	uint64_t data_bytes;      /**< bytes in the data FIFO */
	bool busy;                /**< a packet is serializing */
	bool at_switch;           /**< switch -> host (else host -> switch) */
	uint64_t last_arrival_ns; /**< arrival time of the last packet sent (FIFO under jitter) */
	uint32_t host;            /**< the host at the other end (or this host's uplink) */
	struct sim_port_stats st;
};

struct sim_host {
	struct sim_port nic;
	const struct sim_sender_ops *sops;
	void *sctx;
	const struct sim_receiver_ops *rops;
	void *rctx;
	uint64_t wake_ns;         /**< earliest pending wake-up, SIM_NEVER when none */
	uint64_t in_switch_bytes; /**< data from this host queued in the switch, bytes */
	bool pfc_sent;            /**< the switch has sent this host a PAUSE (not yet a RESUME) */
	bool paused;              /**< a PAUSE arrived: no data until the RESUME */
};

struct sim {
	struct sim_conf conf;
	uint64_t now_ns;
	uint64_t order;
	struct sim_event *heap;
	size_t nheap;
	size_t heap_cap;
	struct sim_pkt *free_pkts;
	void **chunks;
	size_t nchunks;
	int err; /**< first allocation failure: the run stops */
	struct sl_rng rng;
	uint64_t loss_thresh;   /**< conf.loss as an RNG threshold */
	uint64_t ctrl_thresh;   /**< conf.ctrl_loss as an RNG threshold */
	uint64_t data_arrivals; /**< data packets that reached a host, for nth drops */
	struct sim_host host[SIM_MAX_HOSTS];
	struct sim_port sw[SIM_MAX_HOSTS];
	struct sim_stats st;
	sim_observer obs;
	void *obs_ctx;
};

const char *const sim_obs_names[SIM_OBS_N] = {
	[SIM_OBS_TX] = "tx",
	[SIM_OBS_DROP_QUEUE] = "drop_queue",
	[SIM_OBS_DROP_RANDOM] = "drop_random",
	[SIM_OBS_DROP_SCRIPTED] = "drop_scripted",
	[SIM_OBS_TRIM] = "trim",
	[SIM_OBS_MARK] = "ecn_mark",
};

/* ---- event heap ---- */

static bool
ev_before(const struct sim_event *a, const struct sim_event *b)
{
	return a->t_ns < b->t_ns || (a->t_ns == b->t_ns && a->order < b->order);
}

void
sim_schedule(struct sim *s, uint64_t t_ns, sim_event_fn fn, void *obj, uint64_t arg)
{
	size_t i;

	if (s->nheap == s->heap_cap) {
		size_t cap = s->heap_cap ? s->heap_cap * 2 : 1024;
		struct sim_event *h = realloc(s->heap, cap * sizeof(*h));

		if (h == NULL) {
			s->err = ENOMEM;
			return;
		}
		s->heap = h;
		s->heap_cap = cap;
	}
	if (t_ns < s->now_ns)
		t_ns = s->now_ns;
	i = s->nheap++;
	s->heap[i] = (struct sim_event){t_ns, s->order++, fn, obj, arg};
	while (i > 0) {
		size_t up = (i - 1) / 2;
		struct sim_event tmp;

		if (!ev_before(&s->heap[i], &s->heap[up]))
			break;
		tmp = s->heap[up];
		s->heap[up] = s->heap[i];
		s->heap[i] = tmp;
		i = up;
	}
}

static struct sim_event
heap_pop(struct sim *s)
{
	struct sim_event top = s->heap[0];
	size_t i = 0;

	s->heap[0] = s->heap[--s->nheap];
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		struct sim_event tmp;

		if (l < s->nheap && ev_before(&s->heap[l], &s->heap[m]))
			m = l;
		if (l + 1 < s->nheap && ev_before(&s->heap[l + 1], &s->heap[m]))
			m = l + 1;
		if (m == i)
			break;
		tmp = s->heap[m];
		s->heap[m] = s->heap[i];
		s->heap[i] = tmp;
		i = m;
	}
	return top;
}

uint64_t
sim_now(const struct sim *s)
{
	return s->now_ns;
}

uint64_t
sim_run(struct sim *s, uint64_t end_ns)
{
	uint64_t n = 0;

	while (s->nheap > 0 && s->err == 0 && s->heap[0].t_ns <= end_ns) {
		struct sim_event e = heap_pop(s);

		s->now_ns = e.t_ns;
		e.fn(s, e.obj, e.arg);
		n++;
	}
	if (s->now_ns < end_ns && s->err == 0)
		s->now_ns = end_ns;
	s->st.events += n;
	return n;
}

/* ---- packets ---- */

struct sim_pkt *
sim_pkt_alloc(struct sim *s)
{
	struct sim_pkt *p;

	if (s->free_pkts == NULL) {
		struct sim_pkt *chunk = calloc(SIM_PKT_CHUNK, sizeof(*chunk));
		void **chunks = realloc(s->chunks, (s->nchunks + 1) * sizeof(*chunks));

		if (chunk == NULL || chunks == NULL) {
			free(chunk);
			if (chunks != NULL)
				s->chunks = chunks;
			s->err = ENOMEM;
			return NULL;
		}
		s->chunks = chunks;
		s->chunks[s->nchunks++] = chunk;
		for (uint32_t i = 0; i < SIM_PKT_CHUNK; i++) {
			chunk[i].next = s->free_pkts;
			s->free_pkts = &chunk[i];
		}
	}
	p = s->free_pkts;
	s->free_pkts = p->next;
	memset(p, 0, sizeof(*p));
	return p;
}

void
sim_pkt_free(struct sim *s, struct sim_pkt *p)
{
	p->next = s->free_pkts;
	s->free_pkts = p;
}

static void
fifo_push(struct sim_fifo *f, struct sim_pkt *p)
{
	p->next = NULL;
	if (f->tail)
		f->tail->next = p;
	else
		f->head = p;
	f->tail = p;
}

static struct sim_pkt *
fifo_pop(struct sim_fifo *f)
{
	struct sim_pkt *p = f->head;

	if (p) {
		f->head = p->next;
		if (f->head == NULL)
			f->tail = NULL;
	}
	return p;
}

static void
observe(struct sim *s, enum sim_obs what, const struct sim_pkt *p)
{
	if (s->obs)
		s->obs(s->obs_ctx, what, p, s->now_ns);
}

/* ---- ports ---- */

static void host_try_send(struct sim *s, struct sim_host *h);
static void port_start(struct sim *s, struct sim_port *pt);
static void ecn_mark(struct sim *s, struct sim_port *pt, struct sim_pkt *p);
static void pfc_account(struct sim *s, uint32_t src, int64_t delta);

static void arrive_at_switch(struct sim *s, void *obj, uint64_t arg);
static void arrive_at_host(struct sim *s, void *obj, uint64_t arg);

static void
port_done(struct sim *s, void *obj, uint64_t arg)
{
	struct sim_port *pt = obj;
	struct sim_pkt *p = (struct sim_pkt *)(uintptr_t)arg;
	uint64_t at = s->now_ns + pt->c.prop_ns;

	pt->busy = false;
	if (pt->c.jitter_ns)
		at = SL_MAX(at + sl_rng_below(&s->rng, pt->c.jitter_ns), pt->last_arrival_ns);
	pt->last_arrival_ns = at;
	sim_schedule(s, at, pt->at_switch ? arrive_at_host : arrive_at_switch,
		     pt->at_switch ? (void *)&s->host[pt->host] : (void *)s, (uintptr_t)p);
	if (pt->at_switch)
		port_start(s, pt);
	else
		host_try_send(s, &s->host[pt->host]);
}

static void
port_transmit(struct sim *s, struct sim_port *pt, struct sim_pkt *p)
{
	pt->busy = true;
	pt->st.tx_pkts++;
	pt->st.tx_bytes += p->wire_bytes;
	sim_schedule(s, s->now_ns + sl_tx_ns_ceil(p->wire_bytes, pt->c.rate_bps), port_done, pt,
		     (uintptr_t)p);
}

static void
port_start(struct sim *s, struct sim_port *pt)
{
	struct sim_pkt *p;

	if (pt->busy)
		return;
	p = fifo_pop(&pt->ctrl);
	if (p == NULL) {
		p = fifo_pop(&pt->data);
		if (p == NULL)
			return;
		pt->data_bytes -= p->wire_bytes;
		if (pt->at_switch)
			pfc_account(s, p->src, -(int64_t)p->wire_bytes);
		if (pt->c.ecn_dequeue)
			ecn_mark(s, pt, p);
	}
	port_transmit(s, pt, p);
}

static bool
ecn_should_mark(struct sim *s, const struct sim_port *pt)
{
	const struct sim_port_conf *c = &pt->c;
	uint64_t q = pt->data_bytes;

	if (c->ecn_kmin_bytes == 0 || q <= c->ecn_kmin_bytes)
		return false;
	if (q > c->ecn_kmax_bytes)
		return true;
	/* RED ramp: p = pmax * (q - kmin) / (kmax - kmin), drawn in ppm. */
	return sl_rng_below(&s->rng, UINT64_C(1000000) * (c->ecn_kmax_bytes - c->ecn_kmin_bytes)) <
	       (uint64_t)c->ecn_pmax_ppm * (q - c->ecn_kmin_bytes);
}

static void
ecn_mark(struct sim *s, struct sim_port *pt, struct sim_pkt *p)
{
	if (!ecn_should_mark(s, pt))
		return;
	p->ecn_ce = 1;
	pt->st.ecn_marks++;
	s->st.ecn_marks++;
	observe(s, SIM_OBS_MARK, p);
}

static void
pfc_signal(struct sim *s, void *obj, uint64_t pause)
{
	struct sim_host *h = obj;

	h->paused = pause != 0;
	if (pause)
		h->nic.st.pfc_pauses++;
	else
		host_try_send(s, h);
}

/* Per-ingress PFC accounting of data held by the switch from host `src`. */
static void
pfc_account(struct sim *s, uint32_t src, int64_t delta)
{
	struct sim_host *h = &s->host[src];
	const struct sim_port_conf *c = &h->nic.c;

	h->in_switch_bytes += (uint64_t)delta;
	if (c->pfc_xoff_bytes == 0)
		return;
	if (!h->pfc_sent && h->in_switch_bytes > c->pfc_xoff_bytes) {
		h->pfc_sent = true;
		sim_schedule(s, s->now_ns + c->prop_ns, pfc_signal, h, 1);
	} else if (h->pfc_sent && h->in_switch_bytes <= c->pfc_xon_bytes) {
		h->pfc_sent = false;
		sim_schedule(s, s->now_ns + c->prop_ns, pfc_signal, h, 0);
	}
}

static void
port_enqueue(struct sim *s, struct sim_port *pt, struct sim_pkt *p)
{
	if (p->type != SIM_PKT_DATA || p->trimmed) {
		fifo_push(&pt->ctrl, p);
	} else if (pt->c.limit_bytes && pt->data_bytes + p->wire_bytes > pt->c.limit_bytes) {
		if (pt->c.trim) {
			p->trimmed = 1;
			p->len_bytes = 0;
			p->wire_bytes = s->conf.hdr_bytes;
			pt->st.trims++;
			s->st.trims++;
			observe(s, SIM_OBS_TRIM, p);
			fifo_push(&pt->ctrl, p);
		} else {
			pt->st.drops_full++;
			s->st.drops_queue++;
			observe(s, SIM_OBS_DROP_QUEUE, p);
			sim_pkt_free(s, p);
			return;
		}
	} else {
		if (!pt->c.ecn_dequeue)
			ecn_mark(s, pt, p);
		fifo_push(&pt->data, p);
		pt->data_bytes += p->wire_bytes;
		if (pt->at_switch)
			pfc_account(s, p->src, (int64_t)p->wire_bytes);
		if (pt->data_bytes > pt->st.max_q_bytes)
			pt->st.max_q_bytes = pt->data_bytes;
	}
	port_start(s, pt);
}

static void
arrive_at_switch(struct sim *s, void *obj, uint64_t arg)
{
	struct sim_pkt *p = (struct sim_pkt *)(uintptr_t)arg;

	(void)obj;
	port_enqueue(s, &s->sw[p->dst], p);
}

/* ---- hosts ---- */

static uint64_t
mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= UINT64_C(0xbf58476d1ce4e5b9);
	x ^= x >> 27;
	x *= UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

/* The receive impairment: scripted drops first, then random loss. */
static enum sim_obs
rx_impair(struct sim *s, const struct sim_pkt *p)
{
	const struct sim_conf *c = &s->conf;

	s->data_arrivals++;
	for (uint32_t i = 0; i < c->ndrops; i++) {
		const struct sim_drop *d = &c->drops[i];

		if (d->nth ? d->nth == s->data_arrivals
			   : (d->flow == p->flow && d->seq == p->seq && d->tx_id == p->tx_id))
			return SIM_OBS_DROP_SCRIPTED;
	}
	if (s->loss_thresh == 0)
		return SIM_OBS_TX;
	if (c->loss_mode == SIM_LOSS_SEGMENT && p->tx_id < 3) {
		uint64_t key = mix64(c->seed ^ mix64(((uint64_t)p->flow << 40) ^
						     ((uint64_t)p->seq << 8) ^ p->tx_id));

		return key < s->loss_thresh ? SIM_OBS_DROP_RANDOM : SIM_OBS_TX;
	}
	return sl_rng_chance(&s->rng, s->loss_thresh) ? SIM_OBS_DROP_RANDOM : SIM_OBS_TX;
}

static void
arrive_at_host(struct sim *s, void *obj, uint64_t arg)
{
	struct sim_host *h = obj;
	struct sim_pkt *p = (struct sim_pkt *)(uintptr_t)arg;

	if (p->type == SIM_PKT_DATA) {
		enum sim_obs v = rx_impair(s, p);

		if (v != SIM_OBS_TX) {
			if (v == SIM_OBS_DROP_SCRIPTED)
				s->st.drops_scripted++;
			else
				s->st.drops_random++;
			observe(s, v, p);
		} else if (h->rops) {
			s->st.data_pkts_rx++;
			h->rops->input(h->rctx, p, s->now_ns);
		}
	} else if (s->ctrl_thresh && sl_rng_chance(&s->rng, s->ctrl_thresh)) {
		s->st.drops_ctrl++; /* drawn only with ctrl_loss: other runs keep their RNG stream
				     */
	} else if (h->sops) {
		s->st.ctrl_pkts[p->type]++;
		h->sops->input(h->sctx, p, s->now_ns);
		host_try_send(s, h);
	}
	sim_pkt_free(s, p);
}

static void
host_wake(struct sim *s, void *obj, uint64_t arg)
{
	struct sim_host *h = obj;

	if (h->wake_ns != arg)
		return; /* superseded by an earlier wake-up that already ran */
	h->wake_ns = SIM_NEVER;
	host_try_send(s, h);
}

static void
host_try_send(struct sim *s, struct sim_host *h)
{
	struct sim_port *pt = &h->nic;
	struct sim_pkt *p;
	uint64_t t;

	if (pt->busy)
		return;
	p = fifo_pop(&pt->ctrl);
	if (p) {
		port_transmit(s, pt, p);
		return;
	}
	if (h->sops == NULL || h->paused)
		return;
	p = sim_pkt_alloc(s);
	if (p == NULL)
		return;
	if (h->sops->next_pkt(h->sctx, s->now_ns, p)) {
		p->type = SIM_PKT_DATA;
		p->src = (uint16_t)pt->host;
		p->wire_bytes = p->len_bytes + s->conf.hdr_bytes;
		observe(s, SIM_OBS_TX, p);
		port_transmit(s, pt, p);
		return;
	}
	sim_pkt_free(s, p);
	t = h->sops->next_ns(h->sctx, s->now_ns);
	if (t == SIM_NEVER)
		return;
	if (t <= s->now_ns)
		t = s->now_ns + 1; /* the sender declined now: never spin on one instant */
	if (h->wake_ns == SIM_NEVER || t < h->wake_ns) {
		h->wake_ns = t;
		sim_schedule(s, t, host_wake, h, t);
	}
}

void
sim_host_send_ctrl(struct sim *s, uint32_t host, struct sim_pkt *p)
{
	struct sim_host *h = &s->host[host];

	p->src = (uint16_t)host;
	p->wire_bytes = s->conf.ctrl_bytes;
	fifo_push(&h->nic.ctrl, p);
	host_try_send(s, h);
}

void
sim_host_kick(struct sim *s, uint32_t host)
{
	host_try_send(s, &s->host[host]);
}

/* ---- construction ---- */

static int
port_conf_check(const struct sim_port_conf *c)
{
	if (c->rate_bps == 0 || (c->ecn_kmin_bytes && c->ecn_kmax_bytes < c->ecn_kmin_bytes) ||
	    c->ecn_pmax_ppm > 1000000 || c->pfc_xon_bytes > c->pfc_xoff_bytes)
		return -EINVAL;
	return 0;
}

struct sim *
sim_create(const struct sim_conf *conf)
{
	struct sim *s;

	if (conf == NULL || conf->nhosts == 0 || conf->nhosts > SIM_MAX_HOSTS ||
	    conf->ndrops > SIM_MAX_DROPS || !(conf->loss >= 0.0 && conf->loss <= 1.0) ||
	    !(conf->ctrl_loss >= 0.0 && conf->ctrl_loss <= 1.0)) {
		errno = EINVAL;
		return NULL;
	}
	for (uint32_t i = 0; i < conf->nhosts; i++) {
		if (port_conf_check(&conf->host_port[i]) ||
		    port_conf_check(&conf->switch_port[i])) {
			errno = EINVAL;
			return NULL;
		}
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	s->conf = *conf;
	sl_rng_seed(&s->rng, conf->seed);
	s->loss_thresh = sl_rng_threshold(conf->loss);
	s->ctrl_thresh = sl_rng_threshold(conf->ctrl_loss);
	for (uint32_t i = 0; i < conf->nhosts; i++) {
		s->host[i].nic.c = conf->host_port[i];
		s->host[i].nic.host = i;
		s->host[i].wake_ns = SIM_NEVER;
		s->sw[i].c = conf->switch_port[i];
		s->sw[i].host = i;
		s->sw[i].at_switch = true;
	}
	return s;
}

void
sim_free(struct sim *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->nchunks; i++)
		free(s->chunks[i]);
	free(s->chunks);
	free(s->heap);
	free(s);
}

void
sim_set_sender(struct sim *s, uint32_t host, const struct sim_sender_ops *ops, void *ctx)
{
	s->host[host].sops = ops;
	s->host[host].sctx = ctx;
}

void
sim_set_receiver(struct sim *s, uint32_t host, const struct sim_receiver_ops *ops, void *ctx)
{
	s->host[host].rops = ops;
	s->host[host].rctx = ctx;
}

void
sim_set_observer(struct sim *s, sim_observer fn, void *ctx)
{
	s->obs = fn;
	s->obs_ctx = ctx;
}

const struct sim_stats *
sim_stats(const struct sim *s)
{
	return &s->st;
}

const struct sim_port_stats *
sim_port_stats(const struct sim *s, uint32_t host, bool at_switch)
{
	return at_switch ? &s->sw[host].st : &s->host[host].nic.st;
}

uint64_t
sim_port_queue_bytes(const struct sim *s, uint32_t host, bool at_switch)
{
	return at_switch ? s->sw[host].data_bytes : s->host[host].nic.data_bytes;
}

const struct sim_conf *
sim_conf(const struct sim *s)
{
	return &s->conf;
}

struct sl_rng *
sim_rng(struct sim *s)
{
	return &s->rng;
}

int
sim_error(const struct sim *s)
{
	return s->err;
}
