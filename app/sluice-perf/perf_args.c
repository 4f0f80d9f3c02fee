/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * perf_args.c - sluice-perf's command line and the parameters both sides compare.
 *
 * Flags mean what perftest's mean (perftest_parameters.c, usage()), with its defaults:
 * 64 KiB messages for bw tests and 2 B for lat tests, 5000 iterations for write_bw and 1000
 * otherwise (at least 5), tx depth 128 for bw and 1 for lat, one QP, port 18515, Gbit/s as
 * the rate unit. Where sluice differs the difference is stated in --help and in
 * docs/sluice-perf.md: --rate_limit alone means sluice's pacer (perftest would pick its HW
 * limiter, which sluice has not), HW and PP are refused, -F is accepted and ignored (no CPU
 * clock is read: time is CLOCK_MONOTONIC), -D with -a is refused (as perftest does), and a
 * pps limit needs one message size (the QPs' limit is set once, at creation).
 *
 * Before a run the two sides trade struct sl_perf_wire (sl_oob_swap) and both refuse a
 * difference in test, size, sweep, iterations, duration, QPs or direction, naming it.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "perf_args.h"
#include "sl_common.h"

#define SL_PERF_WIRE_MAGIC 0x534C5046u /* "SLPF" */
#define SL_PERF_WIRE_VERSION 1u

static const char *const test_names[SL_PERF_TEST_COUNT] = {
	[SL_PERF_WRITE_BW] = "write_bw", [SL_PERF_WRITE_LAT] = "write_lat",
	[SL_PERF_SEND_BW] = "send_bw",   [SL_PERF_SEND_LAT] = "send_lat",
	[SL_PERF_READ_BW] = "read_bw",   [SL_PERF_READ_LAT] = "read_lat",
};

const char *
sl_perf_test_name(enum sl_perf_test t)
{
	return (unsigned)t < SL_PERF_TEST_COUNT ? test_names[t] : NULL;
}

enum sl_perf_verb
sl_perf_test_verb(enum sl_perf_test t)
{
	switch (t) {
	case SL_PERF_SEND_BW:
	case SL_PERF_SEND_LAT:
		return SL_PERF_SEND;
	case SL_PERF_READ_BW:
	case SL_PERF_READ_LAT:
		return SL_PERF_READ;
	default:
		return SL_PERF_WRITE;
	}
}

bool
sl_perf_test_is_lat(enum sl_perf_test t)
{
	return t == SL_PERF_WRITE_LAT || t == SL_PERF_SEND_LAT || t == SL_PERF_READ_LAT;
}

/* The test a name means (with or without perftest's "ib_"), or -1. */
static int
test_from_name(const char *name)
{
	if (strncmp(name, "ib_", 3) == 0)
		name += 3;
	for (int t = 0; t < SL_PERF_TEST_COUNT; t++)
		if (strcmp(name, test_names[t]) == 0)
			return t;
	return -1;
}

static int
fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* A decimal integer in [lo, hi], all of s. */
static int
parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *v)
{
	char *end;
	unsigned long long x;

	if (s == NULL || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || x < lo || x > hi)
		return -EINVAL;
	*v = x;
	return 0;
}

static int
copy_str(char *dst, size_t cap, const char *src)
{
	size_t n = strlen(src);

	if (n == 0 || n >= cap)
		return -EINVAL;
	memcpy(dst, src, n + 1);
	return 0;
}

enum {
	OPT_REPORT_GBITS = 256,
	OPT_RATE_LIMIT,
	OPT_RATE_UNITS,
	OPT_RATE_LIMIT_TYPE,
	OPT_BURST_SIZE,
	OPT_OUT_JSON,
	OPT_OUT_JSON_FILE,
	OPT_PROGRAM,
	OPT_PACER,
	OPT_RECEIVER,
};

