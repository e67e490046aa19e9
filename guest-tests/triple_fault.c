// SPDX-License-Identifier: BSD-2-Clause
/*
 * triple_fault: loads an empty IDT and raises #UD. The CPU cannot deliver
 * it, nor the #DF that follows, and shuts down: under tickvisor that is a
 * triple-fault exit, which must end this guest (status 251) with a
 * register dump while tickvisor and the next guest carry on.
 */
#include "lib/guest.h"

int main(int argc, char **argv)
{
	struct { uint16_t limit; uint64_t base; } __attribute__((packed)) empty = { 0, 0 };

	(void)argc;
	(void)argv;
	report_info("triple_fault: loading an empty IDT and executing UD2");
	asm volatile("lidt %0; ud2" : : "m"(empty));
	report_fail("triple_fault: still running after UD2 with an empty IDT");
	return report_summary();
}
