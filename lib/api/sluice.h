/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sluice.h - libsluice: what an application links to use sluiced's queue pairs. No DPDK.
 *
 * The model is RDMA verbs', cut to what a software transport serves:
 *
 *   ctx = sl_ctx_open(path, NULL);                 // attach to a running sluiced
 *   buf = sl_mem_alloc(ctx, bytes);                // memory the daemon can reach
 *   mr  = sl_mr_reg(ctx, buf, bytes, SL_ACCESS_LOCAL_WRITE | SL_ACCESS_REMOTE_WRITE);
 *   cq  = sl_cq_create(ctx, 1024);
 *   qp  = sl_qp_create(ctx, &(struct sl_qp_attr){.send_cq = cq, .recv_cq = cq, ...});
 *   sl_qp_info(qp, mr, &mine); ...exchange with the peer (sl_oob_*)...
 *   sl_qp_connect(qp, &theirs);
 *   sl_post_send(qp, &(struct sl_wr){.opcode = SL_WR_WRITE, ...});
 *   n = sl_cq_poll(cq, wc, 16);
 *
 * The channel (docs/api.md): control requests travel over a unix socket (SOCK_SEQPACKET) to the
 * daemon, with the memory's file descriptor passed once (SCM_RIGHTS). Every byte an
 * application sends or receives, and every ring, lives in one shared memory file the library
 * creates at sl_ctx_open and the daemon maps: work requests go to the daemon through
 * single-producer single-consumer rings that its worker lcores poll, and completions come back
 * the same way. Posting and polling make no system call; an application that blocks instead of
 * spinning arms the CQ (sl_cq_arm) and waits for its event fd to become readable.
 *
 * Threads: a context, a QP and a CQ may each be used by one thread at a time (as verbs' are
 * without locks); different QPs and CQs may be used by different threads.
 *
 * Errors: functions that return a pointer return NULL and set errno; functions that return int
 * return 0 or a negative errno, and the daemon's refusals come back as the errno it chose (each
 * documented below); completions carry enum sl_wc_status.
 *
 * Units: bytes, bits/s, ns.
 */
#ifndef SLUICE_H
#define SLUICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SL_API_VERSION 5                             /**< the channel version this header speaks */
#define SL_SOCKET_DEFAULT "/run/sluice/sluiced.sock" /**< sluiced's control socket by default */
#define SL_MEM_DEFAULT_BYTES (64u << 20)             /**< shared memory per context by default */
#define SL_NAME_MAX 16                               /**< program, pacer names, with the NUL */

struct sl_ctx;
struct sl_mr;
struct sl_cq;
struct sl_qp;

/* --- context ------------------------------------------------------------------------------ */

struct sl_ctx_attr {
	size_t mem_bytes; /**< the shared memory to create: MRs and rings come from it, bytes
			   *   [SL_MEM_DEFAULT_BYTES] */
};

/*
 * Attach to the daemon listening at path (NULL: $SLUICE_SOCKET, else SL_SOCKET_DEFAULT).
 * attr may be NULL. NULL and errno: ENOENT / ECONNREFUSED (no daemon there), EACCES (the
 * socket's mode refuses this user, or the daemon's [api] allow_users / allow_groups do),
 * EPROTO (the daemon speaks another channel version), ENOMEM, or the daemon's refusal
 * (EMFILE: it serves as many applications as it may; EDQUOT: this user has [api] uid_clients
 * contexts open already).
 */
struct sl_ctx *sl_ctx_open(const char *path, const struct sl_ctx_attr *attr);

/* Detach: every QP, CQ and MR of the context is destroyed, then the memory is unmapped. */
void sl_ctx_close(struct sl_ctx *ctx);

/* The daemon's name for this host ([sluiced] name), for logs and the out-of-band exchange. */
const char *sl_ctx_host(const struct sl_ctx *ctx);

