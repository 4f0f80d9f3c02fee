/* SPDX-License-Identifier: BSD-3-Clause */
/* sim_ec.c - lib/ec and a draining host behind struct sim_receiver_ops (see sim_ec.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sim_ec.h"
#include "sim_fb.h"
#include "sl_xport.h"
#include "sl_time.h"

/* What each policy runs: the sender's program and the target's two switches. */
static const struct {
	const char *name;
	const char *program;
	bool policy; /**< the target sends DACKs and holds IACKs */
	bool nack;   /**< the target NACKs out-of-order arrivals */
} policies[SIM_EC_NPOLICIES] = {
	[SIM_EC_DACK] = {"dack", "dack", true, true},
	[SIM_EC_OPT] = {"opt", "opt", false, true},
	[SIM_EC_AIMD] = {"aimd", "aimd", false, true},
	[SIM_EC_TIMEOUT] = {"timeout", "opt", false, false},
};

struct ec_flow {
	struct sim_ec_flow_stats st;
	uint16_t src; /**< sending host */
	uint16_t dst; /**< receiving host */
	bool open;
};

/* One target host: its queue and the server that drains it. */
struct ec_host {
	struct sl_ec *q;
	uint64_t link_bps;   /**< the host's link rate, bits/s */
	uint32_t *arr_bins;  /**< with steps: wire bytes arrived per 1 us bin */
	uint32_t *done_bins; /**< with steps: wire bytes processed per 1 us bin */
	uint32_t nbins;
	bool busy;             /**< the head packet is being processed */
	uint64_t done_ns;      /**< busy: when its processing ends, ns */
	uint64_t since_ns;     /**< measuring from here (SIM_NEVER before the first arrival) */
	uint64_t last_ns;      /**< occupancy and busy time are tallied up to here, ns */
	uint64_t area_byte_ns; /**< occupancy integrated over the measured time, bytes x ns */
	uint64_t busy_ns;      /**< processing time in the measured time, ns */
};

struct sim_ec {
	struct sim *s;
	struct sim_ec_conf c;
	uint32_t hdr_bytes; /**< header bytes of a data packet on the wire */
	struct ec_flow *f;
	struct ec_host h[SIM_MAX_HOSTS];
	struct sl_ec_action *act;
	unsigned act_max;
	FILE *trace;
	uint64_t encode_errors;
};

int
sim_ec_policy_parse(const char *name)
{
	for (int i = 0; i < SIM_EC_NPOLICIES; i++)
		if (!strcmp(name, policies[i].name))
			return i;
	return -1;
}

const char *
sim_ec_policy_name(uint8_t policy)
{
	return policy < SIM_EC_NPOLICIES ? policies[policy].name : "?";
}

void
sim_ec_flow_spec(const struct sim_ec_conf *c, struct sim_flow_spec *sp)
{
	snprintf(sp->proto, sizeof(sp->proto), "%s", policies[c->policy].program);
	sp->fc.param[0] = c->opt_pkts;
	sp->fc.param[1] = c->opt_bytes;
	sp->fc.param[3] = c->h1_iacks;
}

struct sim_ec *
sim_ec_create(struct sim *s, const struct sim_ec_conf *c)
{
	struct sim_ec *ec;

	if (s == NULL || c == NULL || c->nflows == 0 || c->policy >= SIM_EC_NPOLICIES ||
	    c->drain_pct == 0 || c->drain_pct > 10000 || c->nsteps > SIM_EC_STEPS_MAX) {
		errno = EINVAL;
		return NULL;
	}
	for (uint32_t k = 0; k < c->nsteps; k++)
		if (c->step[k].pct == 0 || c->step[k].pct > 10000 ||
		    (k && c->step[k].at_ns <= c->step[k - 1].at_ns)) {
			errno = EINVAL;
			return NULL;
		}
	ec = calloc(1, sizeof(*ec));
	if (ec == NULL)
		return NULL;
	ec->s = s;
	ec->c = *c;
	ec->c.q.max_conns = c->nflows;
	ec->c.q.policy = policies[c->policy].policy;
	ec->c.q.nack = policies[c->policy].nack;
	ec->hdr_bytes = sim_conf(s)->hdr_bytes;
	ec->f = calloc(c->nflows, sizeof(*ec->f));
	if (ec->f == NULL) {
		free(ec);
		errno = ENOMEM;
		return NULL;
	}
	return ec;
}

