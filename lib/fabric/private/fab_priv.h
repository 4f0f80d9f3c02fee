/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fab_priv.h - the sluice libfabric provider's objects, shared by its files. Nothing here is
 * installed: applications see only libfabric's API, and the library exports only fi_prov_ini.
 *
 * The objects and who owns what:
 *   fabric  (prov.c)    the provider's one fabric; opens domains and EQs
 *   domain  (domain.c)  one libsluice context (one connection to sluiced, one shared memory
 *                       file); opens AVs, CQs, endpoints, and memory registrations (an RMA
 *                       target's pages adopted into that file)
 *   av      (av.c)      a table of peer names; fi_addr_t is the index
 *   cq      (cq.c)      a software ring of libfabric completions, filled by the progress of the
 *                       endpoints bound to it; its wait fd is an epoll set of theirs
 *   eq      (eq.c)      a software ring of events with an eventfd to wait on; reading it
 *                       moves the connections of the objects bound to it (cm.c)
 *   ep      (ep.c)      an endpoint: a libsluice CQ, bounce buffers, and one peer (one QP)
 *                       per remote endpoint (peer.c), progress (progress.c); an RDM one
 *                       has a connection listener and any number of peers, a MSG one
 *                       (cm.c) one peer, its connection's
 *   pep     (cm.c)      a passive endpoint: a listener whose handshakes become FI_CONNREQ
 * Threads: libfabric's FI_THREAD_DOMAIN: the application serializes calls on a domain and
 * everything under it, so no object here takes a lock.
 */
#ifndef SL_FAB_PRIV_H
#define SL_FAB_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>

#include "fab_addr.h"
#include "sluice.h"

#define SL_FAB_NAME "sluice"
#define SL_FAB_VERSION FI_VERSION(0, 1)
#define SL_FAB_FI_VERSION FI_VERSION(1, 17)

#define SL_FAB_INJECT_BYTES 64u /**< fi_inject's limit, bytes (any send is copied anyway) */
#define SL_FAB_RXQ_DEPTH 256u   /**< receives an application may have posted per endpoint */

extern struct fi_provider sl_fab_prov;

#define SL_FAB_WARN(sub, ...) FI_WARN(&sl_fab_prov, sub, __VA_ARGS__)
#define SL_FAB_INFO(sub, ...) FI_INFO(&sl_fab_prov, sub, __VA_ARGS__)

/* The FI_SLUICE_* settings (prov.c reads them once, at fi_prov_ini). */
struct sl_fab_params {
	char *socket;         /**< sluiced's socket (NULL: libsluice's default) */
	char *addr;           /**< the IPv4 address endpoints listen on and name (NULL: the
			       *   first address of an interface that is up, not loopback) */
	size_t max_msg_bytes; /**< largest message, and each bounce buffer's size, bytes */
	size_t tx_slots;      /**< send bounce buffers per endpoint (the tx queue's size) */
	size_t rx_slots;      /**< receive bounce buffers per peer (RECVs posted per QP) */
	size_t mem_mb;        /**< the libsluice context's shared memory, MiB */
	char *program;        /**< transport program of the QPs (NULL: the daemon's default) */
	size_t rate_mbps;     /**< each QP's rate limit, Mbit/s on the wire (0: none) */
	char *receiver;       /**< "melo" or "gbn" (NULL: melo) */
	size_t connect_ms;    /**< a handshake's time limit, ms */
	size_t idle_wait_us;  /**< an empty fi_cq_read with work outstanding waits this long at
			       *   most for the daemon's completion event, us (0: it spins) */
};
extern struct sl_fab_params sl_fab_params;

/* prov.c */
int sl_fab_errno(int neg_errno);
/* fi_cq_strerror / fi_eq_strerror: s, copied into buf when the caller gave one. */
const char *sl_fab_strerror(const char *s, char *buf, size_t len);
/* fi_control's FI_GETWAIT / FI_GETWAITOBJ for an object that waits on fd (-1: none). */
int sl_fab_wait_control(int fd, int command, void *arg);

/* info.c: fi_getinfo's answer for hints (NULL: everything), or -FI_ENODATA with the reason
 * logged. node / service / flags as fi_getinfo takes them. */
int sl_fab_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
		   const struct fi_info *hints, struct fi_info **info);

