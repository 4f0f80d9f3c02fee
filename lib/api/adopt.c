/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * adopt.c - an application's own pages moved into the context's shared memory file without
 * moving its buffer (sl_mem_adopt, sl_mem_unadopt in sluice.h; docs/api.md, "Adopted memory").
 *
 * Why. The daemon reads and writes one file, the memfd it mapped at HELLO, and nothing else: it
 * must never touch a page the application could remove under it. An application that receives
 * RMA into its own buffer (malloc'ed, mmap'ed) needs the peer's WRITE to land at that buffer's
 * address, and a bounce buffer cannot keep it current when a plain WRITE raises nothing at the
 * target. So the pages themselves change owner: the bytes under [lo, hi), the buffer rounded
 * out to whole pages, are copied into a page-aligned range of the file, and that range is then
 * mapped at lo in one system call, mremap(file range, 0, n, MREMAP_MAYMOVE | MREMAP_FIXED, lo):
 * an old_size of 0 makes a second mapping of the same pages of a shared mapping (mremap(2)),
 * and MREMAP_FIXED replaces what was at lo atomically. The buffer keeps its address and bytes,
 * and now lives in the file at a known offset, which MR_REG gives the daemon beside the
 * address (sl_chan_abi.h). Giving back is the mirror image: fresh private anonymous pages, the
 * bytes copied out of the file through the context's own mapping, one mremap over lo, and the
 * file range freed.
 *
 * What is accepted. Adoption reads /proc/self/maps once (registration time, never a data path)
 * and takes only pages mapped private, anonymous and read-write ("rw-p", no file, not the
 * stack): a read-only page, a file's page or a shared one would change meaning if swapped for
 * a page of our file. Release looks again and remaps only if the range is still the file's
 * pages at the adopted offset (an application that unmapped or remapped it meanwhile gets its
 * address space left alone; the file range is freed either way).
 *
 * Overlap. Two buffers often share a page (two small mallocs). An adoption whose pages lie
 * inside an adopted range counts once more on it (refs) and is undone by its own unadopt; one
 * that overlaps an adopted range only in part is refused (EBUSY), since one region must be one
 * contiguous range of the file. A range holds the regions registered in it (mrs) and is not
 * given back while any is.
 *
 * Caveats the header states: a write by another thread to the pages between the copy and the
 * swap is lost; after fork the child shares adopted pages with the parent (MAP_SHARED).
 *
 * Cost: one memcpy of the range each way, and page faults, which dominate: the pages on each
 * side of a copy are made and mapped beforehand in one call (MADV_POPULATE_WRITE,
 * MAP_POPULATE) rather than a fault at a time, which takes each copy to about half its time
 * (tests/bench/api/bench_adopt_faults.c runs both ways interleaved; docs/libfabric.md has the
 * figures). The application's first touch of each adopted or returned page still faults once.
 * Units: bytes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>

#include "api_priv.h"

#define ADOPT_PAGE SL_API_HEAP_PAGE_ALIGN /**< the unit of adoption, bytes */

/* One mapping of /proc/self/maps. */
struct vma {
	uintptr_t start, end;
	char perms[5];
	uint64_t off; /**< into its file, bytes */
	dev_t dev;
	uint64_t ino;
	char path[16]; /**< its first characters ("" anonymous, "[heap]", ...) */
};

typedef bool (*vma_ok_fn)(const struct vma *v, uintptr_t at, const void *arg);

static bool
vma_parse(const char *line, struct vma *v)
{
	unsigned long s, e, off, ino;
	unsigned maj, mn;
	int n = 0;

	if (sscanf(line, "%lx-%lx %4s %lx %x:%x %lu %n", &s, &e, v->perms, &off, &maj, &mn, &ino,
		   &n) < 7)
		return false;
	v->start = s;
	v->end = e;
	v->off = off;
	v->dev = makedev(maj, mn);
	v->ino = ino;
	snprintf(v->path, sizeof(v->path), "%s", line + n);
	v->path[strcspn(v->path, "\n")] = '\0';
	return true;
}

/*
 * Whether every byte of [lo, hi) is mapped by mappings ok accepts (called with the mapping and
 * the lowest address of the range it covers): 0, -EFAULT (a hole), -EINVAL (a mapping refused).
 */
static int
maps_cover(uintptr_t lo, uintptr_t hi, vma_ok_fn ok, const void *arg)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	uintptr_t at = lo;
	struct vma v;
	int rc = -EFAULT;

	if (!f)
		return -errno;
	while (at < hi && fgets(line, sizeof(line), f)) {
		if (!strchr(line, '\n') || !vma_parse(line, &v) || v.end <= at)
			continue;
		if (v.start > at)
			break; /* a hole at at */
		if (!ok(&v, at, arg)) {
			rc = -EINVAL;
			break;
		}
		at = v.end;
	}
	fclose(f);
	return at >= hi ? 0 : rc;
}

static bool
private_anon_rw(const struct vma *v, uintptr_t at, const void *arg)
{
	(void)at, (void)arg;
	return !strcmp(v->perms, "rw-p") && v->ino == 0 &&
	       (!v->path[0] || !strcmp(v->path, "[heap]"));
}

/* Still the file's pages at a's offset. */
static bool
ours(const struct vma *v, uintptr_t at, const void *arg)
{
	const struct sl_api_adopt *a = arg;

	return !strcmp(v->perms, "rw-s") && v->dev == a->ctx->mem_dev &&
	       v->ino == a->ctx->mem_ino && v->off + (at - v->start) == a->off + (at - a->lo);
}

