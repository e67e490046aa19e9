// SPDX-License-Identifier: BSD-2-Clause
/*
 * vmm/emul/insn.c: a table of encodings (assembled with GNU as, AT&T text kept
 * next to each; the prefix combinations as will not emit are written by
 * hand, disassembler style), rejections, truncation at every length, and
 * a seeded fuzz loop over exact-size heap buffers so ASan sees any read
 * past the bytes the caller said it had.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "vmm/emul/insn.h"

#define M16 INSN_MODE_16
#define M32 INSN_MODE_32
#define M64 INSN_MODE_64

#define ENC(s)  .code = s, .n = sizeof(s) - 1

struct insn_case {
	const char *text;               /* what `as` assembled */
	enum insn_mode mode;
	const char *code;
	size_t n;                       /* = expected length */
	unsigned size, reg_size;
	bool write, high8, zx, has_imm;
	int reg;
	uint64_t imm;
};

/* Loads and stores through a register. */
#define LD(sz, r)        .size = sz, .reg_size = sz, .reg = r
#define ST(sz, r)        .size = sz, .reg_size = sz, .reg = r, .write = true
#define IMM(sz, v)       .size = sz, .reg_size = sz, .reg = -1, .write = true, \
			 .has_imm = true, .imm = v
#define ZX(sz, rsz, r)   .size = sz, .reg_size = rsz, .reg = r, .zx = true

