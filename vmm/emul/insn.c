// SPDX-License-Identifier: BSD-2-Clause
/*
 * MMIO instruction decoder: legacy prefixes, REX, one opcode from a small
 * table, then the memory operand (SDM Vol. 2, "Instruction Format";
 * "MOV—Move"; "MOVZX—Move with Zero-Extend"). The memory operand is only
 * measured, never computed: the EPT violation already gave its address.
 */
#include "vmm/emul/insn.h"

/* SDM Vol. 2, "Instruction Prefixes". */
enum insn_prefix {
	PFX_ES     = 0x26,
	PFX_CS     = 0x2e,
	PFX_SS     = 0x36,
	PFX_DS     = 0x3e,
	PFX_FS     = 0x64,
	PFX_GS     = 0x65,
	PFX_OPSIZE = 0x66,
	PFX_ADSIZE = 0x67,
	PFX_LOCK   = 0xf0,
	PFX_REPNE  = 0xf2,
	PFX_REP    = 0xf3,
};

#define OPCODE_ESCAPE   0x0fu           /* two-byte opcode map */

/* SDM Vol. 2, "REX Prefixes". */
#define REX_HI          BITS(7, 4)
#define   REX_HI_VALUE    4u
#define REX_W           BIT(3)
#define REX_R           BIT(2)

#define MODRM_MOD       BITS(7, 6)
#define   MOD_INDIRECT    0u
#define   MOD_DISP8       1u
#define   MOD_DISP32      2u
#define   MOD_REGISTER    3u
#define MODRM_REG       BITS(5, 3)
#define MODRM_RM        BITS(2, 0)
#define   RM_SIB          4u
#define   RM_DISP32       5u            /* with mod 0: disp32, RIP-relative in 64-bit mode */
#define SIB_BASE        BITS(2, 0)
#define   BASE_DISP32     5u            /* with mod 0: no base, disp32 */

/* What a supported opcode does: one row of "MOV—Move" or "MOVZX". */
#define OP_MOV          BIT(0)          /* supported at all */
#define OP_BYTE         BIT(1)          /* 8-bit operands */
#define OP_WORD         BIT(2)          /* 16-bit memory operand (MOVZX r, r/m16) */
#define OP_WRITE        BIT(3)          /* memory is the destination */
#define OP_IMM          BIT(4)          /* source is an immediate; ModRM.reg must be 0 */
#define OP_MOFFS        BIT(5)          /* accumulator and an address-size offset, no ModRM */
#define OP_ZX           BIT(6)          /* zero-extending load */
#define OP_STR          BIT(7)          /* string instruction, no ModRM */

static const uint8_t op_one_byte[256] = {
	[0x88] = OP_MOV | OP_BYTE | OP_WRITE,           /* MOV r/m8, r8 */
	[0x89] = OP_MOV | OP_WRITE,                     /* MOV r/m, r */
	[0x8a] = OP_MOV | OP_BYTE,                      /* MOV r8, r/m8 */
	[0x8b] = OP_MOV,                                /* MOV r, r/m */
	[0xa0] = OP_MOV | OP_BYTE | OP_MOFFS,           /* MOV AL, moffs8 */
	[0xa1] = OP_MOV | OP_MOFFS,                     /* MOV eAX, moffs */
	[0xa2] = OP_MOV | OP_BYTE | OP_MOFFS | OP_WRITE, /* MOV moffs8, AL */
	[0xa3] = OP_MOV | OP_MOFFS | OP_WRITE,          /* MOV moffs, eAX */
	[0xa4] = OP_MOV | OP_BYTE | OP_STR,             /* MOVSB */
	[0xa5] = OP_MOV | OP_STR,                       /* MOVSW/D/Q */
	[0xaa] = OP_MOV | OP_BYTE | OP_STR | OP_WRITE,  /* STOSB */
	[0xab] = OP_MOV | OP_STR | OP_WRITE,            /* STOSW/D/Q */
	[0xac] = OP_MOV | OP_BYTE | OP_STR,             /* LODSB */
	[0xad] = OP_MOV | OP_STR,                       /* LODSW/D/Q */
	[0xc6] = OP_MOV | OP_BYTE | OP_IMM | OP_WRITE,  /* MOV r/m8, imm8 */
	[0xc7] = OP_MOV | OP_IMM | OP_WRITE,            /* MOV r/m, imm16/32 */
};

static const uint8_t op_two_byte[256] = {
	[0xb6] = OP_MOV | OP_BYTE | OP_ZX,              /* MOVZX r, r/m8 */
	[0xb7] = OP_MOV | OP_WORD | OP_ZX,              /* MOVZX r, r/m16 */
};

