// SPDX-License-Identifier: BSD-2-Clause
/* VMX operation on a physical CPU, with the region from our pool. */
#include "drivers/fmt.h"
#include "drivers/io.h"
#include "vmm/host/log.h"
#include "vmm/host/mem.h"
#include "vmm/host/panic.h"
#include "vmm/host/percpu.h"
#include "vmm/host/platform.h"
#include "vmm/host/vmx_cpu.h"
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

/* A CPU setting up a VMCS (vmx_setup_begin .. vmx_setup_end): the first
 * VMX instruction that failed, for the guest's error message. */
static struct vmx_setup {
	bool active;
	const char *insn;               /* NULL: nothing failed */
	uint64_t operand;
	uint64_t err;                   /* VM-instruction error, ~0: VMfailInvalid */
} vmx_setups[TV_MAX_CPUS];

void vmx_setup_begin(void)
{
	vmx_setups[this_cpu()->index] = (struct vmx_setup){ .active = true };
}

bool vmx_setup_end(char *err, size_t n)
{
	struct vmx_setup *s = &vmx_setups[this_cpu()->index];

	s->active = false;
	if (!s->insn)
		return true;
	if (s->err == ~0ull)
		fmt_snprintf(err, n, "%s %#lx failed: VMfailInvalid (no current VMCS)", s->insn,
			     (unsigned long)s->operand);
	else
		fmt_snprintf(err, n, "%s %#lx failed: VM-instruction error %lu (%s)", s->insn,
			     (unsigned long)s->operand, (unsigned long)s->err,
			     vmx_insn_error_name((unsigned)s->err));
	return false;
}

/* vmx/vmx_insn.h: a VMX instruction failed. Which instruction and operand (a
 * VMCS field encoding, SDM Vol. 3D, "Field Encoding in VMCS", or an
 * INVEPT/INVVPID type) and, for VMfailValid, the VM-instruction error;
 * VMfailInvalid means no current VMCS. `at` is the address right after
 * the failed instruction's check, in its caller. */
void vmx_insn_failed(enum vmx_insn_kind kind, uint64_t operand, const void *at)
{
	static const char *const names[] = {
		[VMX_INSN_VMREAD] = "VMREAD", [VMX_INSN_VMWRITE] = "VMWRITE",
		[VMX_INSN_INVEPT] = "INVEPT", [VMX_INSN_INVVPID] = "INVVPID",
	};
	struct vmx_setup *s = &vmx_setups[this_cpu()->index];
	const char *insn = (unsigned)kind < ARRAY_SIZE(names) ? names[kind] : "VMX instruction";
	uint64_t err;

	if (!vmread_checked(VMCS_INSN_ERROR, &err))
		err = ~0ull;
	if (s->active) {
		if (!s->insn)
			*s = (struct vmx_setup){ true, insn, operand, err };
		return;
	}
	if (err != ~0ull)
		panic("%s %#lx failed at %p: VM-instruction error %lu (%s)", insn,
		      (unsigned long)operand, at, (unsigned long)err,
		      vmx_insn_error_name((unsigned)err));
	panic("%s %#lx failed at %p: VMfailInvalid (no current VMCS)", insn,
	      (unsigned long)operand, at);
}
