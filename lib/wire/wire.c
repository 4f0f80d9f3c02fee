/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wire.c - encode and decode the link header, filler / FC frames and control frames (format in
 * sl_wire.h and docs/wire-format.md).
 *
 * Both directions compute the CRC the same way: first the link header with its VCODE bits set
 * to zero (and, in extended mode, the 4-byte ID), then the covered part of the body. The
 * encoder stores CRC ^ (id mod 4096) in the VCODE bits; the decoder returns the CRC and leaves
 * the ID comparison to the caller (sl_wire_vcode_ok), because only the link knows which ID it
 * expects. All multi-byte fields are big-endian, written byte by byte (no alignment needed).
 */
#include "crc12.h"
#include "sl_common.h"
#include "sl_wire.h"

static const char *const reject_names[SL_WIRE_ERR__MAX] = {
	[SL_WIRE_OK] = "ok",           [SL_WIRE_ERR_SHORT] = "short",
	[SL_WIRE_ERR_SYN] = "syn",     [SL_WIRE_ERR_CTRL_META] = "ctrl_meta",
	[SL_WIRE_ERR_KEY] = "key",     [SL_WIRE_ERR_FC] = "fc_code",
	[SL_WIRE_ERR_EMPTY] = "empty", [SL_WIRE_ERR_LONG] = "long",
};

const char *
sl_wire_reject_name(enum sl_wire_reject r)
{
	return (unsigned)r < SL_WIRE_ERR__MAX ? reject_names[r] : "unknown";
}

/*
 * The CRC of a faithful-mode link header, indexed by SYN << 2 | META: with VCODE zeroed the two
 * bytes hold nothing else, so there are 16 (test_wire checks each against sl_crc12_bitwise).
 * One call less per frame each way.
 */
static const uint16_t faithful_hdr_crc[16] = {
	0x000, 0x455, 0x8aa, 0xcff, 0x17b, 0x52e, 0x9d1, 0xd84,
	0x2f6, 0x6a3, 0xa5c, 0xe09, 0x38d, 0x7d8, 0xb27, 0xf72,
};

/* CRC of the link header (VCODE zeroed) and the explicit ID, if any. */
static inline uint16_t
hdr_crc(const struct sl_wire_fmt *fmt, uint8_t syn, uint8_t meta, uint32_t id)
{
	uint8_t h[SL_WIRE_HDR_MAX];

	if (fmt->mode != SL_WIRE_MODE_EXTENDED)
		return faithful_hdr_crc[(syn << 2 | meta) & 0xfu];
	sl_put_be16(h, (uint16_t)(syn << 14 | meta << 12));
	sl_put_be32(h + SL_WIRE_HDR_LEN, id);
	return sl_crc12(0, h, sl_wire_hdr_len(fmt));
}

/* Write SYN/META/VCODE (and the ID) given the CRC of everything covered. */
static inline size_t
put_hdr(const struct sl_wire_fmt *fmt, uint8_t *out, uint8_t syn, uint8_t meta, uint32_t id,
	uint16_t crc)
{
	sl_put_be16(out, (uint16_t)(syn << 14 | meta << 12 | ((crc ^ id) & SL_CRC12_MASK)));
	if (fmt->mode == SL_WIRE_MODE_EXTENDED)
		sl_put_be32(out + SL_WIRE_HDR_LEN, id);
	return sl_wire_hdr_len(fmt);
}

size_t
sl_wire_encode_data(const struct sl_wire_fmt *fmt, uint8_t *hdr, uint8_t meta, uint32_t id,
		    const uint8_t *body, size_t body_len)
{
	uint16_t crc = hdr_crc(fmt, SL_WIRE_SYN_DATA, meta, id);

	crc = sl_crc12(crc, body, SL_MIN(body_len, (size_t)fmt->scope_bytes));
	return put_hdr(fmt, hdr, SL_WIRE_SYN_DATA, meta, id, crc);
}

size_t
sl_wire_encode_filler(const struct sl_wire_fmt *fmt, uint8_t *out, uint32_t id, uint8_t fc)
{
	size_t h = sl_wire_hdr_len(fmt);
	uint16_t crc = hdr_crc(fmt, SL_WIRE_SYN_DATA, SL_WIRE_META_FILLER, id);

	out[h] = fc;
	crc = sl_crc12(crc, out + h, SL_WIRE_FC_LEN);
	put_hdr(fmt, out, SL_WIRE_SYN_DATA, SL_WIRE_META_FILLER, id, crc);
	return h + SL_WIRE_FC_LEN;
}