/* Decoder cursor. */
struct insn_dec {
	const uint8_t *code;
	size_t avail;           /* bytes readable at code */
	unsigned pos;           /* next byte to consume */
	enum insn_mode mode;
	bool opsize;            /* 0x66 seen */
	bool adsize;            /* 0x67 seen */
	uint8_t rex;            /* REX immediately before the opcode, else 0 */
	bool rep;               /* 0xf3 or 0xf2 seen */
	const char *why;        /* reason of the first failure */
};

static int insn_fail(struct insn_dec *d, const char *why)
{
	d->why = why;
	return -1;
}

/*
 * Consumes n bytes as a little-endian value. The 15-byte limit is checked
 * before the buffer end, so a run of prefixes that cannot fit is "too
 * long" however many bytes the caller could fetch.
 */
static int insn_take(struct insn_dec *d, unsigned n, uint64_t *val)
{
	uint64_t v = 0;

	if (d->pos + n > INSN_MAX_LEN)
		return insn_fail(d, "longer than 15 bytes");
	if (d->pos + n > d->avail)
		return insn_fail(d, "truncated");
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)d->code[d->pos + i] << (8 * i);
	d->pos += n;
	if (val)
		*val = v;
	return 0;
}

static bool insn_is_rex(const struct insn_dec *d, uint64_t b)
{
	/* 0x40-0x4f are INC/DEC outside 64-bit mode. */
	return d->mode == INSN_MODE_64 && FIELD_GET(REX_HI, b) == REX_HI_VALUE;
}

/*
 * Legacy prefixes in any order, then at most a REX: SDM Vol. 2, "REX
 * Prefixes", a REX not immediately before the opcode is ignored. Segment
 * overrides do not matter (the exit gave the address). LOCK is accepted
 * without effect: MOV with LOCK raises #UD before any access, so it cannot
 * reach an EPT violation. REP/REPNE are kept for string instructions
 * (both repeat MOVS, STOS and LODS: "REP/REPE/REPZ/REPNE/REPNZ—Repeat
 * String Operation Prefix"); with MOV they are reserved, refused later.
 */
static int insn_prefixes(struct insn_dec *d)
{
	uint64_t b;

	for (;;) {
		if (insn_take(d, 1, &b))
			return -1;
		if (insn_is_rex(d, b)) {
			d->rex = (uint8_t)b;
			continue;
		}
		switch (b) {
		case PFX_OPSIZE:
			d->opsize = true;
			break;
		case PFX_ADSIZE:
			d->adsize = true;
			break;
		case PFX_ES: case PFX_CS: case PFX_SS: case PFX_DS:
		case PFX_FS: case PFX_GS: case PFX_LOCK:
			break;
		case PFX_REP: case PFX_REPNE:
			d->rep = true;
			break;
		default:
			d->pos--;               /* the opcode */
			return 0;
		}
		d->rex = 0;
	}
}

static int insn_opcode(struct insn_dec *d, uint8_t *flags)
{
	uint64_t b;

	if (insn_take(d, 1, &b))
		return -1;
	if (b != OPCODE_ESCAPE) {
		*flags = op_one_byte[b];
		return *flags ? 0 : insn_fail(d, "unsupported opcode");
	}
	if (insn_take(d, 1, &b))
		return -1;
	*flags = op_two_byte[b];
	return *flags ? 0 : insn_fail(d, "unsupported opcode 0x0f");
}

/* SDM Vol. 2, "Operand-Size and Address-Size Attributes" (and its 64-bit
 * counterpart): 0x66/0x67 toggle the default, REX.W forces 64 bits. */
static unsigned insn_op_size(const struct insn_dec *d)
{
	if (d->rex & REX_W)
		return 8;
	if (d->mode == INSN_MODE_16)
		return d->opsize ? 4 : 2;
	return d->opsize ? 2 : 4;
}

static unsigned insn_addr_size(const struct insn_dec *d)
{
	switch (d->mode) {
	case INSN_MODE_64:
		return d->adsize ? 4 : 8;
	case INSN_MODE_32:
		return d->adsize ? 2 : 4;
	default:
		return d->adsize ? 4 : 2;
	}
}

/*
 * Skips SIB and displacement per the tables "32-Bit Addressing Forms with
 * the ModR/M Byte" and "... with the SIB Byte" (SDM Vol. 2, "Instruction
 * Format"); 64-bit addressing uses the same forms, mod 0 rm 5 becoming
 * RIP-relative. REX.B/X do not change the length: r12 and r13 take the
 * same SIB/displacement forms as rsp and rbp.
 */
static int insn_mem_operand(struct insn_dec *d, uint64_t modrm)
{
	unsigned mod = FIELD_GET(MODRM_MOD, modrm), rm = FIELD_GET(MODRM_RM, modrm);
	unsigned disp = 0;
	uint64_t sib;

	if (mod == MOD_REGISTER)
		return insn_fail(d, "register operand");
	if (rm == RM_SIB) {
		if (insn_take(d, 1, &sib))
			return -1;
		if (mod == MOD_INDIRECT && FIELD_GET(SIB_BASE, sib) == BASE_DISP32)
			disp = 4;
	}
	if (mod == MOD_INDIRECT && rm == RM_DISP32)
		disp = 4;
	else if (mod == MOD_DISP8)
		disp = 1;
	else if (mod == MOD_DISP32)
		disp = 4;
	return insn_take(d, disp, NULL);
}