/*
 * Whether the daemon is still there: 0, or the -errno that broke the channel (-ECONNRESET once
 * the daemon hung up: it exited or closed the connection; -EPROTO: it said something it was
 * not asked). The data path makes no system call, so it never notices a daemon that died (its
 * rings just stop moving); this looks at the control socket, one poll(2), and breaks the
 * channel when the daemon is gone, as a failed request does.
 */
int sl_ctx_status(struct sl_ctx *ctx);

/*
 * The control socket, for an application's wait set: with no events asked for (epoll events
 * 0, poll events 0) it reports only POLLHUP / POLLERR, that is the daemon's going away. Only
 * for waiting: never read, write or close it.
 */
int sl_ctx_fd(const struct sl_ctx *ctx);

/* --- memory ------------------------------------------------------------------------------- */

/*
 * bytes of the context's shared memory, aligned to 64 bytes (4096 from 4096 bytes up), zeroed;
 * NULL and ENOMEM when it has no free range that large. Only this memory, and memory adopted
 * (sl_mem_adopt), can be registered.
 */
void *sl_mem_alloc(struct sl_ctx *ctx, size_t bytes);

/* Give back memory from sl_mem_alloc (NULL: nothing). It must not be registered any more. */
void sl_mem_free(struct sl_ctx *ctx, void *p);

/*
 * Adopt the application's own memory [addr, addr + len) (malloc'ed, mmap'ed) into the context's
 * shared memory without moving it: the pages holding it (the range rounded out to 4096 bytes)
 * are copied into a range of the context's memory, which is then mapped at their address in
 * one system call. The pointer stays valid, the bytes are the same, and the range may then be
 * registered (sl_mr_reg) and be the target of a peer's WRITE and READ. Costs a copy of the
 * pages and takes their size from the context's memory (docs/api.md, "Adopted memory").
 * Only private, anonymous, read-write memory is adopted (not the stack, a file's pages or
 * shared memory). Pages held by an adopted range may be adopted again by a range inside it (a
 * count; each call is undone by its own sl_mem_unadopt), but not by one that overlaps it in
 * part. The application must know:
 *   - a write by another thread to those pages while this runs may be lost;
 *   - after fork, a child shares the adopted pages with the parent (they are MAP_SHARED);
 *   - the memory must stay mapped until sl_mem_unadopt (free it after, not before).
 * 0 or -errno: -EINVAL (len 0, a range that wraps, memory of another kind), -EFAULT (part of
 * the range is not mapped), -EBUSY (it overlaps an adopted range in part), -ENOMEM (no room in
 * the context's memory), or mremap's error (nothing changed).
 */
int sl_mem_adopt(struct sl_ctx *ctx, void *addr, size_t len);

/*
 * Undo one sl_mem_adopt of the same range: the last one puts private anonymous pages with the
 * same bytes back at the address (in one system call) and frees the context's range. sl_ctx_close
 * gives every adopted range back. 0 or -errno: -ENOENT (no adopted range holds it), -EBUSY (a
 * memory region is registered in it: sl_mr_dereg first), or mmap's / mremap's error.
 */
int sl_mem_unadopt(struct sl_ctx *ctx, void *addr, size_t len);

/* Access flags of a memory region. Local read is always granted. */
#define SL_ACCESS_LOCAL_WRITE (1u << 0)  /**< RECV and READ may land here */
#define SL_ACCESS_REMOTE_WRITE (1u << 1) /**< the peer may WRITE here (needs LOCAL_WRITE) */
#define SL_ACCESS_REMOTE_READ (1u << 2)  /**< the peer may READ from here */

/*
 * Register [addr, addr + len) of sl_mem_alloc or adopted memory with access flags. NULL and
 * errno: EINVAL (not inside the context's memory nor inside one adopted range, len 0, unknown
 * flags, REMOTE_WRITE without LOCAL_WRITE), ENOSPC (the daemon's key table is full), EDQUOT (this
 * context holds its share: [api] client_mrs regions, or client_mr_bytes registered).
 */
struct sl_mr *sl_mr_reg(struct sl_ctx *ctx, void *addr, size_t len, unsigned access);

