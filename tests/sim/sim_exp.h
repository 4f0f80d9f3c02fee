/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sim_exp.h - experiments: a scenario (INI file, tests/sim/scenarios/) turned into a running
 * simulation of lib/sched hosts and receivers (the reference one, lib/recv, or lib/ec's target
 * with a draining host), with CSV traces and a JSON summary.
 * docs/sim.md lists every scenario key.
 */
#ifndef SIM_EXP_H
#define SIM_EXP_H

#include <stdio.h>

#include "sim.h"
#include "sim_ec.h"
#include "sim_librecv.h"
#include "sim_recv.h"
#include "sim_sched.h"

#define SIM_MAX_GROUPS 32u
#define SIM_MAX_SWEEP 8u /**< sweep dimensions */

/* How a group's flows start: evenly staggered, or as a Poisson process at a load. */
enum sim_arrivals {
	SIM_ARRIVE_STAGGER = 0, /**< start_ns + i x stagger_ns */
	SIM_ARRIVE_POISSON,     /**< exponential gaps with mean size / (load x src link rate) */
};

/* Flow sizes of a group. */
enum sim_size_dist {
	SIM_SIZE_FIXED = 0, /**< size_segs each */
	SIM_SIZE_WEBSEARCH, /**< the DCTCP web-search CDF (docs/sim.md), drawn per flow */
};

/* count flows that differ only in their start time (start_ns + i x stagger_ns). */
struct sim_flow_group {
	char name[32]; /**< "flows" or "flows.NAME", as in the file */
	uint32_t count;
	uint64_t stagger_ns;
	uint8_t arrivals;  /**< enum sim_arrivals */
	uint8_t size_dist; /**< enum sim_size_dist */
	uint32_t load_ppm; /**< Poisson arrivals: offered load, parts per million of the
			    *   source link's rate */
	struct sim_flow_spec spec;
};

/* One sweep dimension: keys set together, one value tuple per run (docs/sim.md). */
struct sim_sweep_dim {
	char keys[128];   /**< "section.key[,section.key...]" */
	char values[384]; /**< value tuples separated by spaces, tuple members by commas */
};

/* Which receiver every host runs ([receiver] impl). */
enum sim_recv_impl {
	SIM_RECV_REFERENCE = 0, /**< sim_recv.h */
	SIM_RECV_LIB,           /**< lib/recv, sim_librecv.h */
	SIM_RECV_EC,            /**< lib/ec's target and a draining host, sim_ec.h */
};

struct sim_scenario {
	struct sim_conf net;
	struct sim_recv_conf recv;     /**< nflows is filled when the experiment is built */
	uint8_t recv_impl;             /**< enum sim_recv_impl */
	struct sim_librecv_conf lrecv; /**< lib/recv's configuration (nflows filled later) */
	struct sim_ec_conf ec;         /**< lib/ec's, [ec] (nflows and measure_from filled later;
					*   its policy picks every flow's program) */
	struct sl_sched_conf sched;    /**< max_flows is filled per host */
	uint64_t duration_ns;          /**< virtual run time, ns */
	uint64_t measure_from_ns;      /**< goodput counts bytes received after this time, ns */
	uint64_t trace_interval_ns;    /**< period of the flows.csv samples, ns */
	uint32_t ngroups;
	struct sim_flow_group group[SIM_MAX_GROUPS];
	uint32_t nsweep;
	struct sim_sweep_dim sweep[SIM_MAX_SWEEP];
};

/* Defaults: 2 hosts, 10 Gbps, 1 us links, seed 1, 10 ms, no flows. */
void sim_scenario_defaults(struct sim_scenario *sc);

/*
 * Load an INI scenario on top of sc (call sim_scenario_defaults first). 0, or -EINVAL with
 * "file:line: key: reason" in err, or -errno when the file cannot be read.
 */
int sim_scenario_load(struct sim_scenario *sc, const char *path, char *err, size_t errlen);

/* Set one key as if it appeared in [section] (command-line overrides). Same returns. */
int sim_scenario_set(struct sim_scenario *sc, const char *section, const char *key,
		     const char *value, char *err, size_t errlen);