void
sim_ec_free(struct sim_ec *ec)
{
	if (ec == NULL)
		return;
	for (uint32_t h = 0; h < SIM_MAX_HOSTS; h++) {
		sl_ec_free(ec->h[h].q);
		free(ec->h[h].arr_bins);
		free(ec->h[h].done_bins);
	}
	free(ec->act);
	free(ec->f);
	free(ec);
}

/* Host h's queue, created with its first flow (the action array grows to fit it). */
static int
host_open(struct sim_ec *ec, uint32_t h)
{
	struct ec_host *eh = &ec->h[h];
	unsigned need;

	if (eh->q)
		return 0;
	eh->q = sl_ec_create(&ec->c.q);
	if (eh->q == NULL)
		return -errno;
	need = sl_ec_actions_max(eh->q);
	if (need > ec->act_max) {
		struct sl_ec_action *a = realloc(ec->act, need * sizeof(*a));

		if (a == NULL)
			return -ENOMEM;
		ec->act = a;
		ec->act_max = need;
	}
	eh->link_bps = sim_conf(ec->s)->switch_port[h].rate_bps;
	eh->since_ns = SIM_NEVER;
	if (ec->c.nsteps) {
		eh->nbins = (uint32_t)(ec->c.duration_ns / SL_NS_PER_US + 1);
		eh->arr_bins = calloc(eh->nbins, sizeof(*eh->arr_bins));
		eh->done_bins = calloc(eh->nbins, sizeof(*eh->done_bins));
		if (eh->arr_bins == NULL || eh->done_bins == NULL)
			return -ENOMEM;
	}
	return 0;
}

int
sim_ec_add_flow(struct sim_ec *ec, uint32_t flow, const struct sim_flow_spec *sp)
{
	int rc;

	if (flow >= ec->c.nflows || sp->dst >= SIM_MAX_HOSTS || ec->f[flow].open)
		return -EINVAL;
	rc = host_open(ec, sp->dst);
	if (rc == 0)
		rc = sl_ec_conn_open(ec->h[sp->dst].q, flow, sp->fc.first_seq);
	if (rc)
		return rc;
	ec->f[flow] =
		(struct ec_flow){.src = (uint16_t)sp->src, .dst = (uint16_t)sp->dst, .open = true};
	ec->f[flow].st.rx.cumack = sp->fc.first_seq;
	ec->f[flow].st.first_dack_ns = SIM_NEVER;
	return 0;
}

void
sim_ec_set_trace(struct sim_ec *ec, FILE *f)
{
	ec->trace = f;
}

const struct sim_ec_flow_stats *
sim_ec_flow(const struct sim_ec *ec, uint32_t flow)
{
	return flow < ec->c.nflows ? &ec->f[flow].st : NULL;
}

uint64_t
sim_ec_encode_errors(const struct sim_ec *ec)
{
	return ec->encode_errors;
}

/* Occupancy x time and busy time from the last tally to now, added to the running sums. */
static void
tally(const struct ec_host *eh, uint64_t now_ns, uint64_t *area_byte_ns, uint64_t *busy_ns)
{
	uint64_t from = SL_MAX(eh->last_ns, eh->since_ns), dt = now_ns > from ? now_ns - from : 0;

	*area_byte_ns = eh->area_byte_ns + (uint64_t)sl_ec_queue_bytes(eh->q) * dt;
	*busy_ns = eh->busy_ns + (eh->busy ? dt : 0);
}

/* Bring host eh's sums up to now: call before its occupancy or its server changes. */
static void
account(struct ec_host *eh, uint64_t now_ns)
{
	tally(eh, now_ns, &eh->area_byte_ns, &eh->busy_ns);
	eh->last_ns = now_ns;
}

int
sim_ec_host_stats(const struct sim_ec *ec, uint32_t h, uint64_t now_ns,
		  struct sim_ec_host_stats *st)
{
	const struct ec_host *eh;
	uint64_t area;

	if (h >= SIM_MAX_HOSTS || ec->h[h].q == NULL)
		return -ENOENT;
	eh = &ec->h[h];
	memset(st, 0, sizeof(*st));
	sl_ec_stats_get(eh->q, &st->q);
	tally(eh, now_ns, &area, &st->busy_ns);
	st->active_ns = now_ns > eh->since_ns ? now_ns - eh->since_ns : 0;
	st->queue_mean_bytes = st->active_ns ? (double)area / (double)st->active_ns : 0;
	return 0;
}

