/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_parse.c - lib/common's number-and-unit parser (sl_parse.h) on arbitrary text. An input
 * whose first byte is odd is read as structure instead: each byte picks a piece (digits, a
 * point, an exponent, a sign, a blank, a unit name) so that valid and nearly valid numbers
 * are reached as often as noise. Every kind of quantity, with and without bare fractions, and
 * the real-number parser see the text. Nothing may crash or read out of bounds, and:
 *  - a result is 0, -EINVAL or -ERANGE; an error leaves the output alone and gives a reason
 *    that fits in SL_PARSE_WHY_MAX; a value lies within the bounds;
 *  - a value printed by sl_parse_format reads back as itself;
 *  - a whole decimal number without a unit reads as strtoull reads it;
 *  - the unit scales the value: text + "ms" is 1000 x text + "us" whenever both read, and
 *    reads whenever text + "us" does and 1000 times it fits.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sl_common.h"
#include "sl_parse.h"

#define MAX_TEXT 256

static const char *const pieces[] = {
	"0",      "1",   "7",     "9",    "00",    "18446744073709551615",
	"65.536", ".",   "e",     "e-",   "e+3",   "-",
	" ",      "\t",  "0x",    "f",    "ns",    "us",
	"ms",     "s",   "bps",   "Kbps", "Mbps",  "gbps",
	"K",      "M",   "G",     "B",    "KB",    "KiB",
	"MiB",    "GiB", "bytes", "x",    "1e400", "nan",
};

static void
structured(char *text, const uint8_t *data, size_t size)
{
	size_t used = 0;

	text[0] = '\0';
	for (size_t i = 1; i < size; i++) {
		const char *p = pieces[data[i] % SL_ARRAY_SIZE(pieces)];
		size_t n = strlen(p);

		if (used + n > MAX_TEXT)
			break;
		memcpy(text + used, p, n + 1);
		used += n;
	}
}

/* Parse s by sp and check what holds for any input. */
static int
check(const char *s, const struct sl_parse_spec *sp, uint64_t *v)
{
	char why[SL_PARSE_WHY_MAX + 1];
	uint64_t out = 0xdeadbeef;
	int rc;

	memset(why, 'z', sizeof(why));
	rc = sl_parse_qty(s, sp, &out, why, SL_PARSE_WHY_MAX);
	if (rc == 0) {
		if (out < sp->min || out > sp->max)
			abort();
		*v = out;
		return 0;
	}
	if ((rc != -EINVAL && rc != -ERANGE) || out != 0xdeadbeef || why[0] == '\0' ||
	    strlen(why) >= SL_PARSE_WHY_MAX - 1)
		abort();
	return rc;
}

static void
round_trip(uint64_t v, enum sl_qty q)
{
	const struct sl_parse_spec any = {.qty = q, .max = UINT64_MAX};
	char buf[48];
	uint64_t back;

	sl_parse_format(v, q, buf, sizeof(buf));
	if (check(buf, &any, &back) != 0 || back != v)
		abort();
}

/* text + "ms" against text + "us". */
static void
unit_scales(const char *text)
{
	static const struct sl_parse_spec any = {.qty = SL_QTY_NS, .max = UINT64_MAX};
	char a[MAX_TEXT + 4], b[MAX_TEXT + 4];
	uint64_t ms = 0, us = 0;
	int rc_ms, rc_us;

	snprintf(a, sizeof(a), "%sms", text);
	snprintf(b, sizeof(b), "%sus", text);
	rc_ms = check(a, &any, &ms);
	rc_us = check(b, &any, &us);
	if (rc_ms == 0 && rc_us == 0 && ms != us * 1000)
		abort();
	if (rc_us == 0 && us <= UINT64_MAX / 1000 && rc_ms != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char text[MAX_TEXT + 1];
	static const struct sl_parse_real_spec prob = {"a probability", 0, 1, false, true};
	const uint64_t lo = size > 1 ? data[1] : 0,
		       hi = size > 2 ? UINT64_MAX >> (data[2] % 64) : 7;
	uint64_t v;
	double x = -1;
	int rc;

	if (size && (data[0] & 1)) {
		structured(text, data, size);
	} else {
		size = SL_MIN(size, MAX_TEXT);
		memcpy(text, data, size);
		text[size] = '\0';
	}
	for (enum sl_qty q = SL_QTY_COUNT; q <= SL_QTY_NS; q++)
		for (int frac = 0; frac < 2; frac++) {
			const struct sl_parse_spec sp = {.qty = q,
							 .unit = frac ? 1000 : 1,
							 .min = lo,
							 .max = hi,
							 .bare_frac = frac};

			if (check(text, &sp, &v) == 0)
				round_trip(v, q);
		}
	/* Whole decimal digits, no unit: strtoull's value or its overflow. */
	if (text[0] != '\0' && strspn(text, "0123456789") == strlen(text)) {
		const struct sl_parse_spec any = {.qty = SL_QTY_BYTES, .max = UINT64_MAX};
		unsigned long long ref;

		errno = 0;
		ref = strtoull(text, NULL, 10);
		rc = check(text, &any, &v);
		if (errno == ERANGE ? rc != -ERANGE : (rc != 0 || v != ref))
			abort();
	}
	if (strlen(text) < MAX_TEXT - 2)
		unit_scales(text);
	rc = sl_parse_real(text, &prob, &x, NULL, 0);
	if (rc == 0 ? !(isfinite(x) && x >= 0 && x < 1) : (rc != -EINVAL && rc != -ERANGE))
		abort();
	return 0;
}
