// SPDX-License-Identifier: BSD-2-Clause
/*
 * After a VM entry failed on invalid guest state: re-check the guest-state
 * rules most likely to be broken (SDM Vol. 3C, "Checks on the Guest State
 * Area") and name each one that fails, so the report says why, not only
 * that. Not the whole list: what is not checked here is still in the
 * register dump (and Bochs's log names the exact check).
 */
#include "drivers/io.h"
#include "vmm/vcpu/vcpu_check.h"
#include "vmm/host/log.h"
#include "vmm/host/platform.h"
#include "vmx/vmx.h"

struct check_ctx {
	struct vcpu *v;
	unsigned failed;
};

static void fail(struct check_ctx *c, const char *what)
{
	pr_err("  VM-entry check failed: %s", what);
	c->failed++;
}

static void check_crs(struct check_ctx *c, bool ia32e)
{
	const struct vmx_caps *cap = &platform.vmx;
	uint64_t cr0 = vmread(VMCS_GUEST_CR0), cr4 = vmread(VMCS_GUEST_CR4);
	uint64_t need0 = cap->cr0_fixed0 & ~(CR0_PE | CR0_PG);     /* unrestricted guest */

	if ((cr0 & need0) != need0 || (cr0 & ~cap->cr0_fixed1 & 0xffffffffull))
		fail(c, "CR0 against IA32_VMX_CR0_FIXED0/1");
	if ((cr0 & CR0_PG) && !(cr0 & CR0_PE))
		fail(c, "CR0.PG set without CR0.PE");
	if ((cr4 & cap->cr4_fixed0) != cap->cr4_fixed0 || (cr4 & ~cap->cr4_fixed1 & 0xffffffffull))
		fail(c, "CR4 against IA32_VMX_CR4_FIXED0/1");
	if (ia32e != !!(vmread(VMCS_GUEST_EFER) & EFER_LMA))
		fail(c, "\"IA-32e mode guest\" entry control differs from EFER.LMA");
	if (ia32e && (!(cr0 & CR0_PG) || !(cr4 & CR4_PAE)))
		fail(c, "IA-32e mode guest without CR0.PG and CR4.PAE");
}

static void check_segments(struct check_ctx *c, bool ia32e)
{
	uint64_t cs = vmread(VMCS_GUEST_CS_AR), tr = vmread(VMCS_GUEST_TR_AR);
	uint64_t type = FIELD_GET(SEG_AR_TYPE, tr);

	if ((cs & SEG_AR_UNUSABLE) || !(cs & SEG_AR_P) || !(cs & SEG_AR_S))
		fail(c, "CS not usable, present and a code/data segment");
	if (ia32e && (cs & SEG_AR_L) && (cs & SEG_AR_DB))
		fail(c, "CS.L and CS.D both set in IA-32e mode");
	if ((tr & SEG_AR_UNUSABLE) || !(tr & SEG_AR_P) || (tr & SEG_AR_S) || (type != 3 && type != 11) ||
	    (ia32e && type != 11))
		fail(c, "TR not a present busy TSS (a 64-bit one in IA-32e mode)");
}

static void check_state(struct check_ctx *c, bool ia32e)
{
	uint64_t rflags = vmread(VMCS_GUEST_RFLAGS), intr = vmread(VMCS_GUEST_INTERRUPTIBILITY);
	uint64_t act = vmread(VMCS_GUEST_ACTIVITY_STATE);

	if (!(rflags & RFLAGS_FIXED) || (rflags & RFLAGS_RSVD))
		fail(c, "RFLAGS reserved bits (bit 1 must be 1, bits 3, 5, 15, 63:22 must be 0)");
	if (ia32e && (rflags & RFLAGS_VM))
		fail(c, "RFLAGS.VM set in IA-32e mode");
	if ((intr & INTERRUPTIBILITY_STI) && (intr & INTERRUPTIBILITY_MOV_SS))
		fail(c, "blocking by STI and by MOV SS together");
	if ((intr & INTERRUPTIBILITY_STI) && !(rflags & RFLAGS_IF))
		fail(c, "blocking by STI with RFLAGS.IF clear");
	if (act > ACTIVITY_WAIT_SIPI || (act == ACTIVITY_HLT && !platform.vmx.act_hlt))
		fail(c, "activity state unsupported");
	if (vmread(VMCS_LINK_POINTER) != ~0ull)
		fail(c, "VMCS link pointer is not all ones");
}

void vcpu_check_guest_state(struct vcpu *v)
{
	struct check_ctx c = { .v = v };
	bool ia32e = v->cached_entry_ctls & BIT(ENTRY_IA32E_GUEST);

	check_crs(&c, ia32e);
	check_segments(&c, ia32e);
	check_state(&c, ia32e);
	if (!c.failed)
		pr_err("  none of tickvisor's guest-state checks fails (see the dump)");
}
