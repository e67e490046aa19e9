/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Decoder for the few instructions a guest uses on a memory-mapped device
 * register (the xAPIC page). An EPT violation reports the guest-physical
 * address and read/write, but not the register, the value or the length,
 * so the bytes at the guest's RIP are decoded here. Pure C: the caller
 * fetches the bytes (vmm/emul/gwalk.h) and applies the result.
 */
#ifndef VMM_INSN_H
#define VMM_INSN_H

#include "drivers/base.h"

/* SDM Vol. 2, "Instruction Format": no instruction exceeds 15 bytes. */
#define INSN_MAX_LEN    15u

/* Default operand and address size of the code segment. */
enum insn_mode {
	INSN_MODE_16,           /* real, virtual-8086, or CS.D = 0 */
	INSN_MODE_32,           /* protected mode with CS.D = 1 */
	INSN_MODE_64,           /* IA-32e mode with CS.L = 1 */
};

/* String instructions (SDM Vol. 2, "MOVS/MOVSB/...", "STOS/...", "LODS/..."):
 * operands are [rSI] and [rDI], counted by rCX under REP. */
enum insn_string {
	INSN_STR_NONE,
	INSN_STR_MOVS,          /* [rDI] <- [rSI] */
	INSN_STR_STOS,          /* [rDI] <- rAX */
	INSN_STR_LODS,          /* rAX <- [rSI] */
};

struct mmio_insn {
	unsigned len;           /* total instruction length in bytes */
	unsigned size;          /* memory access width in bytes: 1, 2, 4 or 8 */
	unsigned reg_size;      /* width of the register operand: size, or the
				 * MOVZX destination width (2, 4 or 8) */
	bool write;             /* store to memory */
	bool has_imm;           /* the stored value is imm ... */
	uint64_t imm;           /* ... zero-extended, or sign-extended for REX.W */
	int reg;                /* GPR (x86 encoding 0..15, REX.R applied) read or
				 * written, or -1 for an immediate store; for high8,
				 * the GPR holding the byte: 0..3 for AH, CH, DH, BH */
	bool high8;             /* the byte is bits 15:8 of reg (no REX prefix) */
	bool zero_extend;       /* MOVZX: load size bytes, zero-extend to reg_size */
	enum insn_string str;   /* a string instruction (then reg is 0: rAX) */
	bool rep;               /* ... with REP or REPNE: rCX elements */
	unsigned addr_size;     /* address size in bytes: the width of rCX/rSI/rDI */
};

/*
 * Decodes the instruction in code[0..avail). Returns 0, or -1 with a
 * static reason in *why ("truncated", "16-bit addressing", "unsupported
 * opcode", ...); the caller has the bytes to print alongside.
 */
int insn_decode_mmio(const uint8_t *code, size_t avail, enum insn_mode mode,
		     struct mmio_insn *out, const char **why);

/* The value a store writes, given the contents of GPR in->reg: the
 * immediate, or the low in->size bytes of the register, or bits 15:8 of
 * it for AH, CH, DH, BH. */
uint64_t insn_store_value(const struct mmio_insn *in, uint64_t gpr);

/* GPR in->reg after a load of `val` (its low in->size bytes count) into
 * a register holding `old`: 32-bit destinations zero-extend, narrower
 * ones merge, AH..BH replace bits 15:8 (SDM "General-Purpose Registers
 * in 64-Bit Mode"); MOVZX zero-extends to in->reg_size first. Pure, so
 * the fuzzer checks it (tests/fuzz/fuzz_insn.c). */
uint64_t insn_load_value(const struct mmio_insn *in, uint64_t old, uint64_t val);

/* The mode from guest state: CR0.PE, RFLAGS.VM, and the CS access rights'
 * L and D/B bits (VM entry allows CS.L only for an IA-32e mode guest). */
static inline enum insn_mode insn_mode_of(bool cr0_pe, bool rflags_vm, bool cs_l, bool cs_d)
{
	if (!cr0_pe || rflags_vm)
		return INSN_MODE_16;
	if (cs_l)
		return INSN_MODE_64;
	return cs_d ? INSN_MODE_32 : INSN_MODE_16;
}

#endif