/*
 * Deregister: its keys stop working for work requests posted after this returns (a WRITE or
 * READ the peer posted earlier and that the daemon has begun may still finish). 0 or -errno.
 */
int sl_mr_dereg(struct sl_mr *mr);

uint32_t sl_mr_lkey(const struct sl_mr *mr);
uint32_t sl_mr_rkey(const struct sl_mr *mr);
void *sl_mr_addr(const struct sl_mr *mr);
size_t sl_mr_len(const struct sl_mr *mr);

/* --- completion queues -------------------------------------------------------------------- */

/* How a work request ended (verbs' ibv_wc_status, the ones a software transport can give). */
enum sl_wc_status {
	SL_WC_SUCCESS = 0,
	SL_WC_LOC_LEN_ERR,       /**< a RECV buffer shorter than the message that came */
	SL_WC_LOC_PROT_ERR,      /**< lkey wrong, range outside its MR, or no LOCAL_WRITE */
	SL_WC_REM_ACCESS_ERR,    /**< the peer refused rkey, range or access: no byte touched */
	SL_WC_REM_OP_ERR,        /**< the peer could not do it (a RECV too short, a READ over
				  *   its QP's max_msg_bytes, ...) */
	SL_WC_RETRY_EXC_ERR,     /**< the peer acknowledged nothing for the QP's timeout */
	SL_WC_WR_FLUSH_ERR,      /**< the QP went to error or was destroyed first */
	SL_WC_GENERAL_ERR,       /**< the daemon refused the work request itself (bad opcode) */
	SL_WC_RNR_RETRY_EXC_ERR, /**< the peer had no room for it (no RECV, its stash full) for
				  *   the QP's timeout, sent again after each backoff meanwhile */
};

/* Short name of a status ("success", "remote access error", ...). */
const char *sl_wc_status_str(enum sl_wc_status s);

enum sl_wc_opcode {
	SL_WC_SEND,
	SL_WC_WRITE,
	SL_WC_READ,
	SL_WC_RECV,          /**< a SEND arrived */
	SL_WC_RECV_RDMA_IMM, /**< a WRITE with immediate arrived (consumed a RECV) */
};

#define SL_WC_F_IMM (1u << 0) /**< imm is valid */

/* A completion. */
struct sl_wc {
	uint64_t wr_id;    /**< as posted */
	uint8_t status;    /**< enum sl_wc_status */
	uint8_t opcode;    /**< enum sl_wc_opcode */
	uint16_t flags;    /**< SL_WC_F_* */
	uint32_t qpn;      /**< the local QP */
	uint32_t byte_len; /**< RECV: bytes received; READ: bytes read; else bytes posted */
	uint32_t imm;      /**< immediate data (SL_WC_F_IMM) */
};

/*
 * A CQ of at least depth entries (rounded up to a power of two). NULL and errno: EINVAL, ENOMEM,
 * ENOSPC (the daemon has no free CQ), EDQUOT (this context holds [api] client_cqs CQs).
 */
struct sl_cq *sl_cq_create(struct sl_ctx *ctx, uint32_t depth);

/* 0, or -EBUSY while a QP uses it. */
int sl_cq_destroy(struct sl_cq *cq);

/* Up to max completions, oldest first; 0 when none. Never blocks, never makes a system call. */
int sl_cq_poll(struct sl_cq *cq, struct sl_wc *wc, int max);

/*
 * The event fd: readable once a completion arrives after sl_cq_arm. Each arm brings at most one
 * event, 8 bytes, and reading them clears it (a datagram socket the daemon made: read until
 * EAGAIN to take any events of earlier arms too). Typical loop: poll until empty, arm, poll
 * again (a completion may have raced the arm), then wait on the fd. Whatever the application
 * does with this fd, the daemon never waits on it.
 */
int sl_cq_event_fd(const struct sl_cq *cq);
int sl_cq_arm(struct sl_cq *cq);

/* --- queue pairs -------------------------------------------------------------------------- */

enum sl_receiver {
	SL_RECEIVER_MELO = 0, /**< selective retransmit, MELO's shared bits pool (default) */
	SL_RECEIVER_GBN = 1,  /**< go-back-N */
};

