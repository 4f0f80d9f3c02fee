/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_chan.h - the daemon's side of the application channel (lib/api/sl_chan_abi.h), in two
 * halves that meet only through the structures below:
 *
 *   the control half (srv.c, srv_req.c, mr.c) runs on a control thread: it listens on the unix
 *   socket, serves each application's requests, maps its shared memory, keeps its memory
 *   regions, CQs and QPs, and hands QP work to the lane that owns the QP through the lane's
 *   mailbox;
 *
 *   the lane half (lane.c) runs on the lane's lcore, inside the QP adapter's poll (lib/dp/qp.c):
 *   it takes mailbox commands, consumes the QPs' send and receive rings into the transport
 *   endpoint (lib/xport), places what arrives into the applications' memory, answers READs,
 *   and writes completions.
 *
 * Threads. Objects are created by the control thread before they are published to a lane
 * (the mailbox's release / acquire orders that), and freed by it only after the lane has
 * answered a command that let go of them. A memory region is the one thing both read while it
 * changes: the lane looks keys up (sl_chan_mr_find) while the control thread registers and
 * deregisters; an entry's key word is published last (release) and cleared first, and an
 * application's memory stays mapped until the client is gone from every lane, so a pointer the
 * lane took from a key it found stays valid.
 *
 * Isolation. A client is a protection domain: a key is found only for the client that owns
 * the QP asking, so one application's QPs can never name another's memory. Clients are
 * numbered from 1 upwards and never reused; the number is 64 bits wherever it is kept or
 * compared, so it does not wrap in practice and a new client is never taken for an old one.
 *
 * Units: bytes, ns.
 */
#ifndef SL_CHAN_H
#define SL_CHAN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sl_chan_abi.h"
#include "sl_stats.h"
#include "sl_xport.h"

/* --- configuration ------------------------------------------------------------------------ */

/* Send and receive queue depth a QP may ask for, at most: the lane keeps a slot of state per
 * entry for every QP it may serve (struct sl_chan_lane_conf.sq_depth_max, rq_depth_max). */
#define SL_CHAN_QP_DEPTH_MAX 4096u

/* Entries of each allow list (sl_chan_srv_conf), at most. */
#define SL_CHAN_ALLOW_MAX 16u
/* Supplementary groups of a connecting peer read for the allow list, at most. */
#define SL_CHAN_PEER_GROUPS_MAX 256u

struct sl_chan_srv_conf {
	const char *socket_path; /**< where to listen (the directory is created, 0755) */
	mode_t mode;             /**< the socket file's mode [0660] */
	uid_t uid;               /**< its owner ((uid_t)-1: the daemon's) */
	gid_t gid;               /**< its group ((gid_t)-1: the daemon's) */
	/** Who may attach besides what the socket file's mode decides: none listed, everyone
	 *  who can connect; else a listed uid or a member of a listed group (refused: EACCES) */
	uid_t allow_uids[SL_CHAN_ALLOW_MAX];
	uint32_t n_allow_uids;
	gid_t allow_gids[SL_CHAN_ALLOW_MAX];
	uint32_t n_allow_gids;
	uint32_t max_clients; /**< applications at once [16] */
	uint32_t max_mrs;     /**< memory regions, all clients together [4096] */
	uint32_t max_cqs;     /**< CQs, all clients together [256] */
	/* One client's share of each pool (0: no limit of its own): a request past it is refused
	 * EDQUOT, so that one application cannot take what the others need. */
	uint32_t client_mrs;         /**< memory regions one client holds, at most */
	uint64_t client_mr_bytes;    /**< the sum of one client's MR lengths, at most, bytes */
	uint32_t client_cqs;         /**< CQs one client holds, at most */
	uint32_t client_qps;         /**< QPs one client holds, at most */
	uint32_t uid_clients;        /**< clients of one uid (SO_PEERCRED) at once, ghosts too; one
				      *   more is refused at connect (EDQUOT) */
	uint64_t hello_timeout_ns;   /**< a connection that has not completed HELLO this long after
				      *   it was accepted is closed, ns (0: never) */
	uint64_t first_client;       /**< the first client's number (0: 1); a test starts near
				      *   2^32 to cross it */
	const char *host;            /**< [sluiced] name, told in HELLO */
	const char *default_program; /**< a QP that names none runs this */
	uint32_t seg_bytes;          /**< payload bytes per packet of every application QP */
	uint32_t frame_overhead_bytes; /**< wire bytes of a frame beyond the transport's (link
					*   header, Ethernet, FCS, preamble, gap): told to
					*   applications with the transport header's (QP_CREATE) */
	uint64_t stash_bytes;          /**< per lane: SEND payloads that arrived before a RECV was
					*   posted, bytes [16 MiB in sluiced] */
	uint64_t rto_ns;        /**< every application QP's initial RTO, ns [the endpoint's] */
	uint64_t timeout_ns;    /**< every application QP's timeout, ns [the endpoint's] */
	uint32_t qpn_base, qps; /**< lanes[0]'s application QPNs, as in its sl_chan_lane_conf */
	/** Connections, credentials and refusals of clients (NULL: not logged); level is
	 *  syslog's (LOG_ERR .. LOG_DEBUG). Control thread only. */
	void (*log)(void *ctx, int level, const char *fmt, ...)
		__attribute__((format(printf, 3, 4)));
	void *log_ctx;
};

/* --- memory regions (mr.c) ---------------------------------------------------------------- */

/* Which of a region's two keys (mr.c, "Keys"). */
enum sl_chan_key_kind {
	SL_CHAN_LKEY, /**< its owner's own work requests */
	SL_CHAN_RKEY, /**< its peers' WRITEs and READs */
};

/* One registered region. */
struct sl_chan_mr {
	_Atomic uint32_t key[2]; /**< by enum sl_chan_key_kind; 0: free; published last, cleared
				  *   first */
	uint32_t access;         /**< SL_ACCESS_* */
	uint64_t client;         /**< owner (protection domain) */
	uint64_t va;             /**< start in the application's space */
	uint64_t len;            /**< bytes */
	uint8_t *ptr;            /**< start in the daemon's mapping */
};

struct sl_chan_mrs; /* the key table: any thread finds, the control thread changes */

/* A table of max_mrs regions, at most 65535; NULL and errno (EINVAL, ENOMEM). */
struct sl_chan_mrs *sl_chan_mrs_create(uint32_t max_mrs);
void sl_chan_mrs_free(struct sl_chan_mrs *t);

/*
 * Register client's [va, va + len) at ptr: two new keys with random bits (mr.c, "Keys"), never
 * 0, never equal, unlike every live key and the slot's previous ones. Control thread only.
 * 0 and *lkey, *rkey; -ENOSPC (table full), or the CSPRNG's -errno.
 */
int sl_chan_mrs_add(struct sl_chan_mrs *t, uint64_t client, uint64_t va, uint64_t len, uint8_t *ptr,
		    uint32_t access, uint32_t *lkey, uint32_t *rkey);

/* Deregister the region of lkey if client owns it: 0 and its length in *len (bytes), or
 * -ENOENT. */
int sl_chan_mrs_del(struct sl_chan_mrs *t, uint64_t client, uint32_t lkey, uint64_t *len);

/* Deregister every region of client (it is gone). Returns how many. */
unsigned sl_chan_mrs_del_client(struct sl_chan_mrs *t, uint64_t client);

/*
 * The daemon's pointer to [va, va + len) under key, if key is a live key of that kind, client
 * owns its region, the range lies inside the region (no overflow) and the region grants every
 * flag of need (0: read); else NULL. Any thread; no lock.
 */
uint8_t *sl_chan_mrs_find(const struct sl_chan_mrs *t, uint64_t client, enum sl_chan_key_kind kind,
			  uint32_t key, uint64_t va, uint64_t len, uint32_t need);

/* --- what the control half hands a lane --------------------------------------------------- */

/* A CQ: its ring in the application's memory, and its event fd. */
/* One lane's ring of a CQ: written by that lane only. */
struct sl_chan_cq_ring {
	struct sl_chan_ring *ring; /**< in the daemon's mapping */
	uint32_t prod;             /**< the producer index, the lane's copy */
	uint32_t reserved;         /**< completions owed, slots promised to its QPs' work */
};

/* A CQ: one ring per lane (sl_chan_abi.h), so that each lane produces into its own. */
struct sl_chan_cq {
	uint32_t id;
	uint64_t client;
	uint32_t depth; /**< entries of each ring, power of two */
	int event_fd;   /**< the daemon's end of the CQ's event socket pair: 8 bytes sent (never
			 *   blocking) when the application armed the CQ (the first ring's armed) */
	uint32_t rings; /**< the lanes' count */
	struct sl_chan_cq_ring lane[SL_CHAN_CQ_RINGS_MAX]; /**< [rings], by lane index */
};

/* A QP as the control half created it (lane.c keeps the rest). */
struct sl_chan_qp_conf {
	uint64_t client;
	const struct sl_chan_mrs *mrs;
	uint8_t *mem; /**< the client's memory, in the daemon's mapping */
	uint64_t mem_bytes;
	uint64_t base_va; /**< where the application mapped it */
	struct sl_chan_cq *send_cq, *recv_cq;
	struct sl_chan_ring *sq, *rq; /**< in the daemon's mapping, checked to lie in mem */
	uint32_t sq_depth, rq_depth;
	uint32_t max_msg_bytes;
	struct sl_xport_qp_conf xqp; /**< qpn, send_psn and token chosen by the control half at
				      *   create; peer_qpn, recv_psn and peer_token written by it
				      *   before CONNECT; proto points into program[] */
	char program[SL_NAME_MAX];
};

enum sl_chan_cmd_type {
	SL_CHAN_CMD_QP_CONNECT,  /**< take the QP of arg qp, open it on the endpoint toward its
				  *   conf's peer, start its rings */
	SL_CHAN_CMD_QP_DESTROY,  /**< flush and close it; the lane lets go of qp and its CQs */
	SL_CHAN_CMD_CLIENT_GONE, /**< destroy every QP of client (it hung up) */
};

/* A command to a lane; the control thread fills it, the lane answers it. */
struct sl_chan_cmd {
	uint8_t type; /**< enum sl_chan_cmd_type */
	uint64_t client;
	uint32_t qpn;
	struct sl_chan_qp_conf *qp; /**< QP_OPEN; QP_CONNECT: the same conf, its peer filled */
	int result;                 /**< 0 or -errno, written by the lane before done */
	_Atomic bool done;          /**< the lane answered (release) */
};

/* --- the lane half (lane.c) --------------------------------------------------------------- */

struct sl_chan_lane; /* one per lane that serves applications */

struct sl_chan_lane_conf {
	uint32_t index;    /**< the lane's number among those serving applications: its ring
			    *   of every CQ (below SL_CHAN_CQ_RINGS_MAX) */
	uint32_t qpn_base; /**< application QPNs any of which may be placed on this lane:
			    *   [qpn_base, qpn_base + qps), the same on every lane */
	uint32_t qps;
	uint32_t sq_depth_max, rq_depth_max; /**< ring sizes a QP may ask for, at most */
	uint64_t stash_bytes;                /**< see struct sl_chan_srv_conf */
	uint64_t stash_qp_bytes;     /**< of stash_bytes, what one QP may hold, bytes (0: all) */
	uint64_t client_stash_bytes; /**< of stash_bytes, what one application's QPs may hold
				      *   together, bytes (0: all) */
	const struct sl_chan_mrs *mrs;
};

/* Counters of a lane half, each described once in sl_chan_lane_stat_table (docs/counters.md). */
struct sl_chan_lane_stats {
	uint64_t cmds;
	uint64_t wr_posted;   /**< work requests taken from SQs into the endpoint */
	uint64_t wr_loc_prot; /**< refused at once: lkey, range, access */
	uint64_t wr_bad;      /**< refused at once: opcode, length */
	uint64_t recv_posted;
	uint64_t cqes;
	uint64_t cq_full_waits;     /**< a QP's SQ waited for room on its CQ */
	uint64_t events;            /**< CQ events signalled */
	uint64_t events_unsent;     /**< CQ events the application's full (or closed) end refused */
	uint64_t bad_ring;          /**< QPs failed because a ring index was out of range */
	uint64_t write_refused;     /**< WRITEs refused (key, range, access) */
	uint64_t write_len_refused; /**< WRITEs refused: longer than the QP's max_msg_bytes */
	uint64_t read_refused;      /**< READs refused: key, range, access */
	uint64_t read_len_refused;  /**< READs refused: longer than the QP's max_msg_bytes */
	uint64_t stash_msgs;        /**< SENDs held until a RECV came */
	uint64_t rnr_refused;       /**< SENDs refused for now (RNR): no RECV, no stash room */
	uint64_t stash_client_refused; /**< SENDs refused for now: no RECV, their application's
					*   stash share full */
	uint64_t stash_qp_refused;     /**< SENDs refused for now: no RECV, their QP's stash share
					*   full */
	uint64_t len_refused;          /**< SENDs longer than their RECV buffer */
};

extern const struct sl_stat_table sl_chan_lane_stat_table;

struct sl_chan_lane *sl_chan_lane_create(const struct sl_chan_lane_conf *conf);
void sl_chan_lane_free(struct sl_chan_lane *cl);

/*
 * Control thread: post cmd to the lane and wait until it answers or timeout_ns passes
 * (-ETIMEDOUT: the lane is not running; the command stays queued and cmd must outlive it).
 * Returns cmd->result, or -EAGAIN at once if the mailbox is full (commands that timed out fill
 * it): cmd was neither posted nor touched, and is the caller's again. One control thread at a
 * time.
 */
int sl_chan_lane_call(struct sl_chan_lane *cl, struct sl_chan_cmd *cmd, uint64_t timeout_ns);

/* The lane's lcore, every poll before the endpoint's tx_burst: take commands, consume rings. */
void sl_chan_lane_poll(struct sl_chan_lane *cl, struct sl_xport *x, uint64_t now_ns);

/* The lane's number among those serving applications (its conf's index). */
uint32_t sl_chan_lane_index(const struct sl_chan_lane *cl);

/* The applications' QPNs that may be placed on this lane: [*qpn_base, *qpn_base + *qps). */
void sl_chan_lane_range(const struct sl_chan_lane *cl, uint32_t *qpn_base, uint32_t *qps);

/* The QPN is one of the applications' (placed on this lane or another). */
bool sl_chan_lane_owns(const struct sl_chan_lane *cl, uint32_t qpn);

/* The endpoint's callbacks for the lane's application QPs (struct sl_xport_conf). */
int sl_chan_lane_on_recv(struct sl_chan_lane *cl, const struct sl_xport_rx_seg *seg,
			 uint64_t now_ns);
void sl_chan_lane_on_complete(struct sl_chan_lane *cl, const struct sl_xport_cqe *c,
			      uint64_t now_ns);
int sl_chan_lane_read_src(struct sl_chan_lane *cl, uint32_t qpn, uint64_t raddr, uint32_t rkey,
			  uint32_t len, const uint8_t **src);

/* The link began a new session: every application QP fails (flushed, in error). */
void sl_chan_lane_session(struct sl_chan_lane *cl, struct sl_xport *x, uint64_t now_ns);

void sl_chan_lane_stats_get(const struct sl_chan_lane *cl, struct sl_chan_lane_stats *st);

/* --- the control half (srv.c) ------------------------------------------------------------- */

struct sl_chan_srv;

/* Counters of the control half, described once in sl_chan_srv_stat_table. */
struct sl_chan_srv_stats {
	uint64_t clients_accepted;
	uint64_t clients_denied;  /**< not in the allow lists (EACCES) */
	uint64_t clients_refused; /**< over max_clients */
	uint64_t clients_gone;
	uint64_t requests;
	uint64_t requests_refused;  /**< answered with an error, by any reason */
	uint64_t bad_messages;      /**< wrong size, magic, version, type, or a missing fd */
	uint64_t hello_mem_refused; /**< HELLOs refused for their memory */
	uint64_t mailbox_full;      /**< commands a lane's full mailbox did not take */
	uint64_t quota_mrs;         /**< MR_REG refused: the client's client_mrs (EDQUOT) */
	uint64_t quota_mr_bytes;    /**< MR_REG refused: the client's client_mr_bytes */
	uint64_t quota_cqs;         /**< CQ_CREATE refused: the client's client_cqs */
	uint64_t quota_qps;         /**< QP_CREATE refused: the client's client_qps */
	uint64_t quota_uid_clients; /**< connections refused: their uid's uid_clients */
	uint64_t hello_timeouts;    /**< connections closed without HELLO in hello_timeout_ns */
	uint64_t mrs;               /**< registered now */
	uint64_t cqs;               /**< now */
	uint64_t qps;               /**< now */
};

extern const struct sl_stat_table sl_chan_srv_stat_table;

/* An application's connection, from accept to release. */
enum sl_chan_client_state {
	SL_CHAN_CLIENT_FREE,     /**< no client in the slot */
	SL_CHAN_CLIENT_ACCEPTED, /**< connected, no HELLO yet: closed at hello_timeout_ns */
	SL_CHAN_CLIENT_ATTACHED, /**< HELLO done: its memory is mapped, it may make objects */
	SL_CHAN_CLIENT_GONE,     /**< hung up: what it held waits for the lanes to let go */
};

/*
 * One application as the daemon serves it, for telemetry: every field a whole word, taken
 * from one instant (sl_chan_srv_clients).
 */
struct sl_chan_client_view {
	uint64_t id;       /**< its number (protection domain), never reused */
	uint64_t state;    /**< enum sl_chan_client_state */
	uint64_t pid;      /**< SO_PEERCRED at accept */
	uint64_t uid;      /**< SO_PEERCRED at accept */
	uint64_t mrs;      /**< memory regions held */
	uint64_t mr_bytes; /**< their lengths' sum, bytes */
	uint64_t cqs;      /**< CQs held */
	uint64_t qps;      /**< QPs held */
	uint64_t requests; /**< requests served */
	uint64_t refused;  /**< of them, answered with an error */
};

/*
 * Listen at conf->socket_path (an old socket file there is replaced) and serve the lanes
 * given, each one's index its place in lanes[] (at most SL_CHAN_CQ_RINGS_MAX, all toward the
 * same peer host, each owning the whole QPN range of conf). NULL and errno.
 */
struct sl_chan_srv *sl_chan_srv_create(const struct sl_chan_srv_conf *conf,
				       struct sl_chan_lane *const *lanes, unsigned n_lanes,
				       struct sl_chan_mrs *mrs);

/* The lane of n_lanes a QP connecting qpn to peer_qpn is placed on; the peer's daemon places
 * its end on the lane of the same number (srv.c, "Lanes"). */
uint32_t sl_chan_srv_lane_of(uint32_t n_lanes, uint32_t qpn, uint32_t peer_qpn);

/* Serve for up to timeout_ms (one poll(2) round: accept, requests, hang-ups). */
int sl_chan_srv_poll(struct sl_chan_srv *s, int timeout_ms);

/* Every client is told goodbye (its QPs destroyed through the lanes), the socket removed. */
void sl_chan_srv_free(struct sl_chan_srv *s);

void sl_chan_srv_stats_get(const struct sl_chan_srv *s, struct sl_chan_srv_stats *st);

/*
 * Any thread, while s lives: the clients in the table now (every state but FREE), each row
 * consistent in itself, at most max of them into out. Returns how many were written.
 */
unsigned sl_chan_srv_clients(const struct sl_chan_srv *s, struct sl_chan_client_view *out,
			     unsigned max);

const char *sl_chan_client_state_name(enum sl_chan_client_state state);

/*
 * Whether HELLO may map a file as an application's memory of bytes, from what was read of it:
 * seals (F_GET_SEALS, negative when the file has none), fs_type (fstatfs f_type), mode and size
 * (fstat). 0: a regular file on tmpfs (a memfd), exactly bytes long, sealed against shrinking;
 * -EINVAL: anything else but the seal; -EPERM: no F_SEAL_SHRINK.
 */
int sl_chan_srv_mem_check(int seals, uint64_t fs_type, mode_t mode, uint64_t size, uint64_t bytes);

#endif /* SL_CHAN_H */
