// SPDX-License-Identifier: BSD-2-Clause
/* VMX operation on a physical CPU, with the region from our pool. */
#include "drivers/io.h"
#include "vmm/log.h"
#include "vmm/mem.h"
#include "vmm/panic.h"
#include "vmm/percpu.h"
#include "vmm/platform.h"
#include "vmm/vmx_cpu.h"
#include "vmx/vmx.h"

bool vmm_vmx_cpu_on(void)
{
	struct pcpu *p = this_cpu();
	struct vmx_caps c;
	char why[96];

	/* Every CPU locks its own IA32_FEATURE_CONTROL (the firmware may
	 * leave it unlocked per CPU) and must agree with the BSP. */
	if (p->index && !vmx_probe(&c)) {
		pr_err("cpu%u: VMX unavailable: %s", p->index, c.unusable);
		return false;
	}
	if (p->index && !vmx_caps_compatible(&platform.vmx, &c, why, sizeof(why))) {
		pr_err("cpu%u: VMX differs from the BSP's (%s): left out", p->index, why);
		return false;
	}
	p->vmx = mem_alloc(PAGE_SIZE);
	if (!vmx_cpu_on(&platform.vmx, p->vmx)) {
		pr_err("cpu%u: VMXON failed (CR0 %#lx CR4 %#lx)", p->index,
		       (unsigned long)read_cr0(), (unsigned long)read_cr4());
		return false;
	}
	return true;
}

/* vmx/insn.h: a VMX instruction failed on a host invariant. Which
 * instruction and operand (a VMCS field encoding, SDM Vol. 3D, "Field
 * Encoding in VMCS", or an INVEPT/INVVPID type) and, for VMfailValid,
 * the VM-instruction error; VMfailInvalid means no current VMCS. */
__noreturn void vmx_insn_failed(const char *insn, uint64_t operand)
{
	void *at = __builtin_return_address(0);     /* the failed instruction's caller */
	uint64_t err;

	if (vmread_checked(VMCS_INSN_ERROR, &err))
		panic("%s %#lx failed at %p: VM-instruction error %lu (%s)", insn,
		      (unsigned long)operand, at, (unsigned long)err,
		      vmx_insn_error_name((unsigned)err));
	panic("%s %#lx failed at %p: VMfailInvalid (no current VMCS)", insn,
	      (unsigned long)operand, at);
}
