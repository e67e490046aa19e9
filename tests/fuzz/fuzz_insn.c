// SPDX-License-Identifier: BSD-2-Clause
/*
 * vmm/emul/insn.c, the decoder behind MMIO emulation (vmm/emul/mmio.c), two ways
 * per input:
 *
 *  - raw: the bytes after a mode byte and a length byte are decoded as
 *    they come, from a buffer of exactly that length (ASan: never read
 *    past the bytes given); a decode must be at most 15 bytes, need
 *    exactly its length (the same bytes cut to len decode the same, cut
 *    to len - 1 fail), and name sizes and registers that exist; a store
 *    writes only the bytes its size says, a load changes only the bytes
 *    of the register its width says (SDM "General-Purpose Registers in
 *    64-Bit Mode");
 *  - encode: the bytes choose one of the forms the decoder claims (MOV
 *    88/89/8A/8B/A0-A3/C6/C7, MOVZX 0F B6/B7, MOVS/STOS/LODS) with
 *    prefixes, REX, ModRM, SIB, displacement and immediate; it is
 *    encoded here from the SDM's tables and decode(encode(x)) must give
 *    back x (or "longer than 15 bytes" when the encoding is).
 */
#include <stdlib.h>

#include "tests/fuzz/fuzz.h"
#include "vmm/emul/insn.h"

static bool same(const struct mmio_insn *a, const struct mmio_insn *b)
{
	return a->len == b->len && a->size == b->size && a->reg_size == b->reg_size &&
	       a->write == b->write && a->has_imm == b->has_imm && a->imm == b->imm &&
	       a->reg == b->reg && a->high8 == b->high8 && a->zero_extend == b->zero_extend &&
	       a->str == b->str && a->rep == b->rep && a->addr_size == b->addr_size;
}

static uint64_t low_mask(unsigned bytes)
{
	return bytes >= 8 ? ~0ull : (1ull << (8 * bytes)) - 1;
}

static bool valid_size(unsigned s)
{
	return s == 1 || s == 2 || s == 4 || s == 8;
}

/* What a decoded instruction may say at all. */
static void check_fields(const struct mmio_insn *in, size_t avail)
{
	FUZZ_CHECK(in->len >= 1 && in->len <= INSN_MAX_LEN && in->len <= avail);
	FUZZ_CHECK(valid_size(in->size) && valid_size(in->reg_size));
	FUZZ_CHECK(in->reg_size >= in->size);
	FUZZ_CHECK(!in->zero_extend || in->reg_size >= 2);    /* MOVZX r16, r/m16 exists */
	FUZZ_CHECK(in->addr_size == 4 || in->addr_size == 8);
	if (in->has_imm) {
		FUZZ_CHECK(in->reg == -1 && in->write && in->str == INSN_STR_NONE);
		FUZZ_CHECK(in->size == 8 || !(in->imm & ~low_mask(in->size)));
	} else if (in->high8) {
		FUZZ_CHECK(in->reg >= 0 && in->reg <= 3 && in->size == 1);
	} else {
		FUZZ_CHECK(in->reg >= 0 && in->reg <= 15);
	}
	if (in->str != INSN_STR_NONE)
		FUZZ_CHECK(in->reg == 0 && !in->has_imm);
	FUZZ_CHECK(!in->rep || in->str != INSN_STR_NONE);
}

/* A store puts exactly in->size bytes on the bus; a load changes only
 * what its destination width says. */
static void check_values(const struct mmio_insn *in, uint64_t gpr, uint64_t val)
{
	uint64_t m = low_mask(in->size), st = insn_store_value(in, gpr), nv;
	unsigned width = in->zero_extend ? in->reg_size : in->size;

	FUZZ_CHECK(!(st & ~m));
	if (in->has_imm)
		FUZZ_CHECK(st == (in->imm & m));
	else if (in->high8)
		FUZZ_CHECK(st == ((gpr >> 8) & 0xff));
	else
		FUZZ_CHECK(st == (gpr & m));
	nv = insn_load_value(in, gpr, val);
	if (in->high8) {
		FUZZ_CHECK(nv == ((gpr & ~0xff00ull) | (val & 0xff) << 8));
		return;
	}
	FUZZ_CHECK((nv & m) == (val & m));                     /* the bytes loaded */
	FUZZ_CHECK(!((nv & low_mask(width)) & ~m));             /* MOVZX: zeros above */
	if (width == 4)
		FUZZ_CHECK(nv >> 32 == 0);                      /* 32-bit: zero-extended */
	else if (width < 4)
		FUZZ_CHECK((nv & ~low_mask(width)) == (gpr & ~low_mask(width)));
}