/*
 * Check what the keys alone cannot: at least one flow, endpoints inside [0, hosts) and
 * distinct, programs registered. 0, or -EINVAL with "[flows.NAME]: key: reason" in err.
 */
int sim_scenario_check(const struct sim_scenario *sc, char *err, size_t errlen);

/* Per-flow outcome, filled by sim_exp_run. */
struct sim_flow_result {
	uint32_t flow;
	struct sim_flow_spec spec;
	uint64_t rx_bytes;        /**< distinct payload bytes received, whole run */
	uint64_t rx_bytes_meas;   /**< same, after measure_from_ns */
	uint64_t rtx_segs_meas;   /**< segments retransmitted after measure_from_ns */
	uint64_t goodput_bps;     /**< rx_bytes_meas over the measured interval, bits/s */
	uint64_t done_ns;         /**< finite flows: all acked at, SIM_NEVER otherwise */
	uint32_t rx_cumack;       /**< receiver's next expected segment */
	struct sl_flow_stats st;  /**< engine counters */
	struct sl_flow_view view; /**< engine state at the end */
	bool started;
};

struct sim_exp;

/* Build the network, receivers and one engine per sending host. NULL + errno. */
struct sim_exp *sim_exp_create(const struct sim_scenario *sc);
void sim_exp_free(struct sim_exp *x);

/* Write flows.csv, seq.csv, events.csv, ports.csv and, with lib/ec, ec.csv into dir (created
 * if missing). 0 or -errno. */
int sim_exp_trace(struct sim_exp *x, const char *dir);

/* Call fn(ctx, x, now) every interval_ns during the run (tests sample state this way). */
typedef void (*sim_exp_sampler)(void *ctx, struct sim_exp *x, uint64_t now_ns);
void sim_exp_set_sampler(struct sim_exp *x, uint64_t interval_ns, sim_exp_sampler fn, void *ctx);

/* Run for the scenario's duration, then collect results. 0 or -errno. */
int sim_exp_run(struct sim_exp *x);

uint32_t sim_exp_nflows(const struct sim_exp *x);
const struct sim_flow_result *sim_exp_flow(const struct sim_exp *x, uint32_t flow);
struct sim *sim_exp_sim(struct sim_exp *x);
const struct sim_scenario *sim_exp_scenario(const struct sim_exp *x); /* as it was built */
struct sim_sched_host *sim_exp_host(struct sim_exp *x, uint32_t host);
struct sim_recv *sim_exp_recv(struct sim_exp *x);       /* NULL with lib/recv */
struct sim_librecv *sim_exp_librecv(struct sim_exp *x); /* NULL with the reference */
struct sim_ec *sim_exp_ec(const struct sim_exp *x);     /* NULL without lib/ec */

/* Engine counters summed over hosts. */
void sim_exp_sched_stats(const struct sim_exp *x, struct sl_sched_stats *st);

/* Flow start failures over all hosts (a program refused its configuration). */
uint32_t sim_exp_start_failures(const struct sim_exp *x);

/* The JSON summary (one object). */
void sim_exp_summary_json(const struct sim_exp *x, const char *name, FILE *out);

/* Loss-recovery figures of a run (MELO's evaluation), over every flow and receiving host. */
struct sim_exp_melo {
	double goodput_gbps; /**< sum of per-flow goodputs, Gbps */
	uint64_t segs_sent, segs_rtx, rto_fired, nacks;
	uint64_t pool_blocks;        /**< pool size of one receiving host, blocks */
	uint64_t pool_peak_blocks;   /**< most blocks in use at once, largest over hosts */
	double pool_mean_frac;       /**< blocks in use over the measured interval / pool size,
				      *   largest over hosts */
	struct sl_recv_stats rx;     /**< lib/recv counters summed over hosts */
	struct sl_recv_rtx_stats tx; /**< tracker counters summed over hosts */
	uint32_t fct_done;           /**< finite flows completed */
	uint32_t fct_unfinished;     /**< finite flows not completed by the end */
	double fct_mean_us, fct_p50_us, fct_p99_us, fct_p999_us; /**< completion times, us */
};

