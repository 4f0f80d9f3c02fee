/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for app/sluiced/config.c: the schema against `sluiced --help` and docs/configuration.md
 * (every key of the schema in both, with its default; no key in either that the schema lacks),
 * the default S_FC rule they state against lib/link's, keys with units, and [qp] (its keys, the
 * program list checked against the registry, and the rules across keys).
 *
 *   test_sluiced_config SLUICED_BINARY DOCS/configuration.md
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "sl_link.h"
#include "sl_proto.h"
#include "sl_recv.h"
#include "sluice.h"

#define MAX_ENTRIES 128

/* One key as a text lists it. */
struct entry {
	char section[16]; /**< "sluiced", "link", "traffic", "port" */
	char key[48];
	char def[64];    /**< as shown, backticks removed; "required" for none */
	char text[1024]; /**< the rest of what the text says about it */
};

struct listing {
	struct entry e[MAX_ENTRIES];
	size_t n;
};

static const char *sluiced_bin, *docs_path;
static struct listing help, docs;

static char *
trim(char *s)
{
	char *e;

	s += strspn(s, " \t`");
	e = s + strlen(s);
	while (e > s && strchr(" \t\n`", e[-1]))
		*--e = '\0';
	return s;
}

/* "[port.N]  (...)" or "## [link]" -> "port" / "link". */
static void
section_of(const char *line, char *out, size_t len)
{
	const char *open = strchr(line, '['), *end = open ? strpbrk(open, ".]") : NULL;

	snprintf(out, len, "%.*s", end ? (int)(end - open - 1) : 0, open ? open + 1 : "");
}

static struct entry *
add(struct listing *l, const char *section, const char *key, const char *def)
{
	struct entry *e;

	assert_true(l->n < MAX_ENTRIES);
	e = &l->e[l->n++];
	snprintf(e->section, sizeof(e->section), "%s", section);
	snprintf(e->key, sizeof(e->key), "%s", key);
	snprintf(e->def, sizeof(e->def), "%s", def);
	e->text[0] = '\0';
	return e;
}

/* The key lines of `sluiced --help`: "    key = default", then its text indented by 8. */
static void
read_help(struct listing *l)
{
	char cmd[1024], line[512], section[16] = "";
	struct entry *last = NULL;
	bool in_keys = false, past_keys = false;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "'%s' --help", sluiced_bin);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		char *eq = strstr(line, " = ");

		in_keys |= strncmp(line, "  [", 3) == 0; /* the first section */
		if (!in_keys || past_keys || line[0] == '\n') {
			continue; /* read to the end all the same: a reader that stops early makes
				   * the writer's last write fail (SIGPIPE) */
		} else if (line[0] != ' ') {
			past_keys = true; /* the text after the keys */
		} else if (strncmp(line, "  [", 3) == 0) {
			section_of(line, section, sizeof(section));
		} else if (strncmp(line, "    ", 4) == 0 && line[4] != ' ' && eq) {
			*eq = '\0';
			last = add(l, section, trim(line), trim(eq + 3));
			if (strcmp(last->def, "(required)") == 0)
				strcpy(last->def, "required");
		} else if (last && strncmp(line, "        ", 8) == 0) {
			strncat(last->text, line + 8, sizeof(last->text) - strlen(last->text) - 1);
		}
	}
	assert_int_equal(pclose(p), 0);
}

/* The rows of the key tables under "## [section]": "| `key` | `default` | unit | meaning |". */
static void
read_docs(struct listing *l)
{
	char line[2048], section[16] = "";
	FILE *f = fopen(docs_path, "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *col[4] = {NULL}, *save = NULL;
		int n = 0;

		if (strncmp(line, "## ", 3) == 0) {
			section[0] = '\0';
			if (line[3] == '[')
				section_of(line, section, sizeof(section));
			continue;
		}
		if (section[0] == '\0' || strncmp(line, "| `", 3) != 0)
			continue;
		for (char *c = strtok_r(line + 1, "|", &save); c && n < 4;
		     c = strtok_r(NULL, "|", &save))
			col[n++] = c;
		assert_int_equal(n, 4);
		snprintf(add(l, section, trim(col[0]), trim(col[1]))->text, sizeof(l->e[0].text),
			 "%s", col[3]);
	}
	fclose(f);
}