struct sl_qp_attr {
	struct sl_cq *send_cq;     /**< SEND, WRITE, READ completions (required) */
	struct sl_cq *recv_cq;     /**< RECV completions (required; may be send_cq) */
	uint32_t sq_depth;         /**< work requests posted and not completed [128], power of two
				    *   <= 4096 */
	uint32_t rq_depth;         /**< RECVs posted and not consumed [128], power of two <= 4096 */
	char program[SL_NAME_MAX]; /**< transport program ("dcqcn", "reno", ...) [the daemon's
				    *   default] */
	char pacer[SL_NAME_MAX];   /**< pacer ("tassel") [the daemon's] */
	uint8_t receiver;          /**< enum sl_receiver [MELO] */
	uint64_t rate_limit_bps;   /**< the QP's rate limit, bits/s on the wire (0: the link),
				    *   or of payload (rate_limit_msg_bytes) */
	uint32_t rate_limit_msg_bytes; /**< 0: rate_limit_bps counts wire bits; n: it counts
					*   the payload of messages of n bytes, and the daemon
					*   paces the wire at rate_limit_bps x
					*   sl_qp_wire_bytes(n) / n (perftest's --rate_limit) */
	uint32_t max_msg_bytes;        /**< largest SEND, WRITE or READ posted here, and largest
					*   READ a peer may ask of this QP (a longer one fails
					*   there with SL_WC_REM_OP_ERR) [1 MiB] */
};

/*
 * A QP, in state INIT: receives may be posted at once, sends once connected. The daemon places
 * it on one of its lanes toward the peer host when it connects (docs/api.md, "Lanes"). NULL and
 * errno: EINVAL (bad attr), ENOENT (no such program or pacer), EMFILE (the daemon has no free
 * QPN for applications), EDQUOT (this context holds [api] client_qps QPs), ENOMEM.
 */
struct sl_qp *sl_qp_create(struct sl_ctx *ctx, const struct sl_qp_attr *attr);

/*
 * Destroy: outstanding work requests complete with SL_WC_WR_FLUSH_ERR (they are on the CQ
 * when this returns), the peer's outstanding requests complete with an error there. 0 or
 * -errno; -EAGAIN (the daemon's lane has stopped taking commands: the QP is untouched and still
 * the caller's; try again later).
 */
int sl_qp_destroy(struct sl_qp *qp);

uint32_t sl_qp_num(const struct sl_qp *qp);

/*
 * Wire bytes a message of msg_bytes takes as the QP's rate limit counts them: each packet a
 * full segment of the daemon's size plus its headers, FCS, preamble and gap. A rate limit on
 * payload, as perftest's --rate_limit means it, is rate_limit_bps x sl_qp_wire_bytes(qp, n) / n
 * on the wire for messages of n bytes.
 */
uint64_t sl_qp_wire_bytes(const struct sl_qp *qp, uint64_t msg_bytes);

/* What a peer needs to reach a QP and, optionally, one memory region. Network byte order on
 * the out-of-band wire (sl_oob_*); host order here. */
struct sl_qp_info {
	uint32_t qpn;
	uint32_t psn;   /**< the PSN the QP's first packet carries: random per QP */
	uint32_t token; /**< the QP's connection token, random per QP: the daemon refuses a frame
			 *   for the QP that does not carry it, so only a peer given this info can
			 *   reach the QP */
	uint32_t rkey;  /**< the MR's rkey (0: none) */
	uint64_t addr;  /**< the MR's address in its owner's space (0: none) */
	uint64_t len;   /**< the MR's length, bytes */
	char host[32];  /**< the daemon's host name (sl_ctx_host), informative */
};

/* Fill info for qp and mr (mr NULL: no memory region). */
void sl_qp_info(const struct sl_qp *qp, const struct sl_mr *mr, struct sl_qp_info *info);

