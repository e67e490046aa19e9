// SPDX-License-Identifier: BSD-2-Clause
/*
 * VMCS set-up of a vCPU: controls fitted to what the CPU allows, host
 * state of this physical CPU, and the guest's start state. The policy
 * (which exits we take) lives here; vmx/ only provides the mechanism.
 */
#include "drivers/fmt.h"
#include "drivers/io.h"
#include "drivers/mce.h"
#include "drivers/string.h"
#include "vmm/host/irq.h"
#include "vmm/host/log.h"
#include "vmm/host/mem.h"
#include "vmm/loader/linux.h"
#include "vmm/loader/multiboot.h"
#include "vmm/host/percpu.h"
#include "vmm/host/platform.h"
#include "vmm/vcpu/vcpu_setup.h"
#include "vmm/vcpu/vcpu_xstate.h"
#include "vmx/vmx.h"
#include "vmm/vcpu/vcpu_run.h"

extern char vmx_exit[];

#define PAT_POWER_ON   0x0007040600070406ull
#define DR7_INIT       0x400ull
#define DR6_INIT       0xffff0ff0ull

static bool fit_controls(const struct guest *g, struct vmx_ctls *out, char *err, size_t n)
{
	/* With APICv the TPR lives in the virtual-APIC page; without it, CR8
	 * accesses of 64-bit guests must come to us. */
	uint32_t tpr = g->apicv ? BIT(PROC_TPR_SHADOW)
				: BIT(PROC_CR8_LOAD_EXIT) | BIT(PROC_CR8_STORE_EXIT);
	const struct vmx_ctls need = {
		.pin = BIT(PIN_EXT_INTR_EXIT) | BIT(PIN_NMI_EXIT) | BIT(PIN_VIRTUAL_NMIS),
		.proc = BIT(PROC_UNCOND_IO_EXIT) | BIT(PROC_MSR_BITMAPS) | BIT(PROC_SECONDARY) |
			BIT(PROC_TSC_OFFSET) | tpr,
		.proc2 = BIT(PROC2_EPT) | BIT(PROC2_UNRESTRICTED),
		/* DR7 and IA32_DEBUGCTL are the guest's only through the
		 * VMCS: without these, every VM exit would reset DR7 to 0x400
		 * under the guest. */
		.exit = BIT(EXIT_HOST_ADDR64) | BIT(EXIT_ACK_INTR) | BIT(EXIT_SAVE_EFER) |
			BIT(EXIT_LOAD_EFER) | BIT(EXIT_SAVE_DEBUG),
		.entry = BIT(ENTRY_LOAD_EFER) | BIT(ENTRY_LOAD_DEBUG),
	};
	const struct vmx_ctls want = {
		.pin = 0,
		.proc = BIT(PROC_MWAIT_EXIT) | BIT(PROC_MONITOR_EXIT) | BIT(PROC_RDPMC_EXIT) |
			(g->hlt == HLT_EXIT ? BIT(PROC_HLT_EXIT) : 0),
		/* VPIDs are reused by the next guest: only with INVVPID. */
		.proc2 = (platform.vmx.vpid ? BIT(PROC2_VPID) : 0) | BIT(PROC2_RDTSCP) |
			 BIT(PROC2_INVPCID),
		.exit = BIT(EXIT_SAVE_PAT) | BIT(EXIT_LOAD_PAT),
		.entry = BIT(ENTRY_LOAD_PAT),
	};

	/* CR3-load/store exiting stay set only where the CPU requires them
	 * (legacy capability MSRs); with the TRUE MSRs they go. */
	return vmx_ctls_fit(&platform.vmx, &want, &need, out, err, n);
}

static void write_host_state(void)
{
	struct pcpu *p = this_cpu();
	struct vmx_host_state h = {
		.gdt_base = (uint64_t)&p->gdt, .idt_base = idt_base(),
		.tr_base = (uint64_t)&p->tss, .gs_base = (uint64_t)p,
		.cs = SEL_CODE, .ds = SEL_DATA, .tr = SEL_TSS, .rip = (uint64_t)vmx_exit,
	};

	vmx_write_host_state(&h);
}

/* CR0/CR4 bits the guest may not change freely are owned by tickvisor:
 * those VMX forces (FIXED0, minus PE/PG with unrestricted guest) and
 * those it forbids (clear in FIXED1). The guest sees the read shadow. */
