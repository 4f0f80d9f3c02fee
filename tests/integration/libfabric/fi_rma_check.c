/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fi_rma_check.c - FI_RMA through the sluice provider, against <rdma/fabric.h> only: an
 * application of libfabric, not of libsluice.
 *
 *   fi_rma_check server NAMEFILE [msg]   registers a malloc'ed target, writes its name, then
 *   fi_rma_check client NAMEFILE [msg]   reads it and runs the cases below against the target
 * on FI_EP_RDM endpoints, or with msg on one FI_EP_MSG connection (a passive endpoint at the
 * server, fi_connect / fi_accept; its name is the listener's).
 *
 * The target is TARGET_BYTES of malloc (not page-aligned, not the provider's memory), filled
 * with a known pattern and registered with FI_REMOTE_WRITE | FI_REMOTE_READ; the server sends
 * its address and key (FI_MR_VIRT_ADDR, FI_MR_PROV_KEY) to the client in a message. Both sides
 * keep a copy of what the target must hold. Cases, in order, for every size of SIZES (1 B to
 * 1 MiB, powers of 4 and odd sizes), each at its own offset:
 *   1. fi_write of the client's malloc'ed bytes, waited for (FI_RMA | FI_WRITE); a message
 *      then tells the server what was written, and the server compares its whole target with
 *      its copy, byte for byte, and answers;
 *   2. fi_writedata, the same, and the server must have seen the data completion first:
 *      FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA with the data the client gave, on its
 *      receive CQ, without any of its posted receives consumed;
 *   3. fi_read of the target into a malloc'ed buffer, compared with the client's copy;
 *   4. fi_inject_write of 60 bytes, checked as case 1;
 * then
 *   5. a wrong key (the right one with a bit flipped), from a fresh endpoint: the write
 *      completes in error, fi_cq_readerr's err FI_EACCES, and a range past the target's end
 *      with the right key, from another: FI_EACCES too (msg: the wrong key alone, last, on
 *      the connection); the server, told through a file that they have failed, finds its
 *      target unchanged byte for byte.
 * The server also times fi_mr_reg + fi_close of touched malloc'ed buffers of 1 MiB and 64 MiB
 * (the adoption into and out of the domain's shared memory) and prints it.
 * Exit 0 when every case holds; otherwise a line naming the case and 1.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#define FI_CHECK_PROG "fi_rma_check"
#include "fi_check.h"

#define TARGET_BYTES ((1u << 20) + 12345) /**< the target, bytes */
#define WAIT_S 20

static const size_t sizes[] = {1,     3,      4,      16,      63,     64,    256,
			       1000,  1024,   4096,   4097,    16384,  65536, 65537,
			       99999, 262144, 524288, 1048575, 1048576};
#define N_SIZES (sizeof(sizes) / sizeof(sizes[0]))

enum kind { K_WRITE = 1, K_WRITEDATA, K_END };

/* What the client tells the server it wrote. */
struct note {
	uint32_t kind; /**< enum kind */
	uint32_t data; /**< K_WRITEDATA: the CQ data given */
	uint64_t off;  /**< into the target, bytes */
	uint64_t len;  /**< bytes */
	uint32_t seed; /**< of the pattern written */
	uint32_t pad;
};

/* What the server tells the client of its target. */
struct target {
	uint64_t addr, key, len;
};

static bool msg_mode; /**< FI_EP_MSG: one connection; else FI_EP_RDM */

static struct fi_info *
hints_for(enum fi_ep_type type, const char *dest)
{
	struct fi_info *hints = fi_allocinfo();

	hints->caps = FI_MSG | FI_RMA;
	hints->ep_attr->type = type;
	hints->fabric_attr->prov_name = strdup("sluice");
	hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_PROV_KEY;
	hints->domain_attr->cq_data_size = 4;
	if (dest != NULL) {
		hints->dest_addr = strdup(dest);
		hints->dest_addrlen = strlen(dest) + 1;
	}
	return hints;
}

static void
getinfo(enum fi_ep_type type, const char *dest, struct fi_info **info)
{
	struct fi_info *hints = hints_for(type, dest);

	CHECK(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, info));
	fi_freeinfo(hints);
}

static void
rma_offered(const struct fi_info *info)
{
	if (!(info->caps & FI_RMA) ||
	    info->domain_attr->mr_mode != (FI_MR_VIRT_ADDR | FI_MR_PROV_KEY))
		fail("fi_getinfo: no FI_RMA with mr_mode FI_MR_VIRT_ADDR | FI_MR_PROV_KEY");
}

static const struct fi_cq_attr cq_attr = {
	.format = FI_CQ_FORMAT_DATA, .wait_obj = FI_WAIT_NONE, .size = 256};

/* An RDM endpoint. */
static void
open_side(struct fi_side *s)
{
	struct fi_cq_attr cq = cq_attr;
	struct fi_av_attr av_attr = {.type = FI_AV_TABLE};

	fi_side_open(s, hints_for(FI_EP_RDM, NULL), &cq, &av_attr);
	rma_offered(s->info);
}

/* The next connection event (fi_eq_sread, WAIT_S at most). */
static uint32_t
eq_event(struct fi_side *s, struct fi_eq_cm_entry *e)
{
	uint32_t ev;

	if (fi_eq_sread(s->eq, &ev, e, sizeof(*e), WAIT_S * 1000, 0) != sizeof(*e))
		fail("MSG: no connection event");
	return ev;
}

/* A MSG endpoint for s->info on s's fabric and EQ, its domain and CQ, enabled. */
static void
msg_ep(struct fi_side *s)
{
	struct fi_cq_attr cq = cq_attr;

	CHECK(fi_domain(s->fabric, s->info, &s->domain, NULL));
	CHECK(fi_cq_open(s->domain, &cq, &s->cq, NULL));
	CHECK(fi_endpoint(s->domain, s->info, &s->ep, NULL));
	CHECK(fi_ep_bind(s->ep, &s->eq->fid, 0));
	CHECK(fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV));
	CHECK(fi_enable(s->ep));
}

/* Open s's fabric and EQ for info. */
static void
msg_fabric(struct fi_side *s, const struct fi_info *info)
{
	struct fi_eq_attr eq_attr = {.size = 16, .wait_obj = FI_WAIT_FD};

	rma_offered(info);
	CHECK(fi_fabric(info->fabric_attr, &s->fabric, NULL));
	CHECK(fi_eq_open(s->fabric, &eq_attr, &s->eq, NULL));
}

/* The server's connection: listen, write the listener's name, accept the first request. */
static void
msg_accept(struct fi_side *s, const char *namefile)
{
	struct fi_eq_cm_entry e;
	struct fi_info *info;
	char name[FI_CHECK_NAME_BYTES];
	size_t len = sizeof(name);

	getinfo(FI_EP_MSG, NULL, &info);
	msg_fabric(s, info);
	CHECK(fi_passive_ep(s->fabric, info, &s->pep, NULL));
	CHECK(fi_pep_bind(s->pep, &s->eq->fid, 0));
	CHECK(fi_listen(s->pep));
	CHECK(fi_getname(&s->pep->fid, name, &len));
	name_write(namefile, name, len);
	fi_freeinfo(info);
	if (eq_event(s, &e) != FI_CONNREQ)
		fail("MSG: no FI_CONNREQ");
	s->info = e.info;
	msg_ep(s);
	CHECK(fi_accept(s->ep, NULL, 0));
	if (eq_event(s, &e) != FI_CONNECTED)
		fail("MSG: no FI_CONNECTED at the server");
}

/* The client's connection to the server's listener, name. */
static void
msg_connect(struct fi_side *s, const char *name)
{
	struct fi_eq_cm_entry e;

	getinfo(FI_EP_MSG, name, &s->info);
	msg_fabric(s, s->info);
	msg_ep(s);
	CHECK(fi_connect(s->ep, name, NULL, 0));
	if (eq_event(s, &e) != FI_CONNECTED)
		fail("MSG: no FI_CONNECTED at the client");
	s->name_len = sizeof(s->name);
	CHECK(fi_getname(&s->ep->fid, s->name, &s->name_len));
}

static uint8_t
pattern(uint32_t seed, size_t i)
{
	return (uint8_t)(seed * 131 + i * 7 + 1);
}

static void
fill(uint8_t *p, size_t len, uint32_t seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = pattern(seed, i);
}

/* The k-th offset into the target for len bytes: spread, odd, and room for len. */
static uint64_t
offset_of(unsigned k, size_t len)
{
	return ((uint64_t)k * 2654435761u) % (TARGET_BYTES - len + 1);
}

/* One completion (spun on, with a deadline): 1, or -FI_EAVAIL / another error. */
static int
one(struct fi_side *s, struct fi_cq_data_entry *e)
{
	time_t end = time(NULL) + WAIT_S;
	ssize_t n;

	do {
		n = fi_cq_read(s->cq, e, 1);
		if (n == 1 || (n < 0 && n != -FI_EAGAIN))
			return (int)n;
	} while (time(NULL) < end);
	return -FI_ETIMEDOUT;
}

/* One completion that must be a success: else say what and why, and fail. */
static void
ok_one(struct fi_side *s, struct fi_cq_data_entry *e, const char *what)
{
	struct fi_cq_err_entry err = {0};
	char buf[128];
	int n = one(s, e);

	if (n == 1)
		return;
	if (n == -FI_EAVAIL && fi_cq_readerr(s->cq, &err, 0) == 1)
		fprintf(stderr, "%s: error completion %s (%s)\n", what, fi_strerror(err.err),
			fi_cq_strerror(s->cq, err.prov_errno, err.err_data, buf, sizeof(buf)));
	else
		fprintf(stderr, "%s: %s\n", what, fi_strerror(-n));
	fail(what);
}

/* Post a receive into buf, wait for it; remote-write data completions seen meanwhile are
 * counted into *datas, the last one's kept in *last. */
static void
recv_one(struct fi_side *s, void *buf, size_t len, unsigned *datas, struct fi_cq_data_entry *last)
{
	struct fi_cq_data_entry e;

	CHECK(fi_recv(s->ep, buf, len, NULL, FI_ADDR_UNSPEC, buf));
	for (;;) {
		ok_one(s, &e, "a message did not arrive");
		if (e.flags & FI_REMOTE_WRITE) {
			if (datas == NULL)
				fail("a remote write completion where none was due");
			++*datas;
			*last = e;
			continue;
		}
		if (!(e.flags & FI_RECV) || e.op_context != buf)
			fail("a receive's completion fields");
		return;
	}
}

static void
send_one(struct fi_side *s, const void *buf, size_t len, fi_addr_t to)
{
	struct fi_cq_data_entry e;

	CHECK(fi_send(s->ep, buf, len, NULL, to, NULL));
	ok_one(s, &e, "a send did not complete");
	if (!(e.flags & FI_SEND))
		fail("a send's completion fields");
}

static double
now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* fi_mr_reg + fi_close of bytes of touched malloc, for remote access: ms each. */
static void
time_adoption(struct fi_side *s, size_t bytes)
{
	uint8_t *p = malloc(bytes);
	struct fid_mr *mr;
	double t0, t1, t2;

	if (p == NULL)
		fail("adoption timing: malloc");
	memset(p, 0x5a, bytes);
	t0 = now_ms();
	CHECK(fi_mr_reg(s->domain, p, bytes, FI_REMOTE_WRITE | FI_REMOTE_READ, 0, 0, 0, &mr, NULL));
	t1 = now_ms();
	CHECK(fi_close(&mr->fid));
	t2 = now_ms();
	if (p[0] != 0x5a || p[bytes - 1] != 0x5a)
		fail("adoption timing: the bytes changed");
	free(p);
	printf("server: fi_mr_reg of %zu MiB of malloc for remote access %.2f ms, fi_close %.2f "
	       "ms\n",
	       bytes >> 20, t1 - t0, t2 - t1);
}

static void
server(const char *namefile)
{
	uint8_t *tgt = malloc(TARGET_BYTES), *expect = malloc(TARGET_BYTES);
	char msg[FI_CHECK_NAME_BYTES + sizeof(struct note)] = {0};
	struct fi_cq_data_entry last = {0};
	struct fi_side s = {0};
	struct fid_mr *mr;
	struct target t;
	fi_addr_t client = 0; /* MSG: not looked at */
	unsigned checked = 0;
	char done[512];

	if (tgt == NULL || expect == NULL)
		fail("server: malloc");
	if (msg_mode)
		msg_accept(&s, namefile);
	else
		open_side(&s);
	fill(tgt, TARGET_BYTES, 0xA5);
	memcpy(expect, tgt, TARGET_BYTES);
	CHECK(fi_mr_reg(s.domain, tgt, TARGET_BYTES, FI_REMOTE_WRITE | FI_REMOTE_READ, 0, 0, 0, &mr,
			NULL));
	if (memcmp(tgt, expect, TARGET_BYTES) != 0)
		fail("fi_mr_reg changed the target's bytes");
	t = (struct target){
		.addr = (uint64_t)(uintptr_t)tgt, .key = fi_mr_key(mr), .len = TARGET_BYTES};
	if (!msg_mode)
		name_write(namefile, s.name, s.name_len);
	/* The client's name first, then our target's address and key back. */
	recv_one(&s, msg, sizeof(msg), NULL, NULL);
	if (!msg_mode && fi_av_insert(s.av, msg, 1, &client, 0, NULL) != 1)
		fail("server: the client's name does not insert");
	send_one(&s, &t, sizeof(t), client);
	for (;;) {
		struct note n;
		unsigned datas = 0;
		uint8_t ok;

		recv_one(&s, &n, sizeof(n), &datas, &last);
		if (n.kind == K_END)
			break;
		if (n.off > TARGET_BYTES || n.len > TARGET_BYTES - n.off)
			fail("server: a note out of range");
		fill(expect + n.off, n.len, n.seed);
		ok = memcmp(tgt, expect, TARGET_BYTES) == 0;
		if (n.kind == K_WRITEDATA &&
		    (datas != 1 || last.data != n.data || last.len != n.len ||
		     !(last.flags & FI_REMOTE_CQ_DATA) || !(last.flags & FI_RMA)))
			fail("fi_writedata: the target's data completion is missing or wrong");
		if (n.kind == K_WRITE && datas != 0)
			fail("fi_write: a completion at the target");
		checked++;
		send_one(&s, &ok, 1, client);
	}
	/* Case 5: the client's failed writes change nothing. */
	snprintf(done, sizeof(done), "%s.refused", namefile);
	for (int tries = 0; access(done, F_OK) != 0; tries++) {
		if (tries > WAIT_S * 10)
			fail("refused writes: the client never said they failed");
		usleep(100000);
	}
	if (memcmp(tgt, expect, TARGET_BYTES) != 0)
		fail("refused writes: the target changed");
	CHECK(fi_close(&mr->fid));
	if (memcmp(tgt, expect, TARGET_BYTES) != 0)
		fail("fi_close of the region changed the target's bytes");
	/* Last, so that a slow host does not keep the client waiting for the name. */
	time_adoption(&s, 1u << 20);
	time_adoption(&s, 64u << 20);
	fi_side_close(&s);
	free(tgt);
	free(expect);
	printf("server: %u writes compared byte for byte over the whole %u-byte target, "
	       "unchanged by the refused ones\n",
	       checked, TARGET_BYTES);
}

/* fi_write / fi_writedata / fi_inject_write of case i (len bytes at offset), told to the
 * server, which must answer that its target holds what it should. */
static void
write_case(struct fi_side *s, fi_addr_t srv, const struct target *t, uint8_t *shadow, enum kind k,
	   bool inject, size_t len, uint64_t off, uint32_t seed)
{
	uint8_t *src = malloc(len);
	struct note n = {.kind = k,
			 .off = off,
			 .len = len,
			 .seed = seed,
			 .data = k == K_WRITEDATA ? 0x10000u + seed : 0};
	struct fi_cq_data_entry e;
	uint8_t ok = 0;

	if (src == NULL)
		fail("client: malloc");
	fill(src, len, seed);
	if (inject) {
		CHECK(fi_inject_write(s->ep, src, len, srv, t->addr + off, t->key));
	} else {
		if (k == K_WRITEDATA)
			CHECK(fi_writedata(s->ep, src, len, NULL, n.data, srv, t->addr + off,
					   t->key, src));
		else
			CHECK(fi_write(s->ep, src, len, NULL, srv, t->addr + off, t->key, src));
		ok_one(s, &e, "fi_write");
		if (e.flags != (FI_RMA | FI_WRITE) || e.op_context != src)
			fail("fi_write: a completion's fields");
	}
	memset(src, 0, len); /* the buffer is the application's again once the call returns */
	fill(shadow + off, len, seed);
	send_one(s, &n, sizeof(n), srv);
	recv_one(s, &ok, 1, NULL, NULL);
	if (!ok) {
		fprintf(stderr, "%s of %zu B at %llu: the target differs\n",
			inject         ? "fi_inject_write"
			: k == K_WRITE ? "fi_write"
				       : "fi_writedata",
			len, (unsigned long long)off);
		fail("a write did not land byte for byte");
	}
	free(src);
}

static void
read_case(struct fi_side *s, fi_addr_t srv, const struct target *t, const uint8_t *shadow,
	  size_t len, uint64_t off)
{
	uint8_t *dst = malloc(len);
	struct fi_cq_data_entry e;

	if (dst == NULL)
		fail("client: malloc");
	memset(dst, 0, len);
	CHECK(fi_read(s->ep, dst, len, NULL, srv, t->addr + off, t->key, dst));
	ok_one(s, &e, "fi_read");
	if (e.flags != (FI_RMA | FI_READ) || e.op_context != dst)
		fail("fi_read: a completion's fields");
	if (memcmp(dst, shadow + off, len) != 0) {
		fprintf(stderr, "fi_read of %zu B at %llu differs\n", len, (unsigned long long)off);
		fail("a read did not return the target's bytes");
	}
	free(dst);
}

/* A write of 4 KiB that the target must refuse (the QP is in error after it). */
static void
refused_on(struct fi_side *s, fi_addr_t srv, const char *what, uint64_t raddr, uint64_t key)
{
	static uint8_t src[4096];
	struct fi_cq_err_entry err = {0};
	struct fi_cq_data_entry e;
	char buf[128];

	fill(src, sizeof(src), 0xEE);
	CHECK(fi_write(s->ep, src, sizeof(src), NULL, srv, raddr, key, src));
	if (one(s, &e) != -FI_EAVAIL || fi_cq_readerr(s->cq, &err, 0) != 1)
		fail(what);
	if (err.err != FI_EACCES || err.op_context != src || !(err.flags & FI_WRITE))
		fail(what);
	printf("client: %s: %s (%s)\n", what, fi_strerror(err.err),
	       fi_cq_strerror(s->cq, err.prov_errno, err.err_data, buf, sizeof(buf)));
}

/* The same from a fresh RDM endpoint. */
static void
refused_case(const char *namefile, const char *what, uint64_t raddr, uint64_t key)
{
	char name[FI_CHECK_NAME_BYTES] = {0};
	struct fi_side s = {0};
	fi_addr_t srv;

	name_read(namefile, name, sizeof(name));
	open_side(&s);
	if (fi_av_insert(s.av, name, 1, &srv, 0, NULL) != 1)
		fail("client: the server's name does not insert");
	refused_on(&s, srv, what, raddr, key);
	fi_side_close(&s);
}

static void
client(const char *namefile)
{
	uint8_t *shadow = malloc(TARGET_BYTES);
	char name[FI_CHECK_NAME_BYTES] = {0};
	struct fi_side s = {0};
	struct note end = {.kind = K_END};
	struct target t;
	fi_addr_t srv = 0; /* MSG: not looked at */
	char done[512];
	FILE *f;

	if (shadow == NULL)
		fail("client: malloc");
	fill(shadow, TARGET_BYTES, 0xA5);
	name_read(namefile, name, sizeof(name));
	if (msg_mode) {
		msg_connect(&s, name);
	} else {
		open_side(&s);
		if (fi_av_insert(s.av, name, 1, &srv, 0, NULL) != 1)
			fail("client: the server's name does not insert");
	}
	CHECK(fi_recv(s.ep, &t, sizeof(t), NULL, FI_ADDR_UNSPEC, &t));
	CHECK(fi_send(s.ep, s.name, s.name_len, NULL, srv, NULL));
	for (int got = 0; got < 2;) {
		struct fi_cq_data_entry e;

		ok_one(&s, &e, "client: no target from the server");
		got++;
	}
	if (t.len != TARGET_BYTES || t.key == 0 || t.key > UINT32_MAX)
		fail("client: the target's length or key");
	for (unsigned i = 0; i < N_SIZES; i++)
		write_case(&s, srv, &t, shadow, K_WRITE, false, sizes[i], offset_of(i, sizes[i]),
			   2 * i + 1);
	for (unsigned i = 0; i < N_SIZES; i++)
		write_case(&s, srv, &t, shadow, K_WRITEDATA, false, sizes[i],
			   offset_of(N_SIZES + i, sizes[i]), 2 * i + 2);
	for (unsigned i = 0; i < N_SIZES; i++)
		read_case(&s, srv, &t, shadow, sizes[i], offset_of(2 * N_SIZES + i, sizes[i]));
	read_case(&s, srv, &t, shadow, TARGET_BYTES < (1u << 20) ? TARGET_BYTES : 1u << 20, 12345);
	write_case(&s, srv, &t, shadow, K_WRITE, true, 60, 777, 99);
	printf("client: fi_write, fi_writedata, fi_read of %zu sizes (1 B to 1 MiB) and "
	       "fi_inject_write checked\n",
	       N_SIZES);
	if (msg_mode) {
		/* One connection: the end first, then the refused write that fails its QP. */
		send_one(&s, &end, sizeof(end), srv);
		refused_on(&s, srv, "wrong key", t.addr, t.key ^ 0x80000000u);
	} else {
		refused_case(namefile, "wrong key", t.addr, t.key ^ 0x80000000u);
		refused_case(namefile, "range past the target's end", t.addr + TARGET_BYTES - 100,
			     t.key);
	}
	snprintf(done, sizeof(done), "%s.refused", namefile);
	f = fopen(done, "w");
	if (f == NULL || fclose(f) != 0)
		fail("client: cannot write the refused file");
	if (!msg_mode)
		send_one(&s, &end, sizeof(end), srv);
	fi_side_close(&s);
	free(shadow);
}

int
main(int argc, char **argv)
{
	if (argc < 3 || argc > 4 ||
	    (strcmp(argv[1], "server") != 0 && strcmp(argv[1], "client") != 0) ||
	    (argc == 4 && strcmp(argv[3], "msg") != 0)) {
		fprintf(stderr, "usage: fi_rma_check server|client NAMEFILE [msg]\n");
		return 2;
	}
	msg_mode = argc == 4;
	if (strcmp(argv[1], "server") == 0)
		server(argv[2]);
	else
		client(argv[2]);
	return 0;
}
