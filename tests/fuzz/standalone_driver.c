/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * standalone_driver.c - runs a libFuzzer target without libFuzzer: files named on the command
 * line, and every file in a directory named on it (a corpus, tests/fuzz/corpus/<target>), are
 * replayed as they are; then --runs=N inputs are generated from --seed=S, half of them white
 * noise of random length and half mutations (bit flips, byte overwrites, truncation, extension)
 * of the previous input or of a corpus input, so targets reach past their first length check.
 * Exits 0 when the target returns normally for every input; a crash or sanitizer report fails
 * the test. A crash libFuzzer found (make fuzz) is kept in the corpus, so it replays here.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sl_rng.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_INPUT 10000
#define FUZZ_MAX_SEEDS 256 /* corpus inputs kept as mutation starting points */

static uint8_t *seeds[FUZZ_MAX_SEEDS];
static size_t seed_len[FUZZ_MAX_SEEDS];
static unsigned n_seeds;

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
	if (n_seeds < FUZZ_MAX_SEEDS && n <= FUZZ_MAX_INPUT) {
		seeds[n_seeds] = malloc(n ? n : 1);
		if (seeds[n_seeds] == NULL)
			return -1;
		memcpy(seeds[n_seeds], buf, n);
		seed_len[n_seeds++] = n;
	}
	return 0;
}

static int
name_cmp(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* A file is replayed; a directory has each of its regular files replayed, in name order. */
static int
replay_path(const char *path, unsigned *replayed)
{
	struct dirent **ents;
	struct stat st;
	char file[4096];
	int n, rc = 0;

	if (stat(path, &st) < 0) {
		perror(path);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		(*replayed)++;
		return replay_file(path);
	}
	n = scandir(path, &ents, NULL, name_cmp);
	if (n < 0) {
		perror(path);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		if (rc == 0 && ents[i]->d_name[0] != '.') {
			snprintf(file, sizeof(file), "%s/%s", path, ents[i]->d_name);
			if (stat(file, &st) == 0 && S_ISREG(st.st_mode)) {
				(*replayed)++;
				rc = replay_file(file);
			}
		}
		free(ents[i]);
	}
	free(ents);
	return rc;
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
		while (*len < FUZZ_MAX_INPUT && sl_rng_below(r, 4))
			buf[(*len)++] = (uint8_t)sl_rng_next(r);
		break;
	}
}

int
main(int argc, char **argv)
{
	static uint8_t buf[FUZZ_MAX_INPUT];
	unsigned long runs = 10000, seed = 1;
	unsigned replayed = 0;
	struct sl_rng r;
	size_t len = 0;

	for (int i = 1; i < argc; i++) {
		if (strncmp(argv[i], "--runs=", 7) == 0)
			runs = strtoul(argv[i] + 7, NULL, 0);
		else if (strncmp(argv[i], "--seed=", 7) == 0)
			seed = strtoul(argv[i] + 7, NULL, 0);
		else if (argv[i][0] != '-' && replay_path(argv[i], &replayed) < 0)
			return 1;
	}
	sl_rng_seed(&r, seed);
	for (unsigned long i = 0; i < runs; i++) {
		/* A quarter mutate a corpus input (if any), a quarter or half are noise, the rest
		 * mutate the previous input. */
		unsigned pick = sl_rng_below(&r, 4);

		if (pick == 0 && n_seeds > 0) {
			unsigned k = sl_rng_below(&r, n_seeds);

			len = seed_len[k];
			memcpy(buf, seeds[k], len);
			mutate(&r, buf, &len);
		} else if (pick <= 1 || len == 0) {
			len = sl_rng_below(&r, sl_rng_below(&r, 2) ? 64 : FUZZ_MAX_INPUT);
			for (size_t j = 0; j < len; j++)
				buf[j] = (uint8_t)sl_rng_next(&r);
		} else {
			mutate(&r, buf, &len);
		}
		LLVMFuzzerTestOneInput(buf, len);
	}
	printf("fuzz: %u corpus inputs, then %lu inputs from seed %lu, no failure\n", replayed,
	       runs, seed);
	for (unsigned k = 0; k < n_seeds; k++)
		free(seeds[k]);
	return 0;
}
