/* SPDX-License-Identifier: BSD-3-Clause */
/* sim_sched.c - a simulated host's sender on lib/sched (see sim_sched.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim_sched.h"
#include "sl_xport.h"

#define SIM_BACKLOG_CHUNK (UINT32_C(1) << 16) /**< segments pushed at a time when backlogged */
#define SIM_NONE UINT32_MAX
#define SIM_FB_EVENTS_MAX 64u /**< engine events one lib/recv NACK may become at most */

struct sim_sched_flow {
	struct sim_flow_spec spec;
	uint32_t gflow;             /**< global flow id */
	uint64_t done_ns;           /**< all segments acked (finite flows), SIM_NEVER until then */
	struct sl_xport_fb_flow ff; /**< how it reads feedback (tracked: open in the tracker) */
	bool started;
};

struct sim_sched_host {
	struct sim *s;
	struct sl_sched *e;
	uint32_t host;
	uint32_t nlocal;    /**< flows added */
	uint32_t max_local; /**< engine capacity */
	uint32_t nflows;    /**< global ids served: [0, nflows) */
	uint32_t *local_of; /**< global id -> local id, SIM_NONE if not here */
	struct sim_sched_flow *f;
	uint32_t start_failures;
	struct sl_recv_rtx *rtx; /**< lib/recv's NACK tracker, NULL unless turned on */
	uint32_t fb_window;      /**< decoder bound on holes, packets: the engine's W (no hole
				  *   lies past what a flow may have outstanding), or lib/recv's
				  *   window with its tracker */
	uint64_t fb_bad;         /**< feedback bodies refused by the decoder */
};

