/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_sched.c - segment decisions per second per core: the Tonic engine (lib/sched) against
 * a binary-heap scheduler with the same semantics that picks one segment per flow selection
 * ("one packet per sort"), Tonic section 5.
 *
 * Workload (one seed, same for both): F flows, all backlogged (2^30 segments pushed), segment
 * 1024 B, a virtual clock that advances 10 ns per decision (100 Mpps, the FPGA's rate), and an
 * ideal network with a delayed-ack receiver: every 16th segment of a flow is acknowledged by a
 * cumulative ack delivered after a fixed virtual RTT of 10 us (the same number of acks per
 * decision for both schedulers, whatever order they send in). Credit:
 *   window: wnd = W = 128 segments (W = 2048 below 16 flows, so a flow can fill the RTT);
 *   rate:   each flow at 2 x line / F (the aggregate is twice the line), no burst: a segment
 *           every seg x 8 / R ns. Tonic releases them through its pacer (Tassel, its link at
 *           the aggregate rate, so no flow is slowed); the heap keeps each flow's eligible time
 *           as its key (a token bucket one segment deep), so time-based release is on both
 *           paths.
 * Each run is warmed up with as many decisions as it measures (by default max(20M, 16 x F):
 * every flow visited at least once before measuring).
 * The programs are fixed: the window one only re-arms the RTO on progress, the rate one too
 * (RTO 1 s: above the time between two visits of a flow at 1M flows, so it never fires).
 *
 * Measured: wall time of the loop (engine + the small ack pipe glue), decisions/s (mdps),
 * ns/decision, and instructions/decision: from the CPU counter (perf_event_open) when the
 * kernel allows it, else from callgrind when --instr is given (the bench re-runs itself in its
 * --callgrind child mode under valgrind, counting only inside measured_step(): the scheduler
 * calls of the measured half).
 *
 * Usage: bench-sched [--quick] [--flows 2048,16384] [--credit window|rate] [--impl tonic|heap]
 *                    [--ops N] [--visit N] [--tx-ts] [--seed S] [--instr] [--callgrind]
 * --tx-ts turns on the engine's per-segment send times (SL_SCHED_F_TX_TS), to measure their cost.
 * Output: JSON lines {"bench":"sched","impl",...} and {"bench":"sched","ratio":...}.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bench_callgrind.h"
#include "sl_bitmap.h"
#include "sl_rng.h"
#include "sl_sched.h"
#include "sl_time.h"

#define SEG_BYTES 1024u
#define SLOT_NS 10u   /* virtual ns per decision: 100 Mpps */
#define RTT_NS 10000u /* virtual RTT */
#define BURST 32u     /* decisions per next_burst call */
#define LINE_BPS (SEG_BYTES * 8ull * (SL_NS_PER_S / SLOT_NS))
#define PUSH_SEGS (UINT32_C(1) << 30)
#define ACK_RING (UINT32_C(1) << 16)
#define BURST_SEGS 1u /* the heap's token bucket depth, segments (the pacer has no burst) */
#define ACK_EVERY 16u /* the receiver acks every 16th segment of a flow */

enum credit { CR_WINDOW, CR_RATE };
static const char *const credit_name[] = {"window", "rate"};

/* ---- the fixed programs of the benchmark ---- */

/* No hooks: a fixed window or rate, and the engine's own timer rules (RFC 6298, go-back-N). */
static const struct sl_proto_ops bench_fixwnd = {.credit = SL_CREDIT_WINDOW,
						 .name = "bench_fixwnd"};
SL_PROTO_REGISTER(bench_fixwnd);
static const struct sl_proto_ops bench_fixrate = {.credit = SL_CREDIT_RATE,
						  .name = "bench_fixrate"};
SL_PROTO_REGISTER(bench_fixrate);

/* ---- workload ---- */

struct work {
	uint32_t flows;
	enum credit credit;
	uint32_t W;           /**< ring window, segments */
	uint64_t rate_bps;    /**< per flow (rate credit) */
	uint32_t visit_segs;  /**< tonic: segments per flow visit at most */
	uint32_t sched_flags; /**< tonic: SL_SCHED_F_* (--tx-ts: per-segment send times) */
	uint64_t seed;
};

struct impl {
	const char *name;
	void *(*create)(const struct work *w);
	void (*destroy)(void *h);
	void (*incoming)(void *h, const struct sl_event *ev, unsigned n, uint64_t now_ns);
	unsigned (*burst)(void *h, uint64_t now_ns, struct sl_seg *out, unsigned max);
	uint64_t (*deadline)(void *h);
	size_t (*bytes_per_flow)(void *h);
};

/* A random first segment on an ack boundary, the same sequence for both schedulers. */
static uint32_t
first_seq(struct sl_rng *rng)
{
	return (uint32_t)sl_rng_next(rng) & ~(ACK_EVERY - 1);
}

/* ---- tonic ---- */

static void *
tonic_create(const struct work *w)
{
	struct sl_sched_conf c = {.max_flows = w->flows,
				  .wnd_segs = w->W,
				  .visit_segs = w->visit_segs,
				  .timer_tick_ns = 1024,
				  .link_bps = LINE_BPS,
				  .flags = w->sched_flags};
	struct sl_sched *s = sl_sched_create(&c);
	struct sl_rng rng;

	if (s == NULL)
		return NULL;
	sl_rng_seed(&rng, w->seed);
	for (uint32_t f = 0; f < w->flows; f++) {
		struct sl_flow_conf fc = {.proto = w->credit == CR_WINDOW ? "bench_fixwnd"
									  : "bench_fixrate",
					  .seg_bytes = SEG_BYTES,
					  .init_rate_bps = w->rate_bps,
					  .rto_ns = SL_NS_PER_S,
					  .first_seq = first_seq(&rng)};

		if (sl_sched_flow_add(s, f, &fc) || sl_sched_flow_push(s, f, PUSH_SEGS, SEG_BYTES))
			abort();
	}
	return s;
}

static void
tonic_destroy(void *h)
{
	sl_sched_free(h);
}

static void
tonic_incoming(void *h, const struct sl_event *ev, unsigned n, uint64_t now_ns)
{
	sl_sched_incoming(h, ev, n, now_ns);
}

static unsigned
tonic_burst(void *h, uint64_t now_ns, struct sl_seg *out, unsigned max)
{
	return sl_sched_next_burst(h, now_ns, out, max);
}

static uint64_t
tonic_deadline(void *h)
{
	return sl_sched_next_deadline(h);
}

static size_t
tonic_bytes(void *h)
{
	return sl_sched_bytes_per_flow(h);
}

/* ---- baseline: a binary heap, one segment per flow selection ---- */

struct hflow {
	uint32_t ws, nxt, snd_max, tail, wnd; /**< segments */
	uint32_t marked;                      /**< marked-for-rtx count */
	uint64_t rate_bps, credit_nbit, credit_ns, burst_nbit;
	bool in_heap;
};

struct hent {
	uint64_t key; /**< window: round-robin ticket; rate: eligible time, ns */
	uint32_t flow;
};

struct heapsched {
	struct hflow *f;
	uint64_t *bits; /**< per flow: acked and marked planes */
	struct hent *heap;
	uint32_t n, flows, W, wW;
	uint64_t ticket;
	enum credit credit;
};

static void
heap_push(struct heapsched *h, uint64_t key, uint32_t flow)
{
	uint32_t i = h->n++;

	while (i) {
		uint32_t p = (i - 1) / 2;

		if (h->heap[p].key <= key)
			break;
		h->heap[i] = h->heap[p];
		i = p;
	}
	h->heap[i] = (struct hent){key, flow};
	h->f[flow].in_heap = true;
}

static void
heap_pop(struct heapsched *h)
{
	struct hent last = h->heap[--h->n];
	uint32_t i = 0;

	h->f[h->heap[0].flow].in_heap = false;
	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->heap[c + 1].key < h->heap[c].key)
			c++;
		if (last.key <= h->heap[c].key)
			break;
		h->heap[i] = h->heap[c];
		i = c;
	}
	if (h->n)
		h->heap[i] = last;
}