static const struct entry *
find(const struct listing *l, const char *section, const char *key)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->e[i].section, section) == 0 && strcmp(l->e[i].key, key) == 0)
			return &l->e[i];
	return NULL;
}

/* Every key of the schema, once, with the schema's default. */
static void
every_key_with_its_default(const struct listing *l, const char *what)
{
	size_t nkeys;
	const struct sluiced_key *keys = sluiced_conf_keys(&nkeys);

	for (size_t i = 0; i < nkeys; i++) {
		const struct entry *e = find(l, keys[i].section, keys[i].name);
		const char *def = keys[i].def ? keys[i].def : "required";

		if (e == NULL)
			fail_msg("%s does not list [%s] %s", what, keys[i].section, keys[i].name);
		if (strcmp(e->def, def) != 0)
			fail_msg("%s gives [%s] %s the default '%s', the schema '%s'", what,
				 keys[i].section, keys[i].name, e->def, def);
	}
}

/* Every key listed is in the schema, and listed once. */
static void
no_key_the_schema_lacks(const struct listing *l, const char *what)
{
	size_t nkeys;
	const struct sluiced_key *keys = sluiced_conf_keys(&nkeys);

	assert_true(l->n > 0);
	for (size_t i = 0; i < l->n; i++) {
		bool known = false;

		for (size_t j = 0; j < nkeys; j++)
			known |= strcmp(keys[j].section, l->e[i].section) == 0 &&
				 strcmp(keys[j].name, l->e[i].key) == 0;
		if (!known)
			fail_msg("%s lists [%s] %s, which the schema lacks", what, l->e[i].section,
				 l->e[i].key);
		if (find(l, l->e[i].section, l->e[i].key) != &l->e[i])
			fail_msg("%s lists [%s] %s twice", what, l->e[i].section, l->e[i].key);
	}
}

static void
help__lists_every_key_with_its_default(void **state)
{
	(void)state;
	every_key_with_its_default(&help, "sluiced --help");
}

static void
help__lists_no_key_the_schema_lacks(void **state)
{
	(void)state;
	no_key_the_schema_lacks(&help, "sluiced --help");
}

static void
docs__list_every_key_with_its_default(void **state)
{
	(void)state;
	every_key_with_its_default(&docs, docs_path);
}

static void
docs__list_no_key_the_schema_lacks(void **state)
{
	(void)state;
	no_key_the_schema_lacks(&docs, docs_path);
}

/* The N of "N x rate x RTT" in what l says of [link] fc_frames. */
static unsigned
fc_rtts(const struct listing *l)
{
	const struct entry *e = find(l, "link", "fc_frames");
	const char *x;
	unsigned n = 0;

	assert_non_null(e);
	x = strstr(e->text, " x rate x RTT");
	assert_non_null(x);
	while (x > e->text && x[-1] >= '0' && x[-1] <= '9')
		x--;
	assert_int_equal(sscanf(x, "%u", &n), 1);
	return n;
}

/* fc_frames = 0 is what lib/link computes, as --help and the docs state it. */
static void
help__fc_frames_default_is_the_links(void **state)
{
	/* 10 Gbit/s x 1 ms / 1024 B frames: 1220.7 frames in flight, rounded up */
	const uint32_t bdp_frames = 1221;
	uint32_t fc = sl_link_fc_frames(10 * SL_BPS_PER_GBPS, SL_NS_PER_MS, 1024);

	(void)state;
	assert_int_equal(fc, fc_rtts(&help) * bdp_frames);
	assert_int_equal(fc, fc_rtts(&docs) * bdp_frames);
}

