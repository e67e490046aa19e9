// SPDX-License-Identifier: BSD-2-Clause
/*
 * bad_access: reads guest-physical memory far beyond its RAM (the guest's
 * own page tables map the first 4 GiB). There is no device there, so
 * tickvisor must end this guest (status 252) naming the address, and go
 * on with the next guest.
 */
#include "lib/guest.h"

#define NOWHERE 0xd0000000ul    /* above any test guest's RAM, below the APIC */

int main(int argc, char **argv)
{
	volatile uint32_t *p = (volatile uint32_t *)NOWHERE;
	uint32_t v;

	(void)argc;
	(void)argv;
	report_info("bad_access: reading guest-physical %#lx", NOWHERE);
	v = *p;
	report_fail("bad_access: read %#x from a hole in guest-physical memory", v);
	return report_summary();
}
