/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sim_exp.h - experiments: a scenario (INI file, tests/sim/scenarios/) turned into a running
 * simulation of lib/sched hosts and receivers (the reference one or lib/recv), with CSV traces
 * and a JSON summary.
 * docs/sim.md lists every scenario key.
 */
#ifndef SIM_EXP_H
#define SIM_EXP_H

#include <stdio.h>

#include "sim.h"
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

struct sim_scenario {
	struct sim_conf net;
	struct sim_recv_conf recv; /**< nflows is filled when the experiment is built */
	bool lib_recv;             /**< receivers are lib/recv (sim_librecv.h), not sim_recv.h */
	struct sim_librecv_conf lrecv; /**< lib/recv's configuration (nflows filled later) */
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

/* Write flows.csv, seq.csv and events.csv into dir (created if missing). 0 or -errno. */
int sim_exp_trace(struct sim_exp *x, const char *dir);

/* Call fn(ctx, x, now) every interval_ns during the run (tests sample state this way). */
typedef void (*sim_exp_sampler)(void *ctx, struct sim_exp *x, uint64_t now_ns);
void sim_exp_set_sampler(struct sim_exp *x, uint64_t interval_ns, sim_exp_sampler fn, void *ctx);

/* Run for the scenario's duration, then collect results. 0 or -errno. */
int sim_exp_run(struct sim_exp *x);

uint32_t sim_exp_nflows(const struct sim_exp *x);
const struct sim_flow_result *sim_exp_flow(const struct sim_exp *x, uint32_t flow);
struct sim *sim_exp_sim(struct sim_exp *x);
struct sim_sched_host *sim_exp_host(struct sim_exp *x, uint32_t host);
struct sim_recv *sim_exp_recv(struct sim_exp *x);       /* NULL with lib/recv */
struct sim_librecv *sim_exp_librecv(struct sim_exp *x); /* NULL with the reference */

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
 * the DCQCN ns-3 model), or "reference" without lib/recv.
 */
const char *sim_exp_mode_name(const struct sim_exp *x);

/*
 * One JSON line for a sweep run: the scenario, mode (sim_exp_mode_name), loss, flows,
 * pool_bits, then `labels` (already JSON: "\"key\": value, ...", may be empty), goodput, pool
 * usage and drops, FCT percentiles.
 */
void sim_exp_melo_json(const struct sim_exp *x, const char *name, const char *labels, FILE *out);

/* The sweep's run count (1 without a sweep), and the settings of run i as labels + overrides. */
uint32_t sim_sweep_runs(const struct sim_scenario *sc);
int sim_sweep_apply(struct sim_scenario *sc, uint32_t run, char *labels, size_t lablen, char *err,
		    size_t errlen);

#endif /* SIM_EXP_H */
