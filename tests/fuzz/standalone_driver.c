/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * standalone_driver.c - runs a libFuzzer target without libFuzzer: files named on the command
 * line are replayed as they are; then --runs=N inputs are generated from --seed=S, half of them
 * white noise of random length and half mutations (bit flips, byte overwrites, truncation,
 * extension) of the previous input, so targets reach past their first length check. Exits 0
 * when the target returns normally for every input; a crash or sanitizer report fails the test.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sl_rng.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_INPUT 10000

static int
replay_file(const char *path)
{
	static uint8_t buf[1 << 20];
	FILE *f = fopen(path, "rb");
	size_t n;

	if (f == NULL) {
		perror(path);
		return -1;
	}
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, n);
	return 0;
}

static void
mutate(struct sl_rng *r, uint8_t *buf, size_t *len)
{
	switch (sl_rng_below(r, 4)) {
	case 0: /* flip one bit */
		if (*len)
			buf[sl_rng_below(r, *len)] ^= (uint8_t)(1u << sl_rng_below(r, 8));
		break;
	case 1: /* overwrite one byte */
		if (*len)
			buf[sl_rng_below(r, *len)] = (uint8_t)sl_rng_next(r);
		break;
	case 2: /* truncate */
		if (*len)
			*len = sl_rng_below(r, *len);
		break;
	default: /* extend with noise */
		while (*len < MAX_INPUT && sl_rng_below(r, 4))
			buf[(*len)++] = (uint8_t)sl_rng_next(r);
		break;
	}
}

int
main(int argc, char **argv)
{
	static uint8_t buf[MAX_INPUT];
	unsigned long runs = 10000, seed = 1;
	struct sl_rng r;
	size_t len = 0;

	for (int i = 1; i < argc; i++) {
		if (strncmp(argv[i], "--runs=", 7) == 0)
			runs = strtoul(argv[i] + 7, NULL, 0);
		else if (strncmp(argv[i], "--seed=", 7) == 0)
			seed = strtoul(argv[i] + 7, NULL, 0);
		else if (argv[i][0] != '-' && replay_file(argv[i]) < 0)
			return 1;
	}
	sl_rng_seed(&r, seed);
	for (unsigned long i = 0; i < runs; i++) {
		if (sl_rng_below(&r, 2) || len == 0) {
			len = sl_rng_below(&r, sl_rng_below(&r, 2) ? 64 : MAX_INPUT);
			for (size_t j = 0; j < len; j++)
				buf[j] = (uint8_t)sl_rng_next(&r);
		} else {
			mutate(&r, buf, &len);
		}
		LLVMFuzzerTestOneInput(buf, len);
	}
	printf("fuzz: %lu inputs from seed %lu, no failure\n", runs, seed);
	return 0;
}