/* --- fabric, domain ----------------------------------------------------------------------- */

struct sl_fab_fabric {
	struct fid_fabric fid;
};

struct sl_fab_domain {
	struct fid_domain fid;
	struct sl_fab_fabric *fabric;
	struct sl_ctx *ctx;
	uint64_t next_key; /**< fi_mr_reg's keys of regions for local access only */
	unsigned refs;     /**< AVs, CQs, endpoints, MRs open on it */
};

int sl_fab_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context);
int sl_fab_domain_open(struct fid_fabric *fabric, struct fi_info *info, struct fid_domain **dom,
		       void *context);
int sl_fab_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr, struct fid_eq **eq,
		   void *context);
int sl_fab_av_open(struct fid_domain *domain, struct fi_av_attr *attr, struct fid_av **av,
		   void *context);
int sl_fab_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr, struct fid_cq **cq,
		   void *context);
int sl_fab_ep_open(struct fid_domain *domain, struct fi_info *info, struct fid_ep **ep,
		   void *context);
int sl_fab_pep_open(struct fid_fabric *fabric, struct fi_info *info, struct fid_pep **pep,
		    void *context);
/* A name as fi_getinfo gives it (FI_ADDR_STR, allocated): into *where, its length *len. */
int sl_fab_info_addr(void **where, size_t *len, const struct sl_fab_addr *a);

/* Operations an object does not have: each answers -FI_ENOSYS (unsupported.c). */
extern struct fi_ops_tagged sl_fab_no_tagged;
int sl_fab_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags);
int sl_fab_no_control(struct fid *fid, int command, void *arg);
int sl_fab_no_ops_open(struct fid *fid, const char *name, uint64_t flags, void **ops,
		       void *context);
ssize_t sl_fab_no_cancel(fid_t fid, void *context);
int sl_fab_no_getopt(fid_t fid, int level, int optname, void *optval, size_t *optlen);
int sl_fab_no_setopt(fid_t fid, int level, int optname, const void *optval, size_t optlen);
int sl_fab_no_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr, struct fid_ep **tx,
		     void *context);
int sl_fab_no_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr, struct fid_ep **rx,
		     void *context);
ssize_t sl_fab_no_size_left(struct fid_ep *ep);
int sl_fab_no_setname(fid_t fid, void *addr, size_t addrlen);
int sl_fab_no_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen);
int sl_fab_no_connect(struct fid_ep *ep, const void *addr, const void *param, size_t paramlen);
int sl_fab_no_listen(struct fid_pep *pep);
int sl_fab_no_accept(struct fid_ep *ep, const void *param, size_t paramlen);
int sl_fab_no_reject(struct fid_pep *pep, fid_t handle, const void *param, size_t paramlen);
int sl_fab_no_shutdown(struct fid_ep *ep, uint64_t flags);
int sl_fab_no_join(struct fid_ep *ep, const void *addr, uint64_t flags, struct fid_mc **mc,
		   void *context);

/* --- event queue (eq.c) ------------------------------------------------------------------ */

struct sl_fab_eq;

/* Bind fid (a passive or MSG endpoint, waited on by wait_fd, an epoll set) to the EQ eq_fid:
 * the EQ's readers move its connections (sl_fab_cm_progress), and *slot is the EQ. 0, or
 * -FI_EINVAL (bound already), -FI_ENOSPC past the EQ's room for objects. */