struct sim_sched_host *
sim_sched_host_create(struct sim *s, uint32_t host, const struct sl_sched_conf *conf,
		      uint32_t nflows)
{
	struct sim_sched_host *h;

	if (s == NULL || conf == NULL || nflows == 0) {
		errno = EINVAL;
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (h == NULL)
		return NULL;
	h->s = s;
	h->host = host;
	h->nflows = nflows;
	h->max_local = conf->max_flows;
	h->local_of = malloc(nflows * sizeof(*h->local_of));
	h->f = calloc(conf->max_flows, sizeof(*h->f));
	if (h->local_of == NULL || h->f == NULL)
		goto fail;
	memset(h->local_of, 0xff, nflows * sizeof(*h->local_of));
	h->fb_window = conf->wnd_segs ? conf->wnd_segs : SL_SCHED_WND_DEFAULT;
	h->e = sl_sched_create(conf);
	if (h->e == NULL)
		goto fail;
	return h;
fail : {
	int err = errno ? errno : ENOMEM;

	sim_sched_host_free(h);
	errno = err;
}
	return NULL;
}

void
sim_sched_host_free(struct sim_sched_host *h)
{
	if (h == NULL)
		return;
	sl_sched_free(h->e);
	sl_recv_rtx_free(h->rtx);
	free(h->local_of);
	free(h->f);
	free(h);
}

/* Keep a backlogged flow's pushed tail at least one chunk past its window. */
static void
refill(struct sim_sched_host *h, uint32_t li)
{
	struct sl_flow_view v;

	if (h->f[li].spec.size_segs != 0 || sl_sched_flow_view(h->e, li, &v) != 0)
		return;
	if (v.tail - v.wnd_start < SIM_BACKLOG_CHUNK)
		sl_sched_flow_push(h->e, li, SIM_BACKLOG_CHUNK, (uint16_t)v.seg_bytes);
}

static void
flow_start(struct sim *s, void *obj, uint64_t li64)
{
	struct sim_sched_host *h = obj;
	struct sim_sched_flow *sf = &h->f[li64];
	uint32_t li = (uint32_t)li64;
	uint64_t n = sf->spec.size_segs;
	int rc;

	sf->spec.fc.proto = sf->spec.proto;
	sf->spec.fc.start_ns = sim_now(s);
	rc = sl_sched_flow_add(h->e, li, &sf->spec.fc);
	if (rc == 0 && n == 0)
		rc = sl_sched_flow_push(h->e, li, SIM_BACKLOG_CHUNK,
					(uint16_t)sf->spec.fc.seg_bytes);
	else if (rc == 0)
		rc = n > (UINT32_C(1) << 30) ? -EOVERFLOW
					     : sl_sched_flow_push(h->e, li, (uint32_t)n,
								  (uint16_t)sf->spec.fc.seg_bytes);
	if (rc == 0 && h->rtx && sf->spec.recovery == SL_RECV_MELO) {
		rc = sl_recv_rtx_flow_open(h->rtx, li, sf->spec.fc.first_seq);
		sf->ff.tracked = rc == 0;
	}
	if (rc) {
		h->start_failures++;
		return;
	}
	sf->started = true;
	sim_host_kick(s, h->host);
}

int
sim_sched_host_add_flow(struct sim_sched_host *h, uint32_t gflow, const struct sim_flow_spec *spec)
{
	struct sim_sched_flow *sf;

	if (gflow >= h->nflows || spec->src != h->host || h->local_of[gflow] != SIM_NONE)
		return -EINVAL;
	if (h->nlocal == h->max_local)
		return -ENOSPC;
	h->local_of[gflow] = h->nlocal;
	sf = &h->f[h->nlocal];
	sf->spec = *spec;
	sf->spec.proto[SL_PROTO_NAME_MAX - 1] = '\0';
	sf->gflow = gflow;
	sf->done_ns = SIM_NEVER;
	sf->ff = (struct sl_xport_fb_flow){
		.seg_bytes = spec->fc.seg_bytes, .sack = spec->sack, .ts = spec->ts};
	sim_schedule(h->s, spec->start_ns, flow_start, h, h->nlocal);
	h->nlocal++;
	return 0;
}

static bool
sched_next_pkt(void *ctx, uint64_t now_ns, struct sim_pkt *p)
{
	struct sim_sched_host *h = ctx;
	const struct sim_sched_flow *sf;
	struct sl_seg seg;

	if (sl_sched_next_burst(h->e, now_ns, &seg, 1) == 0)
		return false;
	sf = &h->f[seg.flow];
	p->flow = sf->gflow;
	p->dst = (uint16_t)sf->spec.dst;
	p->seq = seg.seq;
	p->tx_id = seg.tx_id;
	p->len_bytes = seg.len;
	p->last = (seg.flags & SL_SEG_F_TAIL) != 0;
	p->ts_ns = sf->spec.ts ? now_ns : 0;
	return true;
}

static uint64_t
sched_next_ns(void *ctx, uint64_t now_ns)
{
	struct sim_sched_host *h = ctx;
	uint64_t t = sl_sched_next_deadline(h->e);

	if (t == UINT64_MAX)
		return SIM_NEVER;
	return t < now_ns ? now_ns : t;
}

/* Feedback encoded by lib/recv: decoded, then turned into events as the daemon does. */
static unsigned
fb_events(struct sim_sched_host *h, struct sim_sched_flow *sf, uint32_t li, const struct sim_pkt *p,
	  struct sl_event *ev, unsigned max)
{
	struct sl_xfb x;

	if (sl_xfb_decode(p->fb, p->fb_len, h->fb_window, &x, NULL) < 0) {
		h->fb_bad++;
		return 0;
	}
	return sl_xport_fb_events(h->e, h->rtx, li, &sf->ff, &x, ev, max);
}

static void
sched_input(void *ctx, const struct sim_pkt *p, uint64_t now_ns)
{
	struct sim_sched_host *h = ctx;
	struct sl_event ev = {0}, evs[SIM_FB_EVENTS_MAX];
	struct sl_flow_view v;
	struct sim_sched_flow *sf;
	unsigned n;
	uint32_t li;

	if (p->flow >= h->nflows || (li = h->local_of[p->flow]) == SIM_NONE || !h->f[li].started)
		return;
	sf = &h->f[li];
	ev.flow = li;
	if (p->fb_len) {
		n = fb_events(h, sf, li, p, evs, SIM_FB_EVENTS_MAX);
		sl_sched_incoming(h->e, evs, n, now_ns);
		goto done;
	}
	ev.cumack = p->cumack;
	switch (p->type) {
	case SIM_PKT_ACK:
		ev.type = SL_EV_ACK;
		ev.flags = SL_EVF_CUMACK;
		if (sf->spec.sack && sl_seq_ge(p->seq, p->cumack)) {
			ev.flags |= SL_EVF_SACK;
			ev.sack_seq = p->seq;
			ev.sack_tx_id = p->tx_id;
		}
		if (p->ecn_ce) {
			ev.flags |= SL_EVF_ECE;
			ev.ce_segs = 1;
		}
		if (sf->spec.ts && p->ts_ns) {
			ev.flags |= SL_EVF_TS;
			ev.echo_ts_ns = p->ts_ns;
		}
		break;
	case SIM_PKT_NACK:
		ev.type = SL_EV_NACK;
		ev.flags = SL_EVF_CUMACK;
		ev.nack_seq = p->seq;
		ev.nack_len = 1;
		break;
	case SIM_PKT_PULL:
		ev.type = SL_EV_PULL;
		ev.grant_bytes = p->pull_bytes;
		break;
	case SIM_PKT_CNP:
		ev.type = SL_EV_CNP;
		break;
	default:
		return;
	}
	sl_sched_incoming(h->e, &ev, 1, now_ns);
done:
	refill(h, li);
	if (sf->spec.size_segs && sf->done_ns == SIM_NEVER &&
	    sl_sched_flow_view(h->e, li, &v) == 0 && v.wnd_start == v.tail)
		sf->done_ns = now_ns;
}

const struct sim_sender_ops sim_sched_sender_ops = {
	.next_pkt = sched_next_pkt,
	.next_ns = sched_next_ns,
	.input = sched_input,
};

static int
local(const struct sim_sched_host *h, uint32_t gflow)
{
	if (gflow >= h->nflows || h->local_of[gflow] == SIM_NONE ||
	    !h->f[h->local_of[gflow]].started)
		return -1;
	return (int)h->local_of[gflow];
}

int
sim_sched_host_view(const struct sim_sched_host *h, uint32_t gflow, struct sl_flow_view *v)
{
	int li = local(h, gflow);

	return li < 0 ? -ENOENT : sl_sched_flow_view(h->e, (uint32_t)li, v);
}

int
sim_sched_host_flow_stats(const struct sim_sched_host *h, uint32_t gflow, struct sl_flow_stats *st)
{
	int li = local(h, gflow);

	return li < 0 ? -ENOENT : sl_sched_flow_stats_get(h->e, (uint32_t)li, st);
}

const void *
sim_sched_host_priv(const struct sim_sched_host *h, uint32_t gflow)
{
	int li = local(h, gflow);

	return li < 0 ? NULL : sl_sched_flow_priv(h->e, (uint32_t)li);
}

uint64_t
sim_sched_host_done_ns(const struct sim_sched_host *h, uint32_t gflow)
{
	int li = local(h, gflow);

	return li < 0 ? SIM_NEVER : h->f[li].done_ns;
}

void
sim_sched_host_stats(const struct sim_sched_host *h, struct sl_sched_stats *st)
{
	sl_sched_stats_get(h->e, st);
}

uint32_t
sim_sched_host_start_failures(const struct sim_sched_host *h)
{
	return h->start_failures;
}

int
sim_sched_host_use_rtx(struct sim_sched_host *h, const struct sl_recv_rtx_conf *conf)
{
	struct sl_recv_rtx_conf c = *conf;

	if (h->rtx != NULL || h->nlocal)
		return -EINVAL;
	c.max_flows = h->max_local;
	h->rtx = sl_recv_rtx_create(&c);
	if (h->rtx == NULL)
		return -errno;
	h->fb_window = c.window_pkts;
	return 0;
}

void
sim_sched_host_rtx_stats(const struct sim_sched_host *h, struct sl_recv_rtx_stats *st)
{
	if (h->rtx)
		sl_recv_rtx_stats_get(h->rtx, st);
	else
		memset(st, 0, sizeof(*st));
}

uint64_t
sim_sched_host_fb_bad(const struct sim_sched_host *h)
{
	return h->fb_bad;
}
