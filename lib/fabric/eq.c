/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * eq.c - the event queue: a ring of events with an eventfd that is readable while the ring holds
 * any. An RDM endpoint reports nothing here (its connections are made under the covers, on
 * first send: peer.c); passive and MSG endpoints bound to the queue report their connections'
 * events (FI_CONNREQ, FI_CONNECTED, FI_SHUTDOWN, and errors: a refused or timed-out connect,
 * cm.c), and the application may write its own (fi_eq_write).
 *
 * Progress is manual: fi_eq_read and fi_eq_sread first move the connections of the objects
 * bound to the queue (sl_fab_cm_progress). The queue's wait fd (FI_WAIT_FD, FI_GETWAIT) is an
 * epoll set of the eventfd and those objects' own wait fds, so it turns readable when an event
 * is queued or a connection has something to read; fi_eq_sread waits on it in slices of at most
 * WAIT_SLICE_MS, so that handshake deadlines are kept while nothing arrives.
 *
 * Errors sit in the ring in order with the other events: fi_eq_read answers -FI_EAVAIL while
 * one is first, and fi_eq_readerr takes it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "fab_priv.h"

#define EQ_DATA_BYTES 64u /**< largest event fi_eq_write takes, bytes */
#define EQ_BOUND_MAX 64u  /**< passive and MSG endpoints bound to one queue */
#define WAIT_SLICE_MS 100 /**< fi_eq_sread's longest sleep between two progress passes, ms */

struct eq_event {
	uint32_t event;
	bool err; /**< data holds a struct fi_eq_err_entry */
	size_t len;
	uint8_t data[EQ_DATA_BYTES];
};

struct sl_fab_eq {
	struct fid_eq fid;
	struct eq_event *ring;
	size_t cap;        /**< events, a power of two */
	size_t head, tail; /**< free-running */
	int efd;           /**< eventfd: readable while events are queued */
	int epfd;          /**< the wait fd: efd and the bound objects' wait fds */
	struct fid *bound[EQ_BOUND_MAX];
	unsigned n_bound;
};

int
sl_fab_eq_bind(struct sl_fab_eq **slot, struct fid *eq_fid, struct fid *fid, int wait_fd)
{
	struct sl_fab_eq *eq = container_of(eq_fid, struct sl_fab_eq, fid.fid);
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = wait_fd};

	if (*slot != NULL)
		return -FI_EINVAL;
	if (eq->n_bound == EQ_BOUND_MAX)
		return -FI_ENOSPC;
	if (epoll_ctl(eq->epfd, EPOLL_CTL_ADD, wait_fd, &ev) != 0)
		return sl_fab_errno(-errno);
	eq->bound[eq->n_bound++] = fid;
	*slot = eq;
	return 0;
}

void
sl_fab_eq_detach(struct sl_fab_eq *eq, struct fid *fid)
{
	/* The object's wait fd leaves the epoll set when the object closes it. */
	for (unsigned i = 0; i < eq->n_bound; i++)
		if (eq->bound[i] == fid) {
			eq->bound[i] = eq->bound[--eq->n_bound];
			return;
		}
}

static void
eq_progress(struct sl_fab_eq *eq)
{
	for (unsigned i = 0; i < eq->n_bound; i++)
		sl_fab_cm_progress(eq->bound[i]);
}

/* Queue an event of len bytes. 0, or -FI_EAGAIN: full. */
static int
eq_push(struct sl_fab_eq *eq, uint32_t event, bool err, const void *buf, size_t len)
{
	struct eq_event *e;
	uint64_t one = 1;

	if (eq->tail - eq->head == eq->cap)
		return -FI_EAGAIN;
	e = &eq->ring[eq->tail & (eq->cap - 1)];
	e->event = event;
	e->err = err;
	e->len = len;
	memcpy(e->data, buf, len);
	if (eq->tail++ == eq->head && write(eq->efd, &one, sizeof(one)) != sizeof(one))
		return -FI_EOTHER;
	return 0;
}

int
sl_fab_eq_report(struct sl_fab_eq *eq, uint32_t event, struct fid *fid, struct fi_info *info)
{
	struct fi_eq_cm_entry e = {.fid = fid, .info = info};

	return eq_push(eq, event, false, &e, sizeof(e));
}

int
sl_fab_eq_report_err(struct sl_fab_eq *eq, struct fid *fid, int err)
{
	struct fi_eq_err_entry e = {
		.fid = fid,
		.context = fid->context,
		.err = err,
		.prov_errno = err,
	};

	return eq_push(eq, 0, true, &e, sizeof(e));
}

/* Take the first event. */
static void
eq_pop(struct sl_fab_eq *eq)
{
	uint64_t v;

	if (++eq->head == eq->tail && read(eq->efd, &v, sizeof(v)) != sizeof(v))
		SL_FAB_WARN(FI_LOG_EQ, "the EQ's eventfd did not read: %s\n", strerror(errno));
}

static ssize_t
eq_read(struct fid_eq *fid, uint32_t *event, void *buf, size_t len, uint64_t flags)
{
	struct sl_fab_eq *eq = container_of(fid, struct sl_fab_eq, fid);
	const struct eq_event *e;

	if (flags & ~(uint64_t)FI_PEEK)
		return -FI_EINVAL;
	eq_progress(eq);
	if (eq->head == eq->tail)
		return -FI_EAGAIN;
	e = &eq->ring[eq->head & (eq->cap - 1)];
	if (e->err)
		return -FI_EAVAIL;
	if (len < e->len)
		return -FI_ETOOSMALL;
	*event = e->event;
	memcpy(buf, e->data, e->len);
	if (!(flags & FI_PEEK))
		eq_pop(eq);
	return (ssize_t)e->len;
}

