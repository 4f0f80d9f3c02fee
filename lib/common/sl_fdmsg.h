/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sl_fdmsg.h - one message on a unix socket with at most one file descriptor beside it
 * (SCM_RIGHTS): how libsluice sends its requests and sluiced its answers on the channel. Header
 * only, libc only, so that libsluice takes it without linking any sluice library.
 */
#ifndef SL_FDMSG_H
#define SL_FDMSG_H

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

/*
 * Send len bytes of buf on sock, with fd unless it is -1, as one sendmsg(2) with flags
 * (MSG_NOSIGNAL, MSG_DONTWAIT: the caller's), again after EINTR. Returns sendmsg's result.
 */
static inline ssize_t
sl_fdmsg_send(int sock, const void *buf, size_t len, int fd, int flags)
{
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
	ssize_t n;

	if (fd >= 0) {
		struct cmsghdr *c;

		memset(&ctl, 0, sizeof(ctl));
		m.msg_control = ctl.buf;
		m.msg_controllen = sizeof(ctl.buf);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(fd));
	}
	do
		n = sendmsg(sock, &m, flags);
	while (n < 0 && errno == EINTR);
	return n;
}

#endif /* SL_FDMSG_H */