static void
trace(struct sim_ec *ec, uint32_t host, uint32_t flow, const char *what, uint32_t psn)
{
	if (ec->trace)
		fprintf(ec->trace, "%" PRIu64 ",%u,%u,%s,%u,%u\n", sim_now(ec->s), host, flow, what,
			psn, sl_ec_queue_bytes(ec->h[host].q));
}

/* The target's actions onto host's link, each encoded as on the wire, and counted. */
static void
send_actions(struct sim_ec *ec, uint32_t host, unsigned n)
{
	static const char *const names[] = {
		[SL_EC_IACK] = "iack", [SL_EC_DACK] = "dack", [SL_EC_NACK] = "nack"};

	for (unsigned i = 0; i < n; i++) {
		const struct sl_ec_action *a = &ec->act[i];
		struct sim_ec_flow_stats *st = &ec->f[a->conn].st;
		bool nack = a->type == SL_EC_NACK;
		struct sl_xfb fb;
		int rc;

		sl_xport_fb_from_ec(a, a->conn, &fb);
		rc = sim_fb_send(ec->s, host, ec->f[a->conn].src, nack ? SIM_PKT_NACK : SIM_PKT_ACK,
				 &fb, a->ack_psn);
		if (rc == -ENOMEM)
			return;
		if (rc < 0) {
			ec->encode_errors++;
			continue;
		}
		trace(ec, host, a->conn, names[a->type], a->ack_psn);
		if (a->type == SL_EC_IACK) {
			st->iacks++;
		} else if (a->type == SL_EC_DACK) {
			st->dacks++;
			st->first_dack_ns = SL_MIN(st->first_dack_ns, sim_now(ec->s));
		} else {
			st->rx.nacks++;
		}
	}
}

static void drained(struct sim *s, void *obj, uint64_t host);

/* The drain rate, % of the link, in force at now_ns. */
static uint32_t
drain_pct_at(const struct sim_ec *ec, uint64_t now_ns)
{
	uint32_t pct = ec->c.drain_pct;

	for (uint32_t k = 0; k < ec->c.nsteps && ec->c.step[k].at_ns <= now_ns; k++)
		pct = ec->c.step[k].pct;
	return pct;
}

/* Count wire bytes in the 1 us bin of now_ns (kept only with steps). */
static void
bin_add(uint32_t *bins, uint32_t nbins, uint64_t now_ns, uint32_t bytes)
{
	uint64_t b = now_ns / SL_NS_PER_US;

	if (bins && b < nbins)
		bins[b] += bytes;
}

int
sim_ec_step_result(const struct sim_ec *ec, uint32_t h, uint32_t k, struct sim_ec_step_result *r)
{
	const uint32_t w = SIM_EC_STEP_WINDOW_NS / SL_NS_PER_US;
	const struct ec_host *eh;
	const uint32_t *bins;
	uint64_t sum = 0, want_bps;
	uint32_t first;
	bool fall;

	if (h >= SIM_MAX_HOSTS || ec->h[h].arr_bins == NULL || k >= ec->c.nsteps)
		return -ENOENT;
	eh = &ec->h[h];
	r->at_ns = ec->c.step[k].at_ns;
	r->from_pct = k ? ec->c.step[k - 1].pct : ec->c.drain_pct;
	r->to_pct = ec->c.step[k].pct;
	r->settle_ns = -1;
	fall = r->to_pct < r->from_pct;
	bins = fall ? eh->arr_bins : eh->done_bins;
	/* fall: arrivals at most 110 % of the new rate; rise: processing at least 90 % of it */
	want_bps = eh->link_bps * r->to_pct / 100 * (fall ? 110 : 90) / 100;
	first = (uint32_t)(r->at_ns / SL_NS_PER_US);
	for (uint32_t b = first; b < eh->nbins; b++) {
		sum += bins[b];
		if (b >= first + w)
			sum -= bins[b - w];
		if (b + 1 < first + w)
			continue; /* the window starts at the step */
		if (fall ? sum * 8 * SL_NS_PER_S <= want_bps * SIM_EC_STEP_WINDOW_NS
			 : sum * 8 * SL_NS_PER_S >= want_bps * SIM_EC_STEP_WINDOW_NS) {
			r->settle_ns = (int64_t)((b + 1) * SL_NS_PER_US - r->at_ns);
			break;
		}
	}
	return 0;
}

