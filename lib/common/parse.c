/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * parse.c - numbers and units (sl_parse.h).
 *
 * A decimal number is read as m x 10^e with m a 64-bit integer of its significant digits, then
 * multiplied by the unit's size in base units with 128-bit arithmetic: the value is whole when
 * 10^-e divides m x unit, and too large when it passes 2^64 - 1. So "1.5ms" is exactly
 * 1500000 ns and "0.0000001s" is refused as a fraction of a nanosecond, with no rounding
 * through a double. Real numbers (probabilities) go through strtod, behind a stricter check of
 * what may come first (no blanks, signs, "nan" or "inf").
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sl_common.h"
#include "sl_parse.h"

struct unit {
	const char *name;
	enum sl_qty qty;
	uint64_t mult;  /**< base units per unit */
	bool any_case;  /**< "kbps" and "KBPS" too */
	bool canonical; /**< used when printing a value */
};

#define KIB UINT64_C(1024)

static const struct unit units[] = {
	{"ns", SL_QTY_NS, 1, false, true},
	{"us", SL_QTY_NS, SL_NS_PER_US, false, true},
	{"ms", SL_QTY_NS, SL_NS_PER_MS, false, true},
	{"s", SL_QTY_NS, SL_NS_PER_S, false, true},
	{"bps", SL_QTY_BPS, 1, true, true},
	{"Kbps", SL_QTY_BPS, SL_BPS_PER_KBPS, true, true},
	{"Mbps", SL_QTY_BPS, SL_BPS_PER_MBPS, true, true},
	{"Gbps", SL_QTY_BPS, SL_BPS_PER_GBPS, true, true},
	{"K", SL_QTY_BPS, SL_BPS_PER_KBPS, true, false},
	{"M", SL_QTY_BPS, SL_BPS_PER_MBPS, true, false},
	{"G", SL_QTY_BPS, SL_BPS_PER_GBPS, true, false},
	{"B", SL_QTY_BYTES, 1, true, true},
	{"bytes", SL_QTY_BYTES, 1, true, false},
	{"KB", SL_QTY_BYTES, 1000, true, true},
	{"MB", SL_QTY_BYTES, 1000 * 1000, true, true},
	{"GB", SL_QTY_BYTES, 1000 * 1000 * 1000, true, true},
	{"K", SL_QTY_BYTES, 1000, true, false},
	{"M", SL_QTY_BYTES, 1000 * 1000, true, false},
	{"G", SL_QTY_BYTES, 1000 * 1000 * 1000, true, false},
	{"KiB", SL_QTY_BYTES, KIB, true, true},
	{"MiB", SL_QTY_BYTES, KIB *KIB, true, true},
	{"GiB", SL_QTY_BYTES, KIB *KIB *KIB, true, true},
};

static const char *const qty_noun[] = {"a whole number", "a size", "a rate", "a duration"};
static const char *const qty_units[] = {
	"none",
	"B, KB, MB, GB (x1000), KiB, MiB, GiB (x1024)",
	"bps, Kbps, Mbps, Gbps",
	"ns, us, ms, s",
};
static const char *const qty_base[] = {"", "bytes", "bit/s", "ns"};

int
sl_parse_unit(const char *name, enum sl_qty qty, uint64_t *mult)
{
	for (size_t i = 0; i < SL_ARRAY_SIZE(units); i++) {
		const struct unit *u = &units[i];

		if (u->qty == qty &&
		    (u->any_case ? strcasecmp(u->name, name) == 0 : strcmp(u->name, name) == 0)) {
			*mult = u->mult;
			return 0;
		}
	}
	return -EINVAL;
}

const char *
sl_parse_unit_name(enum sl_qty qty, uint64_t mult)
{
	for (size_t i = 0; i < SL_ARRAY_SIZE(units); i++)
		if (units[i].qty == qty && units[i].mult == mult && units[i].canonical)
			return units[i].name;
	return NULL;
}

const char *
sl_parse_units(enum sl_qty qty)
{
	return qty_units[qty];
}