static int decode_exact(const uint8_t *code, size_t n, enum insn_mode mode,
			struct mmio_insn *out, const char **why)
{
	/* A heap copy of exactly n bytes: one byte more read is an ASan report. */
	uint8_t *buf = malloc(n ? n : 1);
	int r;

	memcpy(buf, code, n);
	r = insn_decode_mmio(buf, n, mode, out, why);
	free(buf);
	return r;
}

static void fuzz_raw(const uint8_t *data, size_t size)
{
	enum insn_mode mode;
	struct mmio_insn in, again;
	const char *why = NULL;
	size_t avail;

	if (size < 2)
		return;
	mode = (enum insn_mode)(data[0] % 3);
	avail = MIN((size_t)data[1], size - 2);
	if (decode_exact(data + 2, avail, mode, &in, &why)) {
		FUZZ_CHECK(why && *why);
		return;
	}
	check_fields(&in, avail);
	check_values(&in, 0x8877665544332211ull, 0xf1e2d3c4b5a69788ull);
	check_values(&in, ~0ull, 0);
	/* It needed its len bytes and no more. */
	FUZZ_CHECK(decode_exact(data + 2, in.len, mode, &again, &why) == 0 && same(&in, &again));
	FUZZ_CHECK(decode_exact(data + 2, in.len - 1, mode, &again, &why) == -1);
}

/* --- the encoder: SDM Vol. 2, "Instruction Format" ------------------------ */

enum form {
	F_MOV_STORE8, F_MOV_STORE, F_MOV_LOAD8, F_MOV_LOAD, F_MOFFS, F_STRING,
	F_MOV_IMM8, F_MOV_IMM, F_MOVZX8, F_MOVZX16, F_NR,
};

struct enc {
	uint8_t b[32];
	unsigned n;
};

static void put(struct enc *e, uint64_t v, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++)
		e->b[e->n++] = (uint8_t)(v >> (8 * i));
}

/* ModRM (mod 0..2, a memory operand), then SIB and displacement as the
 * "32-Bit Addressing Forms" tables say. */
static void put_mem(struct enc *e, struct fuzz_in *in, unsigned reg)
{
	uint8_t modrm = fuzz_u8(in);
	unsigned mod = (modrm >> 6) % 3, rm = modrm & 7, disp = 0;

	put(e, mod << 6 | (reg & 7) << 3 | rm, 1);
	if (rm == 4) {
		uint8_t sib = fuzz_u8(in);

		put(e, sib, 1);
		if (mod == 0 && (sib & 7) == 5)
			disp = 4;
	}
	if (mod == 0 && rm == 5)
		disp = 4;
	else if (mod == 1)
		disp = 1;
	else if (mod == 2)
		disp = 4;
	put(e, fuzz_uint(in, disp), disp);
}

