// SPDX-License-Identifier: BSD-2-Clause
/*
 * xAPIC MMIO emulation. Without APIC virtualization every access to the
 * APIC page is an EPT violation; with it, the accesses the CPU does not
 * virtualize (TMCCT and PPR reads, writes to read-only or undefined
 * offsets) are APIC-access exits. Neither tells the data register or the
 * instruction length, so the instruction at RIP is fetched through the
 * guest's page tables and decoded (vmm/gwalk.c, vmm/insn.c).
 */
#include "drivers/io.h"
#include "drivers/string.h"
#include "vmm/exit.h"
#include "vmm/gwalk.h"
#include "vmm/insn.h"
#include "vmm/lapic_glue.h"
#include "vmm/vcpu_run.h"
#include "vmx/vmx.h"

#define APIC_ACCESS_OFFSET  BITS(11, 0)
#define APIC_ACCESS_TYPE    BITS(15, 12)
#define   APIC_ACCESS_READ  0u
#define   APIC_ACCESS_WRITE 1u

static bool read_phys(void *ctx, uint64_t gpa, void *buf, size_t len)
{
	void *p = guest_ram_ptr(ctx, gpa, len);

	if (p)
		memcpy(buf, p, len);
	return p != NULL;
}

/* Up to 15 bytes at CS:RIP, fewer if the next page is not mapped. */
static int fetch_insn(struct vcpu *v, uint8_t *buf, size_t *n, const char **why)
{
	uint64_t pdpte[4];
	struct gwalk_env env = {
		.cr0 = vmread(VMCS_GUEST_CR0), .cr3 = vmread(VMCS_GUEST_CR3),
		.cr4 = vmread(VMCS_GUEST_CR4), .efer = vmread(VMCS_GUEST_EFER),
		.read_phys = read_phys, .ctx = v->guest,
	};
	uint64_t rip = v->exit.rip + vmread(VMCS_GUEST_CS_BASE);
	size_t to_page_end = PAGE_SIZE - (rip & (PAGE_SIZE - 1));

	if ((env.cr0 & CR0_PG) && (env.cr4 & CR4_PAE) && !(env.efer & EFER_LMA)) {
		for (unsigned i = 0; i < 4; i++)
			pdpte[i] = vmread(VMCS_GUEST_PDPTE0 + 2 * i);
		env.pdptes = pdpte;
	}
	/* The instruction may end before an unmapped page: then only the
	 * bytes up to the page end are there to decode. */
	*n = INSN_MAX_LEN;
	if (!gwalk_read_linear(&env, rip, buf, *n, why))
		return 0;
	*n = MIN(*n, to_page_end);
	return gwalk_read_linear(&env, rip, buf, *n, why);
}

static enum insn_mode guest_mode(void)
{
	uint64_t ar = vmread(VMCS_GUEST_CS_AR);

	return insn_mode_of(vmread(VMCS_GUEST_CR0) & CR0_PE, vmread(VMCS_GUEST_RFLAGS) & RFLAGS_VM,
			    (vmread(VMCS_GUEST_EFER) & EFER_LMA) && (ar & SEG_AR_L), ar & SEG_AR_DB);
}

static uint64_t get_gpr(struct vcpu *v, int reg)
{
	return reg == GPR_RSP ? vmread(VMCS_GUEST_RSP) : v->regs.gpr[reg];
}

/* A load into a register: 32-bit destinations zero-extend, narrower ones
 * merge (SDM "General-Purpose Registers in 64-Bit Mode"). */
static void put_gpr(struct vcpu *v, const struct mmio_insn *in, uint64_t val)
{
	unsigned width = in->zero_extend ? in->reg_size : in->size;
	uint64_t old = get_gpr(v, in->reg), mask, nv;

	if (in->high8) {
		nv = (old & ~0xff00ull) | ((uint64_t)(val & 0xff) << 8);
	} else if (width == 8) {
		nv = val;
	} else if (width == 4) {
		nv = (uint32_t)val;
	} else {
		mask = width == 2 ? 0xffffull : 0xffull;
		nv = (old & ~mask) | (val & mask);
	}
	if (in->reg == GPR_RSP)
		vmwrite(VMCS_GUEST_RSP, nv);
	else
		v->regs.gpr[in->reg] = nv;
}