int
sl_parse_format(uint64_t v, enum sl_qty qty, char *buf, size_t len)
{
	const struct unit *best = NULL;

	if (qty == SL_QTY_COUNT)
		return snprintf(buf, len, "%" PRIu64, v);
	for (size_t i = 0; i < SL_ARRAY_SIZE(units); i++) {
		const struct unit *u = &units[i];

		if (u->qty == qty && u->canonical && (v % u->mult) == 0 &&
		    (best == NULL || (v != 0 && u->mult > best->mult)))
			best = u;
	}
	return snprintf(buf, len, "%" PRIu64 "%s", v / best->mult, best->name);
}

/* m x 10^e, as written. */
struct number {
	uint64_t m;
	int e;
	bool frac; /**< had a fraction or an exponent */
	bool hex;
};

static bool
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int
hex_value(char c)
{
	if (is_digit(c))
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Read the number at *pp and advance past it. 0, -EINVAL (no number) or -ERANGE (too long). */
static int
scan_number(const char **pp, struct number *n)
{
	const char *p = *pp;
	unsigned zeros = 0, digits = 0; /* zeros: seen but not yet multiplied into m */
	bool in_frac = false;

	memset(n, 0, sizeof(*n));
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X') && hex_value(p[2]) >= 0) {
		n->hex = true;
		for (p += 2; hex_value(*p) >= 0; p++) {
			if (n->m > UINT64_MAX >> 4)
				return -ERANGE;
			n->m = n->m << 4 | (uint64_t)hex_value(*p);
		}
		*pp = p;
		return 0;
	}
	for (;; p++) {
		if (*p == '.' && !in_frac) {
			in_frac = n->frac = true;
			continue;
		}
		if (!is_digit(*p))
			break;
		digits++;
		if (in_frac)
			n->e--;
		if (*p == '0') {
			zeros += n->m != 0;
			continue;
		}
		for (; zeros > 0; zeros--) {
			if (n->m > UINT64_MAX / 10)
				return -ERANGE;
			n->m *= 10;
		}
		if (n->m > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return -ERANGE;
		n->m = n->m * 10 + (uint64_t)(*p - '0');
	}
	if (digits == 0)
		return -EINVAL;
	n->e += (int)zeros;
	if ((*p == 'e' || *p == 'E') &&
	    (is_digit(p[1]) || ((p[1] == '+' || p[1] == '-') && is_digit(p[2])))) {
		int sign = p[1] == '-' ? -1 : 1;
		int x = 0;

		p += p[1] == '+' || p[1] == '-' ? 2 : 1;
		for (; is_digit(*p); p++)
			x = x < 100000 ? x * 10 + (*p - '0') : x;
		n->e += sign * x;
		n->frac = true;
	}
	*pp = p;
	return 0;
}

/* n x mult, exactly. 0, -ERANGE (above 2^64 - 1) or -EDOM (not a whole number). */
static int
scale(const struct number *n, uint64_t mult, uint64_t *out)
{
	unsigned __int128 v = (unsigned __int128)n->m * mult, d = 1;

	if (v == 0) {
		*out = 0;
		return 0;
	}
	for (int i = 0; i < n->e; i++) {
		if (v > UINT64_MAX)
			return -ERANGE;
		v *= 10;
	}
	if (n->e < -38)
		return -EDOM; /* v < 2^94 < 10^29: no whole number */
	for (int i = 0; i < -n->e; i++)
		d *= 10;
	if (v % d != 0)
		return -EDOM;
	v /= d;
	if (v > UINT64_MAX)
		return -ERANGE;
	*out = (uint64_t)v;
	return 0;
}

enum why_kind {
	WHY_BARE,  /**< a number without a unit was wrong */
	WHY_UNIT,  /**< a number with a unit was out of range */
	WHY_UNITS, /**< the unit was not one of the kind's */
	WHY_ANY,   /**< not a number at all */
	WHY_WHOLE, /**< not a whole number of base units */
};

static size_t add(char *why, size_t len, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static size_t
add(char *why, size_t len, size_t n, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (n >= len)
		return n;
	va_start(ap, fmt);
	w = vsnprintf(why + n, len - n, fmt, ap);
	va_end(ap);
	return w < 0 ? n : n + (size_t)w;
}

static size_t
bare_range(const struct sl_parse_spec *sp, char *why, size_t len, size_t n)
{
	uint64_t unit = sp->unit ? sp->unit : 1;
	uint64_t lo = sp->min / unit + (sp->min % unit != 0);

	return add(why, len, n, "%s in [%" PRIu64 ", %" PRIu64 "]",
		   sp->bare_frac && sp->qty != SL_QTY_COUNT ? "a number" : "a whole number", lo,
		   sp->max / unit);
}

static size_t
unit_range(const struct sl_parse_spec *sp, char *why, size_t len, size_t n)
{
	char lo[32], hi[32];

	sl_parse_format(sp->min, sp->qty, lo, sizeof(lo));
	sl_parse_format(sp->max, sp->qty, hi, sizeof(hi));
	return add(why, len, n, "%s in [%s, %s]", qty_noun[sp->qty], lo, hi);
}

/* Write the reason and return rc. */
static int
fail(int rc, enum why_kind k, const struct sl_parse_spec *sp, char *why, size_t len)
{
	size_t n = 0;

	if (why == NULL || len == 0)
		return rc;
	if (sp->qty == SL_QTY_COUNT)
		k = WHY_BARE;
	if (k == WHY_WHOLE)
		n = add(why, len, n, "not a whole number of %s; ", qty_base[sp->qty]);
	n = add(why, len, n, "expected ");
	if (k == WHY_BARE || k == WHY_ANY)
		n = bare_range(sp, why, len, n);
	if (k == WHY_ANY)
		n = add(why, len, n, " or ");
	if (k != WHY_BARE)
		n = unit_range(sp, why, len, n);
	if (k == WHY_UNITS || k == WHY_ANY)
		add(why, len, n, " (units: %s)", qty_units[sp->qty]);
	return rc;
}

int
sl_parse_qty(const char *s, const struct sl_parse_spec *sp, uint64_t *out, char *why,
	     size_t why_len)
{
	uint64_t mult = sp->unit ? sp->unit : 1, v;
	const char *p = s, *name;
	bool neg = *p == '-', has_unit;
	struct number n;
	int rc;

	p += neg;
	rc = scan_number(&p, &n);
	name = p + strspn(p, " \t");
	has_unit = *name != '\0';
	if (rc == -EINVAL)
		return fail(-EINVAL, WHY_ANY, sp, why, why_len);
	if (rc == -ERANGE)
		return fail(-ERANGE, has_unit ? WHY_UNIT : WHY_BARE, sp, why, why_len);
	if (!has_unit && name != p) /* trailing blanks */
		return fail(-EINVAL, WHY_ANY, sp, why, why_len);
	if (has_unit && (n.hex || sp->qty == SL_QTY_COUNT || sl_parse_unit(name, sp->qty, &mult)))
		return fail(-EINVAL, n.hex ? WHY_ANY : WHY_UNITS, sp, why, why_len);
	if (!has_unit && n.frac && !sp->bare_frac)
		return fail(-EINVAL, WHY_BARE, sp, why, why_len);
	rc = scale(&n, mult, &v);
	if (rc == -EDOM)
		return fail(-EINVAL, WHY_WHOLE, sp, why, why_len);
	if (rc < 0 || (neg && v != 0) || v < sp->min || v > sp->max)
		return fail(-ERANGE, has_unit ? WHY_UNIT : WHY_BARE, sp, why, why_len);
	*out = v;
	return 0;
}

int
sl_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out, char *why, size_t why_len)
{
	const struct sl_parse_spec sp = {.qty = SL_QTY_COUNT, .min = min, .max = max};

	return sl_parse_qty(s, &sp, out, why, why_len);
}

int
sl_parse_real(const char *s, const struct sl_parse_real_spec *sp, double *out, char *why,
	      size_t why_len)
{
	const char *num = s + (*s == '-');
	double x = 0;
	char *end;
	int rc = 0;

	if (!is_digit(*num) && !(*num == '.' && is_digit(num[1]))) {
		rc = -EINVAL;
	} else {
		errno = 0;
		x = strtod(s, &end);
		if (*end != '\0')
			rc = -EINVAL;
		else if (errno != 0 || !isfinite(x) || x < sp->min || x > sp->max ||
			 (sp->min_open && x == sp->min) || (sp->max_open && x == sp->max))
			rc = -ERANGE;
	}
	if (rc == 0) {
		*out = x;
		return 0;
	}
	if (why != NULL && why_len > 0)
		snprintf(why, why_len, "expected %s in %c%g, %g%c", sp->noun,
			 sp->min_open ? '(' : '[', sp->min, sp->max, sp->max_open ? ')' : ']');
	return rc;
}
