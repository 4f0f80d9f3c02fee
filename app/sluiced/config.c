/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * config.c - sluiced's INI schema, loading and validation.
 *
 * One table (keys[]) describes every key: its section, type, range, default, unit and help. The
 * same table drives parsing, default values, unknown-key detection and --help, so the docs can
 * not drift from the code. rte_cfgfile does the parsing; because it keeps no line numbers, a
 * small scan of the file first checks the syntax line by line and later locates
 * (section, key) so that every error reads `file:line: key: what is wrong`.
 *
 * Comments start with ';' (rte_cfgfile's comment character). Port sections are [port.N],
 * N = 0..SLUICED_MAX_PORTS-1, each naming one DPDK device.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cfgfile.h>

#include "config.h"
#include "sl_common.h"
#include "sl_str.h"

enum key_type {
	KEY_STRING,   /**< char[] member, size is the array size */
	KEY_UINT,     /**< unsigned member of `size` bytes, value * scale in [min, max] */
	KEY_ENUM,     /**< unsigned int member: index of the value in choices ("a|b|c") */
	KEY_PEER_MAC, /**< "learn" or aa:bb:cc:dd:ee:ff */
};

struct key_desc {
	const char *section; /**< "sluiced" or "port" (matches [port.N]) */
	const char *name;
	enum key_type type;
	size_t offset; /**< in struct sluiced_conf, or in struct sluiced_port_conf */
	size_t size;
	uint64_t min, max;   /**< KEY_UINT bounds, in the key's own unit */
	uint64_t scale;      /**< KEY_UINT: stored = value * scale (e.g. us -> ns) */
	const char *choices; /**< KEY_ENUM: "a|b|c" */
	const char *def;     /**< default as written in the file; NULL = required */
	const char *help;
};

#define CONF(m) offsetof(struct sluiced_conf, m), sizeof(((struct sluiced_conf *)0)->m)
#define PORT(m) offsetof(struct sluiced_port_conf, m), sizeof(((struct sluiced_port_conf *)0)->m)

#define LINK(m) CONF(link.m)
#define TRAFFIC(m) CONF(traffic.m)

static const struct key_desc keys[] = {
	{"sluiced", "name", KEY_STRING, CONF(name), 0, 0, 0, NULL, "sluiced",
	 "host name shown in telemetry and reports"},
	{"sluiced", "workers", KEY_UINT, CONF(workers), 0, 64, 1, NULL, "0",
	 "worker lcores, one RX/TX queue pair (lane) per port each; 0 runs everything on the main "
	 "lcore"},
	{"sluiced", "mbufs", KEY_UINT, CONF(mbufs), 0, 16777215, 1, NULL, "0",
	 "mbufs in each packet pool; 0 sizes it from what the lanes hold (replay rings, "
	 "flow-control buffers, NIC rings)"},
	{"sluiced", "mbuf_cache", KEY_UINT, CONF(mbuf_cache), 0, 512, 1, NULL, "256",
	 "per-lcore mempool cache, mbufs"},
	{"sluiced", "mbuf_data_room", KEY_UINT, CONF(mbuf_data_room), 256, 65535, 1, NULL, "2176",
	 "data room per mbuf in bytes, headroom included"},
	{"sluiced", "peer_timeout_ms", KEY_UINT, CONF(peer_timeout_ns), 1, 600000, 1000000, NULL,
	 "500", "the peer is reported down after this long without a frame, milliseconds"},
	{"link", "mode", KEY_ENUM, LINK(mode), 0, 0, 0, "faithful|extended", "faithful",
	 "faithful: frame ID implicit (RIFL); extended: explicit 32-bit ID, rings up to 2^20"},
	{"link", "vcode_scope", KEY_ENUM, LINK(vcode_scope), 0, 0, 0, "header|frame", "header",
	 "bytes VCODE covers: link + transport header (the FCS covers the rest) or the whole "
	 "frame"},
	{"link", "replay", KEY_ENUM, LINK(replay), 0, 0, 0, "ring|missing", "ring",
	 "replay the whole ring (RIFL) or from the first missing frame (extended mode only)"},
	{"link", "ring_order", KEY_UINT, LINK(ring_order), 0, 20, 1, NULL, "0",
	 "replay ring of 2^k frames; 0 sizes it from rate_mbps x rtt_us (RIFL's rule)"},
	{"link", "rate_mbps", KEY_UINT, LINK(rate_bps), 1, 400000, 1000000, NULL, "10000",
	 "link rate assumed when sizing the ring and the flow-control buffer, Mbit/s"},
	{"link", "rtt_us", KEY_UINT, LINK(rtt_ns), 1, 1000000, 1000, NULL, "1000",
	 "round-trip time assumed when sizing, microseconds"},
	{"link", "sizing_frame_bytes", KEY_UINT, LINK(sizing_frame_bytes), 60, 9018, 1, NULL,
	 "1024", "frame size assumed when sizing, bytes"},
	{"link", "fc_frames", KEY_UINT, LINK(fc_frames), 0, 1048576, 1, NULL, "0",
	 "flow-control buffer S_FC, frames; 0 = 1.5 x rate x RTT"},
	{"link", "fc_on_frames", KEY_UINT, LINK(fc_on_frames), 0, 1048576, 1, NULL, "0",
	 "send pause at this many undelivered frames; 0 = 2/3 of S_FC"},
	{"link", "fc_off_frames", KEY_UINT, LINK(fc_off_frames), 0, 1048576, 1, NULL, "0",
	 "send resume at this many undelivered frames; 0 = 1/3 of S_FC"},
	{"link", "keepalive_us", KEY_UINT, LINK(keepalive_ns), 1, 10000000, 1000, NULL, "100",
	 "send an IDLE frame after this long without sending, microseconds (bounds loss "
	 "detection)"},
	{"link", "ctrl_interval_us", KEY_UINT, LINK(ctrl_interval_ns), 1, 1000000, 1000, NULL,
	 "1000", "gap between runs of control frames, microseconds"},
	{"traffic", "mode", KEY_ENUM, TRAFFIC(mode), 0, 0, 0, "off|send|check|both", "off",
	 "link test traffic: generate payloads, check the peer's, or both"},
	{"traffic", "body_bytes", KEY_UINT, TRAFFIC(body_bytes), 44, 9000, 1, NULL, "1024",
	 "test payload size (the link body), bytes"},
	{"traffic", "rate_mbps", KEY_UINT, TRAFFIC(rate_bps), 0, 400000, 1000000, NULL, "0",
	 "generator rate in payload Mbit/s; 0 = as fast as the link takes them"},
	{"traffic", "frames", KEY_UINT, TRAFFIC(frames), 0, UINT64_C(1) << 48, 1, NULL, "0",
	 "payloads to generate per lane; 0 = until stopped"},
	{"traffic", "consume_mbps", KEY_UINT, TRAFFIC(consume_bps), 0, 400000, 1000000, NULL, "0",
	 "checker consumption rate in payload Mbit/s (a slow receiver); 0 = unthrottled"},
	{"port", "device", KEY_STRING, PORT(device), 0, 0, 0, NULL, NULL,
	 "DPDK device name: a PCI address or the name given to --vdev (net_af_xdp0, ...)"},
	{"port", "peer_mac", KEY_PEER_MAC, 0, 0, 0, 0, 0, NULL, "learn",
	 "peer's MAC address, or 'learn' to take it from the peer's first sluice frame"},
	{"port", "rx_desc", KEY_UINT, PORT(rx_desc), 64, 32768, 1, NULL, "1024",
	 "RX descriptors per queue"},
	{"port", "tx_desc", KEY_UINT, PORT(tx_desc), 64, 32768, 1, NULL, "1024",
	 "TX descriptors per queue"},
};

void
sluiced_conf_print_keys(FILE *out)
{
	const char *section = "";

	for (size_t i = 0; i < SL_ARRAY_SIZE(keys); i++) {
		const struct key_desc *k = &keys[i];

		if (strcmp(section, k->section) != 0) {
			section = k->section;
			if (strcmp(section, "port") == 0)
				fprintf(out, "\n  [port.N]  (N = 0..%d, one section per port)\n",
					SLUICED_MAX_PORTS - 1);
			else
				fprintf(out, "\n  [%s]\n", section);
		}
		fprintf(out, "    %-18s %s (%s%sdefault: %s)\n", k->name, k->help,
			k->choices ? k->choices : "", k->choices ? "; " : "",
			k->def ? k->def : "required");
	}
}

/* --- locating lines ------------------------------------------------------------------------ */

/*
 * Scan the file. With section == NULL: check syntax, print the first bad line, return its
 * number (0 when the file is well formed). Otherwise: return the line of the last occurrence of
 * key in section (with key NULL, the section header's line), 0 when absent.
 */
static unsigned int
scan_file(const char *path, const char *section, const char *key, FILE *err)
{
	char buf[512], cur[128] = "";
	unsigned int line = 0, found = 0;
	FILE *f = fopen(path, "r");

	if (f == NULL)
		return 0;
	while (fgets(buf, sizeof(buf), f)) {
		char *s, *semi, *eq;

		line++;
		semi = strchr(buf, ';');
		if (semi)
			*semi = '\0';
		s = sl_str_trim(buf);
		if (*s == '\0')
			continue;
		if (*s == '[') {
			char *close = strchr(s, ']');

			if (close == NULL || close[1] != '\0' || close == s + 1) {
				if (key == NULL && section == NULL) {
					fprintf(err, "%s:%u: malformed section header '%s'\n", path,
						line, s);
					fclose(f);
					return line;
				}
				continue;
			}
			*close = '\0';
			snprintf(cur, sizeof(cur), "%s", sl_str_trim(s + 1));
			if (section && key == NULL && strcmp(cur, section) == 0) {
				found = line;
				break;
			}
			continue;
		}
		eq = strchr(s, '=');
		if (eq == NULL || eq == s || cur[0] == '\0') {
			if (key == NULL && section == NULL) {
				fprintf(err, "%s:%u: %s\n", path, line,
					cur[0] == '\0' ? "key outside any [section]"
						       : "expected 'key = value'");
				fclose(f);
				return line;
			}
			continue;
		}
		*eq = '\0';
		/* The last occurrence: for a key set twice, that is the offending line. */
		if (section && key && strcmp(cur, section) == 0 && strcmp(sl_str_trim(s), key) == 0)
			found = line;
	}
	fclose(f);
	return found;
}

static unsigned int
line_of(const char *path, const char *section, const char *key)
{
	return scan_file(path, section, key, NULL);
}

/* --- values -------------------------------------------------------------------------------- */

static int
parse_uint(const char *v, uint64_t *out)
{
	char *end;

	if (!isdigit((unsigned char)*v))
		return -EINVAL;
	errno = 0;
	*out = strtoull(v, &end, 0);
	if (errno || *end != '\0')
		return -EINVAL;
	return 0;
}

static void
store_uint(void *base, const struct key_desc *k, uint64_t v)
{
	char *p = (char *)base + k->offset;

	switch (k->size) {
	case sizeof(uint16_t):
		*(uint16_t *)p = (uint16_t)v;
		break;
	case sizeof(uint32_t):
		*(uint32_t *)p = (uint32_t)v;
		break;
	default:
		*(uint64_t *)p = v;
		break;
	}
}

/* Print `file:line: key: <what is wrong>, got '<value>'` and return -1. */
static int
bad_value(const struct sluiced_conf *c, const char *section, const struct key_desc *k,
	  const char *what, const char *value, FILE *err)
{
	fprintf(err, "%s:%u: %s: %s, got '%s'\n", c->path, line_of(c->path, section, k->name),
		k->name, what, value);
	return -1;
}

/* Apply one value of key k to base (the conf or a port conf). 0 or -1 after an error line. */
static int
apply(struct sluiced_conf *c, void *base, const struct key_desc *k, const char *section,
      const char *value, FILE *err)
{
	char what[96];
	uint64_t v;

	switch (k->type) {
	case KEY_STRING:
		if (value[0] == '\0' || strlen(value) >= k->size) {
			snprintf(what, sizeof(what), "must be 1 to %zu characters", k->size - 1);
			return bad_value(c, section, k, what, value, err);
		}
		memcpy((char *)base + k->offset, value, strlen(value) + 1);
		return 0;
	case KEY_UINT:
		if (parse_uint(value, &v) < 0 || v < k->min || v > k->max) {
			snprintf(what, sizeof(what),
				 "expected a whole number in [%" PRIu64 ", %" PRIu64 "]", k->min,
				 k->max);
			return bad_value(c, section, k, what, value, err);
		}
		store_uint(base, k, v * k->scale);
		return 0;
	case KEY_ENUM: {
		size_t vlen = strlen(value);
		unsigned int idx = 0;

		for (const char *ch = k->choices; *ch; idx++) {
			size_t clen = strcspn(ch, "|");

			if (clen == vlen && strncmp(ch, value, clen) == 0) {
				*(unsigned int *)((char *)base + k->offset) = idx;
				return 0;
			}
			ch += clen + (ch[clen] == '|');
		}
		snprintf(what, sizeof(what), "expected one of %s", k->choices);
		return bad_value(c, section, k, what, value, err);
	}
	case KEY_PEER_MAC: {
		struct sluiced_port_conf *p = base;

		p->learn_peer = strcmp(value, "learn") == 0;
		if (!p->learn_peer && (rte_ether_unformat_addr(value, &p->peer_mac) != 0 ||
				       !rte_is_unicast_ether_addr(&p->peer_mac)))
			return bad_value(c, section, k, "expected a unicast MAC address or 'learn'",
					 value, err);
		return 0;
	}
	}
	return -1;
}

static int
apply_defaults(struct sluiced_conf *c, void *base, const char *kind)
{
	for (size_t i = 0; i < SL_ARRAY_SIZE(keys); i++)
		if (strcmp(keys[i].section, kind) == 0 && keys[i].def &&
		    apply(c, base, &keys[i], "", keys[i].def, stderr) < 0)
			return -1;
	return 0;
}

/* Apply every entry of one section; unknown or duplicate keys are errors. */
static int
load_section(struct sluiced_conf *c, struct rte_cfgfile *cfg, const char *section, const char *kind,
	     void *base, FILE *err)
{
	int n = rte_cfgfile_section_num_entries(cfg, section);
	struct rte_cfgfile_entry *e;
	int rc = -1;

	if (n < 0)
		return -1;
	e = calloc((size_t)n + 1, sizeof(*e));
	if (e == NULL)
		return -1;
	n = rte_cfgfile_section_entries(cfg, section, e, n);
	for (int i = 0; i < n; i++) {
		const struct key_desc *k = NULL;

		for (int j = 0; j < i; j++)
			if (strcmp(e[i].name, e[j].name) == 0) {
				fprintf(err, "%s:%u: %s: set twice in [%s]\n", c->path,
					line_of(c->path, section, e[i].name), e[i].name, section);
				goto out;
			}
		for (size_t j = 0; j < SL_ARRAY_SIZE(keys); j++)
			if (strcmp(keys[j].section, kind) == 0 &&
			    strcmp(keys[j].name, e[i].name) == 0)
				k = &keys[j];
		if (k == NULL) {
			fprintf(err, "%s:%u: %s: unknown key in [%s] (see sluiced --help)\n",
				c->path, line_of(c->path, section, e[i].name), e[i].name, section);
			goto out;
		}
		if (apply(c, base, k, section, e[i].value, err) < 0)
			goto out;
	}
	for (size_t j = 0; j < SL_ARRAY_SIZE(keys); j++)
		if (strcmp(keys[j].section, kind) == 0 && keys[j].def == NULL &&
		    !rte_cfgfile_has_entry(cfg, section, keys[j].name)) {
			fprintf(err, "%s:%u: %s: required in [%s]\n", c->path,
				line_of(c->path, section, NULL), keys[j].name, section);
			goto out;
		}
	rc = 0;
out:
	free(e);
	return rc;
}

static int
port_index(const char *section)
{
	char *end;
	long n;

	if (strncmp(section, "port.", 5) != 0 || !isdigit((unsigned char)section[5]))
		return -1;
	n = strtol(section + 5, &end, 10);
	return *end == '\0' && n >= 0 && n < SLUICED_MAX_PORTS ? (int)n : -1;
}

int
sluiced_conf_load(struct sluiced_conf *c, const char *path, FILE *err)
{
	bool seen[SLUICED_MAX_PORTS] = {false};
	struct rte_cfgfile *cfg = NULL;
	char **names = NULL;
	int nsec, rc = -1;
	FILE *f;

	memset(c, 0, sizeof(*c));
	if (strlen(path) >= sizeof(c->path)) {
		fprintf(err, "%s: path too long\n", path);
		return -1;
	}
	strcpy(c->path, path);
	f = fopen(path, "r");
	if (f == NULL) {
		fprintf(err, "%s: cannot open: %s\n", path, strerror(errno));
		return -1;
	}
	fclose(f);
	if (scan_file(path, NULL, NULL, err) != 0)
		return -1;
	cfg = rte_cfgfile_load(path, 0);
	if (cfg == NULL) {
		fprintf(err, "%s: cannot parse (lines longer than %d characters?)\n", path,
			CFG_VALUE_LEN);
		return -1;
	}
	if (apply_defaults(c, c, "sluiced") < 0 || apply_defaults(c, c, "link") < 0 ||
	    apply_defaults(c, c, "traffic") < 0)
		goto out;
	nsec = rte_cfgfile_num_sections(cfg, NULL, 0);
	names = calloc((size_t)nsec + 1, sizeof(*names));
	if (names == NULL)
		goto out;
	for (int i = 0; i < nsec; i++) {
		names[i] = calloc(1, CFG_NAME_LEN);
		if (names[i] == NULL)
			goto out;
	}
	rte_cfgfile_sections(cfg, names, nsec);
	for (int i = 0; i < nsec; i++) {
		int idx = port_index(names[i]);

		if (strcmp(names[i], "sluiced") == 0 || strcmp(names[i], "link") == 0 ||
		    strcmp(names[i], "traffic") == 0) {
			if (load_section(c, cfg, names[i], names[i], c, err) < 0)
				goto out;
			continue;
		}
		if (idx < 0) {
			fprintf(err,
				"%s:%u: [%s]: unknown section (expected [sluiced], [link], "
				"[traffic] "
				"or [port.N])\n",
				path, line_of(path, names[i], NULL), names[i]);
			goto out;
		}
		struct sluiced_port_conf *p = &c->port[idx];

		if (apply_defaults(c, p, "port") < 0 ||
		    load_section(c, cfg, names[i], "port", p, err) < 0)
			goto out;
		snprintf(p->section, sizeof(p->section), "%s", names[i]);
		p->device_line = line_of(path, names[i], "device");
		seen[idx] = true;
	}
	for (unsigned int i = 0; i < SLUICED_MAX_PORTS; i++) {
		if (!seen[i])
			break;
		c->nb_ports = i + 1;
	}
	for (unsigned int i = c->nb_ports; i < SLUICED_MAX_PORTS; i++)
		if (seen[i]) {
			fprintf(err,
				"%s:%u: [port.%u]: port sections must be numbered from 0 without "
				"gaps\n",
				path, line_of(path, c->port[i].section, NULL), i);
			goto out;
		}
	if (c->nb_ports == 0) {
		fprintf(err, "%s:1: [port.0]: no port configured\n", path);
		goto out;
	}
	c->workers_line = line_of(path, "sluiced", "workers");
	c->mbufs_line = line_of(path, "sluiced", "mbufs");
	c->link.line = line_of(path, "link", NULL);
	c->traffic.body_line = line_of(path, "traffic", "body_bytes");
	rc = 0;
out:
	if (names)
		for (int i = 0; names[i]; i++)
			free(names[i]);
	free(names);
	rte_cfgfile_close(cfg);
	return rc;
}
