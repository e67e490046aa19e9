// SPDX-License-Identifier: BSD-2-Clause
/*
 * vmx/caps_cmp.c: an AP whose VMX capabilities fall short of the BSP's is
 * refused, naming the first thing it lacks (SDM Vol. 3D, "VMX Capability
 * Reporting Facility": allowed-0 settings in bits 31:0, allowed-1 in
 * 63:32 of each control MSR; IA32_VMX_CR0/CR4_FIXED0/1). An AP with as
 * much or more is accepted.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "vmx/caps.h"

/* Figures of a Skylake-like part (Bochs corei7_skylake_x). */
static struct vmx_caps base(void)
{
	return (struct vmx_caps){
		.vmx = true, .revision = 0x2b, .vmcs_size = 4096, .true_ctls = true,
		.pin = 0x000000ff00000016ull, .proc = 0xfff9fffe04006172ull,
		.proc2 = 0x0057cfff00000000ull, .exit = 0x01ffffff00036dfbull,
		.entry = 0x0003ffff000011fbull, .misc = 0x00000000000401e0ull,
		.ept_vpid = 0x00000f0106734141ull,
		.cr0_fixed0 = 0x80000021ull, .cr0_fixed1 = 0xffffffffull,
		.cr4_fixed0 = 0x2000ull, .cr4_fixed1 = 0x3727ffull,
		.preempt_rate = 0,
	};
}

static void expect(const struct vmx_caps *ap, bool ok, const char *why_want)
{
	struct vmx_caps bsp = base();
	char why[96] = "";

	assert_int_equal(vmx_caps_compatible(&bsp, ap, why, sizeof(why)), ok);
	if (why_want)
		assert_string_equal(why, why_want);
}

static void test_same(void **state)
{
	struct vmx_caps ap = base();

	expect(&ap, true, NULL);
}

static void test_more_is_fine(void **state)
{
	struct vmx_caps ap = base();

	ap.proc2 |= 1ull << (32 + 25);          /* a feature the BSP lacks */
	ap.ept_vpid |= 1ull << 21;
	ap.cr4_fixed1 |= 1ull << 23;            /* allows more CR4 bits */
	ap.misc |= 1ull << 29;
	expect(&ap, true, NULL);
}

static void test_missing_control(void **state)
{
	struct vmx_caps ap = base();

	ap.pin &= ~(1ull << (32 + 6));          /* no VMX-preemption timer */
	expect(&ap, false, "no pin-based control bit 6");
	ap = base();
	ap.proc2 &= ~(1ull << (32 + 1));        /* no EPT */
	expect(&ap, false, "no secondary processor-based control bit 1");
	ap = base();
	ap.entry &= ~(1ull << (32 + 15));       /* no load IA32_EFER */
	expect(&ap, false, "no VM-entry control bit 15");
}

static void test_extra_required(void **state)
{
	struct vmx_caps ap = base();

	ap.proc |= 1ull << 15;                  /* insists on CR3-load exiting */
	expect(&ap, false, "requires processor-based control bit 15");
}

static void test_revision_and_rate(void **state)
{
	struct vmx_caps ap = base();

	ap.revision = 0x2c;
	expect(&ap, false, "VMCS revision 0x2c, the BSP's 0x2b");
	ap = base();
	ap.preempt_rate = 5;
	expect(&ap, false, "VMX-preemption timer rate 5, the BSP's 0");
}

static void test_misc_ept_fixed(void **state)
{
	struct vmx_caps ap = base();

	ap.misc &= ~(1ull << 8);                /* no wait-for-SIPI activity state */
	expect(&ap, false, "no IA32_VMX_MISC bit 8");
	ap = base();
	ap.ept_vpid &= ~(1ull << 25);           /* no single-context INVEPT */
	expect(&ap, false, "no IA32_VMX_EPT_VPID_CAP bit 25");
	ap = base();
	ap.cr0_fixed0 |= 1ull << 30;            /* forces CR0.CD */
	expect(&ap, false, "requires CR0 bit 30");
	ap = base();
	ap.cr4_fixed1 &= ~(1ull << 17);         /* forbids CR4.PCIDE */
	expect(&ap, false, "forbids CR4 bit 17");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same),
		cmocka_unit_test(test_more_is_fine),
		cmocka_unit_test(test_missing_control),
		cmocka_unit_test(test_extra_required),
		cmocka_unit_test(test_revision_and_rate),
		cmocka_unit_test(test_misc_ept_fixed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