/* Load text as a config file; 0 or -1 with the message in err. */
static int
load(struct sluiced_conf *c, const char *text, char *err, size_t len, char *path)
{
	int fd = mkstemp(path), rc;
	FILE *f = fdopen(fd, "w"), *e = fmemopen(err, len, "w");

	assert_non_null(f);
	assert_non_null(e);
	fputs(text, f);
	fclose(f);
	memset(err, 0, len);
	rc = sluiced_conf_load(c, path, e);
	fclose(e);
	unlink(path);
	return rc;
}

static void
sluiced_conf_load__bare_numbers_keep_their_meaning(void **state)
{
	static struct sluiced_conf c;
	char path[] = "/tmp/sl-conf-XXXXXX", err[256];

	(void)state;
	assert_int_equal(load(&c,
			      "[sluiced]\npeer_timeout_ms = 250\n[link]\nrate_mbps = 25000\n"
			      "rtt_us = 20\nkeepalive_us = 0x10\n[traffic]\nbody_bytes = 0100\n"
			      "[port.0]\ndevice = net_ring0\nrx_desc = 512\n",
			      err, sizeof(err), path),
			 0);
	assert_int_equal(c.peer_timeout_ns, 250 * SL_NS_PER_MS);
	assert_int_equal(c.link.rate_bps, 25 * SL_BPS_PER_GBPS);
	assert_int_equal(c.link.rtt_ns, 20 * SL_NS_PER_US);
	assert_int_equal(c.link.keepalive_ns, 16 * SL_NS_PER_US);
	assert_int_equal(c.traffic.body_bytes, 100);
	assert_int_equal(c.port[0].rx_desc, 512);
	/* the defaults are read through the same parser */
	assert_int_equal(c.link.ctrl_interval_ns, 1000 * SL_NS_PER_US);
	assert_int_equal(c.link.sizing_frame_bytes, 1024);
}

static void
sluiced_conf_load__units(void **state)
{
	static struct sluiced_conf c;
	char path[] = "/tmp/sl-conf-XXXXXX", err[256];

	(void)state;
	assert_int_equal(load(&c,
			      "[sluiced]\npeer_timeout_ms = 2s\nmbuf_data_room = 4KiB\n[link]\n"
			      "rate_mbps = 2.5Gbps\nrtt_us = 1.5ms\nkeepalive_us = 1500ns\n"
			      "sizing_frame_bytes = 1.5K\n[traffic]\nrate_mbps = 800 Kbps\n"
			      "consume_mbps = 1G\n[port.0]\ndevice = net_ring0\n",
			      err, sizeof(err), path),
			 0);
	assert_string_equal(err, "");
	assert_int_equal(c.peer_timeout_ns, 2 * SL_NS_PER_S);
	assert_int_equal(c.mbuf_data_room, 4096);
	assert_int_equal(c.link.rate_bps, 2500 * SL_BPS_PER_MBPS);
	assert_int_equal(c.link.rtt_ns, 1500 * SL_NS_PER_US);
	assert_int_equal(c.link.keepalive_ns, 1500);
	assert_int_equal(c.link.sizing_frame_bytes, 1500);
	assert_int_equal(c.traffic.rate_bps, 800 * SL_BPS_PER_KBPS);
	assert_int_equal(c.traffic.consume_bps, SL_BPS_PER_GBPS);
}