static bool
hflow_can_send(const struct hflow *f)
{
	return f->marked || (f->nxt != f->tail && sl_seq_lt(f->nxt, f->ws + f->wnd));
}

/* Key for (re)insertion: the next ticket, or when the rate credit covers one segment. */
static uint64_t
hflow_key(struct heapsched *h, struct hflow *f, uint64_t now_ns)
{
	uint64_t need = (uint64_t)SEG_BYTES * 8 * SL_NS_PER_S;

	if (h->credit == CR_WINDOW)
		return ++h->ticket;
	if (now_ns > f->credit_ns) {
		unsigned __int128 add = (unsigned __int128)f->rate_bps * (now_ns - f->credit_ns);
		uint64_t room = f->burst_nbit - f->credit_nbit;

		f->credit_nbit = add >= room ? f->burst_nbit : f->credit_nbit + (uint64_t)add;
		f->credit_ns = now_ns;
	}
	if (f->credit_nbit >= need)
		return now_ns;
	return now_ns + SL_DIV_ROUND_UP(need - f->credit_nbit, f->rate_bps);
}

static void *
heap_create(const struct work *w)
{
	struct heapsched *h = calloc(1, sizeof(*h));
	struct sl_rng rng;

	if (h == NULL)
		return NULL;
	h->flows = w->flows;
	h->W = w->W;
	h->wW = w->W / 64;
	h->credit = w->credit;
	h->f = calloc(w->flows, sizeof(*h->f));
	h->bits = calloc((size_t)w->flows * 2 * h->wW, sizeof(uint64_t));
	h->heap = malloc(sizeof(*h->heap) * w->flows);
	if (!h->f || !h->bits || !h->heap)
		abort();
	sl_rng_seed(&rng, w->seed);
	for (uint32_t i = 0; i < w->flows; i++) {
		struct hflow *f = &h->f[i];

		f->ws = f->nxt = f->snd_max = first_seq(&rng);
		f->tail = f->ws + PUSH_SEGS;
		f->wnd = w->W;
		f->rate_bps = w->rate_bps;
		f->burst_nbit = (uint64_t)BURST_SEGS * SEG_BYTES * 8 * SL_NS_PER_S;
		f->credit_nbit = f->burst_nbit; /* the bucket starts full */
		heap_push(h, hflow_key(h, f, 0), i);
	}
	return h;
}

