/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer.c - connections of an endpoint: one libsluice QP per remote endpoint, made on first use
 * (RDM) or by fi_connect / fi_accept (MSG, cm.c), and the TCP handshake that trades the two
 * QPs' numbers. The listener and its HELLOs are the same code for an RDM endpoint, which
 * answers a HELLO at once, and a passive endpoint, which reports it as FI_CONNREQ and keeps its
 * socket for fi_accept (sl_fab_listener_step's callback says which).
 *
 * libsluice connects a QP only with the peer QP's number, first PSN and token (sl_qp_info), and
 * the daemon refuses frames without the token: the numbers must travel out of band, as
 * perftest's do. Each endpoint therefore listens on a TCP port of its host's address, and its
 * name (fi_getname) is that address and port. The first send to a peer (or its first HELLO)
 * makes the peer's QP and posts FI_SLUICE_RX_SLOTS receive bounce buffers on it; then:
 *
 *   connecting side                           listening side
 *   IDLE -> CONNECTING: connect(), HELLO ->   accept(), read HELLO (name, qpn, psn, token),
 *                                             make its QP, sl_qp_connect, <- ACCEPT, READY
 *   read ACCEPT, sl_qp_connect, READY
 *
 * Sends wait in the peer's queue until READY and are posted in order then. Everything is
 * non-blocking and moved by progress (fi_cq_read, any send or receive), so an endpoint that
 * never reads its CQ never stalls another's handshake beyond FI_SLUICE_CONNECT_MS, after which
 * the peer FAILS (FI_ETIMEDOUT) and its waiting sends complete with that error (progress.c
 * reports them as the CQ has room; new sends to it are refused with the error).
 *
 * Two endpoints that send to each other first at once both connect: the HELLO of the endpoint
 * with the smaller name wins (its QP is kept, the other side drops its own attempt and answers
 * with the QP it already made), so a pair always has exactly one QP pair and its sends stay in
 * order. A HELLO is refused (the connection closed) when it does not decode, when its name's
 * address is not the address it came from, or when a QP to that name exists already.
 *
 * A MSG endpoint's handshake is the connecting side's above, but its socket is kept once the
 * ACCEPT is read (and the endpoint's name is that socket's local address, which the HELLO
 * carries): the connection ends when either side closes it (cm.c).
 *
 * Cost: a peer's lookup is a walk of the endpoint's peers, O(peers) per send; its receive
 * buffers are FI_SLUICE_RX_SLOTS x FI_SLUICE_MAX_MSG bytes of the domain's shared memory.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fab_priv.h"

uint64_t
sl_fab_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The address an endpoint names: FI_SLUICE_ADDR, else the first interface's that is up and is
 * not loopback, else loopback. */
static int
pick_addr(uint32_t *ip4)
{
	struct ifaddrs *ifa, *i;
	struct in_addr in;

	if (sl_fab_params.addr != NULL) {
		if (inet_pton(AF_INET, sl_fab_params.addr, &in) != 1) {
			SL_FAB_WARN(FI_LOG_EP_CTRL, "FI_SLUICE_ADDR=%s is no IPv4 address\n",
				    sl_fab_params.addr);
			return -FI_EINVAL;
		}
		*ip4 = ntohl(in.s_addr);
		return 0;
	}
	*ip4 = INADDR_LOOPBACK;
	if (getifaddrs(&ifa) != 0)
		return 0;
	for (i = ifa; i != NULL; i = i->ifa_next) {
		if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET ||
		    !(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK))
			continue;
		*ip4 = ntohl(((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr);
		break;
	}
	freeifaddrs(ifa);
	return 0;
}

static void
to_sockaddr(const struct sl_fab_addr *a, struct sockaddr_in *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_addr.s_addr = htonl(a->ip4);
	sa->sin_port = htons(a->port);
}

/* A connected socket's local address, as a name. */
static int
local_name(int fd, struct sl_fab_addr *a)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);

	if (getsockname(fd, (struct sockaddr *)&sa, &len) != 0)
		return -1;
	a->ip4 = ntohl(sa.sin_addr.s_addr);
	a->port = ntohs(sa.sin_port);
	return 0;
}

static int
watch_fd(int epfd, int op, int fd, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.fd = fd};

	return epoll_ctl(epfd, op, fd, &ev) == 0 ? 0 : sl_fab_errno(-errno);
}