int sl_fab_eq_bind(struct sl_fab_eq **slot, struct fid *eq_fid, struct fid *fid, int wait_fd);
void sl_fab_eq_detach(struct sl_fab_eq *eq, struct fid *fid);
/* Queue a connection event (struct fi_eq_cm_entry: fid, info). 0, or -FI_EAGAIN: full. */
int sl_fab_eq_report(struct sl_fab_eq *eq, uint32_t event, struct fid *fid, struct fi_info *info);
/* Queue an error event for fid (err: a positive FI_E* code). 0, or -FI_EAGAIN: full. */
int sl_fab_eq_report_err(struct sl_fab_eq *eq, struct fid *fid, int err);

/* --- address vector ----------------------------------------------------------------------- */

struct sl_fab_av {
	struct fid_av fid;
	struct sl_fab_domain *domain;
	struct sl_fab_addr *addrs; /**< by fi_addr_t */
	bool *used;                /**< addrs[i] holds a name (fi_av_remove clears it) */
	size_t n;                  /**< entries handed out */
	size_t cap;                /**< entries allocated */
	unsigned refs;             /**< endpoints bound */
};

/* The name at fi_addr, or NULL (never inserted, removed). */
const struct sl_fab_addr *sl_fab_av_addr(const struct sl_fab_av *av, fi_addr_t fi_addr);
/* The fi_addr_t of a name, FI_ADDR_NOTAVAIL if absent. O(entries). */
fi_addr_t sl_fab_av_find(const struct sl_fab_av *av, const struct sl_fab_addr *a);

/* --- completion queue --------------------------------------------------------------------- */

struct sl_fab_cqe {
	void *op_context;
	uint64_t flags; /**< FI_SEND / FI_RECV, FI_MSG / FI_RMA, FI_READ / FI_WRITE /
			 *   FI_REMOTE_WRITE, FI_REMOTE_CQ_DATA */
	size_t len;
	void *buf;
	uint64_t data;
	fi_addr_t src;
	int err;        /**< 0, or a positive FI_E* code: an error completion */
	int prov_errno; /**< enum sl_wc_status for err */
	size_t olen;    /**< bytes that did not fit a receive buffer (FI_ETRUNC) */
};

struct sl_fab_ep;
struct sl_fab_pep;

struct sl_fab_cq {
	struct fid_cq fid;
	struct sl_fab_domain *domain;
	enum fi_cq_format format;
	enum fi_wait_obj wait_obj;
	struct sl_fab_cqe *ring; /**< completions, oldest at head */
	size_t cap;              /**< a power of two */
	size_t head, tail;       /**< free-running indices */
	struct sl_fab_cqe *errs; /**< error completions, oldest at err_head */
	size_t err_head, err_tail;
	int epfd;                 /**< FI_WAIT_FD: epoll set of the bound endpoints' wait fds */
	int sigfd;                /**< eventfd fi_cq_signal writes (in epfd) */
	struct sl_fab_ep *eps[8]; /**< endpoints bound, whose progress fills the queue */
	unsigned n_eps;
};

/* Room for one more completion, normal or error. */
bool sl_fab_cq_room(const struct sl_fab_cq *cq);
/* Add a completion (the caller made sure of room). */
void sl_fab_cq_push(struct sl_fab_cq *cq, const struct sl_fab_cqe *e);
int sl_fab_cq_attach(struct sl_fab_cq *cq, struct sl_fab_ep *ep);
void sl_fab_cq_detach(struct sl_fab_cq *cq, struct sl_fab_ep *ep);

/* --- endpoint ----------------------------------------------------------------------------- */

/* What a send bounce buffer is used for. */
enum sl_fab_op {
	SL_FAB_OP_SEND,  /**< a message: the slot holds its bytes */
	SL_FAB_OP_WRITE, /**< an RMA write: the slot holds the bytes to write */
	SL_FAB_OP_READ,  /**< an RMA read: the bytes land in the slot, then in rbuf */
};

