// SPDX-License-Identifier: BSD-2-Clause
#include "drivers/fmt.h"
#include "drivers/io.h"
#include "vmx/vmx.h"

static void apply_fixed(uint64_t (*rd)(void), void (*wr)(uint64_t), uint64_t f0, uint64_t f1)
{
	uint64_t v = rd();
	uint64_t want = (v | f0) & f1;

	if (want != v)
		wr(want);
}

bool vmx_cpu_on(const struct vmx_caps *c, void *region)
{
	/* SDM Vol. 3C, "Restrictions on VMX Operation": bits set in FIXED0
	 * must be 1 and bits clear in FIXED1 must be 0 in VMX operation. */
	apply_fixed(read_cr0, write_cr0, c->cr0_fixed0, c->cr0_fixed1);
	write_cr4(read_cr4() | CR4_VMXE);
	apply_fixed(read_cr4, write_cr4, c->cr4_fixed0, c->cr4_fixed1);
	*(uint32_t *)region = c->revision;
	return vmxon((uint64_t)region);
}

bool vmcs_init(const struct vmx_caps *c, void *vmcs)
{
	*(uint32_t *)vmcs = c->revision;
	return vmclear((uint64_t)vmcs) && vmptrld((uint64_t)vmcs);
}

static bool fit_one(uint64_t cap, uint32_t want, uint32_t need, uint32_t *out,
		    const char *name, char *err, size_t errlen)
{
	uint32_t allowed1 = (uint32_t)(cap >> 32), required1 = (uint32_t)cap;
	uint32_t missing = need & ~allowed1;

	if (missing) {
		fmt_snprintf(err, errlen, "the CPU does not allow %s control bit %u", name,
			     __builtin_ctz(missing));
		return false;
	}
	*out = (want | need | required1) & allowed1;
	return true;
}

bool vmx_ctls_fit(const struct vmx_caps *c, const struct vmx_ctls *want,
		  const struct vmx_ctls *need, struct vmx_ctls *out, char *err, size_t errlen)
{
	return fit_one(c->pin, want->pin, need->pin, &out->pin, "pin-based", err, errlen) &&
	       fit_one(c->proc, want->proc, need->proc, &out->proc, "processor-based", err, errlen) &&
	       fit_one(c->proc2 , want->proc2, need->proc2, &out->proc2, "secondary processor-based",
		       err, errlen) &&
	       fit_one(c->exit, want->exit, need->exit, &out->exit, "VM-exit", err, errlen) &&
	       fit_one(c->entry, want->entry, need->entry, &out->entry, "VM-entry", err, errlen);
}

void vmx_ctls_write(const struct vmx_ctls *ctls)
{
	vmwrite(VMCS_PIN_CTLS, ctls->pin);
	vmwrite(VMCS_PROC_CTLS, ctls->proc);
	vmwrite(VMCS_PROC_CTLS2, ctls->proc2);
	vmwrite(VMCS_EXIT_CTLS, ctls->exit);
	vmwrite(VMCS_ENTRY_CTLS, ctls->entry);
}

void vmx_write_host_state(const struct vmx_host_state *h)
{
	vmwrite(VMCS_HOST_CR0, read_cr0());
	vmwrite(VMCS_HOST_CR3, read_cr3());
	vmwrite(VMCS_HOST_CR4, read_cr4());
	vmwrite(VMCS_HOST_CS_SEL, h->cs);
	vmwrite(VMCS_HOST_SS_SEL, h->ds);
	vmwrite(VMCS_HOST_DS_SEL, h->ds);
	vmwrite(VMCS_HOST_ES_SEL, h->ds);
	vmwrite(VMCS_HOST_FS_SEL, 0);
	vmwrite(VMCS_HOST_GS_SEL, 0);
	vmwrite(VMCS_HOST_TR_SEL, h->tr);
	vmwrite(VMCS_HOST_FS_BASE, 0);
	vmwrite(VMCS_HOST_GS_BASE, h->gs_base);
	vmwrite(VMCS_HOST_TR_BASE, h->tr_base);
	vmwrite(VMCS_HOST_GDTR_BASE, h->gdt_base);
	vmwrite(VMCS_HOST_IDTR_BASE, h->idt_base);
	vmwrite(VMCS_HOST_SYSENTER_CS, 0);
	vmwrite(VMCS_HOST_SYSENTER_ESP, 0);
	vmwrite(VMCS_HOST_SYSENTER_EIP, 0);
	vmwrite(VMCS_HOST_EFER, rdmsr(MSR_EFER));
	vmwrite(VMCS_HOST_PAT, rdmsr(MSR_IA32_PAT));
	vmwrite(VMCS_HOST_RIP, h->rip);
}

/* Segment fields are laid out with a stride of 2 in each group. */
void vmx_write_seg(enum vmx_seg s, uint16_t sel, uint64_t base, uint32_t limit, uint32_t ar)
{
	vmwrite(VMCS_GUEST_ES_SEL + 2 * s, sel);
	vmwrite(VMCS_GUEST_ES_BASE + 2 * s, base);
	vmwrite(VMCS_GUEST_ES_LIMIT + 2 * s, limit);
	vmwrite(VMCS_GUEST_ES_AR + 2 * s, ar);
}

void vmx_read_seg(enum vmx_seg s, uint16_t *sel, uint64_t *base, uint32_t *limit, uint32_t *ar)
{
	*sel = (uint16_t)vmread(VMCS_GUEST_ES_SEL + 2 * s);
	*base = vmread(VMCS_GUEST_ES_BASE + 2 * s);
	*limit = (uint32_t)vmread(VMCS_GUEST_ES_LIMIT + 2 * s);
	*ar = (uint32_t)vmread(VMCS_GUEST_ES_AR + 2 * s);
}
