/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_dp.h - the DPDK side of sluice: ports, lanes, packet pools and the per-lcore poll loop.
 *
 * The cores (lib/wire, lib/link, lib/sched, lib/pacer, lib/recv) never see an mbuf or a clock;
 * this module owns both. A port is any DPDK ethdev (a PCI NIC, net_af_xdp, net_af_packet,
 * net_memif, net_ring, or net_impair stacked on one of them). A lane is one RX/TX queue pair of
 * a port with the reliable link (lib/link) that runs over it. Each worker lcore owns queue pair
 * q of every port, so no lane is shared and no lock is taken on the fast path; a lane's
 * counters are written only by its owner and read (relaxed) by telemetry.
 *
 * Every frame received is counted once: not for sluice, chained (unsupported), or handed to the
 * link, which counts it as delivered, duplicate, control, filler or rejected by reason.
 *
 * A lane's life is one state machine (lane_life.h, lane_life.c; docs/link.md, "The lane's
 * life"): running; quiet after answering the peer's goodbye on a port whose memory it shares
 * with the peer (memif), untouched until the port has gone down and up again; and, once the
 * daemon stops, draining, leaving (the link's LEAVE, until the peer answers) and left.
 *
 * No worker writes what another reads: the peer's MAC is learned by each lane from the frames
 * it receives, and port fields are written only before the workers start.
 */
#ifndef SL_DP_H
#define SL_DP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "sl_common.h"
#include "sl_link.h"
#include "sl_stats.h"
#include "sl_wire.h"
#include "sl_chan.h"
#include "sl_xport.h"

#define SL_DP_MAX_PORTS 8
#define SL_DP_MAX_QUEUES 64
#define SL_DP_BURST 32
/* A poll this long after the lane's previous one counts as a gap: the lcore was descheduled
 * or stalled, and a paced sender lost that time (poll_gaps, poll_gap_ns). */
#define SL_DP_POLL_GAP_NS (100 * SL_NS_PER_US)
#define SL_ETHERTYPE SL_WIRE_ETHERTYPE
#define SL_DP_MIN_FRAME (RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN) /**< 60 bytes, FCS excluded */
/*
 * Body bytes VCODE covers in the "header" scope: the longest transport header (base, RETH, IMM
 * and timestamp: SL_XHDR_MAX_LEN), which also covers every feedback frame and the link test
 * traffic's 18-byte header. The payload after it is the FCS's to protect.
 */
#define SL_DP_VCODE_HDR_BYTES SL_XHDR_MAX_LEN
/*
 * Wire bytes of an Ethernet frame beyond its link header and body: the Ethernet header, FCS,
 * preamble with start delimiter (8) and the inter-frame gap (12). What a rate on the wire
 * charges per frame.
 */
#define SL_DP_ETH_WIRE_BYTES (RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN + 20)
/* Smallest link body that fills a minimum frame with a faithful header. */
#define SL_DP_MIN_BODY (SL_DP_MIN_FRAME - RTE_ETHER_HDR_LEN - SL_WIRE_HDR_LEN)

/* A lane's life (lane_life.c has the transition function; docs/link.md "The lane's life"). */
#define SL_DP_DRAIN_NS (50 * SL_NS_PER_MS)       /**< a stop drains the lane this long */
#define SL_DP_LEAVE_WAIT_NS (500 * SL_NS_PER_MS) /**< longest wait for the peer's answer */
#define SL_DP_LEAVE_GRACE_NS (50 * SL_NS_PER_MS) /**< before closing after answering a peer */
#define SL_DP_QUIET_MAX_NS SL_NS_PER_S /**< a quiet lane wakes after this if the link stayed up */

enum sl_dp_lane_state {
	SL_DP_LANE_RUNNING,    /**< polled: receive, deliver, produce, transmit */
	SL_DP_LANE_QUIET,      /**< answered the peer's LEAVE on a shared-memory port: untouched */
	SL_DP_LANE_QUIET_DOWN, /**< quiet, and the port's link went down since (the peer closed) */
	SL_DP_LANE_DRAINING,   /**< stopping: receive, deliver, send what the queue refused */
	SL_DP_LANE_LEAVING,    /**< stopping: the link sends LEAVE until the peer answers */
	SL_DP_LANE_LEFT,       /**< stopped: the port is not touched again and may close */
};

struct sl_dp_lane_life {
	enum sl_dp_lane_state state;
	/**
	 * ns, the state's timer: DRAINING leaves then; LEAVING gives up on an answer then; QUIET
	 * may wake then; LEFT may close the port from then on. Unused in the other states.
	 */
	uint64_t timer_ns;
};

/* A kernel interface claimed for AF_XDP (xdp_claim.c). */
struct sl_dp_xdp_claim {
	int fd;         /**< the locked file, -1 when nothing is claimed */
	char path[128]; /**< its name */
};

/* Per-lane counters of the glue, each described once in sl_dp_lane_stat_table
 * (docs/counters.md); written by the lane's lcore only. */
struct sl_dp_lane_stats {
	uint64_t rx_pkts;
	uint64_t rx_bytes;
	uint64_t tx_pkts;
	uint64_t tx_bytes;
	uint64_t rx_drop_not_sluice;
	uint64_t rx_drop_encap[SL_ENCAP_ERR__MAX - 2]; /**< [r - 2]: reason r, ETHERTYPE aside */
	uint64_t rx_ce;
	uint64_t rx_drop_chained;
	uint64_t rx_drop_no_consumer;
	uint64_t tx_drop_refused;
	uint64_t tx_drop_nombuf;
	uint64_t tx_backlog_waits;
	uint64_t tx_drop_quiet;
	uint64_t tx_drop_session;
	uint64_t tx_drop_unresolved;
	uint64_t rx_arp;
	uint64_t tx_arp_requests;
	uint64_t tx_arp_replies;
	uint64_t quiet_entries;
	uint64_t poll_gaps;
	uint64_t poll_gap_ns;
};

extern const struct sl_stat_table sl_dp_lane_stat_table;

/* Where a port's frames go: the MAC of the peer, or of the router on the way to it. */
enum sl_dp_peer_mode {
	SL_DP_PEER_STATIC = 0, /**< configured */
	SL_DP_PEER_LEARN,      /**< the source of the first valid frame (broadcast until then) */
	SL_DP_PEER_RESOLVE,    /**< asked by ARP for next_hop_ip (encap = udp over IPv4): nothing
				*   but the question goes out until the answer (neigh.c) */
};

struct sl_dp_port_conf {
	const char *device;             /**< DPDK device name */
	uint16_t nb_queues;             /**< RX/TX queue pairs (lanes) */
	uint16_t rx_desc;               /**< descriptors per RX queue */
	uint16_t tx_desc;               /**< descriptors per TX queue */
	enum sl_dp_peer_mode peer_mode; /**< how the lanes find the peer's (next hop's) MAC */
	struct rte_ether_addr peer;     /**< SL_DP_PEER_STATIC: the MAC */
	uint8_t next_hop_ip[4];         /**< SL_DP_PEER_RESOLVE: the IPv4 address to ARP for */
	struct sl_encap encap;    /**< what carries the link frames (lib/wire), both ends alike */
	bool src_port_per_qp;     /**< UDP: a source port per destination QPN (ECMP spreads QPs:
				   *   end-to-end reliability), else one per lane (an in-order
				   *   link's frames take one path) */
	uint64_t peer_timeout_ns; /**< peer down after this long without a frame */
	struct sl_link_conf link; /**< every lane's link; release/ctx are set by sl_dp */
};

/*
 * Payload producer and consumer of a lane (the QP adapter below, or lib/traffic's link test
 * traffic).
 * produce: fill up to max payload mbufs whose data is the link body (transport header +
 * payload, at least SL_DP_MIN_BODY bytes) with headroom for the Ethernet and link headers;
 * return the count. consume: take n delivered mbufs whose data starts at the body (ownership
 * passes), return how many it took (the rest are offered again later, in order).
 */
struct sl_dp_app {
	unsigned (*produce)(void *ctx, uint64_t now_ns, struct rte_mbuf **m, unsigned max);
	unsigned (*consume)(void *ctx, uint64_t now_ns, struct rte_mbuf **m, unsigned n);
	/* Optional: the lane's link began a new session (sl_link_sessions()); the lane has
	 * dropped the payloads produced for the old one that had not gone out. */
	void (*session)(void *ctx, uint64_t now_ns);
	/* Optional: called first on every poll, in every state of the lane's life, for work that
	 * touches no port ring (the applications' mailbox and rings, lib/chan): it goes on while
	 * the peer is away, the port is down or the TX queue is full. */
	void (*tick)(void *ctx, uint64_t now_ns);
	void *ctx;
};

/* One RX/TX queue pair with its reliable link. */
struct sl_dp_lane {
	struct sl_dp_port *port;
	uint16_t queue;
	struct sl_link *link;
	struct rte_mempool *pool; /**< for control and filler frames */
	struct sl_dp_app app;
	uint64_t last_rx_ns; /**< ns: last frame from the peer (atomic) */
	/* payloads produced, not yet taken by the link (offered again first) */
	struct rte_mbuf *pending[SL_DP_BURST];
	unsigned int n_pending;
	uint64_t session; /**< the link session the pending payloads and the app are in */
	/* frames built, refused by a full TX queue, sent first on the next poll */
	struct rte_mbuf *backlog[SL_DP_BURST];
	unsigned int n_backlog;
	/* delivered, not yet taken by the consumer (at most the link's fc_frames) */
	struct rte_mbuf **delivered;
	uint32_t deliv_head, deliv_count, deliv_cap;
	struct sl_dp_lane_life life; /**< state and timer (lane_life.c) */
	uint16_t src_port;           /**< UDP source port of the lane's own frames (encap = udp) */
	/* peer address (the next hop's): configured, learned from the first valid frame this
	 * lane receives (broadcast until then), or resolved by ARP (neigh.c); written by the
	 * lane's lcore only, once */
	struct rte_ether_addr peer;
	bool peer_known; /**< peer holds the address (release store; sl_dp_port_peer acquires) */
	uint64_t arp_next_ns;  /**< SL_DP_PEER_RESOLVE: when the next ARP request goes out */
	uint32_t arp_asked;    /**< ARP requests sent without an answer */
	uint64_t last_poll_ns; /**< time of the previous poll (poll_gaps), 0 before the first */
	struct sl_dp_lane_stats stats sl_cache_aligned; /**< written by the lane's lcore only */
};

struct sl_dp_port {
	uint16_t port_id;
	int socket_id; /**< NUMA node of the device (SOCKET_ID_ANY if unknown) */
	uint16_t nb_queues;
	bool started;
	char name[RTE_ETH_NAME_MAX_LEN];
	struct rte_ether_addr mac;  /**< our address */
	bool shares_memory;         /**< memif (or impaired memif): see the lane's life above */
	rte_spinlock_t *burst_lock; /**< held across each burst (memif_guard.c), or NULL */
	char kernel_if[32];         /**< kernel interface under AF_XDP / AF_PACKET, or "" */
	enum sl_dp_peer_mode peer_mode;
	uint8_t next_hop_ip[4];  /**< SL_DP_PEER_RESOLVE: whose MAC ARP asks for */
	struct sl_encap encap;   /**< what carries the link frames after the MACs */
	uint16_t hdr_bytes;      /**< bytes before the link header: Ethernet + encapsulation */
	bool src_port_per_qp;    /**< see struct sl_dp_port_conf */
	uint64_t ce_flag;        /**< mbuf dynflag: the frame arrived marked CE (0: Ethernet) */
	uint32_t rx_ring_frames; /**< frames each receive queue's ring holds (port.c) */
	bool af_xdp;             /**< the bottom port is AF_XDP (on kernel_if) */
	bool tx_chains;          /**< the device sends chained mbufs (TX MULTI_SEGS) */
	struct sl_dp_xdp_claim xdp_claim; /**< the interface's, while the port is open */
	uint64_t peer_timeout_ns;
	struct sl_dp_lane lane[SL_DP_MAX_QUEUES];
};

/*
 * A pool of n mbufs of data_room bytes (pool.c): rte_pktmbuf_pool_create()'s, or with umem its
 * objects packed in one memory chunk, all of which DPDK 22.11's AF_XDP PMD registers as its
 * UMEM. NULL with rte_errno set.
 */
struct rte_mempool *sl_dp_pool_create(const char *name, unsigned int n, unsigned int cache,
				      uint16_t data_room, int socket_id, bool umem);

/* 0 if the AF_XDP PMD's UMEM covers all of mp's memory; else -EINVAL and why (size len). */
int sl_dp_pool_umem_check(const struct rte_mempool *mp, char *why, size_t len);

/* Is ethdev port_id AF_XDP, itself or under its net_impair stack (its pool then wants umem)? */
bool sl_dp_port_id_af_xdp(uint16_t port_id);

/*
 * Find the device, configure nb_queues queue pairs on its NUMA node with packets from pool,
 * create a link per lane, start the port, enable promiscuous mode where the driver supports
 * it. 0 or -errno; on error a message naming the device is in err (size errlen).
 */
int sl_dp_port_open(struct sl_dp_port *p, const struct sl_dp_port_conf *conf,
		    struct rte_mempool *pool, char *err, size_t errlen);
/* (An AF_XDP port's pool must pass sl_dp_pool_umem_check(): else -EINVAL.) */

/* Stop and close the device and free its links and queued frames (idempotent). */
void sl_dp_port_close(struct sl_dp_port *p);

/*
 * The peer is up: lane 0's link is established (NORMAL, or replaying to repair a loss) and a
 * frame arrived within the timeout.
 */
bool sl_dp_port_peer_up(const struct sl_dp_port *p, uint64_t now_ns);

/*
 * Bytes a frame of port p costs on the wire beyond its link header and body: the Ethernet
 * overhead (SL_DP_ETH_WIRE_BYTES) and the encapsulation's headers. What its rates charge.
 */
static inline uint32_t
sl_dp_port_wire_overhead(const struct sl_dp_port *p)
{
	return SL_DP_ETH_WIRE_BYTES + (uint32_t)sl_encap_hdr_len(&p->encap);
}

/* The peer's address as lane 0 knows it: configured, learned, or broadcast until learned. */
void sl_dp_port_peer(const struct sl_dp_port *p, struct rte_ether_addr *mac);

/*
 * A counter of the kernel interface under the port (AF_XDP, AF_PACKET, or net_impair over one):
 * /sys/class/net/<if>/statistics/<name>, e.g. rx_dropped, which counts frames the kernel
 * dropped before any DPDK counter saw them (a veth whose XDP ring was full). Slow path.
 * 0, -ENOENT (no kernel interface) or -errno.
 */
int sl_dp_port_kernel_counter(const struct sl_dp_port *p, const char *name, uint64_t *value);

/* Names of all ethdev ports, comma separated, for error messages. */
void sl_dp_port_list(char *buf, size_t len);

/*
 * Poll one lane once at now_ns: the work of its state (running: receive, run the link, deliver,
 * produce, transmit; quiet: read the port's link status only; draining, leaving: see the
 * states), then the events the poll saw (lane_life.c).
 */
void sl_dp_lane_poll(struct sl_dp_lane *l, uint64_t now_ns);

/* The daemon stops: a running lane starts draining, then says goodbye; a quiet one is left. */
void sl_dp_lane_stop(struct sl_dp_lane *l, uint64_t now_ns);

/* ns from which the lane's port may close; UINT64_MAX until the lane has left. */
uint64_t sl_dp_lane_close_ns(const struct sl_dp_lane *l);

/* The lane's link is established (NORMAL, RETRANS or SEND_RETRANS) and heard the peer within the
 * port's peer timeout. */
bool sl_dp_lane_peer_up(const struct sl_dp_lane *l, uint64_t now_ns);

/* One lcore's share of the dataplane: lane `queue` of every port. */
struct sl_dp_worker {
	struct sl_dp_port **ports;
	unsigned int nb_ports;
	uint16_t queue;
};

static inline void
sl_dp_worker_poll(struct sl_dp_worker *w, uint64_t now_ns)
{
	for (unsigned int i = 0; i < w->nb_ports; i++)
		sl_dp_lane_poll(&w->ports[i]->lane[w->queue], now_ns);
}

/* sl_dp_lane_stop() on each of the worker's lanes. */
void sl_dp_worker_stop(struct sl_dp_worker *w, uint64_t now_ns);

/* The latest sl_dp_lane_close_ns() of the worker's lanes: UINT64_MAX until all have left. */
uint64_t sl_dp_worker_close_ns(const struct sl_dp_worker *w);

/*
 * Leave nothing behind: every DPDK process of the project removes its EAL runtime
 * directory (/var/run/dpdk/<file-prefix>, or $XDG_RUNTIME_DIR/dpdk/... without root) when it
 * exits, normally or on SIGINT / SIGTERM.
 *
 * rte_eal_cleanup() releases memory and the multi-process socket but leaves the directory and
 * its config and fbarray files, so each run of a test or benchmark with a unique --file-prefix
 * leaves one directory more. Call sl_dp_eal_cleanup() where rte_eal_cleanup() was called, and
 * sl_dp_eal_remove_on_signal() right after rte_eal_init() in programs that do not handle
 * SIGINT / SIGTERM themselves (sluiced does: its stop path ends in sl_dp_eal_cleanup()).
 */
/*
 * Park the EAL interrupt thread (eal.c says why), rte_eal_cleanup(), then remove the runtime
 * directory and the files in it; once (atexit-safe). No EAL call may follow, alarms included.
 */
void sl_dp_eal_cleanup(void);

/*
 * On SIGINT or SIGTERM, remove the runtime directory's files as they are now (and the
 * directory), then die of the signal. The handler only calls unlink(), rmdir() and raise(),
 * which are async-signal-safe; the file names are read here, once.
 */
void sl_dp_eal_remove_on_signal(void);

/*
 * Wait, polling every 100 us, until the EAL interrupt thread sets *flag (release), for up to
 * timeout_us; true if it did. For work handed to that thread (an alarm, a parked callback).
 */
bool sl_dp_eal_wait_for(const atomic_bool *flag, unsigned int timeout_us);

/*
 * Queue pairs on a lane: the QP adapter plugs the transport endpoint (lib/xport) into a lane as
 * its producer and consumer (struct sl_dp_app), on top of the reliable link ("reliability = link":
 * every transport frame is one link body, which the link delivers exactly once and in order).
 *
 * produce: poll the user (struct sl_dp_qp_user, which posts its messages; not before the lane
 * has first seen its peer up, so that no QP times out on a peer that is not there yet), then
 * ask the endpoint for no more
 * frames than mbufs are at hand (taken from the pool in bulk, leftovers kept for the next poll),
 * and build each frame in its mbuf after RTE_PKTMBUF_HEADROOM, where the lane writes the Ethernet
 * and link headers: transport header, payload, zero padding (the endpoint pads to SL_DP_MIN_BODY).
 * consume: every delivered body goes to the endpoint with its mbuf as the handle; the endpoint
 * frees it (conf.release) when done, at once or after the reorder buffer held it.
 *
 * The endpoint is never asked for more frames than there are mbufs in hand (a short pool shows
 * in pool_short and only delays sending); a frame it handed out that could not be built (longer
 * than an mbuf's room) would be lost to the transport, its retransmission the only repair:
 * counted in tx_lost, which stays 0 when seg_bytes fits the mbufs (sluiced checks it).
 *
 * Two users may share the endpoint. Applications' QPs (libsluice, lib/chan): an adapter given a
 * lane half of the channel (conf.chan) gives it the QP range the lane half owns. The QPs opened
 * with sl_dp_qp_open() are the user's (sl_dp_qp_serve(): sluiced's built-in traffic,
 * lib/traffic). The endpoint's callbacks go to the lane half for its QPs (sl_chan_lane_owns)
 * and to the user for the rest; produce runs the lane half's poll (its
 * mailbox commands, its QPs' rings) before asking the endpoint for frames, whether or not the
 * peer is up, so that the control thread's commands are answered; a new link session fails
 * the applications' QPs (sl_chan_lane_session) as it restarts the user's (user.restart).
 *
 * Telemetry runs on another thread: counters are written by the lane's lcore with relaxed
 * stores and read with sl_stats_snapshot(); sl_xport_qp_info_get() reads scheduler state that
 * is not atomic, so produce refreshes a snapshot of each QP's info every SL_DP_QP_INFO_NS (a
 * few QPs per poll), published under a sequence lock, which sl_dp_qp_info_get() reads.
 */
#define SL_DP_QP_INFO_NS (10 * SL_NS_PER_MS) /**< QP info snapshot period, ns */
#define SL_DP_QP_INFO_PER_POLL 4u            /**< QP info snapshots refreshed per produce call */

/*
 * Payload by reference (qp.c): a frame's payload of at least SL_DP_QP_ATTACH_MIN bytes goes as an
 * external buffer after a first mbuf of SL_DP_QP_HEAD_BYTES of body (transport header, then
 * payload). Below that size a copy costs less than a second mbuf's allocation, attach and free.
 */
#define SL_DP_QP_ATTACH_MIN 1024u
#define SL_DP_QP_HEAD_BYTES 64u

struct sl_dp_qp_conf {
	struct sl_dp_lane *lane;   /**< messages are posted once its peer is up (NULL: at once) */
	struct rte_mempool *pool;  /**< payload mbufs; bodies start after RTE_PKTMBUF_HEADROOM */
	int socket_id;             /**< NUMA node of the adapter's memory (SOCKET_ID_ANY) */
	uint32_t max_qps;          /**< QPNs [0, max_qps) may open on this lane: the user's and,
				    *   with chan, the applications' range above them */
	struct sl_chan_lane *chan; /**< the applications' QPs on this lane (NULL: none) */
	/**
	 * The QP on which this adapter and its peer's agree on their QPs' tokens and first PSNs,
	 * each session (exchange.c): the same QPN at both ends, below max_qps and outside the
	 * applications' range. 0: none, the QPs open with the identities they were given.
	 */
	uint32_t exchange_qpn;
	uint32_t window_pkts;     /**< endpoint window, packets (0: the endpoint's default) */
	uint32_t sq_depth;        /**< messages a QP may have posted and not completed, a power
				   *   of two (0: the endpoint's default) */
	uint64_t line_bps;        /**< the port's line rate, bits/s: the link the endpoint's pacer
				   *   shares among the QPs (0: the endpoint's default) */
	uint64_t pace_catchup_ns; /**< the endpoint's pace_catchup_ns (0: none) */
	bool line_bypass;         /**< the endpoint's line_bypass: a QP paced at line_bps skips the
				   *   pacer (the lane's link keeps the line rate) */
	uint32_t frame_overhead_bytes; /**< wire bytes of a frame beyond the transport's: the
					*   link header, sl_dp_port_wire_overhead() */
	uint64_t ec_drain_bps;         /**< the endpoint's ec_drain_bps (0: no target) */
	struct sl_ec_conf ec;          /**< the endpoint's ec */
	/**
	 * Bytes of the payload region (sl_dp_qp_region()): memory the adapter owns and keeps until
	 * the last frame that points into it is freed, whose large payloads go by reference. 0:
	 * none. Used only with tx_attach_mbufs.
	 */
	size_t region_bytes;
	/**
	 * Large payloads in the region go by reference (qp.c), in mbufs of a pool of this many the
	 * adapter makes (no data room: 128 B each); 0: every payload is copied. Only for a port
	 * that sends chained mbufs and a link whose check reads at most SL_DP_VCODE_HDR_BYTES of
	 * a body.
	 */
	uint32_t tx_attach_mbufs;
};

/*
 * The user of the QPs opened with sl_dp_qp_open(): the endpoint's callbacks for them
 * (struct sl_xport_conf's on_recv and on_complete), and a poll, each on the lane's lcore.
 */
struct sl_dp_qp_user {
	int (*on_recv)(void *ctx, const struct sl_xport_rx_seg *seg, uint64_t now_ns);
	void (*on_complete)(void *ctx, const struct sl_xport_cqe *c, uint64_t now_ns);
	/** every produce once the lane has seen its peer up: post messages on x */
	void (*poll)(void *ctx, struct sl_xport *x, uint64_t now_ns);
	/** QP qpn was closed and reopened in a new session of the link (qp.c, "Sessions") */
	void (*restart)(void *ctx, uint32_t qpn);
	void *ctx;
};

/* Counters of the adapter, each described once in sl_dp_qp_stat_table (docs/counters.md). */
struct sl_dp_qp_stats {
	uint64_t tx_frames;
	uint64_t tx_bytes;
	uint64_t tx_attached;
	uint64_t tx_lost;
	uint64_t pool_short;
	uint64_t rx_frames;
	uint64_t rx_bytes;
	uint64_t info_refreshes;
	uint64_t qp_restarts;
	uint64_t qp_restart_failed;
	uint64_t exchanges;
	uint64_t exchange_failed;
	uint64_t exchange_refused;
};

extern const struct sl_stat_table sl_dp_qp_stat_table;

struct sl_dp_qp;

/* An adapter with its endpoint; NULL and errno (EINVAL, ENOMEM, or the endpoint's). */
struct sl_dp_qp *sl_dp_qp_create(const struct sl_dp_qp_conf *conf);

/*
 * Free the endpoint (releasing every frame it holds) and the spare mbufs; call it
 * once every frame it built is freed (its lane's port closed). A frame still out keeps the
 * region it points into (which its free releases) and the pool of its attach mbuf, which is
 * then never freed (logged).
 */
void sl_dp_qp_free(struct sl_dp_qp *a);

/* The user's QPs are now u's (*u is copied). Before the lane runs. */
void sl_dp_qp_serve(struct sl_dp_qp *a, const struct sl_dp_qp_user *u);

/* The payload region, conf.region_bytes of it; NULL when there is none. */
uint8_t *sl_dp_qp_region(const struct sl_dp_qp *a);

/*
 * Open the user's QP qc->qpn on the endpoint at now_ns. 0 or the endpoint's -errno (-EINVAL: qpn
 * not below max_qps). Before the lane runs. qc is copied (a new link session reopens the QP from
 * it); the program name it points to must outlive the adapter.
 */
int sl_dp_qp_open(struct sl_dp_qp *a, const struct sl_xport_qp_conf *qc, uint64_t now_ns);

/* struct sl_dp_app callbacks; ctx is the struct sl_dp_qp. */
unsigned sl_dp_qp_produce(void *ctx, uint64_t now_ns, struct rte_mbuf **m, unsigned max);
unsigned sl_dp_qp_consume(void *ctx, uint64_t now_ns, struct rte_mbuf **m, unsigned n);
/* The lane's link began a new session: every QP restarts with it (qp.c, "Sessions"). */
void sl_dp_qp_session(void *ctx, uint64_t now_ns);
/* Every poll, every state: the applications' lane half (commands, rings), if any. */
void sl_dp_qp_tick(void *ctx, uint64_t now_ns);

/* The adapter's counters (any thread). */
void sl_dp_qp_stats_get(const struct sl_dp_qp *a, struct sl_dp_qp_stats *st);

/*
 * QP qpn's counters over every session of the lane's link (any thread): the endpoint's for the
 * session now, plus those of the sessions that ended (qp.c, "Sessions"; the close's cancelled
 * messages counted as failed). The endpoint's return code: -ENOENT if not open now.
 */
int sl_dp_qp_lifetime_stats(const struct sl_dp_qp *a, uint32_t qpn, struct sl_xport_qp_stats *st);

/*
 * The latest snapshot of QP qpn's info (any thread): 0, -ENOENT (not open here) or -EAGAIN (no
 * snapshot yet, or the lane kept rewriting it while this read). A QP of the user's closed for a
 * connection exchange (conf.exchange_qpn) keeps its last session's final info.
 */
int sl_dp_qp_info_get(const struct sl_dp_qp *a, uint32_t qpn, struct sl_xport_qp_info *info);

/* The QP is open on this adapter: one of its own, or an application's while it is open on the
 * endpoint (any thread). */
bool sl_dp_qp_has(const struct sl_dp_qp *a, uint32_t qpn);

/* The endpoint: its *_stats_get are safe from any thread. */
const struct sl_xport *sl_dp_qp_xport(const struct sl_dp_qp *a);

#endif /* SL_DP_H */
