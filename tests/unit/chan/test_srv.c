/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for lib/chan/srv.c: a real server on a real socket in a temporary directory, and a
 * client written here with raw sl_chan_abi.h messages (not libsluice). The lane half is a test
 * double below: sl_chan_lane_call records each command and answers it at once (or, "hanging",
 * never; or, its mailbox "full", refuses it unposted), sl_chan_lane_owns states the lane's QPN
 * range.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <linux/magic.h>

#include <cmocka.h>

#include "sl_chan.h"
#include "sl_time.h"

/* --- the lane double ----------------------------------------------------------------------- */

#define LOG_MAX 64

struct sl_chan_lane {
	uint32_t index;   /**< its place among the server's lanes */
	uint32_t base, n; /**< QPNs it owns */
	int answer;       /**< what every command gets */
	bool hang;        /**< never answer: sl_chan_lane_call times out */
	bool full;        /**< the mailbox is full: sl_chan_lane_call posts nothing, -EAGAIN */
	bool late;        /**< answers just after the deadline: -ETIMEDOUT, the answer given */
	unsigned n_cmds;
	struct sl_chan_cmd log[LOG_MAX];    /**< copies, as posted */
	struct sl_chan_qp_conf qp[LOG_MAX]; /**< QP_CONNECT: the conf it was given */
	struct sl_chan_cmd *held[LOG_MAX];  /**< posted while hanging */
	unsigned n_held;
};

int
sl_chan_lane_call(struct sl_chan_lane *cl, struct sl_chan_cmd *cmd, uint64_t timeout_ns)
{
	(void)timeout_ns;
	if (cl->full)
		return -EAGAIN;
	assert_true(cl->n_cmds < LOG_MAX);
	memcpy(&cl->log[cl->n_cmds], cmd, sizeof(*cmd));
	if (cmd->type == SL_CHAN_CMD_QP_CONNECT)
		cl->qp[cl->n_cmds] = *cmd->qp;
	cl->n_cmds++;
	if (cl->hang) {
		cl->held[cl->n_held++] = cmd;
		return -ETIMEDOUT;
	}
	cmd->result = cl->answer;
	atomic_store_explicit(&cmd->done, true, memory_order_release);
	return cl->late ? -ETIMEDOUT : cmd->result;
}

bool
sl_chan_lane_owns(const struct sl_chan_lane *cl, uint32_t qpn)
{
	return qpn - cl->base < cl->n;
}

uint32_t
sl_chan_lane_index(const struct sl_chan_lane *cl)
{
	return cl->index;
}

/* The hanging lane answers every command it holds. */
static void
lane_wake(struct sl_chan_lane *cl)
{
	for (unsigned i = 0; i < cl->n_held; i++) {
		cl->held[i]->result = 0;
		atomic_store_explicit(&cl->held[i]->done, true, memory_order_release);
	}
	cl->n_held = 0;
	cl->hang = false;
}

/* Commands of type given so far. */
static unsigned
lane_count(const struct sl_chan_lane *cl, uint8_t type)
{
	unsigned n = 0;

	for (unsigned i = 0; i < cl->n_cmds; i++)
		n += cl->log[i].type == type;
	return n;
}

/* --- fixture ------------------------------------------------------------------------------- */

#define QPN_BASE 100u
#define BASE_VA UINT64_C(0x7f0000000000)
#define MEM_BYTES (1u << 20)

struct fx {
	char dir[64], sub[80], path[96];
	struct sl_chan_lane lane[2];
	struct sl_chan_mrs *mrs;
	struct sl_chan_srv *s;
	struct sl_chan_srv_conf conf;
};

/* A server whose first client is numbered first_client (0: the default, 1). */
static struct sl_chan_srv *
fx_start_at(struct fx *f, uint32_t qps, uint32_t max_clients, uint64_t first_client)
{
	struct sl_chan_lane *lanes[] = {&f->lane[0], &f->lane[1]};

	for (uint32_t i = 0; i < 2; i++) /* each may carry any of the QPNs */
		f->lane[i] = (struct sl_chan_lane){.index = i, .base = QPN_BASE, .n = qps};
	f->conf = (struct sl_chan_srv_conf){
		.socket_path = f->path,
		.mode = 0660,
		.uid = (uid_t)-1,
		.gid = (gid_t)-1,
		.max_clients = max_clients,
		.max_mrs = 16,
		.max_cqs = 8,
		.first_client = first_client,
		.host = "test-host",
		.default_program = "dcqcn",
		.seg_bytes = 1024,
		.frame_overhead_bytes = 44,
		.stash_bytes = 1 << 20,
		.qpn_base = QPN_BASE,
		.qps = qps,
	};
	f->s = sl_chan_srv_create(&f->conf, lanes, 2, f->mrs);
	assert_non_null(f->s);
	return f->s;
}

static struct sl_chan_srv *
fx_start(struct fx *f, uint32_t qps, uint32_t max_clients)
{
	return fx_start_at(f, qps, max_clients, 0);
}

static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/sl_test_srv.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->sub, sizeof(f->sub), "%s/run", f->dir);
	snprintf(f->path, sizeof(f->path), "%s/sluiced.sock", f->sub);
	f->mrs = sl_chan_mrs_create(16);
	assert_non_null(f->mrs);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;

	sl_chan_srv_free(f->s);
	sl_chan_mrs_free(f->mrs);
	rmdir(f->sub);
	rmdir(f->dir);
	free(f);
	return 0;
}

static struct sl_chan_srv_stats
stats(const struct fx *f)
{
	struct sl_chan_srv_stats st;

	sl_chan_srv_stats_get(f->s, &st);
	return st;
}

/* --- the raw client ------------------------------------------------------------------------ */

static int
client_connect(const struct fx *f)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", f->path);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* Send len bytes of buf with n_fds fds. */
static void
send_raw(int fd, const void *buf, size_t len, const int *fds, unsigned n_fds)
{
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};

	if (n_fds) {
		struct cmsghdr *c;

		memset(&ctl, 0, sizeof(ctl));
		m.msg_control = ctl.buf;
		m.msg_controllen = CMSG_SPACE(n_fds * sizeof(int));
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(n_fds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, n_fds * sizeof(int));
	}
	assert_int_equal(sendmsg(fd, &m, MSG_NOSIGNAL), (ssize_t)len);
}

/* Serve until fd has something to read (or 50 rounds); false if it never did. */
static bool
serve_until_readable(struct fx *f, int fd)
{
	for (int i = 0; i < 50; i++) {
		struct pollfd p = {.fd = fd, .events = POLLIN};

		assert_int_equal(sl_chan_srv_poll(f->s, 10), 0);
		if (poll(&p, 1, 0) == 1)
			return true;
	}
	return false;
}

/* The next response on fd; the fd it carries in *rsp_fd (-1: none), or closed if NULL. */
static struct sl_chan_rsp
recv_rsp(struct fx *f, int fd, int *rsp_fd)
{
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct sl_chan_rsp r;
	struct iovec iov = {.iov_base = &r, .iov_len = sizeof(r)};
	struct msghdr m = {.msg_iov = &iov,
			   .msg_iovlen = 1,
			   .msg_control = ctl.buf,
			   .msg_controllen = sizeof(ctl.buf)};
	struct cmsghdr *c;
	int got = -1;

	assert_true(serve_until_readable(f, fd));
	assert_int_equal(recvmsg(fd, &m, MSG_CMSG_CLOEXEC), (ssize_t)sizeof(r));
	c = CMSG_FIRSTHDR(&m);
	if (c != NULL) {
		assert_int_equal(c->cmsg_type, SCM_RIGHTS);
		assert_int_equal(c->cmsg_len, CMSG_LEN(sizeof(int))); /* one fd at most */
		memcpy(&got, CMSG_DATA(c), sizeof(got));
	}
	assert_int_equal(r.magic, SL_CHAN_MAGIC);
	assert_int_equal(r.version, SL_CHAN_VERSION);
	if (rsp_fd != NULL)
		*rsp_fd = got;
	else if (got >= 0)
		close(got);
	return r;
}

static struct sl_chan_req
req(uint16_t type)
{
	static uint32_t seq;

	return (struct sl_chan_req){
		.magic = SL_CHAN_MAGIC, .version = SL_CHAN_VERSION, .type = type, .seq = ++seq};
}

/*
 * One request with its fds (n_fds 0..4), its response (the fd it carries in *rsp_fd, closed if
 * NULL); the seq and type echoed.
 */
static struct sl_chan_rsp
rpc_fds_rsp(struct fx *f, int fd, const struct sl_chan_req *q, const int *fds, unsigned n_fds,
	    int *rsp_fd)
{
	struct sl_chan_rsp r;

	send_raw(fd, q, sizeof(*q), fds, n_fds);
	r = recv_rsp(f, fd, rsp_fd);
	assert_int_equal(r.seq, q->seq);
	assert_int_equal(r.type, q->type);
	return r;
}

static struct sl_chan_rsp
rpc_fds(struct fx *f, int fd, const struct sl_chan_req *q, const int *fds, unsigned n_fds)
{
	return rpc_fds_rsp(f, fd, q, fds, n_fds, NULL);
}

static struct sl_chan_rsp
rpc(struct fx *f, int fd, const struct sl_chan_req *q)
{
	return rpc_fds(f, fd, q, NULL, 0);
}

/* A memfd of bytes with the seals given (0: none). */
static int
memfd_sealed(uint64_t bytes, int seals)
{
	int fd = memfd_create("sl_test_srv", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)bytes), 0);
	if (seals)
		assert_int_equal(fcntl(fd, F_ADD_SEALS, seals), 0);
	return fd;
}

/* A memfd of bytes, sealed as libsluice seals it when seal. */
static int
memfd(uint64_t bytes, bool seal)
{
	return memfd_sealed(bytes, seal ? F_SEAL_SHRINK | F_SEAL_GROW : 0);
}

static int
hello_with(struct fx *f, int fd, int mfd, uint64_t mem_bytes)
{
	struct sl_chan_req q = req(SL_CHAN_HELLO);

	q.u.hello.mem_bytes = mem_bytes;
	q.u.hello.base_va = BASE_VA;
	return rpc_fds(f, fd, &q, &mfd, 1).status;
}

