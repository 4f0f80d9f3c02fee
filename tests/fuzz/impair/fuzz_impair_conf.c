/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_impair_conf.c - net_impair's key=value parser (devargs and telemetry use it) on
 * arbitrary text: "k=v,k=v,..." pairs go to sl_impair_conf_set one by one. An input whose
 * first byte is odd is read as structure instead: each 2 bytes pick a real key and a value
 * from a list of edge cases (bounds, overflow, NaN, suffixes, ranges, words), so valid and
 * nearly valid settings are reached as often as noise. Nothing may crash
 * or read out of bounds; and whenever the result passes sl_impair_conf_check, formatting it
 * and parsing the text again must give the same configuration (format is a fixed point), and
 * an engine must accept it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "impair_engine.h"

#define MAX_TEXT 4096

static void
release(void *ctx, void *handle)
{
	(void)ctx;
	(void)handle;
}

static void *
same(void *ctx, void *handle)
{
	(void)ctx;
	return handle;
}

static void *
corrupt(void *ctx, void *handle, const uint32_t *bit_off, unsigned n)
{
	(void)ctx;
	(void)bit_off;
	(void)n;
	return handle;
}

static const struct sl_impair_ops ops = {release, same, corrupt};

/* Apply "k=v,k=v" from text (modified in place). */
static void
parse(struct sl_impair_conf *c, char *text)
{
	char err[256];

	for (char *tok = strtok(text, ","); tok; tok = strtok(NULL, ",")) {
		char *eq = strchr(tok, '=');

		if (eq == NULL)
			continue;
		*eq = '\0';
		sl_impair_conf_set(c, tok, eq + 1, err, sizeof(err));
	}
}

static const char *const values[] = {
	"0",
	"1",
	"0.5",
	"1e-3",
	"1e-12",
	"-1",
	"2",
	"1.0000001",
	"nan",
	"inf",
	"1e400",
	"",
	"0x10",
	"7",
	"64",
	"1024",
	"65",
	"1048576",
	"1048577",
	"1G",
	"10M",
	"5K",
	"1T",
	"18446744073709551615",
	"18446744073709551616",
	"3:10-12:99",
	"5-3",
	"1:1:1",
	"0-1023",
	"drop",
	"deliver",
	"yes",
	"100000",
	"10000000000",
	"10000000001",
	" 1",
	"1 ",
};

/* Text of "key=value" pairs chosen by data[1..size). */
static void
structured(char *text, const uint8_t *data, size_t size)
{
	size_t nkeys = 0, used = 0;

	while (sl_impair_conf_keys[nkeys])
		nkeys++;
	text[0] = '\0';
	for (size_t i = 1; i + 1 < size; i += 2) {
		int n = snprintf(text + used, MAX_TEXT + 1 - used, "%s%s=%s", used ? "," : "",
				 sl_impair_conf_keys[data[i] % nkeys],
				 values[data[i + 1] % (sizeof(values) / sizeof(values[0]))]);

		if (n < 0 || used + (size_t)n > MAX_TEXT)
			break;
		used += (size_t)n;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char text[MAX_TEXT + 1], once[MAX_TEXT + 1], twice[MAX_TEXT + 1];
	struct sl_impair_conf c, again;
	struct sl_impair *e;
	char err[256];

	if (size > MAX_TEXT)
		size = MAX_TEXT;
	if (size && (data[0] & 1)) {
		structured(text, data, size);
	} else {
		memcpy(text, data, size);
		text[size] = '\0';
	}
	sl_impair_conf_init(&c);
	parse(&c, text);
	if (sl_impair_conf_check(&c, err, sizeof(err)) != 0)
		return 0;
	if (sl_impair_conf_format(&c, once, sizeof(once)) >= (int)sizeof(once))
		return 0;
	memcpy(text, once, sizeof(once));
	sl_impair_conf_init(&again);
	parse(&again, text);
	sl_impair_conf_format(&again, twice, sizeof(twice));
	if (strcmp(once, twice) != 0)
		abort();
	e = sl_impair_create(&c, &ops, NULL);
	if (e == NULL)
		abort();
	sl_impair_free(e);
	return 0;
}
