/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sim_scenario.c - the INI scenario reader. Sections [sim], [link] (every host), [link.N]
 * (host N's link and the switch port toward it), [receiver], [ec] (lib/ec's target and its
 * host), [sched] and any number of [flows] / [flows.NAME] groups; later keys override earlier ones.
 * Every error names the file, line and key. Numbers go through lib/common's parser (sl_parse.h): a
 * key's name carries its unit (rate_gbps, delay_us, queue_bytes), a bare number counts in it and
 * may be fractional, and a value may name another unit of the same kind (delay_us = 500ns).
 * docs/sim.md lists the keys.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sim_exp.h"
#include "sl_parse.h"
#include "sl_str.h"

void
sim_scenario_defaults(struct sim_scenario *sc)
{
	memset(sc, 0, sizeof(*sc));
	sc->net.seed = 1;
	sc->net.nhosts = 2;
	sc->net.hdr_bytes = 64;
	sc->net.ctrl_bytes = 64;
	for (uint32_t i = 0; i < SIM_MAX_HOSTS; i++) {
		sc->net.host_port[i] =
			(struct sim_port_conf){.rate_bps = 10 * SL_BPS_PER_GBPS, .prop_ns = 1000};
		sc->net.switch_port[i] = sc->net.host_port[i];
	}
	sc->recv.cnp_interval_ns = 50 * SL_NS_PER_US;
	sc->lrecv.rc = SL_RECV_CONF_DEFAULT(1);
	sc->ec.policy = SIM_EC_DACK;
	sc->ec.drain_pct = 100;
	sc->ec.q.queue_bytes = SL_EC_QUEUE_BYTES_DEFAULT;
	sc->ec.q.threshold_bytes = SL_EC_THRESHOLD_BYTES_DEFAULT;
	sc->duration_ns = 10 * SL_NS_PER_MS;
	sc->trace_interval_ns = 100 * SL_NS_PER_US;
}

