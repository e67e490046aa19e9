// SPDX-License-Identifier: BSD-2-Clause
#include "drivers/apic.h"
#include "drivers/io.h"
#include "vmm/exit/exit.h"
#include "vmm/guest.h"
#include "vmm/exit/hypercall.h"
#include "vmm/host/irq.h"
#include "vmm/apic/vapic.h"
#include "vmm/apic/vcpu_timer.h"
#include "vmm/host/percpu.h"
#include "vmm/host/platform.h"
#include "vmm/vcpu/vcpu_run.h"
#include "vmx/vmx.h"


/* Exit counts of the whole guest, so a benchmark on any vCPU sees all. */
static void hc_info(struct vcpu *v, uint64_t *r)
{
	r[GPR_RAX] = platform.tb.tsc_hz;
	r[GPR_RBX] = platform.tb.apic_hz;
	r[GPR_RCX] = vapic_info_flags(v);
	r[GPR_RDX] = v->guest->nvcpus;
}

/* For tests of host NMI handling: an NMI IPI to the physical CPU of one
 * of the guest's own vCPUs (the caller's too), then a bounded wait (1 ms)
 * until that CPU has handled it. The target may be in guest mode (an NMI
 * VM exit), in root mode or halted there. */
static uint64_t hc_host_nmi(struct vcpu *v, uint64_t vcpu_idx)
{
	struct guest *g = v->guest;
	struct pcpu *p = vcpu_idx < g->nvcpus ? cpus[g->vcpus[vcpu_idx]->cpu] : NULL;
	uint64_t before, deadline;

	if (!p)
		return TV_HC_ERROR;
	before = irq_nmi_count(p->index);
	apic_send_nmi(p->apic_id);
	deadline = rdtsc() + platform.tb.tsc_hz / 1000;
	while (irq_nmi_count(p->index) == before && rdtsc() < deadline)
		cpu_relax();
	return irq_nmi_count(p->index) == before ? TV_HC_ERROR : irq_nmi_count(p->index);
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
	case TV_HC_HOST_NMI:
		r[GPR_RAX] = hc_host_nmi(v, r[GPR_RBX]);
		break;
	case TV_HC_EXIT_COST:
		/* What vcpu_calib_measure() found at this vCPU's start (0 when
		 * it could not measure): guests scale their timer slack by it,
		 * so that the same tests hold in Bochs and nested under KVM,
		 * where one exit costs microseconds. */
		r[GPR_RAX] = v->entry_tsc + v->exit_tsc;
		r[GPR_RBX] = v->entry_tsc;
		r[GPR_RCX] = v->exit_tsc;
		break;
	case TV_HC_HPET_STRAYS:
		r[GPR_RAX] = vcpu_timer_hpet_strays(v);
		break;
	default:
		r[GPR_RAX] = TV_HC_ERROR;
		break;
	}
	vcpu_skip_insn(v);
	return 0;
}
