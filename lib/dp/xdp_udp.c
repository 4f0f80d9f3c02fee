/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xdp_udp.c - tell the steering program on an AF_XDP port's interface which UDP port is
 * sluice's (encap = udp), so that it redirects those datagrams to the port's sockets and passes
 * the host's own UDP to the kernel (drivers/bpf/xdp_steer.c).
 *
 * The AF_XDP PMD loads and attaches the program itself (xdp_prog=) while it sets up the
 * queues, and keeps its object to itself; so the map is found the way bpftool would: the
 * program attached to the interface, by name, then among its maps the one named sl_udp_port.
 * An interface with no program of ours (the PMD's default program, which redirects every frame)
 * needs nothing; one with ours but without the map is an older object, refused by name.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "dp_log.h"
#include "xdp.h"

#define UDP_PORT_MAP "sl_udp_port"
#define MAPS_MAX 16

/* fd of map name among prog_fd's maps, or -ENOENT / -errno. */
static int
prog_map(int prog_fd, const char *name)
{
	uint32_t ids[MAPS_MAX];
	struct bpf_prog_info info = {.nr_map_ids = MAPS_MAX, .map_ids = (uintptr_t)ids};
	uint32_t len = sizeof(info);

	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len) != 0)
		return -errno;
	for (uint32_t i = 0; i < info.nr_map_ids && i < MAPS_MAX; i++) {
		struct bpf_map_info mi = {0};
		uint32_t mlen = sizeof(mi);
		int fd = bpf_map_get_fd_by_id(ids[i]);

		if (fd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &mi, &mlen) == 0 && strcmp(mi.name, name) == 0)
			return fd;
		close(fd);
	}
	return -ENOENT;
}

int
sl_dp_xdp_steer_udp(const char *ifname, uint16_t udp_port, char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	unsigned int ifindex = if_nametoindex(ifname);
	struct bpf_prog_info info = {0};
	uint32_t len = sizeof(info), key = 0, value = udp_port;
	int prog_fd, map_fd, rc = 0;

	if (ifindex == 0 || bpf_xdp_query((int)ifindex, 0, &q) != 0 || q.prog_id == 0)
		return 0; /* no program: the PMD's own, or none, takes every frame */
	prog_fd = bpf_prog_get_fd_by_id(q.prog_id);
	if (prog_fd < 0) {
		snprintf(err, errlen, "%s: cannot open its XDP program: %s", ifname,
			 strerror(errno));
		return -errno;
	}
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len) != 0 ||
	    strcmp(info.name, SL_DP_XDP_STEER_PROG) != 0)
		goto out; /* not ours: the PMD's default program redirects everything */
	map_fd = prog_map(prog_fd, UDP_PORT_MAP);
	if (map_fd < 0) {
		snprintf(err, errlen,
			 "%s: its steering program has no %s map: an xdp_steer.o older than "
			 "encap = udp (rebuild drivers/bpf)",
			 ifname, UDP_PORT_MAP);
		rc = -ENOENT;
		goto out;
	}
	if (bpf_map_update_elem(map_fd, &key, &value, BPF_ANY) != 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: cannot set the steered UDP port: %s", ifname,
			 strerror(-rc));
	} else {
		SL_DP_LOG(INFO, "%s: UDP port %u steered to AF_XDP", ifname, udp_port);
	}
	close(map_fd);
out:
	close(prog_fd);
	return rc;
}