static void
sluiced_conf_load__unit_errors_name_file_line_and_key(void **state)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{"[link]\nmode = faithful\nrtt_us = 2s\n",
		 ":3: rtt_us: expected a duration in [1us, 1s], got '2s'\n"},
		{"[link]\nrate_mbps = 10GB\n",
		 ":2: rate_mbps: expected a rate in [1Mbps, 400Gbps] (units: bps, Kbps, Mbps, "
		 "Gbps), got '10GB'\n"},
		{"[link]\nkeepalive_us = 1.5\n",
		 ":2: keepalive_us: expected a whole number in [1, 10000000], got '1.5'\n"},
		{"[link]\nkeepalive_us = 1.5ns\n",
		 ":2: keepalive_us: not a whole number of ns; expected a duration in [1us, 10s], "
		 "got '1.5ns'\n"},
		{"[traffic]\nbody_bytes = -1K\n",
		 ":2: body_bytes: expected a size in [44B, 9KB], got '-1K'\n"},
		{"[port.0]\ndevice = net_ring0\nrx_desc = 1K\n",
		 ":3: rx_desc: expected a whole number in [64, 32768], got '1K'\n"},
		{"[sluiced]\npeer_timeout_ms = fast\n",
		 ":2: peer_timeout_ms: expected a whole number in [1, 600000] or a duration in "
		 "[1ms, 600s] (units: ns, us, ms, s), got 'fast'\n"},
	};

	(void)state;
	for (size_t i = 0; i < SL_ARRAY_SIZE(cases); i++) {
		static struct sluiced_conf c;
		char path[] = "/tmp/sl-conf-XXXXXX", err[512], want[512], text[256];

		snprintf(text, sizeof(text), "%s[port.1]\ndevice = net_ring0\n", cases[i].text);
		assert_int_equal(load(&c, text, err, sizeof(err), path), -1);
		snprintf(want, sizeof(want), "%s%s", path, cases[i].msg);
		assert_string_equal(err, want);
	}
}

static void
sluiced_conf_load__qp_keys(void **state)
{
	static struct sluiced_conf c;
	char path[] = "/tmp/sl-conf-XXXXXX", err[256];

	(void)state;
	assert_int_equal(load(&c,
			      "[qp]\ncount = 5\nproto = dcqcn, reno ,swift\nrecv = gbn\n"
			      "seg_bytes = 2KiB\nmsg_min_bytes = 1\nmsg_max_bytes = 64KiB\n"
			      "msgs = 2000\ndirection = send\ncheck = no\nrate_mbps = 2.5Gbps\n"
			      "window_pkts = 256\nrto_us = 5ms\ntimeout_ms = 2s\nseed = 42\n"
			      "params = 0, 0x10,300000\n[port.0]\n"
			      "device = net_ring0\n",
			      err, sizeof(err), path),
			 0);
	assert_string_equal(err, "");
	assert_int_equal(c.qp.count, 5);
	assert_int_equal(c.qp.nb_protos, 3);
	assert_string_equal(c.qp.proto_name[0], "dcqcn");
	assert_string_equal(c.qp.proto_name[1], "reno");
	assert_string_equal(c.qp.proto_name[2], "swift");
	assert_int_equal(c.qp.recv, SL_RECV_GBN);
	assert_int_equal(c.qp.seg_bytes, 2048);
	assert_int_equal(c.qp.msg_min_bytes, 1);
	assert_int_equal(c.qp.msg_max_bytes, 65536);
	assert_int_equal(c.qp.msgs, 2000);
	assert_int_equal(c.qp.direction, SLUICED_QP_SEND);
	assert_int_equal(c.qp.check, 0);
	assert_int_equal(c.qp.rate_bps, 2500 * SL_BPS_PER_MBPS);
	assert_int_equal(c.qp.window_pkts, 256);
	assert_int_equal(c.qp.rto_ns, 5 * SL_NS_PER_MS);
	assert_int_equal(c.qp.timeout_ns, 2 * SL_NS_PER_S);
	assert_int_equal(c.qp.seed, 42);
	assert_int_equal(c.qp.param[0], 0);
	assert_int_equal(c.qp.param[1], 16);
	assert_int_equal(c.qp.param[2], 300000);
	assert_int_equal(c.qp.param[3], 0);
	assert_int_equal(c.qp.count_line, 2);
	assert_int_equal(c.qp.seg_line, 5);
}