static void write_cr_masks(struct vcpu *v)
{
	const struct vmx_caps *c = &platform.vmx;

	/* CD and NW too: VM entry and exit do not load them (SDM "Loading
	 * Guest Control Registers, Debug Registers, and MSRs"), so a guest's
	 * own would change how the physical CPU caches for tickvisor and the
	 * next guests. The guest sees its values in the shadow; the CPU keeps
	 * caching on, and guest memory stays write-back whatever the guest's
	 * CD (only the values are virtualized, as KVM without non-coherent
	 * DMA and bhyve do: docs/design-notes.md, "Guest CR0.CD/NW"). */
	v->cr0_mask = (c->cr0_fixed0 & ~(CR0_PE | CR0_PG)) | ~c->cr0_fixed1 | CR0_CD | CR0_NW;
	v->cr0_mask &= 0xffffffffull;
	v->cr4_mask = c->cr4_fixed0 | (~c->cr4_fixed1 & 0xffffffffull);
	vmwrite(VMCS_CR0_GUEST_HOST_MASK, v->cr0_mask);
	vmwrite(VMCS_CR4_GUEST_HOST_MASK, v->cr4_mask);
}

uint64_t vcpu_cr0_real(const struct vcpu *v, uint64_t guest_cr0)
{
	const struct vmx_caps *c = &platform.vmx;

	return (guest_cr0 | (c->cr0_fixed0 & ~(CR0_PE | CR0_PG))) & (c->cr0_fixed1 | CR0_PE | CR0_PG) &
	       ~(CR0_CD | CR0_NW);
}

uint64_t vcpu_cr4_real(const struct vcpu *v, uint64_t guest_cr4)
{
	return (guest_cr4 | platform.vmx.cr4_fixed0) & platform.vmx.cr4_fixed1;
}

/* The guest's view: its own bits from the real register, the owned bits
 * from the read shadow. */
uint64_t vcpu_cr0_guest(const struct vcpu *v)
{
	return (vmread(VMCS_GUEST_CR0) & ~v->cr0_mask) | (vmread(VMCS_CR0_READ_SHADOW) & v->cr0_mask);
}

uint64_t vcpu_cr4_guest(const struct vcpu *v)
{
	return (vmread(VMCS_GUEST_CR4) & ~v->cr4_mask) | (vmread(VMCS_CR4_READ_SHADOW) & v->cr4_mask);
}

uint64_t vcpu_cr4_allowed(void)
{
	return platform.vmx.cr4_fixed1 & ~CR4_VMXE;
}

void vcpu_set_cr0(struct vcpu *v, uint64_t cr0)
{
	vmwrite(VMCS_GUEST_CR0, vcpu_cr0_real(v, cr0));
	vmwrite(VMCS_CR0_READ_SHADOW, cr0);
}

void vcpu_set_cr4(struct vcpu *v, uint64_t cr4)
{
	vmwrite(VMCS_GUEST_CR4, vcpu_cr4_real(v, cr4));
	vmwrite(VMCS_CR4_READ_SHADOW, cr4);
}

static void write_fixed_guest_state(void)
{
	vmwrite(VMCS_LINK_POINTER, ~0ull);
	vmwrite(VMCS_GUEST_DR7, DR7_INIT);
	vmwrite(VMCS_GUEST_DEBUGCTL, 0);
	vmwrite(VMCS_GUEST_PAT, PAT_POWER_ON);
	vmwrite(VMCS_GUEST_SYSENTER_CS, 0);
	vmwrite(VMCS_GUEST_SYSENTER_ESP, 0);
	vmwrite(VMCS_GUEST_SYSENTER_EIP, 0);
	vmwrite(VMCS_GUEST_PENDING_DBG, 0);
	vmwrite(VMCS_GUEST_INTERRUPTIBILITY, 0);
	vmwrite(VMCS_GUEST_ACTIVITY_STATE, ACTIVITY_ACTIVE);
	vmwrite(VMCS_ENTRY_INTR_INFO, 0);
	/* #MC only: a host machine check is the host's (vmm/host/mce.c),
	 * never taken by the guest's handler (SDM Vol. 3C, "Exception
	 * Bitmap"; KVM intercepts it for the same reason). */
	vmwrite(VMCS_EXCEPTION_BITMAP, BIT(EXC_VECTOR_MC));
	vmwrite(VMCS_PF_ERROR_MASK, 0);
	vmwrite(VMCS_PF_ERROR_MATCH, 0);
	vmwrite(VMCS_CR3_TARGET_COUNT, 0);
	vmwrite(VMCS_EXIT_MSR_STORE_COUNT, 0);
	vmwrite(VMCS_EXIT_MSR_LOAD_COUNT, 0);
	vmwrite(VMCS_ENTRY_MSR_LOAD_COUNT, 0);
	vmwrite(VMCS_TSC_OFFSET, 0);
}