static const struct insn_case cases[] = {
	{ "mov %eax,0x300(%rip)", M64, ENC("\x89\x05\x00\x03\x00\x00"), ST(4, 0) },
	{ "mov 0x30(%rbx),%r10d", M64, ENC("\x44\x8b\x53\x30"), LD(4, 10) },
	{ "mov %r15d,(%rax,%rcx,4)", M64, ENC("\x44\x89\x3c\x88"), ST(4, 15) },
	{ "mov %rax,(%rdi)", M64, ENC("\x48\x89\x07"), ST(8, 0) },
	{ "mov 0x300(%r13,%r14,8),%r11", M64, ENC("\x4f\x8b\x9c\xf5\x00\x03\x00\x00"), LD(8, 11) },
	{ "mov %ecx,0x300(%rbx,%rsi,2)", M64, ENC("\x89\x8c\x73\x00\x03\x00\x00"), ST(4, 1) },
	{ "mov %eax,0x12345678(%rax)", M64, ENC("\x89\x80\x78\x56\x34\x12"), ST(4, 0) },
	{ "mov %eax,0x300(,%rcx,4)", M64, ENC("\x89\x04\x8d\x00\x03\x00\x00"), ST(4, 0) },
	{ "mov %eax,0x0(%r13)", M64, ENC("\x41\x89\x45\x00"), ST(4, 0) },
	{ "mov %eax,(%r12)", M64, ENC("\x41\x89\x04\x24"), ST(4, 0) },
	{ "mov %edx,%ss:0x10(%rsp)", M64, ENC("\x36\x89\x54\x24\x10"), ST(4, 2) },
	{ "mov %r8w,-0x10(%rbp)", M64, ENC("\x66\x44\x89\x45\xf0"), ST(2, 8) },
	{ "mov %eax,%fs:(%rdx)", M64, ENC("\x64\x89\x02"), ST(4, 0) },
	{ "mov %eax,%gs:0x300", M64, ENC("\x65\x89\x04\x25\x00\x03\x00\x00"), ST(4, 0) },
	{ "mov %eax,(%edi)", M64, ENC("\x67\x89\x07"), ST(4, 0) },
	{ "lock mov %eax,(%rdi)", M64, ENC("\xf0\x89\x07"), ST(4, 0) },
	/* Immediates: imm32 sign-extended only under REX.W. */
	{ "movq $-1,(%rdi)", M64, ENC("\x48\xc7\x07\xff\xff\xff\xff"), IMM(8, ~0ull) },
	{ "movq $0x7fffffff,0x10(%rdi)", M64, ENC("\x48\xc7\x47\x10\xff\xff\xff\x7f"),
	  IMM(8, 0x7fffffff) },
	{ "movl $0x80000000,(%rdi)", M64, ENC("\xc7\x07\x00\x00\x00\x80"), IMM(4, 0x80000000) },
	{ "movl $0x100,0xf0(%rip)", M64, ENC("\xc7\x05\xf0\x00\x00\x00\x00\x01\x00\x00"),
	  IMM(4, 0x100) },
	{ "movw $0x1234,(%rdi)", M64, ENC("\x66\xc7\x07\x34\x12"), IMM(2, 0x1234) },
	{ "movb $0x5a,(%rdi)", M64, ENC("\xc6\x07\x5a"), IMM(1, 0x5a) },
	{ "movb $0xff,0x20(%rdi)", M64, ENC("\xc6\x47\x20\xff"), IMM(1, 0xff) },
	/* Byte registers: AH..BH without REX, SPL..DIL with any REX. */
	{ "mov %ah,(%rdi)", M64, ENC("\x88\x27"), ST(1, 0), .high8 = true },
	{ "mov %spl,(%rdi)", M64, ENC("\x40\x88\x27"), ST(1, 4) },
	{ "mov (%rdi),%bh", M64, ENC("\x8a\x3f"), LD(1, 3), .high8 = true },
	{ "mov (%rdi),%dil", M64, ENC("\x40\x8a\x3f"), LD(1, 7) },
	{ "mov (%rdi),%r9b", M64, ENC("\x44\x8a\x0f"), LD(1, 9) },
	{ "mov (%rdi),%cl", M64, ENC("\x8a\x0f"), LD(1, 1) },
	/* moffs: 8 bytes in 64-bit mode, 4 with 0x67. */
	{ "movabs 0xfee00020,%eax", M64, ENC("\xa1\x20\x00\xe0\xfe\x00\x00\x00\x00"), LD(4, 0) },
	{ "movabs %eax,0xfee00020", M64, ENC("\xa3\x20\x00\xe0\xfe\x00\x00\x00\x00"), ST(4, 0) },
	{ "movabs 0xfee00020,%rax", M64, ENC("\x48\xa1\x20\x00\xe0\xfe\x00\x00\x00\x00"), LD(8, 0) },
	{ "addr32 mov 0xfee00020,%eax", M64, ENC("\x67\xa1\x20\x00\xe0\xfe"), LD(4, 0) },
	{ "movabs 0xfee00020,%al", M64, ENC("\xa0\x20\x00\xe0\xfe\x00\x00\x00\x00"), LD(1, 0) },
	{ "movabs %al,0xfee00020", M64, ENC("\xa2\x20\x00\xe0\xfe\x00\x00\x00\x00"), ST(1, 0) },
	/* MOVZX: the access is the source width, the register the operand size. */
	{ "movzbl 0x20(%rsi),%eax", M64, ENC("\x0f\xb6\x46\x20"), ZX(1, 4, 0) },
	{ "movzwl (%rsi),%r8d", M64, ENC("\x44\x0f\xb7\x06"), ZX(2, 4, 8) },
	{ "movzbq (%rsi),%rax", M64, ENC("\x48\x0f\xb6\x06"), ZX(1, 8, 0) },
	{ "movzbw (%rsi),%ax", M64, ENC("\x66\x0f\xb6\x06"), ZX(1, 2, 0) },
	{ "movzbl (%rsi),%esp", M64, ENC("\x0f\xb6\x26"), ZX(1, 4, 4) },
	/* A REX followed by a legacy prefix is ignored; REX.W beats 0x66. */
	{ "rex.W data16 mov %ax,(%rdi)", M64, ENC("\x48\x66\x89\x07"), ST(2, 0) },
	{ "rex.R cs mov %eax,(%rdi)", M64, ENC("\x44\x2e\x89\x07"), ST(4, 0) },
	{ "data16 rex.W mov %rax,(%rdi)", M64, ENC("\x66\x48\x89\x07"), ST(8, 0) },
	{ "rex.B rex.WR mov %r8,(%rdi)", M64, ENC("\x41\x4c\x89\x07"), ST(8, 8) },
	{ "rex.B data16 mov %ah,(%rdi)", M64, ENC("\x41\x66\x88\x27"), ST(1, 0), .high8 = true },
	/* Exactly 15 bytes. */
	{ "13 x ds mov %eax,(%rdi)", M64,
	  ENC("\x3e\x3e\x3e\x3e\x3e\x3e\x3e\x3e\x3e\x3e\x3e\x3e\x3e\x89\x07"), ST(4, 0) },
	{ "ds cs lock movl $0x100,%gs:0x300(%rsp)", M64,
	  ENC("\x3e\x2e\xf0\x65\xc7\x84\x24\x00\x03\x00\x00\x00\x01\x00\x00"), IMM(4, 0x100) },

	{ "movl $0x100,0xfee000f0", M32, ENC("\xc7\x05\xf0\x00\xe0\xfe\x00\x01\x00\x00"),
	  IMM(4, 0x100) },
	{ "mov %eax,0xfee00300", M32, ENC("\xa3\x00\x03\xe0\xfe"), ST(4, 0) },
	{ "mov 0xfee00300,%ebx", M32, ENC("\x8b\x1d\x00\x03\xe0\xfe"), LD(4, 3) },
	{ "mov 0xfee00300,%ax", M32, ENC("\x66\xa1\x00\x03\xe0\xfe"), LD(2, 0) },
	{ "mov %dx,0x10(%esi)", M32, ENC("\x66\x89\x56\x10"), ST(2, 2) },
	{ "movzbl 0xfee00020,%ecx", M32, ENC("\x0f\xb6\x0d\x20\x00\xe0\xfe"), ZX(1, 4, 1) },
	{ "mov %cl,(%ebx,%edx,1)", M32, ENC("\x88\x0c\x13"), ST(1, 1) },
	{ "mov %ch,0xfee00300", M32, ENC("\x88\x2d\x00\x03\xe0\xfe"), ST(1, 1), .high8 = true },
	{ "mov %eax,%es:0x20(%ebp)", M32, ENC("\x26\x89\x45\x20"), ST(4, 0) },

	/* 16-bit code is decodable only with 32-bit addressing. */
	{ "mov %eax,(%edi)", M16, ENC("\x67\x66\x89\x07"), ST(4, 0) },
	{ "addr32 mov %ax,(%edi)", M16, ENC("\x67\x89\x07"), ST(2, 0) },
	{ "addr32 mov 0xfee00300,%eax", M16, ENC("\x67\x66\xa1\x00\x03\xe0\xfe"), LD(4, 0) },
};

