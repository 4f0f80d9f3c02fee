/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pacer_harness.c - the replay loop and the metrics (see pacer_harness.h).
 *
 * Virtual clock: now starts at 0 and jumps to the earliest of the pacer's next deadline, the
 * next flow start and the stall edges, but never less than step_ns after the previous call;
 * the link is the pacer's own line-rate model, so departures are the pacer's tx_ns stamps and
 * every run is bit-for-bit repeatable. TSC clock: now is read before each call and departures
 * are stamped with it, so host jitter and the cost of each call show up as error.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <valgrind/callgrind.h>

#include "pacer_harness.h"
#include "sl_time.h"

#define PH_BURST_MAX 256u

unsigned
ph_decade(uint64_t rate_bps)
{
	unsigned d = 0;

	while (rate_bps >= 10) {
		rate_bps /= 10;
		d++;
	}
	d = SL_MAX(d, PH_DECADE_MIN);
	return SL_MIN(d, PH_DECADE_MAX) - PH_DECADE_MIN;
}

uint64_t
ph_pkts_for(uint64_t rate_bps, uint32_t wire_bytes, uint64_t start_ns, uint64_t end_ns)
{
	uint64_t span = end_ns > start_ns ? end_ns - start_ns : 0;

	return sl_bytes_in_ns(rate_bps, span) / wire_bytes + 2;
}

double
ph_rate_bps(const struct ph_flow_metrics *m)
{
	if (m->pkts < 2 || m->last_ns == m->first_ns)
		return 0;
	return (double)(m->bytes - m->last_wire) * 8e9 / (double)(m->last_ns - m->first_ns);
}

static uint64_t
thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * SL_NS_PER_S + (uint64_t)ts.tv_nsec;
}

static void
record(struct ph_result *r, const struct ph_conf *c, const struct ph_flow_spec *spec,
       const struct sl_pkt *pkt, uint64_t t_ns)
{
	struct ph_flow_metrics *m = &r->fm[pkt->flow];
	double rate_bpns = (double)spec->rate_bps / 8e9; /* bytes per ns */
	uint32_t wire = pkt->len_bytes + c->pacer.wire_overhead_bytes;
	unsigned dec = ph_decade(spec->rate_bps);

	if (m->pkts == 0) {
		/* The ideal schedule starts when the backlog appeared. */
		m->first_ns = t_ns;
		m->req_ns = (double)spec->start_ns;
		if ((double)t_ns < m->req_ns - 1.0)
			r->early++;
		else
			sl_hist_add(&r->late, t_ns - spec->start_ns);
	} else {
		double ideal = (double)m->last_wire / rate_bpns;
		double eps = fabs((double)(t_ns - m->last_ns) - ideal);
		double late = (double)t_ns - m->req_ns;
		static const double within[4] = {64, 128, 256, 512};

		sl_hist_add(&r->gap_err[dec], (uint64_t)llround(eps));
		r->gap_n[dec]++;
		for (unsigned k = 0; k < 4; k++)
			r->gap_within[dec][k] += eps <= within[k];
		if (late < -1.0)
			r->early++;
		else
			sl_hist_add(&r->late, late > 0 ? (uint64_t)llround(late) : 0);
	}
	m->req_ns += (double)wire / rate_bpns;
	if (t_ns >= c->sigma_from_ns) {
		double v;

		if (!m->sigma_started) {
			m->sigma_started = true;
			m->cum_bytes = 0;
			m->min_v = -rate_bpns * (double)t_ns;
		}
		m->min_v = SL_MIN(m->min_v, m->cum_bytes - rate_bpns * (double)t_ns);
		m->cum_bytes += wire;
		v = m->cum_bytes - rate_bpns * (double)t_ns - m->min_v;
		m->sigma = SL_MAX(m->sigma, v);
		m->max_wire = SL_MAX(m->max_wire, wire);
	}
	m->bytes += wire;
	m->last_wire = wire;
	m->last_ns = t_ns;
	m->pkts++;
}

/* Start order of the flows: indexes sorted by start_ns. */
static const struct ph_flow_spec *sort_specs;

static int
by_start(const void *a, const void *b)
{
	uint64_t x = sort_specs[*(const uint32_t *)a].start_ns;
	uint64_t y = sort_specs[*(const uint32_t *)b].start_ns;

	return (x > y) - (x < y);
}

struct ph_loop {
	struct sl_pacer *p;
	const struct ph_conf *c;
	const struct ph_flow_spec *flows;
	uint32_t n;
	uint32_t *order;
	uint32_t next_start;
	struct sl_tsc_clock tsc;
	bool stalled, stall_done, rate_changed;
};

static uint64_t
clock_now(struct ph_loop *l, uint64_t virt_ns)
{
	return l->c->clock == PH_CLOCK_TSC ? sl_tsc_clock_now_ns(&l->tsc) : virt_ns;
}

/*
 * Start flows, stall edges and rate changes due at now (*fired when any did); returns the time
 * of the next such event.
 */