/*
 * Connect to the peer's QP (RTS): from now on work requests flow, their frames carry the peer's
 * token, and the peer's packets are expected from its psn. peer is what the peer's sl_qp_info
 * gave (sl_oob_exchange carries it): a QP accepts frames only from the QP its application gave
 * its info to. 0, -EINVAL (bad QPN, token 0), -EISCONN (already connected), -EAGAIN (the
 * lane it goes to has stopped taking commands: still not connected; try again later).
 */
int sl_qp_connect(struct sl_qp *qp, const struct sl_qp_info *peer);

/* --- work requests ------------------------------------------------------------------------ */

enum sl_wr_opcode {
	SL_WR_SEND,
	SL_WR_SEND_WITH_IMM,
	SL_WR_WRITE,
	SL_WR_WRITE_WITH_IMM, /**< consumes a RECV at the peer, which sees the immediate */
	SL_WR_READ,
};

#define SL_WR_F_SIGNALED (1u << 0) /**< complete with a CQE (else only errors do) */

/* A send-queue work request: one contiguous local buffer (one SGE). */
struct sl_wr {
	uint64_t wr_id;
	uint8_t opcode; /**< enum sl_wr_opcode */
	uint8_t flags;  /**< SL_WR_F_* */
	uint32_t lkey;  /**< of the MR holding [addr, addr + len) */
	void *addr;     /**< SEND / WRITE: source; READ: destination */
	uint32_t len;   /**< bytes, 0..max_msg_bytes */
	uint64_t raddr; /**< WRITE, READ: address in the peer's MR */
	uint32_t rkey;  /**< WRITE, READ: the peer's rkey */
	uint32_t imm;   /**< *_WITH_IMM */
};

/*
 * Post n work requests in order. Returns how many were posted (0..n): it stops at the first
 * that does not fit the send queue (-ENOBUFS if that is the first) or that is malformed
 * (-EINVAL if first: bad opcode, length over max_msg_bytes, a READ's included). A wrong lkey is
 * not refused here: it completes with SL_WC_LOC_PROT_ERR. -ENOTCONN before sl_qp_connect,
 * -EPIPE once the QP is in error.
 */
int sl_post_send(struct sl_qp *qp, const struct sl_wr *wr, int n);

/* A receive buffer: where one SEND or WRITE_WITH_IMM's notification lands. */
struct sl_recv_wr {
	uint64_t wr_id;
	uint32_t lkey;
	void *addr;
	uint32_t len; /**< bytes */
};

/*
 * Post n receive buffers; like sl_post_send (-ENOBUFS when the receive queue is full, -EPIPE once
 * the QP is in error), but allowed before sl_qp_connect too (verbs' INIT): the daemon takes them
 * once the QP is connected.
 */
int sl_post_recv(struct sl_qp *qp, const struct sl_recv_wr *wr, int n);

/* --- out-of-band exchange ----------------------------------------------------------------- */

/*
 * The exchange every tool and example uses to trade struct sl_qp_info before connecting, over
 * TCP (perftest's way): the server accepts one client on port; both then exchange infos and
 * meet at barriers. NULL and errno (ETIMEDOUT after timeout_ms, or the socket's error).
 */
struct sl_oob;
struct sl_oob *sl_oob_accept(uint16_t port, int timeout_ms);
struct sl_oob *sl_oob_connect(const char *host, uint16_t port, int timeout_ms);

/*
 * Send our n infos, receive the peer's n. 0 or -errno: -EPROTO (a malformed message, or the
 * peer sent another count), -ETIMEDOUT, -ECONNRESET.
 */
int sl_oob_exchange(struct sl_oob *o, const struct sl_qp_info *mine, struct sl_qp_info *theirs,
		    unsigned n);

/* Wait until the peer calls it too (tests' start and end). 0 or -errno as above. */
int sl_oob_sync(struct sl_oob *o);

/* Send and receive n bytes of anything (a tool's parameters or results), both directions. */
int sl_oob_swap(struct sl_oob *o, const void *mine, void *theirs, size_t n);

void sl_oob_close(struct sl_oob *o);

#ifdef __cplusplus
}
#endif

#endif /* SLUICE_H */
