/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * impair_conf.c - impairment parameters as text: defaults, one key=value at a time (the same
 * parser serves the PMD's devargs and the telemetry command), cross-key checks and printing.
 * Every error names the key and says what was expected. Units are in the key names (_ns,
 * _bytes, _bps): a bare number counts in that unit, and lib/common's parser (sl_parse.h) also
 * takes a unit of the key's kind: delay_ns=50us, rate_bps=10Gbps (or 10G, decimal: 10^10
 * bits/s), queue_bytes=256KiB.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "impair_engine.h"
#include "sl_parse.h"

#define QUEUE_FRAMES_DEFAULT 16384u
#define QUEUE_FRAMES_MIN 64u
#define QUEUE_FRAMES_MAX (1u << 20)
#define BURST_BYTES_DEFAULT 16384u
#define BURST_BYTES_MIN 64u
#define BURST_BYTES_MAX (UINT64_C(1) << 30)
#define QUEUE_BYTES_DEFAULT (UINT64_C(256) * 1024)
#define QUEUE_BYTES_MAX (UINT64_C(1) << 40)
#define DELAY_NS_MAX (UINT64_C(10) * SL_NS_PER_S)
#define RATE_BPS_MAX (UINT64_C(1000) * SL_BPS_PER_GBPS)

const char *const sl_impair_conf_keys[] = {
	"seed",        "loss",         "ge_p",      "ge_r",     "ge_h",
	"ge_k",        "ber",          "corrupt",   "dup",      "reorder",
	"reorder_gap", "delay_ns",     "jitter_ns", "rate_bps", "burst_bytes",
	"queue_bytes", "queue_frames", "drop_idx",  NULL,
};

void
sl_impair_conf_init(struct sl_impair_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->seed = 1;
	c->ge_h = 0.0;
	c->ge_k = 1.0;
	c->reorder_gap = 1;
	c->corrupt = SL_IMPAIR_CORRUPT_DROP;
	c->burst_bytes = BURST_BYTES_DEFAULT;
	c->queue_bytes = QUEUE_BYTES_DEFAULT;
	c->queue_frames = QUEUE_FRAMES_DEFAULT;
}