static const struct option long_opts[] = {
	{"size", required_argument, NULL, 's'},
	{"all", no_argument, NULL, 'a'},
	{"iters", required_argument, NULL, 'n'},
	{"duration", required_argument, NULL, 'D'},
	{"qp", required_argument, NULL, 'q'},
	{"tx-depth", required_argument, NULL, 't'},
	{"cq-mod", required_argument, NULL, 'Q'},
	{"bidirectional", no_argument, NULL, 'b'},
	{"events", no_argument, NULL, 'e'},
	{"port", required_argument, NULL, 'p'},
	{"CPU-freq", no_argument, NULL, 'F'},
	{"socket", required_argument, NULL, 'S'},
	{"report_gbits", no_argument, NULL, OPT_REPORT_GBITS},
	{"rate_limit", required_argument, NULL, OPT_RATE_LIMIT},
	{"rate_units", required_argument, NULL, OPT_RATE_UNITS},
	{"rate_limit_type", required_argument, NULL, OPT_RATE_LIMIT_TYPE},
	{"burst_size", required_argument, NULL, OPT_BURST_SIZE},
	{"out_json", no_argument, NULL, OPT_OUT_JSON},
	{"out_json_file", required_argument, NULL, OPT_OUT_JSON_FILE},
	{"program", required_argument, NULL, OPT_PROGRAM},
	{"pacer", required_argument, NULL, OPT_PACER},
	{"receiver", required_argument, NULL, OPT_RECEIVER},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0},
};

static void
set_defaults(struct sl_perf_args *a, enum sl_perf_test t)
{
	bool lat = sl_perf_test_is_lat(t);

	memset(a, 0, sizeof(*a));
	a->test = t;
	a->size_bytes = lat ? 2 : 65536;
	a->iters = t == SL_PERF_WRITE_BW ? 5000 : 1000;
	a->qps = 1;
	a->tx_depth = lat ? 1 : 128;
	a->port = SL_PERF_PORT_DEFAULT;
	a->rate_units = SL_PERF_RATE_GBPS;
	memcpy(a->json_file, SL_PERF_JSON_DEFAULT, sizeof(SL_PERF_JSON_DEFAULT));
}

