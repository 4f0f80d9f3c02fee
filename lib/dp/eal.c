/* SPDX-License-Identifier: BSD-3-Clause */
/* eal.c - remove the EAL runtime directory at exit (see sl_dp_eal.h). */
#include <dirent.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>

#include "sl_dp_eal.h"

#define EAL_FILES_MAX 64 /* files the signal handler can remove; EAL makes about 5 */

static char eal_dir[PATH_MAX];
static char eal_files[EAL_FILES_MAX][PATH_MAX];
static unsigned int eal_nfiles;

/* The runtime directory's files as they are now, into eal_files; 0 or -1. */
static int
list_files(const char *dir)
{
	struct dirent *e;
	DIR *d = opendir(dir);

	if (d == NULL)
		return -1;
	eal_nfiles = 0;
	while ((e = readdir(d)) != NULL && eal_nfiles < EAL_FILES_MAX)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
		    strlen(dir) + 1 + strlen(e->d_name) < PATH_MAX) {
			char *f = eal_files[eal_nfiles++];

			strcpy(f, dir);
			strcat(f, "/");
			strcat(f, e->d_name);
		}
	closedir(d);
	return 0;
}

static void
remove_listed(void)
{
	for (unsigned int i = 0; i < eal_nfiles; i++)
		unlink(eal_files[i]);
	rmdir(eal_dir);
}

void
sl_dp_eal_cleanup(void)
{
	static bool done;

	if (done)
		return;
	done = true;
	snprintf(eal_dir, sizeof(eal_dir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	if (eal_dir[0] != '\0' && list_files(eal_dir) == 0)
		remove_listed();
}

static void
on_signal(int sig)
{
	remove_listed();
	signal(sig, SIG_DFL);
	raise(sig);
}

void
sl_dp_eal_remove_on_signal(void)
{
	snprintf(eal_dir, sizeof(eal_dir), "%s", rte_eal_get_runtime_dir());
	if (list_files(eal_dir) != 0)
		return;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
}