struct insn_reject {
	const char *text;
	enum insn_mode mode;
	const char *code;
	size_t n;
	const char *why;
};

static const struct insn_reject rejects[] = {
	{ "mov %eax,%eax", M64, ENC("\x89\xc0"), "register operand" },
	{ "mov $0x100,%eax (c7 /0)", M64, ENC("\xc7\xc0\x00\x01\x00\x00"), "register operand" },
	{ "movzbl %al,%eax", M64, ENC("\x0f\xb6\xc0"), "register operand" },
	{ "xbegin (c7 f8)", M64, ENC("\xc7\xf8\x00\x00\x00\x00"), "unsupported opcode extension" },
	{ "c6 /1", M64, ENC("\xc6\x4f\x10\x5a"), "unsupported opcode extension" },
	{ "addr16 mov %eax,(%bx)", M32, ENC("\x67\x89\x07"), "16-bit addressing" },
	{ "addr16 mov 0x300,%eax", M32, ENC("\x67\xa1\x00\x03"), "16-bit addressing" },
	{ "mov %ax,(%bx)", M16, ENC("\x89\x07"), "16-bit addressing" },
	{ "mov 0x300,%ax", M16, ENC("\xa1\x00\x03"), "16-bit addressing" },
	{ "movb $1,(%bx)", M16, ENC("\xc6\x07\x01"), "16-bit addressing" },
	{ "dec %eax; mov (REX outside 64-bit)", M32, ENC("\x48\x89\x07"), "unsupported opcode" },
	{ "add %eax,(%rdi)", M64, ENC("\x01\x07"), "unsupported opcode" },
	{ "mov %es,(%rdi)", M64, ENC("\x8e\x07"), "unsupported opcode" },
	{ "vmovd (VEX)", M64, ENC("\xc5\xf9\x7e\x07"), "unsupported opcode" },
	{ "ud2", M64, ENC("\x0f\x0b"), "unsupported opcode 0x0f" },
	{ "movsbl (%rsi),%eax", M64, ENC("\x0f\xbe\x06"), "unsupported opcode 0x0f" },
	{ "rep mov", M64, ENC("\xf3\x89\x07"), "rep prefix" },
	{ "repne mov", M64, ENC("\xf2\x89\x07"), "rep prefix" },
	{ "14 x ds mov %eax,(%rdi)", M64,
	  ENC("\x3e\x3e\x3e\x3e\x3e\x3e\x3e\x3e\x3e\x3e\x3e\x3e\x3e\x3e\x89\x07"),
	  "longer than 15 bytes" },
	{ "15 prefixes", M64, ENC("\x2e\x2e\x2e\x2e\x2e\x2e\x2e\x2e\x2e\x2e\x2e\x2e\x2e\x2e\x2e"),
	  "longer than 15 bytes" },
	{ "ds cs lock ss movl $0x100,%gs:0x300(%rsp)", M64,
	  ENC("\x3e\x2e\xf0\x36\x65\xc7\x84\x24\x00\x03\x00\x00\x00\x01\x00\x00"),
	  "longer than 15 bytes" },
	{ "empty", M64, ENC(""), "truncated" },
};