/* SDM Vol. 2, "REX Prefixes": without any REX, byte registers 4..7 are
 * AH, CH, DH, BH; with one (even 0x40) they are SPL, BPL, SIL, DIL. */
static void insn_set_reg(const struct insn_dec *d, unsigned reg, struct mmio_insn *in)
{
	if (in->reg_size == 1 && !d->rex && reg >= 4) {
		in->high8 = true;
		in->reg = (int)reg - 4;
		return;
	}
	in->reg = (int)(reg | (d->rex & REX_R ? 8u : 0u));
}

/* imm8, imm16 or imm32; the imm32 of a 64-bit store is sign-extended. */
static int insn_imm(struct insn_dec *d, struct mmio_insn *in)
{
	if (insn_take(d, MIN(in->size, 4u), &in->imm))
		return -1;
	if (in->size == 8)
		in->imm = (uint64_t)(int64_t)(int32_t)(uint32_t)in->imm;
	in->has_imm = true;
	in->reg = -1;
	return 0;
}

static int insn_modrm_form(struct insn_dec *d, uint8_t flags, struct mmio_insn *in)
{
	uint64_t modrm;
	unsigned reg;

	if (insn_take(d, 1, &modrm))
		return -1;
	reg = FIELD_GET(MODRM_REG, modrm);
	/* C6/C7 with reg != 0 are other instructions (XABORT, XBEGIN). */
	if ((flags & OP_IMM) && reg != 0)
		return insn_fail(d, "unsupported opcode extension");
	if (insn_mem_operand(d, modrm))
		return -1;
	if (flags & OP_IMM)
		return insn_imm(d, in);
	insn_set_reg(d, reg, in);
	return 0;
}

/* MOVS, STOS, LODS: operands implied, rAX the register one. MOVS both
 * reads and writes; the exit qualification tells which access exited. */
static void insn_string_op(const struct insn_dec *d, uint8_t op, struct mmio_insn *in)
{
	in->str = op <= 0xa5 ? INSN_STR_MOVS : op <= 0xab ? INSN_STR_STOS : INSN_STR_LODS;
	in->rep = d->rep;
	in->reg = 0;
}

static int insn_decode(struct insn_dec *d, struct mmio_insn *in)
{
	uint8_t flags;

	if (insn_prefixes(d) || insn_opcode(d, &flags))
		return -1;
	if (d->rep && !(flags & OP_STR))
		return insn_fail(d, "rep prefix");
	if (insn_addr_size(d) == 2)
		return insn_fail(d, "16-bit addressing");
	in->addr_size = insn_addr_size(d);
	in->write = flags & OP_WRITE;
	in->zero_extend = flags & OP_ZX;
	in->reg_size = (flags & OP_BYTE) && !(flags & OP_ZX) ? 1 : insn_op_size(d);
	in->size = flags & OP_BYTE ? 1 : flags & OP_WORD ? 2 : in->reg_size;
	if (flags & OP_STR) {
		insn_string_op(d, d->code[d->pos - 1], in);
		return 0;
	}
	if (flags & OP_MOFFS) {
		in->reg = 0;            /* AL/AX/EAX/RAX */
		return insn_take(d, insn_addr_size(d), NULL);
	}
	return insn_modrm_form(d, flags, in);
}

int insn_decode_mmio(const uint8_t *code, size_t avail, enum insn_mode mode,
		     struct mmio_insn *out, const char **why)
{
	struct insn_dec d = { .code = code, .avail = avail, .mode = mode };
	struct mmio_insn in = { .reg = -1 };

	if (insn_decode(&d, &in)) {
		if (why)
			*why = d.why;
		return -1;
	}
	in.len = d.pos;
	*out = in;
	return 0;
}

uint64_t insn_store_value(const struct mmio_insn *in, uint64_t gpr)
{
	uint64_t val = in->has_imm ? in->imm : in->high8 ? gpr >> 8 : gpr;

	return in->size >= 8 ? val : val & ((1ull << (8 * in->size)) - 1);
}

uint64_t insn_load_value(const struct mmio_insn *in, uint64_t old, uint64_t val)
{
	unsigned width = in->zero_extend ? in->reg_size : in->size;
	uint64_t mask;

	if (in->size < 8)
		val &= (1ull << (8 * in->size)) - 1;
	if (in->high8)
		return (old & ~0xff00ull) | ((val & 0xff) << 8);
	if (width == 8)
		return val;
	if (width == 4)
		return (uint32_t)val;
	mask = width == 2 ? 0xffffull : 0xffull;
	return (old & ~mask) | (val & mask);
}
