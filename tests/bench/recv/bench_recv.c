/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_recv.c - receive cost per packet of lib/recv (docs/recv.md section 9) and its
 * memory accounting (section 8), as JSON lines.
 *
 * Cases, all on one seeded workload of 64 connections with the paper's pool (1024 bits, 8-bit
 * blocks) and a 1024-packet window, fed in bursts of 32:
 *   cumack_baseline  a bare cumulative-ACK receiver (expected PSN, deliver, ACK; no bits, no
 *                    reorder buffer) writing the same action records: the baseline
 *   in_order         lib/recv, in-order arrivals (the fast path)
 *   out_of_order     lib/recv, PSNs base+1..base+7 of each 8-packet group (the first forms a hole
 *                    and is NACKed, all are stored in the reorder buffer)
 *   retransmitted    lib/recv, the missing PSN base arrives: it and the 7 stored ones are
 *                    delivered, the block and the reorder buffer go back
 * ns_per_pkt is the best of several repetitions, interleaved across cases (wall clock, noisy on
 * shared cores: compare the cases of one run);
 * instr_per_pkt comes from running the same case under callgrind with collection limited to the
 * measured function (this binary re-runs itself under valgrind), so it is repeatable.
 *
 *   bench-recv [--quick] [--pkts N] [--no-callgrind]   cost lines
 *   bench-recv --memory                                 memory lines for 300, 10K, 1M connections
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_callgrind.h"
#include "sl_recv.h"
#include "sl_rng.h"

#define CONNS 64
#define BURST 32
#define GROUP 8 /* out-of-order group: 1 lost + 7 stored */
#define WINDOW 1024

enum bench_case { CASE_BASELINE, CASE_IN_ORDER, CASE_OOO, CASE_RTX, CASE_N };
static const char *const case_name[CASE_N] = {"cumack_baseline", "in_order", "out_of_order",
					      "retransmitted"};

/* ---- the baseline: a bare cumulative-ACK receiver ------------------------------------------ */

struct base_conn {
	uint32_t rcv_nxt; /**< PSN expected */
	uint32_t unacked; /**< packets since the last ACK */
};

struct base {
	uint32_t max_conns;
	uint32_t ack_every_pkts;
	struct base_conn conn[CONNS];
	uint64_t drops;
};

static unsigned
base_burst(struct base *b, const struct sl_recv_pkt *pkts, unsigned n, struct sl_recv_action *act)
{
	unsigned out = 0;

	for (unsigned i = 0; i < n; i++) {
		const struct sl_recv_pkt *p = &pkts[i];
		struct sl_recv_action *a = &act[out++];
		struct base_conn *c;

		if (p->conn >= b->max_conns) {
			b->drops++;
			continue;
		}
		c = &b->conn[p->conn];
		a->conn = p->conn;
		a->psn = p->psn;
		a->data.handle = p->handle;
		a->data.app_addr = p->app_addr;
		if (p->psn != c->rcv_nxt) {
			a->type = SL_RECV_ACT_DROP;
			b->drops++;
			continue;
		}
		a->type = SL_RECV_ACT_DELIVER;
		c->rcv_nxt++;
		if (++c->unacked >= b->ack_every_pkts) {
			a = &act[out++];
			a->type = SL_RECV_ACT_ACK;
			a->conn = p->conn;
			a->fb.ack_psn = c->rcv_nxt;
			a->fb.acked_pkts = (uint16_t)c->unacked;
			c->unacked = 0;
		}
	}
	return out;
}

/* ---- workload ------------------------------------------------------------------------------ */

struct bench {
	struct sl_recv *r;
	struct base base;
	uint32_t next_psn[CONNS];  /**< in-order cursor per connection */
	uint32_t group_psn[CONNS]; /**< first PSN of the current out-of-order group */
	struct sl_recv_pkt chunk[4096];
	unsigned chunk_len;
	struct sl_recv_action act[2 * WINDOW + 4 * BURST];
	uint64_t sink; /**< folds every action so none can be optimized away */
	struct sl_rng rng;
};

