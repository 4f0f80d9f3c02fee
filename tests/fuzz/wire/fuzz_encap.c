/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target for sl_encap_read() in both IP families (the first input byte picks one, the rest
 * is the frame after the EtherType), and for sl_arp_read() on the same bytes. Besides memory
 * safety it checks that an accepted frame's link frame lies inside the input, and that headers
 * written anew from what the decoder returned (length, source port, ECN) decode to the same
 * result: encoder and decoder agree on every field they share. An ARP frame read is written
 * back byte for byte.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sl_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The addresses of the seeds in tests/fuzz/corpus/wire-encap: 10.0.0.2 -> 10.0.0.1, fd00::2 ->
 * fd00::1, port 4793; the receiving end's view. */
static struct sl_encap
receiver(enum sl_encap_kind kind)
{
	struct sl_encap e = {.kind = kind, .udp_port = 4793};

	if (kind == SL_ENCAP_UDP4) {
		memcpy(e.local_ip, (const uint8_t[]){10, 0, 0, 1}, 4);
		memcpy(e.peer_ip, (const uint8_t[]){10, 0, 0, 2}, 4);
	} else {
		e.local_ip[0] = e.peer_ip[0] = 0xfd;
		e.local_ip[15] = 1;
		e.peer_ip[15] = 2;
	}
	return e;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sl_encap e, sender;
	struct sl_encap_rx rx, again;
	uint8_t buf[SL_ENCAP_HDR_MAX + 2048];
	struct sl_arp arp;

	if (size < 1)
		return 0;
	e = receiver(data[0] & 1 ? SL_ENCAP_UDP6 : SL_ENCAP_UDP4);
	data++, size--;
	if (sl_arp_read(data, size, &arp) &&
	    (sl_arp_write(buf, &arp) != SL_ARP_LEN || memcmp(buf, data, SL_ARP_LEN) != 0))
		abort();
	if (sl_encap_read(&e, sl_encap_ethertype(&e), data, size, &rx) != SL_ENCAP_OK)
		return 0;
	if ((size_t)rx.link_off + rx.link_len > size || rx.link_off != sl_encap_hdr_len(&e))
		abort();
	if (rx.link_len > sizeof(buf) - SL_ENCAP_HDR_MAX)
		return 0;
	sender = e;
	memcpy(sender.local_ip, e.peer_ip, 16);
	memcpy(sender.peer_ip, e.local_ip, 16);
	sl_encap_write(&sender, buf, rx.link_len, rx.src_port, rx.ecn);
	memcpy(buf + rx.link_off, data + rx.link_off, rx.link_len);
	if (sl_encap_read(&e, sl_encap_ethertype(&e), buf, rx.link_off + rx.link_len, &again) !=
		    SL_ENCAP_OK ||
	    memcmp(&again, &rx, sizeof(rx)) != 0)
		abort();
	return 0;
}
