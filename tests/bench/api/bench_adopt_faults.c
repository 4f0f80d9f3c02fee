/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_adopt_faults.c - what adopting pages costs, and how much of it page faults are:
 * lib/api/adopt.c's steps (copy an application's pages into a fresh range of a memfd mapping,
 * mremap that range onto them; later copy it out into fresh anonymous pages and mremap those
 * back) done both ways, one after the other in one process, ROUNDS times: with the pages of
 * each copy's destination faulted in as the copy touches them (populate 0), and made and mapped
 * beforehand in one call each (populate 1: MADV_POPULATE_WRITE on the file range, MAP_POPULATE
 * on the anonymous pages), which is what adopt.c does. No daemon: the system calls alone.
 *
 *   bench-adopt-faults [MIB [ROUNDS]]      (64 MiB, 5 rounds)
 *
 * Prints a JSON line per round and way, and one with each way's means. Units: ms, MiB.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double
now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* One adoption and release of bytes; the two phases' times in in_ms, out_ms. 0 or -1. */
static int
adopt_once(size_t bytes, int populate, double *in_ms, double *out_ms)
{
	int fd = memfd_create("bench-adopt", MFD_CLOEXEC);
	char *file, *app, *tmp;
	double t0, t1, t2;

	if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0)
		return -1;
	file = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	app = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (file == MAP_FAILED || app == MAP_FAILED)
		return -1;
	memset(app, 0x5a, bytes);
	t0 = now_ms();
	if (populate)
		madvise(file, bytes, MADV_POPULATE_WRITE);
	memcpy(file, app, bytes);
	if (mremap(file, 0, bytes, MREMAP_MAYMOVE | MREMAP_FIXED, app) == MAP_FAILED)
		return -1;
	t1 = now_ms();
	tmp = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | (populate ? MAP_POPULATE : 0), -1, 0);
	if (tmp == MAP_FAILED)
		return -1;
	memcpy(tmp, file, bytes);
	if (mremap(tmp, bytes, bytes, MREMAP_MAYMOVE | MREMAP_FIXED, app) == MAP_FAILED)
		return -1;
	t2 = now_ms();
	*in_ms = t1 - t0;
	*out_ms = t2 - t1;
	munmap(app, bytes);
	munmap(file, bytes);
	return 0;
}

int
main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 64;
	int rounds = argc > 2 ? atoi(argv[2]) : 5;
	double sum[2][2] = {{0}};

	if (mib == 0 || rounds <= 0) {
		fprintf(stderr, "usage: bench-adopt-faults [MIB [ROUNDS]]\n");
		return 2;
	}
	for (int r = 0; r < rounds; r++)
		for (int p = 0; p < 2; p++) {
			double in_ms, out_ms;

			if (adopt_once(mib << 20, p, &in_ms, &out_ms) != 0) {
				perror("bench-adopt-faults");
				return 1;
			}
			sum[p][0] += in_ms;
			sum[p][1] += out_ms;
			printf("{\"bench\":\"adopt-faults\",\"mib\":%zu,\"round\":%d,\"populate\":%"
			       "d,"
			       "\"in_ms\":%.2f,\"out_ms\":%.2f}\n",
			       mib, r, p, in_ms, out_ms);
		}
	for (int p = 0; p < 2; p++)
		printf("{\"bench\":\"adopt-faults\",\"mib\":%zu,\"rounds\":%d,\"populate\":%d,"
		       "\"mean_in_ms\":%.2f,\"mean_out_ms\":%.2f}\n",
		       mib, rounds, p, sum[p][0] / rounds, sum[p][1] / rounds);
	return 0;
}
