/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * eal.c - leave the EAL cleanly: park its interrupt thread, release, remove the runtime directory
 * (see sl_dp.h).
 *
 * Why park. DPDK 22.11's rte_eal_cleanup() unmaps DPDK memory (rte_eal_memory_detach) while the
 * EAL interrupt thread still runs, and that thread reads every registered source's interrupt
 * handle each time it rebuilds its epoll set (after any callback is registered or removed).
 * A source whose handle lives in DPDK memory is then read while, or after, it is unmapped.
 * net_memif leaves one such source behind on every server: memif_socket_remove_device() frees the
 * listener socket's handle (rte_malloc'd) but never unregisters the listener's callback, so the
 * source stays in the thread's list with a handle in freed DPDK memory. Closing the port
 * (sl_dp_memif_close(), on that thread) removes the control channel's callback, which queues
 * a rebuild; when the thread is descheduled long enough, the rebuild runs during
 * rte_eal_cleanup()'s munmap and the stopping daemon dies of SIGSEGV in rte_intr_fd_get()
 * (seen in CI: twice in 15 runs of two-hosts-memif on the 2-core VM).
 *
 * Nothing in 22.11 stops that thread, so before rte_eal_cleanup() its last callback parks it:
 * the callback never returns, and from then on the thread neither rebuilds nor reads a handle.
 * rte_eal_cleanup() needs nothing of it (the ports are closed by then); the process exits
 * with it parked.
 */
#define ALLOW_EXPERIMENTAL_API /* rte_intr_instance_alloc() and its setters, 22.11 */

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_interrupts.h>

#include "sl_dp.h"
#include "dp_log.h"

#define EAL_FILES_MAX 64 /* files the signal handler can remove; EAL makes about 5 */
#define PARK_WAIT_US (10u * 1000u * 1000u) /**< longest wait for the thread to park, us */

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

bool
sl_dp_eal_wait_for(const atomic_bool *flag, unsigned int timeout_us)
{
	for (unsigned int us = 0; us < timeout_us; us += 100) {
		if (atomic_load_explicit(flag, memory_order_acquire))
			return true;
		usleep(100);
	}
	return false;
}

static atomic_bool intr_parked;

/* On the EAL interrupt thread, its last callback: say so, then never return. */
static void
park_here(void *arg)
{
	(void)arg;
	atomic_store_explicit(&intr_parked, true, memory_order_release);
	for (;;)
		pause();
}

/*
 * Park the interrupt thread (see the top of this file) on an eventfd of its own: registering
 * it queues a rebuild, which runs now, while DPDK memory is mapped; the rebuilt set holds the
 * eventfd, already readable, whose callback parks the thread. Not an alarm: rte_eal_cleanup()
 * removes the alarm's source with rte_intr_callback_unregister_sync(), which waits for any alarm
 * callback running. The source stays registered until the process ends (removing it would
 * wait for the parked callback); the EAL holds its own copy of the handle. If the thread does
 * not come, say so and go on.
 */
static void
park_interrupt_thread(void)
{
	const uint64_t one = 1;
	struct rte_intr_handle *h = NULL;
	int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	if (fd >= 0)
		h = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_PRIVATE);
	if (h == NULL || rte_intr_fd_set(h, fd) != 0 ||
	    rte_intr_type_set(h, RTE_INTR_HANDLE_EXT) != 0 ||
	    rte_intr_callback_register(h, park_here, NULL) != 0) {
		SL_DP_LOG(WARNING,
			  "EAL cleanup: interrupt thread left running: cannot watch an eventfd");
		rte_intr_instance_free(h);
		if (fd >= 0)
			close(fd);
		return;
	}
	rte_intr_instance_free(h); /* the EAL registered a copy of it */
	if (write(fd, &one, sizeof(one)) != (ssize_t)sizeof(one))
		SL_DP_LOG(WARNING, "EAL cleanup: eventfd write: %s", strerror(errno));
	if (!sl_dp_eal_wait_for(&intr_parked, PARK_WAIT_US))
		SL_DP_LOG(WARNING, "EAL cleanup: the interrupt thread did not park within %u s",
			  PARK_WAIT_US / 1000000u);
}

void
sl_dp_eal_cleanup(void)
{
	static bool done;

	if (done)
		return;
	done = true;
	park_interrupt_thread();
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