/* A connected client that said HELLO with a sealed memory of MEM_BYTES; its number in *id. */
static int
attach(struct fx *f, uint64_t *id)
{
	int fd = client_connect(f), mfd = memfd(MEM_BYTES, true);
	struct sl_chan_req q = req(SL_CHAN_HELLO);
	struct sl_chan_rsp r;

	q.u.hello.mem_bytes = MEM_BYTES;
	q.u.hello.base_va = BASE_VA;
	r = rpc_fds(f, fd, &q, &mfd, 1);
	assert_int_equal(r.status, 0);
	close(mfd);
	if (id)
		*id = r.u.hello.client;
	return fd;
}

static struct sl_chan_rsp
mr_reg(struct fx *f, int fd, uint64_t addr, uint64_t len, uint32_t access)
{
	struct sl_chan_req q = req(SL_CHAN_MR_REG);

	q.u.mr_reg.addr = addr;
	q.u.mr_reg.off = addr - BASE_VA; /* the library's own mapping at BASE_VA */
	q.u.mr_reg.len = len;
	q.u.mr_reg.access = access;
	return rpc(f, fd, &q);
}

/* CQ_CREATE; the event fd of its response in *event_fd (closed if NULL). */
static struct sl_chan_rsp
cq_create_fd(struct fx *f, int fd, uint64_t off, uint32_t depth, int *event_fd)
{
	struct sl_chan_req q = req(SL_CHAN_CQ_CREATE);

	q.u.cq_create.ring_off = off;
	q.u.cq_create.depth = depth;
	return rpc_fds_rsp(f, fd, &q, NULL, 0, event_fd);
}

static struct sl_chan_rsp
cq_create(struct fx *f, int fd, uint64_t off, uint32_t depth)
{
	return cq_create_fd(f, fd, off, depth, NULL);
}

/* Rings of the tests' QPs: CQ at 0, then each QP's SQ and RQ at 64 KiB steps. */
#define CQ_OFF 0u
#define QP_OFF(i) (UINT64_C(65536) * (1 + 2 * (i)))

static struct sl_chan_req
qp_req(uint32_t cq, uint64_t sq_off, uint64_t rq_off)
{
	struct sl_chan_req q = req(SL_CHAN_QP_CREATE);

	q.u.qp_create.send_cq = cq;
	q.u.qp_create.recv_cq = cq;
	q.u.qp_create.sq_off = sq_off;
	q.u.qp_create.rq_off = rq_off;
	q.u.qp_create.sq_depth = 128;
	q.u.qp_create.rq_depth = 128;
	return q;
}

static struct sl_chan_rsp
qp_create(struct fx *f, int fd, uint32_t cq, unsigned i)
{
	struct sl_chan_req q = qp_req(cq, QP_OFF(i), QP_OFF(i) + 32768);

	return rpc(f, fd, &q);
}

/* QP_CONNECT of qpn to the peer's QP peer_qpn (token 0x5eed); the answer's status. */
static int
qp_connect(struct fx *f, int fd, uint32_t qpn, uint32_t peer_qpn)
{
	struct sl_chan_req q = req(SL_CHAN_QP_CONNECT);

	q.u.qp_connect.qpn = qpn;
	q.u.qp_connect.peer_qpn = peer_qpn;
	q.u.qp_connect.peer_token = 0x5eed;
	return rpc(f, fd, &q).status;
}

/* The fixture's lane that a QP connecting qpn to peer_qpn is placed on. */
static struct sl_chan_lane *
lane_of(struct fx *f, uint32_t qpn, uint32_t peer_qpn)
{
	return &f->lane[sl_chan_srv_lane_of(2, qpn, peer_qpn)];
}

/* The process's open fds. */
static int
open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while (readdir(d) != NULL)
		n++;
	closedir(d);
	return n;
}

/* --- tests --------------------------------------------------------------------------------- */