static void gen_group(struct bench *b, bool rtx);
static void feed(struct bench *b, bool baseline);

/* A receiver with CONNS connections; for the out-of-order cases, one warm-up group. */
static void
bench_init(struct bench *b, enum bench_case k)
{
	struct sl_recv_conf rc = SL_RECV_CONF_DEFAULT(CONNS);
	struct sl_recv_conn_conf cc = {
		.mode = SL_RECV_MELO, .fb = SL_RECV_FB_NACK, .ack_every_pkts = 1};

	memset(b, 0, sizeof(*b));
	rc.window_pkts = WINDOW;
	b->r = sl_recv_create(&rc);
	if (b->r == NULL) {
		perror("sl_recv_create");
		exit(1);
	}
	sl_rng_seed(&b->rng, 42);
	b->base.max_conns = CONNS;
	b->base.ack_every_pkts = 1;
	for (uint32_t c = 0; c < CONNS; c++) {
		cc.isn = (uint32_t)sl_rng_next(&b->rng) & ~(uint32_t)(GROUP - 1);
		if (sl_recv_conn_open(b->r, c, &cc) < 0)
			exit(1);
		b->next_psn[c] = b->group_psn[c] = cc.isn;
		b->base.conn[c].rcv_nxt = cc.isn;
	}
	if (k == CASE_OOO || k == CASE_RTX) {
		/* The reorder buffers are allocated on first use: keep that out of the figures. */
		gen_group(b, false);
		feed(b, false);
		gen_group(b, true);
		feed(b, false);
	}
}

static void
pkt_at(struct sl_recv_pkt *p, uint32_t conn, uint32_t psn, uint32_t seq)
{
	*p = (struct sl_recv_pkt){.conn = conn,
				  .psn = psn,
				  .tx_ns = seq,
				  .handle = (void *)(uintptr_t)(seq + 1),
				  .app_addr = (uint64_t)psn << 10};
}

/* In-order chunk: bursts of BURST PSNs per connection, connections in a seeded order. */
static void
gen_in_order(struct bench *b)
{
	uint32_t *next = b->next_psn;

	b->chunk_len = 0;
	while (b->chunk_len + BURST <= SL_ARRAY_SIZE(b->chunk)) {
		uint32_t c = (uint32_t)sl_rng_below(&b->rng, CONNS);

		for (unsigned k = 0; k < BURST; k++, b->chunk_len++)
			pkt_at(&b->chunk[b->chunk_len], c, next[c]++, b->chunk_len);
	}
}

/* Out-of-order chunk: PSNs +1..+7 of each connection's group; retransmission chunk: the +0s. */
static void
gen_group(struct bench *b, bool rtx)
{
	b->chunk_len = 0;
	for (uint32_t c = 0; c < CONNS; c++) {
		if (rtx) {
			pkt_at(&b->chunk[b->chunk_len], c, b->group_psn[c], b->chunk_len);
			b->chunk_len++;
			b->group_psn[c] += GROUP;
		} else {
			for (uint32_t k = 1; k < GROUP; k++, b->chunk_len++)
				pkt_at(&b->chunk[b->chunk_len], c, b->group_psn[c] + k,
				       b->chunk_len);
		}
	}
}

static void
consume(struct bench *b, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		b->sink += b->act[i].type + (uintptr_t)b->act[i].data.handle;
}

/* One chunk through the receiver (or the baseline). */
static __attribute__((noinline)) void
feed(struct bench *b, bool baseline)
{
	for (unsigned i = 0; i < b->chunk_len; i += BURST) {
		unsigned n = SL_MIN(BURST, b->chunk_len - i), na;

		if (baseline)
			na = base_burst(&b->base, &b->chunk[i], n, b->act);
		else
			na = sl_recv_burst(b->r, &b->chunk[i], n, 0, b->act, SL_ARRAY_SIZE(b->act),
					   NULL);
		consume(b, na);
	}
}