/* One option; 0 or -EINVAL with err filled. Flags that depend on others wait for finish(). */
static int
parse_opt(struct sl_perf_args *a, int c, const char *arg, bool *size_set, char *err, size_t len)
{
	uint64_t v;

	switch (c) {
	case 's':
		if (parse_u64(arg, 1, SL_PERF_SIZE_MAX, &a->size_bytes) != 0)
			return fail(err, len, "bad -s/--size '%s': bytes, 1..%u", arg,
				    SL_PERF_SIZE_MAX);
		*size_set = true;
		return 0;
	case 'a':
		a->all_sizes = true;
		return 0;
	case 'n':
		if (parse_u64(arg, SL_PERF_ITERS_MIN, UINT32_MAX, &a->iters) != 0)
			return fail(err, len, "bad -n/--iters '%s': %d..%" PRIu32, arg,
				    SL_PERF_ITERS_MIN, UINT32_MAX);
		return 0;
	case 'D':
		if (parse_u64(arg, 1, 86400, &v) != 0)
			return fail(err, len, "bad -D/--duration '%s': seconds, 1..86400", arg);
		a->duration_s = (uint32_t)v;
		return 0;
	case 'q':
		if (parse_u64(arg, 1, SL_PERF_QPS_MAX, &v) != 0)
			return fail(err, len, "bad -q/--qp '%s': 1..%d", arg, SL_PERF_QPS_MAX);
		a->qps = (uint32_t)v;
		return 0;
	case 't':
		if (parse_u64(arg, 1, SL_PERF_DEPTH_MAX, &v) != 0)
			return fail(err, len, "bad -t/--tx-depth '%s': 1..%d", arg,
				    SL_PERF_DEPTH_MAX);
		a->tx_depth = (uint32_t)v;
		return 0;
	case 'Q':
		if (parse_u64(arg, 1, SL_PERF_DEPTH_MAX, &v) != 0)
			return fail(err, len, "bad -Q/--cq-mod '%s': 1..%d", arg,
				    SL_PERF_DEPTH_MAX);
		a->cq_mod = (uint32_t)v;
		return 0;
	case 'b':
		a->bidir = true;
		return 0;
	case 'e':
		a->events = true;
		return 0;
	case 'p':
		if (parse_u64(arg, 1, 65535, &v) != 0)
			return fail(err, len, "bad -p/--port '%s': 1..65535", arg);
		a->port = (uint16_t)v;
		return 0;
	case 'F':
		return 0;
	case 'S':
		if (copy_str(a->socket, sizeof(a->socket), arg) != 0)
			return fail(err, len, "bad -S/--socket: 1..%d characters",
				    SL_PERF_PATH_MAX - 1);
		return 0;
	case OPT_REPORT_GBITS:
		a->report_gbits = true;
		return 0;
	case OPT_RATE_LIMIT:
		if (sl_perf_dec_parse(arg, &a->rate_limit) != 0 || a->rate_limit.mant == 0)
			return fail(err, len, "bad --rate_limit '%s': a positive decimal", arg);
		return 0;
	case OPT_RATE_UNITS:
		if (sl_perf_rate_units_parse(arg, &a->rate_units) != 0)
			return fail(err, len,
				    "bad --rate_units '%s': M (MiB/s), g (Gbit/s) or p (pps)", arg);
		return 0;
	case OPT_RATE_LIMIT_TYPE:
		if (strcmp(arg, "SW") == 0) {
			a->rate_type = SL_PERF_RATE_SW;
			return 0;
		}
		if (strcmp(arg, "HW") == 0 || strcmp(arg, "PP") == 0)
			return fail(err, len,
				    "--rate_limit_type=%s not supported: sluice paces in software, "
				    "use SW",
				    arg);
		return fail(err, len, "bad --rate_limit_type '%s': SW (HW and PP: not supported)",
			    arg);
	case OPT_BURST_SIZE:
		if (parse_u64(arg, 1, UINT32_MAX, &v) != 0)
			return fail(err, len, "bad --burst_size '%s': messages, >= 1", arg);
		a->burst_size = (uint32_t)v;
		return 0;
	case OPT_OUT_JSON:
		a->out_json = true;
		return 0;
	case OPT_OUT_JSON_FILE:
		if (copy_str(a->json_file, sizeof(a->json_file), arg) != 0)
			return fail(err, len, "bad --out_json_file: 1..%d characters",
				    SL_PERF_PATH_MAX - 1);
		return 0;
	case OPT_PROGRAM:
	case OPT_PACER:
		if (copy_str(c == OPT_PROGRAM ? a->program : a->pacer, SL_PERF_NAME_MAX, arg) != 0)
			return fail(err, len, "bad --%s '%s': a name of 1..%d characters",
				    c == OPT_PROGRAM ? "program" : "pacer", arg,
				    SL_PERF_NAME_MAX - 1);
		return 0;
	case OPT_RECEIVER:
		if (strcmp(arg, "melo") == 0)
			a->receiver = 0;
		else if (strcmp(arg, "gbn") == 0)
			a->receiver = 1;
		else
			return fail(err, len, "bad --receiver '%s': melo or gbn", arg);
		return 0;
	default:
		return fail(err, len, "unknown option (see --help)");
	}
}

