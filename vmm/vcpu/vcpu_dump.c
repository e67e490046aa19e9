// SPDX-License-Identifier: BSD-2-Clause
#include <stdarg.h>
#include "drivers/fmt.h"
#include "vmm/guest.h"
#include "vmm/host/log.h"
#include "vmm/vcpu/vcpu_dump.h"
#include "vmm/vcpu/vcpu_setup.h"
#include "vmx/vmx.h"

static void dump_seg(const char *name, enum vmx_seg s)
{
	uint16_t sel;
	uint64_t base;
	uint32_t limit, ar;

	vmx_read_seg(s, &sel, &base, &limit, &ar);
	pr_err("  %s=%04x base=%016lx limit=%08x ar=%05x", name, sel, (unsigned long)base, limit, ar);
}

void vcpu_dump(struct vcpu *v)
{
	const uint64_t *r = v->regs.gpr;
	const struct vmx_exit *e = &v->exit;

	/* Fresh from the VMCS: the exit path reads only what its handler needs. */
	pr_err("  exit reason %u (%s)%s, qualification %#lx, guest-physical %#lx",
	       vmx_exit_basic(e), vmx_exit_name(vmx_exit_basic(e)),
	       e->reason & VMX_EXIT_REASON_ENTRY_FAIL ? " [VM-entry failure]" : "",
	       (unsigned long)vmread(VMCS_EXIT_QUALIFICATION),
	       (unsigned long)vmread(VMCS_GUEST_PHYS_ADDR));
	pr_err("  rip=%016lx rsp=%016lx rflags=%08lx insn_len=%lu", (unsigned long)vmread(VMCS_GUEST_RIP),
	       (unsigned long)vmread(VMCS_GUEST_RSP), (unsigned long)vmread(VMCS_GUEST_RFLAGS),
	       (unsigned long)vmread(VMCS_EXIT_INSN_LEN));
	pr_err("  cr0=%08lx (guest sees %08lx) cr3=%016lx cr4=%08lx (guest sees %08lx) efer=%lx",
	       (unsigned long)vmread(VMCS_GUEST_CR0), (unsigned long)vcpu_cr0_guest(v),
	       (unsigned long)vmread(VMCS_GUEST_CR3), (unsigned long)vmread(VMCS_GUEST_CR4),
	       (unsigned long)vcpu_cr4_guest(v), (unsigned long)vmread(VMCS_GUEST_EFER));
	dump_seg("cs", SEG_CS);
	dump_seg("ss", SEG_SS);
	dump_seg("ds", SEG_DS);
	pr_err("  rax=%016lx rbx=%016lx rcx=%016lx rdx=%016lx", r[GPR_RAX], r[GPR_RBX],
	       r[GPR_RCX], r[GPR_RDX]);
	pr_err("  rsi=%016lx rdi=%016lx rbp=%016lx r8 =%016lx", r[GPR_RSI], r[GPR_RDI],
	       r[GPR_RBP], r[GPR_R8]);
	pr_err("  r9 =%016lx r10=%016lx r11=%016lx r12=%016lx", r[GPR_R9], r[GPR_R10],
	       r[GPR_R11], r[GPR_R12]);
	pr_err("  r13=%016lx r14=%016lx r15=%016lx cr2=%016lx", r[GPR_R13], r[GPR_R14],
	       r[GPR_R15], v->regs.cr2);
	pr_err("  interruptibility=%lx activity=%lu exit-intr-info=%08x idt-vectoring=%08x",
	       (unsigned long)vmread(VMCS_GUEST_INTERRUPTIBILITY),
	       (unsigned long)vmread(VMCS_GUEST_ACTIVITY_STATE),
	       (uint32_t)vmread(VMCS_EXIT_INTR_INFO), (uint32_t)vmread(VMCS_IDT_VECTORING_INFO));
}

int vcpu_kill(struct vcpu *v, int status, const char *fmt, ...)
{
	char msg[192];
	va_list ap;

	va_start(ap, fmt);
	fmt_vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!READ_ONCE(v->guest->ended)) {
		pr_err("guest %s: vcpu%u: %s", v->guest->spec->name, v->id, msg);
		vcpu_dump(v);
	}
	return guest_end(v->guest, status, NULL);
}
