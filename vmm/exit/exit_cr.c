// SPDX-License-Identifier: BSD-2-Clause
/*
 * Control-register exits. Only the CR0/CR4 bits tickvisor owns (the
 * guest/host masks) make MOV to CR exit; the guest's view lives in the
 * read shadows. Paging on/off with EFER.LME moves EFER.LMA and the
 * "IA-32e mode guest" entry control as the CPU would.
 */
#include "drivers/io.h"
#include "vmm/exit/exit.h"
#include "vmm/apic/vapic.h"
#include "vmm/vcpu/vcpu_run.h"
#include "vmm/vcpu/vcpu_setup.h"
#include "vmx/vmx.h"
#include "vmm/vcpu/vcpu_dump.h"

#define CR_QUAL_NUM     BITS(3, 0)
#define CR_QUAL_TYPE    BITS(5, 4)
#define   CR_TYPE_TO      0u
#define   CR_TYPE_FROM    1u
#define   CR_TYPE_CLTS    2u
#define   CR_TYPE_LMSW    3u
#define CR_QUAL_GPR     BITS(11, 8)
#define CR_QUAL_LMSW_SRC BITS(31, 16)

static bool in_long_mode(void)
{
	return vmread(VMCS_GUEST_EFER) & EFER_LMA;
}

static void set_lma(struct vcpu *v, bool on)
{
	uint64_t efer = vmread(VMCS_GUEST_EFER);

	efer = on ? efer | EFER_LMA : efer & ~EFER_LMA;
	vmwrite(VMCS_GUEST_EFER, efer);
	v->cached_entry_ctls = on ? v->cached_entry_ctls | (uint32_t)BIT(ENTRY_IA32E_GUEST)
			   : v->cached_entry_ctls & ~(uint32_t)BIT(ENTRY_IA32E_GUEST);
	vmwrite(VMCS_ENTRY_CTLS, v->cached_entry_ctls);
}

/* SDM Vol. 2B, MOV to CR0: the #GP conditions, then the LMA transition. */
static int guest_write_cr0(struct vcpu *v, uint64_t val)
{
	uint64_t old = vcpu_cr0_guest(v), efer = vmread(VMCS_GUEST_EFER);
	bool pg_on = !(old & CR0_PG) && (val & CR0_PG), pg_off = (old & CR0_PG) && !(val & CR0_PG);

	if ((val >> 32) || ((val & CR0_PG) && !(val & CR0_PE)) ||
	    ((val & CR0_NW) && !(val & CR0_CD)))
		return -1;
	if (pg_on && (efer & EFER_LME)) {
		if (!(vmread(VMCS_GUEST_CR4) & CR4_PAE))
			return -1;
		set_lma(v, true);
	}
	if (pg_off && in_long_mode()) {
		if (vmread(VMCS_GUEST_CS_AR) & SEG_AR_L)
			return -1;
		set_lma(v, false);
	}
	vcpu_set_cr0(v, val);
	return 0;
}

static int guest_write_cr4(struct vcpu *v, uint64_t val)
{
	/* No nested VMX (CPUID says so), no bits VMX forbids, and PAE stays
	 * on in long mode. */
	if ((val & CR4_VMXE) || (val & ~vcpu_cr4_allowed()) ||
	    (in_long_mode() && !(val & CR4_PAE)))
		return -1;
	vcpu_set_cr4(v, val);
	return 0;
}

static int mov_to_cr(struct vcpu *v, unsigned cr, uint64_t val)
{
	if (!in_long_mode())
		val = (uint32_t)val;
	switch (cr) {
	case 0: return guest_write_cr0(v, val);
	case 3: vmwrite(VMCS_GUEST_CR3, val); return 0;     /* only if CR3 exiting is forced */
	case 4: return guest_write_cr4(v, val);
	case 8:
		/* Reserved bits 63:4 raise #GP (SDM "MOV—Move to/from Control Registers"). */
		if (val >> 4)
			return -1;
		vapic_write_cr8(v, val);
		return 0;
	default: return -1;
	}
}

int exit_cr_access(struct vcpu *v)
{
	uint64_t q = v->exit.qual, *gpr = v->regs.gpr;
	unsigned cr = (unsigned)FIELD_GET(CR_QUAL_NUM, q), reg = (unsigned)FIELD_GET(CR_QUAL_GPR, q);
	uint64_t val = reg == GPR_RSP ? vmread(VMCS_GUEST_RSP) : gpr[reg];
	int r;

	switch (FIELD_GET(CR_QUAL_TYPE, q)) {
	case CR_TYPE_TO:
		r = mov_to_cr(v, cr, val);
		break;
	case CR_TYPE_FROM:
		if (cr != 3 && cr != 8)
			return vcpu_kill(v, GUEST_STATUS_KILLED, "unexpected MOV from CR%u exit", cr);
		val = cr == 8 ? vapic_read_cr8(v) : vmread(VMCS_GUEST_CR3);
		if (reg == GPR_RSP)
			vmwrite(VMCS_GUEST_RSP, val);
		else
			gpr[reg] = val;
		r = 0;
		break;
	case CR_TYPE_LMSW: {
		/* LMSW loads PE, MP, EM, TS and cannot clear PE. */
		uint64_t old = vcpu_cr0_guest(v), src = FIELD_GET(CR_QUAL_LMSW_SRC, q);
		r = guest_write_cr0(v, (old & ~CR0_MSW_LMSW) | (src & CR0_MSW_LMSW) | (old & CR0_PE));
		break;
	}
	default:
		vcpu_set_cr0(v, vcpu_cr0_guest(v) & ~CR0_TS);   /* CLTS */
		r = 0;
		break;
	}
	if (r) {
		vcpu_inject_gp(v);
		return 0;
	}
	vcpu_skip_insn(v);
	return 0;
}
