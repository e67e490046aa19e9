// SPDX-License-Identifier: BSD-2-Clause
#include "drivers/io.h"
#include "drivers/errata.h"
#include "vmx/caps.h"
#include "vmx/vmcs.h"


#define EPT_CAP_WALK4       BIT(6)      /* page-walk length 4 */
#define EPT_CAP_WB          BIT(14)
#define EPT_CAP_2M          BIT(16)
#define EPT_CAP_1G          BIT(17)
#define EPT_CAP_INVEPT      BIT(20)
#define EPT_CAP_INVEPT_CTX  BIT(25)     /* single-context INVEPT */
#define EPT_CAP_INVVPID     BIT(32)
#define EPT_CAP_INVVPID_CTX BIT(41)     /* single-context INVVPID */

static const char *feature_control(struct vmx_caps *c)
{
	uint64_t fc = rdmsr(MSR_IA32_FEATURE_CONTROL);

	if (!(fc & FEATURE_CONTROL_LOCK)) {
		/* Firmware left it open (both emulators do): lock it with
		 * VMXON allowed outside SMX, as the SDM asks before VMXON. */
		wrmsr(MSR_IA32_FEATURE_CONTROL,
		      fc | FEATURE_CONTROL_LOCK | FEATURE_CONTROL_VMX_OUT_SMX);
		c->locked_by_us = true;
		return NULL;
	}
	if (!(fc & FEATURE_CONTROL_VMX_OUT_SMX))
		return "VMX disabled in firmware (IA32_FEATURE_CONTROL is locked without "
		       "VMXON outside SMX: enable VT-x / Intel Virtualization Technology in the "
		       "firmware setup)";
	return NULL;
}

static void read_controls(struct vmx_caps *c)
{
	uint64_t basic = rdmsr(MSR_VMX_BASIC);

	c->revision = (uint32_t)FIELD_GET(VMX_BASIC_REVISION, basic);
	c->vmcs_size = (uint32_t)FIELD_GET(VMX_BASIC_VMCS_SIZE, basic);
	c->true_ctls = basic & VMX_BASIC_TRUE_CTLS;
	c->vmcs_memtype = (unsigned)FIELD_GET(VMX_BASIC_MEMTYPE, basic);
	c->pin = rdmsr(c->true_ctls ? MSR_VMX_TRUE_PINBASED : MSR_VMX_PINBASED);
	c->proc = rdmsr(c->true_ctls ? MSR_VMX_TRUE_PROCBASED : MSR_VMX_PROCBASED);
	c->exit = rdmsr(c->true_ctls ? MSR_VMX_TRUE_EXIT : MSR_VMX_EXIT);
	c->entry = rdmsr(c->true_ctls ? MSR_VMX_TRUE_ENTRY : MSR_VMX_ENTRY);
	c->misc = rdmsr(MSR_VMX_MISC);
	c->cr0_fixed0 = rdmsr(MSR_VMX_CR0_FIXED0);
	c->cr0_fixed1 = rdmsr(MSR_VMX_CR0_FIXED1);
	c->cr4_fixed0 = rdmsr(MSR_VMX_CR4_FIXED0);
	c->cr4_fixed1 = rdmsr(MSR_VMX_CR4_FIXED1);
	if (vmx_ctl_allowed1(c->proc, PROC_SECONDARY))
		c->proc2 = rdmsr(MSR_VMX_PROCBASED2);
	if (vmx_ctl_allowed1(c->proc2, PROC2_EPT) || vmx_ctl_allowed1(c->proc2, PROC2_VPID))
		c->ept_vpid = rdmsr(MSR_VMX_EPT_VPID_CAP);
}

static void decode_features(struct vmx_caps *c)
{
	c->preempt_timer = vmx_ctl_allowed1(c->pin, PIN_PREEMPT_TIMER) &&
			   vmx_ctl_allowed1(c->exit, EXIT_SAVE_PREEMPT_TIMER);
	c->preempt_rate = (unsigned)FIELD_GET(VMX_MISC_PREEMPT_RATE, c->misc);
	/* KVM's list of CPUs whose timer does not count at that rate
	 * (drivers/errata.c): the next backend takes over (issue 22.4). */
	if (c->preempt_timer && (c->preempt_erratum = errata_preempt_timer(cpuid(1, 0).eax)))
		c->preempt_timer = false;
	c->posted_intr = vmx_ctl_allowed1(c->pin, PIN_POSTED_INTR);
	c->tpr_shadow = vmx_ctl_allowed1(c->proc, PROC_TPR_SHADOW);
	c->apic_access = vmx_ctl_allowed1(c->proc2, PROC2_VIRT_APIC_ACCESS);
	c->apic_reg_virt = vmx_ctl_allowed1(c->proc2, PROC2_APIC_REG_VIRT);
	c->vid = vmx_ctl_allowed1(c->proc2, PROC2_VIRT_INTR_DELIVERY);
	c->x2apic_virt = vmx_ctl_allowed1(c->proc2, PROC2_VIRT_X2APIC);
	c->ept = vmx_ctl_allowed1(c->proc2, PROC2_EPT);
	c->ept_wb = c->ept_vpid & EPT_CAP_WB;
	c->ept_walk4 = c->ept_vpid & EPT_CAP_WALK4;
	c->ept_2m = c->ept_vpid & EPT_CAP_2M;
	c->ept_1g = c->ept_vpid & EPT_CAP_1G;
	/* tickvisor invalidates single contexts only (vmm/vcpu/vcpu_setup.c). */
	c->invept = (c->ept_vpid & EPT_CAP_INVEPT) && (c->ept_vpid & EPT_CAP_INVEPT_CTX);
	c->vpid = vmx_ctl_allowed1(c->proc2, PROC2_VPID) && (c->ept_vpid & EPT_CAP_INVVPID) &&
		  (c->ept_vpid & EPT_CAP_INVVPID_CTX);
	c->unrestricted = vmx_ctl_allowed1(c->proc2, PROC2_UNRESTRICTED);
	c->act_hlt = c->misc & VMX_MISC_ACT_HLT;
	c->act_wfs = c->misc & VMX_MISC_ACT_WFS;
}

bool vmx_probe(struct vmx_caps *c)
{
	struct cpuid_regs r = cpuid(1, 0);

	*c = (struct vmx_caps){ 0 };
	c->vmx = r.ecx & CPUID_1_ECX_VMX;
	if (!c->vmx) {
		c->unusable = "this CPU has no VMX (CPUID.1:ECX[5] is 0; under QEMU use "
			      "KVM with nested VMX: -enable-kvm -cpu host,+vmx)";
		return false;
	}
	if ((c->unusable = feature_control(c)))
		return false;
	read_controls(c);
	decode_features(c);
	/* tickvisor's VMXON and VMCS pages are write-back RAM; the SDM has
	 * software map them with the type IA32_VMX_BASIC[53:50] reports, and
	 * KVM likewise refuses any but 6 (setup_vmcs_config). */
	if (c->vmcs_memtype != VMX_MEMTYPE_WB)
		c->unusable = "the VMCS memory type is not write-back (IA32_VMX_BASIC[53:50] "
			      "is not 6)";
	else if (!c->ept || !c->ept_wb || !c->invept || !c->ept_walk4)
		c->unusable = "the CPU has no usable EPT (needed to give guests their RAM: "
			      "4-level walk, write-back, single-context INVEPT)";
	else if (!c->unrestricted)
		c->unusable = "the CPU has no unrestricted guest (needed to start guests "
			      "with paging off)";
	return !c->unusable;
}
