/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * heap.h - libsluice's allocator over a context's shared memory (heap.c), private to
 * lib/api. It hands out offsets into [0, bytes); its bookkeeping lives in private memory, never
 * in the shared memory it manages, so neither a stray write by the application nor the daemon
 * can corrupt it.
 *
 * Units: bytes.
 */
#ifndef API_HEAP_H
#define API_HEAP_H

#include <stdbool.h>
#include <stdint.h>

#define SL_API_HEAP_ALIGN 64u        /**< every block's alignment, bytes */
#define SL_API_HEAP_PAGE_ALIGN 4096u /**< the alignment of blocks this large and larger */
#define SL_API_HEAP_NONE UINT64_MAX  /**< "no offset" */

struct sl_api_heap;

/* A heap over [0, bytes) (bytes a multiple of 4096, at least 4096). NULL and errno. */
struct sl_api_heap *sl_api_heap_create(uint64_t bytes);
void sl_api_heap_free(struct sl_api_heap *h);

/* The offset of bytes (> 0) aligned as sluice.h's sl_mem_alloc says; SL_API_HEAP_NONE if full. */
uint64_t sl_api_heap_alloc(struct sl_api_heap *h, uint64_t bytes);

/* Give back the block at off; false (and nothing changes) if no block was allocated there. */
bool sl_api_heap_release(struct sl_api_heap *h, uint64_t off);

/* What the heap holds now, for tests and checks. */
struct sl_api_heap_stats {
	uint64_t used_bytes; /**< in allocated blocks (rounded sizes) */
	uint64_t free_bytes; /**< in free blocks */
	uint64_t used_blocks;
	uint64_t free_blocks; /**< after coalescing: never two adjacent */
};

void sl_api_heap_stats_get(const struct sl_api_heap *h, struct sl_api_heap_stats *st);

#endif /* API_HEAP_H */