static void fuzz_encode(const uint8_t *data, size_t size)
{
	static const uint8_t harmless[] = { 0x26, 0x2e, 0x36, 0x3e, 0x64, 0x65, 0xf0 };
	static const uint8_t strings[] = { 0xa4, 0xa5, 0xaa, 0xab, 0xac, 0xad };
	struct fuzz_in in = { data, size };
	enum insn_mode mode = (enum insn_mode)(fuzz_u8(&in) % 3);
	enum form form = (enum form)(fuzz_u8(&in) % F_NR);
	uint8_t pfx = fuzz_u8(&in), extra = fuzz_u8(&in);
	bool opsize = pfx & 1, rex = mode == INSN_MODE_64 && (pfx & 2);
	bool rex_w = rex && (pfx & 4), rex_r = rex && (pfx & 8);
	bool adsize = mode == INSN_MODE_16 ? true : mode == INSN_MODE_32 ? false : pfx & 0x40;
	bool rep = form == F_STRING && (pfx & 0x80);
	unsigned opsz = rex_w ? 8 : mode == INSN_MODE_16 ? (opsize ? 4 : 2) : (opsize ? 2 : 4);
	struct mmio_insn want = { .reg = -1 }, got;
	struct enc e = { .n = 0 };
	const char *why = NULL;
	uint8_t op = 0, reg = 0;
	bool byte = false;

	for (unsigned i = 0; i < (extra & 3u); i++)
		put(&e, harmless[(extra >> 2) % ARRAY_SIZE(harmless)], 1);
	if (opsize)
		put(&e, 0x66, 1);
	if (adsize)
		put(&e, 0x67, 1);
	if (rep)
		put(&e, (extra & 0x80) ? 0xf2 : 0xf3, 1);
	if (rex)
		put(&e, 0x40 | (rex_w << 3) | (rex_r << 2) | (pfx & 0x30) >> 4, 1);

	want.addr_size = mode == INSN_MODE_64 && !adsize ? 8 : 4;
	switch (form) {
	case F_MOV_STORE8: case F_MOV_STORE: case F_MOV_LOAD8: case F_MOV_LOAD:
		op = (uint8_t)(0x88 + form);
		byte = !(op & 1);
		want.write = op <= 0x89;
		break;
	case F_MOFFS:
		op = (uint8_t)(0xa0 + (pfx >> 4) % 4);
		byte = !(op & 1);
		want.write = op >= 0xa2;
		want.reg = 0;
		break;
	case F_STRING:
		op = strings[(pfx >> 3) % ARRAY_SIZE(strings)];
		byte = !(op & 1);
		want.write = op == 0xaa || op == 0xab;
		want.str = op <= 0xa5 ? INSN_STR_MOVS : op <= 0xab ? INSN_STR_STOS : INSN_STR_LODS;
		want.rep = rep;
		want.reg = 0;
		break;
	case F_MOV_IMM8: case F_MOV_IMM:
		op = form == F_MOV_IMM8 ? 0xc6 : 0xc7;
		byte = op == 0xc6;
		want.write = true;
		want.has_imm = true;
		break;
	default:
		op = form == F_MOVZX8 ? 0xb6 : 0xb7;
		want.zero_extend = true;
		put(&e, 0x0f, 1);
		break;
	}
	put(&e, op, 1);
	want.reg_size = byte ? 1 : opsz;
	want.size = byte || op == 0xb6 ? 1 : op == 0xb7 ? 2 : opsz;
	if (form == F_MOFFS) {
		put(&e, fuzz_u64(&in), want.addr_size);
	} else if (form != F_STRING) {
		reg = want.has_imm ? 0 : fuzz_u8(&in) & 7;
		put_mem(&e, &in, reg);
		if (want.has_imm) {
			unsigned n = MIN(want.size, 4u);

			want.imm = fuzz_uint(&in, n);
			put(&e, want.imm, n);
			if (want.size == 8)
				want.imm = (uint64_t)(int64_t)(int32_t)(uint32_t)want.imm;
		} else if (want.reg_size == 1 && !rex && reg >= 4) {
			want.high8 = true;
			want.reg = reg - 4;
		} else {
			want.reg = reg | (rex_r ? 8 : 0);
		}
	}
	want.len = e.n;
	if (e.n > INSN_MAX_LEN) {
		FUZZ_CHECK(decode_exact(e.b, e.n, mode, &got, &why) == -1);
		FUZZ_CHECK(!strcmp(why, "longer than 15 bytes"));
		return;
	}
	FUZZ_CHECK(decode_exact(e.b, e.n, mode, &got, &why) == 0);
	FUZZ_CHECK(same(&got, &want));
	check_fields(&got, e.n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_raw(data, size);
	fuzz_encode(data, size);
	return 0;
}
