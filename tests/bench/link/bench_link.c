/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench-link - the link's costs (docs/wire-format.md section 2.4), as JSON lines on stdout:
 *
 *   {"op":"crc12",...}    CRC-12 over 64/1500/9000 bytes: bit-serial reference, byte table,
 *                         slice-by-8 and PCLMULQDQ folding (slice-by-8 again on a CPU without
 *                         it; "clmul_available" says which), same buffers, ratios against the
 *                         byte table. encode and verify call sl_crc12, which folds from
 *                         SL_CRC12_CLMUL_MIN_BYTES bytes.
 *   {"op":"crc12_crossover","bytes":B,...}
 *                         slice-by-8 against folding on short inputs (8..64 bytes), where the
 *                         folding's fixed cost decides SL_CRC12_CLMUL_MIN_BYTES.
 *   {"op":"encode"|"verify","scope":"header"|"frame","bytes":B,"ns_per_frame":..}
 *                         writing a data frame's link header (CRC over the covered bytes) and
 *                         decoding + verifying it; bytes counts the link frame (link header +
 *                         body), "header" scope covers the link header + the first
 *                         HDR_SCOPE_BYTES (48) body bytes, as sluiced's header scope does,
 *                         "frame" covers everything. instr_per_frame comes from callgrind
 *                         (--callgrind), else null.
 *   {"op":"lane","scope":..,"bytes":B,"ns_per_frame":..}
 *                         one payload frame through a whole lane: sl_link_tx_burst on the
 *                         sender (ring, header), the header copy the glue does, and
 *                         sl_link_rx_burst + consume on the receiver, in bursts of 32.
 *   {"op":"goodput",...}  two lanes on the virtual clock (tests/unit/link/link_pair.c), both
 *                         directions saturated, frame loss FER per direction: measured slot
 *                         efficiency against RIFL's Eff = (1 - S_hdr/S)(1 - N_stall x FER),
 *                         with N_stall measured (stalled slots per lost frame) and with RIFL's
 *                         estimate 2.5 x 2^k + RTT slots.
 *   {"op":"recovery",...} the receiving lanes' recovery-time quantiles against
 *                         RTT + 2.5 x 2^k frame slots.
 *
 * Timings on shared cores are noisy: each figure is the best of several rounds, and the
 * callgrind instruction counts are the repeatable per-frame cost.
 *
 *   bench-link [--quick] [--callgrind]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_callgrind.h"
#include "crc12.h"
#include "link_pair.h"
#include "sl_rng.h"
#include "sl_wire.h"

/*
 * The header scope sluiced runs with: SL_DP_VCODE_HDR_BYTES (lib/dp/sl_dp.h), which is the
 * longest transport header, SL_XHDR_MAX_LEN. sl_dp.h is DPDK's side and this benchmark links
 * only the link, so the count comes from the same source, lib/wire's SL_XHDR_MAX_LEN.
 */
#define HDR_SCOPE_BYTES SL_XHDR_MAX_LEN

#define MAX_BYTES 9000u
#define ETH_OVERHEAD 38u /**< bytes: Ethernet header 14 + FCS 4 + preamble/SFD 8 + IFG 12 */

static const size_t sizes[] = {64, 1500, 9000};

static const struct {
	const char *name;
	struct sl_wire_fmt fmt;
} scopes[] = {
	{"header", {SL_WIRE_MODE_FAITHFUL, HDR_SCOPE_BYTES}},
	{"frame", {SL_WIRE_MODE_FAITHFUL, SL_WIRE_SCOPE_ALL}},
};

enum op {
	OP_ENCODE,
	OP_VERIFY,
	OP_LANE,
	OP_CRC_BITWISE,
	OP_CRC_TABLE,
	OP_CRC_SLICE8,
	OP_CRC_CLMUL,
	OP__MAX
};
static const char *const op_names[OP__MAX] = {"encode", "verify", "lane", "bitwise",
					      "table",  "slice8", "clmul"};

#define LANE_BURST 32u
#define LANE_ORDER 10u

static uint8_t frame_buf[MAX_BYTES];
static struct sl_link *lane[2];
static uint8_t lane_buf[LANE_BURST][SL_WIRE_HDR_MAX + MAX_BYTES];
static uint8_t lane_small[LANE_BURST][64];
static uint64_t lane_now_ns;

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * SL_NS_PER_S + (uint64_t)ts.tv_nsec;
}