/* A send bounce buffer and what it carries. */
struct sl_fab_tx {
	void *context;
	enum sl_fab_op op;
	void *rbuf;     /**< READ: the application's buffer */
	uint64_t raddr; /**< WRITE, READ: the target's virtual address (FI_MR_VIRT_ADDR) */
	uint32_t rkey;  /**< WRITE, READ: the target region's key (libsluice's rkey) */
	uint32_t len;   /**< bytes */
	uint32_t data;
	uint32_t peer;   /**< index in ep->peers */
	int32_t next;    /**< the peer's next waiting send, or the free list's next; -1: none */
	bool has_data;   /**< SEND_WITH_IMM, WRITE_WITH_IMM */
	bool completion; /**< report to the CQ */
	bool posted;     /**< on its QP's send queue: sluiced holds it until it completes */
};

/* An operation the application asks of an endpoint's transmit side (ep.c, rma.c). */
struct sl_fab_op_req {
	enum sl_fab_op op;
	void *buf;      /**< SEND, WRITE: the source (copied at once); READ: the destination */
	size_t len;     /**< bytes */
	fi_addr_t dest; /**< RDM: the peer (a MSG endpoint's is its connection's) */
	void *context;
	uint64_t data;  /**< FI_REMOTE_CQ_DATA */
	uint64_t flags; /**< FI_INJECT, FI_REMOTE_CQ_DATA, FI_COMPLETION */
	uint64_t raddr; /**< WRITE, READ */
	uint64_t key;   /**< WRITE, READ */
};

/* A receive the application posted. */
struct sl_fab_rx {
	void *buf;
	size_t len;
	void *context;
	bool completion;
};

/* A message in a bounce buffer that no receive was posted for yet. */
struct sl_fab_unexp {
	uint32_t peer, slot;
	uint32_t len;
	uint32_t imm;
	bool has_imm;
};

enum sl_fab_peer_state {
	SL_FAB_PEER_IDLE,       /**< no QP yet */
	SL_FAB_PEER_CONNECTING, /**< our handshake runs; sends wait */
	SL_FAB_PEER_READY,      /**< QP connected */
	SL_FAB_PEER_FAILED,     /**< handshake or QP failed: sends complete with an error */
};

/* One remote endpoint and the QP to it. */
struct sl_fab_peer {
	struct sl_fab_addr addr;
	enum sl_fab_peer_state state;
	int err;             /**< FAILED: the FI_E* code sends complete with */
	struct sl_qp *qp;    /**< from the first handshake on */
	void *rx_mem;        /**< rx_slots bounce buffers */
	struct sl_mr *rx_mr; /**< over rx_mem */
	int hs_fd;           /**< our outgoing handshake's socket, -1: none */
	uint8_t hs_buf[SL_FAB_HS_BYTES];
	size_t hs_have;               /**< ACCEPT bytes read */
	bool hs_sent;                 /**< HELLO written */
	uint64_t hs_end_ns;           /**< CLOCK_MONOTONIC deadline */
	int32_t wait_head, wait_tail; /**< sends waiting for READY (tx indices), -1: none */
};

/* A handshake another endpoint began with us. */
struct sl_fab_incoming {
	int fd;
	uint8_t buf[SL_FAB_HS_BYTES];
	size_t have;
	uint64_t end_ns;
};

#define SL_FAB_INCOMING_MAX 16

/* A connection listener and the HELLOs being read from it (an RDM endpoint's, a passive
 * endpoint's). */
struct sl_fab_listener {
	int fd;   /**< listening socket, -1: none */
	int epfd; /**< the epoll set its sockets join (its owner's wait fd) */
	struct sl_fab_incoming in[SL_FAB_INCOMING_MAX];
	uint32_t n;
};

/* A connection request a passive endpoint reported (FI_CONNREQ's info->handle): the HELLO and
 * its socket, until fi_accept or fi_reject answers it (cm.c). */