static uint64_t
events(struct ph_loop *l, uint64_t now, bool *fired)
{
	const struct ph_conf *c = l->c;
	uint64_t next = SL_PACER_NEVER;

	while (l->next_start < l->n && l->flows[l->order[l->next_start]].start_ns <= now) {
		uint32_t f = l->order[l->next_start++];

		*fired = true;
		(void)sl_pacer_backlog(l->p, f, (uint32_t)SL_MIN(l->flows[f].npkts, UINT32_MAX),
				       l->flows[f].len_bytes);
	}
	if (l->next_start < l->n)
		next = l->flows[l->order[l->next_start]].start_ns;
	if (c->stall_ns != 0 && !l->stall_done) {
		if (!l->stalled && now >= c->stall_at_ns) {
			*fired = true;
			sl_pacer_pause(l->p, c->stall_at_ns, true);
			l->stalled = true;
		}
		if (l->stalled && now >= c->stall_at_ns + c->stall_ns) {
			*fired = true;
			sl_pacer_pause(l->p, c->stall_at_ns + c->stall_ns, false);
			l->stalled = false;
			l->stall_done = true;
		}
		if (!l->stall_done)
			next = SL_MIN(next,
				      l->stalled ? c->stall_at_ns + c->stall_ns : c->stall_at_ns);
	}
	if (c->rate_change_at_ns != 0 && !l->rate_changed) {
		if (now >= c->rate_change_at_ns) {
			*fired = true;
			for (uint32_t f = 0; f < l->n; f++)
				(void)sl_pacer_set_rate(l->p, f, c->rate_change_bps);
			l->rate_changed = true;
		} else {
			next = SL_MIN(next, c->rate_change_at_ns);
		}
	}
	return next;
}

int
ph_run(const struct ph_conf *c, const struct ph_flow_spec *flows, uint32_t n, struct ph_result *r)
{
	struct sl_pkt out[PH_BURST_MAX];
	unsigned burst = SL_MIN(SL_MAX(c->burst, 1u), PH_BURST_MAX);
	struct ph_loop l = {.c = c, .flows = flows, .n = n};
	uint64_t now = 0, cpu0, wall0, sink = 0;
	int rc = 0;

	memset(r, 0, sizeof(*r));
	l.order = malloc(sizeof(*l.order) * n);
	if (c->record)
		r->fm = calloc(n, sizeof(*r->fm));
	if (l.order == NULL || (c->record && r->fm == NULL)) {
		rc = -ENOMEM;
		goto out;
	}
	l.p = sl_pacer_create(&c->pacer);
	if (l.p == NULL) {
		rc = -errno;
		goto out;
	}
	for (uint32_t f = 0; f < n; f++) {
		l.order[f] = f;
		(void)sl_pacer_set_rate(l.p, f, flows[f].rate_bps);
	}
	sort_specs = flows;
	qsort(l.order, n, sizeof(*l.order), by_start);
	if (c->clock == PH_CLOCK_TSC) {
		rc = sl_tsc_clock_init(&l.tsc, 0);
		if (rc)
			goto out;
		l.tsc.tsc0 = sl_rdtsc();
	}
	if (c->callgrind)
		CALLGRIND_START_INSTRUMENTATION;
	cpu0 = thread_cpu_ns();
	wall0 = sl_monotonic_ns();
	for (;;) {
		uint64_t ev, d;
		unsigned got;
		bool fired;

		now = clock_now(&l, now);
		/*
		 * Dequeue, then apply what happens at now (backlog, stall, rate change), then
		 * dequeue again if anything did: a pacer learns the time only from dequeue calls,
		 * so new backlog is seen as arriving at the previous call's now.
		 */
		got = sl_pacer_dequeue_burst(l.p, now, out, burst);
		fired = false;
		ev = events(&l, now, &fired);
		if (fired && got < burst)
			got += sl_pacer_dequeue_burst(l.p, now, out + got, burst - got);
		r->calls++;
		r->departures += got;
		for (unsigned i = 0; i < got; i++) {
			if (c->record)
				record(r, c, &flows[out[i].flow], &out[i],
				       c->clock == PH_CLOCK_TSC ? now : out[i].tx_ns);
			sink += out[i].len_bytes;
		}
		if (now >= c->end_ns)
			break;
		if (c->clock == PH_CLOCK_TSC || got == burst)
			continue;
		d = SL_MIN(sl_pacer_next_deadline(l.p), ev);
		if (d == SL_PACER_NEVER)
			break;
		now = SL_MAX(d, now + SL_MAX(c->step_ns, 1u));
	}
	r->cpu_ns = thread_cpu_ns() - cpu0;
	r->wall_ns = sl_monotonic_ns() - wall0;
	if (c->callgrind)
		CALLGRIND_STOP_INSTRUMENTATION;
	r->mem_bytes = sl_pacer_mem_bytes(l.p);
	r->lookahead_ns = sl_pacer_lookahead_ns(l.p);
	sl_pacer_stats_get(l.p, &r->stats);
	r->decisions = r->stats.decisions;
	/* The sink keeps the consumer loop from being optimized away. */
	r->early += sink == UINT64_MAX;
out:
	sl_pacer_free(l.p);
	free(l.order);
	if (rc)
		ph_result_free(r);
	return rc;
}

void
ph_result_free(struct ph_result *r)
{
	free(r->fm);
	r->fm = NULL;
}
