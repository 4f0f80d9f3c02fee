/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests for lib/api/adopt.c against the fake daemon (h_daemon.c): an application's malloc'ed
 * pages adopted keep their address and bytes and are then the daemon's pages (what one side
 * writes the other reads, at the offset MR_REG names); giving them back restores private pages
 * with the same bytes; nested adoptions count; partial overlaps, read-only, shared, file-backed
 * and unmapped memory, and the context's own memory are refused; a registered range is not
 * given back; closing the context gives everything back.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "api_priv.h"
#include "h_daemon.h"

#define PAGE 4096u
#define BYTES (3 * PAGE + 100) /**< a buffer of four pages once rounded, bytes */

struct fx {
	struct h_daemon d;
	struct sl_ctx *ctx;
	uint8_t *page; /**< posix_memalign'ed, 5 pages */
	uint8_t *buf;  /**< page + 200: not page-aligned */
};

static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	f->ctx = h_daemon_start_ctx(&f->d, 4 << 20);
	assert_int_equal(posix_memalign((void **)&f->page, PAGE, 5 * PAGE), 0);
	for (unsigned i = 0; i < 5 * PAGE; i++)
		f->page[i] = (uint8_t)(i * 7 + 1);
	f->buf = f->page + 200;
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;

	sl_ctx_close(f->ctx);
	free(f->page);
	h_daemon_stop(&f->d);
	free(f);
	return 0;
}

static void
assert_pattern(const uint8_t *p, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		if (p[i] != (uint8_t)(i * 7 + 1))
			fail_msg("byte %zu is %u", i, p[i]);
}

static uint64_t
used_bytes(const struct sl_ctx *ctx)
{
	struct sl_api_heap_stats st;

	sl_api_heap_stats_get(ctx->heap, &st);
	return st.used_bytes;
}

static void
sl_mem_adopt__keeps_address_and_bytes_and_shares_them_with_the_daemon(void **state)
{
	struct fx *f = *state;
	uint8_t *daemon;
	struct sl_mr *mr;
	uint64_t off;

	assert_int_equal(sl_mem_adopt(f->ctx, f->buf, BYTES), 0);
	/* the whole pages round it: [page, page + 4 pages) */
	assert_non_null(f->ctx->adopted);
	assert_ptr_equal((void *)f->ctx->adopted->lo, f->page);
	assert_int_equal(f->ctx->adopted->bytes, 4 * PAGE);
	off = f->ctx->adopted->off;
	assert_int_equal(off % PAGE, 0);
	assert_int_equal(used_bytes(f->ctx), 4 * PAGE);
	assert_pattern(f->page, 0, 5 * PAGE); /* the fifth page was never touched */
	/* what the daemon maps at the offset is the application's buffer */
	daemon = f->d.cl[0].mem + off;
	assert_memory_equal(daemon, f->page, 4 * PAGE);
	daemon[300] = 0xAB;
	assert_int_equal(f->page[300], 0xAB);
	f->page[301] = 0xCD;
	assert_int_equal(daemon[301], 0xCD);
	/* registered by its own address; the daemon is told where it lies */
	mr = sl_mr_reg(f->ctx, f->buf, BYTES, SL_ACCESS_LOCAL_WRITE | SL_ACCESS_REMOTE_WRITE);
	assert_non_null(mr);
	assert_ptr_equal(sl_mr_addr(mr), f->buf);
	assert_int_equal(f->d.cl[0].mrs[0].va, (uint64_t)(uintptr_t)f->buf);
	assert_int_equal(f->d.cl[0].mrs[0].off, off + 200);
	assert_int_equal(f->d.cl[0].mrs[0].len, BYTES);
	/* not given back while registered */
	assert_int_equal(sl_mem_unadopt(f->ctx, f->buf, BYTES), -EBUSY);
	assert_int_equal(sl_mr_dereg(mr), 0);
	assert_int_equal(sl_mem_unadopt(f->ctx, f->buf, BYTES), 0);
	/* private again, same address, same bytes; the daemon's copy is no longer it */
	assert_null(f->ctx->adopted);
	assert_int_equal(used_bytes(f->ctx), 0);
	assert_int_equal(f->page[300], 0xAB);
	assert_int_equal(f->page[301], 0xCD);
	f->page[302] = 0xEF;
	assert_int_not_equal(daemon[302], 0xEF);
	f->page[300] = (uint8_t)(300 * 7 + 1);
	f->page[301] = (uint8_t)(301 * 7 + 1);
	f->page[302] = (uint8_t)(302 * 7 + 1);
	assert_pattern(f->page, 0, 5 * PAGE);
	assert_int_equal(sl_mem_unadopt(f->ctx, f->buf, BYTES), -ENOENT);
}