static ssize_t
eq_readerr(struct fid_eq *fid, struct fi_eq_err_entry *buf, uint64_t flags)
{
	struct sl_fab_eq *eq = container_of(fid, struct sl_fab_eq, fid);
	const struct eq_event *e;
	struct fi_eq_err_entry err;

	if (flags & ~(uint64_t)FI_PEEK)
		return -FI_EINVAL;
	if (eq->head == eq->tail)
		return -FI_EAGAIN;
	e = &eq->ring[eq->head & (eq->cap - 1)];
	if (!e->err)
		return -FI_EAGAIN;
	memcpy(&err, e->data, sizeof(err));
	/* No error data: the application's err_data buffer is left as it is. */
	err.err_data = buf->err_data;
	err.err_data_size = 0;
	*buf = err;
	if (!(flags & FI_PEEK))
		eq_pop(eq);
	return (ssize_t)sizeof(*buf);
}

static ssize_t
eq_write(struct fid_eq *fid, uint32_t event, const void *buf, size_t len, uint64_t flags)
{
	struct sl_fab_eq *eq = container_of(fid, struct sl_fab_eq, fid);
	int ret;

	if (flags != 0 || len > EQ_DATA_BYTES)
		return -FI_EINVAL;
	ret = eq_push(eq, event, false, buf, len);
	return ret != 0 ? ret : (ssize_t)len;
}

static ssize_t
eq_sread(struct fid_eq *fid, uint32_t *event, void *buf, size_t len, int timeout, uint64_t flags)
{
	struct sl_fab_eq *eq = container_of(fid, struct sl_fab_eq, fid);
	uint64_t end_ns = sl_fab_now_ns() + (uint64_t)(timeout < 0 ? 0 : timeout) * 1000000u;
	struct epoll_event ev;

	for (;;) {
		ssize_t ret = eq_read(fid, event, buf, len, flags);
		uint64_t now_ns = sl_fab_now_ns();
		int slice = WAIT_SLICE_MS;

		if (ret != -FI_EAGAIN)
			return ret;
		if (timeout >= 0) {
			if (now_ns >= end_ns)
				return -FI_EAGAIN;
			if (end_ns - now_ns < (uint64_t)slice * 1000000u)
				slice = (int)((end_ns - now_ns + 999999u) / 1000000u);
		}
		if (epoll_wait(eq->epfd, &ev, 1, slice) < 0 && errno != EINTR)
			return sl_fab_errno(-errno);
	}
}

static const char *
eq_strerror(struct fid_eq *fid, int prov_errno, const void *err_data, char *buf, size_t len)
{
	(void)fid, (void)err_data;
	return sl_fab_strerror(fi_strerror(prov_errno), buf, len);
}

static struct fi_ops_eq eq_ops = {
	.size = sizeof(struct fi_ops_eq),
	.read = eq_read,
	.readerr = eq_readerr,
	.write = eq_write,
	.sread = eq_sread,
	.strerror = eq_strerror,
};

static int
eq_control(struct fid *fid, int command, void *arg)
{
	struct sl_fab_eq *eq = container_of(fid, struct sl_fab_eq, fid.fid);

	return sl_fab_wait_control(eq->epfd, command, arg);
}

static int
eq_close(struct fid *fid)
{
	struct sl_fab_eq *eq = container_of(fid, struct sl_fab_eq, fid.fid);

	close(eq->epfd);
	close(eq->efd);
	free(eq->ring);
	free(eq);
	return 0;
}

static struct fi_ops eq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = eq_close,
	.bind = sl_fab_no_bind,
	.control = eq_control,
	.ops_open = sl_fab_no_ops_open,
};

int
sl_fab_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr, struct fid_eq **out,
	       void *context)
{
	struct sl_fab_eq *eq;
	size_t cap = 64;

	(void)fabric;
	if (attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC &&
	    attr->wait_obj != FI_WAIT_FD)
		return -FI_ENOSYS;
	if (attr->flags != 0 || attr->size > (1u << 16))
		return -FI_EINVAL;
	while (cap < attr->size)
		cap *= 2;
	eq = calloc(1, sizeof(*eq));
	if (eq == NULL)
		return -FI_ENOMEM;
	eq->cap = cap;
	eq->ring = calloc(cap, sizeof(*eq->ring));
	eq->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	eq->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (eq->ring == NULL || eq->efd < 0 || eq->epfd < 0 ||
	    epoll_ctl(eq->epfd, EPOLL_CTL_ADD, eq->efd,
		      &(struct epoll_event){.events = EPOLLIN, .data.fd = eq->efd}) != 0) {
		if (eq->efd >= 0)
			close(eq->efd);
		if (eq->epfd >= 0)
			close(eq->epfd);
		free(eq->ring);
		free(eq);
		return -FI_ENOMEM;
	}
	eq->fid.fid.fclass = FI_CLASS_EQ;
	eq->fid.fid.context = context;
	eq->fid.fid.ops = &eq_fi_ops;
	eq->fid.ops = &eq_ops;
	*out = &eq->fid;
	return 0;
}