/*
 * Widths other than aligned 32 bits are undefined by the SDM; tickvisor
 * gives them the meaning APIC-register virtualization gives them, so the
 * guest sees the same with APICv on and off: each register is a 16-byte
 * slot holding its 32 bits then zeros. A load returns the bytes it covers;
 * a store merges its bytes into the register (bytes past the register are
 * dropped) and is then an ordinary write. An access spanning two slots
 * ends the guest.
 */
static int do_access(struct vcpu *v, uint32_t off, const struct mmio_insn *in)
{
	uint32_t slot = off & ~0xfu, byte = off & 0xf, reg, mask;
	uint64_t val;

	if (byte + in->size > 16)
		return vcpu_kill(v, GUEST_STATUS_KILLED, "%u-byte APIC access at offset %#x spans "
				 "two registers", in->size, off);
	if (in->write) {
		if (byte >= 4)
			return 0;
		val = in->has_imm ? in->imm : get_gpr(v, in->reg);
		mask = (uint32_t)(in->size >= 4 ? ~0ull : (1ull << (8 * in->size)) - 1) << (8 * byte);
		reg = vlapic_get(v->lapic, slot);
		vlapic_mmio_write(v->lapic, slot, (reg & ~mask) | ((uint32_t)(val << (8 * byte)) & mask));
		return 0;
	}
	vlapic_mmio_read(v->lapic, slot, &reg);
	val = byte < 8 ? (uint64_t)reg >> (8 * byte) : 0;
	put_gpr(v, in, in->size == 8 ? val : val & ((1ull << (8 * in->size)) - 1));
	return 0;
}

static int emulate(struct vcpu *v, uint32_t off)
{
	struct mmio_insn in;
	uint8_t code[INSN_MAX_LEN];
	const char *why;
	size_t n;

	v->intr_dirty = true;
	if (fetch_insn(v, code, &n, &why))
		return vcpu_kill(v, GUEST_STATUS_KILLED, "cannot fetch the instruction touching "
				 "the APIC page: %s", why);
	if (insn_decode_mmio(code, n, guest_mode(), &in, &why))
		return vcpu_kill(v, GUEST_STATUS_KILLED, "cannot emulate the instruction touching "
				 "APIC offset %#x: %s (bytes %02x %02x %02x %02x)", off, why,
				 code[0], n > 1 ? code[1] : 0, n > 2 ? code[2] : 0, n > 3 ? code[3] : 0);
	if (do_access(v, off, &in))
		return -1;
	v->exit.insn_len = in.len;
	vcpu_skip_insn(v);
	return 0;
}

bool vcpu_apic_mmio_claims(struct vcpu *v, uint64_t gpa)
{
	return vlapic_mode(v->lapic) == VLAPIC_XAPIC &&
	       (gpa & ~(uint64_t)(PAGE_SIZE - 1)) == vlapic_base_addr(v->lapic);
}

int vcpu_apic_mmio(struct vcpu *v, uint64_t gpa, uint64_t qual)
{
	if (qual & EPT_QUAL_FETCH)
		return vcpu_kill(v, GUEST_STATUS_BAD_ACCESS, "APIC page used for an instruction fetch");
	return emulate(v, (uint32_t)(gpa & (PAGE_SIZE - 1)));
}

int exit_apic_access(struct vcpu *v)
{
	uint64_t q = v->exit.qual;
	unsigned type = (unsigned)FIELD_GET(APIC_ACCESS_TYPE, q);

	if (type != APIC_ACCESS_READ && type != APIC_ACCESS_WRITE)
		return vcpu_kill(v, GUEST_STATUS_BAD_ACCESS, "APIC page used for an instruction "
				 "fetch or event delivery (access type %u)", type);
	return emulate(v, (uint32_t)FIELD_GET(APIC_ACCESS_OFFSET, q));
}

int exit_apic_write(struct vcpu *v)
{
	/* Trap-like: the CPU stored the value and RIP is already past it. */
	v->intr_dirty = true;
	vlapic_apicv_write(v->lapic, (uint32_t)FIELD_GET(APIC_ACCESS_OFFSET, v->exit.qual));
	return 0;       /* a mode change is synced before the next entry */
}

int exit_eoi_induced(struct vcpu *v)
{
	/* The CPU has done the EOI; only level-triggered vectors ask for the
	 * exit, and guests have no I/O APIC to notify. */
	return 0;
}

int exit_tpr_below(struct vcpu *v)
{
	/* Pending interrupts are re-evaluated before the next entry. */
	return 0;
}