static void
sl_mem_adopt__counts_ranges_inside_and_refuses_partial_overlaps(void **state)
{
	struct fx *f = *state;

	assert_int_equal(sl_mem_adopt(f->ctx, f->page, 2 * PAGE), 0);
	/* another buffer on the same pages: counted, no second copy */
	assert_int_equal(sl_mem_adopt(f->ctx, f->page + PAGE + 10, 20), 0);
	assert_int_equal(f->ctx->adopted->refs, 2);
	assert_int_equal(used_bytes(f->ctx), 2 * PAGE);
	/* pages 1-2 overlap pages 0-1 in part */
	assert_int_equal(sl_mem_adopt(f->ctx, f->page + PAGE, 2 * PAGE), -EBUSY);
	/* a region inside the first adoption registers */
	struct sl_mr *mr = sl_mr_reg(f->ctx, f->page + 10, 100, SL_ACCESS_REMOTE_READ);

	assert_non_null(mr);
	/* one that runs past it does not */
	assert_null(sl_mr_reg(f->ctx, f->page + PAGE, 2 * PAGE, SL_ACCESS_REMOTE_READ));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(sl_mr_dereg(mr), 0);
	assert_int_equal(sl_mem_unadopt(f->ctx, f->page + PAGE + 10, 20), 0);
	assert_non_null(f->ctx->adopted); /* still held by the first */
	assert_int_equal(sl_mem_unadopt(f->ctx, f->page, 2 * PAGE), 0);
	assert_null(f->ctx->adopted);
	assert_pattern(f->page, 0, 5 * PAGE);
}

static void
sl_mem_adopt__refuses_what_is_not_private_anonymous_writable_memory(void **state)
{
	struct fx *f = *state;
	char path[] = "/tmp/sl_adopt_XXXXXX";
	int fd = mkstemp(path);
	uint8_t *ro = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *shared =
		mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	uint8_t *gone =
		mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *file;
	uint8_t stack[64];

	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(ftruncate(fd, PAGE), 0);
	file = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	assert_true(ro != MAP_FAILED && shared != MAP_FAILED && gone != MAP_FAILED &&
		    file != MAP_FAILED);
	munmap(gone, PAGE);
	assert_int_equal(sl_mem_adopt(f->ctx, ro, 10), -EINVAL);
	assert_int_equal(sl_mem_adopt(f->ctx, shared, 10), -EINVAL);
	assert_int_equal(sl_mem_adopt(f->ctx, file, 10), -EINVAL);
	assert_int_equal(sl_mem_adopt(f->ctx, stack, sizeof(stack)), -EINVAL);
	assert_int_equal(sl_mem_adopt(f->ctx, gone, 10), -EFAULT);
	assert_int_equal(sl_mem_adopt(f->ctx, f->ctx->mem, 10), -EINVAL); /* its own memory */
	assert_int_equal(sl_mem_adopt(f->ctx, f->buf, 0), -EINVAL);
	assert_int_equal(sl_mem_adopt(f->ctx, (void *)(UINTPTR_MAX - 10), 100), -EINVAL);
	assert_int_equal(sl_mem_adopt(NULL, f->buf, 10), -EINVAL);
	/* too large for the context's 4 MiB */
	uint8_t *big =
		mmap(NULL, 8u << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(big != MAP_FAILED);
	assert_int_equal(sl_mem_adopt(f->ctx, big, 8u << 20), -ENOMEM);
	assert_null(f->ctx->adopted);
	assert_int_equal(used_bytes(f->ctx), 0);
	/* memory neither the context's nor adopted does not register */
	assert_null(sl_mr_reg(f->ctx, f->buf, 10, SL_ACCESS_LOCAL_WRITE));
	assert_int_equal(errno, EINVAL);
	munmap(big, 8u << 20);
	munmap(ro, PAGE);
	munmap(shared, PAGE);
	munmap(file, PAGE);
	close(fd);
}

static void
sl_ctx_close__gives_adopted_pages_back(void **state)
{
	struct fx *f = *state;

	assert_int_equal(sl_mem_adopt(f->ctx, f->buf, BYTES), 0);
	f->page[0] = 0x5A;
	sl_ctx_close(f->ctx);
	f->ctx = NULL;
	assert_int_equal(f->page[0], 0x5A);
	f->page[0] = 1;
	assert_pattern(f->page, 0, 5 * PAGE);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			sl_mem_adopt__keeps_address_and_bytes_and_shares_them_with_the_daemon,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			sl_mem_adopt__counts_ranges_inside_and_refuses_partial_overlaps, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			sl_mem_adopt__refuses_what_is_not_private_anonymous_writable_memory, setup,
			teardown),
		cmocka_unit_test_setup_teardown(sl_ctx_close__gives_adopted_pages_back, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
