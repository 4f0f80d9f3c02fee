/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * srv.c - the control half of the application channel (sl_chan.h): the unix socket, each
 * application's requests, its shared memory, memory regions, CQs and QPs, and the commands that
 * hand QPs to a lane. Plain POSIX, one control thread, no DPDK. This file keeps the socket, the
 * clients' life and the commands; srv_req.c serves each request by the rules below.
 *
 * Clients. A connection is a client: a protection domain numbered from 1 upwards, never
 * reused, so a key or a QP of a client that left can never be taken for a new one's. The
 * number is 64 bits wherever it goes (HELLO's answer, the commands, the key table, CQs, QPs):
 * 32 bits wrap after 2^32 connections, 64 bits at a million a second take half a million years.
 * Its first request must be HELLO, with its memory: a memfd on tmpfs, exactly mem_bytes long and
 * sealed against shrinking, the only memory whose pages cannot be taken from under the lanes
 * (sl_chan_srv_mem_check says why). Over max_clients a connection is accepted, answered HELLO
 * -EMFILE and closed.
 *
 * Quotas. Each pool (MRs, CQs, QPs, clients) is shared, and one client may hold only its share
 * of it (client_mrs, client_mr_bytes, client_cqs, client_qps; uid_clients for the connections of
 * one uid): past its share a request is refused -EDQUOT, counted by reason, while an empty pool
 * is -ENOSPC or -EMFILE as before. A client counts what it holds in struct client; a ghost
 * (below) keeps holding it, and its uid keeps its slot, until it is reaped. A connection that
 * has not completed HELLO hello_timeout_ns after it was accepted is closed (hello_timeouts): it
 * would hold a client slot forever. Each poll looks at the deadlines on the monotonic clock and
 * waits in poll(2) no longer than the nearest one.
 *
 * Messages. Each request is exactly one struct sl_chan_req; anything else (another size, magic,
 * version or type, an fd missing or extra) is a bad message, answered -EPROTO when its header
 * (magic, version, type, seq) could be read, silently dropped otherwise; every fd it carried
 * is closed. Every answer is sent without waiting (MSG_DONTWAIT): a client that does not read
 * its answers is hung up on, never waited for.
 *
 * CQ events. The daemon makes each CQ's event fd itself: a datagram socket pair whose one end
 * it keeps and whose other it hands over in CQ_CREATE's answer. A lane signals with a send()
 * that cannot block whatever the application does with its end (MSG_DONTWAIT is per call, not
 * a flag of the open file, and the daemon's end is in no other process); a full queue at the
 * application's end (it did not read) fails with EAGAIN, and the fd is readable already. An fd
 * from the application could not be trusted so: an eventfd's blocking mode belongs to the
 * open file it shares, so it could clear O_NONBLOCK, fill the counter and put the lane's lcore
 * to sleep in write(); a socket of its choosing could make the daemon send to someone else.
 * The daemon's end is shut for reading, so the application cannot queue data there either. Every
 * address and ring the application names is checked against its memory (without overflow) before
 * the daemon computes a pointer from it: a ring is 64-byte aligned (its indexes are atomics on
 * their own cache lines) and lies whole in the memory; a QP's SQ and RQ overlap neither each other
 * nor its CQs' rings.
 *
 * Lanes. A QP is on no lane until it connects; CONNECT places it on the lane its two QPNs name,
 * floor((qpn + peer_qpn) / 2) mod lanes (sl_chan_srv_lane_of), which its peer's daemon computes
 * alike: a lane's link carries frames to the peer's lane of the same number only, so both ends
 * of a connection must sit on lanes of one number. The mean of the two QPNs spreads QPs created
 * one after the other on both hosts round-robin over the lanes, whatever the QPNs each daemon
 * gave out (their sum alone would put every pair of equal QPNs on an even lane). Its CQs have
 * a ring for every lane (sl_chan_abi.h), so QPs on several lanes may share one.
 *
 * Commands and time. A QP is connected and destroyed by a command to its lane
 * (sl_chan_lane_call, SL_CHAN_SRV_CMD_NS at most); a hang-up sends CLIENT_GONE to every lane.
 * Each object keeps its last command in a struct pending, the slot the lane answers into. A
 * lane that does not answer in time may still hold what the command names, so nothing it
 * names is freed: the request fails with -ETIMEDOUT, and the command stays with its object
 * (a QP's slot keeps its QPN, a client that left keeps its memory mapped, its CQs and QPs) until
 * the lane answers, which every poll checks; meanwhile the QP answers -EBUSY. A lane whose
 * mailbox is full (of commands that timed out) takes no command at all: the slot is free again
 * at once, counted in mailbox_full, and the request fails with -EAGAIN having changed nothing,
 * except a hang-up's CLIENT_GONE, which every poll posts again until the lane takes it. A
 * client gone before its lanes answered is a ghost: its socket is closed; its memory, MRs, CQs
 * and QPs stay (its keys resolve only for its own QPs, which its lanes still hold) until the
 * lanes answer; and its slot counts against max_clients until the ghost is reaped.
 *
 * Counters are written by the control thread only (sl_stat_add) and read by telemetry with
 * sl_chan_srv_stats_get. Units: bytes, ns, ms.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <syslog.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "sl_chan.h"
#include "sl_common.h"
#include "sl_fdmsg.h"
#include "sl_proto.h"
#include "sl_time.h"
#include "srv_priv.h"

#define FDS_MAX 4u               /**< fds read from one message, at most */
#define REQS_PER_POLL 16u        /**< requests served per client per poll */
#define SOCKET_TMP_SUFFIX ".new" /**< the socket file's name until it listens */

static const struct sl_stat_desc stat_desc[] = {
	SL_STAT(struct sl_chan_srv_stats, clients_accepted, "applications connected"),
	SL_STAT(struct sl_chan_srv_stats, clients_denied,
		"connections refused EACCES: the peer's uid and groups are not in [api] "
		"allow_users "
		"or allow_groups"),
	SL_STAT(struct sl_chan_srv_stats, clients_refused,
		"connections refused (HELLO -EMFILE): max_clients reached"),
	SL_STAT(struct sl_chan_srv_stats, clients_gone,
		"applications that hung up (their QPs, CQs, MRs and memory released)"),
	SL_STAT(struct sl_chan_srv_stats, requests, "control requests read"),
	SL_STAT(struct sl_chan_srv_stats, requests_refused,
		"requests answered with an error, any reason"),
	SL_STAT(struct sl_chan_srv_stats, bad_messages,
		"messages of the wrong size, magic, version or type, or with an fd missing or "
		"extra"),
	SL_STAT(struct sl_chan_srv_stats, hello_mem_refused,
		"HELLOs refused for their memory: mem_bytes out of range, not a memfd on tmpfs "
		"of mem_bytes (-EINVAL), not sealed against shrinking (-EPERM)"),
	SL_STAT(struct sl_chan_srv_stats, mailbox_full,
		"commands a lane's full mailbox did not take (the request answered -EAGAIN; a "
		"hang-up's CLIENT_GONE is posted again at the next poll)"),
	SL_STAT(struct sl_chan_srv_stats, quota_mrs,
		"MR_REGs refused EDQUOT: the client holds [api] client_mrs regions"),
	SL_STAT(struct sl_chan_srv_stats, quota_mr_bytes,
		"MR_REGs refused EDQUOT: the client's regions would pass [api] client_mr_bytes"),
	SL_STAT(struct sl_chan_srv_stats, quota_cqs,
		"CQ_CREATEs refused EDQUOT: the client holds [api] client_cqs CQs"),
	SL_STAT(struct sl_chan_srv_stats, quota_qps,
		"QP_CREATEs refused EDQUOT: the client holds [api] client_qps QPs"),
	SL_STAT(struct sl_chan_srv_stats, quota_uid_clients,
		"connections refused EDQUOT: their uid has [api] uid_clients clients already"),
	SL_STAT(struct sl_chan_srv_stats, hello_timeouts,
		"connections closed without a HELLO within [api] hello_timeout_ms"),
	SL_STAT(struct sl_chan_srv_stats, mrs, "memory regions registered now"),
	SL_STAT(struct sl_chan_srv_stats, cqs, "CQs now"),
	SL_STAT(struct sl_chan_srv_stats, qps, "application QPs now"),
};
SL_STAT_TABLE_DEFINE(sl_chan_srv_stat_table, struct sl_chan_srv_stats, stat_desc);

void
srv_log(const struct sl_chan_srv *s, int level, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	if (s->conf.log == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	s->conf.log(s->conf.log_ctx, level, "%s", buf);
}

void
srv_count(uint64_t *counter, int64_t n)
{
	sl_stat_add(counter, (uint64_t)n);
}

/* --- the clients as other threads see them ------------------------------------------------ */

/*
 * A client's row is copied into its view after everything that changes it (an accept, a
 * request served, a hang-up, the release), under a sequence count: odd while the copy is
 * written. A reader on another thread (telemetry) takes the row whole or tries again; every
 * word is read and written with relaxed atomics, the count with acquire and release.
 */
static void
publish(struct client *cl)
{
	const struct sl_chan_client_view v = {
		.id = cl->id,
		.state = cl->state,
		.pid = (uint64_t)cl->pid,
		.uid = cl->uid,
		.mrs = cl->mrs,
		.mr_bytes = cl->mr_bytes,
		.cqs = cl->cqs,
		.qps = cl->qps,
		.requests = cl->requests,
		.refused = cl->refused,
	};
	uint64_t *dst = (uint64_t *)&cl->view;

	__atomic_store_n(&cl->view_seq, cl->view_seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	for (size_t i = 0; i < sizeof(v) / sizeof(uint64_t); i++)
		__atomic_store_n(&dst[i], ((const uint64_t *)&v)[i], __ATOMIC_RELAXED);
	__atomic_store_n(&cl->view_seq, cl->view_seq + 1, __ATOMIC_RELEASE);
}

/* A consistent copy of cl's view into *v. */
static void
view_read(const struct client *cl, struct sl_chan_client_view *v)
{
	const uint64_t *src = (const uint64_t *)&cl->view;
	uint64_t seq;

	do {
		while ((seq = __atomic_load_n(&cl->view_seq, __ATOMIC_ACQUIRE)) & 1)
			;
		for (size_t i = 0; i < sizeof(*v) / sizeof(uint64_t); i++)
			((uint64_t *)v)[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while (__atomic_load_n(&cl->view_seq, __ATOMIC_RELAXED) != seq);
}

/* Connected: its fd is polled for requests and hang-ups. */
static bool
connected(const struct client *cl)
{
	return cl->state == SL_CHAN_CLIENT_ACCEPTED || cl->state == SL_CHAN_CLIENT_ATTACHED;
}

/* --- commands to lanes --------------------------------------------------------------------- */

/* (srv_priv.h) */
bool
srv_answered(struct pending *p)
{
	if (p->queued && atomic_load_explicit(&p->c.done, memory_order_acquire))
		p->queued = false;
	return !p->queued;
}

/* (srv_priv.h) */
int
srv_call(struct sl_chan_srv *s, struct sl_chan_lane *lane, struct pending *p, uint8_t type,
	 uint64_t client, uint32_t qpn, struct sl_chan_qp_conf *qp)
{
	int rc;

	memset(&p->c, 0, sizeof(p->c));
	p->c.type = type;
	p->c.client = client;
	p->c.qpn = qpn;
	p->c.qp = qp;
	p->queued = true;
	rc = sl_chan_lane_call(lane, &p->c, SL_CHAN_SRV_CMD_NS);
	/* a lane's own answer may be -EAGAIN too, but only after it took the command (done) */
	p->unposted = rc == -EAGAIN && !atomic_load_explicit(&p->c.done, memory_order_acquire);
	if (p->unposted) {
		p->queued = false;
		srv_count(&s->stats.mailbox_full, 1);
		return rc;
	}
	/* the lane may answer between its call's last look and the deadline: that answer stands
	 * (taken for a timeout, it would leave the caller waiting for what is already done) */
	return srv_answered(p) ? p->c.result : -ETIMEDOUT;
}

/* --- releasing ----------------------------------------------------------------------------- */

void
srv_qp_free(struct sl_chan_srv *s, struct qp *q)
{
	q->cl->qps--;
	s->cqs[q->conf.send_cq->id - 1].qps--;
	s->cqs[q->conf.recv_cq->id - 1].qps--;
	*q = (struct qp){.last_token = q->last_token};
	srv_count(&s->stats.qps, -1);
}

void
srv_cq_free(struct sl_chan_srv *s, struct client *cl, struct cq *c)
{
	cl->cqs--;
	close(c->cq.event_fd);
	memset(c, 0, sizeof(*c));
	srv_count(&s->stats.cqs, -1);
}

/* A slot whose command timed out, once the lane answered: DESTROY frees it, a CONNECT taken
 * connects it (one refused leaves it on no lane). */
static void
qp_reap(struct sl_chan_srv *s, struct qp *q)
{
	if (q->state == QP_FREE || q->p.queued == false || !srv_answered(&q->p))
		return;
	if (q->p.c.type == SL_CHAN_CMD_QP_DESTROY)
		srv_qp_free(s, q);
	else if (q->p.c.type == SL_CHAN_CMD_QP_CONNECT && q->p.c.result == 0)
		q->state = QP_CONNECTED;
}

/*
 * Release a client that left once every lane answered CLIENT_GONE, which is posted here to each
 * lane that has not taken it yet (a full mailbox takes it at a later poll): its QPs (none of
 * their commands still queued), CQs, memory. false while something is still out.
 */
static bool
client_release(struct sl_chan_srv *s, struct client *cl)
{
	bool out = false;

	for (unsigned i = 0; i < s->n_lanes; i++) {
		struct pending *p = &cl->bye[i];

		if (p->unposted && srv_call(s, s->lanes[i], p, SL_CHAN_CMD_CLIENT_GONE, cl->id, 0,
					    NULL) == -ETIMEDOUT)
			srv_log(s, LOG_WARNING,
				"client %" PRIu64 ": lane %u did not answer CLIENT_GONE: "
				"its memory stays mapped until it does",
				cl->id, i);
		out |= p->unposted || !srv_answered(p);
	}
	if (out)
		return false;
	for (uint32_t i = 0; i < s->conf.qps; i++)
		if (s->qps[i].state != QP_FREE && s->qps[i].cl == cl && !srv_answered(&s->qps[i].p))
			return false;
	for (uint32_t i = 0; i < s->conf.qps; i++)
		if (s->qps[i].state != QP_FREE && s->qps[i].cl == cl)
			srv_qp_free(s, &s->qps[i]);
	for (uint32_t i = 0; i < s->conf.max_cqs; i++)
		if (s->cqs[i].used && s->cqs[i].cq.client == cl->id)
			srv_cq_free(s, cl, &s->cqs[i]);
	/*
	 * Its keys last as long as its QPs and the mapping they point into: dropped before the
	 * lanes destroyed the QPs, they would have those QPs answer their peers' WRITEs and READs
	 * with an access refusal instead of silence (the peer would read "remote access error"
	 * where its peer simply went away); a ghost's stay, and resolve only for its own QPs.
	 */
	srv_count(&s->stats.mrs, -(int64_t)sl_chan_mrs_del_client(s->mrs, cl->id));
	cl->mrs = 0;
	cl->mr_bytes = 0;
	if (cl->mem != NULL)
		munmap(cl->mem, cl->mem_bytes);
	if (cl->memfd >= 0)
		close(cl->memfd);
	cl->mem = NULL;
	cl->memfd = -1;
	cl->state = SL_CHAN_CLIENT_FREE;
	publish(cl);
	return true;
}

/* The client hung up (or must go): tell every lane, release what they let go. */
static void
client_gone(struct sl_chan_srv *s, struct client *cl)
{
	close(cl->fd);
	cl->fd = -1;
	cl->state = SL_CHAN_CLIENT_GONE;
	publish(cl);
	for (unsigned i = 0; i < s->n_lanes; i++)
		cl->bye[i].unposted = true; /* client_release tells the lanes */
	srv_count(&s->stats.clients_gone, 1);
	srv_log(s, LOG_INFO,
		"client %" PRIu64 " gone: pid %d uid %u held %u MRs (%" PRIu64
		" bytes), %u CQs, %u QPs",
		cl->id, (int)cl->pid, (unsigned)cl->uid, cl->mrs, cl->mr_bytes, cl->cqs, cl->qps);
	client_release(s, cl);
}

/* --- serving connections ------------------------------------------------------------------- */

/* Send r on the connection fd, with rsp_fd (SCM_RIGHTS) unless it is -1; 0 or -1. */
static int
send_rsp(int fd, const struct sl_chan_rsp *r, int rsp_fd)
{
	ssize_t n = sl_fdmsg_send(fd, r, sizeof(*r), rsp_fd, MSG_NOSIGNAL | MSG_DONTWAIT);

	return n == (ssize_t)sizeof(*r) ? 0 : -1;
}

/*
 * Read and answer one request. 1: served; 0: nothing to read; -1: the client hung up (or
 * cannot be answered).
 */
static int
serve_one(struct sl_chan_srv *s, struct client *cl)
{
	union {
		char buf[CMSG_SPACE(FDS_MAX * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct sl_chan_req q;
	struct iovec iov = {.iov_base = &q, .iov_len = sizeof(q)};
	struct msghdr m = {.msg_iov = &iov,
			   .msg_iovlen = 1,
			   .msg_control = ctl.buf,
			   .msg_controllen = sizeof(ctl.buf)};
	struct sl_chan_rsp r;
	int fds[FDS_MAX], fd = -1, rsp_fd = -1, rc;
	unsigned n_fds = 0;
	ssize_t n;
	bool bad;

	memset(&q, 0, sizeof(q));
	n = recvmsg(cl->fd, &m, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
	if (n == 0)
		return -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c != NULL; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++)
			if (n_fds < FDS_MAX)
				memcpy(&fds[n_fds++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
	}
	srv_count(&s->stats.requests, 1);
	cl->requests++;
	bad = n != (ssize_t)sizeof(q) || (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
	      q.magic != SL_CHAN_MAGIC || q.version != SL_CHAN_VERSION || q.type < SL_CHAN_HELLO ||
	      q.type > SL_CHAN_TYPE_MAX || n_fds != srv_fds_wanted(q.type);
	memset(&r, 0, sizeof(r));
	r.magic = SL_CHAN_MAGIC;
	r.version = SL_CHAN_VERSION;
	r.type = q.type;
	r.seq = q.seq;
	if (bad) {
		srv_count(&s->stats.bad_messages, 1);
		rc = -EPROTO;
	} else {
		fd = n_fds ? fds[0] : -1;
		n_fds = 0;
		rc = srv_serve(s, cl, &q, &fd, &r, &rsp_fd);
	}
	for (unsigned i = 0; i < n_fds; i++)
		close(fds[i]);
	if (fd >= 0)
		close(fd); /* not kept by the request */
	if (rc != 0) {
		srv_count(&s->stats.requests_refused, 1);
		cl->refused++;
		srv_log(s, LOG_DEBUG, "client %" PRIu64 ": request %u (seq %u) refused: %s", cl->id,
			q.type, q.seq, strerror(-rc));
	}
	publish(cl);
	r.status = rc;
	if (n < (ssize_t)offsetof(struct sl_chan_req, rsvd))
		return 1; /* no header to answer (nothing was served, so no rsp_fd) */
	rc = send_rsp(cl->fd, &r, rsp_fd);
	if (rsp_fd >= 0)
		close(rsp_fd); /* the application's copy, if the answer reached it */
	return rc == 0 ? 1 : -1;
}

/*
 * May the peer with cred attach? Everyone who can open the socket file when the configuration
 * names no one; else a listed uid, or a member of a listed group (its primary gid, or one of
 * its supplementary groups as SO_PEERGROUPS reports them at connect time).
 */
static bool
cred_allowed(const struct sl_chan_srv_conf *c, int fd, const struct ucred *cred)
{
	gid_t groups[SL_CHAN_PEER_GROUPS_MAX];
	socklen_t len = sizeof(groups);
	uint32_t n;

	if (c->n_allow_uids == 0 && c->n_allow_gids == 0)
		return true;
	for (uint32_t i = 0; i < c->n_allow_uids; i++)
		if (c->allow_uids[i] == cred->uid)
			return true;
	for (uint32_t i = 0; i < c->n_allow_gids; i++)
		if (c->allow_gids[i] == cred->gid)
			return true;
	/* A peer in more groups than SL_CHAN_PEER_GROUPS_MAX (ERANGE) is judged on its uid and
	 * primary gid alone. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) != 0)
		return false;
	n = (uint32_t)(len / sizeof(gid_t));
	for (uint32_t k = 0; k < n; k++)
		for (uint32_t i = 0; i < c->n_allow_gids; i++)
			if (c->allow_gids[i] == groups[k])
				return true;
	return false;
}

/* Answer a connection the daemon will not serve with status (as HELLO's, seq 0), and close it. */
static void
refuse(int fd, int status)
{
	struct sl_chan_rsp r = {.magic = SL_CHAN_MAGIC,
				.version = SL_CHAN_VERSION,
				.type = SL_CHAN_HELLO,
				.status = status};

	send_rsp(fd, &r, -1);
	close(fd);
}

/* Clients of uid now, ghosts included (they hold what they held until reaped). */
static uint32_t
uid_clients(const struct sl_chan_srv *s, uid_t uid)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < s->conf.max_clients; i++)
		n += s->clients[i].state != SL_CHAN_CLIENT_FREE && s->clients[i].uid == uid;
	return n;
}

static void
accept_all(struct sl_chan_srv *s)
{
	for (;;) {
		int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		struct client *cl = NULL;
		struct ucred cred;
		socklen_t len = sizeof(cred);

		if (fd < 0)
			return;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 ||
		    !cred_allowed(&s->conf, fd, &cred)) {
			refuse(fd, -EACCES);
			srv_count(&s->stats.clients_denied, 1);
			srv_log(s, LOG_WARNING,
				"connection refused: pid %d uid %u gid %u is not in [api] "
				"allow_users or allow_groups",
				(int)cred.pid, (unsigned)cred.uid, (unsigned)cred.gid);
			continue;
		}
		/* The daemon full (EMFILE) before this user's share of it (EDQUOT): the first says
		 * more to whoever meets both. */
		for (uint32_t i = 0; i < s->conf.max_clients && cl == NULL; i++)
			if (s->clients[i].state == SL_CHAN_CLIENT_FREE)
				cl = &s->clients[i];
		if (cl == NULL) {
			refuse(fd, -EMFILE);
			srv_count(&s->stats.clients_refused, 1);
			srv_log(s, LOG_WARNING, "connection refused: %u clients already",
				s->conf.max_clients);
			continue;
		}
		if (srv_quota_check(uid_clients(s, cred.uid), 1, s->conf.uid_clients,
				    &s->stats.quota_uid_clients) != 0) {
			refuse(fd, -EDQUOT);
			srv_log(s, LOG_WARNING,
				"connection refused: pid %d uid %u has [api] uid_clients (%u) "
				"clients already",
				(int)cred.pid, (unsigned)cred.uid, s->conf.uid_clients);
			continue;
		}
		cl->state = SL_CHAN_CLIENT_ACCEPTED;
		cl->fd = fd;
		cl->id = s->next_id++;
		cl->pid = cred.pid;
		cl->uid = cred.uid;
		cl->requests = 0;
		cl->refused = 0;
		cl->hello_by_ns =
			s->conf.hello_timeout_ns ? sl_monotonic_ns() + s->conf.hello_timeout_ns : 0;
		publish(cl);
		srv_count(&s->stats.clients_accepted, 1);
		srv_log(s, LOG_INFO, "client %" PRIu64 ": pid %d uid %u gid %u", cl->id,
			(int)cred.pid, (unsigned)cred.uid, (unsigned)cred.gid);
	}
}

/*
 * Close cl if its HELLO is overdue at now_ns; else lower *timeout_ms (poll(2)'s, -1: none) to
 * the time left until its deadline, rounded up to a whole ms.
 */
static void
hello_deadline(struct sl_chan_srv *s, struct client *cl, uint64_t now_ns, int *timeout_ms)
{
	uint64_t left_ms;

	if (cl->state != SL_CHAN_CLIENT_ACCEPTED || cl->hello_by_ns == 0)
		return;
	if (now_ns >= cl->hello_by_ns) {
		srv_count(&s->stats.hello_timeouts, 1);
		srv_log(s, LOG_WARNING,
			"client %" PRIu64 ": no HELLO within %" PRIu64 " ms: closed", cl->id,
			s->conf.hello_timeout_ns / SL_NS_PER_MS);
		client_gone(s, cl);
		return;
	}
	left_ms = SL_MIN((cl->hello_by_ns - now_ns + SL_NS_PER_MS - 1) / SL_NS_PER_MS,
			 (uint64_t)INT_MAX);
	if (*timeout_ms < 0 || left_ms < (uint64_t)*timeout_ms)
		*timeout_ms = (int)left_ms;
}

int
sl_chan_srv_poll(struct sl_chan_srv *s, int timeout_ms)
{
	uint64_t now_ns = sl_monotonic_ns();
	nfds_t n = 1;
	int rc;

	for (uint32_t i = 0; i < s->conf.qps; i++)
		qp_reap(s, &s->qps[i]);
	for (uint32_t i = 0; i < s->conf.max_clients; i++) {
		struct client *cl = &s->clients[i];

		if (cl->state == SL_CHAN_CLIENT_GONE)
			client_release(s, cl);
		if (!connected(cl))
			continue;
		hello_deadline(s, cl, now_ns, &timeout_ms);
		if (!connected(cl))
			continue;
		s->pfd[n] = (struct pollfd){.fd = cl->fd, .events = POLLIN};
		s->pcl[n++] = cl;
	}
	s->pfd[0] = (struct pollfd){.fd = s->lfd, .events = POLLIN};
	rc = poll(s->pfd, n, timeout_ms);
	if (rc < 0)
		return errno == EINTR ? 0 : -errno;
	for (nfds_t i = 1; i < n; i++) {
		struct client *cl = s->pcl[i];
		short ev = s->pfd[i].revents;
		int k = 0;

		if (ev == 0)
			continue;
		for (unsigned j = 0; (ev & POLLIN) && j < REQS_PER_POLL; j++) {
			k = serve_one(s, cl);
			if (k <= 0)
				break;
		}
		/* with POLLIN, a hang-up shows as a read of 0 once the last request is served */
		if (k < 0 || ((ev & (POLLHUP | POLLERR)) && !(ev & POLLIN)))
			client_gone(s, cl);
	}
	if (s->pfd[0].revents & POLLIN)
		accept_all(s);
	return 0;
}

/* --- listening ----------------------------------------------------------------------------- */

/* mkdir -p of path's directory, 0755. 0 or -errno. */
static int
make_dir(const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash == NULL || slash == dir)
		return 0;
	*slash = '\0';
	for (char *p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, 0755) != 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return mkdir(dir, 0755) != 0 && errno != EEXIST ? -errno : 0;
}

/*
 * Listen at the conf's path. The socket is bound, given its owner and mode and listening under
 * a temporary name (the path + SOCKET_TMP_SUFFIX) before it is renamed into place, so whoever
 * finds the file can connect: no ECONNREFUSED between bind() and listen(), and never the file
 * with the wrong owner or mode.
 */
static int
listen_at(struct sl_chan_srv *s)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	const struct sl_chan_srv_conf *c = &s->conf;
	struct stat st;
	int rc;

	if (strlen(c->socket_path) + strlen(SOCKET_TMP_SUFFIX) >= sizeof(a.sun_path))
		return -ENAMETOOLONG;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s%s", c->socket_path, SOCKET_TMP_SUFFIX);
	rc = make_dir(c->socket_path);
	if (rc != 0)
		return rc;
	if (lstat(c->socket_path, &st) == 0 && !S_ISSOCK(st.st_mode))
		return -EEXIST; /* never replace what is not an old socket */
	unlink(a.sun_path);     /* a temporary one a killed daemon left */
	s->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s->lfd < 0)
		return -errno;
	if (bind(s->lfd, (struct sockaddr *)&a, sizeof(a)) != 0)
		return -errno;
	if (chmod(a.sun_path, c->mode) != 0 ||
	    ((c->uid != (uid_t)-1 || c->gid != (gid_t)-1) &&
	     chown(a.sun_path, c->uid, c->gid) != 0) ||
	    listen(s->lfd, SOMAXCONN) != 0 || rename(a.sun_path, c->socket_path) != 0) {
		rc = -errno;
		unlink(a.sun_path);
		return rc;
	}
	snprintf(s->path, sizeof(s->path), "%s", c->socket_path);
	return 0;
}

uint32_t
sl_chan_srv_lane_of(uint32_t n_lanes, uint32_t qpn, uint32_t peer_qpn)
{
	return (uint32_t)((((uint64_t)qpn + peer_qpn) >> 1) % n_lanes);
}

/* Lane i is numbered i and owns exactly [qpn_base, qpn_base + qps). */
static bool
lane_ok(const struct sl_chan_srv_conf *c, const struct sl_chan_lane *lane, unsigned i)
{
	return lane != NULL && sl_chan_lane_index(lane) == i &&
	       sl_chan_lane_owns(lane, c->qpn_base) &&
	       sl_chan_lane_owns(lane, c->qpn_base + c->qps - 1) &&
	       !sl_chan_lane_owns(lane, c->qpn_base + c->qps) &&
	       (c->qpn_base == 0 || !sl_chan_lane_owns(lane, c->qpn_base - 1));
}

/* The conf's numbers are usable and every lane owns exactly [qpn_base, qpn_base + qps). */
static bool
conf_ok(const struct sl_chan_srv_conf *c, struct sl_chan_lane *const *lanes, unsigned n_lanes,
	const struct sl_chan_mrs *mrs)
{
	bool ok = c->socket_path != NULL && c->max_clients > 0 && c->max_cqs > 0 && c->qps > 0 &&
		  c->seg_bytes >= 1 && c->seg_bytes <= UINT16_MAX && lanes != NULL && n_lanes > 0 &&
		  n_lanes <= SL_CHAN_CQ_RINGS_MAX && mrs != NULL &&
		  c->qpn_base + c->qps > c->qpn_base &&
		  sl_proto_find(c->default_program ? c->default_program : "") != NULL;

	for (unsigned i = 0; ok && i < n_lanes; i++)
		ok = lane_ok(c, lanes[i], i);
	return ok;
}

struct sl_chan_srv *
sl_chan_srv_create(const struct sl_chan_srv_conf *conf, struct sl_chan_lane *const *lanes,
		   unsigned n_lanes, struct sl_chan_mrs *mrs)
{
	struct sl_chan_srv *s;
	int err = ENOMEM;

	if (!conf_ok(conf, lanes, n_lanes, mrs)) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	s->conf = *conf;
	s->lfd = -1;
	s->mrs = mrs;
	s->next_id = conf->first_client ? conf->first_client : 1;
	s->n_lanes = n_lanes;
	snprintf(s->host, sizeof(s->host), "%s", conf->host ? conf->host : "");
	snprintf(s->program, sizeof(s->program), "%s", conf->default_program);
	s->lanes = calloc(n_lanes, sizeof(*s->lanes));
	s->clients = calloc(conf->max_clients, sizeof(*s->clients));
	s->cqs = calloc(conf->max_cqs, sizeof(*s->cqs));
	s->qps = calloc(conf->qps, sizeof(*s->qps));
	s->pfd = calloc(conf->max_clients + 1, sizeof(*s->pfd));
	s->pcl = calloc(conf->max_clients + 1, sizeof(*s->pcl));
	if (s->lanes == NULL || s->clients == NULL || s->cqs == NULL || s->qps == NULL ||
	    s->pfd == NULL || s->pcl == NULL)
		goto fail;
	memcpy(s->lanes, lanes, n_lanes * sizeof(*lanes));
	for (uint32_t i = 0; i < conf->max_clients; i++) {
		s->clients[i].fd = -1;
		s->clients[i].memfd = -1;
		s->clients[i].bye = calloc(n_lanes, sizeof(*s->clients[i].bye));
		if (s->clients[i].bye == NULL)
			goto fail;
	}
	err = -listen_at(s);
	if (err != 0)
		goto fail;
	return s;
fail:
	sl_chan_srv_free(s);
	errno = err;
	return NULL;
}

void
sl_chan_srv_free(struct sl_chan_srv *s)
{
	bool kept = false;

	if (s == NULL)
		return;
	for (uint32_t i = 0; s->clients != NULL && i < s->conf.max_clients; i++) {
		struct client *cl = &s->clients[i];

		if (connected(cl))
			client_gone(s, cl);
		if (cl->state == SL_CHAN_CLIENT_GONE && !client_release(s, cl))
			kept = true;
	}
	if (kept)
		srv_log(s, LOG_ERR, "a lane never answered: its clients' memory stays mapped");
	if (s->lfd >= 0)
		close(s->lfd);
	if (s->path[0] != '\0')
		unlink(s->path);
	for (uint32_t i = 0; !kept && s->clients != NULL && i < s->conf.max_clients; i++)
		free(s->clients[i].bye);
	if (!kept) { /* a queued command lives in these: keep them while a lane may answer */
		free(s->clients);
		free(s->qps);
		free(s->cqs);
	}
	free(s->lanes);
	free(s->pfd);
	free(s->pcl);
	free(s);
}

unsigned
sl_chan_srv_clients(const struct sl_chan_srv *s, struct sl_chan_client_view *out, unsigned max)
{
	unsigned n = 0;

	for (uint32_t i = 0; i < s->conf.max_clients && n < max; i++) {
		view_read(&s->clients[i], &out[n]);
		n += out[n].state != SL_CHAN_CLIENT_FREE;
	}
	return n;
}

const char *
sl_chan_client_state_name(enum sl_chan_client_state state)
{
	static const char *const names[] = {
		[SL_CHAN_CLIENT_FREE] = "free",
		[SL_CHAN_CLIENT_ACCEPTED] = "accepted",
		[SL_CHAN_CLIENT_ATTACHED] = "attached",
		[SL_CHAN_CLIENT_GONE] = "gone",
	};

	return (unsigned)state < SL_ARRAY_SIZE(names) ? names[state] : "?";
}

void
sl_chan_srv_stats_get(const struct sl_chan_srv *s, struct sl_chan_srv_stats *st)
{
	sl_stats_snapshot(st, &s->stats, sl_chan_srv_stat_table.n);
}
