/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_callgrind.c - see bench_callgrind.h. callgrind writes <out> when the child exits and,
 * for every CALLGRIND_DUMP_STATS, <out>.1, <out>.2, ...; each file has a "totals:" (or
 * "summary:") line with the instructions it counted.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_callgrind.h"

/* Instructions in one callgrind output file; -1 when it cannot be read. */
static double
file_total(const char *path)
{
	char line[256];
	double ir = -1;
	FILE *f = fopen(path, "r");

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "totals:", 7) == 0)
			ir = strtod(line + 7, NULL);
		else if (strncmp(line, "summary:", 8) == 0 && ir < 0)
			ir = strtod(line + 8, NULL);
	fclose(f);
	return ir;
}

int
bench_callgrind(const char *fn, char *const argv[], double *totals, unsigned max)
{
	char out[64], path[80], toggle[128], cgout[96];
	unsigned n = 0, argc = 0;
	const char **args;
	pid_t pid;
	int st;

	while (argv[argc])
		argc++;
	args = calloc(argc + 6, sizeof(*args));
	if (args == NULL)
		return -1;
	snprintf(out, sizeof(out), "/tmp/sluice-bench.%d.cg", (int)getpid());
	snprintf(toggle, sizeof(toggle), "--toggle-collect=%s", fn);
	snprintf(cgout, sizeof(cgout), "--callgrind-out-file=%s", out);
	args[0] = "valgrind";
	args[1] = "--tool=callgrind";
	args[2] = "--collect-atstart=no";
	args[3] = toggle;
	args[4] = cgout;
	memcpy(&args[5], argv, (argc + 1) * sizeof(*args));
	fflush(NULL); /* nothing buffered may be written twice */
	pid = fork();
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		dup2(devnull, 1);
		dup2(devnull, 2);
		execvp("valgrind", (char *const *)args);
		_exit(127);
	}
	free(args);
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		unlink(out);
		return -1;
	}
	for (;; n++) {
		snprintf(path, sizeof(path), "%s.%u", out, n + 1);
		if (access(path, R_OK) != 0)
			break;
		if (n < max)
			totals[n] = file_total(path);
		unlink(path);
	}
	if (n == 0 && max > 0) {
		totals[0] = file_total(out);
		n = totals[0] < 0 ? 0 : 1;
	}
	unlink(out);
	return n == 0 ? -1 : (int)(n < max ? n : max);
}
