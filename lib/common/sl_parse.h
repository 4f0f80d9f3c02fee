/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_parse.h - numbers and units as people write them in sluice's configuration files, devargs
 * and scenarios: whole numbers with bounds, sizes, rates, durations and probabilities.
 *
 * A quantity is a number, optional blanks, then optionally a unit of its kind:
 *   sizes      B, KB, MB, GB (powers of 1000, as disks and link rates count: 1 KB = 1000 B),
 *              KiB, MiB, GiB (powers of 1024); K, M, G alone mean KB, MB, GB; any case
 *   rates      bps, Kbps, Mbps, Gbps (powers of 1000); K, M, G alone mean Kbps, Mbps, Gbps;
 *              any case
 *   durations  ns, us, ms, s (lower case: "Ms" would be a megasecond)
 * A number without a unit counts in the caller's unit (the unit in the key's name: rtt_us = 5
 * is 5 us). Numbers are decimal, leading zeros included (010 is ten), or 0x-prefixed
 * hexadecimal (whole, without a unit). With a unit a number may have a fraction or an exponent
 * (1.5ms, 2.5Gbps, 1e3us); without one only where the caller allows it. The result, in ns, bit/s
 * or bytes, must be a whole number: 1.5ns is refused, never rounded. The arithmetic is exact
 * (no floating point), so 65.536us is 65536 ns on every machine.
 *
 * Every parser returns 0, -EINVAL (not a number of that kind: empty, trailing junk, unknown
 * unit, not whole) or -ERANGE (a number outside the bounds, negative, or too large), and on
 * error writes the reason into why: what was expected and the allowed range, for example
 * "expected a duration in [1us, 10s]", which callers put into their messages after the file,
 * line and key. Control path only; no allocation, no locale beyond strtod's.
 */
#ifndef SL_PARSE_H
#define SL_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The kinds of quantity; the base unit of each is what the parsers return. */
enum sl_qty {
	SL_QTY_COUNT = 0, /**< a plain whole number, no unit */
	SL_QTY_BYTES,     /**< bytes */
	SL_QTY_BPS,       /**< bits per second */
	SL_QTY_NS,        /**< nanoseconds */
};

/* What one value may be. */
struct sl_parse_spec {
	enum sl_qty qty;
	uint64_t unit;  /**< base units of a number written without a unit (1000 for a key in
			 *   us); 0 means 1 */
	uint64_t min;   /**< smallest accepted value, base units */
	uint64_t max;   /**< largest accepted value, base units */
	bool bare_frac; /**< a number without a unit may have a fraction or an exponent */
};

/* Bounds of a real number and what to call it in the reason ("a probability"). */
struct sl_parse_real_spec {
	const char *noun;
	double min, max;
	bool min_open, max_open; /**< the bound itself is excluded */
};

#define SL_PARSE_WHY_MAX 256 /**< a why buffer of this size is never truncated */

/* A quantity by spec into *out (base units). 0, -EINVAL or -ERANGE with the reason in why. */
int sl_parse_qty(const char *s, const struct sl_parse_spec *spec, uint64_t *out, char *why,
		 size_t why_len);

/* A whole number in [min, max], decimal or 0x hexadecimal. Same returns. */
int sl_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out, char *why,
		 size_t why_len);

/* A finite real number (strtod's decimal forms) within spec's bounds. Same returns. */
int sl_parse_real(const char *s, const struct sl_parse_real_spec *spec, double *out, char *why,
		  size_t why_len);

/* A unit name of kind qty ("us", "kbps", "KiB") into *mult (base units per unit). 0 or -EINVAL. */
int sl_parse_unit(const char *name, enum sl_qty qty, uint64_t *mult);

/* The canonical name of the unit of kind qty worth mult base units ("us" for NS, 1000), or NULL. */
const char *sl_parse_unit_name(enum sl_qty qty, uint64_t mult);

/*
 * v (base units) in the largest unit that holds it whole: "10s", "400Gbps", "64KiB", "9018B";
 * a count as a plain number. Returns snprintf's count.
 */
int sl_parse_format(uint64_t v, enum sl_qty qty, char *buf, size_t len);

/* The units of kind qty as a list for messages and help: "ns, us, ms, s". */
const char *sl_parse_units(enum sl_qty qty);

#endif /* SL_PARSE_H */