/* Rules across flags, and derived values. */
static int
finish(struct sl_perf_args *a, bool size_set, char *err, size_t len)
{
	bool lat = sl_perf_test_is_lat(a->test);
	uint64_t bps;

	if (a->all_sizes && size_set)
		return fail(err, len, "-a and -s exclude each other");
	if (a->all_sizes) {
		if (a->duration_s != 0)
			return fail(err, len, "-D does not run with -a (perftest's rule too)");
		a->size_bytes = UINT64_C(1) << SL_PERF_SWEEP_MIN_LOG2;
	}
	if (a->duration_s != 0) {
		a->margin_s = a->duration_s / 4;
		a->no_peak = true;
	}
	if (lat && a->bidir)
		return fail(err, len, "-b applies to bw tests only");
	if (lat && a->qps != 1)
		return fail(err, len, "lat tests run one QP (-q 1)");
	if (!lat && a->duration_s == 0 && a->iters > SL_PERF_PEAK_ITERS_MAX)
		a->no_peak = true;
	if (a->test == SL_PERF_SEND_BW && a->server[0] == '\0' && !a->bidir)
		a->no_peak = true;
	if (a->cq_mod == 0)
		a->cq_mod = SL_PERF_CQ_MOD;
	if (a->cq_mod > a->tx_depth) /* perftest's rule: at most the tx depth */
		a->cq_mod = a->tx_depth;
	if (sl_perf_test_verb(a->test) == SL_PERF_SEND)
		a->rx_depth = lat ? SL_PERF_RX_DEPTH_LAT : SL_PERF_RX_DEPTH_SEND;
	if (a->test == SL_PERF_WRITE_LAT && a->events)
		a->rx_depth = SL_PERF_RX_DEPTH_LAT; /* WRITE with immediate: one RECV each */
	if (a->rate_limit.mant != 0) {
		a->rate_type = SL_PERF_RATE_SW;
		if (lat)
			return fail(err, len, "--rate_limit applies to bw tests only");
		if (a->all_sizes)
			return fail(err, len,
				    "--rate_limit needs one message size: sluice's pacer turns the "
				    "payload rate into the wire rate of that size, once per QP");
		if (sl_perf_args_rate_bps(a, a->size_bytes, &bps) != 0)
			return fail(err, len, "--rate_limit out of range (above 2^64 bits/s)");
	} else if (a->rate_type == SL_PERF_RATE_SW) {
		return fail(err, len, "--rate_limit_type=SW needs --rate_limit");
	}
	if (a->burst_size != 0 && a->rate_type == SL_PERF_RATE_OFF)
		return fail(err, len, "--burst_size needs --rate_limit (perftest's rule too)");
	if (a->burst_size == 0 && a->rate_type == SL_PERF_RATE_SW)
		a->burst_size = a->tx_depth;
	return 0;
}

int
sl_perf_args_parse(struct sl_perf_args *a, int argc, char **argv, char *err, size_t err_len)
{
	const char *base = argc > 0 ? strrchr(argv[0], '/') : NULL;
	bool size_set = false;
	int t, c, first = 0, rc;

	base = base != NULL ? base + 1 : (argc > 0 ? argv[0] : "");
	t = test_from_name(base);
	if (t < 0 && argc > 1 && argv[1][0] != '-') {
		t = test_from_name(argv[1]);
		if (t < 0)
			return fail(err, err_len, "unknown test '%s' (see --help)", argv[1]);
		first = 1;
	}
	set_defaults(a, t < 0 ? SL_PERF_WRITE_BW : (enum sl_perf_test)t);
	optind = 0; /* glibc: a full reset */
	opterr = 0;
	while ((c = getopt_long(argc - first, argv + first, ":s:an:D:q:t:Q:bep:FS:hV", long_opts,
				NULL)) != -1) {
		if (c == 'h' || c == 'V') {
			a->action = c == 'h' ? SL_PERF_HELP : SL_PERF_VERSION;
			return 0;
		}
		if (c == '?')
			return fail(err, err_len, "unknown option '%s' (see --help)",
				    argv[first + optind - 1]);
		if (c == ':')
			return fail(err, err_len, "option '%s' needs a value",
				    argv[first + optind - 1]);
		rc = parse_opt(a, c, optarg, &size_set, err, err_len);
		if (rc != 0)
			return rc;
	}
	if (t < 0)
		return fail(err, err_len,
			    "no test named: write_bw write_lat send_bw send_lat "
			    "read_bw read_lat (see --help)");
	if (argc - first - optind > 1)
		return fail(err, err_len, "one server host at most ('%s' is extra)",
			    argv[first + optind + 1]);
	if (argc - first - optind == 1 &&
	    copy_str(a->server, sizeof(a->server), argv[first + optind]) != 0)
		return fail(err, err_len, "bad server host: 1..%d characters",
			    SL_PERF_HOST_MAX - 1);
	return finish(a, size_set, err, err_len);
}

int
sl_perf_args_rate_bps(const struct sl_perf_args *a, uint64_t size_bytes, uint64_t *bps)
{
	if (a->rate_type == SL_PERF_RATE_OFF) {
		*bps = 0;
		return 0;
	}
	return sl_perf_rate_bps(&a->rate_limit, a->rate_units, size_bytes, bps);
}