static void
prepare(unsigned scope, size_t bytes)
{
	struct sl_rng r;

	sl_rng_seed(&r, bytes);
	for (size_t i = 0; i < bytes; i++)
		frame_buf[i] = (uint8_t)sl_rng_next(&r);
	sl_wire_encode_data(&scopes[scope].fmt, frame_buf, SL_WIRE_META_VALID, 0,
			    frame_buf + SL_WIRE_HDR_LEN, bytes - SL_WIRE_HDR_LEN);
}

static void
lane_release(void *ctx, void *const *h, unsigned n)
{
	(void)ctx;
	(void)h;
	(void)n;
}

/* Frames from tx_burst as the peer receives them: header prepended in the headroom. */
static unsigned
lane_wire(const struct sl_link_tx_frame *out, unsigned m, struct sl_link_rx_frame *in)
{
	for (unsigned j = 0; j < m; j++) {
		if (out[j].handle != NULL) {
			uint8_t *p = (uint8_t *)out[j].body - out[j].hdr_len;

			memcpy(p, out[j].hdr, out[j].hdr_len);
			in[j] = (struct sl_link_rx_frame){
				p, (uint16_t)(out[j].hdr_len + out[j].body_len), out[j].handle};
		} else {
			memset(lane_small[j], 0, sizeof(lane_small[j]));
			memcpy(lane_small[j], out[j].hdr, out[j].hdr_len);
			in[j] = (struct sl_link_rx_frame){lane_small[j], 46, NULL};
		}
	}
	return m;
}

/* Two lanes joined back to back, through the handshake and the warm-up. */
static void
lane_setup(unsigned scope, size_t bytes)
{
	struct sl_link_conf c = {
		.fmt = scopes[scope].fmt,
		.ring_order = LANE_ORDER,
		.keepalive_ns = SL_NS_PER_MS,
		.ctrl_interval_ns = SL_NS_PER_US,
		.fc_frames = 1u << 20,
		.release = lane_release,
	};
	struct sl_link_tx_frame out[LANE_BURST];
	struct sl_link_rx_frame in[LANE_BURST];
	struct sl_link_delivery dl[LANE_BURST];
	unsigned taken;

	for (int e = 0; e < 2; e++) {
		sl_link_free(lane[e]);
		lane[e] = sl_link_create(&c);
		if (lane[e] == NULL)
			abort();
	}
	for (unsigned i = 0; i < LANE_BURST; i++)
		memset(lane_buf[i] + SL_WIRE_HDR_MAX, (int)i, bytes);
	for (int round = 0; round < 1000; round++) {
		for (int e = 0; e < 2; e++) {
			unsigned m = sl_link_tx_burst(lane[e], lane_now_ns, NULL, 0, &taken, out,
						      LANE_BURST);

			sl_link_rx_burst(lane[1 - e], lane_now_ns, in, lane_wire(out, m, in), dl);
		}
		lane_now_ns += SL_NS_PER_US;
		if (sl_link_state(lane[0]) == SL_LINK_NORMAL &&
		    sl_link_state(lane[1]) == SL_LINK_NORMAL &&
		    sl_link_stat(lane[0], tx_filler) == SL_LINK_ROLLBACK &&
		    sl_link_stat(lane[1], rx_duplicates) == SL_LINK_ROLLBACK)
			return;
	}
	abort();
}

/* n payload frames from lane 0 to lane 1, in bursts; returns frames delivered. */
static uint64_t
lane_run(size_t bytes, uint64_t n)
{
	struct sl_link_tx_desc d[LANE_BURST];
	struct sl_link_tx_frame out[LANE_BURST];
	struct sl_link_rx_frame in[LANE_BURST];
	struct sl_link_delivery dl[LANE_BURST];
	uint64_t done = 0;
	unsigned taken, m, nd;

	for (unsigned i = 0; i < LANE_BURST; i++)
		d[i] = (struct sl_link_tx_desc){lane_buf[i], lane_buf[i] + SL_WIRE_HDR_MAX,
						(uint16_t)(bytes - SL_WIRE_HDR_LEN),
						SL_WIRE_META_EOM_FULL};
	while (done < n) {
		m = sl_link_tx_burst(lane[0], lane_now_ns, d, LANE_BURST, &taken, out, LANE_BURST);
		nd = sl_link_rx_burst(lane[1], lane_now_ns, in, lane_wire(out, m, in), dl);
		sl_link_rx_consumed(lane[1], nd);
		done += nd;
		lane_now_ns += 100;
	}
	return done;
}