static void
heap_destroy(void *p)
{
	struct heapsched *h = p;

	free(h->f);
	free(h->bits);
	free(h->heap);
	free(h);
}

static void
heap_incoming(void *p, const struct sl_event *ev, unsigned n, uint64_t now_ns)
{
	struct heapsched *h = p;

	for (unsigned i = 0; i < n; i++) {
		uint32_t fi = ev[i].flow;
		struct hflow *f = &h->f[fi];
		uint64_t *acked = h->bits + (size_t)fi * 2 * h->wW, *marked = acked + h->wW;
		uint32_t d = ev[i].cumack - f->ws;

		if (!sl_seq_gt(ev[i].cumack, f->ws) || sl_seq_gt(ev[i].cumack, f->snd_max))
			continue;
		if (f->marked)
			f->marked -= sl_bitmap_count_range(marked, h->W, f->ws & (h->W - 1), d);
		sl_bitmap_clear_range(acked, h->W, f->ws & (h->W - 1), d);
		sl_bitmap_clear_range(marked, h->W, f->ws & (h->W - 1), d);
		f->ws = ev[i].cumack;
		if (!f->in_heap && hflow_can_send(f))
			heap_push(h, hflow_key(h, f, now_ns), fi);
	}
}

static unsigned
heap_burst(void *p, uint64_t now_ns, struct sl_seg *out, unsigned max)
{
	struct heapsched *h = p;
	unsigned n = 0;

	while (n < max && h->n) {
		uint32_t fi = h->heap[0].flow, seq;
		struct hflow *f = &h->f[fi];
		uint64_t *marked = h->bits + ((size_t)fi * 2 + 1) * h->wW;
		bool rtx = false;

		if (h->heap[0].key > now_ns && h->credit == CR_RATE)
			break;
		heap_pop(h);
		if (f->marked) {
			uint32_t idx = sl_bitmap_ffs_from(marked, h->W, f->ws & (h->W - 1));

			sl_bitmap_clear(marked, idx);
			f->marked--;
			seq = f->ws + ((idx - f->ws) & (h->W - 1));
			rtx = true;
		} else {
			seq = f->nxt++;
			f->snd_max = f->nxt;
		}
		if (h->credit == CR_RATE) {
			hflow_key(h, f, now_ns); /* bring the credit up to now */
			f->credit_nbit -= (uint64_t)SEG_BYTES * 8 * SL_NS_PER_S;
		}
		out[n++] = (struct sl_seg){
			.flow = fi, .seq = seq, .len = SEG_BYTES, .flags = rtx ? SL_SEG_F_RTX : 0};
		if (hflow_can_send(f))
			heap_push(h, hflow_key(h, f, now_ns), fi);
	}
	return n;
}