static void
sluiced_conf_load__qp_defaults(void **state)
{
	static struct sluiced_conf c;
	char path[] = "/tmp/sl-conf-XXXXXX", err[256];

	(void)state;
	assert_int_equal(load(&c, "[port.0]\ndevice = net_ring0\n", err, sizeof(err), path), 0);
	assert_int_equal(c.qp.count, 0);
	assert_int_equal(c.qp.nb_protos, 1);
	assert_non_null(sl_proto_find(c.qp.proto_name[0]));
	assert_int_equal(c.qp.recv, SL_RECV_MELO);
	assert_int_equal(c.qp.direction, SLUICED_QP_BOTH);
	assert_int_equal(c.qp.check, 1);
	assert_true(c.qp.msg_min_bytes <= c.qp.msg_max_bytes);
}

static void
sluiced_conf_load__qp_errors_name_file_line_and_key(void **state)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{"[qp]\ncount = 3\nproto = reno,cubic\n",
		 ":3: proto: no transport program 'cubic' (programs: %s)\n"},
		{"[qp]\nproto = ,\n", ":2: proto: no program named, got ','\n"},
		{"[qp]\nrecv = selective\n",
		 ":2: recv: expected one of melo|gbn|ec, got 'selective'\n"},
		{"[qp]\ndirection = up\n",
		 ":2: direction: expected one of send|recv|both, got 'up'\n"},
		{"[qp]\ncheck = maybe\n", ":2: check: expected one of no|yes, got 'maybe'\n"},
		{"[qp]\nwindow_pkts = 100\n",
		 ":2: window_pkts: must be a power of two, got '100'\n"},
		{"[qp]\nwindow_pkts = 32\n",
		 ":2: window_pkts: expected a whole number in [64, 4096], got '32'\n"},
		{"[qp]\ncount = 5000\n",
		 ":2: count: expected a whole number in [0, 4096], got '5000'\n"},
		{"[qp]\nseg_bytes = 0\n",
		 ":2: seg_bytes: expected a whole number in [1, 9000], got '0'\n"},
		{"[qp]\nmsg_min_bytes = 8K\nmsg_max_bytes = 100\n",
		 ":3: msg_max_bytes: 100 is below msg_min_bytes = 8000\n"},
		{"[traffic]\nmode = send\n[qp]\ncount = 2\n",
		 ":4: count: queue pairs and link test traffic cannot both run ([traffic] mode = "
		 "send): a lane carries one or the other\n"},
		{"[qp]\nrto_us = 3s\n", ":2: timeout_ms: 2000 ms (the default) is not above rto_us "
					"= 3000000 us: a QP would "
					"fail before its first retransmission\n"},
		{"[qp]\nrto_us = 20ms\ntimeout_ms = 20\n",
		 ":3: timeout_ms: 20 ms is not above rto_us = 20000 us: a QP would fail before its "
		 "first retransmission\n"},
		{"[qp]\nbogus = 1\n", ":2: bogus: unknown key in [qp] (see sluiced --help)\n"},
		{"[qp]\nrecv = ec\n[ec]\nqueue_bytes = 9000\nthreshold_bytes = 9000\n",
		 ":5: threshold_bytes: 9000 is not below queue_bytes = 9000\n"},
		{"[ec]\npolicy = fast\n",
		 ":2: policy: expected one of dack|opt|aimd|timeout, got 'fast'\n"},
		{"[qp]\nparams = 1,2,3,4,5\n", ":2: params: at most 4 numbers, got '1,2,3,4,5'\n"},
		{"[qp]\nparams = 1,-2\n",
		 ":2: params: expected a whole number in [0, 18446744073709551615], got '1,-2'\n"},
	};
	char programs[512] = "";
	size_t len = 0;

	(void)state;
	for (unsigned i = 0; i < sl_proto_count(); i++)
		len += (size_t)snprintf(programs + len, sizeof(programs) - len, "%s%s",
					i ? ", " : "", sl_proto_at(i)->name);
	assert_true(sl_proto_count() > 1 && len < sizeof(programs));
	for (size_t i = 0; i < SL_ARRAY_SIZE(cases); i++) {
		static struct sluiced_conf c;
		char path[] = "/tmp/sl-conf-XXXXXX", err[1024], want[1024], msg[1024], text[256];

		snprintf(text, sizeof(text), "%s[port.0]\ndevice = net_ring0\n", cases[i].text);
		assert_int_equal(load(&c, text, err, sizeof(err), path), -1);
		snprintf(msg, sizeof(msg), cases[i].msg, programs);
		snprintf(want, sizeof(want), "%s%s", path, msg);
		assert_string_equal(err, want);
	}
}