static void
sl_chan_srv_create__listens_with_mode_in_a_new_directory(void **state)
{
	struct fx *f = *state;
	struct stat st;

	fx_start(f, 4, 4);
	assert_int_equal(stat(f->sub, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0755);
	assert_int_equal(stat(f->path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0660);
}

/*
 * The socket listens under <path>.new and is then renamed into place (srv.c, listen_at): what a
 * killed daemon left under the temporary name is no obstacle, nothing stays under it, and the
 * file at the path accepts a client.
 */
static void
sl_chan_srv_create__publishes_the_socket_once_listening(void **state)
{
	struct fx *f = *state;
	char tmp[sizeof(f->path) + 8];
	struct stat st;
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.new", f->path);
	assert_int_equal(mkdir(f->sub, 0755), 0);
	fd = open(tmp, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	fx_start(f, 4, 4);
	assert_int_equal(stat(tmp, &st), -1);
	assert_int_equal(stat(f->path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	close(attach(f, NULL));
}

static void
sl_chan_srv_create__replaces_an_old_socket_not_a_file(void **state)
{
	struct fx *f = *state;
	int fd;

	fx_start(f, 4, 4);
	sl_chan_srv_free(f->s); /* leaves no file; an old socket file is left by a crash: */
	f->s = NULL;
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	{
		struct sockaddr_un a = {.sun_family = AF_UNIX};

		snprintf(a.sun_path, sizeof(a.sun_path), "%s", f->path);
		assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	}
	close(fd);
	fx_start(f, 4, 4);
	close(attach(f, NULL));
	sl_chan_srv_free(f->s);
	f->s = NULL;
	fd = open(f->path, O_CREAT | O_WRONLY, 0600); /* not a socket: never removed */
	assert_true(fd >= 0);
	close(fd);
	assert_null(sl_chan_srv_create(
		&f->conf, (struct sl_chan_lane *[]){&f->lane[0], &f->lane[1]}, 2, f->mrs));
	assert_int_equal(errno, EEXIST);
	unlink(f->path);
}

/* Both ends compute one lane from the two QPNs, and QPs created one after the other on both
 * hosts go round-robin over the lanes, equal QPNs or not. */
static void
sl_chan_srv_lane_of__is_symmetric_and_spreads(void **state)
{
	(void)state;
	for (uint32_t lanes = 1; lanes <= 4; lanes++)
		for (uint32_t a = 0; a < 64; a++)
			for (uint32_t b = 0; b < 64; b++)
				assert_int_equal(sl_chan_srv_lane_of(lanes, a, b),
						 sl_chan_srv_lane_of(lanes, b, a));
	for (uint32_t q = 0; q < 8; q++) {
		assert_int_equal(sl_chan_srv_lane_of(2, 65 + q, 65 + q), (65 + q) % 2);
		assert_int_equal(sl_chan_srv_lane_of(4, 65 + q, 91 + q), (78 + q) % 4);
	}
	assert_int_equal(sl_chan_srv_lane_of(3, UINT32_MAX, UINT32_MAX), UINT32_MAX % 3);
}

/* Every lane owns the whole QPN range and is numbered by its place. */
static void
sl_chan_srv_create__checks_the_lanes(void **state)
{
	struct fx *f = *state;
	struct sl_chan_lane *lanes[] = {&f->lane[0], &f->lane[1]};

	fx_start(f, 4, 4);
	sl_chan_srv_free(f->s);
	f->s = NULL;
	f->conf.qps = 5; /* the lanes own 4 */
	assert_null(sl_chan_srv_create(&f->conf, lanes, 1, f->mrs));
	assert_int_equal(errno, EINVAL);
	f->conf.qps = 4;
	f->lane[1].n = 3; /* the second lane owns less */
	assert_null(sl_chan_srv_create(&f->conf, lanes, 2, f->mrs));
	f->lane[1].n = 4;
	f->lane[1].index = 0; /* numbered as the first */
	assert_null(sl_chan_srv_create(&f->conf, lanes, 2, f->mrs));
	f->lane[1].index = 1;
	f->conf.default_program = "no-such-program";
	assert_null(sl_chan_srv_create(&f->conf, lanes, 1, f->mrs));
	assert_int_equal(errno, EINVAL);
	f->conf.default_program = "dcqcn";
	f->s = sl_chan_srv_create(&f->conf, lanes, 2, f->mrs);
	assert_non_null(f->s);
}

static void
sl_chan_srv_poll__hello_ok(void **state)
{
	struct fx *f = *state;
	int fd, mfd;
	struct sl_chan_req q = req(SL_CHAN_HELLO);
	struct sl_chan_rsp r;

	fx_start(f, 4, 4);
	fd = client_connect(f);
	mfd = memfd(MEM_BYTES, true);
	q.u.hello.mem_bytes = MEM_BYTES;
	q.u.hello.base_va = BASE_VA;
	r = rpc_fds(f, fd, &q, &mfd, 1);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.u.hello.host, "test-host");
	assert_int_equal(r.u.hello.client, 1);
	assert_int_equal(stats(f).clients_accepted, 1);
	assert_int_equal(stats(f).requests_refused, 0);
	r = rpc_fds(f, fd, &q, &mfd, 1); /* HELLO once */
	assert_int_equal(r.status, -EPROTO);
	close(mfd);
	close(fd);
}

static void
sl_chan_srv_poll__no_hello_first_is_eproto(void **state)
{
	struct fx *f = *state;
	int fd;

	fx_start(f, 4, 4);
	fd = client_connect(f);
	assert_int_equal(mr_reg(f, fd, BASE_VA, 4096, 0).status, -EPROTO);
	assert_int_equal(stats(f).requests_refused, 1);
	assert_int_equal(stats(f).mrs, 0);
	close(fd);
}

static void
sl_chan_srv_poll__bad_messages_are_eproto(void **state)
{
	struct fx *f = *state;
	struct sl_chan_req q;
	struct sl_chan_rsp r;
	int fd, mfd = memfd(MEM_BYTES, true), before;

	fx_start(f, 4, 4);
	fd = attach(f, NULL);
	q = req(SL_CHAN_MR_DEREG);
	send_raw(fd, &q, 64, NULL, 0); /* short */
	r = recv_rsp(f, fd, NULL);
	assert_int_equal(r.status, -EPROTO);
	assert_int_equal(r.seq, q.seq);
	{
		char big[sizeof(q) + 8] = {0};

		memcpy(big, &q, sizeof(q));
		send_raw(fd, big, sizeof(big), NULL, 0); /* long */
		assert_int_equal(recv_rsp(f, fd, NULL).status, -EPROTO);
	}
	q = req(SL_CHAN_MR_DEREG);
	q.magic ^= 1;
	assert_int_equal(rpc(f, fd, &q).status, -EPROTO);
	q = req(SL_CHAN_MR_DEREG);
	q.version++;
	assert_int_equal(rpc(f, fd, &q).status, -EPROTO);
	q = req(SL_CHAN_TYPE_MAX + 1);
	assert_int_equal(rpc(f, fd, &q).status, -EPROTO);
	q = req(0);
	assert_int_equal(rpc(f, fd, &q).status, -EPROTO);
	/* an fd where none belongs, and none where one does: refused, and the daemon keeps none */
	before = open_fds();
	q = req(SL_CHAN_MR_DEREG);
	assert_int_equal(rpc_fds(f, fd, &q, &mfd, 1).status, -EPROTO);
	q = req(SL_CHAN_CQ_CREATE); /* the daemon makes a CQ's event fd (srv.c, "CQ events") */
	assert_int_equal(rpc_fds(f, fd, &q, &mfd, 1).status, -EPROTO);
	q = req(SL_CHAN_HELLO);
	assert_int_equal(rpc(f, fd, &q).status, -EPROTO);
	q = req(SL_CHAN_HELLO);
	assert_int_equal(rpc_fds(f, fd, &q, (int[]){mfd, mfd}, 2).status, -EPROTO);
	assert_int_equal(open_fds(), before);
	assert_int_equal(stats(f).bad_messages, 10);
	assert_int_equal(stats(f).requests_refused, 10);
	/* the connection still serves */
	assert_int_equal(mr_reg(f, fd, BASE_VA, 4096, 0).status, 0);
	close(mfd);
	close(fd);
}

static void
sl_chan_srv_poll__hello_needs_a_memfd_of_its_size(void **state)
{
	struct fx *f = *state;
	int fd, mfd, before;

	fx_start(f, 4, 4);
	fd = client_connect(f);
	before = open_fds();
	mfd = memfd(MEM_BYTES, true);
	assert_int_equal(hello_with(f, fd, mfd, MEM_BYTES / 2), -EINVAL);
	assert_int_equal(hello_with(f, fd, mfd, MEM_BYTES * 2), -EINVAL);
	assert_int_equal(hello_with(f, fd, mfd, 0), -EINVAL);
	close(mfd);
	mfd = eventfd(0, EFD_CLOEXEC); /* not a file */
	assert_int_equal(hello_with(f, fd, mfd, MEM_BYTES), -EINVAL);
	close(mfd);
	assert_int_equal(open_fds(), before + 1); /* its end of the connection, no memfd */
	assert_int_equal(stats(f).hello_mem_refused, 4);
	mfd = memfd(MEM_BYTES, true);
	assert_int_equal(hello_with(f, fd, mfd, MEM_BYTES), 0);
	assert_int_equal(stats(f).hello_mem_refused, 4);
	close(mfd);
	close(fd);
}

static void
sl_chan_srv_poll__hello_refuses_an_unsealed_memfd(void **state)
{
	struct fx *f = *state;
	int fd, mfd, before;

	fx_start(f, 4, 4);
	fd = client_connect(f);
	before = open_fds();
	mfd = memfd_sealed(MEM_BYTES, 0);
	assert_int_equal(hello_with(f, fd, mfd, MEM_BYTES), -EPERM);
	close(mfd);
	mfd = memfd_sealed(MEM_BYTES, F_SEAL_GROW); /* sealed, but it may still shrink */
	assert_int_equal(hello_with(f, fd, mfd, MEM_BYTES), -EPERM);
	close(mfd);
	assert_int_equal(open_fds(), before + 1);
	assert_int_equal(stats(f).hello_mem_refused, 2);
	/* growing does not reach the daemon's mapping: F_SEAL_SHRINK alone will do */
	mfd = memfd_sealed(MEM_BYTES, F_SEAL_SHRINK);
	assert_int_equal(hello_with(f, fd, mfd, MEM_BYTES), 0);
	close(mfd);
	close(fd);
}

static void
sl_chan_srv_poll__hello_refuses_a_hugetlb_memfd(void **state)
{
	struct fx *f = *state;
	int fd, mfd, before;
	struct stat st;

	/* Made, sized and sealed with no huge page in the pool: only a mapping reserves one. */
	mfd = memfd_create("sl_test_srv", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_HUGETLB);
	if (mfd < 0) {
		print_message("no hugetlb memfd here (%s): skipped; "
			      "sl_chan_srv_mem_check__only_a_sealed_tmpfs_file_of_its_size checks "
			      "that its file system is refused\n",
			      strerror(errno));
		skip();
	}
	assert_int_equal(fstat(mfd, &st), 0); /* st_blksize: the huge page size */
	assert_int_equal(ftruncate(mfd, st.st_blksize), 0);
	assert_int_equal(fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), 0);
	fx_start(f, 4, 4);
	fd = client_connect(f);
	before = open_fds();
	assert_int_equal(hello_with(f, fd, mfd, (uint64_t)st.st_blksize), -EINVAL);
	close(mfd);
	assert_int_equal(open_fds(), before); /* its memfd gone, the daemon's end came: none kept */
	assert_int_equal(stats(f).hello_mem_refused, 1);
	mfd = memfd(MEM_BYTES, true);
	assert_int_equal(hello_with(f, fd, mfd, MEM_BYTES), 0);
	close(mfd);
	close(fd);
}

static void
sl_chan_srv_poll__hello_refuses_a_file_outside_tmpfs(void **state)
{
	struct fx *f = *state;
	char path[sizeof(SL_TEST_BUILD_DIR) + 32];
	int fd, ffd, before;
	struct statfs fs;

	assert_int_equal(statfs(SL_TEST_BUILD_DIR, &fs), 0);
	if (fs.f_type == TMPFS_MAGIC) {
		print_message("%s is on tmpfs: no file outside tmpfs to offer, skipped\n",
			      SL_TEST_BUILD_DIR);
		skip();
	}
	snprintf(path, sizeof(path), "%s/sl_test_srv.XXXXXX", SL_TEST_BUILD_DIR);
	ffd = mkostemp(path, O_CLOEXEC);
	assert_true(ffd >= 0);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(ftruncate(ffd, MEM_BYTES), 0);
	fx_start(f, 4, 4);
	fd = client_connect(f);
	before = open_fds();
	/* -EINVAL, not the -EPERM of a memfd without seals: refused for what the file is */
	assert_int_equal(hello_with(f, fd, ffd, MEM_BYTES), -EINVAL);
	close(ffd);
	assert_int_equal(open_fds(), before); /* as for the hugetlb memfd: the daemon kept no fd */
	assert_int_equal(stats(f).hello_mem_refused, 1);
	close(fd);
}

static void
sl_chan_srv_mem_check__only_a_sealed_tmpfs_file_of_its_size(void **state)
{
	const int sealed = F_SEAL_SHRINK | F_SEAL_GROW;
	const mode_t reg = S_IFREG | 0600;

	(void)state;
	assert_int_equal(sl_chan_srv_mem_check(sealed, TMPFS_MAGIC, reg, MEM_BYTES, MEM_BYTES), 0);
	/* hugetlbfs: a punched hole is refilled from the huge page pool, or is a SIGBUS */
	assert_int_equal(sl_chan_srv_mem_check(sealed, HUGETLBFS_MAGIC, reg, MEM_BYTES, MEM_BYTES),
			 -EINVAL);
	/* a disk, NFS or FUSE: a fault may wait on what the application controls */
	assert_int_equal(sl_chan_srv_mem_check(-1, EXT4_SUPER_MAGIC, reg, MEM_BYTES, MEM_BYTES),
			 -EINVAL);
	assert_int_equal(sl_chan_srv_mem_check(sealed, NFS_SUPER_MAGIC, reg, MEM_BYTES, MEM_BYTES),
			 -EINVAL);
	assert_int_equal(sl_chan_srv_mem_check(sealed, FUSE_SUPER_MAGIC, reg, MEM_BYTES, MEM_BYTES),
			 -EINVAL);
	/* no seals to read (every shmem file has some): whatever else was read */
	assert_int_equal(sl_chan_srv_mem_check(-1, TMPFS_MAGIC, reg, MEM_BYTES, MEM_BYTES),
			 -EINVAL);
	/* not a regular file; not exactly its size */
	assert_int_equal(
		sl_chan_srv_mem_check(sealed, TMPFS_MAGIC, S_IFDIR | 0700, MEM_BYTES, MEM_BYTES),
		-EINVAL);
	assert_int_equal(sl_chan_srv_mem_check(sealed, TMPFS_MAGIC, reg, MEM_BYTES - 1, MEM_BYTES),
			 -EINVAL);
	assert_int_equal(sl_chan_srv_mem_check(sealed, TMPFS_MAGIC, reg, MEM_BYTES + 1, MEM_BYTES),
			 -EINVAL);
	/* the seals: shrinking must be sealed; growing, sealing and writing need not be */
	assert_int_equal(sl_chan_srv_mem_check(0, TMPFS_MAGIC, reg, MEM_BYTES, MEM_BYTES), -EPERM);
	assert_int_equal(sl_chan_srv_mem_check(F_SEAL_SEAL | F_SEAL_GROW, TMPFS_MAGIC, reg,
					       MEM_BYTES, MEM_BYTES),
			 -EPERM);
	assert_int_equal(
		sl_chan_srv_mem_check(F_SEAL_SHRINK, TMPFS_MAGIC, reg, MEM_BYTES, MEM_BYTES), 0);
	assert_int_equal(sl_chan_srv_mem_check(F_SEAL_SHRINK | F_SEAL_SEAL | F_SEAL_FUTURE_WRITE,
					       TMPFS_MAGIC, reg, MEM_BYTES, MEM_BYTES),
			 0);
}

static void
sl_chan_srv_poll__mr_reg_checks_range_and_flags(void **state)
{
	struct fx *f = *state;
	struct sl_chan_req q;
	struct sl_chan_rsp r;
	uint8_t *mem;
	uint64_t id;
	int fd;

	fx_start(f, 4, 4);
	fd = attach(f, &id);
	assert_int_equal(mr_reg(f, fd, BASE_VA - 1, 16, 0).status, -EINVAL);
	assert_int_equal(mr_reg(f, fd, BASE_VA, MEM_BYTES + 1, 0).status, -EINVAL);
	assert_int_equal(mr_reg(f, fd, BASE_VA + MEM_BYTES, 1, 0).status, -EINVAL);
	assert_int_equal(mr_reg(f, fd, BASE_VA + 4096, UINT64_MAX - 100, 0).status, -EINVAL);
	assert_int_equal(mr_reg(f, fd, UINT64_MAX - 10, 100, 0).status, -EINVAL);
	assert_int_equal(mr_reg(f, fd, BASE_VA, 0, 0).status, -EINVAL);
	assert_int_equal(mr_reg(f, fd, BASE_VA, 16, 1u << 3).status, -EINVAL);
	assert_int_equal(mr_reg(f, fd, BASE_VA, 16, SL_ACCESS_REMOTE_WRITE).status, -EINVAL);
	assert_int_equal(stats(f).mrs, 0);
	r = mr_reg(f, fd, BASE_VA + 4096, MEM_BYTES - 4096,
		   SL_ACCESS_LOCAL_WRITE | SL_ACCESS_REMOTE_WRITE);
	assert_int_equal(r.status, 0);
	assert_int_not_equal(r.u.mr_reg.lkey, r.u.mr_reg.rkey); /* two keys, each of its kind */
	assert_non_null(sl_chan_mrs_find(f->mrs, id, SL_CHAN_LKEY, r.u.mr_reg.lkey,
					 BASE_VA + MEM_BYTES - 8, 8, SL_ACCESS_REMOTE_WRITE));
	assert_non_null(sl_chan_mrs_find(f->mrs, id, SL_CHAN_RKEY, r.u.mr_reg.rkey,
					 BASE_VA + MEM_BYTES - 8, 8, SL_ACCESS_REMOTE_WRITE));
	assert_null(sl_chan_mrs_find(f->mrs, id, SL_CHAN_RKEY, r.u.mr_reg.lkey,
				     BASE_VA + MEM_BYTES - 8, 8, 0));
	assert_int_equal(stats(f).mrs, 1);
	mem = sl_chan_mrs_find(f->mrs, id, SL_CHAN_RKEY, r.u.mr_reg.rkey, BASE_VA + 4096, 8,
			       SL_ACCESS_REMOTE_WRITE) -
	      4096; /* the daemon's mapping of the memory */
	/* An address is the region's name only (adopted pages live elsewhere in the client's
	 * space): it may lie anywhere, and the daemon goes to its offset. */
	q = req(SL_CHAN_MR_REG);
	q.u.mr_reg.addr = 0x1000;
	q.u.mr_reg.off = 8192;
	q.u.mr_reg.len = 4096;
	q.u.mr_reg.access = SL_ACCESS_LOCAL_WRITE | SL_ACCESS_REMOTE_WRITE;
	r = rpc(f, fd, &q);
	assert_int_equal(r.status, 0);
	assert_ptr_equal(sl_chan_mrs_find(f->mrs, id, SL_CHAN_RKEY, r.u.mr_reg.rkey, 0x1010, 8,
					  SL_ACCESS_REMOTE_WRITE),
			 mem + 8192 + 0x10);
	q.u.mr_reg.off = MEM_BYTES - 4095; /* the offset is checked against the memory */
	assert_int_equal(rpc(f, fd, &q).status, -EINVAL);
	close(fd);
}

static void
sl_chan_srv_poll__cq_checks_ring_and_event_fd(void **state)
{
	struct fx *f = *state;
	int fd, efd = -1, type = 0, domain = 0;
	socklen_t len = sizeof(int);
	uint64_t v = 1;

	fx_start(f, 4, 4);
	fd = attach(f, NULL);
	assert_int_equal(cq_create(f, fd, MEM_BYTES - 64, 4).status, -EINVAL);
	assert_int_equal(cq_create(f, fd, UINT64_MAX - 63, 4).status, -EINVAL);
	assert_int_equal(cq_create(f, fd, 32, 4).status, -EINVAL); /* unaligned */
	assert_int_equal(cq_create(f, fd, 0, 3).status, -EINVAL);
	assert_int_equal(cq_create(f, fd, 0, 0).status, -EINVAL);
	assert_int_equal(cq_create(f, fd, 0, SL_CHAN_RING_MAX * 2).status, -EINVAL);
	assert_int_equal(stats(f).cqs, 0);
	assert_int_equal(cq_create_fd(f, fd, 0, 3, &efd).status, -EINVAL);
	assert_int_equal(efd, -1); /* a refusal carries no fd */
	/* a ring for each of the two lanes, one after the other: both must lie in the memory */
	assert_int_equal(cq_create(f, fd, MEM_BYTES - SL_CHAN_RING_BYTES(4, 32), 4).status,
			 -EINVAL);
	assert_int_equal(
		cq_create_fd(f, fd, MEM_BYTES - 2 * SL_CHAN_RING_BYTES(4, 32), 4, &efd).status, 0);
	assert_int_equal(stats(f).cqs, 1);
	/* the event fd: a datagram socket whose other end is the daemon's, which takes no data */
	assert_true(efd >= 0);
	assert_int_equal(getsockopt(efd, SOL_SOCKET, SO_DOMAIN, &domain, &len), 0);
	assert_int_equal(getsockopt(efd, SOL_SOCKET, SO_TYPE, &type, &len), 0);
	assert_int_equal(domain, AF_UNIX);
	assert_int_equal(type, SOCK_DGRAM);
	assert_int_equal(send(efd, &v, sizeof(v), MSG_DONTWAIT | MSG_NOSIGNAL), -1);
	close(efd);
	close(fd);
}

/* A QP is on no lane until it connects; then the lane its QPNs name is given its conf. */
static void
sl_chan_srv_poll__qp_connect_gives_the_lane_its_conf(void **state)
{
	struct fx *f = *state;
	struct sl_chan_rsp r;
	struct sl_chan_req q;
	const struct sl_chan_qp_conf *c;
	uint64_t id;
	uint32_t cq;
	int fd;

	fx_start(f, 4, 4);
	fd = attach(f, &id);
	cq = cq_create(f, fd, CQ_OFF, 256).u.cq_create.cq;
	q = qp_req(cq, QP_OFF(0), QP_OFF(0) + 32768);
	q.u.qp_create.receiver = SL_RECEIVER_GBN;
	q.u.qp_create.rate_limit_bps = 1000000000;
	r = rpc(f, fd, &q);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.u.qp_create.qpn, QPN_BASE);
	assert_int_equal(f->lane[0].n_cmds + f->lane[1].n_cmds, 0);
	assert_int_equal(qp_connect(f, fd, QPN_BASE, 8), 0); /* (100 + 8) / 2: lane 0 */
	assert_int_equal(f->lane[0].n_cmds, 1);
	assert_int_equal(f->lane[0].log[0].type, SL_CHAN_CMD_QP_CONNECT);
	assert_int_equal(f->lane[0].log[0].client, id);
	c = &f->lane[0].qp[0];
	assert_int_equal(c->client, id);
	assert_int_equal(c->xqp.qpn, QPN_BASE);
	assert_string_equal(c->xqp.proto, "dcqcn"); /* the daemon's default */
	assert_int_equal(c->xqp.seg_bytes, 1024);
	assert_int_equal(c->xqp.recv_mode, SL_RECV_GBN);
	assert_int_equal(c->xqp.max_rate_bps, 1000000000);
	assert_int_equal(c->max_msg_bytes, 1u << 20);
	assert_int_equal(c->sq_depth, 128);
	assert_int_equal((uint8_t *)c->sq - c->mem, QP_OFF(0));
	assert_int_equal((uint8_t *)c->rq - c->mem, QP_OFF(0) + 32768);
	assert_int_equal(c->send_cq->id, cq);
	assert_int_equal(c->send_cq->depth, 256);
	assert_int_equal(c->mem_bytes, MEM_BYTES);
	assert_int_equal(c->base_va, BASE_VA);
	assert_ptr_equal(c->mrs, f->mrs);
	q = qp_req(cq, QP_OFF(1), QP_OFF(1) + 32768);
	snprintf(q.u.qp_create.program, sizeof(q.u.qp_create.program), "reno");
	snprintf(q.u.qp_create.pacer, sizeof(q.u.qp_create.pacer), "tassel");
	q.u.qp_create.max_msg_bytes = 4096;
	r = rpc(f, fd, &q);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.u.qp_create.qpn, QPN_BASE + 1);
	assert_int_equal(qp_connect(f, fd, QPN_BASE + 1, 10), 0); /* (101 + 10) / 2: lane 1 */
	assert_int_equal(f->lane[1].n_cmds, 1);
	assert_string_equal(f->lane[1].qp[0].xqp.proto, "reno");
	assert_int_equal(f->lane[1].qp[0].max_msg_bytes, 4096);
	/* the answer tells what the pacer charges a packet: segment, transport header (reno's:
	 * 20 bytes, no timestamp), link and Ethernet overhead */
	assert_int_equal(r.u.qp_create.seg_bytes, 1024);
	assert_int_equal(r.u.qp_create.pkt_wire_bytes, 20 + 44);
	/* a payload rate for 1500-byte messages: 2 packets of 1024 + 64 wire bytes each */
	q = qp_req(cq, QP_OFF(2), QP_OFF(2) + 32768);
	snprintf(q.u.qp_create.program, sizeof(q.u.qp_create.program), "reno");
	q.u.qp_create.rate_limit_bps = 1500000000;
	q.u.qp_create.rate_msg_bytes = 1500;
	r = rpc(f, fd, &q);
	assert_int_equal(r.status, 0);
	assert_int_equal(qp_connect(f, fd, QPN_BASE + 2, 6), 0); /* (102 + 6) / 2: lane 0 */
	assert_int_equal(f->lane[0].qp[1].xqp.max_rate_bps, UINT64_C(1500000000) * 2176 / 1500);
	assert_int_equal(stats(f).qps, 3);
	assert_int_equal(f->lane[0].n_cmds + f->lane[1].n_cmds, 3);
	close(fd);
}

static void
sl_chan_srv_poll__qp_create_refuses_bad_rings_and_names(void **state)
{
	struct fx *f = *state;
	struct sl_chan_req q;
	uint32_t cq;
	int fd;

	fx_start(f, 4, 4);
	fd = attach(f, NULL);
	cq = cq_create(f, fd, CQ_OFF, 256).u.cq_create.cq;
	q = qp_req(cq, QP_OFF(0), QP_OFF(0) + 64 * 64); /* SQ (128 x 64 B) runs into RQ */
	assert_int_equal(rpc(f, fd, &q).status, -EINVAL);
	q = qp_req(cq, QP_OFF(0), QP_OFF(0)); /* the same ring */
	assert_int_equal(rpc(f, fd, &q).status, -EINVAL);
	q = qp_req(cq, 192, QP_OFF(0)); /* SQ over the CQ's entries */
	assert_int_equal(rpc(f, fd, &q).status, -EINVAL);
	q = qp_req(cq, MEM_BYTES - 1024, QP_OFF(0)); /* SQ runs past the end */
	assert_int_equal(rpc(f, fd, &q).status, -EINVAL);
	q = qp_req(cq, QP_OFF(0), UINT64_MAX - 127); /* RQ offset wraps */
	assert_int_equal(rpc(f, fd, &q).status, -EINVAL);
	q = qp_req(cq, QP_OFF(0), QP_OFF(0) + 32768);
	q.u.qp_create.sq_depth = 100;
	assert_int_equal(rpc(f, fd, &q).status, -EINVAL);
	q = qp_req(cq + 1, QP_OFF(0), QP_OFF(0) + 32768); /* no such CQ */
	assert_int_equal(rpc(f, fd, &q).status, -EINVAL);
	q = qp_req(cq, QP_OFF(0), QP_OFF(0) + 32768);
	q.u.qp_create.receiver = 7;
	assert_int_equal(rpc(f, fd, &q).status, -EINVAL);
	q = qp_req(cq, QP_OFF(0), QP_OFF(0) + 32768);
	q.u.qp_create.max_msg_bytes = SL_XPORT_MSG_MAX + 1;
	assert_int_equal(rpc(f, fd, &q).status, -EINVAL);
	q = qp_req(cq, QP_OFF(0), QP_OFF(0) + 32768);
	memset(q.u.qp_create.program, 'x', sizeof(q.u.qp_create.program)); /* no NUL */
	assert_int_equal(rpc(f, fd, &q).status, -EINVAL);
	q = qp_req(cq, QP_OFF(0), QP_OFF(0) + 32768);
	snprintf(q.u.qp_create.program, sizeof(q.u.qp_create.program), "no-such");
	assert_int_equal(rpc(f, fd, &q).status, -ENOENT);
	q = qp_req(cq, QP_OFF(0), QP_OFF(0) + 32768);
	snprintf(q.u.qp_create.pacer, sizeof(q.u.qp_create.pacer), "carousel");
	assert_int_equal(rpc(f, fd, &q).status, -ENOENT);
	assert_int_equal(f->lane[0].n_cmds, 0);
	assert_int_equal(stats(f).qps, 0);
	assert_int_equal(stats(f).requests_refused, 12);
	close(fd);
}

static void
sl_chan_srv_poll__qpn_exhaustion_is_emfile(void **state)
{
	struct fx *f = *state;
	struct sl_chan_req q;
	uint32_t cq;
	int fd;

	fx_start(f, 2, 4);
	fd = attach(f, NULL);
	cq = cq_create(f, fd, CQ_OFF, 256).u.cq_create.cq;
	assert_int_equal(qp_create(f, fd, cq, 0).status, 0);
	assert_int_equal(qp_create(f, fd, cq, 1).status, 0);
	assert_int_equal(qp_create(f, fd, cq, 2).status, -EMFILE);
	assert_int_equal(qp_connect(f, fd, QPN_BASE, 0), 0);
	q = req(SL_CHAN_QP_DESTROY);
	q.u.qp_destroy.qpn = QPN_BASE;
	assert_int_equal(rpc(f, fd, &q).status, 0);
	assert_int_equal(lane_count(lane_of(f, QPN_BASE, 0), SL_CHAN_CMD_QP_DESTROY), 1);
	assert_int_equal(qp_create(f, fd, cq, 2).u.qp_create.qpn, QPN_BASE);
	/* one that never connected is on no lane: destroyed without a command */
	q.u.qp_destroy.qpn = QPN_BASE + 1;
	assert_int_equal(rpc(f, fd, &q).status, 0);
	assert_int_equal(lane_count(&f->lane[0], SL_CHAN_CMD_QP_DESTROY) +
				 lane_count(&f->lane[1], SL_CHAN_CMD_QP_DESTROY),
			 1);
	assert_int_equal(qp_create(f, fd, cq, 1).u.qp_create.qpn, QPN_BASE + 1);
	close(fd);
}

/* A CONNECT the lane refuses leaves the QP unconnected and on no lane: it may connect again,
 * and is destroyed without a command. */
static void
sl_chan_srv_poll__a_lane_refusal_leaves_the_qp_on_no_lane(void **state)
{
	struct fx *f = *state;
	struct sl_chan_req q = req(SL_CHAN_QP_DESTROY);
	uint32_t cq;
	int fd;

	fx_start(f, 1, 4);
	fd = attach(f, NULL);
	cq = cq_create(f, fd, CQ_OFF, 256).u.cq_create.cq;
	assert_int_equal(qp_create(f, fd, cq, 0).u.qp_create.qpn, QPN_BASE);
	f->lane[0].answer = -EINVAL;
	assert_int_equal(qp_connect(f, fd, QPN_BASE, 0), -EINVAL);
	assert_int_equal(stats(f).qps, 1);
	q.u.qp_destroy.qpn = QPN_BASE;
	assert_int_equal(rpc(f, fd, &q).status, 0);
	assert_int_equal(lane_count(&f->lane[0], SL_CHAN_CMD_QP_DESTROY), 0);
	assert_int_equal(stats(f).qps, 0);
	f->lane[0].answer = 0;
	assert_int_equal(qp_create(f, fd, cq, 0).u.qp_create.qpn, QPN_BASE);
	assert_int_equal(qp_connect(f, fd, QPN_BASE, 0), 0);
	assert_int_equal(qp_connect(f, fd, QPN_BASE, 0), -EISCONN);
	close(fd);
}

/*
 * Every QP gets a connection identity of its own: a token and a first PSN with random bits
 * (never token 0, the built-in traffic's), handed to the lane and returned; a QPN created again
 * never gets its previous token, so frames of the QP before it are refused.
 */
static void
sl_chan_srv_poll__qp_identity_is_random_and_fresh_on_reuse(void **state)
{
	struct fx *f = *state;
	struct sl_chan_req q;
	uint32_t cq, tok_or = 0, tok_and = ~0u, psn_or = 0, psn_and = ~0u, last = 0;
	int fd;

	fx_start(f, 4, 4);
	fd = attach(f, NULL);
	cq = cq_create(f, fd, CQ_OFF, 256).u.cq_create.cq;
	for (unsigned i = 0; i < 24; i++) {
		struct sl_chan_rsp r = qp_create(f, fd, cq, 0);
		const struct sl_chan_qp_conf *c;

		assert_int_equal(r.status, 0);
		assert_int_equal(qp_connect(f, fd, QPN_BASE, 0), 0); /* lane 0 */
		c = &f->lane[0].qp[f->lane[0].n_cmds - 1];
		assert_int_equal(r.u.qp_create.qpn, QPN_BASE); /* the same slot every time */
		assert_int_equal(c->xqp.token, r.u.qp_create.token);
		assert_int_equal(c->xqp.send_psn, r.u.qp_create.psn);
		assert_int_not_equal(r.u.qp_create.token, 0);
		assert_int_not_equal(r.u.qp_create.token, last);
		last = r.u.qp_create.token;
		tok_or |= last;
		tok_and &= last;
		psn_or |= r.u.qp_create.psn;
		psn_and &= r.u.qp_create.psn;
		q = req(SL_CHAN_QP_DESTROY);
		q.u.qp_destroy.qpn = QPN_BASE;
		assert_int_equal(rpc(f, fd, &q).status, 0);
	}
	/* draws, not a counter: across 24 of them nearly every bit of both took both values (a
	 * given bit stays put with probability 2^-23; fewer than 24 of 32 varying is 10^-50) */
	assert_true(__builtin_popcount(tok_or & ~tok_and) >= 24);
	assert_true(__builtin_popcount(psn_or & ~psn_and) >= 24);
	close(fd);
}

static void
sl_chan_srv_poll__connect_and_cq_busy(void **state)
{
	struct fx *f = *state;
	struct sl_chan_req q;
	uint32_t cq, qpn;
	int fd;

	fx_start(f, 4, 4);
	fd = attach(f, NULL);
	cq = cq_create(f, fd, CQ_OFF, 256).u.cq_create.cq;
	qpn = qp_create(f, fd, cq, 0).u.qp_create.qpn;
	q = req(SL_CHAN_QP_CONNECT);
	q.u.qp_connect.qpn = qpn;
	q.u.qp_connect.peer_qpn = 1u << 24;
	assert_int_equal(rpc(f, fd, &q).status, -EINVAL);
	q.u.qp_connect.peer_qpn = 7;
	q.u.qp_connect.peer_psn = 0xfffffff0;
	assert_int_equal(rpc(f, fd, &q).status, -EINVAL); /* token 0: the built-in traffic's */
	q.u.qp_connect.peer_token = 0x5eed;
	assert_int_equal(rpc(f, fd, &q).status, 0);
	assert_int_equal(lane_of(f, qpn, 7)->log[0].type, SL_CHAN_CMD_QP_CONNECT);
	assert_int_equal(lane_of(f, qpn, 7)->log[0].qpn, qpn);
	assert_int_equal(lane_of(f, qpn, 7)->log[0].qp->xqp.peer_qpn, 7);
	assert_int_equal(lane_of(f, qpn, 7)->log[0].qp->xqp.recv_psn, 0xfffffff0);
	assert_int_equal(lane_of(f, qpn, 7)->log[0].qp->xqp.peer_token, 0x5eed);
	assert_int_equal(rpc(f, fd, &q).status, -EISCONN);
	q = req(SL_CHAN_CQ_DESTROY);
	q.u.cq_destroy.cq = cq;
	assert_int_equal(rpc(f, fd, &q).status, -EBUSY);
	q = req(SL_CHAN_QP_DESTROY);
	q.u.qp_destroy.qpn = qpn;
	assert_int_equal(rpc(f, fd, &q).status, 0);
	assert_int_equal(rpc(f, fd, &q).status, -ENOENT);
	q = req(SL_CHAN_CQ_DESTROY);
	q.u.cq_destroy.cq = cq;
	assert_int_equal(rpc(f, fd, &q).status, 0);
	assert_int_equal(rpc(f, fd, &q).status, -ENOENT);
	assert_int_equal(stats(f).cqs, 0);
	assert_int_equal(stats(f).qps, 0);
	close(fd);
}

static void
sl_chan_srv_poll__client_limit_is_emfile(void **state)
{
	struct fx *f = *state;
	int a, b, c;

	fx_start(f, 4, 2);
	a = attach(f, NULL);
	b = attach(f, NULL);
	c = client_connect(f);
	{
		struct sl_chan_rsp r = recv_rsp(f, c, NULL); /* answered before it asks */

		assert_int_equal(r.type, SL_CHAN_HELLO);
		assert_int_equal(r.status, -EMFILE);
	}
	assert_int_equal(recv(c, &(char){0}, 1, 0), 0); /* and closed */
	assert_int_equal(stats(f).clients_refused, 1);
	close(c);
	close(a); /* a slot frees up */
	assert_int_equal(sl_chan_srv_poll(f->s, 10), 0);
	c = attach(f, NULL);
	close(b);
	close(c);
}

/* Connect and read the refusal the server answers before any request; its status. */
static int32_t
refused(struct fx *f)
{
	int c = client_connect(f);
	struct sl_chan_rsp r = recv_rsp(f, c, NULL);

	assert_int_equal(r.type, SL_CHAN_HELLO);
	assert_int_equal(r.seq, 0);
	assert_int_equal(recv(c, &(char){0}, 1, 0), 0); /* and closed */
	close(c);
	return r.status;
}

/* The server again, with f->conf as the test changed it. */
static void
restart(struct fx *f)
{
	struct sl_chan_lane *lanes[] = {&f->lane[0], &f->lane[1]};

	sl_chan_srv_free(f->s);
	f->s = sl_chan_srv_create(&f->conf, lanes, 2, f->mrs);
	assert_non_null(f->s);
}

/* The server again, with f->conf's allow lists set to one uid and one gid. */
static void
restart_allowing(struct fx *f, uid_t uid, gid_t gid)
{
	f->conf.allow_uids[0] = uid;
	f->conf.n_allow_uids = 1;
	f->conf.allow_gids[0] = gid;
	f->conf.n_allow_gids = 1;
	restart(f);
}

static void
sl_chan_srv_poll__allow_lists_admit_by_uid_or_group(void **state)
{
	struct fx *f = *state;
	uid_t me = geteuid(), other = me + 4242;
	gid_t my_gid = getegid(), other_gid = my_gid + 4242;

	fx_start(f, 4, 4); /* neither list: whoever can connect */
	close(attach(f, NULL));
	/* lists without this uid or any of its groups: EACCES, counted, nothing kept */
	restart_allowing(f, other, other_gid);
	assert_int_equal(refused(f), -EACCES);
	assert_int_equal(stats(f).clients_denied, 1);
	assert_int_equal(stats(f).clients_accepted, 0);
	/* its uid listed; then only its primary group */
	restart_allowing(f, me, other_gid);
	close(attach(f, NULL));
	restart_allowing(f, other, my_gid);
	close(attach(f, NULL));
	assert_int_equal(stats(f).clients_denied, 0);
}

static int32_t
mr_dereg(struct fx *f, int fd, uint32_t lkey)
{
	struct sl_chan_req q = req(SL_CHAN_MR_DEREG);

	q.u.mr_dereg.lkey = lkey;
	return rpc(f, fd, &q).status;
}

static void
sl_chan_srv_poll__mr_quotas_are_edquot(void **state)
{
	struct fx *f = *state;
	uint32_t key;
	int a, b;

	fx_start(f, 4, 4);
	f->conf.client_mrs = 2;
	f->conf.client_mr_bytes = 8192;
	restart(f);
	a = attach(f, NULL);
	b = attach(f, NULL);
	key = mr_reg(f, a, BASE_VA, 4096, SL_ACCESS_LOCAL_WRITE).u.mr_reg.lkey;
	/* 4096 + 8192 bytes: past client_mr_bytes, the pool far from empty */
	assert_int_equal(mr_reg(f, a, BASE_VA, 8192, SL_ACCESS_LOCAL_WRITE).status, -EDQUOT);
	assert_int_equal(stats(f).quota_mr_bytes, 1);
	assert_int_equal(mr_reg(f, a, BASE_VA + 4096, 4096, SL_ACCESS_LOCAL_WRITE).status, 0);
	/* a third region, of one byte: past client_mrs */
	assert_int_equal(mr_reg(f, a, BASE_VA, 1, SL_ACCESS_LOCAL_WRITE).status, -EDQUOT);
	assert_int_equal(stats(f).quota_mrs, 1);
	assert_int_equal(stats(f).mrs, 2);
	/* the other client has its own share */
	assert_int_equal(mr_reg(f, b, BASE_VA, 8192, SL_ACCESS_LOCAL_WRITE).status, 0);
	assert_int_equal(mr_reg(f, b, BASE_VA, 1, SL_ACCESS_LOCAL_WRITE).status, -EDQUOT);
	assert_int_equal(stats(f).quota_mr_bytes, 2); /* its bytes, this time */
	/* a deregistered region gives back its count and its bytes */
	assert_int_equal(mr_dereg(f, a, key), 0);
	assert_int_equal(mr_reg(f, a, BASE_VA, 4096, SL_ACCESS_LOCAL_WRITE).status, 0);
	assert_int_equal(stats(f).quota_mrs, 1);
	assert_int_equal(stats(f).quota_mr_bytes, 2);
	close(a);
	close(b);
}

static void
sl_chan_srv_poll__cq_quota_is_edquot(void **state)
{
	struct fx *f = *state;
	struct sl_chan_req q;
	uint32_t cq;
	int a, b;

	fx_start(f, 4, 4);
	f->conf.client_cqs = 1;
	restart(f);
	a = attach(f, NULL);
	b = attach(f, NULL);
	cq = cq_create(f, a, CQ_OFF, 256).u.cq_create.cq;
	assert_int_not_equal(cq, 0);
	assert_int_equal(cq_create(f, a, QP_OFF(0), 256).status, -EDQUOT);
	assert_int_equal(stats(f).quota_cqs, 1);
	assert_int_equal(stats(f).cqs, 1);
	assert_int_equal(cq_create(f, b, CQ_OFF, 256).status, 0);
	q = req(SL_CHAN_CQ_DESTROY);
	q.u.cq_destroy.cq = cq;
	assert_int_equal(rpc(f, a, &q).status, 0);
	assert_int_equal(cq_create(f, a, QP_OFF(0), 256).status, 0);
	close(a);
	close(b);
}

static void
sl_chan_srv_poll__qp_quota_is_edquot(void **state)
{
	struct fx *f = *state;
	uint32_t cq_a, cq_b;
	int a, b;

	fx_start(f, 4, 4);
	f->conf.client_qps = 1;
	restart(f);
	a = attach(f, NULL);
	b = attach(f, NULL);
	cq_a = cq_create(f, a, CQ_OFF, 256).u.cq_create.cq;
	cq_b = cq_create(f, b, CQ_OFF, 256).u.cq_create.cq;
	assert_int_equal(qp_create(f, a, cq_a, 0).status, 0);
	assert_int_equal(qp_create(f, a, cq_a, 1).status, -EDQUOT);
	assert_int_equal(stats(f).quota_qps, 1);
	assert_int_equal(stats(f).qps, 1); /* never created */
	assert_int_equal(qp_create(f, b, cq_b, 0).status, 0);
	/* a client that left gives its share back: the next one in its slot has it whole */
	close(a);
	for (int i = 0; i < 5; i++)
		assert_int_equal(sl_chan_srv_poll(f->s, 10), 0);
	assert_int_equal(stats(f).qps, 1);
	a = attach(f, NULL);
	cq_a = cq_create(f, a, CQ_OFF, 256).u.cq_create.cq;
	assert_int_equal(qp_create(f, a, cq_a, 0).status, 0);
	close(a);
	close(b);
}

static void
sl_chan_srv_poll__uid_clients_is_edquot_at_connect(void **state)
{
	struct fx *f = *state;
	int a, b;

	fx_start(f, 4, 4);
	f->conf.uid_clients = 2;
	restart(f);
	a = attach(f, NULL);
	b = attach(f, NULL);
	assert_int_equal(refused(f), -EDQUOT); /* a free slot, but not for this uid */
	assert_int_equal(stats(f).quota_uid_clients, 1);
	assert_int_equal(stats(f).clients_refused, 0);
	close(a);
	assert_int_equal(sl_chan_srv_poll(f->s, 10), 0);
	close(attach(f, NULL));
	close(b);
}

static void
sl_chan_srv_poll__hello_deadline_closes_a_silent_connection(void **state)
{
	struct fx *f = *state;
	uint64_t t0_ns;
	int a, c;

	fx_start(f, 4, 4);
	f->conf.hello_timeout_ns = 20 * SL_NS_PER_MS;
	restart(f);
	a = attach(f, NULL); /* said HELLO in time: stays */
	c = client_connect(f);
	assert_int_equal(sl_chan_srv_poll(f->s, 10), 0); /* accepted */
	/* a poll waits no longer than the nearest deadline, whatever its own timeout */
	t0_ns = sl_monotonic_ns();
	assert_int_equal(sl_chan_srv_poll(f->s, 10000), 0);
	assert_true(sl_monotonic_ns() - t0_ns < 5 * SL_NS_PER_S);
	for (int i = 0; i < 50 && stats(f).hello_timeouts == 0; i++)
		assert_int_equal(sl_chan_srv_poll(f->s, 10), 0);
	assert_int_equal(stats(f).hello_timeouts, 1);
	assert_int_equal(recv(c, &(char){0}, 1, 0), 0); /* closed, nothing answered */
	assert_int_equal(stats(f).clients_gone, 1);
	assert_int_equal(mr_reg(f, a, BASE_VA, 4096, SL_ACCESS_LOCAL_WRITE).status, 0);
	close(c);
	close(a);
}

/* The row of client id among n, or NULL. */
static const struct sl_chan_client_view *
row_of(const struct sl_chan_client_view *v, unsigned n, uint64_t id)
{
	for (unsigned i = 0; i < n; i++)
		if (v[i].id == id)
			return &v[i];
	return NULL;
}

static void
sl_chan_srv_clients__a_row_per_application_through_its_life(void **state)
{
	struct fx *f = *state;
	struct sl_chan_client_view v[4];
	const struct sl_chan_client_view *r;
	uint64_t a_id, b_id;
	uint32_t cq;
	int a, b;

	fx_start(f, 4, 4);
	assert_int_equal(sl_chan_srv_clients(f->s, v, 4), 0);
	a = attach(f, &a_id);
	assert_int_equal(mr_reg(f, a, BASE_VA, 8192, SL_ACCESS_LOCAL_WRITE).status, 0);
	cq = cq_create(f, a, CQ_OFF, 256).u.cq_create.cq;
	assert_int_equal(qp_create(f, a, cq, 0).status, 0);
	assert_int_equal(mr_reg(f, a, BASE_VA, 0, SL_ACCESS_LOCAL_WRITE).status, -EINVAL);
	b = client_connect(f);
	assert_int_equal(mr_reg(f, b, BASE_VA, 4096, 0).status, -EPROTO); /* no HELLO yet */
	b_id = a_id + 1;

	assert_int_equal(sl_chan_srv_clients(f->s, v, 4), 2);
	r = row_of(v, 2, a_id);
	assert_non_null(r);
	assert_int_equal(r->state, SL_CHAN_CLIENT_ATTACHED);
	assert_string_equal(sl_chan_client_state_name(r->state), "attached");
	assert_int_equal(r->pid, (uint64_t)getpid());
	assert_int_equal(r->uid, (uint64_t)getuid());
	assert_int_equal(r->mrs, 1);
	assert_int_equal(r->mr_bytes, 8192);
	assert_int_equal(r->cqs, 1);
	assert_int_equal(r->qps, 1);
	assert_int_equal(r->requests, 5); /* HELLO, MR, CQ, QP, the refused MR */
	assert_int_equal(r->refused, 1);
	r = row_of(v, 2, b_id);
	assert_non_null(r);
	assert_int_equal(r->state, SL_CHAN_CLIENT_ACCEPTED);
	assert_int_equal(r->requests, 1);
	assert_int_equal(r->refused, 1);
	assert_int_equal(r->qps, 0);
	assert_int_equal(sl_chan_srv_clients(f->s, v, 1), 1); /* no more than asked */

	/* Gone while a lane holds its QP's command: a ghost, still holding it; then released. */
	f->lane[0].hang = true;
	close(a);
	for (int i = 0; i < 3; i++)
		assert_int_equal(sl_chan_srv_poll(f->s, 10), 0);
	assert_int_equal(sl_chan_srv_clients(f->s, v, 4), 2);
	r = row_of(v, 2, a_id);
	assert_non_null(r);
	assert_int_equal(r->state, SL_CHAN_CLIENT_GONE);
	assert_string_equal(sl_chan_client_state_name(r->state), "gone");
	assert_int_equal(r->qps, 1);
	lane_wake(&f->lane[0]);
	for (int i = 0; i < 3; i++)
		assert_int_equal(sl_chan_srv_poll(f->s, 10), 0);
	assert_int_equal(sl_chan_srv_clients(f->s, v, 4), 1);
	assert_int_equal(v[0].id, b_id);
	close(b);
}

static void
sl_chan_srv_poll__hang_up_releases_everything(void **state)
{
	struct fx *f = *state;
	uint64_t id;
	uint32_t key, cq;
	int fd, before;

	fx_start(f, 4, 4);
	before = open_fds();
	fd = attach(f, &id);
	key = mr_reg(f, fd, BASE_VA, 4096, SL_ACCESS_LOCAL_WRITE).u.mr_reg.lkey;
	cq = cq_create(f, fd, CQ_OFF, 256).u.cq_create.cq;
	assert_int_equal(qp_create(f, fd, cq, 0).status, 0);
	assert_non_null(sl_chan_mrs_find(f->mrs, id, SL_CHAN_LKEY, key, BASE_VA, 4096, 0));
	close(fd);
	for (int i = 0; i < 5; i++)
		assert_int_equal(sl_chan_srv_poll(f->s, 10), 0);
	assert_int_equal(lane_count(&f->lane[0], SL_CHAN_CMD_CLIENT_GONE), 1);
	assert_int_equal(lane_count(&f->lane[1], SL_CHAN_CMD_CLIENT_GONE), 1);
	assert_int_equal(f->lane[1].log[0].client, id);
	assert_null(sl_chan_mrs_find(f->mrs, id, SL_CHAN_LKEY, key, BASE_VA, 4096, 0));
	assert_int_equal(stats(f).clients_gone, 1);
	assert_int_equal(stats(f).mrs, 0);
	assert_int_equal(stats(f).cqs, 0);
	assert_int_equal(stats(f).qps, 0);
	assert_int_equal(open_fds(), before); /* memfd, event fd, socket closed */
}

static void
sl_chan_srv_poll__clients_cannot_reach_each_other(void **state)
{
	struct fx *f = *state;
	struct sl_chan_req q;
	uint64_t ida, idb;
	uint32_t key, cq, qpn;
	int a, b;

	fx_start(f, 4, 4);
	a = attach(f, &ida);
	b = attach(f, &idb);
	assert_int_not_equal(ida, idb);
	key = mr_reg(f, a, BASE_VA, 4096, SL_ACCESS_LOCAL_WRITE).u.mr_reg.lkey;
	cq = cq_create(f, a, CQ_OFF, 256).u.cq_create.cq;
	qpn = qp_create(f, a, cq, 0).u.qp_create.qpn;
	assert_int_equal(qp_connect(f, a, qpn, qpn), 0); /* lane 0 */
	q = req(SL_CHAN_MR_DEREG);
	q.u.mr_dereg.lkey = key;
	assert_int_equal(rpc(f, b, &q).status, -ENOENT);
	assert_null(sl_chan_mrs_find(f->mrs, idb, SL_CHAN_LKEY, key, BASE_VA, 16, 0));
	assert_non_null(sl_chan_mrs_find(f->mrs, ida, SL_CHAN_LKEY, key, BASE_VA, 16, 0));
	q = req(SL_CHAN_CQ_DESTROY);
	q.u.cq_destroy.cq = cq;
	assert_int_equal(rpc(f, b, &q).status, -ENOENT);
	assert_int_equal(qp_create(f, b, cq, 1).status, -EINVAL); /* a's CQ */
	q = req(SL_CHAN_QP_CONNECT);
	q.u.qp_connect.qpn = qpn;
	assert_int_equal(rpc(f, b, &q).status, -EINVAL);
	q = req(SL_CHAN_QP_DESTROY);
	q.u.qp_destroy.qpn = qpn;
	assert_int_equal(rpc(f, b, &q).status, -ENOENT);
	assert_int_equal(f->lane[0].n_cmds, 1); /* only a's QP_CONNECT reached the lane */
	q = req(SL_CHAN_MR_DEREG);              /* a can */
	q.u.mr_dereg.lkey = key;
	assert_int_equal(rpc(f, a, &q).status, 0);
	close(a);
	close(b);
}

/*
 * Client numbers do not wrap at 2^32: the clients on either side of it are told different
 * numbers, each whole in HELLO's answer and in what the lane is given, and neither reaches the
 * other's MR, CQ or QP. (32-bit numbers would tell the second 0, and give a later client the
 * number of one that came 2^32 connections before it.)
 */
static void
sl_chan_srv_poll__client_numbers_do_not_wrap_at_2_32(void **state)
{
	const uint64_t two_32 = UINT64_C(1) << 32;
	struct fx *f = *state;
	struct sl_chan_req q;
	uint64_t ida, idb;
	uint32_t key, cqa, cqb, qpn;
	int a, b;

	fx_start_at(f, 4, 4, two_32 - 1);
	a = attach(f, &ida);
	b = attach(f, &idb);
	assert_true(ida == two_32 - 1);
	assert_true(idb == two_32);
	key = mr_reg(f, a, BASE_VA, 4096, SL_ACCESS_LOCAL_WRITE).u.mr_reg.lkey;
	cqa = cq_create(f, a, CQ_OFF, 256).u.cq_create.cq;
	cqb = cq_create(f, b, CQ_OFF, 256).u.cq_create.cq;
	qpn = qp_create(f, b, cqb, 0).u.qp_create.qpn;
	assert_int_equal(qp_connect(f, b, qpn, qpn), 0); /* lane 0 */
	assert_true(f->lane[0].log[0].client == idb);
	assert_true(f->lane[0].qp[0].client == idb);
	assert_true(f->lane[0].qp[0].send_cq->client == idb);
	/* b reaches nothing of a's, under its number or that number's low 32 bits */
	assert_null(sl_chan_mrs_find(f->mrs, idb, SL_CHAN_LKEY, key, BASE_VA, 16, 0));
	assert_null(sl_chan_mrs_find(f->mrs, (uint32_t)idb, SL_CHAN_LKEY, key, BASE_VA, 16, 0));
	assert_non_null(sl_chan_mrs_find(f->mrs, ida, SL_CHAN_LKEY, key, BASE_VA, 16, 0));
	q = req(SL_CHAN_MR_DEREG);
	q.u.mr_dereg.lkey = key;
	assert_int_equal(rpc(f, b, &q).status, -ENOENT);
	assert_int_equal(qp_create(f, b, cqa, 1).status, -EINVAL); /* a's CQ */
	q = req(SL_CHAN_CQ_DESTROY);
	q.u.cq_destroy.cq = cqa;
	assert_int_equal(rpc(f, b, &q).status, -ENOENT);
	/* nor a of b's */
	q = req(SL_CHAN_QP_DESTROY);
	q.u.qp_destroy.qpn = qpn;
	assert_int_equal(rpc(f, a, &q).status, -ENOENT);
	/* a leaves: the lanes are told its number, and b's QP stays */
	close(a);
	for (int i = 0; i < 5; i++)
		assert_int_equal(sl_chan_srv_poll(f->s, 10), 0);
	assert_int_equal(lane_count(&f->lane[1], SL_CHAN_CMD_CLIENT_GONE), 1);
	assert_true(f->lane[1].log[0].client == ida);
	assert_null(sl_chan_mrs_find(f->mrs, ida, SL_CHAN_LKEY, key, BASE_VA, 16, 0));
	assert_int_equal(stats(f).qps, 1);
	close(b);
}

static void
sl_chan_srv_poll__a_lane_that_does_not_answer_keeps_the_objects(void **state)
{
	struct fx *f = *state;
	struct sl_chan_req q;
	uint32_t cq, qpn;
	int fd, before;

	fx_start(f, 1, 4);
	before = open_fds();
	fd = attach(f, NULL);
	cq = cq_create(f, fd, CQ_OFF, 256).u.cq_create.cq;
	qpn = qp_create(f, fd, cq, 0).u.qp_create.qpn;
	assert_int_equal(qp_connect(f, fd, qpn, qpn), 0); /* lane 0 */
	f->lane[0].hang = true;
	q = req(SL_CHAN_QP_DESTROY);
	q.u.qp_destroy.qpn = qpn;
	assert_int_equal(rpc(f, fd, &q).status, -ETIMEDOUT);
	assert_int_equal(rpc(f, fd, &q).status, -EBUSY);           /* still the lane's */
	assert_int_equal(qp_create(f, fd, cq, 1).status, -EMFILE); /* its QPN is kept */
	q = req(SL_CHAN_CQ_DESTROY);
	q.u.cq_destroy.cq = cq;
	assert_int_equal(rpc(f, fd, &q).status, -EBUSY);
	lane_wake(&f->lane[0]);
	assert_int_equal(qp_create(f, fd, cq, 1).u.qp_create.qpn, qpn); /* reaped: free again */
	/* a hang-up the lanes do not answer keeps the memory until they do */
	f->lane[0].hang = true;
	f->lane[1].hang = true;
	close(fd);
	for (int i = 0; i < 3; i++)
		assert_int_equal(sl_chan_srv_poll(f->s, 10), 0);
	assert_int_equal(stats(f).clients_gone, 1);
	assert_int_equal(stats(f).cqs, 1);
	assert_int_equal(stats(f).qps, 1);
	assert_int_equal(open_fds(), before + 2); /* memfd and event fd */
	lane_wake(&f->lane[0]);
	lane_wake(&f->lane[1]);
	assert_int_equal(sl_chan_srv_poll(f->s, 10), 0);
	assert_int_equal(stats(f).cqs, 0);
	assert_int_equal(stats(f).qps, 0);
	assert_int_equal(open_fds(), before);
}

/*
 * A lane whose mailbox is full takes no command: the request fails with -EAGAIN having changed
 * nothing, the command's slot is free again at once (the QP is connected and destroyed, not
 * -EBUSY), and a hang-up's CLIENT_GONE is posted again at each poll until the lanes take it and
 * the client is released.
 */
static void
sl_chan_srv_poll__a_full_mailbox_is_eagain_and_frees_the_slot(void **state)
{
	struct fx *f = *state;
	struct sl_chan_req conn = req(SL_CHAN_QP_CONNECT), destroy = req(SL_CHAN_QP_DESTROY);
	uint32_t cq;
	int fd, before;

	fx_start(f, 1, 4); /* one QPN: a slot kept by a refused command would show as -EMFILE */
	before = open_fds();
	fd = attach(f, NULL);
	cq = cq_create(f, fd, CQ_OFF, 256).u.cq_create.cq;
	assert_int_equal(qp_create(f, fd, cq, 0).u.qp_create.qpn, QPN_BASE);
	conn.u.qp_connect.qpn = QPN_BASE;
	conn.u.qp_connect.peer_qpn = 8; /* lane 0 */
	conn.u.qp_connect.peer_token = 0x5eed;
	destroy.u.qp_destroy.qpn = QPN_BASE;
	f->lane[0].full = true;
	assert_int_equal(rpc(f, fd, &conn).status, -EAGAIN);
	assert_int_equal(stats(f).mailbox_full, 1);
	f->lane[0].full = false;
	assert_int_equal(rpc(f, fd, &conn).status, 0); /* not -EBUSY: the slot was free again */
	f->lane[0].full = true;
	assert_int_equal(rpc(f, fd, &destroy).status, -EAGAIN);
	assert_int_equal(stats(f).qps, 1); /* still the lane's: kept */
	assert_int_equal(stats(f).mailbox_full, 2);
	f->lane[0].full = false;
	assert_int_equal(rpc(f, fd, &destroy).status, 0);
	assert_int_equal(stats(f).qps, 0);
	assert_int_equal(lane_count(&f->lane[0], SL_CHAN_CMD_QP_DESTROY), 1);
	/* a hang-up the lanes have no room for: the client is kept until they take CLIENT_GONE */
	assert_int_equal(qp_create(f, fd, cq, 0).status, 0);
	f->lane[0].full = true;
	f->lane[1].full = true;
	close(fd);
	for (int i = 0; i < 3; i++)
		assert_int_equal(sl_chan_srv_poll(f->s, 10), 0);
	assert_int_equal(stats(f).clients_gone, 1);
	assert_int_equal(lane_count(&f->lane[0], SL_CHAN_CMD_CLIENT_GONE), 0);
	assert_int_equal(stats(f).qps, 1);
	assert_int_equal(stats(f).cqs, 1);
	assert_true(stats(f).mailbox_full > 2);
	f->lane[0].full = false;
	f->lane[1].full = false;
	assert_int_equal(sl_chan_srv_poll(f->s, 10), 0);
	assert_int_equal(lane_count(&f->lane[0], SL_CHAN_CMD_CLIENT_GONE), 1);
	assert_int_equal(lane_count(&f->lane[1], SL_CHAN_CMD_CLIENT_GONE), 1);
	assert_int_equal(stats(f).qps, 0);
	assert_int_equal(stats(f).cqs, 0);
	assert_int_equal(open_fds(), before);
}

/*
 * A lane that answers just after sl_chan_lane_call's deadline: the answer stands (the QP is
 * connected, then destroyed and freed), nothing is left waiting for it.
 */
static void
sl_chan_srv_poll__an_answer_just_after_the_deadline_stands(void **state)
{
	struct fx *f = *state;
	struct sl_chan_req q = req(SL_CHAN_QP_DESTROY);
	struct sl_chan_rsp r;
	uint32_t cq;
	int fd;

	fx_start(f, 1, 4);
	fd = attach(f, NULL);
	cq = cq_create(f, fd, CQ_OFF, 256).u.cq_create.cq;
	r = qp_create(f, fd, cq, 0);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.u.qp_create.qpn, QPN_BASE);
	f->lane[0].late = true;
	assert_int_equal(qp_connect(f, fd, QPN_BASE, 0), 0);
	assert_int_equal(qp_connect(f, fd, QPN_BASE, 0), -EISCONN);
	q.u.qp_destroy.qpn = QPN_BASE;
	assert_int_equal(rpc(f, fd, &q).status, 0);
	assert_int_equal(stats(f).qps, 0);
	f->lane[0].late = false;
	assert_int_equal(qp_create(f, fd, cq, 0).u.qp_create.qpn, QPN_BASE); /* the QPN is free */
	close(fd);
}

