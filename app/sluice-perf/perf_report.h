/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * perf_report.h - sluice-perf's output: perftest's test banner, tables and JSON, column for
 * column and key for key, plus the "# sluice:" line; and the result rows as the two sides
 * trade them.
 */
#ifndef SL_PERF_REPORT_H
#define SL_PERF_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "perf_args.h"
#include "perf_stats.h"

#define SL_PERF_RESULT_BYTES 80 /**< bytes of an encoded result */

enum sl_perf_kind {
	SL_PERF_KIND_BW = 0,
	SL_PERF_KIND_LAT,
	SL_PERF_KIND_LAT_DUR,
};

/* One row of a table: one message size. */
struct sl_perf_result {
	enum sl_perf_kind kind;
	union {
		struct sl_perf_bw bw;
		struct sl_perf_lat lat;
		struct sl_perf_lat_dur dur;
	};
};

/*
 * The banner before a run: perftest's test line and parameter block (the parts that describe
 * sluice; device is the daemon's host name), after the "BW peak won't be measured" warning
 * when that applies.
 */
void sl_perf_print_banner(FILE *f, const struct sl_perf_args *a, const char *device);

/*
 * One QP's address line after the banner, perftest's (side "local" or "remote"): its QPN, the
 * PSN of its first packet (the daemon's random draw), and the key and address of the buffer the
 * peer's WRITEs and READs name. There is no LID. The connection token is not printed: it is
 * what lets a frame reach the QP.
 */
void sl_perf_print_address(FILE *f, const char *side, uint32_t qpn, uint32_t psn, uint32_t rkey,
			   uint64_t vaddr);

/* The table's header: the dashed line and the column names (MiB/sec or Gb/sec). */
void sl_perf_print_header(FILE *f, const struct sl_perf_args *a);

/* One row, perftest's printf formats. */
void sl_perf_print_row(FILE *f, const struct sl_perf_args *a, const struct sl_perf_result *r);

/* The closing dashed line and "# sluice: qps=.. program=.. pacer=.. receiver=.. rate_limit=..". */
void sl_perf_print_footer(FILE *f, const struct sl_perf_args *a, uint64_t rate_limit_bps);

/*
 * The JSON document: {"test_info": {...}, "results": {...}} as perftest writes it for one
 * size; for n > 1 (-a) "results" is an array of those objects, in size order. 0 or -EIO.
 */
int sl_perf_json_write(FILE *f, const struct sl_perf_args *a, const char *device,
		       uint64_t rate_limit_bps, const struct sl_perf_result *r, unsigned n);

/* A result on the out-of-band wire: network order, doubles as their IEEE-754 bits. */
void sl_perf_result_encode(const struct sl_perf_result *r, uint8_t out[SL_PERF_RESULT_BYTES]);

/* 0, or -EPROTO (an unknown kind). */
int sl_perf_result_decode(const uint8_t in[SL_PERF_RESULT_BYTES], struct sl_perf_result *r);

#endif /* SL_PERF_REPORT_H */
