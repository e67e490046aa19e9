// SPDX-License-Identifier: BSD-2-Clause
/*
 * apic_exec: jumps into the xAPIC page. It holds registers, not code;
 * tickvisor ends the guest (status 252) naming the instruction fetch and
 * goes on with the next guest. Run with APICv off (an EPT violation for a
 * fetch); see unittests.cfg for why not with APICv on.
 */
#include "lib/guest.h"

int main(int argc, char **argv)
{
	void (*apic_page)(void) = (void (*)(void))LAPIC_MMIO_BASE;

	(void)argc;
	(void)argv;
	report_info("apic_exec: calling into the APIC page at %#llx", LAPIC_MMIO_BASE);
	apic_page();
	report_fail("apic_exec: came back from executing the APIC page");
	return report_summary();
}
