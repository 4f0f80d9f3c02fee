/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cq.c - the completion queue: a ring of libfabric completions in the provider's memory, and a
 * second one of error completions, filled by the progress of the endpoints bound to it.
 *
 * Why not libsluice's CQ directly: a libsluice completion is a bounce buffer's, and what the
 * application waits for is the copy into its own buffer (or a send's context). Each endpoint
 * therefore has one libsluice CQ (ep.c), and its progress (progress.c) turns completions there
 * into entries here; it takes no more libsluice completions than this ring has room for, so
 * a CQ that the application does not read holds the endpoint back and never overruns.
 *
 * Formats: FI_CQ_FORMAT_CONTEXT, MSG, DATA and TAGGED (the tag always 0: no tagged messages are
 * offered). Waiting (FI_WAIT_FD, FI_WAIT_UNSPEC): the CQ's fd is an epoll set of its endpoints'
 * own epoll sets (each holds the libsluice CQ's event fd, the connection listener and the
 * handshakes in flight) and of an eventfd for fi_cq_signal. fi_cq_sread progresses, arms the
 * libsluice CQs, progresses again (a completion may have raced the arm), then sleeps on it.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "fab_priv.h"

bool
sl_fab_cq_room(const struct sl_fab_cq *cq)
{
	return cq->tail - cq->head < cq->cap && cq->err_tail - cq->err_head < cq->cap;
}

void
sl_fab_cq_push(struct sl_fab_cq *cq, const struct sl_fab_cqe *e)
{
	if (e->err != 0)
		cq->errs[cq->err_tail++ & (cq->cap - 1)] = *e;
	else
		cq->ring[cq->tail++ & (cq->cap - 1)] = *e;
}

int
sl_fab_cq_attach(struct sl_fab_cq *cq, struct sl_fab_ep *ep)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = ep};

	for (unsigned i = 0; i < cq->n_eps; i++)
		if (cq->eps[i] == ep)
			return 0;
	if (cq->n_eps == sizeof(cq->eps) / sizeof(cq->eps[0]))
		return -FI_ENOSPC;
	if (cq->epfd >= 0 && epoll_ctl(cq->epfd, EPOLL_CTL_ADD, ep->wait_fd, &ev) != 0)
		return sl_fab_errno(-errno);
	cq->eps[cq->n_eps++] = ep;
	return 0;
}

void
sl_fab_cq_detach(struct sl_fab_cq *cq, struct sl_fab_ep *ep)
{
	for (unsigned i = 0; i < cq->n_eps; i++) {
		if (cq->eps[i] != ep)
			continue;
		if (cq->epfd >= 0)
			epoll_ctl(cq->epfd, EPOLL_CTL_DEL, ep->wait_fd, NULL);
		cq->eps[i] = cq->eps[--cq->n_eps];
		return;
	}
}

static void
progress_all(struct sl_fab_cq *cq)
{
	for (unsigned i = 0; i < cq->n_eps; i++)
		sl_fab_progress(cq->eps[i]);
}

static size_t
entry_bytes(enum fi_cq_format f)
{
	switch (f) {
	case FI_CQ_FORMAT_MSG:
		return sizeof(struct fi_cq_msg_entry);
	case FI_CQ_FORMAT_DATA:
		return sizeof(struct fi_cq_data_entry);
	case FI_CQ_FORMAT_TAGGED:
		return sizeof(struct fi_cq_tagged_entry);
	default:
		return sizeof(struct fi_cq_entry);
	}
}

static void
write_entry(enum fi_cq_format f, void *out, const struct sl_fab_cqe *e)
{
	struct fi_cq_tagged_entry t = {
		.op_context = e->op_context,
		.flags = e->flags,
		.len = e->len,
		.buf = e->buf,
		.data = e->data,
		.tag = 0,
	};

	/* Each format is a prefix of the tagged one. */
	memcpy(out, &t, entry_bytes(f));
}

/* Progress, then take up to count entries. */
static ssize_t
collect(struct sl_fab_cq *cq, void *buf, size_t count, fi_addr_t *src_addr)
{
	size_t n = 0, bytes = entry_bytes(cq->format);

	progress_all(cq);
	if (cq->err_head != cq->err_tail)
		return -FI_EAVAIL;
	while (n < count && cq->head != cq->tail) {
		const struct sl_fab_cqe *e = &cq->ring[cq->head++ & (cq->cap - 1)];

		write_entry(cq->format, (char *)buf + n * bytes, e);
		if (src_addr != NULL)
			src_addr[n] = e->src;
		n++;
	}
	return n > 0 ? (ssize_t)n : -FI_EAGAIN;
}