static void
sl_chan_srv_free__says_goodbye_and_removes_the_socket(void **state)
{
	struct fx *f = *state;
	uint64_t id;
	int fd;

	fx_start(f, 4, 4);
	fd = attach(f, &id);
	sl_chan_srv_free(f->s);
	f->s = NULL;
	assert_int_equal(lane_count(&f->lane[0], SL_CHAN_CMD_CLIENT_GONE), 1);
	assert_int_equal(f->lane[0].log[0].client, id);
	assert_int_equal(access(f->path, F_OK), -1);
	assert_int_equal(recv(fd, &(char){0}, 1, 0), 0);
	close(fd);
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(sl_chan_srv_create__listens_with_mode_in_a_new_directory),
		T(sl_chan_srv_create__publishes_the_socket_once_listening),
		T(sl_chan_srv_create__replaces_an_old_socket_not_a_file),
		T(sl_chan_srv_create__checks_the_lanes),
		T(sl_chan_srv_lane_of__is_symmetric_and_spreads),
		T(sl_chan_srv_poll__hello_ok),
		T(sl_chan_srv_poll__no_hello_first_is_eproto),
		T(sl_chan_srv_poll__bad_messages_are_eproto),
		T(sl_chan_srv_poll__hello_needs_a_memfd_of_its_size),
		T(sl_chan_srv_poll__hello_refuses_an_unsealed_memfd),
		T(sl_chan_srv_poll__hello_refuses_a_hugetlb_memfd),
		T(sl_chan_srv_poll__hello_refuses_a_file_outside_tmpfs),
		cmocka_unit_test(sl_chan_srv_mem_check__only_a_sealed_tmpfs_file_of_its_size),
		T(sl_chan_srv_poll__mr_reg_checks_range_and_flags),
		T(sl_chan_srv_poll__cq_checks_ring_and_event_fd),
		T(sl_chan_srv_poll__qp_connect_gives_the_lane_its_conf),
		T(sl_chan_srv_poll__qp_create_refuses_bad_rings_and_names),
		T(sl_chan_srv_poll__qpn_exhaustion_is_emfile),
		T(sl_chan_srv_poll__a_lane_refusal_leaves_the_qp_on_no_lane),
		T(sl_chan_srv_poll__qp_identity_is_random_and_fresh_on_reuse),
		T(sl_chan_srv_poll__connect_and_cq_busy),
		T(sl_chan_srv_poll__client_limit_is_emfile),
		T(sl_chan_srv_poll__allow_lists_admit_by_uid_or_group),
		T(sl_chan_srv_poll__mr_quotas_are_edquot),
		T(sl_chan_srv_poll__cq_quota_is_edquot),
		T(sl_chan_srv_poll__qp_quota_is_edquot),
		T(sl_chan_srv_poll__uid_clients_is_edquot_at_connect),
		T(sl_chan_srv_poll__hello_deadline_closes_a_silent_connection),
		T(sl_chan_srv_clients__a_row_per_application_through_its_life),
		T(sl_chan_srv_poll__hang_up_releases_everything),
		T(sl_chan_srv_poll__clients_cannot_reach_each_other),
		T(sl_chan_srv_poll__client_numbers_do_not_wrap_at_2_32),
		T(sl_chan_srv_poll__a_lane_that_does_not_answer_keeps_the_objects),
		T(sl_chan_srv_poll__a_full_mailbox_is_eagain_and_frees_the_slot),
		T(sl_chan_srv_poll__an_answer_just_after_the_deadline_stands),
		T(sl_chan_srv_free__says_goodbye_and_removes_the_socket),
	};
#undef T
	return cmocka_run_group_tests(tests, NULL, NULL);
}
