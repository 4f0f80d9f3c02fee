/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xdp_claim.c - one sluiced per kernel interface, and no steering program left behind.
 *
 * DPDK's af_xdp PMD attaches our steering program (drivers/bpf/xdp_steer.c, sl_xdp_steer) to
 * the interface when the first queue is set up, and detaches it when the port closes. A
 * sluiced that is killed never closes the port, and the kernel keeps an XDP program attached
 * until someone detaches it: the next sluiced on that interface then fails its queue setup
 * ("XDP program already attached"), so a killed peer could never come back.
 *
 * Telling a left-over program from one a live sluiced is using needs more than the program:
 * each sluiced holds an flock on /run/sluice/xdp-<netns inode>-<interface>.lock for as long as
 * it runs, and the kernel drops the lock with the process however it ends. Holding the lock
 * and finding sl_xdp_steer attached means its owner is gone: detach it. Finding the lock held
 * means another sluiced serves the interface: refuse, naming it. A program of any other name
 * is never touched (DPDK then reports the conflict). A clean stop removes the lock file; a
 * killed sluiced leaves it, unlocked, for the next one to take. (A sluiced that opened the
 * file just before its owner removed it could lock the removed file beside a newer one's:
 * two starting in the same instant as a third stops, which a daemon's operator does not do.)
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "dp_log.h"
#include "xdp.h"

#define CLAIM_DIR "/run/sluice"

/* Detach sl_xdp_steer from ifindex if attached (in whichever mode); true if it was. */
static bool
detach_steering(unsigned int ifindex)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	bool ours = false;
	int fd;

	if (bpf_xdp_query((int)ifindex, 0, &q) != 0 || q.prog_id == 0)
		return false;
	fd = bpf_prog_get_fd_by_id(q.prog_id);
	if (fd < 0)
		return false;
	memset(&info, 0, sizeof(info));
	ours = bpf_obj_get_info_by_fd(fd, &info, &len) == 0 &&
	       strcmp(info.name, SL_DP_XDP_STEER_PROG) == 0;
	close(fd);
	if (!ours)
		return false;
	return bpf_xdp_detach((int)ifindex,
			      q.attach_mode == XDP_ATTACHED_SKB ? XDP_FLAGS_SKB_MODE
								: XDP_FLAGS_DRV_MODE,
			      NULL) == 0;
}

int
sl_dp_xdp_claim(const char *ifname, struct sl_dp_xdp_claim *c, char *err, size_t errlen)
{
	unsigned int ifindex = if_nametoindex(ifname);
	char *path = c->path;
	struct stat ns;
	int fd, e;

	c->fd = -1;
	if (ifindex == 0) {
		snprintf(err, errlen, "no kernel interface '%s': %s", ifname, strerror(errno));
		return -ENODEV;
	}
	if (stat("/proc/self/ns/net", &ns) != 0)
		ns.st_ino = 0;
	if (mkdir(CLAIM_DIR, 0755) != 0 && errno != EEXIST) {
		e = errno; /* before snprintf, which may set it */
		snprintf(err, errlen, "%s: %s", CLAIM_DIR, strerror(e));
		return -e;
	}
	snprintf(path, sizeof(c->path), CLAIM_DIR "/xdp-%lu-%s.lock", (unsigned long)ns.st_ino,
		 ifname);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		snprintf(err, errlen, "interface %s is in use by another sluiced (%s is locked)",
			 ifname, path);
		close(fd);
		return -EBUSY;
	}
	if (detach_steering(ifindex))
		SL_DP_LOG(WARNING,
			  "%s: detached the steering program a sluiced that did not stop cleanly "
			  "left attached",
			  ifname);
	c->fd = fd;
	return 0;
}

void
sl_dp_xdp_release(struct sl_dp_xdp_claim *c)
{
	if (c->fd < 0)
		return;
	unlink(c->path); /* still locked: a sluiced starting now locks a fresh file */
	close(c->fd);    /* the lock goes with the descriptor */
	c->fd = -1;
}
