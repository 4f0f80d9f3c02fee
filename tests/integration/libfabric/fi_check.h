/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fi_check.h - what the libfabric checks (fi_rdm_check.c, fi_msg_check.c, fi_rma_check.c)
 * share: a call that must not fail, a failure that ends the run, the name file through which
 * the server hands its name to the client (both namespaces see the test's directory), and an
 * endpoint with everything it needs (an RDM one opened from one fi_getinfo). The including file
 * defines FI_CHECK_PROG, its program's name, first.
 */
#ifndef FI_CHECK_H
#define FI_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#define FI_CHECK_NAME_BYTES 64 /**< an endpoint's name, at most */

#define CHECK(call)                                                                                \
	do {                                                                                       \
		int rc_ = (int)(call);                                                             \
		if (rc_ < 0) {                                                                     \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,              \
				fi_strerror(-rc_));                                                \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

/* A case does not hold: say which (what names it), exit 1. */
static void
fail(const char *what)
{
	fprintf(stderr, "%s: %s\n", FI_CHECK_PROG, what);
	exit(1);
}

static void
name_write(const char *namefile, const void *name, size_t len)
{
	FILE *f = fopen(namefile, "w");

	if (f == NULL || fwrite(name, 1, len, f) != len || fclose(f) != 0)
		fail("server: cannot write the name file");
}

/* The server's name, waited for up to 10 s; NUL-terminated in name (bytes long). */
static void
name_read(const char *namefile, char *name, size_t bytes)
{
	int n = 0;

	for (int tries = 0; tries < 100 && n <= 0; tries++) {
		FILE *f = fopen(namefile, "r");

		if (f != NULL) {
			n = (int)fread(name, 1, bytes - 1, f);
			fclose(f);
		}
		if (n <= 0)
			usleep(100000);
	}
	if (n <= 0)
		fail("client: no server name");
	name[n] = '\0';
}

/* An endpoint, its fabric, domain, one CQ for both directions, and its name; an RDM one's AV,
 * a MSG one's EQ and (a server's) passive endpoint. */
struct fi_side {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_eq *eq;   /**< MSG, NULL: none */
	struct fid_pep *pep; /**< MSG server, NULL: none */
	struct fid_domain *domain;
	struct fid_av *av; /**< RDM, NULL: none */
	struct fid_cq *cq;
	struct fid_ep *ep;
	char name[FI_CHECK_NAME_BYTES];
	size_t name_len;
};

/* Open an RDM s from fi_getinfo's first answer to hints (which it frees), enabled. */
static inline void
fi_side_open(struct fi_side *s, struct fi_info *hints, struct fi_cq_attr *cq_attr,
	     struct fi_av_attr *av_attr)
{
	CHECK(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &s->info));
	fi_freeinfo(hints);
	CHECK(fi_fabric(s->info->fabric_attr, &s->fabric, NULL));
	CHECK(fi_domain(s->fabric, s->info, &s->domain, NULL));
	CHECK(fi_av_open(s->domain, av_attr, &s->av, NULL));
	CHECK(fi_cq_open(s->domain, cq_attr, &s->cq, NULL));
	CHECK(fi_endpoint(s->domain, s->info, &s->ep, NULL));
	CHECK(fi_ep_bind(s->ep, &s->av->fid, 0));
	CHECK(fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV));
	CHECK(fi_enable(s->ep));
	s->name_len = sizeof(s->name);
	CHECK(fi_getname(&s->ep->fid, s->name, &s->name_len));
}

static inline void
fi_side_close(struct fi_side *s)
{
	CHECK(fi_close(&s->ep->fid));
	CHECK(fi_close(&s->cq->fid));
	if (s->av != NULL)
		CHECK(fi_close(&s->av->fid));
	CHECK(fi_close(&s->domain->fid));
	if (s->pep != NULL)
		CHECK(fi_close(&s->pep->fid));
	if (s->eq != NULL)
		CHECK(fi_close(&s->eq->fid));
	CHECK(fi_close(&s->fabric->fid));
	fi_freeinfo(s->info);
}

#endif /* FI_CHECK_H */