/*
 * Nothing came, and a bound endpoint waits for a completion: sleep on the endpoints' wait fds
 * (the libsluice CQ's event, the listener, handshakes) for FI_SLUICE_IDLE_WAIT_US at most,
 * after arming and one more look. On a host whose cores the daemons poll on, an application
 * that spins takes turns with its daemon by the scheduler's slice (milliseconds a round trip);
 * one that sleeps leaves the daemon the core and is woken by the completion.
 */
static ssize_t
idle_wait(struct sl_fab_cq *cq, void *buf, size_t count, fi_addr_t *src_addr)
{
	struct pollfd p[sizeof(cq->eps) / sizeof(cq->eps[0])];
	const struct timespec wait = {
		.tv_sec = (time_t)(sl_fab_params.idle_wait_us / 1000000),
		.tv_nsec = (long)(sl_fab_params.idle_wait_us % 1000000) * 1000,
	};
	nfds_t k = 0;
	ssize_t n;

	for (unsigned i = 0; i < cq->n_eps; i++) {
		if (!sl_fab_ep_busy(cq->eps[i]))
			continue;
		sl_fab_ep_arm(cq->eps[i]);
		p[k].fd = cq->eps[i]->wait_fd;
		p[k].events = POLLIN;
		k++;
	}
	if (k == 0)
		return -FI_EAGAIN;
	n = collect(cq, buf, count, src_addr); /* a completion may have raced the arm */
	if (n != -FI_EAGAIN)
		return n;
	ppoll(p, k, &wait, NULL);
	return collect(cq, buf, count, src_addr);
}

static ssize_t
cq_readfrom(struct fid_cq *fid, void *buf, size_t count, fi_addr_t *src_addr)
{
	struct sl_fab_cq *cq = container_of(fid, struct sl_fab_cq, fid);
	ssize_t n = collect(cq, buf, count, src_addr);

	if (n != -FI_EAGAIN || sl_fab_params.idle_wait_us == 0)
		return n;
	return idle_wait(cq, buf, count, src_addr);
}

static ssize_t
cq_read(struct fid_cq *fid, void *buf, size_t count)
{
	return cq_readfrom(fid, buf, count, NULL);
}

static ssize_t
cq_readerr(struct fid_cq *fid, struct fi_cq_err_entry *buf, uint64_t flags)
{
	struct sl_fab_cq *cq = container_of(fid, struct sl_fab_cq, fid);
	const struct sl_fab_cqe *e;

	(void)flags;
	if (cq->err_head == cq->err_tail)
		return -FI_EAGAIN;
	e = &cq->errs[cq->err_head++ & (cq->cap - 1)];
	buf->op_context = e->op_context;
	buf->flags = e->flags;
	buf->len = e->len;
	buf->buf = e->buf;
	buf->data = e->data;
	buf->tag = 0;
	buf->olen = e->olen;
	buf->err = e->err;
	buf->prov_errno = e->prov_errno;
	/* err_data is the provider's to point at: none here (err_data_size 0 says so). */
	buf->err_data_size = 0;
	return 1;
}

static int
elapsed_ms(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int)((t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000);
}

static ssize_t
cq_sreadfrom(struct fid_cq *fid, void *buf, size_t count, fi_addr_t *src_addr, const void *cond,
	     int timeout)
{
	struct sl_fab_cq *cq = container_of(fid, struct sl_fab_cq, fid);
	struct timespec t0;
	ssize_t n;

	(void)cond; /* a threshold is a hint: returning with fewer is allowed */
	if (cq->epfd < 0)
		return -FI_ENOSYS;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct epoll_event ev[8];
		int left = -1;
		uint64_t v;

		n = collect(cq, buf, count, src_addr);
		if (n != -FI_EAGAIN)
			return n;
		for (unsigned i = 0; i < cq->n_eps; i++)
			sl_fab_ep_arm(cq->eps[i]);
		n = collect(cq, buf, count, src_addr);
		if (n != -FI_EAGAIN)
			return n;
		if (timeout >= 0) {
			left = timeout - elapsed_ms(&t0);
			if (left <= 0)
				return -FI_EAGAIN;
		}
		if (epoll_wait(cq->epfd, ev, 8, left) < 0 && errno != EINTR)
			return sl_fab_errno(-errno);
		if (read(cq->sigfd, &v, sizeof(v)) == sizeof(v))
			return -FI_EAGAIN; /* fi_cq_signal: wake the waiter with nothing */
	}
}