/* Decodes from a heap copy of exactly avail bytes. */
static int decode_exact(const void *code, size_t avail, enum insn_mode mode,
			struct mmio_insn *out, const char **why)
{
	uint8_t *buf = malloc(avail ? avail : 1);
	int ret;

	assert_non_null(buf);
	memcpy(buf, code, avail);
	ret = insn_decode_mmio(buf, avail, mode, out, why);
	free(buf);
	return ret;
}

static void check_case(const struct insn_case *c, const struct mmio_insn *in)
{
	if (in->len != c->n || in->size != c->size || in->reg_size != c->reg_size ||
	    in->write != c->write || in->reg != c->reg || in->high8 != c->high8 ||
	    in->zero_extend != c->zx || in->has_imm != c->has_imm || in->imm != c->imm)
		fail_msg("%s: len %u size %u reg_size %u write %d reg %d high8 %d zx %d imm %d %#llx",
			 c->text, in->len, in->size, in->reg_size, in->write, in->reg,
			 in->high8, in->zero_extend, in->has_imm, (unsigned long long)in->imm);
}

static void test_encodings(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct insn_case *c = &cases[i];
		const char *why = NULL;
		struct mmio_insn in;

		if (decode_exact(c->code, c->n, c->mode, &in, &why))
			fail_msg("%s: rejected: %s", c->text, why);
		check_case(c, &in);
	}
}

/* The bytes after the instruction (a full 15-byte fetch) change nothing. */
static void test_trailing_bytes(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct insn_case *c = &cases[i];
		uint8_t buf[INSN_MAX_LEN];
		struct mmio_insn in;

		memset(buf, 0xcc, sizeof(buf));
		memcpy(buf, c->code, c->n);
		assert_int_equal(decode_exact(buf, sizeof(buf), c->mode, &in, NULL), 0);
		check_case(c, &in);
	}
}

static void test_truncated_every_length(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct insn_case *c = &cases[i];

		for (size_t avail = 0; avail < c->n; avail++) {
			struct mmio_insn in, before;
			const char *why = NULL;

			memset(&in, 0xa5, sizeof(in));
			before = in;
			if (decode_exact(c->code, avail, c->mode, &in, &why) != -1)
				fail_msg("%s: accepted with %zu of %zu bytes", c->text, avail, c->n);
			assert_non_null(why);
			if (strcmp(why, "truncated"))
				fail_msg("%s with %zu bytes: \"%s\"", c->text, avail, why);
			assert_memory_equal(&in, &before, sizeof(in));
		}
	}
}

static void test_rejects(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(rejects); i++) {
		const struct insn_reject *r = &rejects[i];
		const char *why = NULL;
		struct mmio_insn in;

		if (decode_exact(r->code, r->n, r->mode, &in, &why) != -1)
			fail_msg("%s: accepted, len %u", r->text, in.len);
		assert_non_null(why);
		if (strcmp(why, r->why))
			fail_msg("%s: \"%s\", want \"%s\"", r->text, why, r->why);
	}
}

/* Too long is reported even when the caller could fetch fewer bytes. */
static void test_too_long_beats_truncated(void **state)
{
	static const uint8_t prefixes[INSN_MAX_LEN] = {
		0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e,
		0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e,
	};
	const char *why = NULL;
	struct mmio_insn in;

	assert_int_equal(decode_exact(prefixes, sizeof(prefixes), M32, &in, &why), -1);
	assert_string_equal(why, "longer than 15 bytes");
	assert_int_equal(decode_exact(prefixes, 14, M32, &in, &why), -1);
	assert_string_equal(why, "truncated");
}