/*
 * n bytes of whole pages from the application's src to dst. The pages hold more than the
 * buffer (its malloc neighbours and headers), on purpose; under AddressSanitizer that is a read
 * of redzones it would report, so that build copies word by word, unchecked (volatile: not
 * turned back into a memcpy call, which it intercepts).
 */
#if defined(__SANITIZE_ADDRESS__)
__attribute__((no_sanitize_address)) static void
copy_pages(void *dst, const void *src, size_t n)
{
	const volatile uint64_t *s = src;
	uint64_t *d = dst;

	for (size_t i = 0; i < n / sizeof(*d); i++)
		d[i] = s[i];
}
#else
static void
copy_pages(void *dst, const void *src, size_t n)
{
	memcpy(dst, src, n);
}
#endif

/* [*lo, *hi): [addr, addr + len) rounded out to pages; false if it wraps or is empty. */
static bool
page_range(const void *addr, size_t len, uintptr_t *lo, uintptr_t *hi)
{
	uintptr_t a = (uintptr_t)addr;

	if (!len || a > UINTPTR_MAX - len - ADOPT_PAGE)
		return false;
	*lo = a & ~(uintptr_t)(ADOPT_PAGE - 1);
	*hi = (a + len + ADOPT_PAGE - 1) & ~(uintptr_t)(ADOPT_PAGE - 1);
	return true;
}

/* The adoption whose pages hold [lo, hi), or NULL; *partial: one overlaps it only in part. */
static struct sl_api_adopt *
adopt_at(const struct sl_ctx *ctx, uintptr_t lo, uintptr_t hi, bool *partial)
{
	*partial = false;
	for (struct sl_api_adopt *a = ctx->adopted; a; a = a->next) {
		if (lo >= a->lo && hi <= a->lo + a->bytes)
			return a;
		if (lo < a->lo + a->bytes && a->lo < hi)
			*partial = true;
	}
	return NULL;
}

struct sl_api_adopt *
sl_api_adopt_find(const struct sl_ctx *ctx, const void *addr, size_t len)
{
	uintptr_t lo, hi;
	bool partial;

	return page_range(addr, len, &lo, &hi) ? adopt_at(ctx, lo, hi, &partial) : NULL;
}

SL_API_EXPORT int
sl_mem_adopt(struct sl_ctx *ctx, void *addr, size_t len)
{
	struct sl_api_adopt *a;
	uintptr_t lo, hi;
	bool partial;
	uint64_t off;
	int rc;

	if (!ctx || !page_range(addr, len, &lo, &hi))
		return -EINVAL;
	a = adopt_at(ctx, lo, hi, &partial);
	if (a) {
		a->refs++;
		return 0;
	}
	if (partial)
		return -EBUSY;
	rc = maps_cover(lo, hi, private_anon_rw, NULL);
	if (rc)
		return rc;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	off = sl_api_heap_alloc(ctx->heap, hi - lo);
	if (off == SL_API_HEAP_NONE) {
		free(a);
		return -ENOMEM;
	}
	/* The file's pages made and mapped in one call, not a fault each as the copy touches
	 * them; a kernel without MADV_POPULATE_WRITE faults them instead. */
	madvise(ctx->mem + off, hi - lo, MADV_POPULATE_WRITE);
	copy_pages(ctx->mem + off, (void *)lo, hi - lo);
	if (mremap(ctx->mem + off, 0, hi - lo, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)lo) ==
	    MAP_FAILED) {
		rc = -errno;
		sl_api_heap_release(ctx->heap, off);
		free(a);
		return rc;
	}
	*a = (struct sl_api_adopt){.ctx = ctx,
				   .next = ctx->adopted,
				   .lo = lo,
				   .bytes = hi - lo,
				   .off = off,
				   .refs = 1};
	ctx->adopted = a;
	return 0;
}

/* Put private anonymous pages with a's bytes back at its address (if the file's pages are still
 * there), free its file range, forget it. 0 or -errno (then nothing changed). */
static int
give_back(struct sl_api_adopt *a)
{
	struct sl_ctx *ctx = a->ctx;
	struct sl_api_adopt **pp;
	void *tmp;

	if (maps_cover(a->lo, a->lo + a->bytes, ours, a) == 0) {
		tmp = mmap(NULL, a->bytes, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (tmp == MAP_FAILED)
			return -errno;
		memcpy(tmp, ctx->mem + a->off, a->bytes);
		if (mremap(tmp, a->bytes, a->bytes, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)a->lo) ==
		    MAP_FAILED) {
			int rc = -errno;

			munmap(tmp, a->bytes);
			return rc;
		}
	}
	sl_api_heap_release(ctx->heap, a->off);
	for (pp = &ctx->adopted; *pp != a; pp = &(*pp)->next)
		;
	*pp = a->next;
	free(a);
	return 0;
}

SL_API_EXPORT int
sl_mem_unadopt(struct sl_ctx *ctx, void *addr, size_t len)
{
	struct sl_api_adopt *a = ctx ? sl_api_adopt_find(ctx, addr, len) : NULL;

	if (!a)
		return ctx ? -ENOENT : -EINVAL;
	if (a->refs > 1) {
		a->refs--;
		return 0;
	}
	if (a->mrs)
		return -EBUSY;
	return give_back(a);
}

void
sl_api_adopt_close(struct sl_ctx *ctx)
{
	while (ctx->adopted) {
		struct sl_api_adopt *a = ctx->adopted;

		if (give_back(a)) {
			/* The pages stay the file's (the mapping keeps it): only the record goes.
			 */
			ctx->adopted = a->next;
			free(a);
		}
	}
}