/* The measured work; callgrind collects inside this function only (--toggle-collect). */
__attribute__((noinline)) void bench_recv_measured(struct bench *b, bool baseline);
__attribute__((noinline)) void
bench_recv_measured(struct bench *b, bool baseline)
{
	feed(b, baseline);
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * SL_NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* Run case k over about pkts packets; returns ns per packet of the measured part. */
static double
run_case(struct bench *b, enum bench_case k, uint64_t pkts)
{
	uint64_t done = 0, ns = 0;

	while (done < pkts) {
		bool rtx = k == CASE_RTX;
		uint64_t t0;

		if (k == CASE_BASELINE || k == CASE_IN_ORDER) {
			gen_in_order(b);
		} else {
			/* Both group cases run both halves; only one half is measured. */
			gen_group(b, false);
			if (rtx) {
				feed(b, false);
				gen_group(b, true);
			}
		}
		t0 = now_ns();
		bench_recv_measured(b, k == CASE_BASELINE);
		ns += now_ns() - t0;
		done += b->chunk_len;
		if (k == CASE_OOO) {
			gen_group(b, true);
			feed(b, false);
		}
	}
	return (double)ns / (double)done;
}

/* ---- callgrind: instructions per packet ---------------------------------------------------- */

/*
 * Re-run this binary under callgrind for one case, collecting only inside
 * bench_recv_measured; returns instructions per measured packet, or -1 when valgrind is missing.
 */
static double
callgrind_case(const char *self, enum bench_case k, uint64_t pkts)
{
	char ops[32], kase[8];
	char *const argv[] = {(char *)self, "--cg-child", kase, ops, NULL};
	double ir;

	snprintf(ops, sizeof(ops), "%llu", (unsigned long long)pkts);
	snprintf(kase, sizeof(kase), "%d", (int)k);
	return bench_callgrind("bench_recv_measured", argv, &ir, 1) == 1 ? ir / (double)pkts : -1;
}

/* ---- memory accounting (docs/recv.md section 8)
 * ------------------------------------------------------------ */

static void
memory_lines(void)
{
	static const uint64_t conns[] = {300, 10000, 1000000};
	struct sl_recv_conf rc = SL_RECV_CONF_DEFAULT(1);
	struct sl_recv_mem m;
	const double paper_fields = 20, paper_pool = 384; /* 20 B per conn, 3 Kb per side */

	sl_recv_mem(&rc, &m);
	for (unsigned i = 0; i < SL_ARRAY_SIZE(conns); i++) {
		uint64_t n = conns[i];
		double pools = 2.0 * (double)m.pool_bytes; /* receiver + sender side */
		/* As the paper counts: MELO fields of the receiver, both pools shared by all. */
		double ours = m.melo_fields_bytes + pools / (double)n;
		double paper = paper_fields + 2 * paper_pool / (double)n;
		double with_sender = ours + sl_recv_rtx_flow_bytes();
		double full = 2.0 * rc.window_pkts / 8; /* a full bitmap per connection, 2 sides */
		uint64_t robs = SL_MIN(n, rc.pool_bits / rc.block_bits);

		printf("{\"bench\":\"recv\",\"kind\":\"memory\",\"conns\":%llu,\"window_pkts\":%u,"
		       "\"pool_bits\":%u,\"melo_fields_bytes\":%u,\"sender_flow_bytes\":%u,"
		       "\"conn_ctx_bytes\":%u,\"pool_bytes_per_side\":%llu,"
		       "\"paper_pool_bytes_per_side\":%.0f,\"bytes_per_conn\":%.2f,"
		       "\"paper_bytes_per_conn\":%.2f,\"bytes_per_conn_with_sender\":%.2f,"
		       "\"full_bitmap_bytes_per_conn\":%.0f,\"full_bitmap_over_ours\":%.2f,"
		       "\"total_bytes\":%.0f,\"paper_total_bytes\":%.0f,"
		       "\"full_bitmap_total_bytes\":%.0f,\"ctx_total_bytes\":%.0f,"
		       "\"rob_bytes\":%llu,\"robs_max\":%llu,\"offchip_max_bytes\":%llu,"
		       "\"paper_offchip_bytes\":%llu}\n",
		       (unsigned long long)n, rc.window_pkts, rc.pool_bits, m.melo_fields_bytes,
		       sl_recv_rtx_flow_bytes(), m.conn_ctx_bytes, (unsigned long long)m.pool_bytes,
		       paper_pool, ours, paper, with_sender, full, full / ours, ours * (double)n,
		       paper * (double)n, full * (double)n,
		       (double)n * (m.conn_ctx_bytes + sl_recv_rtx_flow_bytes()) + pools,
		       (unsigned long long)m.rob_bytes, (unsigned long long)robs,
		       (unsigned long long)(robs * m.rob_bytes),
		       (unsigned long long)(n * m.rob_bytes));
	}
}

int
main(int argc, char **argv)
{
	static struct bench b[CASE_N];
	uint64_t pkts = 8000000, cg_pkts = 200000, sink = 0;
	bool cg = true;
	double ns[CASE_N], instr[CASE_N];
	int reps = 400;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--cg-child") == 0 && i + 2 < argc) {
			enum bench_case k = (enum bench_case)atoi(argv[i + 1]);

			if (k >= CASE_N)
				return 2;
			bench_init(&b[k], k);
			run_case(&b[k], k, strtoull(argv[i + 2], NULL, 0));
			return 0;
		} else if (strcmp(argv[i], "--quick") == 0) {
			pkts = 1000000;
			cg_pkts = 40000;
			reps = 50;
		} else if (strcmp(argv[i], "--pkts") == 0 && i + 1 < argc) {
			pkts = strtoull(argv[++i], NULL, 0);
		} else if (strcmp(argv[i], "--no-callgrind") == 0) {
			cg = false;
		} else if (strcmp(argv[i], "--memory") == 0) {
			memory_lines();
			return 0;
		} else {
			fprintf(stderr,
				"usage: %s [--quick] [--pkts N] [--no-callgrind] | --memory\n",
				argv[0]);
			return 2;
		}
	}
	/*
	 * One receiver per case, warmed up, kept across repetitions; the repetitions are short
	 * and interleave the cases, so that the baseline and the receiver see the same load on a
	 * shared machine, and each case keeps its best one.
	 */
	for (int k = 0; k < CASE_N; k++) {
		ns[k] = 1e30;
		bench_init(&b[k], (enum bench_case)k);
	}
	for (int rep = 0; rep < reps; rep++)
		for (int k = 0; k < CASE_N; k++)
			ns[k] = SL_MIN(ns[k], run_case(&b[k], (enum bench_case)k, pkts / reps));
	for (int k = 0; k < CASE_N; k++) {
		sl_recv_free(b[k].r);
		instr[k] = cg ? callgrind_case(argv[0], (enum bench_case)k, cg_pkts) : -1;
	}
	for (int k = 0; k < CASE_N; k++) {
		printf("{\"bench\":\"recv\",\"case\":\"%s\",\"conns\":%d,\"pkts\":%llu,"
		       "\"ns_per_pkt\":%.2f,\"mpps\":%.1f,",
		       case_name[k], CONNS, (unsigned long long)pkts, ns[k], 1e3 / ns[k]);
		if (instr[k] >= 0)
			printf("\"instr_per_pkt\":%.1f", instr[k]);
		else
			printf("\"instr_per_pkt\":null");
		if (k == CASE_IN_ORDER) {
			printf(",\"baseline_ns_per_pkt\":%.2f,\"added_ns_per_pkt\":%.2f,"
			       "\"goal_added_ns\":10,\"goal_met\":%s",
			       ns[CASE_BASELINE], ns[k] - ns[CASE_BASELINE],
			       ns[k] - ns[CASE_BASELINE] <= 10 ? "true" : "false");
			if (instr[k] >= 0 && instr[CASE_BASELINE] >= 0)
				printf(",\"added_instr_per_pkt\":%.1f",
				       instr[k] - instr[CASE_BASELINE]);
		}
		if (k == CASE_RTX)
			printf(",\"delivered_per_pkt\":%d", GROUP);
		printf("}\n");
	}
	for (int k = 0; k < CASE_N; k++)
		sink += b[k].sink;
	if (sink == 42)
		printf("\n");
	return 0;
}
