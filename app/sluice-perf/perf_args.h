/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * perf_args.h - sluice-perf's command line (perftest's flags and sluice's own), the -a size
 * list, and the parameters both sides trade before a run to refuse a mismatch.
 */
#ifndef SL_PERF_ARGS_H
#define SL_PERF_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "perf_rate.h"

#define SL_PERF_NAME_MAX 16         /**< program / pacer names with the NUL (SL_NAME_MAX) */
#define SL_PERF_PATH_MAX 256        /**< socket and JSON file paths, with the NUL */
#define SL_PERF_HOST_MAX 256        /**< server host name, with the NUL */
#define SL_PERF_PORT_DEFAULT 18515  /**< perftest's out-of-band TCP port */
#define SL_PERF_SIZE_MAX (1u << 23) /**< 8 MiB: perftest's largest message */
#define SL_PERF_SWEEP_MIN_LOG2 1    /**< -a: 2 B ... */
#define SL_PERF_SWEEP_MAX_LOG2 23   /**< ... 8 MiB */
#define SL_PERF_SWEEP_COUNT (SL_PERF_SWEEP_MAX_LOG2 - SL_PERF_SWEEP_MIN_LOG2 + 1)
#define SL_PERF_ITERS_MIN 5          /**< perftest's MIN_ITER */
#define SL_PERF_PEAK_ITERS_MAX 20000 /**< above, no BW peak (perftest's rule) */
#define SL_PERF_CQ_MOD 100           /**< a bw test signals every 100th request (perftest's) */
#define SL_PERF_QPS_MAX 4096
#define SL_PERF_DEPTH_MAX 32768
#define SL_PERF_RX_DEPTH_SEND 512 /**< RECVs kept posted per QP in send_bw (perftest's) */
#define SL_PERF_RX_DEPTH_LAT 16   /**< RECVs kept posted in send_lat (one is in use at a time) */
#define SL_PERF_JSON_DEFAULT "perftest_out.json"
#define SL_PERF_WIRE_BYTES 64 /**< bytes of struct sl_perf_wire */

enum sl_perf_test {
	SL_PERF_WRITE_BW = 0,
	SL_PERF_WRITE_LAT,
	SL_PERF_SEND_BW,
	SL_PERF_SEND_LAT,
	SL_PERF_READ_BW,
	SL_PERF_READ_LAT,
	SL_PERF_TEST_COUNT,
};

enum sl_perf_verb {
	SL_PERF_SEND,
	SL_PERF_WRITE,
	SL_PERF_READ,
};

/* perftest's --rate_limit_type; sluice has only its pacer, so only SW is accepted. */
enum sl_perf_rate_type {
	SL_PERF_RATE_OFF = 0,
	SL_PERF_RATE_SW,
};

/* What the parser leaves besides running a test. */
enum sl_perf_action {
	SL_PERF_RUN = 0,
	SL_PERF_HELP,
	SL_PERF_VERSION,
};

struct sl_perf_args {
	enum sl_perf_action action;
	enum sl_perf_test test;
	uint64_t size_bytes; /**< -s: message size, bytes (the first of a sweep: 2) */
	bool all_sizes;      /**< -a: 2 B .. 8 MiB, powers of two */
	uint64_t iters;      /**< -n: messages per QP, or round trips (lat) */
	uint32_t duration_s; /**< -D: run time, s (0: -n decides) */
	uint32_t margin_s;   /**< warm-up and cool-down of a -D run, s: duration / 4 */
	uint32_t qps;        /**< -q */
	uint32_t tx_depth;   /**< -t: requests outstanding per QP */
	uint32_t rx_depth;   /**< RECVs kept posted per QP (send tests; else 0) */
	uint32_t cq_mod;     /**< bw tests: one request in cq_mod is signaled */
	bool bidir;          /**< -b */
	bool no_peak;        /**< BW peak is not measured (-D, > 20000 iterations, send server) */
	uint16_t port;       /**< -p: out-of-band TCP port */
	bool report_gbits;   /**< --report_gbits */
	bool events;         /**< -e: sleep on the CQs' event fds instead of spinning */
	enum sl_perf_rate_type rate_type;   /**< --rate_limit_type (SW once --rate_limit is set) */
	struct sl_perf_dec rate_limit;      /**< --rate_limit, in rate_units */
	enum sl_perf_rate_units rate_units; /**< --rate_units */
	uint32_t burst_size;                /**< --burst_size, messages [tx_depth] */
	bool out_json;                      /**< --out_json */
	char json_file[SL_PERF_PATH_MAX];   /**< --out_json_file */
	char program[SL_PERF_NAME_MAX];     /**< --program ("": the daemon's default) */
	char pacer[SL_PERF_NAME_MAX];       /**< --pacer ("": the daemon's default) */
	uint8_t receiver;                   /**< --receiver: 0 melo, 1 gbn (enum sl_receiver) */
	char socket[SL_PERF_PATH_MAX]; /**< -S: the daemon's socket ("": libsluice's default) */
	char server[SL_PERF_HOST_MAX]; /**< the server to reach ("": this side is the server) */
};

/* "write_bw", ...; NULL past the end. */
const char *sl_perf_test_name(enum sl_perf_test t);
enum sl_perf_verb sl_perf_test_verb(enum sl_perf_test t);
bool sl_perf_test_is_lat(enum sl_perf_test t);

/*
 * Parse argv: the test comes from argv[0]'s base name (write_bw, or perftest's ib_write_bw)
 * or else from argv[1]. 0, or -EINVAL with a one-line reason in err. getopt's state is reset
 * first, so it may be called again.
 */
int sl_perf_args_parse(struct sl_perf_args *a, int argc, char **argv, char *err, size_t err_len);

/* --help: every test and flag. */
void sl_perf_usage(FILE *f, const char *argv0);

/*
 * The QP rate limit for a message size, bits/s (0: none). 0 or -errno (sl_perf_rate_bps's).
 */
int sl_perf_args_rate_bps(const struct sl_perf_args *a, uint64_t size_bytes, uint64_t *bps);

/* The sizes to run, smallest first: -s's one, or -a's 23. Returns the count (<= max). */
unsigned sl_perf_sizes(const struct sl_perf_args *a, uint64_t *out, unsigned max);

/* What one side tells the other before a run: network order, fixed layout. */
struct sl_perf_wire {
	uint8_t bytes[SL_PERF_WIRE_BYTES];
};

void sl_perf_wire_encode(const struct sl_perf_args *a, struct sl_perf_wire *w);

/*
 * Compare the peer's parameters with ours: 0, or -EPROTO with what differs in err ("the
 * client runs send_bw, this side write_bw"). peer_is_client names the other side in it.
 */
int sl_perf_wire_check(const struct sl_perf_args *a, const struct sl_perf_wire *peer,
		       bool peer_is_client, char *err, size_t err_len);

#endif /* SL_PERF_ARGS_H */