unsigned
sl_perf_sizes(const struct sl_perf_args *a, uint64_t *out, unsigned max)
{
	unsigned n = 0;

	if (!a->all_sizes) {
		if (max > 0)
			out[n++] = a->size_bytes;
		return n;
	}
	for (unsigned k = SL_PERF_SWEEP_MIN_LOG2; k <= SL_PERF_SWEEP_MAX_LOG2 && n < max; k++)
		out[n++] = UINT64_C(1) << k;
	return n;
}

void
sl_perf_usage(FILE *f, const char *argv0)
{
	fprintf(f,
		"Usage: %s <test> [options] [server-host]\n"
		"       <test> [options] [server-host]   (invoked through a link named after the "
		"test)\n"
		"The server waits (no host); the client names the server. Both sides run the same "
		"test and flags.\n"
		"\n"
		"Tests (perftest's ib_<test>):\n"
		"  write_bw   WRITE bandwidth             write_lat  WRITE ping-pong latency "
		"(RTT/2)\n"
		"  send_bw    SEND/RECV bandwidth         send_lat   SEND/RECV ping-pong latency "
		"(RTT/2)\n"
		"  read_bw    READ bandwidth              read_lat   READ latency (RTT)\n"
		"\n"
		"perftest's options:\n"
		"  -s, --size=<bytes>         message size, 1..8388608 (bw 65536, lat 2)\n"
		"  -a, --all                  every size 2 B .. 8 MiB, powers of two\n"
		"  -n, --iters=<n>            messages per QP, or round trips; at least 5 "
		"(write_bw 5000, else 1000)\n"
		"  -D, --duration=<s>         run for s seconds instead: s/4 warm-up, s/2 "
		"measured, "
		"s/4 cool-down\n"
		"  -q, --qp=<n>               QPs (bw tests), 1..4096 (1)\n"
		"  -t, --tx-depth=<n>         requests outstanding per QP (bw 128, lat 1)\n"
		"  -Q, --cq-mod=<n>           bw tests: one request in n is signaled, at most\n"
		"                             the tx depth (100)\n"
		"  -b, --bidirectional        both sides send (bw tests); the table sums both\n"
		"  -e, --events               sleep on the CQs' event fds instead of spinning\n"
		"                             (write_lat: WRITE with immediate, so that the\n"
		"                             target has a completion to sleep on)\n"
		"  -p, --port=<port>          out-of-band TCP port (18515)\n"
		"  -F, --CPU-freq             accepted and ignored: time is CLOCK_MONOTONIC\n"
		"      --report_gbits         bandwidth in Gb/sec instead of MiB/sec\n"
		"      --rate_limit=<rate>    limit each QP to rate (bw tests), in --rate_units\n"
		"      --rate_units=<M|g|p>   M: MiB/s, g: Gbit/s (default), p: messages/s\n"
		"      --rate_limit_type=SW   sluice's pacer (the default once --rate_limit is "
		"given);\n"
		"                             HW and PP are not supported: sluice paces in "
		"software\n"
		"      --burst_size=<n>       accepted with --rate_limit (tx-depth); sluice's "
		"pacer "
		"spaces\n"
		"                             every segment, so it does not change the pacing\n"
		"      --out_json             write the results as JSON too\n"
		"      --out_json_file=<file> where (perftest_out.json); -a: one document, a "
		"results "
		"array\n"
		"  -h, --help                 this text\n"
		"  -V, --version              the version\n"
		"\n"
		"sluice's options:\n"
		"      --program=<name>       transport program of the QPs (the daemon's default)\n"
		"      --pacer=<name>         pacer of the QPs (the daemon's default)\n"
		"      --receiver=<melo|gbn>  receiver mode (melo)\n"
		"  -S, --socket=<path>        sluiced's socket ($SLUICE_SOCKET, else "
		"/run/sluice/sluiced.sock)\n",
		argv0);
}

/* --- the parameters both sides compare -------------------------------------------------- */

struct wire_fields {
	uint32_t magic, version, test, qps;
	uint64_t iters, size;
	uint32_t duration_s, all_sizes, bidir;
};