static uint64_t
heap_deadline(void *p)
{
	struct heapsched *h = p;

	return h->n ? (h->credit == CR_RATE ? h->heap[0].key : 0) : UINT64_MAX;
}

static size_t
heap_bytes(void *p)
{
	struct heapsched *h = p;

	return sizeof(struct hflow) + 2 * h->wW * sizeof(uint64_t) + sizeof(struct hent);
}

static const struct impl impls[] = {
	{"tonic", tonic_create, tonic_destroy, tonic_incoming, tonic_burst, tonic_deadline,
	 tonic_bytes},
	{"heap", heap_create, heap_destroy, heap_incoming, heap_burst, heap_deadline, heap_bytes},
};

/* ---- driver ---- */

struct ack {
	uint64_t due_ns;
	uint32_t flow, cumack;
};

struct result {
	uint64_t decisions;
	uint64_t wall_ns;
	uint64_t instr; /**< 0 when not measured */
	size_t bytes_per_flow;
};

static int
perf_open(void)
{
	struct perf_event_attr a = {.type = PERF_TYPE_HARDWARE,
				    .size = sizeof(a),
				    .config = PERF_COUNT_HW_INSTRUCTIONS,
				    .disabled = 1,
				    .exclude_kernel = 1,
				    .exclude_hv = 1};

	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
}

/* One step of the run loop: the events due, then one burst. */
static inline unsigned
step(const struct impl *im, void *h, const struct sl_event *ev, unsigned ne, uint64_t now,
     struct sl_seg *out)
{
	if (ne)
		im->incoming(h, ev, ne, now);
	return im->burst(h, now, out, BURST);
}

/*
 * The same, as separate functions, so that callgrind counts only the measured half (kept out of
 * line and unclonable, so that the symbol callgrind toggles on is the one called).
 */
#if defined(__GNUC__) && !defined(__clang__)
#define STEP_FN __attribute__((noipa))
#else
#define STEP_FN __attribute__((noinline))
#endif

static STEP_FN unsigned
warmup_step(const struct impl *im, void *h, const struct sl_event *ev, unsigned ne, uint64_t now,
	    struct sl_seg *out)
{
	return step(im, h, ev, ne, now, out);
}

static STEP_FN unsigned
measured_step(const struct impl *im, void *h, const struct sl_event *ev, unsigned ne, uint64_t now,
	      struct sl_seg *out)
{
	return step(im, h, ev, ne, now, out);
}