static int
bad(char *err, size_t err_len, const char *key, const char *value, const char *why)
{
	snprintf(err, err_len, "%s=%s: %s", key, value, why);
	return -EINVAL;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* "i:j:k-l": indexes and inclusive ranges, separated by ':'; stored sorted, unique. */
static int
parse_drop_idx(struct sl_impair_conf *c, const char *v)
{
	uint64_t list[SL_IMPAIR_DROP_IDX_MAX];
	uint32_t n = 0, u = 0;
	const char *p = v;

	while (*p != '\0') {
		size_t len = strcspn(p, ":");
		char tok[48], *dash;
		uint64_t a, b;

		if (len == 0 || len >= sizeof(tok))
			return -EINVAL;
		memcpy(tok, p, len);
		tok[len] = '\0';
		dash = strchr(tok, '-');
		if (dash != NULL)
			*dash++ = '\0';
		if (sl_parse_u64(tok, 0, UINT64_MAX, &a, NULL, 0) < 0 ||
		    sl_parse_u64(dash ? dash : tok, 0, UINT64_MAX, &b, NULL, 0) < 0 || b < a ||
		    b - a >= SL_IMPAIR_DROP_IDX_MAX - n)
			return -EINVAL;
		/* Count, not compare: b may be UINT64_MAX, where i <= b never ends. */
		for (uint64_t k = 0; k <= b - a; k++)
			list[n++] = a + k;
		p += len;
		if (*p == ':' && *++p == '\0')
			return -EINVAL;
	}
	qsort(list, n, sizeof(list[0]), cmp_u64);
	for (uint32_t i = 0; i < n; i++)
		if (u == 0 || list[i] != c->drop_idx[u - 1])
			c->drop_idx[u++] = list[i];
	c->n_drop_idx = u;
	return 0;
}

int
sl_impair_conf_set(struct sl_impair_conf *c, const char *key, const char *value, char *err,
		   size_t err_len)
{
	static const struct {
		const char *key;
		size_t offset;
		bool open; /**< ber: p = 1 is not a bit error rate */
	} probs[] = {
		{"loss", offsetof(struct sl_impair_conf, loss), false},
		{"ge_p", offsetof(struct sl_impair_conf, ge_p), false},
		{"ge_r", offsetof(struct sl_impair_conf, ge_r), false},
		{"ge_h", offsetof(struct sl_impair_conf, ge_h), false},
		{"ge_k", offsetof(struct sl_impair_conf, ge_k), false},
		{"ber", offsetof(struct sl_impair_conf, ber), true},
		{"dup", offsetof(struct sl_impair_conf, dup), false},
		{"reorder", offsetof(struct sl_impair_conf, reorder), false},
	};
	/* uint64_t members; a bare number is in the key's unit, the base unit. */
	static const struct {
		const char *key;
		size_t offset;
		struct sl_parse_spec spec;
	} ints[] = {
		{"seed",
		 offsetof(struct sl_impair_conf, seed),
		 {SL_QTY_COUNT, 1, 0, UINT64_MAX, false}},
		{"delay_ns",
		 offsetof(struct sl_impair_conf, delay_ns),
		 {SL_QTY_NS, 1, 0, DELAY_NS_MAX, false}},
		{"jitter_ns",
		 offsetof(struct sl_impair_conf, jitter_ns),
		 {SL_QTY_NS, 1, 0, DELAY_NS_MAX, false}},
		{"rate_bps",
		 offsetof(struct sl_impair_conf, rate_bps),
		 {SL_QTY_BPS, 1, 0, RATE_BPS_MAX, false}},
		{"burst_bytes",
		 offsetof(struct sl_impair_conf, burst_bytes),
		 {SL_QTY_BYTES, 1, BURST_BYTES_MIN, BURST_BYTES_MAX, false}},
		{"queue_bytes",
		 offsetof(struct sl_impair_conf, queue_bytes),
		 {SL_QTY_BYTES, 1, 0, QUEUE_BYTES_MAX, false}},
	};
	char why[SL_PARSE_WHY_MAX];
	uint64_t x;

	for (unsigned i = 0; i < SL_ARRAY_SIZE(probs); i++) {
		const struct sl_parse_real_spec spec = {"a probability", 0, 1, false,
							probs[i].open};

		if (strcmp(key, probs[i].key) != 0)
			continue;
		if (sl_parse_real(value, &spec, (double *)((char *)c + probs[i].offset), why,
				  sizeof(why)) < 0)
			return bad(err, err_len, key, value, why);
		return 0;
	}
	for (unsigned i = 0; i < SL_ARRAY_SIZE(ints); i++) {
		if (strcmp(key, ints[i].key) != 0)
			continue;
		if (sl_parse_qty(value, &ints[i].spec, (uint64_t *)((char *)c + ints[i].offset),
				 why, sizeof(why)) < 0)
			return bad(err, err_len, key, value, why);
		return 0;
	}
	if (strcmp(key, "corrupt") == 0) {
		if (strcmp(value, "drop") == 0)
			c->corrupt = SL_IMPAIR_CORRUPT_DROP;
		else if (strcmp(value, "deliver") == 0)
			c->corrupt = SL_IMPAIR_CORRUPT_DELIVER;
		else
			return bad(err, err_len, key, value, "expected drop or deliver");
		return 0;
	}
	if (strcmp(key, "reorder_gap") == 0) {
		if (sl_parse_u64(value, 1, SL_IMPAIR_REORDER_GAP_MAX, &x, why, sizeof(why)) < 0)
			return bad(err, err_len, key, value, why);
		c->reorder_gap = (uint32_t)x;
		return 0;
	}
	if (strcmp(key, "queue_frames") == 0) {
		if (sl_parse_u64(value, QUEUE_FRAMES_MIN, QUEUE_FRAMES_MAX, &x, NULL, 0) < 0 ||
		    !sl_is_pow2(x))
			return bad(err, err_len, key, value, "expected a power of 2 in [64, 2^20]");
		c->queue_frames = (uint32_t)x;
		return 0;
	}
	if (strcmp(key, "drop_idx") == 0) {
		if (parse_drop_idx(c, value))
			return bad(err, err_len, key, value,
				   "expected frame indexes or ranges a-b separated by ':', at most "
				   "1024");
		return 0;
	}
	snprintf(err, err_len, "unknown key '%s'", key);
	return -ENOENT;
}

int
sl_impair_conf_check(const struct sl_impair_conf *c, char *err, size_t err_len)
{
	if (c->ge_p > 0 && c->ge_r == 0) {
		snprintf(err, err_len,
			 "ge_r: must be > 0 when ge_p is set (else the channel "
			 "never leaves the bad state)");
		return -EINVAL;
	}
	if (c->jitter_ns > c->delay_ns) {
		snprintf(err, err_len, "jitter_ns=%" PRIu64 ": must not exceed delay_ns=%" PRIu64,
			 c->jitter_ns, c->delay_ns);
		return -EINVAL;
	}
	if (!sl_is_pow2(c->queue_frames) || c->queue_frames < QUEUE_FRAMES_MIN ||
	    c->queue_frames > QUEUE_FRAMES_MAX) {
		snprintf(err, err_len, "queue_frames=%u: expected a power of 2 in [64, 2^20]",
			 c->queue_frames);
		return -EINVAL;
	}
	if (c->reorder_gap < 1 || c->reorder_gap > SL_IMPAIR_REORDER_GAP_MAX) {
		snprintf(err, err_len, "reorder_gap=%u: expected frames in [1, 1024]",
			 c->reorder_gap);
		return -EINVAL;
	}
	if (c->burst_bytes < BURST_BYTES_MIN || c->burst_bytes > BURST_BYTES_MAX) {
		snprintf(err, err_len, "burst_bytes=%" PRIu64 ": expected bytes in [64, 2^30]",
			 c->burst_bytes);
		return -EINVAL;
	}
	return 0;
}

/* The shortest decimal form of x that reads back as x. */
static const char *
shortest(double x, char buf[32])
{
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, 32, "%.*g", prec, x);
		if (strtod(buf, NULL) == x)
			break;
	}
	return buf;
}