/* An idle server takes the head packet: its wire bytes at r x the link rate, rounded up. */
static void
serve(struct sim_ec *ec, uint32_t host, uint64_t now_ns)
{
	struct ec_host *eh = &ec->h[host];
	struct sl_ec_pkt head;

	if (eh->busy || sl_ec_peek(eh->q, &head) != 0)
		return;
	eh->busy = true;
	eh->done_ns = now_ns + sl_tx_ns_ceil((uintptr_t)head.handle + ec->hdr_bytes,
					     eh->link_bps * drain_pct_at(ec, now_ns) / 100);
	sim_schedule(ec->s, eh->done_ns, drained, ec, host);
}

/* The host finished its head packet: delivered, then the target's actions, then the next. */
static void
finish(struct sim_ec *ec, uint32_t host, uint64_t now_ns)
{
	struct ec_host *eh = &ec->h[host];
	struct sl_ec_pkt p;
	unsigned n = 0;

	account(eh, now_ns);
	eh->busy = false;
	if (sl_ec_process(eh->q, now_ns, &p, ec->act, &n) == 0) {
		struct sim_recv_flow_stats *rx = &ec->f[p.conn].st.rx;

		rx->segs++;
		rx->bytes += (uintptr_t)p.handle;
		rx->cumack = p.psn + 1;
		bin_add(eh->done_bins, eh->nbins, now_ns,
			(uint32_t)(uintptr_t)p.handle + ec->hdr_bytes);
		trace(ec, host, p.conn, "process", p.psn);
		send_actions(ec, host, n);
	}
	serve(ec, host, now_ns);
}

static void
drained(struct sim *s, void *obj, uint64_t host)
{
	struct sim_ec *ec = obj;
	struct ec_host *eh = &ec->h[host];

	/* stale when an arrival at the same ns finished the packet first */
	if (eh->busy && eh->done_ns == sim_now(s))
		finish(ec, (uint32_t)host, sim_now(s));
}

static void
ec_input(void *ctx, struct sim_pkt *d, uint64_t now_ns)
{
	static const char *const verdicts[] = {[SL_EC_ACCEPTED] = "accept",
					       [SL_EC_DROP_ORDER] = "drop_order",
					       [SL_EC_DROP_FULL] = "drop_full",
					       [SL_EC_DROP_BAD] = "drop_bad",
					       [SL_EC_DROP_DUP] = "drop_dup"};
	struct sim_ec *ec = ctx;
	struct ec_host *eh;
	struct ec_flow *f;
	enum sl_ec_verdict v;
	unsigned n = 0;

	if (d->flow >= ec->c.nflows || !ec->f[d->flow].open || ec->f[d->flow].dst != d->dst)
		return;
	f = &ec->f[d->flow];
	eh = &ec->h[d->dst];
	if (eh->since_ns == SIM_NEVER)
		eh->since_ns = eh->last_ns = SL_MAX(now_ns, ec->c.measure_from_ns);
	if (eh->busy && eh->done_ns <= now_ns)
		finish(ec, d->dst, now_ns); /* the packet done at this ns leaves first */
	account(eh, now_ns);
	bin_add(eh->arr_bins, eh->nbins, now_ns, d->len_bytes + ec->hdr_bytes);
	v = sl_ec_arrive(eh->q, d->flow, d->seq,
			 d->len_bytes + (ec->c.queue_counts_wire ? ec->hdr_bytes : 0),
			 (void *)(uintptr_t)d->len_bytes, now_ns, ec->act, &n);
	if (v == SL_EC_DROP_FULL)
		f->st.drop_full++;
	else if (v == SL_EC_DROP_ORDER)
		f->st.drop_order++;
	else if (v == SL_EC_DROP_DUP)
		f->st.drop_dup++;
	trace(ec, d->dst, d->flow, verdicts[v], d->seq);
	send_actions(ec, d->dst, n);
	serve(ec, d->dst, now_ns);
}

const struct sim_receiver_ops sim_ec_ops = {
	.input = ec_input,
};
