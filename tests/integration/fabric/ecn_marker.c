/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ecn_marker - load the test beds' ECN marker (drivers/bpf/ecn_mark.c) on an interface's egress
 * and read its counters back. A test helper, run inside the router's namespace:
 *
 *   ecn_marker attach IFNAME OBJ DRAIN_BPS MARK_BYTES
 *       load OBJ, set the phantom queue's drain rate (bit/s) and marking threshold (bytes),
 *       attach the program to IFNAME's clsact egress (created if missing) in direct-action
 *       mode; prints {"map_id": N}. The filter keeps program and map after this exits.
 *   ecn_marker stats MAP_ID
 *       prints the phantom queue's counters as one JSON line.
 *
 * Exit status 0, or 1 with the reason on stderr.
 */
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sl_ecn_mark.h"

static int
fail(const char *what, int err)
{
	fprintf(stderr, "ecn_marker: %s: %s\n", what, strerror(err < 0 ? -err : err));
	return 1;
}

static int
attach(const char *ifname, const char *path, uint64_t drain_bps, uint64_t mark_bytes)
{
	struct sl_phantom_queue q = {.drain_bps = drain_bps, .mark_bytes = mark_bytes};
	unsigned int ifindex = if_nametoindex(ifname);
	struct bpf_map_info info = {0};
	uint32_t info_len = sizeof(info), key = 0;
	struct bpf_program *prog;
	struct bpf_object *obj;
	struct bpf_map *map;
	int rc;

	if (ifindex == 0)
		return fail(ifname, errno);
	obj = bpf_object__open_file(path, NULL);
	if (obj == NULL)
		return fail(path, errno);
	rc = bpf_object__load(obj);
	if (rc != 0)
		return fail("load", rc);
	prog = bpf_object__find_program_by_name(obj, SL_ECN_MARK_PROG);
	map = bpf_object__find_map_by_name(obj, SL_ECN_MARK_MAP);
	if (prog == NULL || map == NULL)
		return fail("the object has no " SL_ECN_MARK_PROG " or " SL_ECN_MARK_MAP, ENOENT);
	rc = bpf_map_update_elem(bpf_map__fd(map), &key, &q, BPF_ANY);
	if (rc != 0)
		return fail("map update", errno);
	rc = bpf_obj_get_info_by_fd(bpf_map__fd(map), &info, &info_len);
	if (rc != 0)
		return fail("map info", errno);

	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = (int)ifindex, .attach_point = BPF_TC_EGRESS);
	LIBBPF_OPTS(bpf_tc_opts, opts, .prog_fd = bpf_program__fd(prog));
	rc = bpf_tc_hook_create(&hook);
	if (rc != 0 && rc != -EEXIST)
		return fail("clsact", rc);
	rc = bpf_tc_attach(&hook, &opts);
	if (rc != 0)
		return fail("attach", rc);
	printf("{\"map_id\": %u}\n", info.id);
	bpf_object__close(obj);
	return 0;
}

static int
stats(uint32_t map_id)
{
	struct sl_phantom_queue q;
	uint32_t key = 0;
	int fd = bpf_map_get_fd_by_id(map_id);

	if (fd < 0)
		return fail("map id", errno);
	if (bpf_map_lookup_elem_flags(fd, &key, &q, BPF_F_LOCK) != 0)
		return fail("map lookup", errno);
	printf("{\"pkts\": %" PRIu64 ", \"marks\": %" PRIu64 ", \"vq_bytes\": %" PRIu64
	       ", \"vq_max\": %" PRIu64 ", \"drain_bps\": %" PRIu64 ", \"mark_bytes\": %" PRIu64
	       "}\n",
	       (uint64_t)q.pkts, (uint64_t)q.marks, (uint64_t)q.vq_bytes, (uint64_t)q.vq_max,
	       (uint64_t)q.drain_bps, (uint64_t)q.mark_bytes);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc == 6 && strcmp(argv[1], "attach") == 0)
		return attach(argv[2], argv[3], strtoull(argv[4], NULL, 0),
			      strtoull(argv[5], NULL, 0));
	if (argc == 3 && strcmp(argv[1], "stats") == 0)
		return stats((uint32_t)strtoul(argv[2], NULL, 0));
	fprintf(stderr, "usage: ecn_marker attach IFNAME OBJ DRAIN_BPS MARK_BYTES\n"
			"       ecn_marker stats MAP_ID\n");
	return 2;
}
