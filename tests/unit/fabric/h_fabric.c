/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * h_fabric.c - the provider's tests' shared set-up (h_fabric.h): the run's socket path, and an
 * RDM endpoint's objects opened and closed in libfabric's order.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "h_fabric.h"

static char h_dir[64], h_path[128];

/* At exit: the run's directory (each test's fake daemon removed its socket). */
static void
h_fabric_cleanup(void)
{
	rmdir(h_dir);
}

const char *
h_fabric_init(void)
{
	snprintf(h_dir, sizeof(h_dir), "/tmp/sl_fabric_test.XXXXXX");
	if (!mkdtemp(h_dir) || atexit(h_fabric_cleanup) != 0)
		abort();
	snprintf(h_path, sizeof(h_path), "%s/sluiced.sock", h_dir);
	setenv("FI_SLUICE_SOCKET", h_path, 1);
	return h_path;
}

const char *
h_fabric_socket(void)
{
	return h_path;
}

int
h_fabric_setup(void **state)
{
	struct h_daemon *d = malloc(sizeof(*d));

	h_daemon_start(d, h_path);
	d->rnr_wait = true;
	*state = d;
	return 0;
}

int
h_fabric_teardown(void **state)
{
	h_daemon_stop(*state);
	free(*state);
	return 0;
}

int
h_fabric_getinfo(struct fi_info **info)
{
	struct fi_info *hints = fi_allocinfo(), *all = NULL;
	int ret;

	assert_non_null(hints);
	*info = NULL;
	hints->caps = FI_MSG;
	hints->ep_attr->type = FI_EP_RDM;
	hints->fabric_attr->prov_name = strdup("sluice");
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &all);
	fi_freeinfo(hints);
	if (ret != 0)
		return ret;
	/* libfabric also layers ofi_rxm over sluice's FI_EP_MSG ("sluice;ofi_rxm"), and may list
	 * that first: take the provider's own answer. */
	for (struct fi_info *fi = all; fi != NULL; fi = fi->next)
		if (strcmp(fi->fabric_attr->prov_name, "sluice") == 0) {
			*info = fi_dupinfo(fi);
			break;
		}
	fi_freeinfo(all);
	return *info != NULL ? 0 : -FI_ENODATA;
}

void
h_side_open(struct h_side *s, const struct fi_cq_attr *tx_attr, const struct fi_cq_attr *rx_attr)
{
	struct fi_av_attr av_attr = {.type = FI_AV_TABLE};

	memset(s, 0, sizeof(*s));
	assert_int_equal(h_fabric_getinfo(&s->info), 0);
	assert_int_equal(fi_fabric(s->info->fabric_attr, &s->fabric, NULL), 0);
	assert_int_equal(fi_domain(s->fabric, s->info, &s->domain, NULL), 0);
	assert_int_equal(fi_av_open(s->domain, &av_attr, &s->av, NULL), 0);
	assert_int_equal(fi_cq_open(s->domain, (struct fi_cq_attr *)tx_attr, &s->tx_cq, NULL), 0);
	s->rx_cq = s->tx_cq;
	if (rx_attr != NULL)
		assert_int_equal(
			fi_cq_open(s->domain, (struct fi_cq_attr *)rx_attr, &s->rx_cq, NULL), 0);
	assert_int_equal(fi_endpoint(s->domain, s->info, &s->ep, NULL), 0);
	assert_int_equal(fi_ep_bind(s->ep, &s->av->fid, 0), 0);
	assert_int_equal(fi_ep_bind(s->ep, &s->tx_cq->fid, FI_TRANSMIT), 0);
	assert_int_equal(fi_ep_bind(s->ep, &s->rx_cq->fid, FI_RECV), 0);
	assert_int_equal(fi_enable(s->ep), 0);
	s->name_len = sizeof(s->name);
	assert_int_equal(fi_getname(&s->ep->fid, s->name, &s->name_len), 0);
}

void
h_side_close(struct h_side *s)
{
	assert_int_equal(fi_close(&s->ep->fid), 0);
	if (s->rx_cq != s->tx_cq)
		assert_int_equal(fi_close(&s->rx_cq->fid), 0);
	assert_int_equal(fi_close(&s->tx_cq->fid), 0);
	assert_int_equal(fi_close(&s->av->fid), 0);
	assert_int_equal(fi_close(&s->domain->fid), 0);
	assert_int_equal(fi_close(&s->fabric->fid), 0);
	fi_freeinfo(s->info);
}

fi_addr_t
h_side_insert(struct h_side *s, const struct h_side *peer)
{
	fi_addr_t a = FI_ADDR_NOTAVAIL;

	assert_int_equal(fi_av_insert(s->av, peer->name, 1, &a, 0, NULL), 1);
	return a;
}