int
sl_impair_conf_format(const struct sl_impair_conf *c, char *buf, size_t len)
{
	char t[4][32];
	struct sl_impair_conf d;
	size_t n = 0;
	int w;

#define EMIT(...)                                                                                  \
	do {                                                                                       \
		w = snprintf(n < len ? buf + n : NULL, n < len ? len - n : 0, __VA_ARGS__);        \
		n += (size_t)w;                                                                    \
	} while (0)
	sl_impair_conf_init(&d);
	EMIT("seed=%" PRIu64, c->seed);
	if (c->loss != d.loss)
		EMIT(",loss=%s", shortest(c->loss, t[0]));
	if (c->ge_p != d.ge_p)
		EMIT(",ge_p=%s,ge_r=%s,ge_h=%s,ge_k=%s", shortest(c->ge_p, t[0]),
		     shortest(c->ge_r, t[1]), shortest(c->ge_h, t[2]), shortest(c->ge_k, t[3]));
	if (c->ber != d.ber)
		EMIT(",ber=%s,corrupt=%s", shortest(c->ber, t[0]),
		     c->corrupt == SL_IMPAIR_CORRUPT_DROP ? "drop" : "deliver");
	if (c->dup != d.dup)
		EMIT(",dup=%s", shortest(c->dup, t[0]));
	if (c->reorder != d.reorder)
		EMIT(",reorder=%s,reorder_gap=%u", shortest(c->reorder, t[0]), c->reorder_gap);
	if (c->delay_ns != d.delay_ns)
		EMIT(",delay_ns=%" PRIu64 ",jitter_ns=%" PRIu64, c->delay_ns, c->jitter_ns);
	if (c->rate_bps != d.rate_bps)
		EMIT(",rate_bps=%" PRIu64 ",burst_bytes=%" PRIu64 ",queue_bytes=%" PRIu64,
		     c->rate_bps, c->burst_bytes, c->queue_bytes);
	if (c->queue_frames != d.queue_frames)
		EMIT(",queue_frames=%u", c->queue_frames);
	for (uint32_t i = 0; i < c->n_drop_idx; i++)
		EMIT("%s%" PRIu64, i == 0 ? ",drop_idx=" : ":", c->drop_idx[i]);
#undef EMIT
	return (int)n;
}
