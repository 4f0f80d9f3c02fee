/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * config.c - sluiced's INI schema, loading and validation.
 *
 * One table (keys[]) describes every key: its section, type, kind of quantity, unit, range,
 * default, what 0 means and help. The same table drives parsing (through lib/common's
 * sl_parse_qty, so rate, size and duration keys also take a unit: rtt_us = 2ms), default
 * values, unknown-key detection and --help; tests/unit/sluiced/test_config.c checks --help and
 * docs/configuration.md against it. rte_cfgfile does the parsing; because it keeps no line numbers,
 * a small scan of the file first checks the syntax line by line and later locates (section, key) so
 * that every error reads `file:line: key: what is wrong`.
 *
 * Comments start with ';' (rte_cfgfile's comment character). Port sections are [port.N],
 * N = 0..SLUICED_MAX_PORTS-1, each naming one DPDK device. [api] serves applications
 * (libsluice); its owner and group are resolved to ids here, so an unknown name is an error
 * of the file, not of the start-up.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cfgfile.h>

#include "config.h"
#include "sl_common.h"
#include "sl_link.h"
#include "sl_parse.h"
#include "sl_str.h"
#include "sl_xport.h"
#include "sluice.h"

#define SL_STR_(x) #x
#define SL_STR(x) SL_STR_(x)

/* Defaults of the libraries, as --help prints them (the asserts keep them true). */
#define SLUICED_LINK_STUCK_MS_QP 250
#define SLUICED_QP_TIMEOUT_MS_DEFAULT 2000
static_assert(SLUICED_LINK_STUCK_MS_QP * SL_NS_PER_MS == SL_LINK_STUCK_NS_TRANSPORT,
	      "[link] stuck_ms: --help states lib/link's setting for a link under a transport");
static_assert(SLUICED_QP_TIMEOUT_MS_DEFAULT * SL_NS_PER_MS == SL_XPORT_QP_TIMEOUT_NS,
	      "[qp] timeout_ms: --help states the endpoint's default");

#define CONF(m) offsetof(struct sluiced_conf, m), sizeof(((struct sluiced_conf *)0)->m)
#define PORT(m) offsetof(struct sluiced_port_conf, m), sizeof(((struct sluiced_port_conf *)0)->m)
#define LINK(m) CONF(link.m)
#define TRAFFIC(m) CONF(traffic.m)
#define QP(m) CONF(qp.m)
#define API(m) CONF(api.m)
#define EC(m) CONF(ec.m)

/* A whole-number key: member, kind, base units per unit of the key, [lo, hi] in that unit. */
#define UINT(sec, key, member, qty, scale, lo, hi, def, zero, help)                                \
	{                                                                                          \
		sec, key, SLUICED_KEY_UINT, member, qty, scale, lo, hi, NULL, def, help, zero      \
	}
#define COUNT(sec, key, member, lo, hi, def, zero, help)                                           \
	{                                                                                          \
		sec, key, SLUICED_KEY_UINT, member, SL_QTY_COUNT, 1, lo, hi, NULL, def, help, zero \
	}
#define STRING(sec, key, member, def, help)                                                        \
	{                                                                                          \
		sec, key, SLUICED_KEY_STRING, member, SL_QTY_COUNT, 0, 0, 0, NULL, def, help, NULL \
	}
#define ENUM(sec, key, member, choices, def, help)                                                 \
	{                                                                                          \
		sec, key, SLUICED_KEY_ENUM, member, SL_QTY_COUNT, 0, 0, 0, choices, def, help,     \
			NULL                                                                       \
	}

static const struct sluiced_key keys[] = {
	{"sluiced", "name", SLUICED_KEY_STRING, CONF(name), SL_QTY_COUNT, 0, 0, 0, NULL, "sluiced",
	 "host name shown in telemetry and reports", NULL},
	COUNT("sluiced", "workers", CONF(workers), 0, 64, "0", "everything runs on the main lcore",
	      "worker lcores, one RX/TX queue pair (lane) per port each"),
	COUNT("sluiced", "mbufs", CONF(mbufs), 0, 16777215, "0",
	      "sized from what the lanes hold (replay rings, flow-control buffers, NIC rings)",
	      "mbufs in each packet pool"),
	COUNT("sluiced", "mbuf_cache", CONF(mbuf_cache), 0, 512, "256", NULL,
	      "per-lcore mempool cache, mbufs"),
	UINT("sluiced", "mbuf_data_room", CONF(mbuf_data_room), SL_QTY_BYTES, 1, 256, 65535, "2176",
	     NULL, "data room per mbuf, headroom included"),
	UINT("sluiced", "peer_timeout_ms", CONF(peer_timeout_ns), SL_QTY_NS, SL_NS_PER_MS, 1,
	     600000, "500", NULL, "the peer is reported down after this long without a frame"),
	ENUM("link", "reliability", LINK(reliability), "link|end-to-end", "link",
	     "link: RIFL replay under the transport; end-to-end: the link only verifies (needs "
	     "extended), the transport recovers every loss"),
	ENUM("link", "mode", LINK(mode), "faithful|extended", "faithful",
	     "faithful: frame ID implicit (RIFL); extended: explicit 32-bit ID, rings up to 2^20"),
	ENUM("link", "vcode_scope", LINK(vcode_scope), "header|frame", "header",
	     "bytes VCODE covers: link + transport header (the FCS covers the rest) or the whole "
	     "frame"),
	ENUM("link", "replay", LINK(replay), "ring|missing", "ring",
	     "replay the whole ring (RIFL) or from the first missing frame (extended mode only)"),
	COUNT("link", "ring_order", LINK(ring_order), 0, SL_LINK_ORDER_MAX_EXTENDED, "0",
	      "sized from rate_mbps x rtt_us (RIFL's rule)",
	      "replay ring of 2^k frames; the link mode bounds k (an error names the limits)"),
	UINT("link", "rate_mbps", LINK(rate_bps), SL_QTY_BPS, SL_BPS_PER_MBPS, 1, 400000, "10000",
	     NULL,
	     "the port's line rate: sizes the ring and the flow-control buffer, and is the link "
	     "the queue pairs' pacer shares among them (no QP sends faster)"),
	UINT("link", "rtt_us", LINK(rtt_ns), SL_QTY_NS, SL_NS_PER_US, 1, 1000000, "1000", NULL,
	     "round-trip time assumed when sizing"),
	UINT("link", "sizing_frame_bytes", LINK(sizing_frame_bytes), SL_QTY_BYTES, 1, 60, 9018,
	     "1024", NULL, "frame size assumed when sizing"),
	COUNT("link", "fc_frames", LINK(fc_frames), 0, 1048576, "0",
	      SL_STR(SL_LINK_FC_RTTS) " x rate x RTT (RIFL asks at least 1.5 x)",
	      "flow-control buffer S_FC, frames"),
	COUNT("link", "fc_on_frames", LINK(fc_on_frames), 0, 1048576, "0", "2/3 of S_FC",
	      "send pause at this many undelivered frames"),
	COUNT("link", "fc_off_frames", LINK(fc_off_frames), 0, 1048576, "0", "1/3 of S_FC",
	      "send resume at this many undelivered frames"),
	UINT("link", "keepalive_us", LINK(keepalive_ns), SL_QTY_NS, SL_NS_PER_US, 1, 10000000,
	     "100", NULL,
	     "send an IDLE frame after this long without sending (bounds loss detection)"),
	UINT("link", "ctrl_interval_us", LINK(ctrl_interval_ns), SL_QTY_NS, SL_NS_PER_US, 1,
	     1000000, "1000", NULL,
	     "gap between runs of control frames (a NACK run is repeated sooner: after the "
	     "answer time measured on earlier episodes)"),
	UINT("link", "stuck_ms", LINK(stuck_ns), SL_QTY_NS, SL_NS_PER_MS, 0, 600000, "0",
	     "never with [traffic]; " SL_STR(SLUICED_LINK_STUCK_MS_QP) " ms with [qp]",
	     "an episode with nothing verified this long re-initializes the link (its rings' "
	     "frames are lost)"),
	ENUM("traffic", "mode", TRAFFIC(mode), "off|send|check|both", "off",
	     "link test traffic: generate payloads, check the peer's, or both"),
	UINT("traffic", "body_bytes", TRAFFIC(body_bytes), SL_QTY_BYTES, 1, 44, 9000, "1024", NULL,
	     "test payload size (the link body)"),
	UINT("traffic", "rate_mbps", TRAFFIC(rate_bps), SL_QTY_BPS, SL_BPS_PER_MBPS, 0, 400000, "0",
	     "as fast as the link takes them", "generator rate in payload bits"),
	COUNT("traffic", "frames", TRAFFIC(frames), 0, UINT64_C(1) << 48, "0", "until stopped",
	      "payloads to generate per lane"),
	UINT("traffic", "consume_mbps", TRAFFIC(consume_bps), SL_QTY_BPS, SL_BPS_PER_MBPS, 0,
	     400000, "0", "unthrottled",
	     "checker consumption rate in payload bits (a slow receiver)"),
	COUNT("qp", "count", QP(count), 0, 4096, "0", "no queue pairs",
	      "queue pairs per port, QPN 0..count-1, each talking to the peer's QP of the same "
	      "number; lane q of a port carries the QPNs with qpn % lanes == q"),
	{"qp", "proto", SLUICED_KEY_STRING, QP(proto), SL_QTY_COUNT, 0, 0, 0, NULL, "dcqcn",
	 "transport program (drivers/proto), or a comma-separated list: QPN i runs the (i mod "
	 "n)-th; "
	 "both hosts must name the same; an error lists the programs",
	 NULL},
	ENUM("qp", "recv", QP(recv), "melo|gbn|ec", "melo",
	     "receiver: MELO selective (bits pool, reorder), RoCE go-back-N, or the "
	     "endpoint-congestion target of [ec] (go-back-N into a host queue drained at "
	     "drain_mbps; run dack, opt or aimd over it)"),
	UINT("qp", "seg_bytes", QP(seg_bytes), SL_QTY_BYTES, 1, 1, 9000, "1024", NULL,
	     "payload bytes per packet; with the transport header it must fit one mbuf"),
	UINT("qp", "msg_min_bytes", QP(msg_min_bytes), SL_QTY_BYTES, 1, 1, 1073741824, "4096", NULL,
	     "smallest message; sizes are log-uniform in [msg_min_bytes, msg_max_bytes]"),
	UINT("qp", "msg_max_bytes", QP(msg_max_bytes), SL_QTY_BYTES, 1, 1, 1073741824, "4096", NULL,
	     "largest message (= msg_min_bytes: one size)"),
	COUNT("qp", "msgs", QP(msgs), 0, UINT64_C(1) << 48, "0", "until stopped",
	      "messages each sending QP posts"),
	ENUM("qp", "direction", QP(direction), "send|recv|both", "both",
	     "each QP posts messages, checks the peer's, or both (the peer's QPs must match)"),
	ENUM("qp", "check", QP(check), "no|yes", "yes",
	     "compare every received byte with the pattern (no: lengths and order only)"),
	UINT("qp", "rate_mbps", QP(rate_bps), SL_QTY_BPS, SL_BPS_PER_MBPS, 0, 400000, "0", NULL,
	     "initial rate of rate programs (dcqcn, ...); 0 = the QP's rate limit "
	     "(rate_limit_mbps, by default the link's rate_mbps): DCQCN starts at the line rate"),
	{"qp", "rate_limit_mbps", SLUICED_KEY_STRING, QP(rate_limit), SL_QTY_COUNT, 0, 0, 0, NULL,
	 "0",
	 "each QP's rate limit in wire bits (headers, FCS, preamble and gap included), or a "
	 "comma-separated list (QPN i takes the (i mod n)-th): its packets leave at most this "
	 "fast whatever its program, window programs included; 0 = the link's rate_mbps; ndp "
	 "takes none (its receiver's PULLs pace it)",
	 NULL},
	COUNT("qp", "window_pkts", QP(window_pkts), 64, 4096, "128", NULL,
	      "sender and receiver window, packets, a power of two"),
	UINT("qp", "pace_catchup_us", QP(catchup_ns), SL_QTY_NS, SL_NS_PER_US, 0, 1000000, "10000",
	     NULL,
	     "how far behind its rate a QP may fall and still catch up, back to back, when the "
	     "lane's lcore was away (descheduled); the lane's pacer, so [api] QPs too; 0 = never"),
	ENUM("qp", "line_bypass", QP(line_bypass), "no|yes", "yes",
	     "a QP whose rate is the line's (an uncongested rate program, a window program with "
	     "no limit below the line) skips the pacer: the link keeps the line rate; the lane's "
	     "pacer, so [api] QPs too; no = the pacer times every packet of every QP"),
	UINT("qp", "rto_us", QP(rto_ns), SL_QTY_NS, SL_NS_PER_US, 1, 10000000, "1000", NULL,
	     "initial retransmission timeout (under the reliable link only a stalled peer "
	     "makes it fire)"),
	UINT("qp", "timeout_ms", QP(timeout_ns), SL_QTY_NS, SL_NS_PER_MS, 0, 3600000, "0",
	     "the endpoint's default (" SL_STR(SLUICED_QP_TIMEOUT_MS_DEFAULT) " ms)",
	     "a QP that has messages out and nothing acknowledged for this long fails: its "
	     "messages complete as failed and it sends no more"),
	COUNT("qp", "seed", QP(seed), 0, UINT64_MAX, "1", NULL,
	      "message sizes and content; both hosts must use the same"),
	{"qp", "params", SLUICED_KEY_STRING, QP(params), SL_QTY_COUNT, 0, 0, 0, NULL, "0",
	 "program parameters param[0..3] as up to 4 comma-separated whole numbers, the same for "
	 "every QP, each meaning what the program's header says (irn: 0,RTO_low_ns,RTO_high_ns); "
	 "0 = the program's default",
	 NULL},
	ENUM("ec", "policy", EC(policy), "dack|opt|aimd|timeout", "dack",
	     "the target with [qp] recv = ec: dack sends DACKs and holds IACKs while its queue is "
	     "above threshold_bytes (Chong and Krishnan, section II.D); opt and aimd are a plain "
	     "go-back-N target; timeout never NACKs. The senders' program is [qp] proto (timeout: "
	     "opt)"),
	UINT("ec", "drain_mbps", EC(drain_bps), SL_QTY_BPS, SL_BPS_PER_MBPS, 0, 400000, "0",
	     "the link's rate_mbps",
	     "the host takes packets from the target queue at this rate of wire bits (the paper's "
	     "r x link rate)"),
	UINT("ec", "queue_bytes", EC(queue_bytes), SL_QTY_BYTES, 1, 64, 1073741824, "82944", NULL,
	     "the target queue (the receiving NIC's buffer, shared by the QPs of a lane), frame "
	     "bytes from the transport header on"),
	UINT("ec", "threshold_bytes", EC(threshold_bytes), SL_QTY_BYTES, 1, 1, 1073741824, "9216",
	     NULL, "congested above this occupancy; below queue_bytes"),
	ENUM("ec", "iack_at", EC(iack_at), "accept|process", "accept",
	     "not congested: IACK a packet when the queue accepts it or once the host has "
	     "processed it (the paper leaves it open)"),
	UINT("ec", "fair_period_us", EC(fair_period_ns), SL_QTY_NS, SL_NS_PER_US, 0, 1000000, "0",
	     "no fairness knobs",
	     "fairness sampling period: the fastest QPs' IACKs coalesced, the slowest's DACKs "
	     "thinned"),
	COUNT("ec", "fair_ratio_pct", EC(fair_ratio_pct), 100, 100000, "150", NULL,
	      "fairness: a QP above this % of the slowest's accepted packets counts as fast"),
	ENUM("api", "enable", API(enable), "no|yes", "no",
	     "serve applications (libsluice) on port 0's lanes: their links' peer is their "
	     "peer host"),
	STRING("api", "socket", API(socket), SL_SOCKET_DEFAULT,
	       "the control socket applications attach to (its directory is created, 0755)"),
	STRING("api", "mode", API(mode), "0660", "the socket file's mode, octal"),
	STRING("api", "owner", API(owner), "-",
	       "the socket file's owner, a user name (- = the daemon's user)"),
	STRING("api", "group", API(group), "-",
	       "the socket file's group, a group name (- = the daemon's group): with mode 0660, "
	       "its members may attach"),
	STRING("api", "allow_users", API(allow_users), "-",
	       "users (names or uids, comma-separated, at most 16) who may attach; with "
	       "allow_groups, a client must be in one or the other (refused: EACCES); - = "
	       "whoever the socket file's mode lets connect"),
	STRING("api", "allow_groups", API(allow_groups), "-",
	       "groups (names or gids, comma-separated, at most 16) whose members (primary or "
	       "supplementary group) may attach; see allow_users"),
	COUNT("api", "qps", API(qps), 1, 4096, "64", NULL,
	      "application QPs at once, numbered after [qp]'s: QPN [qp] count .. count + qps - 1"),
	COUNT("api", "clients", API(clients), 1, 1024, "16", NULL,
	      "applications attached at once; one more is refused (EMFILE)"),
	COUNT("api", "mrs", API(mrs), 1, 65535, "4096", NULL,
	      "memory regions, all applications together"),
	COUNT("api", "cqs", API(cqs), 1, 65536, "256", NULL,
	      "completion queues, all applications together"),
	COUNT("api", "client_mrs", API(client_mrs), 0, 65535, "0", "a quarter of mrs, at least 1",
	      "memory regions one application may hold; one more is refused (EDQUOT)"),
	UINT("api", "client_mr_bytes", API(client_mr_bytes), SL_QTY_BYTES, 1, 1, UINT64_C(1) << 40,
	     "17179869184", NULL,
	     "the sum of one application's memory region lengths (a region over another counts "
	     "again); past it MR_REG is refused (EDQUOT). The default is the largest memory an "
	     "application may share, once"),
	COUNT("api", "client_cqs", API(client_cqs), 0, 65536, "0", "a quarter of cqs, at least 1",
	      "completion queues one application may hold; one more is refused (EDQUOT)"),
	COUNT("api", "client_qps", API(client_qps), 0, 4096, "0", "a quarter of qps, at least 1",
	      "QPs one application may hold; one more is refused (EDQUOT)"),
	COUNT("api", "uid_clients", API(uid_clients), 0, 1024, "0", "clients (no limit per user)",
	      "applications of one user (the connecting process's uid) at once; one more is "
	      "refused at connect (EDQUOT). Set it (a quarter of clients, say) where users "
	      "share the daemon; the default leaves it to clients, since the common host runs "
	      "every application as one user"),
	UINT("api", "hello_timeout_ms", API(hello_timeout_ns), SL_QTY_NS, SL_NS_PER_MS, 1, 3600000,
	     "1000", NULL,
	     "a connection that has not completed HELLO this long after it was accepted is "
	     "closed (it would hold a client slot)"),
	STRING("api", "program", API(program), "dcqcn",
	       "transport program of a QP that names none (an error lists the programs)"),
	UINT("api", "seg_bytes", API(seg_bytes), SL_QTY_BYTES, 1, 0, 9000, "0",
	     "[qp] seg_bytes when [qp] has QPs or sets it, else 4096",
	     "payload bytes per packet of application QPs; with the transport header it must fit "
	     "one mbuf, like [qp] seg_bytes"),
	UINT("api", "rto_us", API(rto_ns), SL_QTY_NS, SL_NS_PER_US, 1, 10000000, "1000", NULL,
	     "application QPs' initial retransmission timeout (under the reliable link only a "
	     "stalled peer makes it fire: set it well above the link's recovery, e.g. 1s)"),
	UINT("api", "timeout_ms", API(timeout_ns), SL_QTY_NS, SL_NS_PER_MS, 0, 3600000, "0",
	     "the endpoint's default (" SL_STR(SLUICED_QP_TIMEOUT_MS_DEFAULT) " ms)",
	     "an application QP with work out and nothing acknowledged for this long fails: its "
	     "work requests complete with a retry-exceeded error"),
	UINT("api", "stash_bytes", API(stash_bytes), SL_QTY_BYTES, 1, 0, 1073741824, "16777216",
	     "none: a SEND without a posted RECV is refused for now (RNR) until one is",
	     "SEND payloads held until their RECV is posted, per lane"),
	UINT("api", "stash_qp_bytes", API(stash_qp_bytes), SL_QTY_BYTES, 1, 0, 1073741824, "0",
	     "all of stash_bytes",
	     "of stash_bytes, what one QP may hold (counted in 256-byte chunks); a SEND past it is "
	     "refused for now (stash_qp_refused; RNR: sent again after a backoff)"),
	UINT("api", "client_stash_bytes", API(client_stash_bytes), SL_QTY_BYTES, 1, 0, 1073741824,
	     "0", "a quarter of stash_bytes",
	     "of each lane's stash_bytes, what one application's QPs there may hold together; a "
	     "SEND past it is refused for now (stash_client_refused; RNR), so that an "
	     "application that never posts RECVs leaves the rest to the others"),
	{"port", "device", SLUICED_KEY_STRING, PORT(device), SL_QTY_COUNT, 0, 0, 0, NULL, NULL,
	 "DPDK device name: a PCI address or the name given to --vdev (net_af_xdp0, ...)", NULL},
	{"port", "peer_mac", SLUICED_KEY_PEER_MAC, 0, 0, SL_QTY_COUNT, 0, 0, 0, NULL, "learn",
	 "the MAC frames go to (the peer's, or the router's on the way): an address, 'learn' to "
	 "take it from the first valid frame, or 'resolve' to ask by ARP (encap = udp over "
	 "IPv4: for gateway, else peer_ip)",
	 NULL},
	ENUM("port", "encap", PORT(encap), "ethernet|udp", "ethernet",
	     "what carries the link frames: 'ethernet' (EtherType 0x88B5, one cable to one peer) "
	     "or 'udp' (IPv4 or IPv6 and UDP, routable, ECN from the path: docs/wire-format.md "
	     "section 1)"),
	{"port", "local_ip", SLUICED_KEY_IP, PORT(local_ip), SL_QTY_COUNT, 0, 0, 0, NULL, "none",
	 "encap = udp: this port's IPv4 or IPv6 address (the daemon's own, not the kernel "
	 "interface's: a kernel that owned it would answer the frames too)",
	 NULL},
	{"port", "peer_ip", SLUICED_KEY_IP, PORT(peer_ip), SL_QTY_COUNT, 0, 0, 0, NULL, "none",
	 "encap = udp: the peer's address, of local_ip's family; frames from any other are "
	 "dropped (rx_drop_encap_ip_src)",
	 NULL},
	{"port", "gateway", SLUICED_KEY_IP, PORT(gateway), SL_QTY_COUNT, 0, 0, 0, NULL, "none",
	 "encap = udp: the router frames to peer_ip go through, of local_ip's family ('none': "
	 "the peer is on local_ip's subnet); with peer_mac = resolve, whose MAC ARP asks for",
	 NULL},
	COUNT("port", "udp_port", PORT(udp_port), 1, 65535, "4793", NULL,
	      "encap = udp: the UDP destination port both ends use"),
	COUNT("port", "rx_desc", PORT(rx_desc), 64, 32768, "256", NULL,
	      "RX descriptors per queue: keep their drain time well inside the replay ring's "
	      "lifetime (docs/link.md, Rate)"),
	COUNT("port", "tx_desc", PORT(tx_desc), 64, 32768, "1024", NULL,
	      "TX descriptors per queue"),
};

const struct sluiced_key *
sluiced_conf_keys(size_t *n)
{
	*n = SL_ARRAY_SIZE(keys);
	return keys;
}

/* What a value of k may be, in base units. */
static struct sl_parse_spec
key_spec(const struct sluiced_key *k)
{
	return (struct sl_parse_spec){.qty = k->qty,
				      .unit = k->scale,
				      .min = k->min * k->scale,
				      .max = k->max * k->scale};
}

/* The rules of k: its range and units, its choices, what 0 means. snprintf's count. */
static int
rules(const struct sluiced_key *k, char *buf, size_t len)
{
	const char *unit = sl_parse_unit_name(k->qty, k->scale);

	if (k->type == SLUICED_KEY_ENUM)
		return snprintf(buf, len, "; one of %s", k->choices);
	if (k->type != SLUICED_KEY_UINT)
		return snprintf(buf, len, "%s", "");
	return snprintf(buf, len, "; %" PRIu64 "..%" PRIu64 "%s%s%s%s%s%s", k->min, k->max,
			unit ? " " : "", unit ? unit : "",
			k->qty != SL_QTY_COUNT ? ", or with a unit: " : "",
			k->qty != SL_QTY_COUNT ? sl_parse_units(k->qty) : "",
			k->zero ? "; 0 = " : "", k->zero ? k->zero : "");
}

/* text on lines of at most HELP_COLUMNS, each indented by indent spaces, broken at blanks. */
#define HELP_COLUMNS 100
static void
print_wrapped(FILE *out, const char *text, int indent)
{
	while (*text) {
		int room = HELP_COLUMNS - indent, n = (int)strlen(text);

		if (n > room) {
			n = room;
			while (n > 0 && text[n] != ' ')
				n--;
			if (n == 0)
				n = (int)strcspn(text, " ");
		}
		fprintf(out, "%*s%.*s\n", indent, "", n, text);
		text += n;
		text += *text == ' ';
	}
}

void
sluiced_conf_print_keys(FILE *out)
{
	const char *section = "";

	for (size_t i = 0; i < SL_ARRAY_SIZE(keys); i++) {
		const struct sluiced_key *k = &keys[i];
		char text[512];
		int n;

		if (strcmp(section, k->section) != 0) {
			section = k->section;
			if (strcmp(section, "port") == 0)
				fprintf(out, "\n  [port.N]  (N = 0..%d, one section per port)\n",
					SLUICED_MAX_PORTS - 1);
			else
				fprintf(out, "\n  [%s]\n", section);
		}
		fprintf(out, "    %s = %s\n", k->name, k->def ? k->def : "(required)");
		n = snprintf(text, sizeof(text), "%s", k->help);
		rules(k, text + n, sizeof(text) - (size_t)n);
		print_wrapped(out, text, 8);
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

static void
store_uint(void *base, const struct sluiced_key *k, uint64_t v)
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
bad_value(const struct sluiced_conf *c, const char *section, const struct sluiced_key *k,
	  const char *what, const char *value, FILE *err)
{
	fprintf(err, "%s:%u: %s: %s, got '%s'\n", c->path, line_of(c->path, section, k->name),
		k->name, what, value);
	return -1;
}

/* Apply one value of key k to base (the conf or a port conf). 0 or -1 after an error line. */
static int
apply(struct sluiced_conf *c, void *base, const struct sluiced_key *k, const char *section,
      const char *value, FILE *err)
{
	char what[SL_PARSE_WHY_MAX];
	uint64_t v;

	switch (k->type) {
	case SLUICED_KEY_STRING:
		if (value[0] == '\0' || strlen(value) >= k->size) {
			snprintf(what, sizeof(what), "must be 1 to %zu characters", k->size - 1);
			return bad_value(c, section, k, what, value, err);
		}
		memcpy((char *)base + k->offset, value, strlen(value) + 1);
		return 0;
	case SLUICED_KEY_UINT: {
		const struct sl_parse_spec spec = key_spec(k);

		if (sl_parse_qty(value, &spec, &v, what, sizeof(what)) < 0)
			return bad_value(c, section, k, what, value, err);
		store_uint(base, k, v);
		return 0;
	}
	case SLUICED_KEY_ENUM: {
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
	case SLUICED_KEY_IP: {
		struct sluiced_ip *ip = (struct sluiced_ip *)((char *)base + k->offset);

		memset(ip, 0, sizeof(*ip));
		if (strcmp(value, "none") == 0)
			return 0;
		if (inet_pton(AF_INET, value, ip->addr) == 1)
			ip->family = 4;
		else if (inet_pton(AF_INET6, value, ip->addr) == 1)
			ip->family = 6;
		else
			return bad_value(c, section, k,
					 "expected an IPv4 or IPv6 address or 'none'", value, err);
		return 0;
	}
	case SLUICED_KEY_PEER_MAC: {
		struct sluiced_port_conf *p = base;

		p->peer_mode = strcmp(value, "learn") == 0     ? SL_DP_PEER_LEARN
			       : strcmp(value, "resolve") == 0 ? SL_DP_PEER_RESOLVE
							       : SL_DP_PEER_STATIC;
		if (p->peer_mode == SL_DP_PEER_STATIC &&
		    (rte_ether_unformat_addr(value, &p->peer_mac) != 0 ||
		     !rte_is_unicast_ether_addr(&p->peer_mac)))
			return bad_value(c, section, k,
					 "expected a unicast MAC address, 'learn' or 'resolve'",
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
		const struct sluiced_key *k = NULL;

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

/* `file:line: key: no transport program 'name' (programs: ...)` */
static void
no_program(const struct sluiced_conf *c, const char *section, const char *key, const char *name,
	   FILE *err)
{
	char names[512] = "";
	size_t len = 0;

	for (unsigned int i = 0; i < sl_proto_count() && len < sizeof(names); i++)
		len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s", i ? ", " : "",
					sl_proto_at(i)->name);
	fprintf(err, "%s:%u: %s: no transport program '%s' (programs: %s)\n", c->path,
		line_of(c->path, section, key), key, name, names);
}

/* Every program of [qp] proto's list, by name, into c->qp.proto_name. 0 or -1 after an error. */
static int
parse_protos(struct sluiced_conf *c, FILE *err)
{
	struct sluiced_qp_conf *q = &c->qp;
	char list[sizeof(q->proto)], *save = NULL;

	snprintf(list, sizeof(list), "%s", q->proto);
	q->nb_protos = 0;
	for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *name = sl_str_trim(tok);

		if (sl_proto_find(name) == NULL) {
			no_program(c, "qp", "proto", name, err);
			return -1;
		}
		if (q->nb_protos == SLUICED_QP_PROTOS_MAX) {
			fprintf(err, "%s:%u: proto: more than %d programs in the list\n", c->path,
				line_of(c->path, "qp", "proto"), SLUICED_QP_PROTOS_MAX);
			return -1;
		}
		snprintf(q->proto_name[q->nb_protos++], sizeof(q->proto_name[0]), "%s", name);
	}
	if (q->nb_protos == 0) {
		fprintf(err, "%s:%u: proto: no program named, got '%s'\n", c->path,
			line_of(c->path, "qp", "proto"), q->proto);
		return -1;
	}
	return 0;
}

/* [qp] params: up to four whole numbers into c->qp.param. 0 or -1 after an error. */
static int
parse_params(struct sluiced_conf *c, FILE *err)
{
	struct sluiced_qp_conf *q = &c->qp;
	char list[sizeof(q->params)], *save = NULL, why[SL_PARSE_WHY_MAX];
	unsigned int n = 0;

	snprintf(list, sizeof(list), "%s", q->params);
	memset(q->param, 0, sizeof(q->param));
	for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == SL_ARRAY_SIZE(q->param)) {
			fprintf(err, "%s:%u: params: at most %zu numbers, got '%s'\n", c->path,
				line_of(c->path, "qp", "params"), SL_ARRAY_SIZE(q->param),
				q->params);
			return -1;
		}
		if (sl_parse_u64(sl_str_trim(tok), 0, UINT64_MAX, &q->param[n++], why,
				 sizeof(why)) < 0) {
			fprintf(err, "%s:%u: params: %s, got '%s'\n", c->path,
				line_of(c->path, "qp", "params"), why, q->params);
			return -1;
		}
	}
	return 0;
}

/* [qp] rate_limit_mbps: rates (Mbit/s without a unit) into c->qp.rate_limit_bps. 0 or -1. */
static int
parse_limits(struct sluiced_conf *c, FILE *err)
{
	static const struct sl_parse_spec spec = {
		.qty = SL_QTY_BPS, .unit = SL_BPS_PER_MBPS, .max = 400 * SL_BPS_PER_GBPS};
	struct sluiced_qp_conf *q = &c->qp;
	char list[sizeof(q->rate_limit)], *save = NULL, why[SL_PARSE_WHY_MAX];
	unsigned int line = line_of(c->path, "qp", "rate_limit_mbps");

	snprintf(list, sizeof(list), "%s", q->rate_limit);
	q->nb_limits = 0;
	for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t *v = &q->rate_limit_bps[q->nb_limits];

		if (q->nb_limits == SLUICED_QP_LIMITS_MAX) {
			fprintf(err, "%s:%u: rate_limit_mbps: more than %d rates in the list\n",
				c->path, line, SLUICED_QP_LIMITS_MAX);
			return -1;
		}
		if (sl_parse_qty(sl_str_trim(tok), &spec, v, why, sizeof(why)) < 0) {
			fprintf(err, "%s:%u: rate_limit_mbps: %s, got '%s'\n", c->path, line, why,
				sl_str_trim(tok));
			return -1;
		}
		if (*v && *v < SL_PACER_RATE_MIN_BPS) {
			fprintf(err, "%s:%u: rate_limit_mbps: %s is below the pacer's 100 Kbps\n",
				c->path, line, sl_str_trim(tok));
			return -1;
		}
		q->nb_limits++;
	}
	if (q->nb_limits == 0) {
		fprintf(err, "%s:%u: rate_limit_mbps: no rate named, got '%s'\n", c->path, line,
			q->rate_limit);
		return -1;
	}
	return 0;
}

/* A section's QP timeout must be above its RTO. 0 or -1 after an error. */
static int
check_timeout(const struct sluiced_conf *c, const char *section, uint64_t rto_ns,
	      uint64_t timeout_ns, FILE *err)
{
	uint64_t t_ns = timeout_ns ? timeout_ns : SL_XPORT_QP_TIMEOUT_NS;

	if (t_ns > rto_ns)
		return 0;
	fprintf(err,
		"%s:%u: timeout_ms: %" PRIu64 " ms%s is not above rto_us = %" PRIu64
		" us: a QP would fail before its first retransmission\n",
		c->path, line_of(c->path, section, timeout_ns ? "timeout_ms" : "rto_us"),
		t_ns / SL_NS_PER_MS, timeout_ns ? "" : " (the default)", rto_ns / SL_NS_PER_US);
	return -1;
}

/* [qp] as a whole: the rules no single key states. 0 or -1 after an error. */
static int
check_qp(struct sluiced_conf *c, FILE *err)
{
	static const char *const modes[] = {"off", "send", "check", "both"};
	struct sluiced_qp_conf *q = &c->qp;

	q->count_line = line_of(c->path, "qp", "count");
	q->seg_line = line_of(c->path, "qp", "seg_bytes");
	if (parse_protos(c, err) < 0 || parse_params(c, err) < 0 || parse_limits(c, err) < 0)
		return -1;
	if (q->window_pkts & (q->window_pkts - 1)) {
		fprintf(err, "%s:%u: window_pkts: must be a power of two, got '%u'\n", c->path,
			line_of(c->path, "qp", "window_pkts"), q->window_pkts);
		return -1;
	}
	if (q->msg_min_bytes > q->msg_max_bytes) {
		fprintf(err, "%s:%u: msg_max_bytes: %u is below msg_min_bytes = %u\n", c->path,
			line_of(c->path, "qp", "msg_max_bytes"), q->msg_max_bytes,
			q->msg_min_bytes);
		return -1;
	}
	if (check_timeout(c, "qp", q->rto_ns, q->timeout_ns, err) < 0)
		return -1;
	if (q->recv == SL_XPORT_RECV_EC && c->ec.threshold_bytes >= c->ec.queue_bytes) {
		fprintf(err, "%s:%u: threshold_bytes: %u is not below queue_bytes = %u\n", c->path,
			line_of(c->path, "ec", "threshold_bytes"), c->ec.threshold_bytes,
			c->ec.queue_bytes);
		return -1;
	}
	if (q->count && c->traffic.mode != SLUICED_TRAFFIC_OFF) {
		fprintf(err,
			"%s:%u: count: queue pairs and link test traffic cannot both run "
			"([traffic] mode = %s): a lane carries one or the other\n",
			c->path, q->count_line, modes[c->traffic.mode]);
		return -1;
	}
	return 0;
}

/*
 * [api] key (allow_users, or allow_groups when groups) resolved into ids[] and *n: names or
 * numbers, comma-separated; "-" is none. 0 or -1 after an error.
 */
static int
parse_allow(const struct sluiced_conf *c, const char *key, const char *list, bool groups,
	    uint32_t *ids, uint32_t *n, FILE *err)
{
	char buf[256], *save = NULL;
	unsigned line = line_of(c->path, "api", key);

	*n = 0;
	if (strcmp(list, "-") == 0)
		return 0;
	snprintf(buf, sizeof(buf), "%s", list);
	for (char *tok = strtok_r(buf, ", ", &save); tok != NULL;
	     tok = strtok_r(NULL, ", ", &save)) {
		const struct passwd *pw = groups ? NULL : getpwnam(tok);
		const struct group *gr = groups ? getgrnam(tok) : NULL;
		uint64_t id;

		if (*n == SLUICED_API_ALLOW_MAX) {
			fprintf(err, "%s:%u: %s: at most %u entries\n", c->path, line, key,
				SLUICED_API_ALLOW_MAX);
			return -1;
		}
		if (pw != NULL || gr != NULL)
			id = pw != NULL ? pw->pw_uid : gr->gr_gid;
		else if (sl_parse_u64(tok, 0, UINT32_MAX - 1, &id, NULL, 0) < 0) {
			fprintf(err, "%s:%u: %s: no %s '%s' on this host\n", c->path, line, key,
				groups ? "group" : "user", tok);
			return -1;
		}
		ids[(*n)++] = (uint32_t)id;
	}
	if (*n == 0) {
		fprintf(err, "%s:%u: %s: empty (- for none)\n", c->path, line, key);
		return -1;
	}
	return 0;
}

/* One application's share of a pool of n by default: a quarter, at least 1. */
static uint32_t
share(uint32_t n)
{
	return n / 4 ? n / 4 : 1;
}

/* [api] as a whole: mode, owner and group resolved, the program known. 0 or -1 after an error. */
/*
 * A port's encapsulation and its addresses agree: UDP needs both addresses, of one family, and
 * the point-to-point Ethernet encapsulation has none. 0, or -1 after a `file:line:` message.
 */
static int
check_encap(const struct sluiced_conf *c, const struct sluiced_port_conf *p, FILE *err)
{
	const char *why = NULL, *key = "encap";

	if (p->encap == SLUICED_ENCAP_ETHERNET) {
		key = p->local_ip.family                   ? "local_ip"
		      : p->peer_ip.family                  ? "peer_ip"
		      : p->gateway.family                  ? "gateway"
		      : p->peer_mode == SL_DP_PEER_RESOLVE ? "peer_mac"
							   : NULL;
		why = key ? "needs encap = udp" : NULL;
	} else if (!p->local_ip.family || !p->peer_ip.family) {
		why = "udp needs local_ip and peer_ip";
	} else if (p->local_ip.family != p->peer_ip.family) {
		key = "peer_ip";
		why = "not of local_ip's family";
	} else if (memcmp(p->local_ip.addr, p->peer_ip.addr, sizeof(p->local_ip.addr)) == 0) {
		key = "peer_ip";
		why = "the same address as local_ip";
	} else if (p->gateway.family && p->gateway.family != p->local_ip.family) {
		key = "gateway";
		why = "not of local_ip's family";
	} else if (p->peer_mode == SL_DP_PEER_RESOLVE && p->local_ip.family != 4) {
		key = "peer_mac";
		why = "resolve asks by ARP, IPv4 only: give the next hop's MAC over IPv6";
	}
	if (why == NULL)
		return 0;
	fprintf(err, "%s:%u: %s: %s\n", c->path, line_of(c->path, p->section, key), key, why);
	return -1;
}

static int
check_api(struct sluiced_conf *c, FILE *err)
{
	static const char *const modes[] = {"off", "send", "check", "both"};
	struct sluiced_api_conf *a = &c->api;
	const struct passwd *pw;
	const struct group *gr;
	unsigned long mode;
	char *end;

	a->line = line_of(c->path, "api", NULL);
	a->seg_line = line_of(c->path, "api", "seg_bytes");
	errno = 0;
	mode = strtoul(a->mode, &end, 8);
	if (errno || *end || a->mode[0] == '-' || mode > 0777) {
		fprintf(err, "%s:%u: mode: expected an octal mode in 0..0777, got '%s'\n", c->path,
			line_of(c->path, "api", "mode"), a->mode);
		return -1;
	}
	a->mode_bits = (uint32_t)mode;
	a->uid = -1;
	a->gid = -1;
	if (strcmp(a->owner, "-") != 0) {
		pw = getpwnam(a->owner);
		if (pw == NULL) {
			fprintf(err, "%s:%u: owner: no user '%s' on this host\n", c->path,
				line_of(c->path, "api", "owner"), a->owner);
			return -1;
		}
		a->uid = pw->pw_uid;
	}
	if (strcmp(a->group, "-") != 0) {
		gr = getgrnam(a->group);
		if (gr == NULL) {
			fprintf(err, "%s:%u: group: no group '%s' on this host\n", c->path,
				line_of(c->path, "api", "group"), a->group);
			return -1;
		}
		a->gid = gr->gr_gid;
	}
	if (parse_allow(c, "allow_users", a->allow_users, false, a->allow_uids, &a->n_allow_uids,
			err) != 0 ||
	    parse_allow(c, "allow_groups", a->allow_groups, true, a->allow_gids, &a->n_allow_gids,
			err) != 0)
		return -1;
	if (sl_proto_find(a->program) == NULL) {
		no_program(c, "api", "program", a->program, err);
		return -1;
	}
	a->client_mrs = a->client_mrs ? a->client_mrs : share(a->mrs);
	a->client_cqs = a->client_cqs ? a->client_cqs : share(a->cqs);
	a->client_qps = a->client_qps ? a->client_qps : share(a->qps);
	a->client_stash_bytes = a->client_stash_bytes ? a->client_stash_bytes : a->stash_bytes / 4;
	a->uid_clients = a->uid_clients ? a->uid_clients : a->clients;
	if (a->seg_bytes == 0)
		a->seg_bytes =
			c->qp.count || c->qp.seg_line ? c->qp.seg_bytes : SLUICED_API_SEG_BYTES;
	if (a->enable && c->traffic.mode != SLUICED_TRAFFIC_OFF) {
		fprintf(err,
			"%s:%u: enable: applications and link test traffic cannot both run "
			"([traffic] mode = %s): a lane carries one or the other\n",
			c->path, line_of(c->path, "api", "enable"), modes[c->traffic.mode]);
		return -1;
	}
	return check_timeout(c, "api", a->rto_ns, a->timeout_ns, err);
}

static int
port_index(const char *section)
{
	uint64_t n;

	if (strncmp(section, "port.", 5) != 0 ||
	    sl_parse_u64(section + 5, 0, SLUICED_MAX_PORTS - 1, &n, NULL, 0) < 0)
		return -1;
	return (int)n;
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
	    apply_defaults(c, c, "traffic") < 0 || apply_defaults(c, c, "qp") < 0 ||
	    apply_defaults(c, c, "ec") < 0 || apply_defaults(c, c, "api") < 0)
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
		    strcmp(names[i], "traffic") == 0 || strcmp(names[i], "qp") == 0 ||
		    strcmp(names[i], "ec") == 0 || strcmp(names[i], "api") == 0) {
			if (load_section(c, cfg, names[i], names[i], c, err) < 0)
				goto out;
			continue;
		}
		if (idx < 0) {
			fprintf(err,
				"%s:%u: [%s]: unknown section (expected [sluiced], [link], "
				"[traffic], [qp], [ec], [api] or [port.N])\n",
				path, line_of(path, names[i], NULL), names[i]);
			goto out;
		}
		struct sluiced_port_conf *p = &c->port[idx];

		if (apply_defaults(c, p, "port") < 0 ||
		    load_section(c, cfg, names[i], "port", p, err) < 0)
			goto out;
		snprintf(p->section, sizeof(p->section), "%s", names[i]);
		p->device_line = line_of(path, names[i], "device");
		if (check_encap(c, p, err) < 0)
			goto out;
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
	if (check_qp(c, err) < 0 || check_api(c, err) < 0)
		goto out;
	rc = 0;
out:
	if (names)
		for (int i = 0; names[i]; i++)
			free(names[i]);
	free(names);
	rte_cfgfile_close(cfg);
	return rc;
}