struct sl_fab_connreq {
	struct fid fid; /**< FI_CLASS_CONNREQ */
	struct sl_fab_pep *pep;
	struct sl_fab_ep *ep;        /**< the endpoint made from it to answer it, NULL: none */
	struct sl_fab_connreq *next; /**< the passive endpoint's requests */
	int fd;
	struct sl_fab_hs hello;
};

struct sl_fab_ep {
	struct fid_ep fid;
	struct sl_fab_domain *domain;
	struct sl_fab_av *av;
	struct sl_fab_cq *tx_cq, *rx_cq;
	uint64_t tx_flags, rx_flags; /**< FI_SELECTIVE_COMPLETION from fi_ep_bind */
	uint64_t tx_op_flags;        /**< fi_info's tx_attr->op_flags (FI_COMPLETION) */
	uint64_t rx_op_flags;
	bool enabled;
	bool source; /**< FI_SOURCE: receives say their sender's fi_addr_t (an AV walk each) */
	enum fi_ep_type type;       /**< FI_EP_RDM or FI_EP_MSG */
	struct sl_fab_addr name;    /**< ours; RDM: port set once the listener is bound; MSG: the
				     *   connection's local address */
	struct sl_fab_listener lis; /**< RDM only */
	struct sl_fab_eq *eq;       /**< MSG: where its connection events go */
	struct sl_fab_connreq *connreq; /**< MSG: the request fi_accept answers (info->handle) */
	int conn_fd;        /**< MSG: the connection's socket once connected, -1: none */
	int wait_fd;        /**< epoll set: the libsluice CQ's event fd, sluiced's socket (its
			     *   hang-up), listener, handshakes */
	struct sl_cq *scq;  /**< every QP's sends and receives */
	uint32_t scq_depth; /**< entries */
	/* send bounce buffers */
	void *tx_mem;
	struct sl_mr *tx_mr;
	struct sl_fab_tx *tx;
	uint32_t n_tx;
	int32_t tx_free;  /**< free list head, -1: none */
	uint32_t tx_busy; /**< slots taken: sends not completed yet */
	/* receives the application posted: a ring */
	struct sl_fab_rx *rxq;
	uint32_t rxq_cap, rxq_head, rxq_tail; /**< cap a power of two; free-running */
	/* messages waiting for a receive: a ring */
	struct sl_fab_unexp *unexp;
	uint32_t unexp_cap, unexp_head, unexp_tail;
	/* peers */
	struct sl_fab_peer *peers;
	uint32_t n_peers, peers_cap;
	uint32_t n_connecting; /**< peers whose own handshake runs */
	uint64_t hs_last_ns;   /**< when the handshakes last moved, CLOCK_MONOTONIC ns */
	bool armed;            /**< the libsluice CQ was armed: drain its event fd */
	uint32_t tx_doomed;    /**< sends waiting on failed peers, to complete in error */
	int lost_err;          /**< 0, or FI_ECONNABORTED: sluiced hung up, and everything
				*   outstanding completes with it (progress.c) */
};

/* peer.c: the listener, the handshakes, one QP per peer. */
/* Listen on *name (ip4 0: FI_SLUICE_ADDR or the first interface up; port 0: any), its port
 * set; its sockets join epfd. 0 or -FI_E*. */
int sl_fab_listener_open(struct sl_fab_listener *l, struct sl_fab_addr *name, int epfd);
void sl_fab_listener_close(struct sl_fab_listener *l);
/* A HELLO that decoded and names the address it came from, read whole from fd: answer it.
 * Return 1 to keep fd (its owner closes it), 0 to have it closed. */
typedef int (*sl_fab_hello_fn)(void *owner, int fd, const struct sl_fab_hs *m);
/* Accept new connections, read their HELLOs, hand each whole one to fn. */
void sl_fab_listener_step(struct sl_fab_listener *l, uint64_t now_ns, sl_fab_hello_fn fn,
			  void *owner);
