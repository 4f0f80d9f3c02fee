/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for lib/api/ctx.c against the fake daemon (h_daemon.c): open and close, the HELLO's
 * memory (a sealed memfd on tmpfs, mapped where the daemon reads it), version mismatch, refusals, a
 * missing daemon, a daemon gone (noticed by sl_ctx_status, woken on sl_ctx_fd), the allocator
 * through the context, and close destroying what the context holds.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/magic.h>

#include <cmocka.h>

#include "h_daemon.h"
#include "api_priv.h"

static int
setup(void **state)
{
	struct h_daemon *d = malloc(sizeof(*d));

	h_daemon_start(d, NULL);
	*state = d;
	return 0;
}

static int
teardown(void **state)
{
	h_daemon_stop(*state);
	free(*state);
	return 0;
}

static void
ctx_open__hello_maps_the_sealed_memory(void **state)
{
	struct h_daemon *d = *state;
	struct sl_ctx *ctx = sl_ctx_open(d->path, &(struct sl_ctx_attr){.mem_bytes = 1000000});
	uint8_t *p;

	assert_non_null(ctx);
	assert_string_equal(sl_ctx_host(ctx), "fake-host");
	assert_int_equal(atomic_load(&d->hellos), 1);
	assert_int_equal(d->cl[0].mem_bytes, 1003520); /* rounded up to pages */
	assert_int_equal(d->cl[0].base_va, (uint64_t)(uintptr_t)ctx->mem);
	assert_true(atomic_load(&d->seals) & F_SEAL_SHRINK);
	/* what sluiced's HELLO accepts: tmpfs, not hugetlbfs (sl_chan_srv_mem_check) */
	assert_int_equal(atomic_load(&d->fs_type), TMPFS_MAGIC);
	/* one memory: what the application writes, the daemon reads */
	p = sl_mem_alloc(ctx, 100);
	assert_non_null(p);
	memcpy(p, "sluice", 7);
	assert_string_equal((char *)d->cl[0].mem + (p - ctx->mem), "sluice");
	sl_ctx_close(ctx);
	assert_true(h_daemon_wait_no_client(d, 2000));
}

static void
ctx_open__default_path_from_the_environment(void **state)
{
	struct h_daemon *d = *state;
	struct sl_ctx *ctx;

	setenv("SLUICE_SOCKET", d->path, 1);
	ctx = sl_ctx_open(NULL, NULL);
	unsetenv("SLUICE_SOCKET");
	assert_non_null(ctx);
	assert_int_equal(d->cl[0].mem_bytes, SL_MEM_DEFAULT_BYTES);
	sl_ctx_close(ctx);
}

static void
ctx_open__version_mismatch_is_eproto(void **state)
{
	struct h_daemon *d = *state;

	d->version = SL_CHAN_VERSION + 1;
	errno = 0;
	assert_null(sl_ctx_open(d->path, NULL));
	assert_int_equal(errno, EPROTO);
	assert_true(h_daemon_wait_no_client(d, 2000));
}

static void
ctx_open__refusal_is_the_daemons_errno(void **state)
{
	struct h_daemon *d = *state;

	d->refuse[SL_CHAN_HELLO] = -EMFILE;
	errno = 0;
	assert_null(sl_ctx_open(d->path, NULL));
	assert_int_equal(errno, EMFILE);
}

/*
 * The daemon refuses a connection over its limits or outside its allow lists before the HELLO
 * (srv.c answers with seq 0 and hangs up): the application sees that errno, whether its HELLO
 * was sent before the hang-up or failed on it, never ECONNRESET.
 */
static void
ctx_open__refusal_at_connect_is_the_daemons_errno(void **state)
{
	struct h_daemon *d = *state;
	static const int32_t refusals[] = {-EMFILE, -EACCES};

	for (unsigned i = 0; i < 2 * 2; i++) {
		d->refuse_connect = refusals[i % 2];
		errno = 0;
		assert_null(sl_ctx_open(d->path, NULL));
		assert_int_equal(errno, -refusals[i % 2]);
	}
	d->refuse_connect = 0;
}

static void
ctx_open__no_daemon_is_enoent(void **state)
{
	struct h_daemon *d = *state;
	char path[160];

	snprintf(path, sizeof(path), "%s/nobody.sock", d->dir);
	errno = 0;
	assert_null(sl_ctx_open(path, NULL));
	assert_int_equal(errno, ENOENT);
	errno = 0;
	assert_null(sl_ctx_open(d->path, &(struct sl_ctx_attr){.mem_bytes = SL_CHAN_MEM_MAX + 1}));
	assert_int_equal(errno, EINVAL);
}

