/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for lib/fabric/prov.c and what it opens (info.c, domain.c, av.c, cq.c, eq.c, ep.c),
 * as a libfabric application sees them, against the fake daemon (h_fabric.h): every object
 * opens and closes, and the daemon hears the domain come and go; no socket at
 * FI_SLUICE_SOCKET is fi_getinfo's -FI_ENODATA; a socket nobody answers, or a daemon that
 * refuses, is fi_domain's error (-FI_ECONNREFUSED, the daemon's errno), at once.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>
#include <rdma/fi_eq.h>

#include "h_fabric.h"

static void
fi_fabric__every_object_opens_and_closes(void **state)
{
	struct h_daemon *d = *state;
	struct fi_eq_attr eq_attr = {.wait_obj = FI_WAIT_FD};
	struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_DATA, .wait_obj = FI_WAIT_FD};
	struct fid_eq *eq;
	struct h_side s;

	h_side_open(&s, &cq_attr, &cq_attr);
	assert_string_equal(s.info->fabric_attr->prov_name, "sluice");
	assert_int_equal(s.info->ep_attr->type, FI_EP_RDM);
	assert_int_equal(atomic_load(&d->hellos), 1); /* the domain is one context */
	assert_true(s.name_len > 0);
	assert_memory_equal(s.name, "fi_sluice://127.0.0.1:", 22);
	assert_int_equal(fi_eq_open(s.fabric, &eq_attr, &eq, NULL), 0);
	assert_int_equal(fi_close(&eq->fid), 0);
	/* a domain with objects open on it stays */
	assert_int_equal(fi_close(&s.domain->fid), -FI_EBUSY);
	h_side_close(&s);
	assert_true(h_daemon_wait_no_client(d, 2000));
}

static void
fi_getinfo__no_socket_is_enodata(void **state)
{
	struct fi_info *info = NULL;

	h_daemon_stop(*state); /* removes the socket */
	assert_int_equal(h_fabric_getinfo(&info), -FI_ENODATA);
	assert_null(info);
	h_daemon_start(*state, h_fabric_socket()); /* for teardown */
}

static void
fi_domain__a_socket_nobody_answers_is_econnrefused(void **state)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fi_info *info;
	int fd;

	h_daemon_stop(*state);
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	strcpy(sa.sun_path, h_fabric_socket());
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0); /* never listens */
	assert_int_equal(h_fabric_getinfo(&info), 0);                      /* the socket is there */
	assert_int_equal(fi_fabric(info->fabric_attr, &fabric, NULL), 0);
	assert_int_equal(fi_domain(fabric, info, &domain, NULL), -FI_ECONNREFUSED);
	assert_int_equal(fi_close(&fabric->fid), 0);
	fi_freeinfo(info);
	close(fd);
	unlink(h_fabric_socket());
	h_daemon_start(*state, h_fabric_socket());
}

static void
fi_domain__a_daemon_that_refuses_is_its_errno(void **state)
{
	struct h_daemon *d = *state;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fi_info *info;

	d->refuse_connect = -EMFILE; /* as sluiced over its [api] clients */
	assert_int_equal(h_fabric_getinfo(&info), 0);
	assert_int_equal(fi_fabric(info->fabric_attr, &fabric, NULL), 0);
	assert_int_equal(fi_domain(fabric, info, &domain, NULL), -FI_EMFILE);
	assert_int_equal(fi_close(&fabric->fid), 0);
	fi_freeinfo(info);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(fi_fabric__every_object_opens_and_closes,
						h_fabric_setup, h_fabric_teardown),
		cmocka_unit_test_setup_teardown(fi_getinfo__no_socket_is_enodata, h_fabric_setup,
						h_fabric_teardown),
		cmocka_unit_test_setup_teardown(fi_domain__a_socket_nobody_answers_is_econnrefused,
						h_fabric_setup, h_fabric_teardown),
		cmocka_unit_test_setup_teardown(fi_domain__a_daemon_that_refuses_is_its_errno,
						h_fabric_setup, h_fabric_teardown),
	};

	h_fabric_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
