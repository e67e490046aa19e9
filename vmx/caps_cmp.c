// SPDX-License-Identifier: BSD-2-Clause
/*
 * Is an AP's VMX the BSP's? tickvisor probes VMX once, on the BSP
 * (platform.vmx), and builds every VMCS, control word, EPT pointer and
 * CR0/CR4 value from that; a vCPU then runs on whichever CPU its index
 * names. An AP that lacks a feature the BSP offers (or insists on a bit
 * the BSP lets go) would fail VM entries, or a VMX instruction, much
 * later and far from the cause. SDM Vol. 3D, "VMX Capability Reporting
 * Facility" defines every field compared here. Pure: host-tested.
 */
#include "drivers/fmt.h"
#include "vmx/caps.h"

/* IA32_VMX_MISC bits tickvisor relies on: EFER.LMA saved on exit (5) and
 * the HLT/shutdown/wait-for-SIPI activity states (6-8). */
#define VMX_MISC_USED   (VMX_MISC_EXIT_SAVES_LMA | VMX_MISC_ACT_HLT | VMX_MISC_ACT_SHUTDOWN | VMX_MISC_ACT_WFS)

static bool lowest_bit(uint64_t bits, char *why, size_t n, const char *what)
{
	if (!bits)
		return true;
	fmt_snprintf(why, n, "%s bit %u", what, (unsigned)__builtin_ctzll(bits));
	return false;
}

/* A control word: every bit the BSP may set, the AP may set; every bit
 * the AP requires to be 1, the BSP requires too. */
static bool ctl_ok(uint64_t bsp, uint64_t ap, const char *name, char *why, size_t n)
{
	char what[64];

	fmt_snprintf(what, sizeof(what), "no %s control", name);
	if (!lowest_bit((bsp >> 32) & ~(ap >> 32), why, n, what))
		return false;
	fmt_snprintf(what, sizeof(what), "requires %s control", name);
	return lowest_bit((uint32_t)ap & ~(uint32_t)bsp, why, n, what);
}

/* CR fixed bits: the AP forces no bit to 1 that the BSP leaves free, and
 * allows every bit to be 1 that the BSP allows. */
static bool fixed_ok(uint64_t bsp0, uint64_t bsp1, uint64_t ap0, uint64_t ap1, const char *cr,
		     char *why, size_t n)
{
	char what[64];

	fmt_snprintf(what, sizeof(what), "requires %s", cr);
	if (!lowest_bit(ap0 & ~bsp0, why, n, what))
		return false;
	fmt_snprintf(what, sizeof(what), "forbids %s", cr);
	return lowest_bit(bsp1 & ~ap1, why, n, what);
}

bool vmx_caps_compatible(const struct vmx_caps *bsp, const struct vmx_caps *ap, char *why,
			 size_t n)
{
	if (ap->revision != bsp->revision || ap->true_ctls != bsp->true_ctls) {
		fmt_snprintf(why, n, "VMCS revision %#x%s, the BSP's %#x%s", ap->revision,
			     ap->true_ctls ? "" : " (no TRUE controls)", bsp->revision,
			     bsp->true_ctls ? "" : " (no TRUE controls)");
		return false;
	}
	if (ap->preempt_rate != bsp->preempt_rate) {
		fmt_snprintf(why, n, "VMX-preemption timer rate %u, the BSP's %u",
			     ap->preempt_rate, bsp->preempt_rate);
		return false;
	}
	return ctl_ok(bsp->pin, ap->pin, "pin-based", why, n) &&
	       ctl_ok(bsp->proc, ap->proc, "processor-based", why, n) &&
	       ctl_ok(bsp->proc2, ap->proc2, "secondary processor-based", why, n) &&
	       ctl_ok(bsp->exit, ap->exit, "VM-exit", why, n) &&
	       ctl_ok(bsp->entry, ap->entry, "VM-entry", why, n) &&
	       lowest_bit(bsp->misc & VMX_MISC_USED & ~ap->misc, why, n, "no IA32_VMX_MISC") &&
	       lowest_bit(bsp->ept_vpid & ~ap->ept_vpid, why, n, "no IA32_VMX_EPT_VPID_CAP") &&
	       fixed_ok(bsp->cr0_fixed0, bsp->cr0_fixed1, ap->cr0_fixed0, ap->cr0_fixed1, "CR0",
			why, n) &&
	       fixed_ok(bsp->cr4_fixed0, bsp->cr4_fixed1, ap->cr4_fixed0, ap->cr4_fixed1, "CR4",
			why, n);
}