/* Run ops decisions (after a warm-up of the same length) and measure the second half. */
static int
run(const struct impl *im, const struct work *w, uint64_t ops, bool cg, struct result *r)
{
	static struct ack ring[ACK_RING];
	static struct sl_event ev[256];
	struct sl_seg out[BURST];
	uint32_t ah = 0, at = 0;
	uint64_t now = 0, done = 0, t0 = 0, total = 2 * ops;
	int pfd = cg ? -1 : perf_open();
	void *h = im->create(w);

	if (h == NULL)
		return -ENOMEM;
	while (done < total) {
		unsigned ne = 0, n;

		if (done >= ops && t0 == 0) {
			t0 = sl_monotonic_ns();
			if (pfd >= 0) {
				ioctl(pfd, PERF_EVENT_IOC_RESET, 0);
				ioctl(pfd, PERF_EVENT_IOC_ENABLE, 0);
			}
		}
		while (ah != at && ring[ah].due_ns <= now && ne < SL_ARRAY_SIZE(ev)) {
			ev[ne++] = (struct sl_event){.flow = ring[ah].flow,
						     .type = SL_EV_ACK,
						     .flags = SL_EVF_CUMACK,
						     .cumack = ring[ah].cumack};
			ah = (ah + 1) & (ACK_RING - 1);
		}
		n = t0 ? measured_step(im, h, ev, ne, now, out)
		       : warmup_step(im, h, ev, ne, now, out);
		for (unsigned i = 0; i < n; i++) {
			if ((out[i].seq + 1) % ACK_EVERY)
				continue; /* delayed ack */
			ring[at] = (struct ack){now + RTT_NS, out[i].flow, out[i].seq + 1};
			at = (at + 1) & (ACK_RING - 1);
			if (at == ah)
				return -ENOBUFS;
		}
		done += n;
		if (n) {
			now += (uint64_t)n * SLOT_NS;
		} else {
			uint64_t d = im->deadline(h);

			if (ah != at)
				d = SL_MIN(d, ring[ah].due_ns);
			if (d == UINT64_MAX)
				return -EDEADLK;
			now = SL_MAX(now + 1, d);
		}
	}
	r->wall_ns = sl_monotonic_ns() - t0;
	r->decisions = done - ops;
	r->instr = 0;
	if (pfd >= 0) {
		uint64_t cnt = 0;

		ioctl(pfd, PERF_EVENT_IOC_DISABLE, 0);
		if (read(pfd, &cnt, sizeof(cnt)) == (ssize_t)sizeof(cnt))
			r->instr = cnt;
		close(pfd);
	}
	r->bytes_per_flow = im->bytes_per_flow(h);
	im->destroy(h);
	return 0;
}

/* Instructions inside the measured scheduler calls, from callgrind (re-running this binary). */
static uint64_t
callgrind_instr(char *self, const struct impl *im, const struct work *w, uint64_t ops)
{
	char flows[16], nops[24], visit[16], seed[24];
	char *argv[] = {self,
			"--callgrind",
			"--impl",
			(char *)im->name,
			"--flows",
			flows,
			"--credit",
			(char *)credit_name[w->credit],
			"--ops",
			nops,
			"--visit",
			visit,
			"--seed",
			seed,
			w->sched_flags & SL_SCHED_F_TX_TS ? "--tx-ts" : NULL,
			NULL};
	double ir = 0;

	snprintf(flows, sizeof(flows), "%u", w->flows);
	snprintf(nops, sizeof(nops), "%" PRIu64, ops);
	snprintf(visit, sizeof(visit), "%u", w->visit_segs);
	snprintf(seed, sizeof(seed), "%" PRIu64, w->seed);
	if (bench_callgrind("measured_step", argv, &ir, 1) != 1 || ir < 0)
		return 0;
	return (uint64_t)ir;
}

static struct work
workload(uint32_t flows, enum credit c, uint32_t visit, uint32_t flags, uint64_t seed)
{
	struct work w = {.flows = flows,
			 .credit = c,
			 .W = flows < 16 ? 2048 : 128,
			 .visit_segs = visit,
			 .sched_flags = flags,
			 .seed = seed};

	w.rate_bps = SL_MAX(2 * LINE_BPS / flows, (uint64_t)SL_BPS_PER_MBPS);
	return w;
}

static int
parse_flows(const char *arg, uint32_t *flows, unsigned *n)
{
	char *dup = strdup(arg), *save = NULL;

	*n = 0;
	for (char *t = strtok_r(dup, ",", &save); t && *n < 16; t = strtok_r(NULL, ",", &save)) {
		char *end;
		unsigned long v = strtoul(t, &end, 0);

		if (*end == 'K' || *end == 'k')
			v <<= 10, end++;
		else if (*end == 'M' || *end == 'm')
			v <<= 20, end++;
		if (*end || v == 0 || v > (1ul << 24)) {
			free(dup);
			return -EINVAL;
		}
		flows[(*n)++] = (uint32_t)v;
	}
	free(dup);
	return *n ? 0 : -EINVAL;
}

