// SPDX-License-Identifier: BSD-2-Clause
#include "vmm/exit.h"
#include "vmm/guest.h"
#include "vmm/hypercall.h"
#include "vmm/lapic_glue.h"
#include "vmm/platform.h"
#include "vmm/vcpu_run.h"
#include "vmx/vmx.h"


/* Exit counts of the whole guest, so a benchmark on any vCPU sees all. */
static void hc_info(struct vcpu *v, uint64_t *r)
{
	r[GPR_RAX] = platform.tb.tsc_hz;
	r[GPR_RBX] = platform.tb.apic_hz;
	r[GPR_RCX] = vcpu_info_flags(v);
	r[GPR_RDX] = v->guest->nvcpus;
}

int exit_vmcall(struct vcpu *v)
{
	uint64_t *r = v->regs.gpr;

	/* Only the guest kernel may ask; user mode gets #UD as on bare metal. */
	if (FIELD_GET(SEG_AR_DPL, vmread(VMCS_GUEST_SS_AR)) != 0) {
		vcpu_inject_ud(v);
		return 0;
	}
	switch (r[GPR_RAX]) {
	case TV_HC_PING:
		r[GPR_RAX] = TV_HC_PONG;
		break;
	case TV_HC_EXITS:
		r[GPR_RAX] = r[GPR_RBX] < VMX_EXIT_NR || r[GPR_RBX] == GUEST_EXITS_ALL
			     ? guest_exits(v->guest, r[GPR_RBX]) : TV_HC_ERROR;
		break;
	case TV_HC_INFO:
		hc_info(v, r);
		break;
	default:
		r[GPR_RAX] = TV_HC_ERROR;
		break;
	}
	vcpu_skip_insn(v);
	return 0;
}