/* The measured loop (callgrind collects only inside it). Returns a value the caller keeps. */
__attribute__((noinline)) static uint64_t
bench_link_measured(enum op op, unsigned scope, size_t bytes, uint64_t n)
{
	const struct sl_wire_fmt *fmt = &scopes[scope].fmt;
	uint8_t *body = frame_buf + SL_WIRE_HDR_LEN;
	size_t body_len = bytes - SL_WIRE_HDR_LEN;
	uint8_t hdr[SL_WIRE_HDR_MAX];
	struct sl_wire_frame f;
	uint64_t sink = 0;

	if (op == OP_LANE)
		return lane_run(bytes, n);
	for (uint64_t i = 0; i < n; i++) {
		switch (op) {
		case OP_ENCODE:
			sl_wire_encode_data(fmt, hdr, SL_WIRE_META_VALID, (uint32_t)i, body,
					    body_len);
			sink += hdr[1];
			break;
		case OP_VERIFY:
			sink += sl_wire_decode(fmt, frame_buf, bytes, &f) == SL_WIRE_OK &&
				sl_wire_vcode_ok(&f, 0);
			break;
		case OP_CRC_BITWISE:
			sink += sl_crc12_bitwise((uint16_t)i, frame_buf, bytes);
			break;
		case OP_CRC_TABLE:
			sink += sl_crc12_table((uint16_t)i, frame_buf, bytes);
			break;
		case OP_CRC_SLICE8:
			sink += sl_crc12_slice8((uint16_t)i, frame_buf, bytes);
			break;
		default:
			sink += sl_crc12_clmul((uint16_t)i, frame_buf, bytes);
			break;
		}
		__asm__ volatile("" : "+r"(sink));
	}
	return sink;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * Best (minimum) ns per operation over rounds of n operations: on shared cores the slower
 * rounds measure the neighbours, not the code.
 */
static double
time_op(enum op op, unsigned scope, size_t bytes, uint64_t n, unsigned rounds)
{
	double v[16];

	prepare(scope, bytes);
	if (op == OP_LANE)
		lane_setup(scope, bytes);
	bench_link_measured(op, scope, bytes, n / 8 + 1); /* warm up */
	for (unsigned r = 0; r < rounds; r++) {
		uint64_t t0 = now_ns();

		bench_link_measured(op, scope, bytes, n);
		v[r] = (double)(now_ns() - t0) / (double)n;
	}
	qsort(v, rounds, sizeof(v[0]), cmp_double);
	return v[0];
}

/* Instructions per operation from a callgrind run of this binary; -1 when unavailable. */
static double
callgrind_op(const char *self, enum op op, unsigned scope, size_t bytes, uint64_t n)
{
	char a[4][24];
	char *const argv[] = {(char *)self, "--cg-child", a[0], a[1], a[2], a[3], NULL};
	double ir;

	snprintf(a[0], sizeof(a[0]), "%d", (int)op);
	snprintf(a[1], sizeof(a[1]), "%u", scope);
	snprintf(a[2], sizeof(a[2]), "%zu", bytes);
	snprintf(a[3], sizeof(a[3]), "%llu", (unsigned long long)n);
	return bench_callgrind("bench_link_measured", argv, &ir, 1) == 1 ? ir / (double)n : -1;
}

static void
print_ir(double ir)
{
	if (ir < 0)
		printf("null");
	else
		printf("%.1f", ir);
}

static void
bench_frames(const char *self, bool quick, bool callgrind)
{
	unsigned rounds = quick ? 3 : 9;

	for (unsigned s = 0; s < SL_ARRAY_SIZE(sizes); s++) {
		uint64_t n = (quick ? 200000 : 2000000) / (1 + sizes[s] / 64);
		double t[OP__MAX];

		for (int op = OP_CRC_BITWISE; op < OP__MAX; op++)
			t[op] = time_op(op, 1, sizes[s], op == OP_CRC_BITWISE ? n / 8 + 1 : n,
					rounds);
		for (int op = OP_CRC_BITWISE; op < OP__MAX; op++) {
			printf("{\"op\":\"crc12\",\"impl\":\"%s\",\"bytes\":%zu,\"ns_per_frame\":%."
			       "2f,"
			       "\"ratio_vs_table\":%.3f,\"clmul_available\":%s,"
			       "\"instr_per_frame\":",
			       op_names[op], sizes[s], t[op], t[op] / t[OP_CRC_TABLE],
			       sl_crc12_clmul_available() ? "true" : "false");
			print_ir(callgrind ? callgrind_op(self, op, 1, sizes[s], 200) : -1);
			printf("}\n");
		}
		for (unsigned sc = 0; sc < SL_ARRAY_SIZE(scopes); sc++)
			for (int op = OP_ENCODE; op <= OP_LANE; op++) {
				printf("{\"op\":\"%s\",\"scope\":\"%s\",\"mode\":\"faithful\","
				       "\"bytes\":%zu,\"ns_per_frame\":%.2f,\"instr_per_frame\":",
				       op_names[op], scopes[sc].name, sizes[s],
				       time_op(op, sc, sizes[s], n, rounds));
				print_ir(callgrind ? callgrind_op(self, op, sc, sizes[s], 2000)
						   : -1);
				printf("}\n");
			}
		fflush(stdout);
	}
}

static void
bench_crc_crossover(const char *self, bool quick, bool callgrind)
{
	static const size_t short_sizes[] = {8, 16, 24, 32, 48, 64};
	unsigned rounds = quick ? 3 : 9;

	for (unsigned s = 0; s < SL_ARRAY_SIZE(short_sizes); s++) {
		size_t b = short_sizes[s];
		uint64_t n = quick ? 200000 : 2000000;
		double slice8 = time_op(OP_CRC_SLICE8, 1, b, n, rounds);
		double clmul = time_op(OP_CRC_CLMUL, 1, b, n, rounds);

		printf("{\"op\":\"crc12_crossover\",\"bytes\":%zu,\"clmul_available\":%s,"
		       "\"slice8_ns\":%.2f,\"clmul_ns\":%.2f,\"ratio\":%.3f,\"slice8_instr\":",
		       b, sl_crc12_clmul_available() ? "true" : "false", slice8, clmul,
		       clmul / slice8);
		print_ir(callgrind ? callgrind_op(self, OP_CRC_SLICE8, 1, b, 2000) : -1);
		printf(",\"clmul_instr\":");
		print_ir(callgrind ? callgrind_op(self, OP_CRC_CLMUL, 1, b, 2000) : -1);
		printf("}\n");
	}
	fflush(stdout);
}

static void
bench_goodput(bool quick)
{
	static const double fer[] = {1e-4, 1e-3, 1e-2};
	static const struct {
		enum sl_wire_mode mode;
		enum sl_link_replay replay;
	} pol[] = {
		{SL_WIRE_MODE_FAITHFUL, SL_LINK_REPLAY_RING},
		{SL_WIRE_MODE_EXTENDED, SL_LINK_REPLAY_RING},
		{SL_WIRE_MODE_EXTENDED, SL_LINK_REPLAY_MISSING},
	};

	for (unsigned p = 0; p < SL_ARRAY_SIZE(pol); p++) {
		struct lp_conf c;
		struct lp_result r;
		uint64_t base_slots;

		/* The same run without loss: its slots are the startup and drain overhead. */
		lp_conf_default(&c);
		c.fmt.mode = pol[p].mode;
		c.replay = pol[p].replay;
		c.frames = quick ? 5000 : 50000;
		if (lp_run(&c, &r) != 0)
			continue;
		base_slots = r.slots;
		for (unsigned i = 0; i < SL_ARRAY_SIZE(fer); i++) {
			double s_bytes, hdr_frac, useful, lost, n_stall, n_rifl, eff, rtt_slots;
			uint64_t delivered;

			c.fault.loss = fer[i];
			c.seed = 100 + 10 * p + i;
			if (lp_run(&c, &r) != 0)
				continue;
			delivered = r.dir[0].delivered + r.dir[1].delivered;
			lost = (double)(r.dir[0].frames_lost + r.dir[1].frames_lost);
			useful = (double)delivered / (2.0 * (double)r.slots);
			/* Slots (both directions) the losses cost, per lost frame. */
			n_stall =
				lost > 0 ? 2.0 * ((double)r.slots - (double)base_slots) / lost : 0;
			rtt_slots = 2.0 * c.delay_slots + 2;
			n_rifl = 2.5 * (double)(1u << r.ring_order) + rtt_slots;
			s_bytes = c.body_bytes + sl_wire_hdr_len(&c.fmt) + ETH_OVERHEAD;
			hdr_frac = (sl_wire_hdr_len(&c.fmt) + ETH_OVERHEAD) / s_bytes;
			eff = (1 - hdr_frac) * useful;
			printf("{\"op\":\"goodput\",\"mode\":\"%s\",\"replay\":\"%s\",\"fer\":%g,"
			       "\"k\":%u,\"rtt_slots\":%.0f,\"frame_bytes\":%.0f,\"slots\":%llu,"
			       "\"slots_without_loss\":%llu,"
			       "\"delivered\":%llu,\"frames_lost\":%.0f,\"lost\":%llu,\"finished\":"
			       "%s,"
			       "\"n_stall_measured\":%.1f,\"n_stall_rifl\":%.1f,\"eff_measured\":%."
			       "4f,"
			       "\"eff_formula_measured_n_stall\":%.4f,\"eff_formula_rifl_n_stall\":"
			       "%.4f}\n",
			       c.fmt.mode == SL_WIRE_MODE_EXTENDED ? "extended" : "faithful",
			       c.replay == SL_LINK_REPLAY_MISSING ? "missing" : "ring", fer[i],
			       r.ring_order, rtt_slots, s_bytes, (unsigned long long)r.slots,
			       (unsigned long long)base_slots, (unsigned long long)delivered, lost,
			       (unsigned long long)(r.dir[0].lost + r.dir[1].lost),
			       r.finished ? "true" : "false", n_stall, n_rifl, eff,
			       (1 - hdr_frac) * (1 - n_stall * fer[i]),
			       (1 - hdr_frac) * SL_MAX(0.0, 1 - n_rifl * fer[i]));
			{
				struct sl_hist h = r.dir[0].recovery_ns;
				double pred = (rtt_slots + 2.5 * (1u << r.ring_order)) * c.slot_ns;

				sl_hist_merge(&h, &r.dir[1].recovery_ns);
				printf("{\"op\":\"recovery\",\"mode\":\"%s\",\"replay\":\"%s\","
				       "\"fer\":%g,"
				       "\"k\":%u,\"slot_ns\":%llu,\"rtt_ns\":%.0f,\"predicted_ns\":"
				       "%.0f,"
				       "\"count\":%llu,\"p50_ns\":%llu,\"p99_ns\":%llu,\"max_ns\":%"
				       "llu,"
				       "\"p50_over_predicted\":%.3f}\n",
				       c.fmt.mode == SL_WIRE_MODE_EXTENDED ? "extended"
									   : "faithful",
				       c.replay == SL_LINK_REPLAY_MISSING ? "missing" : "ring",
				       fer[i], r.ring_order, (unsigned long long)c.slot_ns,
				       rtt_slots * c.slot_ns, pred, (unsigned long long)h.count,
				       (unsigned long long)sl_hist_quantile(&h, 0.5),
				       (unsigned long long)sl_hist_quantile(&h, 0.99),
				       (unsigned long long)h.max,
				       (double)sl_hist_quantile(&h, 0.5) / pred);
			}
			fflush(stdout);
		}
	}
}

int
main(int argc, char **argv)
{
	bool quick = false, callgrind = false;

	if (argc == 6 && strcmp(argv[1], "--cg-child") == 0) {
		enum op op = (enum op)atoi(argv[2]);
		unsigned scope = (unsigned)atoi(argv[3]);
		size_t bytes = (size_t)atol(argv[4]);

		volatile uint64_t keep;

		prepare(scope, bytes);
		if (op == OP_LANE)
			lane_setup(scope, bytes);
		keep = bench_link_measured(op, scope, bytes, strtoull(argv[5], NULL, 0));
		(void)keep;
		return 0;
	}
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0) {
			quick = true;
		} else if (strcmp(argv[i], "--callgrind") == 0) {
			callgrind = true;
		} else {
			fprintf(stderr, "usage: %s [--quick] [--callgrind]\n", argv[0]);
			return 2;
		}
	}
	bench_frames(argv[0], quick, callgrind);
	bench_crc_crossover(argv[0], quick, callgrind);
	bench_goodput(quick);
	for (int e = 0; e < 2; e++)
		sl_link_free(lane[e]);
	return 0;
}