void sl_fab_peers_close(struct sl_fab_ep *ep);
/* Make an IDLE peer's QP and post its receives; on failure nothing is left made. */
int sl_fab_peer_setup(struct sl_fab_ep *ep, struct sl_fab_peer *p);
/* Answer HELLO m on fd: connect p's QP to m's, send our ACCEPT. 0, or -FI_EIO (the QP),
 * -FI_ECONNABORTED (the socket). */
int sl_fab_peer_answer(struct sl_fab_ep *ep, struct sl_fab_peer *p, int fd,
		       const struct sl_fab_hs *m);
/* The peer for a name, made (IDLE) if new; NULL and -FI_ENOMEM. */
struct sl_fab_peer *sl_fab_peer_get(struct sl_fab_ep *ep, const struct sl_fab_addr *a);
/* Begin connecting an IDLE peer. 0, or -FI_E* with the peer left IDLE and nothing made. */
int sl_fab_peer_connect(struct sl_fab_ep *ep, struct sl_fab_peer *p);
/* Accept new handshakes, advance every handshake that can move. */
void sl_fab_handshakes(struct sl_fab_ep *ep, uint64_t now_ns);
/* A peer failed (err: FI_E*): its waiting sends are to complete with err (progress, as the
 * CQ has room), new ones are refused with it. */
void sl_fab_peer_fail(struct sl_fab_ep *ep, struct sl_fab_peer *p, int err);

/* cm.c: MSG endpoints' connections. */
/* A request answered (accepted: its socket taken, fd -1) or refused (closed): forgotten. */
void sl_fab_connreq_free(struct sl_fab_connreq *cr);
extern struct fi_ops_cm sl_fab_ep_cm_ops;
/* Move the connections of an object bound to an EQ (a passive or a MSG endpoint). */
void sl_fab_cm_progress(struct fid *fid);
/* A MSG endpoint's handshake got its ACCEPT: fd is its connection from now on. */
void sl_fab_msg_connected(struct sl_fab_ep *ep, int fd);
/* A MSG endpoint's peer failed (err: FI_E*), in state was: the EQ hears of it. */
void sl_fab_msg_lost(struct sl_fab_ep *ep, enum sl_fab_peer_state was, int err);
/* A MSG endpoint's connection: the peer closed it? */
void sl_fab_msg_watch(struct sl_fab_ep *ep);

static inline struct sl_fab_ep *
sl_fab_ep_of(struct fid_ep *fid)
{
	return container_of(fid, struct sl_fab_ep, fid);
}

/* ep.c: take a send slot for r, copy a SEND's or WRITE's bytes into it, and post it on its
 * peer's QP (or queue it behind the peer's handshake). 0 or -FI_E* (-FI_EAGAIN: no free slot). */
ssize_t sl_fab_tx_submit(struct sl_fab_ep *ep, const struct sl_fab_op_req *r);

/* rma.c: fi_write, fi_read and their kin. */
extern struct fi_ops_rma sl_fab_ep_rma_ops;

/* progress.c: the data path. */
void sl_fab_progress(struct sl_fab_ep *ep);
/* Post a peer's waiting sends once it is READY. */
void sl_fab_tx_flush(struct sl_fab_ep *ep, struct sl_fab_peer *p);
/* Complete tx slot i (err: 0 or FI_E*), and free it. */
void sl_fab_tx_done(struct sl_fab_ep *ep, uint32_t i, int err, int prov_errno);
/* Arm the libsluice CQ before a wait. */
int sl_fab_ep_arm(struct sl_fab_ep *ep);
/* Sends or receives outstanding: a completion is to come. */
bool sl_fab_ep_busy(const struct sl_fab_ep *ep);
uint64_t sl_fab_now_ns(void);

/* wr_id of a libsluice work request: a send slot, or a peer's receive slot. */
#define SL_FAB_WR_RX (UINT64_C(1) << 63)
#define SL_FAB_WR_RX_ID(peer, slot) (SL_FAB_WR_RX | (uint64_t)(peer) << 32 | (slot))

#endif /* SL_FAB_PRIV_H */