/* Fill m (after sim_exp_run). */
void sim_exp_melo_stats(const struct sim_exp *x, struct sim_exp_melo *m);

/*
 * The first group's recovery as the JSON lines name it: "melo", "gbn" (RoCE style: one NACK per
 * gap episode), "gbn-ns3" (go-back-N with a NACK repeat interval, [receiver] nack_interval, as
 * the DCQCN ns-3 model), "reference" with the reference receiver, or the [ec] policy with lib/ec.
 */
const char *sim_exp_mode_name(const struct sim_exp *x);

/*
 * One JSON line for a sweep run (lib/recv or the reference; sim_exp_ec_json for lib/ec): the
 * scenario, mode (sim_exp_mode_name), loss, flows,
 * pool_bits, then `labels` (already JSON: "\"key\": value, ...", may be empty), goodput, pool
 * usage and drops, FCT percentiles.
 */
void sim_exp_melo_json(const struct sim_exp *x, const char *name, const char *labels, FILE *out);

/*
 * Endpoint-congestion figures of a run with lib/ec's target (the paper's section IV metrics,
 * goodput and retransmissions normalized to the link, and ours). "The link" is the receiving hosts'
 * links (their rates summed): goodput and retransmissions are normalized to its bytes over the
 * measured interval [measure_from, end]; what happens before measure_from is the warm-up, as in the
 * paper's simulator (BookSim), and counted apart.
 */
struct sim_exp_ec {
	double goodput_gbps;      /**< sum of the per-flow goodputs, Gbps */
	double goodput_norm;      /**< payload delivered to the hosts / link bytes */
	double rtx_norm;          /**< wire bytes retransmitted after measure_from / link bytes */
	uint64_t retransmissions; /**< segments retransmitted after measure_from, packets */
	uint64_t retransmissions_warmup; /**< ... before measure_from (the warm-up), packets */
	uint64_t rto_fired;              /**< RTOs, whole run */
	uint64_t drop_full;              /**< target drops: in order, no room (EC drops), packets */
	uint64_t drop_order;             /**< target drops: out of order, packets */
	uint64_t drop_dup;               /**< target drops: repeats (selective repeat), packets */
	uint64_t iacks, dacks, nacks;
	uint64_t dacks_suppressed, iacks_coalesced; /**< the fairness knobs' doing */
	uint64_t queue_max_bytes;                   /**< deepest target queue, whole run, bytes */
	double queue_mean_bytes; /**< mean occupancy while measured, bytes (largest over
				  *   target hosts) */
	double host_idle_frac;   /**< time a host did not process while flows were active
				  *   (sim_ec.h) / that time (largest over target hosts) */
	double rate_diff_max;    /**< largest difference between two flows' goodputs, each
				  *   over its target's link rate */
	double jain;             /**< Jain's index of the per-flow goodputs */
	uint64_t first_dack_ns;  /**< the first DACK, ns (SIM_NEVER: none) */
};

/* Fill m (after sim_exp_run); zeros without lib/ec. */
void sim_exp_ec_stats(const struct sim_exp *x, struct sim_exp_ec *m);

/* One JSON line for a sweep run with lib/ec: scenario, set, policy, payload, then sim_exp_ec. */
void sim_exp_ec_json(const struct sim_exp *x, const char *name, const char *labels, FILE *out);

/* The sweep's run count (1 without a sweep), and the settings of run i as labels + overrides. */
uint32_t sim_sweep_runs(const struct sim_scenario *sc);
int sim_sweep_apply(struct sim_scenario *sc, uint32_t run, char *labels, size_t lablen, char *err,
		    size_t errlen);

/*
 * Run `run` of base's sweep: a copy of base with that run's settings (labels as sim_sweep_apply
 * writes them), checked, built and run to its end. Returns the experiment (sim_exp_free it), or
 * NULL with the reason in err and *status 2 (a configuration error) or 1 (the run failed).
 */
struct sim_exp *sim_sweep_run(const struct sim_scenario *base, uint32_t run, char *labels,
			      size_t lablen, char *err, size_t errlen, int *status);

#endif /* SIM_EXP_H */
