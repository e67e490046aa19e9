// SPDX-License-Identifier: BSD-2-Clause
/* The report for an exception or interrupt nobody expected. */
#include "lib/desc.h"
#include "lib/io.h"
#include "lib/percpu.h"
#include "lib/printf.h"
#include "lib/processor.h"
#include "lib/report.h"
#include "lib/setup.h"

static void dump_regs(const struct ex_regs *r)
{
	console_lock();
	printf("  rax %016lx rbx %016lx rcx %016lx rdx %016lx\n", r->rax, r->rbx, r->rcx, r->rdx);
	printf("  rsi %016lx rdi %016lx rbp %016lx rsp %016lx\n", r->rsi, r->rdi, r->rbp, r->rsp);
	printf("  r8  %016lx r9  %016lx r10 %016lx r11 %016lx\n", r->r8, r->r9, r->r10, r->r11);
	printf("  r12 %016lx r13 %016lx r14 %016lx r15 %016lx\n", r->r12, r->r13, r->r14, r->r15);
	printf("  rip %016lx rflags %08lx cs %04lx ss %04lx\n", r->rip, r->rflags, r->cs, r->ss);
	printf("  cr0 %08lx cr3 %08lx cr4 %08lx\n", read_cr0(), read_cr3(), read_cr4());
	console_unlock();
}

void exception_fatal(struct ex_regs *r)
{
	static uint32_t reporter;               /* APIC ID + 1 of the CPU reporting */
	uint32_t me = smp_id() + 1, none = 0;

	/* One report: another CPU faulting meanwhile waits for it to end the
	 * guest; a fault inside the report itself ends it at once. */
	if (!__atomic_compare_exchange_n(&reporter, &none, me, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		if (none == me)
			outl(DEBUG_EXIT_PORT, EXIT_FAIL);
		for (;;) {
			cli();
			hlt();
		}
	}
	if (r->vector < NR_EXCEPTIONS)
		report_fail_raw("unexpected exception #%s (%lu) error 0x%lx at rip 0x%lx cr2 0x%lx",
				exception_mnemonic((unsigned)r->vector), r->vector, r->error_code,
				r->rip, read_cr2());
	else
		report_fail_raw("unexpected interrupt vector %lu at rip 0x%lx", r->vector, r->rip);
	dump_regs(r);
	report_summary();
	exit(EXIT_FAIL);
}
