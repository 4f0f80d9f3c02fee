/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_callgrind.h - instruction counts for the benchmarks: run a command (normally the
 * benchmark itself in a child mode) under valgrind's callgrind, counting only while inside one
 * function (--toggle-collect), and read back the instruction totals. Timings on shared cores
 * are noisy; these counts repeat exactly for the same binary and inputs.
 */
#ifndef BENCH_CALLGRIND_H
#define BENCH_CALLGRIND_H

/*
 * Run argv[0] with argv under callgrind, collecting inside the function named fn only. The
 * child may split its work with CALLGRIND_DUMP_STATS: totals[k] receives the instructions of
 * the k-th part (one part when it never dumps). Returns the number of parts read (at most
 * max), or -1 when valgrind is missing or the child failed. The child's output is discarded.
 */
int bench_callgrind(const char *fn, char *const argv[], double *totals, unsigned max);

#endif /* BENCH_CALLGRIND_H */