/* What both starts share: descriptor tables at 0 with limit 0xffff, no
 * paging, PAE or long mode, RSP and the other registers 0, IF clear. */
static void reset_flat(struct vcpu *v, uint64_t cr0, uint64_t rip)
{
	vmwrite(VMCS_GUEST_GDTR_BASE, 0);
	vmwrite(VMCS_GUEST_GDTR_LIMIT, 0xffff);
	vmwrite(VMCS_GUEST_IDTR_BASE, 0);
	vmwrite(VMCS_GUEST_IDTR_LIMIT, 0xffff);
	vcpu_set_cr0(v, cr0);
	vmwrite(VMCS_GUEST_CR3, 0);
	vcpu_set_cr4(v, 0);
	vmwrite(VMCS_GUEST_EFER, 0);
	vmwrite(VMCS_GUEST_RSP, 0);
	vmwrite(VMCS_GUEST_RIP, rip);
	vmwrite(VMCS_GUEST_RFLAGS, RFLAGS_FIXED);
	memset(&v->regs, 0, __builtin_offsetof(struct guest_regs, host_rsp));
	v->cached_entry_ctls &= ~(uint32_t)BIT(ENTRY_IA32E_GUEST);
	vmwrite(VMCS_ENTRY_CTLS, v->cached_entry_ctls);
}

void vcpu_reset_multiboot(struct vcpu *v, uint32_t entry, uint32_t mbi)
{
	/* Multiboot 0.6.96, "Machine state": flat 32-bit segments, PE on,
	 * PG off, IF clear, EAX = magic, EBX = boot information. */
	for (enum vmx_seg s = SEG_ES; s <= SEG_GS; s++)
		vmx_write_seg(s, 0x10, 0, 0xffffffff, SEG_AR_DATA32);
	vmx_write_seg(SEG_CS, 0x08, 0, 0xffffffff, SEG_AR_CODE32);
	vmx_write_seg(SEG_LDTR, 0, 0, 0xffff, SEG_AR_LDT | SEG_AR_UNUSABLE);
	vmx_write_seg(SEG_TR, 0, 0, 0xffff, SEG_AR_TSS_BUSY);
	reset_flat(v, CR0_PE | CR0_ET, entry);
	v->regs.gpr[GPR_RAX] = MB_BOOTLOADER_MAGIC;
	v->regs.gpr[GPR_RBX] = mbi;
}

/* Documentation/arch/x86/boot.rst, "32-bit Boot Protocol": protected
 * mode, paging off, interrupts off; a GDT loaded with 4 GiB flat
 * __BOOT_CS (0x10) and __BOOT_DS (0x18), CS = __BOOT_CS, DS = ES = SS =
 * __BOOT_DS (FS and GS too, as the real-mode section recommends); ESI =
 * boot_params; EBP, EDI and EBX zero (reset_flat clears every GPR). The
 * hidden segment parts match the descriptors in that GDT, so a reload
 * of any selector gives the guest what it already has. */
void vcpu_reset_linux(struct vcpu *v, uint32_t entry, uint32_t boot_params, uint32_t gdt)
{
	for (enum vmx_seg s = SEG_ES; s <= SEG_GS; s++)
		vmx_write_seg(s, LX_BOOT_DS, 0, 0xffffffff, SEG_AR_DATA32);
	vmx_write_seg(SEG_CS, LX_BOOT_CS, 0, 0xffffffff, SEG_AR_CODE32);
	vmx_write_seg(SEG_LDTR, 0, 0, 0xffff, SEG_AR_LDT | SEG_AR_UNUSABLE);
	vmx_write_seg(SEG_TR, 0, 0, 0xffff, SEG_AR_TSS_BUSY);
	reset_flat(v, CR0_PE | CR0_ET, entry);
	vmwrite(VMCS_GUEST_GDTR_BASE, gdt);
	vmwrite(VMCS_GUEST_GDTR_LIMIT, LX_GDT_LIMIT);
	v->regs.gpr[GPR_RSI] = boot_params;
}

/* SDM Vol. 3A, "Processor State After Reset" (INIT column), entered at
 * the SIPI vector: real mode, CS = vector << 8, IP = 0, CR0 = ET plus the
 * CD/NW the INIT found (set at power-up: v->init_cd_nw). */
