/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_chan_harness.c - the server the channel's fuzz targets share (fuzz_chan_harness.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fuzz_chan_harness.h"

struct sl_chan_srv *fuzz_srv;
struct sl_chan_mrs *fuzz_mrs;
char fuzz_srv_path[96];

static const char *target = "fuzz_chan";
static char dir[64];

void
fuzz_check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "%s: %s\n", target, what);
		abort();
	}
}

static void
remove_dir(void)
{
	sl_chan_srv_free(fuzz_srv);
	sl_chan_mrs_free(fuzz_mrs);
	rmdir(dir);
}

void
fuzz_srv_start(const char *name, struct sl_chan_lane *lane, uint32_t max_mrs, uint32_t max_cqs,
	       uint32_t qpn_base, uint32_t qps)
{
	struct sl_chan_lane *lanes[] = {lane};
	static struct sl_chan_srv_conf conf = {
		.mode = 0600,
		.uid = (uid_t)-1,
		.gid = (gid_t)-1,
		.max_clients = 4,
		.host = "fuzz",
		.default_program = "dcqcn",
		.seg_bytes = 1024,
		.frame_overhead_bytes = 44,
		.stash_bytes = 1 << 20,
	};

	target = name;
	conf.max_mrs = max_mrs;
	conf.max_cqs = max_cqs;
	conf.qpn_base = qpn_base;
	conf.qps = qps;
	snprintf(dir, sizeof(dir), "/tmp/sl_%s.XXXXXX", name);
	fuzz_check(mkdtemp(dir) != NULL, "mkdtemp");
	snprintf(fuzz_srv_path, sizeof(fuzz_srv_path), "%s/sluiced.sock", dir);
	conf.socket_path = fuzz_srv_path;
	fuzz_mrs = sl_chan_mrs_create(max_mrs);
	fuzz_srv = fuzz_mrs ? sl_chan_srv_create(&conf, lanes, 1, fuzz_mrs) : NULL;
	fuzz_check(fuzz_srv != NULL, "server not created");
	atexit(remove_dir);
}

struct sl_chan_srv_stats
fuzz_srv_stats(void)
{
	struct sl_chan_srv_stats st;

	sl_chan_srv_stats_get(fuzz_srv, &st);
	return st;
}