static void
sluiced_conf_load__api_keys(void **state)
{
	static struct sluiced_conf c;
	char path[] = "/tmp/sl-conf-XXXXXX", err[256];

	(void)state;
	assert_int_equal(load(&c,
			      "[api]\nenable = yes\nsocket = /tmp/x/api.sock\nmode = 0600\n"
			      "owner = root\ngroup = root\nallow_users = root, 1000\n"
			      "allow_groups = 0\nqps = 8\nclients = 2\nmrs = 100\n"
			      "cqs = 10\nprogram = reno\nseg_bytes = 2KiB\nstash_bytes = 1MiB\n"
			      "stash_qp_bytes = 64KiB\nclient_stash_bytes = 512KiB\n"
			      "[port.0]\ndevice = net_ring0\n",
			      err, sizeof(err), path),
			 0);
	assert_string_equal(err, "");
	assert_int_equal(c.api.enable, 1);
	assert_string_equal(c.api.socket, "/tmp/x/api.sock");
	assert_int_equal(c.api.mode_bits, 0600);
	assert_int_equal(c.api.uid, 0);
	assert_int_equal(c.api.gid, 0);
	assert_int_equal(c.api.n_allow_uids, 2);
	assert_int_equal(c.api.allow_uids[0], 0);
	assert_int_equal(c.api.allow_uids[1], 1000);
	assert_int_equal(c.api.n_allow_gids, 1);
	assert_int_equal(c.api.allow_gids[0], 0);
	assert_int_equal(c.api.qps, 8);
	assert_int_equal(c.api.clients, 2);
	assert_int_equal(c.api.mrs, 100);
	assert_int_equal(c.api.cqs, 10);
	assert_string_equal(c.api.program, "reno");
	assert_int_equal(c.api.seg_bytes, 2048);
	assert_int_equal(c.api.seg_line, 14);
	assert_int_equal(c.api.stash_bytes, 1 << 20);
	assert_int_equal(c.api.stash_qp_bytes, 64 << 10);
	assert_int_equal(c.api.client_stash_bytes, 512 << 10);
}

static void
sluiced_conf_load__api_quotas(void **state)
{
	static struct sluiced_conf c;
	char path[2][20] = {"/tmp/sl-conf-XXXXXX", "/tmp/sl-conf-XXXXXX"};
	char err[256];

	(void)state;
	assert_int_equal(load(&c,
			      "[api]\nclient_mrs = 7\nclient_mr_bytes = 1MiB\nclient_cqs = 3\n"
			      "client_qps = 2\nuid_clients = 5\nhello_timeout_ms = 250ms\n"
			      "[port.0]\ndevice = net_ring0\n",
			      err, sizeof(err), path[0]),
			 0);
	assert_string_equal(err, "");
	assert_int_equal(c.api.client_mrs, 7);
	assert_int_equal(c.api.client_mr_bytes, 1 << 20);
	assert_int_equal(c.api.client_cqs, 3);
	assert_int_equal(c.api.client_qps, 2);
	assert_int_equal(c.api.uid_clients, 5);
	assert_int_equal(c.api.hello_timeout_ns, 250 * SL_NS_PER_MS);
	/* 0: a quarter of the pool, at least 1 */
	assert_int_equal(load(&c,
			      "[api]\nclients = 3\nmrs = 40\ncqs = 2\nqps = 9\nclient_mrs = 0\n"
			      "[port.0]\ndevice = net_ring0\n",
			      err, sizeof(err), path[1]),
			 0);
	assert_int_equal(c.api.client_mrs, 10);
	assert_int_equal(c.api.client_cqs, 1);
	assert_int_equal(c.api.client_qps, 2);
	assert_int_equal(c.api.uid_clients, 3); /* clients: no limit per user */
}