static void
mem_alloc__zeroed_inside_and_freed_for_reuse(void **state)
{
	struct h_daemon *d = *state;
	struct sl_ctx *ctx = sl_ctx_open(d->path, &(struct sl_ctx_attr){.mem_bytes = 1 << 20});
	uint8_t *a, *b, local[64];

	assert_non_null(ctx);
	errno = 0;
	assert_null(sl_mem_alloc(ctx, 0));
	assert_int_equal(errno, EINVAL);
	a = sl_mem_alloc(ctx, 8192);
	assert_non_null(a);
	assert_true(a >= ctx->mem && a + 8192 <= ctx->mem + ctx->mem_bytes);
	assert_int_equal((uintptr_t)a % 4096, 0);
	memset(a, 0xee, 8192);
	sl_mem_free(ctx, local);  /* not from it: ignored */
	sl_mem_free(ctx, a + 64); /* inside a block: ignored */
	sl_mem_free(ctx, NULL);
	assert_ptr_not_equal(sl_mem_alloc(ctx, 8192), a);
	sl_mem_free(ctx, a);
	b = sl_mem_alloc(ctx, 8192);
	assert_ptr_equal(b, a);
	for (int i = 0; i < 8192; i++)
		assert_int_equal(b[i], 0);
	errno = 0;
	assert_null(sl_mem_alloc(ctx, 2 << 20));
	assert_int_equal(errno, ENOMEM);
	sl_ctx_close(ctx);
}

static void
ctx_close__destroys_qps_cqs_and_mrs(void **state)
{
	struct h_daemon *d = *state;
	struct sl_ctx *ctx = sl_ctx_open(d->path, &(struct sl_ctx_attr){.mem_bytes = 1 << 20});
	void *buf = sl_mem_alloc(ctx, 4096);
	struct sl_cq *cq = sl_cq_create(ctx, 16);

	assert_non_null(sl_mr_reg(ctx, buf, 4096, SL_ACCESS_LOCAL_WRITE));
	assert_non_null(sl_mr_reg(ctx, buf, 64, 0));
	assert_non_null(sl_qp_create(ctx, &(struct sl_qp_attr){.send_cq = cq, .recv_cq = cq}));
	sl_ctx_close(ctx);
	assert_true(h_daemon_wait_no_client(d, 2000));
	assert_int_equal(atomic_load(&d->requests[SL_CHAN_QP_DESTROY]), 1);
	assert_int_equal(atomic_load(&d->requests[SL_CHAN_CQ_DESTROY]), 1);
	assert_int_equal(atomic_load(&d->requests[SL_CHAN_MR_DEREG]), 2);
}

static void
ctx_call__a_daemon_gone_breaks_the_channel(void **state)
{
	struct h_daemon *d = *state;
	struct sl_ctx *ctx = sl_ctx_open(d->path, &(struct sl_ctx_attr){.mem_bytes = 1 << 20});
	void *buf = sl_mem_alloc(ctx, 4096);

	assert_non_null(ctx);
	h_daemon_stop(d); /* hangs up on the client */
	errno = 0;
	assert_null(sl_mr_reg(ctx, buf, 4096, 0));
	assert_int_equal(errno, ECONNRESET);
	errno = 0;
	assert_null(sl_cq_create(ctx, 4));
	assert_int_equal(errno, ECONNRESET);
	sl_ctx_close(ctx);
	h_daemon_start(d, NULL); /* for teardown */
}

static void
ctx_status__a_daemon_gone_is_econnreset_without_a_request(void **state)
{
	struct h_daemon *d = *state;
	struct sl_ctx *ctx = sl_ctx_open(d->path, &(struct sl_ctx_attr){.mem_bytes = 1 << 20});
	struct pollfd p;

	assert_non_null(ctx);
	assert_int_equal(sl_ctx_status(ctx), 0);
	p = (struct pollfd){.fd = sl_ctx_fd(ctx), .events = 0};
	assert_int_equal(poll(&p, 1, 0), 0); /* nothing to wake a waiter while it is there */
	h_daemon_stop(d);                    /* hangs up on the client */
	p = (struct pollfd){.fd = sl_ctx_fd(ctx), .events = 0};
	assert_int_equal(poll(&p, 1, 1000), 1);
	assert_true(p.revents & POLLHUP);
	assert_int_equal(sl_ctx_status(ctx), -ECONNRESET);
	/* the channel is broken: requests fail with it at once */
	errno = 0;
	assert_null(sl_cq_create(ctx, 4));
	assert_int_equal(errno, ECONNRESET);
	sl_ctx_close(ctx);
	h_daemon_start(d, NULL); /* for teardown */
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(ctx_open__hello_maps_the_sealed_memory, setup,
						teardown),
		cmocka_unit_test_setup_teardown(ctx_open__default_path_from_the_environment, setup,
						teardown),
		cmocka_unit_test_setup_teardown(ctx_open__version_mismatch_is_eproto, setup,
						teardown),
		cmocka_unit_test_setup_teardown(ctx_open__refusal_is_the_daemons_errno, setup,
						teardown),
		cmocka_unit_test_setup_teardown(ctx_open__refusal_at_connect_is_the_daemons_errno,
						setup, teardown),
		cmocka_unit_test_setup_teardown(ctx_open__no_daemon_is_enoent, setup, teardown),
		cmocka_unit_test_setup_teardown(mem_alloc__zeroed_inside_and_freed_for_reuse, setup,
						teardown),
		cmocka_unit_test_setup_teardown(ctx_close__destroys_qps_cqs_and_mrs, setup,
						teardown),
		cmocka_unit_test_setup_teardown(ctx_call__a_daemon_gone_breaks_the_channel, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			ctx_status__a_daemon_gone_is_econnreset_without_a_request, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