void
sl_perf_wire_encode(const struct sl_perf_args *a, struct sl_perf_wire *w)
{
	memset(w, 0, sizeof(*w));
	sl_put_be32(w->bytes + 0, SL_PERF_WIRE_MAGIC);
	sl_put_be32(w->bytes + 4, SL_PERF_WIRE_VERSION);
	sl_put_be32(w->bytes + 8, (uint32_t)a->test);
	sl_put_be32(w->bytes + 12, a->qps);
	sl_put_be64(w->bytes + 16, a->iters);
	sl_put_be64(w->bytes + 24, a->size_bytes);
	sl_put_be32(w->bytes + 32, a->duration_s);
	sl_put_be32(w->bytes + 36, a->all_sizes);
	sl_put_be32(w->bytes + 40, a->bidir);
}

static void
wire_decode(const struct sl_perf_wire *w, struct wire_fields *f)
{
	f->magic = sl_get_be32(w->bytes + 0);
	f->version = sl_get_be32(w->bytes + 4);
	f->test = sl_get_be32(w->bytes + 8);
	f->qps = sl_get_be32(w->bytes + 12);
	f->iters = sl_get_be64(w->bytes + 16);
	f->size = sl_get_be64(w->bytes + 24);
	f->duration_s = sl_get_be32(w->bytes + 32);
	f->all_sizes = sl_get_be32(w->bytes + 36);
	f->bidir = sl_get_be32(w->bytes + 40);
}

/* Append a formatted difference to err, after "; " unless it is the first (err[start]). */
static void
add_diff(char *err, size_t len, size_t start, size_t *used, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*used >= len)
		return;
	if (*used > start) {
		n = snprintf(err + *used, len - *used, "; ");
		*used += n > 0 ? (size_t)n : 0;
		if (*used >= len)
			return;
	}
	va_start(ap, fmt);
	n = vsnprintf(err + *used, len - *used, fmt, ap);
	va_end(ap);
	*used += n > 0 ? (size_t)n : 0;
}

int
sl_perf_wire_check(const struct sl_perf_args *a, const struct sl_perf_wire *peer,
		   bool peer_is_client, char *err, size_t err_len)
{
	const char *them = peer_is_client ? "the client" : "the server";
	struct wire_fields p;
	size_t used = 0;
	int n;

	wire_decode(peer, &p);
	if (p.magic != SL_PERF_WIRE_MAGIC || p.version != SL_PERF_WIRE_VERSION) {
		snprintf(err, err_len, "%s is not sluice-perf (or another version of it)", them);
		return -EPROTO;
	}
	n = snprintf(err, err_len, "parameters differ from %s's: ", them);
	used = n > 0 ? (size_t)n : 0;
	size_t start = used;

	if (p.test != (uint32_t)a->test)
		add_diff(err, err_len, start, &used, "test %s here, %s there",
			 sl_perf_test_name(a->test),
			 sl_perf_test_name((enum sl_perf_test)p.test) != NULL
				 ? sl_perf_test_name((enum sl_perf_test)p.test)
				 : "unknown");
	if (p.all_sizes != (uint32_t)a->all_sizes)
		add_diff(err, err_len, start, &used, "-a %s here, %s there",
			 a->all_sizes ? "on" : "off", p.all_sizes ? "on" : "off");
	else if (p.size != a->size_bytes)
		add_diff(err, err_len, start, &used, "size %" PRIu64 " here, %" PRIu64 " there",
			 a->size_bytes, p.size);
	if (p.iters != a->iters)
		add_diff(err, err_len, start, &used,
			 "iterations %" PRIu64 " here, %" PRIu64 " there", a->iters, p.iters);
	if (p.qps != a->qps)
		add_diff(err, err_len, start, &used, "QPs %" PRIu32 " here, %" PRIu32 " there",
			 a->qps, p.qps);
	if (p.duration_s != a->duration_s)
		add_diff(err, err_len, start, &used,
			 "duration %" PRIu32 " s here, %" PRIu32 " s there", a->duration_s,
			 p.duration_s);
	if (p.bidir != (uint32_t)a->bidir)
		add_diff(err, err_len, start, &used, "-b %s here, %s there",
			 a->bidir ? "on" : "off", p.bidir ? "on" : "off");
	if (used == start) {
		if (err_len > 0)
			err[0] = '\0';
		return 0;
	}
	return -EPROTO;
}