static void
sluiced_conf_load__api_defaults(void **state)
{
	static struct sluiced_conf c;
	char path[3][20] = {"/tmp/sl-conf-XXXXXX", "/tmp/sl-conf-XXXXXX", "/tmp/sl-conf-XXXXXX"};
	char err[256];

	(void)state;
	assert_int_equal(load(&c, "[port.0]\ndevice = net_ring0\n", err, sizeof(err), path[0]), 0);
	assert_int_equal(c.api.enable, 0);
	assert_string_equal(c.api.socket, SL_SOCKET_DEFAULT);
	assert_int_equal(c.api.mode_bits, 0660);
	assert_int_equal(c.api.uid, -1);
	assert_int_equal(c.api.gid, -1);
	assert_int_equal(c.api.qps, 64);
	assert_int_equal(c.api.clients, 16);
	assert_int_equal(c.api.mrs, 4096);
	assert_int_equal(c.api.cqs, 256);
	assert_string_equal(c.api.program, "dcqcn");
	assert_int_equal(c.api.seg_bytes, SLUICED_API_SEG_BYTES); /* no [qp] */
	assert_int_equal(c.api.stash_bytes, 16 << 20);
	assert_int_equal(c.api.client_mrs, 1024);
	assert_int_equal(c.api.client_mr_bytes, UINT64_C(1) << 34);
	assert_int_equal(c.api.client_cqs, 64);
	assert_int_equal(c.api.client_qps, 16);
	assert_int_equal(c.api.uid_clients, 16);
	assert_int_equal(c.api.hello_timeout_ns, 1000 * SL_NS_PER_MS);
	assert_int_equal(c.api.stash_qp_bytes, 0);
	assert_int_equal(c.api.client_stash_bytes, 4 << 20); /* a quarter of stash_bytes */
	/* [qp]'s segment size when [qp] runs QPs or names one */
	assert_int_equal(load(&c,
			      "[qp]\ncount = 2\n[api]\nenable = yes\n[port.0]\n"
			      "device = net_ring0\n",
			      err, sizeof(err), path[1]),
			 0);
	assert_int_equal(c.api.seg_bytes, 1024);
	assert_int_equal(load(&c, "[qp]\nseg_bytes = 512\n[port.0]\ndevice = net_ring0\n", err,
			      sizeof(err), path[2]),
			 0);
	assert_int_equal(c.api.seg_bytes, 512);
}

