/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_fabric_addr.c - the provider's two parsers of foreign bytes (lib/fabric/addr.c): an
 * endpoint name as fi_av_insert and fi_getinfo take it, and a handshake message as a peer
 * sends it. Neither may read past the input (ASan sees an exact-size copy); a name accepted
 * must format back to exactly the bytes parsed (one spelling per endpoint), and a handshake
 * accepted must encode back to the same bytes. Any violation aborts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fab_addr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy = malloc(size ? size : 1), buf[SL_FAB_ADDR_STRLEN];
	struct sl_fab_addr a;
	struct sl_fab_hs m;

	if (copy == NULL)
		abort();
	memcpy(copy, data, size);
	if (sl_fab_addr_parse(copy, size, &a) == 0) {
		size_t n = sl_fab_addr_format(&a, buf, sizeof(buf));

		if (n > size || memcmp(buf, copy, n) != 0 || (n < size && copy[n] != '\0'))
			abort();
	}
	if (size >= SL_FAB_HS_BYTES && sl_fab_hs_decode((const uint8_t *)copy, &m) == 0) {
		uint8_t out[SL_FAB_HS_BYTES];

		sl_fab_hs_encode(&m, out);
		/* The name field's bytes after its NUL are padding: compare up to it. */
		if (memcmp(out, copy, 20) != 0 ||
		    strcmp((const char *)out + 20, (const char *)copy + 20) != 0)
			abort();
	}
	free(copy);
	return 0;
}
