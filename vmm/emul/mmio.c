// SPDX-License-Identifier: BSD-2-Clause
/*
 * The instruction behind an EPT violation or APIC-access exit. Neither
 * exit tells the data register or the instruction length, so the bytes at
 * RIP are fetched through the guest's page tables and decoded.
 */
#include "drivers/io.h"
#include "drivers/string.h"
#include "vmm/emul/mmio.h"
#include "vmx/vmx.h"
#include "vmm/guest.h"
#include "vmm/vcpu/vcpu_dump.h"

static bool read_phys(void *ctx, uint64_t gpa, void *buf, size_t len)
{
	void *p = guest_ram_ptr(ctx, gpa, len);

	if (p)
		memcpy(buf, p, len);
	return p != NULL;
}

void mmio_gwalk_env(struct vcpu *v, struct gwalk_env *env, uint64_t pdpte[4])
{
	*env = (struct gwalk_env){
		.cr0 = vmread(VMCS_GUEST_CR0), .cr3 = vmread(VMCS_GUEST_CR3),
		.cr4 = vmread(VMCS_GUEST_CR4), .efer = vmread(VMCS_GUEST_EFER),
		.read_phys = read_phys, .ctx = v->guest,
	};
	if ((env->cr0 & CR0_PG) && (env->cr4 & CR4_PAE) && !(env->efer & EFER_LMA)) {
		for (unsigned i = 0; i < 4; i++)
			pdpte[i] = vmread(VMCS_GUEST_PDPTE0 + 2 * i);
		env->pdptes = pdpte;
	}
}

/* Up to 15 bytes at CS:RIP, fewer if the next page is not mapped. */
static int fetch_insn(struct vcpu *v, uint8_t *buf, size_t *n, const char **why)
{
	uint64_t pdpte[4];
	struct gwalk_env env;
	uint64_t rip = v->exit.rip + vmread(VMCS_GUEST_CS_BASE);
	size_t to_page_end = PAGE_SIZE - (rip & (PAGE_SIZE - 1));

	mmio_gwalk_env(v, &env, pdpte);
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

int mmio_decode(struct vcpu *v, struct mmio_insn *in, const char *what)
{
	uint8_t code[INSN_MAX_LEN];
	const char *why;
	size_t n;

	if (fetch_insn(v, code, &n, &why))
		return vcpu_kill(v, GUEST_STATUS_KILLED, "cannot fetch the instruction touching "
				 "%s: %s", what, why);
	if (insn_decode_mmio(code, n, guest_mode(), in, &why))
		return vcpu_kill(v, GUEST_STATUS_KILLED, "cannot emulate the instruction touching "
				 "%s: %s (bytes %02x %02x %02x %02x)", what, why,
				 code[0], n > 1 ? code[1] : 0, n > 2 ? code[2] : 0, n > 3 ? code[3] : 0);
	return 0;
}

uint64_t mmio_get_gpr(struct vcpu *v, int reg)
{
	return reg == GPR_RSP ? vmread(VMCS_GUEST_RSP) : v->regs.gpr[reg];
}

void mmio_set_gpr(struct vcpu *v, int reg, uint64_t val)
{
	if (reg == GPR_RSP)
		vmwrite(VMCS_GUEST_RSP, val);
	else
		v->regs.gpr[reg] = val;
}

/* A load into a register, merged by insn_load_value(). */
void mmio_put_load(struct vcpu *v, const struct mmio_insn *in, uint64_t val)
{
	mmio_set_gpr(v, in->reg, insn_load_value(in, mmio_get_gpr(v, in->reg), val));
}

uint64_t mmio_store_value(struct vcpu *v, const struct mmio_insn *in)
{
	/* The register is not read (no VMREAD of RSP) for an immediate. */
	return insn_store_value(in, in->has_imm ? 0 : mmio_get_gpr(v, in->reg));
}