static void
sluiced_conf_load__api_errors_name_file_line_and_key(void **state)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{"[api]\nenable = maybe\n", ":2: enable: expected one of no|yes, got 'maybe'\n"},
		{"[api]\nmode = 0680\n",
		 ":2: mode: expected an octal mode in 0..0777, got '0680'\n"},
		{"[api]\nmode = 01777\n",
		 ":2: mode: expected an octal mode in 0..0777, got '01777'\n"},
		{"[api]\nowner = no-such-user-sl\n",
		 ":2: owner: no user 'no-such-user-sl' on this host\n"},
		{"[api]\nenable = no\ngroup = no-such-group-sl\n",
		 ":3: group: no group 'no-such-group-sl' on this host\n"},
		{"[api]\nallow_users = root,no-such-user-sl\n",
		 ":2: allow_users: no user 'no-such-user-sl' on this host\n"},
		{"[api]\nallow_groups = ,\n", ":2: allow_groups: empty (- for none)\n"},
		{"[api]\nallow_users = 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17\n",
		 ":2: allow_users: at most 16 entries\n"},
		{"[api]\nprogram = cubic\n",
		 ":2: program: no transport program 'cubic' (programs: %s)\n"},
		{"[api]\nqps = 0\n", ":2: qps: expected a whole number in [1, 4096], got '0'\n"},
		{"[api]\nclients = 0\n",
		 ":2: clients: expected a whole number in [1, 1024], got '0'\n"},
		{"[api]\nmrs = 65536\n",
		 ":2: mrs: expected a whole number in [1, 65535], got '65536'\n"},
		{"[api]\nclient_qps = 4097\n",
		 ":2: client_qps: expected a whole number in [0, 4096], got '4097'\n"},
		{"[api]\nclient_mr_bytes = 0\n",
		 ":2: client_mr_bytes: expected a whole number in [1, 1099511627776], got '0'\n"},
		{"[api]\nhello_timeout_ms = 0\n",
		 ":2: hello_timeout_ms: expected a whole number in [1, 3600000], got '0'\n"},
		{"[api]\nseg_bytes = 10000\n",
		 ":2: seg_bytes: expected a whole number in [0, 9000], got '10000'\n"},
		{"[traffic]\nmode = check\n[api]\nenable = yes\n",
		 ":4: enable: applications and link test traffic cannot both run ([traffic] mode "
		 "= check): a lane carries one or the other\n"},
		{"[api]\nport = 1\n", ":2: port: unknown key in [api] (see sluiced --help)\n"},
	};
	char programs[512] = "";
	size_t len = 0;

	(void)state;
	for (unsigned i = 0; i < sl_proto_count(); i++)
		len += (size_t)snprintf(programs + len, sizeof(programs) - len, "%s%s",
					i ? ", " : "", sl_proto_at(i)->name);
	for (size_t i = 0; i < SL_ARRAY_SIZE(cases); i++) {
		static struct sluiced_conf c;
		char path[] = "/tmp/sl-conf-XXXXXX", err[1024], want[1024], msg[1024], text[256];

		snprintf(text, sizeof(text), "%s[port.0]\ndevice = net_ring0\n", cases[i].text);
		assert_int_equal(load(&c, text, err, sizeof(err), path), -1);
		snprintf(msg, sizeof(msg), cases[i].msg, programs);
		snprintf(want, sizeof(want), "%s%s", path, msg);
		assert_string_equal(err, want);
	}
}

static int
read_both(void **state)
{
	(void)state;
	read_help(&help);
	read_docs(&docs);
	return 0;
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(help__lists_every_key_with_its_default),
		cmocka_unit_test(help__lists_no_key_the_schema_lacks),
		cmocka_unit_test(docs__list_every_key_with_its_default),
		cmocka_unit_test(docs__list_no_key_the_schema_lacks),
		cmocka_unit_test(help__fc_frames_default_is_the_links),
		cmocka_unit_test(sluiced_conf_load__bare_numbers_keep_their_meaning),
		cmocka_unit_test(sluiced_conf_load__units),
		cmocka_unit_test(sluiced_conf_load__unit_errors_name_file_line_and_key),
		cmocka_unit_test(sluiced_conf_load__qp_keys),
		cmocka_unit_test(sluiced_conf_load__qp_defaults),
		cmocka_unit_test(sluiced_conf_load__qp_errors_name_file_line_and_key),
		cmocka_unit_test(sluiced_conf_load__api_keys),
		cmocka_unit_test(sluiced_conf_load__api_defaults),
		cmocka_unit_test(sluiced_conf_load__api_quotas),
		cmocka_unit_test(sluiced_conf_load__api_errors_name_file_line_and_key),
	};

	if (argc != 3) {
		fprintf(stderr, "usage: %s SLUICED_BINARY configuration.md\n", argv[0]);
		return 2;
	}
	sluiced_bin = argv[1];
	docs_path = argv[2];
	return cmocka_run_group_tests_name("sluiced/config", tests, read_both, NULL);
}