static inline size_t
ctrl_body_len(const struct sl_wire_fmt *fmt)
{
	return fmt->mode == SL_WIRE_MODE_EXTENDED ? SL_WIRE_KEY_LEN + SL_WIRE_ARG_LEN
						  : SL_WIRE_KEY_LEN;
}

size_t
sl_wire_encode_ctrl(const struct sl_wire_fmt *fmt, uint8_t *out, uint32_t id, uint16_t key,
		    uint32_t arg)
{
	size_t h = sl_wire_hdr_len(fmt), b = ctrl_body_len(fmt);
	uint16_t crc = hdr_crc(fmt, SL_WIRE_SYN_CTRL, SL_WIRE_META_FILLER, id);

	sl_put_be16(out + h, key);
	if (fmt->mode == SL_WIRE_MODE_EXTENDED)
		sl_put_be32(out + h + SL_WIRE_KEY_LEN, arg);
	crc = sl_crc12(crc, out + h, b);
	put_hdr(fmt, out, SL_WIRE_SYN_CTRL, SL_WIRE_META_FILLER, id, crc);
	return h + b;
}

static inline bool
key_known(uint16_t key)
{
	return key == SL_WIRE_KEY_IDLE || key == SL_WIRE_KEY_PAUSE_REQ ||
	       key == SL_WIRE_KEY_RETRANS_REQ || key == SL_WIRE_KEY_LEAVE ||
	       key == SL_WIRE_KEY_LEAVE_ACK;
}

enum sl_wire_reject
sl_wire_decode(const struct sl_wire_fmt *fmt, const uint8_t *buf, size_t len,
	       struct sl_wire_frame *f)
{
	size_t h = sl_wire_hdr_len(fmt), covered;
	uint16_t w;

	if (len < h)
		return SL_WIRE_ERR_SHORT;
	if (len > UINT16_MAX)
		return SL_WIRE_ERR_LONG;
	w = sl_get_be16(buf);
	f->syn = (uint8_t)(w >> 14);
	f->meta = (uint8_t)((w >> 12) & 3u);
	f->vcode = w & SL_CRC12_MASK;
	f->id = fmt->mode == SL_WIRE_MODE_EXTENDED ? sl_get_be32(buf + SL_WIRE_HDR_LEN) : 0;
	f->body_off = (uint16_t)h;
	f->body_len = (uint16_t)(len - h);
	f->key = 0;
	f->arg = 0;
	f->fc = 0;
	if (f->syn != SL_WIRE_SYN_DATA && f->syn != SL_WIRE_SYN_CTRL)
		return SL_WIRE_ERR_SYN;
	if (f->syn == SL_WIRE_SYN_CTRL) {
		covered = ctrl_body_len(fmt);
		if (f->meta != SL_WIRE_META_FILLER)
			return SL_WIRE_ERR_CTRL_META;
		if (f->body_len < covered)
			return SL_WIRE_ERR_SHORT;
		f->key = sl_get_be16(buf + h);
		if (fmt->mode == SL_WIRE_MODE_EXTENDED)
			f->arg = sl_get_be32(buf + h + SL_WIRE_KEY_LEN);
		if (!key_known(f->key))
			return SL_WIRE_ERR_KEY;
	} else if (f->meta == SL_WIRE_META_FILLER) {
		covered = SL_WIRE_FC_LEN;
		if (f->body_len < covered)
			return SL_WIRE_ERR_SHORT;
		f->fc = buf[h];
		if (f->fc > SL_WIRE_FC_RESUME)
			return SL_WIRE_ERR_FC;
	} else {
		if (f->body_len == 0)
			return SL_WIRE_ERR_EMPTY;
		covered = SL_MIN((size_t)f->body_len, (size_t)fmt->scope_bytes);
	}
	f->crc = sl_crc12(hdr_crc(fmt, f->syn, f->meta, f->id), buf + h, covered);
	return SL_WIRE_OK;
}
