/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * perf_report.c - perftest's tables and JSON (perftest_parameters.{h,c} at 00b55b6:
 * RESULT_LINE, RESULT_FMT*, REPORT_FMT*, ctx_print_test_info, write_test_info_to_file), so
 * that scripts that read perftest's output read sluice-perf's.
 *
 * Units as perftest's: MiB/sec is bytes/s / 2^20, Gb/sec is bytes/s / 125000000, MsgRate is
 * Mpps; with --report_gbits and an average under 0.1 Gb/sec the rows switch to six decimals
 * (perftest's inc_accuracy). Fields of perftest's banner and test_info that describe an HCA
 * are written with what is true of sluice: Transport type "sluice", no SRQ, no inline data,
 * no rdma_cm, Mtu 0 (the segment size is the daemon's, not known to an application). The
 * sluice_* keys that follow Data_ex_method say which program, pacer, receiver and limit ran.
 *
 * One difference on purpose: perftest writes a whole document per message size into a file
 * it truncates each time, so an -a sweep leaves only its last size. sluice-perf writes one
 * document for the run; with one size it is perftest's, with -a "results" is an array of
 * perftest's results objects, smallest size first.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "perf_report.h"
#include "sl_common.h"

#define RESULT_LINE                                                                                \
	"---------------------------------------------------------------------------------------"  \
	"\n"
#define RESULT_FMT                                                                                 \
	" #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]"
#define RESULT_FMT_G                                                                               \
	" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]"
#define RESULT_FMT_LAT                                                                             \
	" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "    \
	"t_stdev[usec]   99%% percentile[usec]   99.9%% percentile[usec] "
#define RESULT_FMT_LAT_DUR " #bytes        #iterations       t_avg[usec]    tps average"
#define REPORT_FMT                                                                                 \
	" %-7" PRIu64 "    %-10" PRIu64 "       %-7.2lf            %-7.2lf\t\t     %-7.6lf"
#define REPORT_FMT_EXT                                                                             \
	" %-7" PRIu64 "    %" PRIu64 "           %-7.6lf            %-7.6lf            %-7.6lf"
#define REPORT_FMT_LAT                                                                             \
	" %-7" PRIu64 " %" PRIu64                                                                  \
	"          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     "                         \
	"\t%-7.2f\t\t%-7.2f \t\t%-7.2f"
#define REPORT_FMT_LAT_DUR " %-7" PRIu64 "       %" PRIu64 "            %-7.2f        %-7.2f"
#define REPORT_FMT_JSON                                                                            \
	"\"MsgSize\": %" PRIu64 ",\n\"n_iterations\": %" PRIu64                                    \
	",\n\"BW_peak\": %.2lf,\n\"BW_average\": %.2lf,\n\"MsgRate\": %.6lf"
#define REPORT_FMT_EXT_JSON                                                                        \
	"\"MsgSize\": %" PRIu64 ",\n\"n_iterations\": %" PRIu64                                    \
	",\n\"BW_peak\": %.6lf,\n\"BW_average\": %.6lf,\n\"MsgRate\": %.6lf"
#define REPORT_FMT_LAT_JSON                                                                        \
	"\"MsgSize\": %" PRIu64 ",\n\"n_iterations\": %" PRIu64                                    \
	",\n\"t_min\": %.2f,\n\"t_max\": %.2f,\n\"t_typical\": %.2f,\n\"t_avg\": %.2f,\n"          \
	"\"t_stdev\": %.2f,\n\"percentile_99\": %.2f,\n\"percentile_99.9\": %.2f"
#define REPORT_FMT_LAT_DUR_JSON                                                                    \
	"\"MsgSize\": %" PRIu64 ",\n\"n_iterations\": %" PRIu64                                    \
	",\n\"t_avg\": %.2f,\n\"tps_average\": %.2f"

#define MIB 1048576.0
#define GBIT_BYTES 125000000.0

/* perftest's testsStr for our verbs. */
static const char *
verb_str(const struct sl_perf_args *a)
{
	switch (sl_perf_test_verb(a->test)) {
	case SL_PERF_SEND:
		return "Send";
	case SL_PERF_READ:
		return "RDMA_Read";
	default:
		return "RDMA_Write";
	}
}

static bool
is_client(const struct sl_perf_args *a)
{
	return a->server[0] != '\0';
}

/* A finite number for JSON and tables (a rate over no time is 0, not inf). */
static double
fin(double x)
{
	return isfinite(x) ? x : 0;
}

static double
bw_units(const struct sl_perf_args *a, double Bps)
{
	return fin(Bps) / (a->report_gbits ? GBIT_BYTES : MIB);
}

static bool
inc_accuracy(const struct sl_perf_args *a, const struct sl_perf_bw *bw)
{
	return a->report_gbits && bw_units(a, bw->avg_Bps) < 0.1;
}

void
sl_perf_print_banner(FILE *f, const struct sl_perf_args *a, const char *device)
{
	bool lat = sl_perf_test_is_lat(a->test);
	bool send = sl_perf_test_verb(a->test) == SL_PERF_SEND;

	if (a->no_peak && !lat)
		fprintf(f, " WARNING: BW peak won't be measured in this run.\n");
	fprintf(f, RESULT_LINE);
	fprintf(f, "                    %s %s%s Test\n", verb_str(a),
		!lat && a->bidir ? "Bidirectional " : "", lat ? "Latency" : "BW");
	fprintf(f, " Dual-port       : OFF\t\tDevice         : %s\n", device);
	fprintf(f, " Number of qps   : %" PRIu32 "\t\tTransport type : sluice\n", a->qps);
	fprintf(f, " Connection type : RC\t\tUsing SRQ      : OFF\n");
	if (is_client(a) || a->bidir)
		fprintf(f, " TX depth        : %" PRIu32 "\n", a->tx_depth);
	if (send && (!is_client(a) || a->bidir))
		fprintf(f, " RX depth        : %" PRIu32 "\n", a->rx_depth);
	if (!lat)
		fprintf(f, " CQ Moderation   : %" PRIu32 "\n", a->cq_mod);
	fprintf(f, " Link type       : Ethernet\n");
	if (sl_perf_test_verb(a->test) == SL_PERF_READ)
		fprintf(f, " Outstand reads  : %" PRIu32 "\n", a->tx_depth);
	else
		fprintf(f, " Max inline data : 0[B]\n");
	fprintf(f, " rdma_cm QPs\t : OFF\n");
	fprintf(f, " Data ex. method : Ethernet\n");
	fprintf(f, RESULT_LINE);
}

void
sl_perf_print_address(FILE *f, const char *side, uint32_t qpn, uint32_t psn, uint32_t rkey,
		      uint64_t vaddr)
{
	fprintf(f, " %s address: LID %#04x QPN %#06x PSN %#08x RKey %#08x VAddr %#016" PRIx64 "\n",
		side, 0u, qpn, psn, rkey, vaddr);
}

void
sl_perf_print_header(FILE *f, const struct sl_perf_args *a)
{
	fprintf(f, RESULT_LINE);
	if (!sl_perf_test_is_lat(a->test))
		fprintf(f, "%s", a->report_gbits ? RESULT_FMT_G : RESULT_FMT);
	else if (a->duration_s == 0)
		fprintf(f, RESULT_FMT_LAT);
	else
		fprintf(f, "%s", RESULT_FMT_LAT_DUR);
	fprintf(f, "\n");
}

void
sl_perf_print_row(FILE *f, const struct sl_perf_args *a, const struct sl_perf_result *r)
{
	const struct sl_perf_bw *bw = &r->bw;
	const struct sl_perf_lat *l = &r->lat;

	switch (r->kind) {
	case SL_PERF_KIND_BW:
		fprintf(f, inc_accuracy(a, bw) ? REPORT_FMT_EXT "\n" : REPORT_FMT "\n",
			bw->size_bytes, bw->iters, bw_units(a, bw->peak_Bps),
			bw_units(a, bw->avg_Bps), fin(bw->msg_rate_pps) / 1e6);
		break;
	case SL_PERF_KIND_LAT:
		fprintf(f, REPORT_FMT_LAT "\n", l->size_bytes, l->iters, l->t_min_us, l->t_max_us,
			l->t_typical_us, l->t_avg_us, l->t_stdev_us, l->t_p99_us, l->t_p999_us);
		break;
	case SL_PERF_KIND_LAT_DUR:
		fprintf(f, REPORT_FMT_LAT_DUR "\n", r->dur.size_bytes, r->dur.iters,
			fin(r->dur.t_avg_us), fin(r->dur.tps));
		break;
	}
}

void
sl_perf_print_footer(FILE *f, const struct sl_perf_args *a, uint64_t rate_limit_bps)
{
	char rate[32] = "none";

	if (rate_limit_bps != 0)
		snprintf(rate, sizeof(rate), "%" PRIu64 "bps", rate_limit_bps);
	/* One call per line: -b's two sides may share a stdout (tests), lines stay whole. */
	fprintf(f,
		RESULT_LINE "# sluice: qps=%" PRIu32 " program=%s pacer=%s receiver=%s "
			    "rate_limit=%s\n",
		a->qps, a->program[0] != '\0' ? a->program : "default",
		a->pacer[0] != '\0' ? a->pacer : "default", a->receiver == 1 ? "gbn" : "melo",
		rate);
}

/* A JSON string's body: the names we write are ours or the daemon's; escape what JSON needs. */
static void
json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void
json_test_info(FILE *f, const struct sl_perf_args *a, const char *device, uint64_t rate_bps)
{
	bool lat = sl_perf_test_is_lat(a->test);

	fprintf(f, "\"test_info\": {\n");
	fprintf(f, "\"test\": \"%s_%s%s_Test\",\n", verb_str(a),
		!lat && a->bidir ? "Bidirectional_" : "", lat ? "Latency" : "BW");
	fprintf(f, "\"Dual_port\": \"OFF\",\n\"Device\": ");
	json_str(f, device);
	fprintf(f, ",\n\"Number_of_qps\": %" PRIu32 ",\n\"Transport_type\": \"sluice\",\n", a->qps);
	fprintf(f, "\"Connection_type\": \"RC\",\n\"Using_SRQ\": \"OFF\",\n");
	fprintf(f, " \"PCIe_relax_order\": \"Unsupported\",\n");
	fprintf(f, "\"ibv_wr_API\": \"OFF\",\n");
	if (is_client(a) || a->bidir)
		fprintf(f, "\"TX_depth\": %" PRIu32 ",\n", a->tx_depth);
	if (sl_perf_test_verb(a->test) == SL_PERF_SEND && (!is_client(a) || a->bidir))
		fprintf(f, "\"RX_depth\": %" PRIu32 ",\n", a->rx_depth);
	if (!lat)
		fprintf(f, "\"CQ_Moderation\": %" PRIu32 ",\n", a->cq_mod);
	fprintf(f, "\"Mtu\": 0,\n\"Link_type\": \"Ethernet\",\n");
	if (sl_perf_test_verb(a->test) == SL_PERF_READ)
		fprintf(f, "\"Outstand_reads\": %" PRIu32 ",\n", a->tx_depth);
	else
		fprintf(f, "\"Max_inline_data\": 0,\n");
	fprintf(f, "\"rdma_cm_QPs\": \"OFF\",\n");
	fprintf(f, "\"Use_ROCm_memory\": \"OFF\",\n\"Use_MUSA_memory\": \"OFF\",\n");
	fprintf(f, "\"Data_ex_method\": \"Ethernet\",\n");
	fprintf(f, "\"sluice_program\": ");
	json_str(f, a->program[0] != '\0' ? a->program : "default");
	fprintf(f, ",\n\"sluice_pacer\": ");
	json_str(f, a->pacer[0] != '\0' ? a->pacer : "default");
	fprintf(f, ",\n\"sluice_receiver\": \"%s\",\n", a->receiver == 1 ? "gbn" : "melo");
	fprintf(f, "\"sluice_rate_limit_bps\": %" PRIu64 "\n},\n", rate_bps);
}

static void
json_result(FILE *f, const struct sl_perf_args *a, const struct sl_perf_result *r)
{
	const struct sl_perf_bw *bw = &r->bw;
	const struct sl_perf_lat *l = &r->lat;

	fprintf(f, "{\n");
	switch (r->kind) {
	case SL_PERF_KIND_BW:
		fprintf(f, inc_accuracy(a, bw) ? REPORT_FMT_EXT_JSON : REPORT_FMT_JSON,
			bw->size_bytes, bw->iters, bw_units(a, bw->peak_Bps),
			bw_units(a, bw->avg_Bps), fin(bw->msg_rate_pps) / 1e6);
		break;
	case SL_PERF_KIND_LAT:
		fprintf(f, REPORT_FMT_LAT_JSON, l->size_bytes, l->iters, fin(l->t_min_us),
			fin(l->t_max_us), fin(l->t_typical_us), fin(l->t_avg_us),
			fin(l->t_stdev_us), fin(l->t_p99_us), fin(l->t_p999_us));
		break;
	case SL_PERF_KIND_LAT_DUR:
		fprintf(f, REPORT_FMT_LAT_DUR_JSON, r->dur.size_bytes, r->dur.iters,
			fin(r->dur.t_avg_us), fin(r->dur.tps));
		break;
	}
	fprintf(f, "\n}");
}

int
sl_perf_json_write(FILE *f, const struct sl_perf_args *a, const char *device,
		   uint64_t rate_limit_bps, const struct sl_perf_result *r, unsigned n)
{
	fprintf(f, "{\n");
	json_test_info(f, a, device, rate_limit_bps);
	fprintf(f, "\"results\": ");
	if (n == 1) {
		json_result(f, a, &r[0]);
	} else {
		fprintf(f, "[\n");
		for (unsigned i = 0; i < n; i++) {
			json_result(f, a, &r[i]);
			fprintf(f, i + 1 < n ? ",\n" : "\n");
		}
		fprintf(f, "]");
	}
	fprintf(f, "\n}\n");
	return ferror(f) ? -EIO : 0;
}

/* --- results on the wire ----------------------------------------------------------------- */

static void
put_dbl(uint8_t *p, double d)
{
	uint64_t v;

	memcpy(&v, &d, 8);
	sl_put_be64(p, v);
}

static double
get_dbl(const uint8_t *p)
{
	uint64_t v = sl_get_be64(p);
	double d;

	memcpy(&d, &v, 8);
	return d;
}

/* Every kind is size, iterations and up to seven doubles. */
#define RESULT_DBLS 7
static_assert(24 + 8 * RESULT_DBLS == SL_PERF_RESULT_BYTES, "result encoding size");

static void
result_fields(const struct sl_perf_result *r, uint64_t *size, uint64_t *iters,
	      double d[RESULT_DBLS])
{
	memset(d, 0, RESULT_DBLS * sizeof(*d));
	switch (r->kind) {
	case SL_PERF_KIND_BW:
		*size = r->bw.size_bytes;
		*iters = r->bw.iters;
		d[0] = r->bw.peak_Bps, d[1] = r->bw.avg_Bps, d[2] = r->bw.msg_rate_pps;
		break;
	case SL_PERF_KIND_LAT:
		*size = r->lat.size_bytes;
		*iters = r->lat.iters;
		d[0] = r->lat.t_min_us, d[1] = r->lat.t_max_us, d[2] = r->lat.t_typical_us;
		d[3] = r->lat.t_avg_us, d[4] = r->lat.t_stdev_us, d[5] = r->lat.t_p99_us;
		d[6] = r->lat.t_p999_us;
		break;
	case SL_PERF_KIND_LAT_DUR:
		*size = r->dur.size_bytes;
		*iters = r->dur.iters;
		d[0] = r->dur.t_avg_us, d[1] = r->dur.tps;
		break;
	}
}

void
sl_perf_result_encode(const struct sl_perf_result *r, uint8_t out[SL_PERF_RESULT_BYTES])
{
	uint64_t size = 0, iters = 0;
	double d[RESULT_DBLS];

	result_fields(r, &size, &iters, d);
	sl_put_be64(out, (uint64_t)r->kind);
	sl_put_be64(out + 8, size);
	sl_put_be64(out + 16, iters);
	for (unsigned i = 0; i < RESULT_DBLS; i++)
		put_dbl(out + 24 + 8 * i, d[i]);
}

int
sl_perf_result_decode(const uint8_t in[SL_PERF_RESULT_BYTES], struct sl_perf_result *r)
{
	uint64_t kind = sl_get_be64(in), size = sl_get_be64(in + 8), iters = sl_get_be64(in + 16);
	double d[RESULT_DBLS];

	for (unsigned i = 0; i < RESULT_DBLS; i++)
		d[i] = get_dbl(in + 24 + 8 * i);
	memset(r, 0, sizeof(*r));
	switch (kind) {
	case SL_PERF_KIND_BW:
		r->bw = (struct sl_perf_bw){size, iters, d[0], d[1], d[2]};
		break;
	case SL_PERF_KIND_LAT:
		r->lat =
			(struct sl_perf_lat){size, iters, d[0], d[1], d[2], d[3], d[4], d[5], d[6]};
		break;
	case SL_PERF_KIND_LAT_DUR:
		r->dur = (struct sl_perf_lat_dur){size, iters, d[0], d[1]};
		break;
	default:
		return -EPROTO;
	}
	r->kind = (enum sl_perf_kind)kind;
	return 0;
}