void vcpu_reset_sipi(struct vcpu *v, uint8_t vector)
{
	for (enum vmx_seg s = SEG_ES; s <= SEG_GS; s++)
		vmx_write_seg(s, 0, 0, 0xffff, SEG_AR_DATA16);
	vmx_write_seg(SEG_CS, (uint16_t)(vector << 8), (uint64_t)vector << 12, 0xffff, SEG_AR_CODE16);
	vmx_write_seg(SEG_LDTR, 0, 0, 0xffff, SEG_AR_LDT);
	vmx_write_seg(SEG_TR, 0, 0, 0xffff, SEG_AR_TSS_BUSY);
	reset_flat(v, CR0_ET | v->init_cd_nw, 0);
	vmwrite(VMCS_GUEST_DR7, DR7_INIT);
	vcpu_set_interruptibility(v, 0);
	vmwrite(VMCS_GUEST_ACTIVITY_STATE, ACTIVITY_ACTIVE);
	vmwrite(VMCS_ENTRY_INTR_INFO, 0);
	v->injecting = false;
	v->regs.gpr[GPR_RDX] = cpuid(1, 0).eax;     /* processor signature */
}

/* MSRs the MSR bitmap passes through keep, in the CPU, what the last
 * guest on it wrote (VMX switches none of them): back to 0, what a new
 * vCPU has under KVM and BitVisor (its VT reset zeroes STAR, LSTAR,
 * CSTAR, FMASK and KERNEL_GS_BASE). The SDM's reset table does not list
 * them; Bochs alone resets SFMASK to 0x20200. TSC_AUX only where RDTSCP
 * (and so the MSR) exists. */
static void reset_passthrough_msrs(void)
{
	static const uint32_t zeroed[] = {
		MSR_STAR, MSR_LSTAR, MSR_CSTAR, MSR_SFMASK, MSR_KERNEL_GS_BASE,
	};

	for (unsigned i = 0; i < ARRAY_SIZE(zeroed); i++)
		wrmsr(zeroed[i], 0);
	if (cpuid(0x80000001, 0).edx & CPUID_80000001_EDX_RDTSCP)
		wrmsr(MSR_TSC_AUX, 0);
}

/* DR0-DR3 and DR6 are the guest's in the CPU too (MOV DR does not exit);
 * DR7 lives in the VMCS (write_fixed_guest_state). Power-up values. */
static void reset_debug_regs(void)
{
	uint64_t zero = 0, dr6 = DR6_INIT;

	__asm__ volatile("mov %0, %%dr0\n\tmov %0, %%dr1\n\tmov %0, %%dr2\n\tmov %0, %%dr3"
			 : : "r"(zero));
	__asm__ volatile("mov %0, %%dr6" : : "r"(dr6));
}

/* What a guest starting on this CPU must not inherit from the last one. */
static void vcpu_reset_cpu_state(struct vcpu *v)
{
	reset_passthrough_msrs();
	reset_debug_regs();
	vcpu_xstate_reset(v);
	v->misc_enable = MISC_ENABLE_RESET;
}

bool vcpu_setup_vmcs(struct vcpu *v, char *err, size_t errlen)
{
	struct guest *g = v->guest;
	struct vmx_ctls ctls;

	v->vmcs = mem_alloc(PAGE_SIZE);
	if (!vmcs_init(&platform.vmx, v->vmcs)) {
		fmt_snprintf(err, errlen, "VMCLEAR/VMPTRLD of a new VMCS failed");
		return false;
	}
	if (!fit_controls(g, &ctls, err, errlen))
		return false;
	vmx_ctls_write(&ctls);
	v->cached_pin_ctls = ctls.pin;
	v->cached_entry_ctls = ctls.entry;
	v->cached_proc_ctls = ctls.proc;
	v->lma_by_hw = platform.vmx.misc & VMX_MISC_EXIT_SAVES_LMA;
	vcpu_reset_cpu_state(v);        /* before the host state: it may set CR4.OSXSAVE */
	write_host_state();
	write_fixed_guest_state();
	write_cr_masks(v);
	vmwrite(VMCS_MSR_BITMAP, (uint64_t)v->msr_bitmap);
	vmwrite(VMCS_EPT_POINTER, g->eptp);
	if (ctls.proc2 & BIT(PROC2_VPID)) {
		vmwrite(VMCS_VPID, 1 + v->id);
		invvpid(INVVPID_SINGLE, (uint16_t)(1 + v->id));
	}
	invept(INVEPT_SINGLE, g->eptp);
	return true;
}
