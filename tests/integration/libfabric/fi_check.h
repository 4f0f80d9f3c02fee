/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fi_check.h - what the libfabric checks (fi_rdm_check.c, fi_msg_check.c) share: a call that
 * must not fail, a failure that ends the run, and the name file through which the server
 * hands its name to the client (both namespaces see the test's directory). The including file
 * defines FI_CHECK_PROG, its program's name, first.
 */
#ifndef FI_CHECK_H
#define FI_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <rdma/fi_errno.h>

#define CHECK(call)                                                                                \
	do {                                                                                       \
		int rc_ = (int)(call);                                                             \
		if (rc_ < 0) {                                                                     \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,              \
				fi_strerror(-rc_));                                                \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

/* A case does not hold: say which (what names it), exit 1. */
static void
fail(const char *what)
{
	fprintf(stderr, "%s: %s\n", FI_CHECK_PROG, what);
	exit(1);
}

static void
name_write(const char *namefile, const void *name, size_t len)
{
	FILE *f = fopen(namefile, "w");

	if (f == NULL || fwrite(name, 1, len, f) != len || fclose(f) != 0)
		fail("server: cannot write the name file");
}

/* The server's name, waited for up to 10 s; NUL-terminated in name (bytes long). */
static void
name_read(const char *namefile, char *name, size_t bytes)
{
	int n = 0;

	for (int tries = 0; tries < 100 && n <= 0; tries++) {
		FILE *f = fopen(namefile, "r");

		if (f != NULL) {
			n = (int)fread(name, 1, bytes - 1, f);
			fclose(f);
		}
		if (n <= 0)
			usleep(100000);
	}
	if (n <= 0)
		fail("client: no server name");
	name[n] = '\0';
}

#endif /* FI_CHECK_H */