static void test_mode_of(void **state)
{
	assert_int_equal(insn_mode_of(false, false, false, false), INSN_MODE_16);
	assert_int_equal(insn_mode_of(false, false, false, true), INSN_MODE_16);
	assert_int_equal(insn_mode_of(true, true, false, true), INSN_MODE_16);
	assert_int_equal(insn_mode_of(true, false, false, false), INSN_MODE_16);
	assert_int_equal(insn_mode_of(true, false, false, true), INSN_MODE_32);
	assert_int_equal(insn_mode_of(true, false, true, false), INSN_MODE_64);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Half the bytes come from prefixes and the supported opcodes, so the
 * loop reaches deep into the decoder rather than stopping at byte 0. */
static uint8_t fuzz_byte(void)
{
	static const uint8_t hot[] = {
		0x26, 0x2e, 0x36, 0x3e, 0x64, 0x65, 0x66, 0x67, 0xf0, 0xf2, 0xf3,
		0x40, 0x41, 0x44, 0x48, 0x4c, 0x4f, 0x88, 0x89, 0x8a, 0x8b,
		0xa0, 0xa1, 0xa2, 0xa3, 0xc6, 0xc7, 0x0f, 0xb6, 0xb7, 0x04, 0x05,
		0x24, 0x25, 0x44, 0x84,
	};
	uint64_t r = rng();

	return r & 1 ? hot[(r >> 8) % sizeof(hot)] : (uint8_t)(r >> 8);
}

static bool same_insn(const struct mmio_insn *a, const struct mmio_insn *b)
{
	return a->len == b->len && a->size == b->size && a->reg_size == b->reg_size &&
	       a->write == b->write && a->has_imm == b->has_imm && a->imm == b->imm &&
	       a->reg == b->reg && a->high8 == b->high8 && a->zero_extend == b->zero_extend &&
	       a->str == b->str && a->rep == b->rep && a->addr_size == b->addr_size;
}

static void test_fuzz(void **state)
{
	unsigned ok = 0;

	for (unsigned iter = 0; iter < 50000; iter++) {
		size_t avail = rng() % 21;
		enum insn_mode mode = (enum insn_mode)(rng() % 3);
		uint8_t *buf = malloc(avail ? avail : 1);
		struct mmio_insn in, again;
		const char *why = NULL;

		assert_non_null(buf);
		for (size_t i = 0; i < avail; i++)
			buf[i] = fuzz_byte();
		if (insn_decode_mmio(buf, avail, mode, &in, &why)) {
			assert_non_null(why);
			free(buf);
			continue;
		}
		ok++;
		assert_true(in.len >= (in.str ? 1u : 2u) && in.len <= avail && in.len <= INSN_MAX_LEN);
		assert_true(in.size == 1 || in.size == 2 || in.size == 4 || in.size == 8);
		assert_true(in.reg_size >= in.size && in.reg_size <= 8);
		assert_true(in.reg >= -1 && in.reg <= 15);
		assert_true(!in.high8 || (in.reg >= 0 && in.reg <= 3));
		assert_true(in.has_imm == (in.reg == -1));
		/* Exactly len bytes decode the same. */
		assert_int_equal(insn_decode_mmio(buf, in.len, mode, &again, &why), 0);
		assert_true(same_insn(&in, &again));
		free(buf);
	}
	assert_true(ok > 1000);
}

/* String instructions: operand size from the opcode and prefixes, REP
 * and REPNE both repeat (SDM Vol. 2, "REP/REPE/REPZ/REPNE/REPNZ"), the
 * address size picks rCX/rSI/rDI's width. */
static void test_strings(void **state)
{
	static const struct {
		const char *text;
		enum insn_mode mode;
		const char *code;
		size_t n;
		enum insn_string str;
		unsigned size, addr_size;
		bool rep, write;
	} s[] = {
		{ "rep stos %al,%es:(%rdi)", M64, ENC("\xf3\xaa"), INSN_STR_STOS, 1, 8, true, true },
		{ "rep stos %rax,%es:(%rdi)", M64, ENC("\xf3\x48\xab"), INSN_STR_STOS, 8, 8, true, true },
		{ "stos %eax,%es:(%edi)", M32, ENC("\xab"), INSN_STR_STOS, 4, 4, false, true },
		{ "rep movsl (%esi),%es:(%edi)", M32, ENC("\xf3\xa5"), INSN_STR_MOVS, 4, 4, true, false },
		{ "rep movsb (%esi),%es:(%edi) addr32", M64, ENC("\xf3\x67\xa4"), INSN_STR_MOVS, 1, 4,
		  true, false },
		{ "repnz movsw", M64, ENC("\xf2\x66\xa5"), INSN_STR_MOVS, 2, 8, true, false },
		{ "lods %ds:(%esi),%eax", M32, ENC("\xad"), INSN_STR_LODS, 4, 4, false, false },
		{ "rep lods %ds:(%rsi),%al", M64, ENC("\xf3\xac"), INSN_STR_LODS, 1, 8, true, false },
	};

	for (size_t i = 0; i < ARRAY_SIZE(s); i++) {
		const char *why = NULL;
		struct mmio_insn in;

		if (decode_exact(s[i].code, s[i].n, s[i].mode, &in, &why))
			fail_msg("%s: rejected: %s", s[i].text, why);
		if (in.len != s[i].n || in.str != s[i].str || in.size != s[i].size ||
		    in.addr_size != s[i].addr_size || in.rep != s[i].rep || in.write != s[i].write ||
		    in.reg != 0 || in.has_imm)
			fail_msg("%s: len %u str %d size %u addr %u rep %d write %d reg %d", s[i].text,
				 in.len, in.str, in.size, in.addr_size, in.rep, in.write, in.reg);
	}
}

/*
 * The value a store writes: AH, CH, DH, BH are bits 15:8 of rAX..rBX
 * (SDM Vol. 2, "REX Prefixes", byte registers without REX); the low byte
 * would be AL..BL, what tickvisor wrote before (issue 15.3).
 */
static void test_store_value(void **state)
{
	static const struct {
		const char *text;
		enum insn_mode mode;
		const char *code;
		size_t n;
		uint64_t gpr, want;
	} s[] = {
		{ "mov %ah,(%rdi)", M64, ENC("\x88\x27"), 0x1234, 0x12 },
		{ "mov %ch,0xfee00300", M32, ENC("\x88\x2d\x00\x03\xe0\xfe"), 0xabcd, 0xab },
		{ "mov %bh,(%edi)", M32, ENC("\x88\x3f"), 0xffff80ff, 0x80 },
		{ "mov %spl,(%rdi)", M64, ENC("\x40\x88\x27"), 0x1234, 0x34 },
		{ "mov %al,(%rdi)", M64, ENC("\x88\x07"), 0x1234, 0x34 },
		{ "mov %dx,0x10(%esi)", M32, ENC("\x66\x89\x56\x10"), 0x12345678, 0x5678 },
		{ "mov %eax,0xfee00300", M32, ENC("\xa3\x00\x03\xe0\xfe"), 0x1122334455ull, 0x22334455 },
		{ "mov %rax,(%rdi)", M64, ENC("\x48\x89\x07"), 0x1122334455ull, 0x1122334455ull },
		{ "movb $0x5a,(%rdi)", M64, ENC("\xc6\x07\x5a"), 0x1234, 0x5a },
		{ "movq $-1,(%rdi)", M64, ENC("\x48\xc7\x07\xff\xff\xff\xff"), 0, ~0ull },
	};

	for (size_t i = 0; i < ARRAY_SIZE(s); i++) {
		struct mmio_insn in;

		assert_int_equal(decode_exact(s[i].code, s[i].n, s[i].mode, &in, NULL), 0);
		if (insn_store_value(&in, s[i].gpr) != s[i].want)
			fail_msg("%s: stores %#llx, not %#llx", s[i].text,
				 (unsigned long long)insn_store_value(&in, s[i].gpr),
				 (unsigned long long)s[i].want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encodings),
		cmocka_unit_test(test_trailing_bytes),
		cmocka_unit_test(test_truncated_every_length),
		cmocka_unit_test(test_rejects),
		cmocka_unit_test(test_too_long_beats_truncated),
		cmocka_unit_test(test_mode_of),
		cmocka_unit_test(test_fuzz),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_store_value),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