static int
fail(char *err, size_t len, const char *key, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	n = (size_t)snprintf(err, len, "%s: ", key);
	va_start(ap, fmt);
	if (n < len)
		vsnprintf(err + n, len - n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int
parse_bool(const char *v, bool *out)
{
	if (!strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "yes"))
		*out = true;
	else if (!strcmp(v, "0") || !strcmp(v, "false") || !strcmp(v, "no"))
		*out = false;
	else
		return -1;
	return 0;
}

/*
 * Split key into base and unit: "rate_gbps" -> "rate", a rate in Gbit/s. The unit is one of
 * lib/common's (sl_parse.h) after the last '_'; a key without one is a count ("hosts").
 */
static enum sl_qty
key_unit(const char *key, char *base, size_t len, uint64_t *mult)
{
	static const enum sl_qty kinds[] = {SL_QTY_NS, SL_QTY_BPS, SL_QTY_BYTES};
	const char *us = strrchr(key, '_');

	for (size_t i = 0; us && i < SL_ARRAY_SIZE(kinds); i++)
		if (sl_parse_unit(us + 1, kinds[i], mult) == 0) {
			snprintf(base, len, "%.*s", (int)(us - key), key);
			return kinds[i];
		}
	snprintf(base, len, "%s", key);
	*mult = 1;
	return SL_QTY_COUNT;
}

/*
 * v as a quantity of the key's kind in [0, max] base units: a bare number counts in the key's
 * unit and may be fractional (rto_us = 65.536), or v names a unit of that kind (rto_us = 1ms).
 * The key's kind goes to *qty and its name without the unit to base.
 */
static int
num(const char *key, const char *v, uint64_t max, uint64_t *n, char *base, size_t blen,
    enum sl_qty *qty, char *err, size_t len)
{
	struct sl_parse_spec spec = {.max = max, .bare_frac = true};
	char why[SL_PARSE_WHY_MAX];

	spec.qty = key_unit(key, base, blen, &spec.unit);
	*qty = spec.qty;
	if (sl_parse_qty(v, &spec, n, why, sizeof(why)) < 0)
		return fail(err, len, key, "'%s': %s", v, why);
	return 0;
}

/* A real number of spec into *out, or the reason in err. */
static int
real(const char *key, const char *v, const struct sl_parse_real_spec *spec, double *out, char *err,
     size_t len)
{
	char why[SL_PARSE_WHY_MAX];

	if (sl_parse_real(v, spec, out, why, sizeof(why)) < 0)
		return fail(err, len, key, "'%s': %s", v, why);
	return 0;
}

static const struct sl_parse_real_spec probability = {"a probability", 0, 1, false, false};

/* "a:b[:c...]" into nf whole numbers, each at most max[i]. 0 or -1. */
static int
parse_fields(const char *tok, int nf, const uint64_t *max, uint64_t *out)
{
	for (int i = 0; i < nf; i++) {
		size_t n = strcspn(tok, ":");
		char part[24];

		if (n >= sizeof(part) || (i < nf - 1) != (tok[n] == ':'))
			return -1;
		snprintf(part, sizeof(part), "%.*s", (int)n, tok);
		if (sl_parse_u64(part, 0, max[i], &out[i], NULL, 0) < 0)
			return -1;
		tok += n + (i < nf - 1);
	}
	return 0;
}

static int
parse_drop(struct sim_conf *c, const char *v, bool nth)
{
	static const uint64_t max[3] = {UINT32_MAX, UINT32_MAX, 3};
	char buf[256], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", v);
	for (tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		struct sim_drop d = {0};
		uint64_t x[3];

		if (c->ndrops == SIM_MAX_DROPS)
			return -1;
		if (nth) {
			if (sl_parse_u64(tok, 1, UINT64_MAX, &d.nth, NULL, 0) < 0)
				return -1;
		} else {
			if (parse_fields(tok, 3, max, x) < 0)
				return -1;
			d.flow = (uint32_t)x[0];
			d.seq = (uint32_t)x[1];
			d.tx_id = (uint32_t)x[2];
		}
		c->drops[c->ndrops++] = d;
	}
	return 0;
}

static int
set_sim(struct sim_scenario *sc, const char *key, const char *v, char *err, size_t len)
{
	char base[64];
	enum sl_qty q;
	uint64_t n;

	if (!strcmp(key, "loss_mode")) {
		if (!strcmp(v, "packet"))
			sc->net.loss_mode = SIM_LOSS_PACKET;
		else if (!strcmp(v, "segment"))
			sc->net.loss_mode = SIM_LOSS_SEGMENT;
		else
			return fail(err, len, key, "'%s' is not packet or segment", v);
		return 0;
	}
	if (!strcmp(key, "drop") || !strcmp(key, "drop_nth"))
		return parse_drop(&sc->net, v, key[4] == '_')
			       ? fail(err, len, key, "want %s, at most %u drops in all",
				      key[4] ? "a list of n >= 1" : "a list of flow:seq:tx_id",
				      SIM_MAX_DROPS)
			       : 0;
	if (!strcmp(key, "loss"))
		return real(key, v, &probability, &sc->net.loss, err, len);
	if (!strcmp(key, "ctrl_loss"))
		return real(key, v, &probability, &sc->net.ctrl_loss, err, len);
	if (num(key, v, UINT64_MAX / 2, &n, base, sizeof(base), &q, err, len))
		return -EINVAL;
	if (!strcmp(key, "seed"))
		sc->net.seed = n;
	else if (!strcmp(key, "hosts") && n >= 2 && n <= SIM_MAX_HOSTS)
		sc->net.nhosts = (uint32_t)n;
	else if (!strcmp(key, "hosts"))
		return fail(err, len, key, "want 2..%u hosts", SIM_MAX_HOSTS);
	else if (!strcmp(key, "hdr_bytes") && n <= 1024)
		sc->net.hdr_bytes = (uint32_t)n;
	else if (!strcmp(key, "ctrl_bytes") && n >= 1 && n <= 1024)
		sc->net.ctrl_bytes = (uint32_t)n;
	else if (!strcmp(base, "duration") && q == SL_QTY_NS && n > 0)
		sc->duration_ns = n;
	else if (!strcmp(base, "measure_from") && q == SL_QTY_NS)
		sc->measure_from_ns = n;
	else if (!strcmp(base, "trace_interval") && q == SL_QTY_NS && n > 0)
		sc->trace_interval_ns = n;
	else
		return fail(err, len, key, "unknown key or value out of range");
	return 0;
}

/* A [link] key for hosts [lo, hi). */
static int
set_link(struct sim_scenario *sc, uint32_t lo, uint32_t hi, const char *key, const char *v,
	 char *err, size_t len)
{
	char base[64];
	enum sl_qty q;
	uint64_t n;
	bool b;

	if (!strcmp(key, "trim") || !strcmp(key, "ecn_dequeue")) {
		if (parse_bool(v, &b))
			return fail(err, len, key, "'%s' is not a boolean", v);
		for (uint32_t i = lo; i < hi; i++) {
			if (key[0] == 't')
				sc->net.switch_port[i].trim = b;
			else
				sc->net.switch_port[i].ecn_dequeue = b;
		}
		return 0;
	}
	if (!strcmp(key, "ecn_pmax")) {
		double p;

		if (real(key, v, &probability, &p, err, len))
			return -EINVAL;
		n = (uint64_t)(p * 1e6 + 0.5);
		for (uint32_t i = lo; i < hi; i++)
			sc->net.switch_port[i].ecn_pmax_ppm = (uint32_t)n;
		return 0;
	}
	if (num(key, v, UINT64_MAX / 2, &n, base, sizeof(base), &q, err, len))
		return -EINVAL;
	for (uint32_t i = lo; i < hi; i++) {
		struct sim_port_conf *h = &sc->net.host_port[i], *s = &sc->net.switch_port[i];

		if (!strcmp(base, "rate") && q == SL_QTY_BPS && n > 0)
			h->rate_bps = s->rate_bps = n;
		else if (!strcmp(base, "delay") && q == SL_QTY_NS)
			h->prop_ns = s->prop_ns = n;
		else if (!strcmp(base, "jitter") && q == SL_QTY_NS)
			h->jitter_ns = s->jitter_ns = n;
		else if (!strcmp(base, "queue") && q == SL_QTY_BYTES)
			s->limit_bytes = n;
		else if (!strcmp(base, "ecn_kmin") && q == SL_QTY_BYTES)
			s->ecn_kmin_bytes = n;
		else if (!strcmp(base, "ecn_kmax") && q == SL_QTY_BYTES)
			s->ecn_kmax_bytes = n;
		else if (!strcmp(base, "pfc_xoff") && q == SL_QTY_BYTES)
			h->pfc_xoff_bytes = n;
		else if (!strcmp(base, "pfc_xon") && q == SL_QTY_BYTES)
			h->pfc_xon_bytes = n;
		else
			return fail(err, len, key, "unknown key or value out of range");
	}
	return 0;
}

static int
set_recv(struct sim_scenario *sc, const char *key, const char *v, char *err, size_t len)
{
	char base[64];
	enum sl_qty q;
	uint64_t n;

	struct sl_recv_conf *rc = &sc->lrecv.rc;

	if (!strcmp(key, "ndp"))
		return parse_bool(v, &sc->recv.ndp) ? fail(err, len, key, "not a boolean") : 0;
	if (!strcmp(key, "middle_walk"))
		return parse_bool(v, &rc->middle_walk) ? fail(err, len, key, "not a boolean") : 0;
	if (!strcmp(key, "impl")) {
		static const char *const impls[] = {[SIM_RECV_REFERENCE] = "reference",
						    [SIM_RECV_LIB] = "lib",
						    [SIM_RECV_EC] = "ec"};

		for (uint8_t i = 0; i < SL_ARRAY_SIZE(impls); i++)
			if (!strcmp(v, impls[i])) {
				sc->recv_impl = i;
				return 0;
			}
		return fail(err, len, key, "'%s' is not reference, lib or ec", v);
	}
	if (num(key, v, UINT64_MAX / 2, &n, base, sizeof(base), &q, err, len))
		return -EINVAL;
	if (!strcmp(base, "cnp_interval") && q == SL_QTY_NS)
		sc->recv.cnp_interval_ns = rc->cnp_interval_ns = n;
	else if (!strcmp(base, "ack_delay") && q == SL_QTY_NS)
		rc->ack_delay_ns = n;
	else if (!strcmp(base, "nack_interval") && q == SL_QTY_NS)
		rc->nack_interval_ns = n;
	else if (!strcmp(key, "pool_bits") && n >= 1 && n <= UINT32_MAX)
		rc->pool_bits = (uint32_t)n;
	else if (!strcmp(key, "block_bits") && n >= 1 && n <= UINT32_MAX)
		rc->block_bits = (uint32_t)n;
	else if (!strcmp(key, "window_pkts") && n <= SL_RECV_WINDOW_MAX && sl_is_pow2(n))
		rc->window_pkts = (uint32_t)n;
	else if (!strcmp(key, "conn_max_blocks") && n <= UINT32_MAX)
		rc->conn_max_blocks = (uint32_t)n;
	else if (!strcmp(key, "ack_every_pkts") && n <= 255)
		sc->lrecv.ack_every_pkts = (uint32_t)n;
	else
		return fail(err, len, key, "unknown key or bad value '%s'", v);
	return 0;
}

/* "at_us:pct,..." into the drain steps, at_us increasing, pct 1..10000. 0, or -1 (c unchanged). */
static int
parse_steps(struct sim_ec_conf *c, const char *v)
{
	static const uint64_t max[2] = {UINT64_MAX / SL_NS_PER_US, 10000};
	struct sim_ec_step step[SIM_EC_STEPS_MAX];
	char buf[256], *tok, *save = NULL;
	uint32_t n = 0;

	snprintf(buf, sizeof(buf), "%s", v);
	for (tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		uint64_t x[2];

		if (n == SIM_EC_STEPS_MAX || parse_fields(tok, 2, max, x) < 0 || x[1] == 0 ||
		    (n && x[0] * SL_NS_PER_US <= step[n - 1].at_ns))
			return -1;
		step[n++] = (struct sim_ec_step){x[0] * SL_NS_PER_US, (uint32_t)x[1]};
	}
	memcpy(c->step, step, n * sizeof(step[0]));
	c->nsteps = n;
	return 0;
}

static int
set_ec(struct sim_scenario *sc, const char *key, const char *v, char *err, size_t len)
{
	struct sim_ec_conf *c = &sc->ec;
	char base[64];
	enum sl_qty q;
	uint64_t n;
	int policy;

	if (!strcmp(key, "drain_steps"))
		return parse_steps(c, v) ? fail(err, len, key,
						"want at most %u at_us:pct, at_us increasing, "
						"pct 1..10000",
						SIM_EC_STEPS_MAX)
					 : 0;
	if (!strcmp(key, "policy")) {
		if ((policy = sim_ec_policy_parse(v)) < 0)
			return fail(err, len, key, "'%s' is not dack, opt, aimd or timeout", v);
		c->policy = (uint8_t)policy;
		return 0;
	}
	if (!strcmp(key, "queue_counts")) {
		if (strcmp(v, "payload") && strcmp(v, "wire"))
			return fail(err, len, key, "'%s' is not payload or wire", v);
		c->queue_counts_wire = v[0] == 'w';
		return 0;
	}
	if (!strcmp(key, "iack_at_processing"))
		return parse_bool(v, &c->q.iack_at_processing)
			       ? fail(err, len, key, "not a boolean")
			       : 0;
	if (num(key, v, UINT32_MAX, &n, base, sizeof(base), &q, err, len))
		return -EINVAL;
	if (!strcmp(key, "drain_pct") && n >= 1 && n <= 10000)
		c->drain_pct = (uint32_t)n;
	else if (!strcmp(base, "queue") && q == SL_QTY_BYTES && n > 0)
		c->q.queue_bytes = (uint32_t)n;
	else if (!strcmp(base, "threshold") && q == SL_QTY_BYTES && n > 0)
		c->q.threshold_bytes = (uint32_t)n;
	else if (!strcmp(base, "fair_period") && q == SL_QTY_NS)
		c->q.fair_period_ns = n;
	else if (!strcmp(key, "fair_ratio_pct") && n >= 100)
		c->q.fair_ratio_pct = (uint32_t)n;
	else if (!strcmp(key, "opt_pkts"))
		c->opt_pkts = (uint32_t)n;
	else if (!strcmp(base, "opt") && q == SL_QTY_BYTES)
		c->opt_bytes = (uint32_t)n;
	else if (!strcmp(key, "h1_iacks"))
		c->h1_iacks = (uint32_t)n;
	else if (!strcmp(key, "sr_pkts") && n <= SL_EC_SR_PKTS_MAX)
		c->q.sr_pkts = (uint32_t)n;
	else
		return fail(err, len, key, "unknown key or bad value '%s'", v);
	return 0;
}

static int
set_sched(struct sim_scenario *sc, const char *key, const char *v, char *err, size_t len)
{
	struct sl_sched_conf *c = &sc->sched;
	char base[64];
	enum sl_qty q;
	uint64_t n;
	bool b;

	if (!strcmp(key, "tx_ts")) {
		if (parse_bool(v, &b))
			return fail(err, len, key, "not a boolean");
		c->flags = b ? c->flags | SL_SCHED_F_TX_TS : c->flags & ~SL_SCHED_F_TX_TS;
		return 0;
	}
	if (num(key, v, UINT32_MAX, &n, base, sizeof(base), &q, err, len))
		return -EINVAL;
	if (!strcmp(key, "wnd_segs"))
		c->wnd_segs = (uint32_t)n;
	else if (!strcmp(key, "queue_segs"))
		c->queue_segs = (uint32_t)n;
	else if (!strcmp(key, "visit_segs"))
		c->visit_segs = (uint32_t)n;
	else if (!strcmp(key, "timer_tick_ns"))
		c->timer_tick_ns = (uint32_t)n;
	else
		return fail(err, len, key, "unknown key");
	return 0;
}

static int
set_flows(struct sim_flow_group *g, const char *key, const char *v, char *err, size_t len)
{
	struct sim_flow_spec *s = &g->spec;
	struct sl_flow_conf *fc = &s->fc;
	char base[64];
	enum sl_qty q;
	uint64_t n;

	if (!strcmp(key, "proto")) {
		if (strlen(v) == 0 || strlen(v) >= SL_PROTO_NAME_MAX)
			return fail(err, len, key, "want a program name of 1..%d characters",
				    SL_PROTO_NAME_MAX - 1);
		snprintf(s->proto, sizeof(s->proto), "%s", v);
		return 0;
	}
	if (!strcmp(key, "recovery")) {
		if (strcmp(v, "melo") && strcmp(v, "gbn"))
			return fail(err, len, key, "'%s' is not melo or gbn", v);
		s->recovery = v[0] == 'g' ? SL_RECV_GBN : SL_RECV_MELO;
		return 0;
	}
	if (!strcmp(key, "arrivals")) {
		if (strcmp(v, "stagger") && strcmp(v, "poisson"))
			return fail(err, len, key, "'%s' is not stagger or poisson", v);
		g->arrivals = v[0] == 'p' ? SIM_ARRIVE_POISSON : SIM_ARRIVE_STAGGER;
		return 0;
	}
	if (!strcmp(key, "size_dist")) {
		if (strcmp(v, "fixed") && strcmp(v, "websearch"))
			return fail(err, len, key, "'%s' is not fixed or websearch", v);
		g->size_dist = v[0] == 'w' ? SIM_SIZE_WEBSEARCH : SIM_SIZE_FIXED;
		return 0;
	}
	if (!strcmp(key, "load")) {
		static const struct sl_parse_real_spec load = {"a load", 0, 1, true, false};
		double p;

		if (real(key, v, &load, &p, err, len))
			return -EINVAL;
		n = (uint64_t)(p * 1e6 + 0.5);
		if (n == 0)
			return fail(err, len, key, "'%s': below one part per million", v);
		g->load_ppm = (uint32_t)n;
		return 0;
	}
	if (!strcmp(key, "sack") || !strcmp(key, "ts"))
		return parse_bool(v, key[0] == 's' ? &s->sack : &s->ts)
			       ? fail(err, len, key, "'%s' is not a boolean", v)
			       : 0;
	if (num(key, v, UINT64_MAX / 2, &n, base, sizeof(base), &q, err, len))
		return -EINVAL;
	if (!strcmp(key, "count") && n >= 1 && n <= (1u << 20))
		g->count = (uint32_t)n;
	else if (!strcmp(key, "src") && n < SIM_MAX_HOSTS)
		s->src = (uint32_t)n;
	else if (!strcmp(key, "dst") && n < SIM_MAX_HOSTS)
		s->dst = (uint32_t)n;
	else if (!strcmp(base, "start") && q == SL_QTY_NS)
		s->start_ns = n;
	else if (!strcmp(base, "stagger") && q == SL_QTY_NS)
		g->stagger_ns = n;
	else if (!strcmp(key, "size_segs") && n <= (1u << 30))
		s->size_segs = n;
	else if (!strcmp(key, "seg_bytes") && n >= 1 && n <= UINT16_MAX)
		fc->seg_bytes = (uint32_t)n;
	else if (!strcmp(key, "init_wnd_segs") && n <= UINT32_MAX)
		fc->init_wnd_segs = (uint32_t)n;
	else if (!strcmp(base, "rate") && q == SL_QTY_BPS)
		fc->init_rate_bps = n;
	else if (!strcmp(base, "max_rate") && q == SL_QTY_BPS)
		fc->max_rate_bps = n;
	else if (!strcmp(key, "init_credit_bytes") && n <= UINT32_MAX)
		fc->init_credit_bytes = (uint32_t)n;
	else if (!strcmp(key, "rto_credit_bytes") && n <= UINT32_MAX)
		fc->rto_credit_bytes = (uint32_t)n;
	else if (!strcmp(base, "rto") && q == SL_QTY_NS)
		fc->rto_ns = n;
	else if (!strcmp(key, "first_seq") && n <= UINT32_MAX)
		fc->first_seq = (uint32_t)n;
	else if (!strncmp(key, "param", 5) && key[5] >= '0' && key[5] <= '3' && key[6] == '\0')
		fc->param[key[5] - '0'] = n;
	else
		return fail(err, len, key, "unknown key or value out of range");
	return 0;
}

int
sim_scenario_set(struct sim_scenario *sc, const char *section, const char *key, const char *v,
		 char *err, size_t len)
{
	uint64_t host;

	if (!strcmp(section, "sim"))
		return set_sim(sc, key, v, err, len);
	if (!strcmp(section, "link"))
		return set_link(sc, 0, SIM_MAX_HOSTS, key, v, err, len);
	if (!strncmp(section, "link.", 5)) {
		if (sl_parse_u64(section + 5, 0, SIM_MAX_HOSTS - 1, &host, NULL, 0) < 0)
			return fail(err, len, section, "want link.N with N < %u", SIM_MAX_HOSTS);
		return set_link(sc, (uint32_t)host, (uint32_t)host + 1, key, v, err, len);
	}
	if (!strcmp(section, "receiver"))
		return set_recv(sc, key, v, err, len);
	if (!strcmp(section, "ec"))
		return set_ec(sc, key, v, err, len);
	if (!strcmp(section, "sched"))
		return set_sched(sc, key, v, err, len);
	if (!strcmp(section, "sweep")) {
		struct sim_sweep_dim *d;

		if (strlen(key) >= sizeof(d->keys) || strlen(v) >= sizeof(d->values) || !*v)
			return fail(err, len, key,
				    "want at most %zu characters of keys and %zu of "
				    "values",
				    sizeof(d->keys) - 1, sizeof(d->values) - 1);
		for (d = sc->sweep; d < sc->sweep + sc->nsweep && strcmp(d->keys, key); d++)
			;
		if (d == sc->sweep + SIM_MAX_SWEEP)
			return fail(err, len, key, "more than %u sweep dimensions", SIM_MAX_SWEEP);
		if (d == sc->sweep + sc->nsweep)
			sc->nsweep++; /* a new dimension; the same keys again replace its values */
		snprintf(d->keys, sizeof(d->keys), "%s", key);
		snprintf(d->values, sizeof(d->values), "%s", v);
		return 0;
	}
	if (!strcmp(section, "flows.*")) {
		/* every group: a sweep changes all senders at once */
		if (sc->ngroups == 0)
			return fail(err, len, section, "no flow group");
		for (uint32_t g = 0; g < sc->ngroups; g++) {
			int rc = set_flows(&sc->group[g], key, v, err, len);

			if (rc)
				return rc;
		}
		return 0;
	}
	if (!strcmp(section, "flows") || !strncmp(section, "flows.", 6)) {
		/* the last group of that name: the open one while a file is read */
		for (uint32_t g = sc->ngroups; g-- > 0;)
			if (!strcmp(sc->group[g].name, section))
				return set_flows(&sc->group[g], key, v, err, len);
		return fail(err, len, section, "no such flow group");
	}
	return fail(err, len, section, "unknown section");
}

/* Open a new [flows] group with the defaults every group starts from. */
static int
open_group(struct sim_scenario *sc, const char *name)
{
	struct sim_flow_group *g;

	if (sc->ngroups == SIM_MAX_GROUPS)
		return -1;
	g = &sc->group[sc->ngroups++];
	memset(g, 0, sizeof(*g));
	snprintf(g->name, sizeof(g->name), "%s", name);
	g->count = 1;
	g->spec.src = 0;
	g->spec.dst = 1;
	g->spec.sack = true;
	g->spec.fc.seg_bytes = 1000;
	snprintf(g->spec.proto, sizeof(g->spec.proto), "newreno");
	return 0;
}

int
sim_scenario_load(struct sim_scenario *sc, const char *path, char *err, size_t len)
{
	char line[512], section[64] = "", msg[256];
	unsigned lineno = 0;
	FILE *f = fopen(path, "r");
	int rc = 0;

	if (f == NULL) {
		rc = -errno;
		snprintf(err, len, "%s: %s", path, strerror(errno));
		return rc;
	}
	while (rc == 0 && fgets(line, sizeof(line), f)) {
		char *s, *eq, *c;

		lineno++;
		if ((c = strpbrk(line, ";#")) != NULL)
			*c = '\0';
		s = sl_str_trim(line);
		if (*s == '\0')
			continue;
		if (*s == '[') {
			char *close = strchr(s, ']');

			if (close == NULL || close[1] != '\0' || close - s - 1 >= 32) {
				rc = fail(msg, sizeof(msg), s, "malformed section header");
			} else {
				snprintf(section, sizeof(section), "%.*s", (int)(close - s - 1),
					 s + 1);
				if ((!strcmp(section, "flows") || !strncmp(section, "flows.", 6)) &&
				    open_group(sc, section))
					rc = fail(msg, sizeof(msg), section, "more than %u groups",
						  SIM_MAX_GROUPS);
			}
		} else if ((eq = strchr(s, '=')) == NULL || section[0] == '\0') {
			rc = fail(msg, sizeof(msg), s,
				  section[0] ? "want key = value" : "key outside a section");
		} else {
			*eq = '\0';
			rc = sim_scenario_set(sc, section, sl_str_trim(s), sl_str_trim(eq + 1), msg,
					      sizeof(msg));
		}
		if (rc)
			snprintf(err, len, "%s:%u: %s", path, lineno, msg);
	}
	fclose(f);
	return rc;
}

int
sim_scenario_check(const struct sim_scenario *sc, char *err, size_t len)
{
	uint32_t wnd = sc->sched.wnd_segs ? sc->sched.wnd_segs : SL_SCHED_WND_DEFAULT;

	if (sc->ngroups == 0)
		return fail(err, len, "[flows]", "no flow group");
	if (sc->recv_impl == SIM_RECV_EC && sc->ec.q.threshold_bytes >= sc->ec.q.queue_bytes)
		return fail(err, len, "[ec]", "threshold_bytes %u: want below queue_bytes %u",
			    sc->ec.q.threshold_bytes, sc->ec.q.queue_bytes);
	if (sc->recv_impl == SIM_RECV_EC && sc->ec.opt_pkts > wnd)
		return fail(err, len, "[ec]", "opt_pkts %u: want at most [sched] wnd_segs (%u)",
			    sc->ec.opt_pkts, wnd);
	for (uint32_t g = 0; g < sc->ngroups; g++) {
		const struct sim_flow_group *fg = &sc->group[g];
		const struct sim_flow_spec *sp = &fg->spec;

		if (sp->src >= sc->net.nhosts || sp->dst >= sc->net.nhosts || sp->src == sp->dst)
			return fail(err, len, fg->name,
				    "src %u, dst %u: want two different hosts below %u", sp->src,
				    sp->dst, sc->net.nhosts);
		if (sl_proto_find(sp->proto) == NULL)
			return fail(err, len, fg->name, "proto: no program named '%s'", sp->proto);
		if (fg->arrivals == SIM_ARRIVE_POISSON && fg->load_ppm == 0)
			return fail(err, len, fg->name, "arrivals = poisson needs a load");
		if (fg->size_dist == SIM_SIZE_FIXED && fg->arrivals == SIM_ARRIVE_POISSON &&
		    sp->size_segs == 0)
			return fail(err, len, fg->name, "poisson arrivals need finite flows");
	}
	return 0;
}

/* Tokens of s separated by any of sep: the n-th one into out; false when there are fewer. */
static bool
nth_token(const char *s, const char *sep, uint32_t n, char *out, size_t len)
{
	while (*s) {
		size_t k;

		s += strspn(s, sep);
		k = strcspn(s, sep);
		if (k == 0)
			break;
		if (n-- == 0) {
			snprintf(out, len, "%.*s", (int)k, s);
			return true;
		}
		s += k;
	}
	return false;
}

static uint32_t
count_tokens(const char *s, const char *sep)
{
	char tok[128];
	uint32_t n = 0;

	while (nth_token(s, sep, n, tok, sizeof(tok)))
		n++;
	return n;
}

uint32_t
sim_sweep_runs(const struct sim_scenario *sc)
{
	uint32_t runs = 1;

	for (uint32_t i = 0; i < sc->nsweep; i++)
		runs *= count_tokens(sc->sweep[i].values, " \t");
	return runs;
}

/* Is v a JSON number as written (so the label needs no quotes)? */
static bool
is_number(const char *v)
{
	char *end;

	strtod(v, &end);
	return end != v && *end == '\0' && strspn(v, "0123456789.eE+-") == strlen(v);
}

int
sim_sweep_apply(struct sim_scenario *sc, uint32_t run, char *labels, size_t lablen, char *err,
		size_t errlen)
{
	size_t used = 0;

	labels[0] = '\0';
	for (uint32_t i = sc->nsweep; i-- > 0;) {
		const struct sim_sweep_dim *d = &sc->sweep[i];
		uint32_t nv = count_tokens(d->values, " \t"), nk = count_tokens(d->keys, ",");
		char tuple[128], key[128], val[128], *dot;

		if (nv == 0)
			return fail(err, errlen, d->keys, "no values");
		nth_token(d->values, " \t", run % nv, tuple, sizeof(tuple));
		run /= nv;
		if (count_tokens(tuple, ",") != nk)
			return fail(err, errlen, d->keys, "'%s' does not have %u values", tuple,
				    nk);
		for (uint32_t k = 0; k < nk; k++) {
			int rc;

			nth_token(d->keys, ",", k, key, sizeof(key));
			nth_token(tuple, ",", k, val, sizeof(val));
			dot = strrchr(key, '.');
			if (dot == NULL)
				return fail(err, errlen, key, "want section.key");
			*dot = '\0';
			rc = sim_scenario_set(sc, key, dot + 1, val, err, errlen);
			if (rc)
				return rc;
			if (used < lablen)
				used += (size_t)snprintf(labels + used, lablen - used,
							 is_number(val) ? "%s\"%s\": %s"
									: "%s\"%s\": \"%s\"",
							 used ? ", " : "", dot + 1, val);
		}
	}
	return used < lablen ? 0 : fail(err, errlen, "sweep", "labels too long");
}