static ssize_t
cq_sread(struct fid_cq *fid, void *buf, size_t count, const void *cond, int timeout)
{
	return cq_sreadfrom(fid, buf, count, NULL, cond, timeout);
}

static int
cq_signal(struct fid_cq *fid)
{
	struct sl_fab_cq *cq = container_of(fid, struct sl_fab_cq, fid);
	uint64_t one = 1;

	if (cq->sigfd < 0)
		return -FI_ENOSYS;
	return write(cq->sigfd, &one, sizeof(one)) == sizeof(one) ? 0 : sl_fab_errno(-errno);
}

static const char *
cq_strerror(struct fid_cq *fid, int prov_errno, const void *err_data, char *buf, size_t len)
{
	(void)fid, (void)err_data;
	return sl_fab_strerror(sl_wc_status_str((enum sl_wc_status)prov_errno), buf, len);
}

static struct fi_ops_cq cq_ops = {
	.size = sizeof(struct fi_ops_cq),
	.read = cq_read,
	.readfrom = cq_readfrom,
	.readerr = cq_readerr,
	.sread = cq_sread,
	.sreadfrom = cq_sreadfrom,
	.signal = cq_signal,
	.strerror = cq_strerror,
};

static int
cq_control(struct fid *fid, int command, void *arg)
{
	struct sl_fab_cq *cq = container_of(fid, struct sl_fab_cq, fid.fid);

	return sl_fab_wait_control(cq->epfd, command, arg);
}

static int
cq_close(struct fid *fid)
{
	struct sl_fab_cq *cq = container_of(fid, struct sl_fab_cq, fid.fid);

	if (cq->n_eps > 0)
		return -FI_EBUSY;
	if (cq->epfd >= 0)
		close(cq->epfd);
	if (cq->sigfd >= 0)
		close(cq->sigfd);
	cq->domain->refs--;
	free(cq->ring);
	free(cq->errs);
	free(cq);
	return 0;
}

static struct fi_ops cq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = cq_close,
	.bind = sl_fab_no_bind,
	.control = cq_control,
	.ops_open = sl_fab_no_ops_open,
};

int
sl_fab_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr, struct fid_cq **out,
	       void *context)
{
	struct sl_fab_domain *d = container_of(domain, struct sl_fab_domain, fid);
	struct epoll_event ev = {.events = EPOLLIN};
	struct sl_fab_cq *cq;
	size_t cap = 64;

	switch (attr->format) {
	case FI_CQ_FORMAT_UNSPEC:
	case FI_CQ_FORMAT_CONTEXT:
	case FI_CQ_FORMAT_MSG:
	case FI_CQ_FORMAT_DATA:
	case FI_CQ_FORMAT_TAGGED:
		break;
	default:
		return -FI_ENOSYS;
	}
	if (attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC &&
	    attr->wait_obj != FI_WAIT_FD)
		return -FI_ENOSYS; /* no wait sets, mutexes or yields: an fd */
	if (attr->flags & ~(uint64_t)FI_AFFINITY || attr->size > (1u << 20))
		return -FI_EINVAL;
	while (cap < attr->size)
		cap *= 2;
	cq = calloc(1, sizeof(*cq));
	if (cq == NULL)
		return -FI_ENOMEM;
	cq->epfd = cq->sigfd = -1;
	cq->cap = cap;
	cq->ring = calloc(cap, sizeof(*cq->ring));
	cq->errs = calloc(cap, sizeof(*cq->errs));
	if (cq->ring == NULL || cq->errs == NULL)
		goto fail;
	if (attr->wait_obj != FI_WAIT_NONE) {
		cq->epfd = epoll_create1(EPOLL_CLOEXEC);
		cq->sigfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (cq->epfd < 0 || cq->sigfd < 0 ||
		    epoll_ctl(cq->epfd, EPOLL_CTL_ADD, cq->sigfd, &ev) != 0)
			goto fail;
	}
	cq->domain = d;
	cq->format = attr->format == FI_CQ_FORMAT_UNSPEC ? FI_CQ_FORMAT_CONTEXT : attr->format;
	cq->wait_obj = attr->wait_obj;
	cq->fid.fid.fclass = FI_CLASS_CQ;
	cq->fid.fid.context = context;
	cq->fid.fid.ops = &cq_fi_ops;
	cq->fid.ops = &cq_ops;
	d->refs++;
	*out = &cq->fid;
	return 0;
fail:
	if (cq->epfd >= 0)
		close(cq->epfd);
	if (cq->sigfd >= 0)
		close(cq->sigfd);
	free(cq->ring);
	free(cq->errs);
	free(cq);
	return -FI_ENOMEM;
}