static int
watch(struct sl_fab_ep *ep, int op, int fd, uint32_t events)
{
	return watch_fd(ep->wait_fd, op, fd, events);
}

int
sl_fab_listener_open(struct sl_fab_listener *l, struct sl_fab_addr *name, int epfd)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int one = 1, ret;

	l->epfd = epfd;
	l->n = 0;
	if (name->ip4 == 0) {
		ret = pick_addr(&name->ip4);
		if (ret != 0)
			return ret;
	}
	l->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (l->fd < 0)
		return sl_fab_errno(-errno);
	setsockopt(l->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	to_sockaddr(name, &sa);
	if (bind(l->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(l->fd, SL_FAB_INCOMING_MAX) != 0 ||
	    getsockname(l->fd, (struct sockaddr *)&sa, &len) != 0) {
		ret = errno;
		SL_FAB_WARN(FI_LOG_EP_CTRL, "cannot listen on %s: %s\n", inet_ntoa(sa.sin_addr),
			    strerror(ret));
		return sl_fab_errno(-ret);
	}
	name->port = ntohs(sa.sin_port);
	return watch_fd(epfd, EPOLL_CTL_ADD, l->fd, EPOLLIN);
}

struct sl_fab_peer *
sl_fab_peer_get(struct sl_fab_ep *ep, const struct sl_fab_addr *a)
{
	struct sl_fab_peer *p;

	for (uint32_t i = 0; i < ep->n_peers; i++)
		if (sl_fab_addr_eq(&ep->peers[i].addr, a))
			return &ep->peers[i];
	if (ep->n_peers == ep->peers_cap)
		return NULL;
	p = &ep->peers[ep->n_peers++];
	memset(p, 0, sizeof(*p));
	p->addr = *a;
	p->state = SL_FAB_PEER_IDLE;
	p->hs_fd = -1;
	p->wait_head = p->wait_tail = -1;
	return p;
}

static uint32_t
pow2_at_least(uint32_t n)
{
	uint32_t v = 1;

	while (v < n)
		v *= 2;
	return v;
}

/* Give back a peer's QP and receive buffers (what of them was made). */
static void
peer_release(struct sl_ctx *ctx, struct sl_fab_peer *p)
{
	if (p->qp != NULL)
		sl_qp_destroy(p->qp);
	if (p->rx_mr != NULL)
		sl_mr_dereg(p->rx_mr);
	sl_mem_free(ctx, p->rx_mem);
	p->qp = NULL;
	p->rx_mr = NULL;
	p->rx_mem = NULL;
}

/* The peer's QP, its receive bounce buffers, posted. */
static int
peer_make(struct sl_fab_ep *ep, struct sl_fab_peer *p)
{
	const size_t slot = sl_fab_params.max_msg_bytes;
	const uint32_t n = (uint32_t)sl_fab_params.rx_slots;
	struct sl_ctx *ctx = ep->domain->ctx;
	struct sl_qp_attr attr = {
		.send_cq = ep->scq,
		.recv_cq = ep->scq,
		.sq_depth = pow2_at_least(ep->n_tx),
		.rq_depth = pow2_at_least(n),
		.receiver =
			sl_fab_params.receiver != NULL && strcmp(sl_fab_params.receiver, "gbn") == 0
				? SL_RECEIVER_GBN
				: SL_RECEIVER_MELO,
		.rate_limit_bps = (uint64_t)sl_fab_params.rate_mbps * 1000000u,
		.max_msg_bytes = (uint32_t)slot,
	};
	uint32_t idx = (uint32_t)(p - ep->peers);

	if (sl_fab_params.program != NULL)
		strncpy(attr.program, sl_fab_params.program, SL_NAME_MAX - 1);
	p->qp = sl_qp_create(ctx, &attr);
	if (p->qp == NULL) {
		SL_FAB_WARN(FI_LOG_EP_CTRL, "sluiced refused a QP: %s\n", strerror(errno));
		return sl_fab_errno(-errno);
	}
	p->rx_mem = sl_mem_alloc(ctx, n * slot);
	if (p->rx_mem == NULL) {
		SL_FAB_WARN(FI_LOG_EP_CTRL,
			    "no room for a peer's %u receive buffers of %zu bytes "
			    "(FI_SLUICE_MEM_MB=%zu)\n",
			    n, slot, sl_fab_params.mem_mb);
		return -FI_ENOMEM;
	}
	p->rx_mr = sl_mr_reg(ctx, p->rx_mem, n * slot, SL_ACCESS_LOCAL_WRITE);
	if (p->rx_mr == NULL)
		return sl_fab_errno(-errno);
	for (uint32_t i = 0; i < n; i++) {
		struct sl_recv_wr wr = {
			.wr_id = SL_FAB_WR_RX_ID(idx, i),
			.lkey = sl_mr_lkey(p->rx_mr),
			.addr = (char *)p->rx_mem + (size_t)i * slot,
			.len = (uint32_t)slot,
		};
		int ret = sl_post_recv(p->qp, &wr, 1);

		if (ret != 1)
			return sl_fab_errno(ret < 0 ? ret : -EIO);
	}
	return 0;
}

/* peer_make; on failure nothing is left made (the peer stays IDLE, and a later send or HELLO
 * tries again). */
int
sl_fab_peer_setup(struct sl_fab_ep *ep, struct sl_fab_peer *p)
{
	int ret = peer_make(ep, p);

	if (ret != 0)
		peer_release(ep->domain->ctx, p);
	return ret;
}

static void
hs_close(struct sl_fab_ep *ep, struct sl_fab_peer *p)
{
	if (p->hs_fd < 0)
		return;
	epoll_ctl(ep->wait_fd, EPOLL_CTL_DEL, p->hs_fd, NULL);
	close(p->hs_fd);
	p->hs_fd = -1;
	ep->n_connecting--;
}

void
sl_fab_peer_fail(struct sl_fab_ep *ep, struct sl_fab_peer *p, int err)
{
	char name[SL_FAB_ADDR_STRLEN];

	/* The first failure is the peer's: the flushes that follow it (FI_ECANCELED) are not
	 * what refuses its new sends. */
	if (p->state == SL_FAB_PEER_FAILED)
		return;
	sl_fab_addr_format(&p->addr, name, sizeof(name));
	SL_FAB_WARN(FI_LOG_EP_CTRL, "peer %s failed: %s\n", name, fi_strerror(err));
	if (ep->type == FI_EP_MSG)
		sl_fab_msg_lost(ep, p->state, err);
	hs_close(ep, p);
	for (int32_t i = p->wait_head; i >= 0; i = ep->tx[i].next)
		ep->tx_doomed++;
	p->state = SL_FAB_PEER_FAILED;
	p->err = err;
}

int
sl_fab_peer_connect(struct sl_fab_ep *ep, struct sl_fab_peer *p)
{
	struct sockaddr_in sa;
	int ret;

	if (ep->lost_err != 0)
		return -ep->lost_err;
	ret = sl_fab_peer_setup(ep, p);
	if (ret != 0)
		return ret;
	p->hs_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (p->hs_fd < 0) {
		ret = sl_fab_errno(-errno);
		peer_release(ep->domain->ctx, p);
		return ret;
	}
	ep->n_connecting++;
	to_sockaddr(&p->addr, &sa);
	if (connect(p->hs_fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 && errno != EINPROGRESS)
		ret = -FI_ECONNREFUSED;
	else
		ret = watch(ep, EPOLL_CTL_ADD, p->hs_fd, EPOLLIN | EPOLLOUT);
	if (ret != 0) {
		hs_close(ep, p);
		peer_release(ep->domain->ctx, p);
		return ret;
	}
	p->hs_have = 0;
	p->hs_sent = false;
	p->hs_end_ns = sl_fab_now_ns() + (uint64_t)sl_fab_params.connect_ms * 1000000u;
	p->state = SL_FAB_PEER_CONNECTING;
	return 0;
}

static int
qp_connect(struct sl_fab_peer *p, const struct sl_fab_hs *m)
{
	struct sl_qp_info info = {.qpn = m->qpn, .psn = m->psn, .token = m->token};
	int ret = sl_qp_connect(p->qp, &info);

	if (ret != 0)
		SL_FAB_WARN(FI_LOG_EP_CTRL, "sl_qp_connect: %s\n", strerror(-ret));
	return ret;
}

static void
hs_message(const struct sl_fab_ep *ep, const struct sl_fab_peer *p, uint16_t kind,
	   uint8_t out[SL_FAB_HS_BYTES])
{
	struct sl_qp_info mine;
	struct sl_fab_hs m = {.kind = kind, .name = ep->name};

	sl_qp_info(p->qp, NULL, &mine);
	m.qpn = mine.qpn;
	m.psn = mine.psn;
	m.token = mine.token;
	sl_fab_hs_encode(&m, out);
}

/* Our own handshake with p: connect done?, HELLO out, ACCEPT in. */
static void
hs_step(struct sl_fab_ep *ep, struct sl_fab_peer *p, uint64_t now_ns)
{
	struct sl_fab_hs m;
	ssize_t n;

	if (now_ns > p->hs_end_ns) {
		sl_fab_peer_fail(ep, p, FI_ETIMEDOUT);
		return;
	}
	if (!p->hs_sent) {
		struct pollfd pfd = {.fd = p->hs_fd, .events = POLLOUT};
		int err = 0;
		socklen_t len = sizeof(err);
		uint8_t out[SL_FAB_HS_BYTES];

		if (poll(&pfd, 1, 0) <= 0)
			return;
		if (getsockopt(p->hs_fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
			sl_fab_peer_fail(ep, p, FI_ECONNREFUSED);
			return;
		}
		if (ep->type == FI_EP_MSG && local_name(p->hs_fd, &ep->name) != 0) {
			sl_fab_peer_fail(ep, p, FI_ECONNREFUSED);
			return;
		}
		hs_message(ep, p, SL_FAB_HS_HELLO, out);
		/* An empty socket takes 54 bytes at once. */
		if (send(p->hs_fd, out, sizeof(out), MSG_DONTWAIT | MSG_NOSIGNAL) !=
		    (ssize_t)sizeof(out)) {
			sl_fab_peer_fail(ep, p, FI_ECONNREFUSED);
			return;
		}
		p->hs_sent = true;
		watch(ep, EPOLL_CTL_MOD, p->hs_fd, EPOLLIN);
	}
	n = recv(p->hs_fd, p->hs_buf + p->hs_have, SL_FAB_HS_BYTES - p->hs_have, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		sl_fab_peer_fail(ep, p, FI_ECONNREFUSED); /* closed: refused */
		return;
	}
	p->hs_have += (size_t)n;
	if (p->hs_have < SL_FAB_HS_BYTES)
		return;
	if (sl_fab_hs_decode(p->hs_buf, &m) != 0 || m.kind != SL_FAB_HS_ACCEPT ||
	    !sl_fab_addr_eq(&m.name, &p->addr)) {
		sl_fab_peer_fail(ep, p, FI_EOTHER);
		return;
	}
	if (qp_connect(p, &m) != 0) {
		sl_fab_peer_fail(ep, p, FI_EIO);
		return;
	}
	if (ep->type == FI_EP_MSG) {
		/* The socket stays open as the connection: its close is the peer's shutdown. */
		int fd = p->hs_fd;

		p->hs_fd = -1;
		ep->n_connecting--;
		sl_fab_msg_connected(ep, fd);
	} else {
		hs_close(ep, p);
	}
	p->state = SL_FAB_PEER_READY;
	sl_fab_tx_flush(ep, p);
}

int
sl_fab_peer_answer(struct sl_fab_ep *ep, struct sl_fab_peer *p, int fd, const struct sl_fab_hs *m)
{
	uint8_t out[SL_FAB_HS_BYTES];

	if (qp_connect(p, m) != 0)
		return -FI_EIO;
	hs_message(ep, p, SL_FAB_HS_ACCEPT, out);
	if (send(fd, out, sizeof(out), MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)sizeof(out))
		return -FI_ECONNABORTED;
	return 0;
}

/* An RDM endpoint's answer to a HELLO: the peer's QP, or a refusal. The socket is closed. */
static int
rdm_hello(void *owner, int fd, const struct sl_fab_hs *m)
{
	struct sl_fab_ep *ep = owner;
	struct sl_fab_peer *p;
	char name[SL_FAB_ADDR_STRLEN];
	int ret;

	p = sl_fab_peer_get(ep, &m->name);
	if (p == NULL)
		return 0;
	switch (p->state) {
	case SL_FAB_PEER_IDLE:
		if (sl_fab_peer_setup(ep, p) != 0)
			return 0;
		break;
	case SL_FAB_PEER_CONNECTING:
		if (sl_fab_addr_lt(&ep->name, &p->addr))
			return 0; /* ours wins: the peer answers our HELLO */
		hs_close(ep, p);  /* theirs wins: our QP answers it */
		break;
	default:
		sl_fab_addr_format(&m->name, name, sizeof(name));
		SL_FAB_WARN(FI_LOG_EP_CTRL, "a HELLO from %s, which has a QP: refused\n", name);
		return 0;
	}
	ret = sl_fab_peer_answer(ep, p, fd, m);
	if (ret != 0) {
		sl_fab_peer_fail(ep, p, -ret);
		return 0;
	}
	p->state = SL_FAB_PEER_READY;
	sl_fab_tx_flush(ep, p);
	return 0;
}

/* A HELLO read whole: it decodes, and its name's address is the one it came from. */
static int
hello_check(const struct sl_fab_incoming *in, struct sl_fab_hs *m)
{
	struct sockaddr_in from;
	socklen_t len = sizeof(from);
	char name[SL_FAB_ADDR_STRLEN];

	if (sl_fab_hs_decode(in->buf, m) != 0 || m->kind != SL_FAB_HS_HELLO) {
		SL_FAB_WARN(FI_LOG_EP_CTRL, "a handshake that does not decode: refused\n");
		return -1;
	}
	sl_fab_addr_format(&m->name, name, sizeof(name));
	if (getpeername(in->fd, (struct sockaddr *)&from, &len) != 0 ||
	    ntohl(from.sin_addr.s_addr) != m->name.ip4) {
		SL_FAB_WARN(FI_LOG_EP_CTRL, "a HELLO naming %s from %s: refused\n", name,
			    inet_ntoa(from.sin_addr));
		return -1;
	}
	return 0;
}

/* Forget incoming i: its socket leaves the epoll set, and is closed unless keep. */
static void
incoming_drop(struct sl_fab_listener *l, uint32_t i, bool keep)
{
	epoll_ctl(l->epfd, EPOLL_CTL_DEL, l->in[i].fd, NULL);
	if (!keep)
		close(l->in[i].fd);
	l->in[i] = l->in[--l->n];
}

void
sl_fab_listener_step(struct sl_fab_listener *l, uint64_t now_ns, sl_fab_hello_fn fn, void *owner)
{
	int fd;

	while ((fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		struct sl_fab_incoming *in;

		if (l->n == SL_FAB_INCOMING_MAX || watch_fd(l->epfd, EPOLL_CTL_ADD, fd, EPOLLIN)) {
			close(fd);
			continue;
		}
		in = &l->in[l->n++];
		in->fd = fd;
		in->have = 0;
		in->end_ns = now_ns + (uint64_t)sl_fab_params.connect_ms * 1000000u;
	}
	for (uint32_t i = 0; i < l->n;) {
		struct sl_fab_incoming *in = &l->in[i];
		ssize_t n =
			recv(in->fd, in->buf + in->have, SL_FAB_HS_BYTES - in->have, MSG_DONTWAIT);
		struct sl_fab_hs m;
		bool keep = false;

		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			if (now_ns > in->end_ns)
				incoming_drop(l, i, false);
			else
				i++;
			continue;
		}
		if (n > 0) {
			in->have += (size_t)n;
			if (in->have < SL_FAB_HS_BYTES) {
				i++;
				continue;
			}
			keep = hello_check(in, &m) == 0 && fn(owner, in->fd, &m) == 1;
		}
		incoming_drop(l, i, keep); /* answered, refused, or closed */
	}
}

void
sl_fab_handshakes(struct sl_fab_ep *ep, uint64_t now_ns)
{
	if (ep->lis.fd >= 0)
		sl_fab_listener_step(&ep->lis, now_ns, rdm_hello, ep);
	if (ep->conn_fd >= 0)
		sl_fab_msg_watch(ep);
	for (uint32_t i = 0; i < ep->n_peers; i++)
		if (ep->peers[i].state == SL_FAB_PEER_CONNECTING && ep->peers[i].hs_fd >= 0)
			hs_step(ep, &ep->peers[i], now_ns);
}

void
sl_fab_listener_close(struct sl_fab_listener *l)
{
	while (l->n > 0)
		incoming_drop(l, 0, false);
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
}

void
sl_fab_peers_close(struct sl_fab_ep *ep)
{
	struct sl_ctx *ctx = ep->domain->ctx;

	sl_fab_listener_close(&ep->lis);
	for (uint32_t i = 0; i < ep->n_peers; i++) {
		hs_close(ep, &ep->peers[i]);
		peer_release(ctx, &ep->peers[i]);
	}
	ep->n_peers = 0;
}
