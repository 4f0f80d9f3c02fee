/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pacer_harness.h - one seeded workload replayed against any pacer, on a virtual clock (the
 * default: deterministic, jumps to each deadline) or the real TSC clock, with the accuracy
 * metrics of the pacer anchors note, section (b):
 *   - rate error per flow: R_meas = sum_{i<n} s_i / (t_n - t_1), e = R_meas / R - 1;
 *   - inter-packet-gap error eps_i = (t_(i+1) - t_i) - s_i / R: quantiles of |eps| and the share
 *     within +-64/128/256/512 ns;
 *   - burstiness sigma = max_(i<=j) (sum_(k=i..j) s_k - R (t_j - t_i)), reported as the excess
 *     over the largest packet (a perfect pacer has excess 0);
 *   - lateness against the ideal schedule t_0 + sum_(k<i) s_k / R from the time t_0 the flow's
 *     backlog appeared, and early departures (more than 1 ns ahead of it; 0 for a pacer).
 * s_i is the wire size (frame + overhead), t_i the departure: the pacer's tx_ns on the virtual
 * clock, the time the harness received the packet on the TSC clock.
 * Used by bench-pacer and by the experiment tests in tests/unit/pacer.
 */
#ifndef PACER_HARNESS_H
#define PACER_HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include "sl_pacer.h"
#include "sl_stats.h"

#define PH_DECADE_MIN 5u  /**< 100 Kbps */
#define PH_DECADE_MAX 11u /**< 100 Gbps */
#define PH_DECADES (PH_DECADE_MAX - PH_DECADE_MIN + 1)

enum ph_clock { PH_CLOCK_VIRTUAL, PH_CLOCK_TSC };

struct ph_flow_spec {
	uint64_t rate_bps;  /**< target rate, bps */
	uint64_t start_ns;  /**< when its backlog appears, ns */
	uint64_t npkts;     /**< packets announced at start */
	uint32_t len_bytes; /**< frame bytes */
};

struct ph_conf {
	struct sl_pacer_conf pacer;
	enum ph_clock clock;
	uint64_t end_ns;        /**< stop once now passes this, ns */
	uint64_t step_ns;       /**< least time between calls (a poll loop's period); 0: exact */
	unsigned burst;         /**< dequeue burst size, packets */
	bool record;            /**< collect metrics (false: cost-only pass) */
	bool callgrind;         /**< instrument only the dequeue loop (run under callgrind) */
	uint64_t stall_at_ns;   /**< TX stall start, ns (0: none) */
	uint64_t stall_ns;      /**< TX stall length, ns */
	uint64_t sigma_from_ns; /**< burstiness counts departures from here on, ns */
	uint64_t rate_change_at_ns; /**< set every flow to rate_change_bps at this time (0: none) */
	uint64_t rate_change_bps;
};

struct ph_flow_metrics {
	uint64_t first_ns; /**< first departure, ns */
	uint64_t last_ns;  /**< last departure, ns */
	uint64_t bytes;    /**< wire bytes, all departures */
	uint64_t pkts;
	uint32_t last_wire; /**< wire bytes of the last departure */
	uint32_t max_wire;  /**< largest wire size */
	double req_ns;      /**< ideal time of the next departure, ns */
	double cum_bytes;   /**< wire bytes counted for sigma */
	double min_v;       /**< min over i of C_(i-1) - R t_i, bytes */
	double sigma;       /**< burstiness, bytes */
	bool sigma_started;
};

struct ph_result {
	uint64_t departures;
	uint64_t cpu_ns;       /**< thread CPU time of the dequeue loop, ns */
	uint64_t wall_ns;      /**< wall-clock time of the dequeue loop, ns */
	uint64_t calls;        /**< dequeue calls */
	uint64_t mem_bytes;    /**< pacer state */
	uint64_t lookahead_ns; /**< Tassel L at the end */
	uint64_t decisions;
	uint64_t early; /**< departures > 1 ns before the ideal schedule */
	uint64_t gap_n[PH_DECADES];
	uint64_t gap_within[PH_DECADES][4]; /**< |eps| <= 64, 128, 256, 512 ns */
	struct sl_hist gap_err[PH_DECADES]; /**< |eps|, ns */
	struct sl_hist late;                /**< lateness, ns */
	struct ph_flow_metrics *fm;         /**< [n flows] when recording */
	struct sl_pacer_stats stats;        /**< pacer counters at the end */
};

/* Decade index of a rate: floor(log10(rate)) - PH_DECADE_MIN, clamped. */
unsigned ph_decade(uint64_t rate_bps);

/* Run the workload once. 0 or -errno (pacer creation failed: errno). */
int ph_run(const struct ph_conf *c, const struct ph_flow_spec *flows, uint32_t n,
	   struct ph_result *r);
void ph_result_free(struct ph_result *r);

/* Achieved rate of one flow over its departures, bps (0 with fewer than two). */
double ph_rate_bps(const struct ph_flow_metrics *m);

/* Packets a flow needs to stay backlogged from start_ns to end_ns at rate_bps, plus two. */
uint64_t ph_pkts_for(uint64_t rate_bps, uint32_t wire_bytes, uint64_t start_ns, uint64_t end_ns);

#endif /* PACER_HARNESS_H */