int
main(int argc, char **argv)
{
	uint32_t flows[16] = {1, 64, 1024, 2048, 16384, 65536, 262144, 1048576};
	unsigned nflows = 8, ncred = 2, nimpl = 2, first_cred = 0, first_impl = 0;
	uint64_t ops = 0, seed = 1;
	uint32_t visit = 16, flags = 0;
	bool quick = false, cg = false, instr = false;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--quick")) {
			quick = true;
		} else if (!strcmp(a, "--callgrind")) {
			cg = true;
		} else if (!strcmp(a, "--instr")) {
			instr = true;
		} else if (!strcmp(a, "--tx-ts")) {
			flags |= SL_SCHED_F_TX_TS;
		} else if (!strcmp(a, "--flows") && v) {
			if (parse_flows(v, flows, &nflows))
				goto usage;
			i++;
		} else if (!strcmp(a, "--credit") && v) {
			first_cred = !strcmp(v, "rate");
			if (strcmp(v, "rate") && strcmp(v, "window"))
				goto usage;
			ncred = 1;
			i++;
		} else if (!strcmp(a, "--impl") && v) {
			first_impl = !strcmp(v, "heap");
			if (strcmp(v, "heap") && strcmp(v, "tonic"))
				goto usage;
			nimpl = 1;
			i++;
		} else if (!strcmp(a, "--ops") && v) {
			ops = strtoull(v, NULL, 0);
			i++;
		} else if (!strcmp(a, "--visit") && v) {
			visit = (uint32_t)strtoul(v, NULL, 0);
			if (visit == 0 || visit > BURST)
				goto usage;
			i++;
		} else if (!strcmp(a, "--seed") && v) {
			seed = strtoull(v, NULL, 0);
			i++;
		} else {
			goto usage;
		}
	}
	if (quick && nflows == 8) {
		flows[0] = 64, flows[1] = 2048, flows[2] = 16384;
		nflows = 3;
	}
	for (unsigned fi = 0; fi < nflows; fi++) {
		for (unsigned c = first_cred; c < first_cred + ncred; c++) {
			struct work w = workload(flows[fi], (enum credit)c, visit, flags, seed);
			uint64_t nops = ops     ? ops
					: quick ? 200000
						: SL_MAX(20000000ull, 16ull * flows[fi]);
			double mdps[2] = {0};

			for (unsigned k = first_impl; k < first_impl + nimpl; k++) {
				struct result r;
				int rc = run(&impls[k], &w, nops, cg, &r);
				char ipd[32] = "null";

				if (rc) {
					fprintf(stderr, "bench-sched: %s %u flows: %s\n",
						impls[k].name, w.flows, strerror(-rc));
					return 1;
				}
				if (instr && !cg)
					r.instr = callgrind_instr(argv[0], &impls[k], &w,
								  SL_MIN(nops, 2000000ull));
				if (r.instr)
					snprintf(ipd, sizeof(ipd), "%.1f",
						 (double)r.instr /
							 (double)(instr ? SL_MIN(nops, 2000000ull)
									: r.decisions));
				mdps[k] = (double)r.decisions * 1e3 / (double)r.wall_ns;
				printf("{\"bench\":\"sched\",\"impl\":\"%s\",\"flows\":%u,"
				       "\"credit\":\"%s\","
				       "\"decisions\":%" PRIu64
				       ",\"mdps\":%.2f,\"ns_per_decision\":%.2f,"
				       "\"instr_per_decision\":%s,\"bytes_per_flow\":%zu,\"wnd_"
				       "segs\":%u,"
				       "\"visit_segs\":%u,\"tx_ts\":%s,\"rtt_ns\":%u,\"seed\":"
				       "%" PRIu64 "}\n",
				       impls[k].name, w.flows, credit_name[c], r.decisions, mdps[k],
				       (double)r.wall_ns / (double)r.decisions, ipd,
				       r.bytes_per_flow, w.W, k == 0 ? w.visit_segs : 1,
				       k == 0 && (flags & SL_SCHED_F_TX_TS) ? "true" : "false",
				       RTT_NS, seed);
				fflush(stdout);
			}
			if (nimpl == 2)
				printf("{\"bench\":\"sched\",\"ratio\":\"tonic/heap\",\"flows\":%u,"
				       "\"credit\":\"%s\",\"speedup\":%.2f}\n",
				       w.flows, credit_name[c], mdps[0] / mdps[1]);
		}
	}
	return 0;
usage:
	fprintf(stderr, "usage: bench-sched [--quick] [--flows N,N..] [--credit window|rate] "
			"[--impl tonic|heap] [--ops N] [--visit N] [--tx-ts] [--seed S] [--instr] "
			"[--callgrind]\n");
	return 2;
}
